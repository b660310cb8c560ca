/*
 * Host code for the zoo's device operators, written the way TVM's LLVM backend emits host code for
 * GPU targets (docs/format.md sections 4.1 and 8.2): through the weak __TVM* slots only, it makes the
 * device current with __tvm_set_device(device_type, device_id), looks its kernels up in the imported
 * device module with TVMBackendGetFuncFromEnv(__tvm_module_ctx, name) (caching the handles), and
 * calls them with TVMFuncCall: buffers as opaque handles (the DLTensor's data: a cl_mem or a device
 * pointer), ints widened to i64, then the launch extents (blockIdx.x, threadIdx.x).
 *
 * Compiled once per device: -DSORUN_DEVICE_OPENCL exports sorun_ocl_{relu,add,dense_bias},
 * -DSORUN_DEVICE_CUDA exports sorun_cuda_{relu,add,dense_bias}; both use the kernels of
 * nn_opencl.cl / nn_cuda.cu.
 */
#include <stdint.h>
#include <stdio.h>

#include "runtime/c_runtime_api.h"

#if defined(SORUN_DEVICE_OPENCL)
#define DEVICE_TYPE 4
#define OP(name) sorun_ocl_##name
#elif defined(SORUN_DEVICE_CUDA)
#define DEVICE_TYPE 2
#define OP(name) sorun_cuda_##name
#else
#error "define SORUN_DEVICE_OPENCL or SORUN_DEVICE_CUDA"
#endif

__attribute__((weak)) void* __tvm_module_ctx = NULL;
__attribute__((weak)) int (*__TVMFuncCall)(TVMFunctionHandle, TVMValue*, int*, int, TVMValue*, int*) = NULL;
__attribute__((weak)) void (*__TVMAPISetLastError)(const char*) = NULL;
__attribute__((weak)) int (*__TVMBackendGetFuncFromEnv)(void*, const char*, TVMFunctionHandle*) = NULL;

enum { kBlock = 64 };

static int Fail(const char* msg) {
  __TVMAPISetLastError(msg);
  return -1;
}

/* The handle of `name`, looked up once per library (TVM caches it in a global the same way). */
static int Lookup(const char* name, TVMFunctionHandle* slot, TVMFunctionHandle* out) {
  /* Threads may race on the first call; the cache is read and written atomically (TSan-clean), and
   * every thread gets the same handle from the module. */
  *out = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
  if (*out != NULL) return 0;
  if (__TVMBackendGetFuncFromEnv(__tvm_module_ctx, name, out) != 0) return -1;
  __atomic_store_n(slot, *out, __ATOMIC_RELEASE);
  return 0;
}

static int SetDevice(int device_id) {
  static TVMFunctionHandle set_device_cache = NULL;
  TVMFunctionHandle set_device;
  if (Lookup("__tvm_set_device", &set_device_cache, &set_device) != 0) return -1;
  TVMValue args[2];
  int codes[2] = {kTVMArgInt, kTVMArgInt};
  args[0].v_int64 = DEVICE_TYPE;
  args[1].v_int64 = device_id;
  TVMValue ret;
  int ret_code;
  return __TVMFuncCall(set_device, args, codes, 2, &ret, &ret_code);
}

static int CheckTensors(const char* fn, TVMValue* args, int* codes, int num_args, int n, DLTensor** out) {
  static __thread char msg[128];
  if (num_args != n) {
    snprintf(msg, sizeof(msg), "%s: num_args should be %d", fn, n);
    return Fail(msg);
  }
  for (int i = 0; i < n; ++i) {
    if (codes[i] != kTVMDLTensorHandle && codes[i] != kTVMNDArrayHandle) {
      snprintf(msg, sizeof(msg), "%s: Expect arg[%d] to be pointer", fn, i);
      return Fail(msg);
    }
    out[i] = (DLTensor*)args[i].v_handle;
    if (out[i]->device.device_type != DEVICE_TYPE) {
      snprintf(msg, sizeof(msg), "%s: arg[%d] is not on the expected device", fn, i);
      return Fail(msg);
    }
  }
  return SetDevice(out[0]->device.device_id);
}

static int64_t Numel(const DLTensor* t) {
  int64_t n = 1;
  for (int i = 0; i < t->ndim; ++i) n *= t->shape[i];
  return n;
}

/* Calls `kernel` with `nb` buffers, `ni` ints and a 1-D launch over `work` items. */
static int Launch(TVMFunctionHandle kernel, DLTensor** buffers, int nb, const int64_t* ints, int ni, int64_t work) {
  TVMValue args[16];
  int codes[16];
  int k = 0;
  for (int i = 0; i < nb; ++i, ++k) {
    args[k].v_handle = buffers[i]->data;
    codes[k] = kTVMOpaqueHandle;
  }
  for (int i = 0; i < ni; ++i, ++k) {
    args[k].v_int64 = ints[i];
    codes[k] = kTVMArgInt;
  }
  args[k].v_int64 = (work + kBlock - 1) / kBlock; /* blockIdx.x */
  codes[k++] = kTVMArgInt;
  args[k].v_int64 = kBlock; /* threadIdx.x */
  codes[k++] = kTVMArgInt;
  TVMValue ret;
  int ret_code;
  return __TVMFuncCall(kernel, args, codes, k, &ret, &ret_code);
}

int OP(relu)(TVMValue* args, int* type_codes, int num_args, TVMValue* out_ret_value, int* out_ret_tcode,
             void* resource_handle) {
  static TVMFunctionHandle kernel_cache = NULL;
  TVMFunctionHandle kernel;
  DLTensor* t[2];
  if (CheckTensors("relu", args, type_codes, num_args, 2, t) != 0) return -1;
  if (Lookup("sorun_dev_relu_kernel", &kernel_cache, &kernel) != 0) return -1;
  int64_t n = Numel(t[0]);
  return Launch(kernel, t, 2, &n, 1, n);
}

int OP(add)(TVMValue* args, int* type_codes, int num_args, TVMValue* out_ret_value, int* out_ret_tcode,
            void* resource_handle) {
  static TVMFunctionHandle kernel_cache = NULL;
  TVMFunctionHandle kernel;
  DLTensor* t[3];
  if (CheckTensors("add", args, type_codes, num_args, 3, t) != 0) return -1;
  if (Lookup("sorun_dev_add_kernel", &kernel_cache, &kernel) != 0) return -1;
  int64_t n = Numel(t[0]);
  return Launch(kernel, t, 3, &n, 1, n);
}

/* y[rows, m] = x[rows, k] w[m, k]^T + b[m] */
int OP(dense_bias)(TVMValue* args, int* type_codes, int num_args, TVMValue* out_ret_value, int* out_ret_tcode,
                   void* resource_handle) {
  static TVMFunctionHandle kernel_cache = NULL;
  TVMFunctionHandle kernel;
  DLTensor* t[4];
  if (CheckTensors("dense_bias", args, type_codes, num_args, 4, t) != 0) return -1;
  if (t[0]->ndim != 2 || t[1]->ndim != 2 || t[1]->shape[1] != t[0]->shape[1]) {
    return Fail("dense_bias: shape mismatch (x [N,K], w [M,K])");
  }
  if (Lookup("sorun_dev_dense_bias_kernel", &kernel_cache, &kernel) != 0) return -1;
  int64_t dims[3] = {t[0]->shape[0], t[0]->shape[1], t[1]->shape[0]};
  return Launch(kernel, t, 4, dims, 3, dims[0] * dims[2]);
}
