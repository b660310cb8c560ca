#include "tests/opencl/opencl_test_util.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <mutex>
#include <stdexcept>

#include "backends/opencl/opencl_backend.h"
#include "backends/opencl/opencl_devices.h"
#include "runtime/data_type.h"
#include "runtime/device_api.h"

namespace sorun {
namespace testing {

void SetUpOpenclTestEnvironment() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char* tmp = std::getenv("TEST_TMPDIR");
    std::string base = tmp ? tmp : "/tmp";
    if (std::getenv("POCL_CACHE_DIR") == nullptr) {
      std::string dir = base + "/pocl_cache";
      ::mkdir(dir.c_str(), 0755);
      ::setenv("POCL_CACHE_DIR", dir.c_str(), 0);
    }
    if (std::getenv("SORUN_OPENCL_CACHE_DIR") == nullptr) {
      std::string dir = base + "/sorun_opencl_cache";
      ::setenv("SORUN_OPENCL_CACHE_DIR", dir.c_str(), 0);
    }
    Status status = RegisterOpenclBackend();
    if (!status.ok()) throw std::runtime_error("RegisterOpenclBackend: " + status.ToString());
  });
}

int OpenclDeviceCount(std::string* why) {
  SetUpOpenclTestEnvironment();
  OpenclDevices& devices = OpenclDevices::Global();
  int count = devices.DeviceCount();
  if (count == 0 && why) *why = devices.discovery_status().message();
  return count;
}

FunctionInfo MakeFunctionInfo(const std::vector<std::string>& arg_types, const std::vector<std::string>& tags) {
  FunctionInfo info;
  for (const std::string& t : arg_types) {
    auto dtype = ParseDType(t);
    if (!dtype.ok()) throw std::runtime_error(dtype.status().ToString());
    info.arg_types.push_back(*dtype);
  }
  info.launch_param_tags = tags;
  return info;
}

Tensor DeviceFloats(const std::vector<float>& values, int device_id) {
  auto host = Tensor::Empty({static_cast<int64_t>(values.size())}, Float32(), CpuDevice());
  if (!host.ok()) throw std::runtime_error(host.status().ToString());
  for (size_t i = 0; i < values.size(); ++i) host->data_as<float>()[i] = values[i];
  auto dev = host->CopyToDevice(DLDevice{kDLOpenCL, device_id});
  if (!dev.ok()) throw std::runtime_error(dev.status().ToString());
  return *dev;
}

Tensor DeviceZeros(int64_t n, int device_id) {
  return DeviceFloats(std::vector<float>(static_cast<size_t>(n), 0.0f), device_id);
}

std::vector<float> HostFloats(const Tensor& device_tensor) {
  auto host = device_tensor.CopyToDevice(CpuDevice());
  if (!host.ok()) throw std::runtime_error(host.status().ToString());
  return std::vector<float>(host->data_as<float>(), host->data_as<float>() + host->num_elements());
}

}  // namespace testing
}  // namespace sorun

// PoCL leaks one 16-byte object the first time it compiles a program (inside libpocl, independent of
// how many programs are built); keep LeakSanitizer runs (--config=asan) about sorun's own memory.
extern "C" __attribute__((visibility("default"))) const char* __lsan_default_suppressions() {
  return "leak:libpocl.so\n";
}
