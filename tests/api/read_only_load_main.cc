// A child process for load_from_memory_test: makes every mount read-only in a private mount namespace,
// proves that writes now fail, then loads a model from memory (its bytes read before the remount) and
// runs it, printing the output's bytes as hex. Exit 0: loaded and ran with nothing writable; 2: the
// namespace could not be made (the test skips); anything else: a failure, said on stderr.
//
//   read_only_load_main MODEL.so INPUT.npy
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "api/sorun.h"
#include "tools/npy.h"

namespace {

std::string ReadAll(const char* path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every mount point of this namespace, deepest last.
std::vector<std::string> MountPoints() {
  std::vector<std::string> points;
  std::ifstream mounts("/proc/self/mounts");
  std::string device, point, rest;
  while (mounts >> device >> point && std::getline(mounts, rest)) points.push_back(point);
  return points;
}

// True when a file can be created in `dir` (then removed).
bool CanWrite(const std::string& dir) {
  const std::string path = dir + "/sorun_read_only_probe";
  const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  ::close(fd);
  ::unlink(path.c_str());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: read_only_load_main MODEL.so INPUT.npy\n");
    return 1;
  }
  const std::string bytes = ReadAll(argv[1]);
  auto tensor = sorun::ReadNpyFile(argv[2]);
  auto input = tensor.ok() ? sorun::NDArray::Empty(tensor->shape(), tensor->dtype())
                           : sorun::StatusOr<sorun::NDArray>(tensor.status());
  if (bytes.empty() || !input.ok() || !input->CopyFrom(*tensor->dl()).ok()) {
    std::fprintf(stderr, "cannot read the model or the input\n");
    return 1;
  }
  const int flags = geteuid() == 0 ? CLONE_NEWNS : (CLONE_NEWUSER | CLONE_NEWNS);
  if (::unshare(flags) != 0 || ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    std::fprintf(stderr, "no private mount namespace: %s\n", std::strerror(errno));
    return 2;
  }
  std::vector<std::string> points = MountPoints();
  for (const std::string& point : points) {
    ::mount(nullptr, point.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr);
  }
  // The control: every usual writable place now refuses a new file.
  std::vector<std::string> writable = {"/tmp", "/var/tmp", "/dev/shm", "."};
  for (const char* env : {"TEST_TMPDIR", "HOME", "TMPDIR"}) {
    if (const char* dir = std::getenv(env)) writable.push_back(dir);
  }
  for (const std::string& dir : writable) {
    if (CanWrite(dir)) {
      std::fprintf(stderr, "could not make %s read-only\n", dir.c_str());
      return 2;
    }
  }
  auto model = sorun::Model::LoadFromMemory(bytes, {}, "model.so");
  if (!model.ok()) {
    std::fprintf(stderr, "load: %s\n", model.status().ToString().c_str());
    return 3;
  }
  auto exec = model->NewExecutor();
  if (!exec.ok()) {
    std::fprintf(stderr, "executor: %s\n", exec.status().ToString().c_str());
    return 3;
  }
  auto outputs = exec->Run({{model->inputs()[0].name, &input->dl()}});
  if (!outputs.ok() || outputs->empty()) {
    std::fprintf(stderr, "run: %s\n", outputs.ok() ? "no output" : outputs.status().ToString().c_str());
    return 3;
  }
  const DLTensor& out = (*outputs)[0].dl();
  size_t n = (out.dtype.bits * out.dtype.lanes + 7) / 8;
  for (int i = 0; i < out.ndim; ++i) n *= static_cast<size_t>(out.shape[i]);
  const auto* p = static_cast<const unsigned char*>(out.data) + out.byte_offset;
  for (size_t i = 0; i < n; ++i) std::printf("%02x", p[i]);
  std::printf("\n");
  return 0;
}
