// Function: sorun_dev_relu_kernel
__kernel void sorun_dev_relu_kernel(__global const float* restrict x, __global float* restrict y, int n) {
  int i = get_group_id(0) * get_local_size(0) + get_local_id(0);
  if (i < n) y[i] = fmax(x[i], 0.0f);
}
// Function: sorun_dev_add_kernel
__kernel void sorun_dev_add_kernel(__global const float* restrict a, __global const float* restrict b,
                                   __global float* restrict y, int n) {
  int i = get_group_id(0) * get_local_size(0) + get_local_id(0);
  if (i < n) y[i] = a[i] + b[i];
}
// Function: sorun_dev_dense_bias_kernel
__kernel void sorun_dev_dense_bias_kernel(__global const float* restrict x, __global const float* restrict w,
                                          __global const float* restrict b, __global float* restrict y,
                                          int rows, int k, int m) {
  int o = get_group_id(0) * get_local_size(0) + get_local_id(0);
  if (o >= rows * m) return;
  int i = o / m, j = o % m;
  float acc = b[j];
  for (int p = 0; p < k; ++p) acc += x[i * k + p] * w[j * k + p];
  y[o] = acc;
}
