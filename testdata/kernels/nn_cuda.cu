// The zoo's CUDA kernels (same names and signatures as nn_opencl.cl), compiled by nvcc into PTX and
// a fat binary at build time. Launched by nn_device_host.c (built with SORUN_DEVICE_CUDA).
extern "C" __global__ void sorun_dev_relu_kernel(const float* __restrict__ x, float* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaxf(x[i], 0.0f);
}

extern "C" __global__ void sorun_dev_add_kernel(const float* __restrict__ a, const float* __restrict__ b,
                                                float* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a[i] + b[i];
}

extern "C" __global__ void sorun_dev_dense_bias_kernel(const float* __restrict__ x, const float* __restrict__ w,
                                                       const float* __restrict__ b, float* __restrict__ y,
                                                       int rows, int k, int m) {
  int o = blockIdx.x * blockDim.x + threadIdx.x;
  if (o >= rows * m) return;
  int i = o / m, j = o % m;
  float acc = b[j];
  for (int p = 0; p < k; ++p) acc += x[i * k + p] * w[j * k + p];
  y[o] = acc;
}
