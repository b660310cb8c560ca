// CUDA kernels for sorun's CUDA backend tests (tests/cuda), written the way TVM's CUDA codegen
// writes them: extern "C" __global__ functions whose parameters are device pointers and scalars,
// with launch extents supplied by the caller. Built by nvcc (BUILD.bazel) into PTX, cubin and
// fatbin images that the tests wrap into "cuda" module payloads.
#include <stdint.h>

// TVM's global barrier counter (FORMAT.md section 1.1); `__tvm_prepare_global_barrier` zeroes it.
extern "C" __device__ unsigned __tvm_global_barrier_state = 0;

// c[i] = a[i] + b[i] for i < n. Launch tags: blockIdx.x, threadIdx.x.
extern "C" __global__ void vector_add(const float* __restrict__ a, const float* __restrict__ b,
                                      float* __restrict__ c, int32_t n) {
  int32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

// out[y, x] = in[y, x] * alpha + beta + gamma over a width x height image: 32-bit and 64-bit
// integer and float scalars. Launch tags: blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y.
extern "C" __global__ void affine_2d(float* __restrict__ out, const float* __restrict__ in, int32_t width,
                                     int32_t height, float alpha, int64_t beta, double gamma) {
  int32_t x = blockIdx.x * blockDim.x + threadIdx.x;
  int32_t y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < width && y < height) {
    int64_t i = static_cast<int64_t>(y) * width + x;
    out[i] = static_cast<float>(in[i] * alpha + static_cast<double>(beta) + gamma);
  }
}

// out[i] = in[n - 1 - i], staged through n floats of dynamic shared memory (one block).
// Launch tags: blockIdx.x, threadIdx.x, tir.use_dyn_shared_memory.
extern "C" __global__ void reverse_dyn_smem(float* __restrict__ out, const float* __restrict__ in, int32_t n) {
  extern __shared__ float buffer[];
  for (int32_t i = threadIdx.x; i < n; i += blockDim.x) buffer[i] = in[i];
  __syncthreads();
  for (int32_t i = threadIdx.x; i < n; i += blockDim.x) out[i] = buffer[n - 1 - i];
}

// out[0] = the barrier counter before this call's increment. No launch tags (1 x 1 launch).
extern "C" __global__ void barrier_probe(unsigned* out) { out[0] = atomicAdd(&__tvm_global_barrier_state, 1u); }
