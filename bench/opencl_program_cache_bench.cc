// Cold vs warm OpenCL program load: building a module's programs from source versus loading them
// from sorun's on-disk program-binary cache (ProgramCache), and the same for a module's first launch
// (program + kernel creation + one small launch + clFinish).
//
// Run with PoCL's own kernel cache off so it does not hide the cold cost:
//   bazel build //bench:opencl_program_cache_bench && POCL_KERNEL_CACHE=0 bazel-bin/bench/opencl_program_cache_bench
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <memory>
#include <string>

#include "backends/opencl/opencl_backend.h"
#include "backends/opencl/opencl_devices.h"
#include "backends/opencl/opencl_module.h"
#include "backends/opencl/program_cache.h"
#include "runtime/data_type.h"
#include "runtime/device_api.h"
#include "runtime/tensor.h"

namespace sorun {
namespace {

// Four kernels in TVM's split layout, shaped like generated code (tiled loops, local memory, fused
// elementwise tails), so the compile cost is that of a small real model's kernels.
constexpr char kSource[] = R"CL(// Function: dense_bias_relu
__kernel void dense_bias_relu(__global const float* restrict x, __global const float* restrict w,
                              __global const float* restrict bias, __global float* restrict y, int n, int k) {
  __local float tile[16][17];
  int row = get_group_id(1) * 16 + get_local_id(1);
  int col = get_group_id(0) * 16 + get_local_id(0);
  float acc = 0.0f;
  for (int t = 0; t < k; t += 16) {
    tile[get_local_id(1)][get_local_id(0)] = x[row * k + t + get_local_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    #pragma unroll 4
    for (int i = 0; i < 16; ++i) acc += tile[get_local_id(1)][i] * w[(t + i) * n + col];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  y[row * n + col] = fmax(acc + bias[col], 0.0f);
}
// Function: softmax
__kernel void softmax(__global const float* restrict x, __global float* restrict y, int n) {
  __local float red[64];
  int row = get_group_id(0);
  int lid = get_local_id(0);
  float m = -INFINITY;
  for (int i = lid; i < n; i += 64) m = fmax(m, x[row * n + i]);
  red[lid] = m;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = 32; s > 0; s >>= 1) {
    if (lid < s) red[lid] = fmax(red[lid], red[lid + s]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  m = red[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  float sum = 0.0f;
  for (int i = lid; i < n; i += 64) sum += exp(x[row * n + i] - m);
  red[lid] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = 32; s > 0; s >>= 1) {
    if (lid < s) red[lid] += red[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (int i = lid; i < n; i += 64) y[row * n + i] = exp(x[row * n + i] - m) / red[0];
}
// Function: conv2d_nchw
__kernel void conv2d_nchw(__global const float* restrict data, __global const float* restrict kernel_w,
                          __global float* restrict out, int c_in, int h, int w, int c_out) {
  int ow = get_global_id(0);
  int oh = get_global_id(1);
  int oc = get_global_id(2);
  if (ow >= w - 2 || oh >= h - 2 || oc >= c_out) return;
  float acc = 0.0f;
  for (int ic = 0; ic < c_in; ++ic) {
    #pragma unroll
    for (int ky = 0; ky < 3; ++ky) {
      #pragma unroll
      for (int kx = 0; kx < 3; ++kx) {
        acc += data[(ic * h + oh + ky) * w + ow + kx] * kernel_w[((oc * c_in + ic) * 3 + ky) * 3 + kx];
      }
    }
  }
  out[(oc * (h - 2) + oh) * (w - 2) + ow] = acc;
}
// Function: fused_add_mul_tanh
__kernel void fused_add_mul_tanh(__global const float* restrict a, __global const float* restrict b,
                                 __global float* restrict c, float alpha, int n) {
  int i = get_group_id(0) * get_local_size(0) + get_local_id(0);
  if (i < n) c[i] = tanh(alpha * (a[i] + b[i])) + sqrt(fabs(a[i])) * native_exp(-b[i] * b[i]);
}
)CL";

FunctionInfo Info(std::initializer_list<const char*> types, std::initializer_list<const char*> tags) {
  FunctionInfo info;
  for (const char* t : types) info.arg_types.push_back(*ParseDType(t));
  for (const char* t : tags) info.launch_param_tags.push_back(t);
  return info;
}

DeviceModulePayload Payload() {
  DeviceModulePayload p;
  p.fmt = "cl";
  p.functions = {
      {"conv2d_nchw", Info({"handle", "handle", "handle", "int32", "int32", "int32", "int32"},
                           {"blockIdx.z", "blockIdx.y", "blockIdx.x", "threadIdx.z", "threadIdx.y", "threadIdx.x"})},
      {"dense_bias_relu", Info({"handle", "handle", "handle", "handle", "int32", "int32"},
                               {"blockIdx.y", "blockIdx.x", "threadIdx.y", "threadIdx.x"})},
      {"fused_add_mul_tanh", Info({"handle", "handle", "handle", "float32", "int32"}, {"blockIdx.x", "threadIdx.x"})},
      {"softmax", Info({"handle", "handle", "int32"}, {"blockIdx.x", "threadIdx.x"})},
  };
  p.data = kSource;
  return p;
}

bool Ready(benchmark::State& state) {
  if (!RegisterOpenclBackend().ok() || OpenclDevices::Global().DeviceCount() == 0) {
    state.SkipWithError("no OpenCL device");
    return false;
  }
  return OpenclDevices::Global().SetCurrentDevice(0).ok();
}

std::shared_ptr<ProgramCache> TempCache() {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string templ = std::string(base ? base : "/tmp") + "/sorun_cl_bench_XXXXXX";
  char* dir = ::mkdtemp(&templ[0]);
  ProgramCacheOptions options;
  options.directory = dir ? dir : "";
  options.enabled = dir != nullptr;
  return std::make_shared<ProgramCache>(options);
}

ObjectPtr<OpenclModuleNode> NewModule(const std::shared_ptr<ProgramCache>& cache) {
  OpenclModuleOptions options;
  options.program_cache = cache;
  options.disable_program_cache = cache == nullptr;
  return *OpenclModuleNode::Create(Payload(), options);
}

// Builds all four programs of a fresh module: from source (cold) or from the cache (warm).
void BM_BuildPrograms(benchmark::State& state) {
  if (!Ready(state)) return;
  const bool warm = state.range(0) == 1;
  std::shared_ptr<ProgramCache> cache = warm ? TempCache() : nullptr;
  if (warm) {
    Status fill = NewModule(cache)->BuildPrograms(0);  // populate the cache
    if (!fill.ok()) return state.SkipWithError(fill.ToString().c_str());
  }
  for (auto _ : state) {
    ObjectPtr<OpenclModuleNode> m = NewModule(cache);
    Status s = m->BuildPrograms(0);
    if (!s.ok()) return state.SkipWithError(s.ToString().c_str());
  }
  state.SetLabel(warm ? "warm: binary cache" : "cold: from source");
  if (warm) {
    ProgramCacheStats stats = cache->stats();
    state.counters["cache_hits"] = static_cast<double>(stats.hits);
    state.counters["cache_rejected"] = static_cast<double>(stats.rejected);
  }
}
BENCHMARK(BM_BuildPrograms)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->MinTime(3.0);

// A fresh module's first launch of one kernel, waited for: program + kernel + launch.
void BM_FirstLaunch(benchmark::State& state) {
  if (!Ready(state)) return;
  const bool warm = state.range(0) == 1;
  std::shared_ptr<ProgramCache> cache = warm ? TempCache() : nullptr;
  const int n = 4096;
  auto a = Tensor::Empty({n}, Float32(), DLDevice{kDLOpenCL, 0});
  auto b = Tensor::Empty({n}, Float32(), DLDevice{kDLOpenCL, 0});
  auto c = Tensor::Empty({n}, Float32(), DLDevice{kDLOpenCL, 0});
  if (!a.ok() || !b.ok() || !c.ok()) return state.SkipWithError("allocation failed");
  auto launch = [&]() -> Status {
    ObjectPtr<OpenclModuleNode> m = NewModule(cache);
    Module module{ObjectPtr<ModuleNode>(m)};
    auto r = module.GetFunction("fused_add_mul_tanh")(a->data(), b->data(), c->data(), 0.5, n, n / 64, 64);
    if (!r.ok()) return r.status();
    auto api = GetDeviceApi(kDLOpenCL);
    return (*api)->Sync(DLDevice{kDLOpenCL, 0}, nullptr);
  };
  if (warm) {
    Status fill = launch();
    if (!fill.ok()) return state.SkipWithError(fill.ToString().c_str());
  }
  for (auto _ : state) {
    Status s = launch();
    if (!s.ok()) return state.SkipWithError(s.ToString().c_str());
  }
  state.SetLabel(warm ? "warm: binary cache" : "cold: from source");
}
BENCHMARK(BM_FirstLaunch)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->MinTime(3.0);

}  // namespace
}  // namespace sorun
