/*
 * Host code of an OpenCL model, written in C the way TVM's LLVM backend emits it (docs/format.md
 * sections 4.1 and 8.2): it reaches the runtime only through the weak __TVM* slots the loader fills,
 * makes the device current with __tvm_set_device(4, id), looks its kernels up in the imported
 * "opencl" module with TVMBackendGetFuncFromEnv(__tvm_module_ctx, name) (caching the handles in
 * statics), and calls them with TVMFuncCall: buffers as cl_mem handles (type code 3, the DLTensor's
 * data), ints as i64, then the launch extents.
 *
 * Kernels expected in the imported module (see tests/opencl/opencl_module_host_library_test.cc):
 *   vadd(float* a, float* b, float* c, int32 n)        tags blockIdx.x, threadIdx.x
 *   scale(float* x, float* y, float32 alpha, int32 n)  tags blockIdx.x, threadIdx.x
 */
#include <stdint.h>

#include "runtime/c_runtime_api.h"

__attribute__((weak)) void* __tvm_module_ctx = NULL;
__attribute__((weak)) int (*__TVMFuncCall)(TVMFunctionHandle, TVMValue*, int*, int, TVMValue*, int*) = NULL;
__attribute__((weak)) void (*__TVMAPISetLastError)(const char*) = NULL;
__attribute__((weak)) int (*__TVMBackendGetFuncFromEnv)(void*, const char*, TVMFunctionHandle*) = NULL;
__attribute__((weak)) void* (*__TVMBackendAllocWorkspace)(int, int, uint64_t, int, int) = NULL;
__attribute__((weak)) int (*__TVMBackendFreeWorkspace)(int, int, void*) = NULL;

enum { kBlock = 64 };

static TVMFunctionHandle set_device_cache = NULL;
static TVMFunctionHandle vadd_cache = NULL;
static TVMFunctionHandle scale_cache = NULL;

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
  TVMFunctionHandle set_device_packed;
  if (Lookup("__tvm_set_device", &set_device_cache, &set_device_packed) != 0) return -1;
  TVMValue args[2];
  int codes[2] = {kTVMArgInt, kTVMArgInt};
  args[0].v_int64 = 4; /* kDLOpenCL */
  args[1].v_int64 = device_id;
  TVMValue ret;
  int ret_code;
  return __TVMFuncCall(set_device_packed, args, codes, 2, &ret, &ret_code);
}

/* Launches a kernel over n elements with 3 leading parameters: (p0, p1, p2, n). */
static int Launch(TVMFunctionHandle kernel, TVMValue p0, int c0, TVMValue p1, int c1, TVMValue p2, int c2, int64_t n) {
  TVMValue args[6];
  int codes[6] = {c0, c1, c2, kTVMArgInt, kTVMArgInt, kTVMArgInt};
  args[0] = p0;
  args[1] = p1;
  args[2] = p2;
  args[3].v_int64 = n;
  args[4].v_int64 = (n + kBlock - 1) / kBlock; /* blockIdx.x */
  args[5].v_int64 = kBlock;                    /* threadIdx.x */
  TVMValue ret;
  int ret_code;
  return __TVMFuncCall(kernel, args, codes, 6, &ret, &ret_code);
}

static TVMValue Handle(void* p) {
  TVMValue v;
  v.v_handle = p;
  return v;
}

static int CheckTensors(TVMValue* args, int* type_codes, int num_args, const char* name) {
  if (num_args != 3) {
    __TVMAPISetLastError(name);
    return -1;
  }
  for (int i = 0; i < 3; ++i) {
    if (type_codes[i] != kTVMDLTensorHandle && type_codes[i] != kTVMNDArrayHandle) {
      __TVMAPISetLastError("Expect arg[i] to be pointer");
      return -1;
    }
    const DLTensor* t = (const DLTensor*)args[i].v_handle;
    if (t->device.device_type != kDLOpenCL) {
      __TVMAPISetLastError("Expect tensors on an OpenCL device");
      return -1;
    }
  }
  return 0;
}

static int64_t NumElements(const DLTensor* t) {
  int64_t n = 1;
  for (int i = 0; i < t->ndim; ++i) n *= t->shape[i];
  return n;
}

/* c = a + b (float32, 1-D, on one OpenCL device). */
int vadd_host(TVMValue* args, int* type_codes, int num_args, TVMValue* out_ret_value, int* out_ret_tcode,
              void* resource_handle) {
  if (CheckTensors(args, type_codes, num_args, "vadd_host: num_args should be 3") != 0) return -1;
  DLTensor* a = (DLTensor*)args[0].v_handle;
  DLTensor* b = (DLTensor*)args[1].v_handle;
  DLTensor* c = (DLTensor*)args[2].v_handle;
  if (SetDevice(a->device.device_id) != 0) return -1;
  TVMFunctionHandle vadd_packed;
  if (Lookup("vadd", &vadd_cache, &vadd_packed) != 0) return -1;
  return Launch(vadd_packed, Handle(a->data), kTVMOpaqueHandle, Handle(b->data), kTVMOpaqueHandle, Handle(c->data),
                kTVMOpaqueHandle, NumElements(a));
}

/* c = 2 * (a + b), through a device workspace buffer for a + b. */
int add_scale_host(TVMValue* args, int* type_codes, int num_args, TVMValue* out_ret_value, int* out_ret_tcode,
                   void* resource_handle) {
  if (CheckTensors(args, type_codes, num_args, "add_scale_host: num_args should be 3") != 0) return -1;
  DLTensor* a = (DLTensor*)args[0].v_handle;
  DLTensor* b = (DLTensor*)args[1].v_handle;
  DLTensor* c = (DLTensor*)args[2].v_handle;
  const int dev = a->device.device_id;
  const int64_t n = NumElements(a);
  if (SetDevice(dev) != 0) return -1;
  TVMFunctionHandle vadd_packed, scale_packed;
  if (Lookup("vadd", &vadd_cache, &vadd_packed) != 0 || Lookup("scale", &scale_cache, &scale_packed) != 0) return -1;
  void* tmp = __TVMBackendAllocWorkspace(4, dev, (uint64_t)n * 4, kDLFloat, 32);
  if (tmp == NULL) return -1;
  int rc = Launch(vadd_packed, Handle(a->data), kTVMOpaqueHandle, Handle(b->data), kTVMOpaqueHandle, Handle(tmp),
                  kTVMOpaqueHandle, n);
  if (rc == 0) {
    TVMValue alpha;
    alpha.v_float64 = 2.0; /* floats travel as f64 */
    rc = Launch(scale_packed, Handle(tmp), kTVMOpaqueHandle, Handle(c->data), kTVMOpaqueHandle, alpha, kTVMArgFloat, n);
  }
  if (__TVMBackendFreeWorkspace(4, dev, tmp) != 0) return -1;
  return rc;
}

/* Asks for a kernel the imported module does not have. */
int missing_kernel_host(TVMValue* args, int* type_codes, int num_args, TVMValue* out_ret_value, int* out_ret_tcode,
                        void* resource_handle) {
  TVMFunctionHandle f = NULL;
  return __TVMBackendGetFuncFromEnv(__tvm_module_ctx, "no_such_kernel", &f);
}
