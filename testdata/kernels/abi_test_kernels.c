/*
 * A kernel library written in plain C against the TVM C ABI (runtime/c_runtime_api.h), exercising
 * every runtime service compiled code uses. Half of it reaches the runtime the way TVM's LLVM backend
 * does (through the weak __TVM* pointer slots the loader fills); the "c_style_" functions call the
 * runtime by plain name as TVM's C backend does (resolved when the library is loaded).
 */
#include <stdint.h>
#include <string.h>

#include "runtime/c_runtime_api.h"

/* Context slots, defined the way LLVM-generated code defines them. */
__attribute__((weak)) void* __tvm_module_ctx = NULL;
__attribute__((weak)) int (*__TVMFuncCall)(TVMFunctionHandle, TVMValue*, int*, int, TVMValue*, int*) = NULL;
__attribute__((weak)) void (*__TVMAPISetLastError)(const char*) = NULL;
__attribute__((weak)) int (*__TVMBackendGetFuncFromEnv)(void*, const char*, TVMFunctionHandle*) = NULL;
__attribute__((weak)) void* (*__TVMBackendAllocWorkspace)(int, int, uint64_t, int, int) = NULL;
__attribute__((weak)) int (*__TVMBackendFreeWorkspace)(int, int, void*) = NULL;
__attribute__((weak)) int (*__TVMBackendParallelLaunch)(FTVMParallelLambda, void*, int) = NULL;
__attribute__((weak)) int (*__TVMBackendParallelBarrier)(int, TVMParallelGroupEnv*) = NULL;

/* LLVM form of the entry-point marker: a string naming the entry function. */
const char __tvm_main__[] = "add_one";

#define EXPECT_ARGS(n, name)                               \
  if (num_args != (n)) {                                   \
    __TVMAPISetLastError(name ": num_args should be " #n); \
    return -1;                                             \
  }

static int64_t NumElements(const DLTensor* t) {
  int64_t n = 1;
  for (int i = 0; i < t->ndim; ++i) n *= t->shape[i];
  return n;
}

static int IsTensorCode(int code) { return code == kTVMDLTensorHandle || code == kTVMNDArrayHandle; }

/* out[i] = in[i] + 1 (float32). */
int add_one(TVMValue* args, int* type_codes, int num_args, TVMValue* out_ret_value, int* out_ret_tcode,
            void* resource_handle) {
  EXPECT_ARGS(2, "add_one");
  if (!IsTensorCode(type_codes[0]) || !IsTensorCode(type_codes[1])) {
    __TVMAPISetLastError("add_one: Expect arg[0] and arg[1] to be DLTensor");
    return -1;
  }
  const DLTensor* in = (const DLTensor*)args[0].v_handle;
  DLTensor* out = (DLTensor*)args[1].v_handle;
  const float* x = (const float*)((const char*)in->data + in->byte_offset);
  float* y = (float*)((char*)out->data + out->byte_offset);
  int64_t n = NumElements(in);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] + 1.0f;
  return 0;
}

/* Returns the sum of its int arguments (tests return values and scalar arguments). */
int sum_ints(TVMValue* args, int* type_codes, int num_args, TVMValue* out_ret_value, int* out_ret_tcode,
             void* resource_handle) {
  int64_t s = 0;
  for (int i = 0; i < num_args; ++i) {
    if (type_codes[i] != kTVMArgInt) {
      __TVMAPISetLastError("sum_ints: Expect every arg to be int");
      return -1;
    }
    s += args[i].v_int64;
  }
  out_ret_value->v_int64 = s;
  *out_ret_tcode = kTVMArgInt;
  return 0;
}

/* Fails with a message. */
int always_fails(TVMValue* args, int* type_codes, int num_args, TVMValue* out_ret_value, int* out_ret_tcode,
                 void* resource_handle) {
  __TVMAPISetLastError("always_fails: the kernel detected an invalid state");
  return -1;
}

/* Reverses a float32 tensor through 3 workspace buffers allocated and freed LIFO (and one freed out
 * of order), checking each is 64-byte aligned. */
int workspace_reverse(TVMValue* args, int* type_codes, int num_args, TVMValue* out_ret_value, int* out_ret_tcode,
                      void* resource_handle) {
  EXPECT_ARGS(2, "workspace_reverse");
  const DLTensor* in = (const DLTensor*)args[0].v_handle;
  DLTensor* out = (DLTensor*)args[1].v_handle;
  int64_t n = NumElements(in);
  uint64_t nbytes = (uint64_t)n * sizeof(float);
  float* a = (float*)__TVMBackendAllocWorkspace(kDLCPU, 0, nbytes, kDLFloat, 32);
  float* b = (float*)__TVMBackendAllocWorkspace(kDLCPU, 0, nbytes, kDLFloat, 32);
  void* c = __TVMBackendAllocWorkspace(kDLCPU, 0, 100000, kDLFloat, 32);
  if (!a || !b || !c) return -1;
  if (((uintptr_t)a % 64) || ((uintptr_t)b % 64) || ((uintptr_t)c % 64)) {
    __TVMAPISetLastError("workspace_reverse: workspace is not 64-byte aligned");
    return -1;
  }
  memcpy(a, in->data, nbytes);
  for (int64_t i = 0; i < n; ++i) b[i] = a[n - 1 - i];
  memcpy(out->data, b, nbytes);
  if (__TVMBackendFreeWorkspace(kDLCPU, 0, a) != 0) return -1; /* out of order */
  if (__TVMBackendFreeWorkspace(kDLCPU, 0, c) != 0) return -1;
  if (__TVMBackendFreeWorkspace(kDLCPU, 0, b) != 0) return -1;
  return 0;
}

/* Parallel two-phase computation: phase 1 each task writes its slice of out = in * 2; barrier;
 * phase 2 each task adds the neighbouring task's first element (written by another thread in phase
 * 1). Correct only if every task ran and the barrier held. args: in, out, scratch(int32 per task). */
typedef struct {
  const float* in;
  float* out;
  int32_t* task_seen;
  int64_t n;
  float* firsts;
} ParallelClosure;

static int ParallelBody(int task_id, TVMParallelGroupEnv* penv, void* cdata) {
  ParallelClosure* c = (ParallelClosure*)cdata;
  int num_task = penv->num_task;
  int64_t chunk = (c->n + num_task - 1) / num_task;
  int64_t begin = task_id * chunk;
  int64_t end = begin + chunk > c->n ? c->n : begin + chunk;
  for (int64_t i = begin; i < end; ++i) c->out[i] = c->in[i] * 2.0f;
  c->firsts[task_id] = begin < c->n ? c->out[begin] : 0.0f;
  c->task_seen[task_id] += 1;
  if (__TVMBackendParallelBarrier(task_id, penv) != 0) return -1;
  float neighbour = c->firsts[(task_id + 1) % num_task];
  for (int64_t i = begin; i < end; ++i) c->out[i] += neighbour;
  return 0;
}

int parallel_two_phase(TVMValue* args, int* type_codes, int num_args, TVMValue* out_ret_value, int* out_ret_tcode,
                       void* resource_handle) {
  EXPECT_ARGS(4, "parallel_two_phase");
  const DLTensor* in = (const DLTensor*)args[0].v_handle;
  DLTensor* out = (DLTensor*)args[1].v_handle;
  DLTensor* seen = (DLTensor*)args[2].v_handle;
  int num_task = (int)args[3].v_int64;
  ParallelClosure c;
  c.in = (const float*)in->data;
  c.out = (float*)out->data;
  c.task_seen = (int32_t*)seen->data;
  c.n = NumElements(in);
  float firsts[256];
  c.firsts = firsts;
  if (num_task > 256) return -1;
  return __TVMBackendParallelLaunch(ParallelBody, &c, num_task);
}

/* Records penv->num_task for a launch with num_task = 0 ("all workers") into out[0]. */
static int RecordNumTask(int task_id, TVMParallelGroupEnv* penv, void* cdata) {
  int32_t* out = (int32_t*)cdata;
  if (task_id == 0) out[0] = penv->num_task;
  __atomic_fetch_add(&out[1], 1, __ATOMIC_SEQ_CST);
  return 0;
}

int parallel_default_tasks(TVMValue* args, int* type_codes, int num_args, TVMValue* out_ret_value, int* out_ret_tcode,
                           void* resource_handle) {
  EXPECT_ARGS(1, "parallel_default_tasks");
  DLTensor* out = (DLTensor*)args[0].v_handle;
  return __TVMBackendParallelLaunch(RecordNumTask, out->data, 0);
}

/* A parallel task that fails: the launch must report its message. */
static int FailingTask(int task_id, TVMParallelGroupEnv* penv, void* cdata) {
  if (task_id == penv->num_task - 1) {
    __TVMAPISetLastError("parallel task failed on purpose");
    return -1;
  }
  return 0;
}

int parallel_fails(TVMValue* args, int* type_codes, int num_args, TVMValue* out_ret_value, int* out_ret_tcode,
                   void* resource_handle) {
  return __TVMBackendParallelLaunch(FailingTask, NULL, 0);
}

/* A launch from inside a task (nested) must run inline and still complete. */
static int InnerTask(int task_id, TVMParallelGroupEnv* penv, void* cdata) {
  __atomic_fetch_add((int32_t*)cdata, 1, __ATOMIC_SEQ_CST);
  return 0;
}
static int OuterTask(int task_id, TVMParallelGroupEnv* penv, void* cdata) {
  return __TVMBackendParallelLaunch(InnerTask, cdata, 0);
}

int parallel_nested(TVMValue* args, int* type_codes, int num_args, TVMValue* out_ret_value, int* out_ret_tcode,
                    void* resource_handle) {
  EXPECT_ARGS(1, "parallel_nested");
  DLTensor* out = (DLTensor*)args[0].v_handle;
  return __TVMBackendParallelLaunch(OuterTask, out->data, 0);
}

/* Looks `name` (arg 0) up through TVMBackendGetFuncFromEnv on the module context and calls it with
 * the remaining arguments, returning its result. */
int call_from_env(TVMValue* args, int* type_codes, int num_args, TVMValue* out_ret_value, int* out_ret_tcode,
                  void* resource_handle) {
  if (num_args < 1 || type_codes[0] != kTVMStr) {
    __TVMAPISetLastError("call_from_env: Expect arg[0] to be a function name");
    return -1;
  }
  TVMFunctionHandle f = NULL;
  if (__TVMBackendGetFuncFromEnv(__tvm_module_ctx, args[0].v_str, &f) != 0) return -1;
  return __TVMFuncCall(f, args + 1, type_codes + 1, num_args - 1, out_ret_value, out_ret_tcode);
}

/* ---- TVM `c` target style: the runtime is called by plain name. ---- */

int c_style_workspace_fill(TVMValue* args, int* type_codes, int num_args, TVMValue* out_ret_value, int* out_ret_tcode,
                           void* resource_handle) {
  if (num_args != 1) {
    TVMAPISetLastError("c_style_workspace_fill: num_args should be 1");
    return -1;
  }
  DLTensor* out = (DLTensor*)args[0].v_handle;
  int64_t n = NumElements(out);
  float* w = (float*)TVMBackendAllocWorkspace(kDLCPU, 0, (uint64_t)n * 4, kDLFloat, 32);
  if (!w) return -1;
  for (int64_t i = 0; i < n; ++i) w[i] = (float)(i * 3);
  memcpy(out->data, w, (size_t)n * 4);
  return TVMBackendFreeWorkspace(kDLCPU, 0, w);
}

static int g_once_counter = 0;
static int OnceBody(void* cdata) {
  g_once_counter += 1;
  return 0;
}

/* Runs OnceBody through TVMBackendRunOnce twice and returns how often it ran (must be 1). */
int c_style_run_once(TVMValue* args, int* type_codes, int num_args, TVMValue* out_ret_value, int* out_ret_tcode,
                     void* resource_handle) {
  static void* once_handle = NULL;
  if (TVMBackendRunOnce(&once_handle, OnceBody, NULL, 0) != 0) return -1;
  if (TVMBackendRunOnce(&once_handle, OnceBody, NULL, 0) != 0) return -1;
  out_ret_value->v_int64 = g_once_counter;
  *out_ret_tcode = kTVMArgInt;
  return 0;
}

/* An empty kernel (dispatch-overhead benchmarks). */
int empty_kernel(TVMValue* args, int* type_codes, int num_args, TVMValue* out_ret_value, int* out_ret_tcode,
                 void* resource_handle) {
  return 0;
}

/* ---- TVM system-lib style: a global constructor registers a symbol by plain name at dlopen time
 * (what Runtime("cpp", {"system-lib": True}) builds do for __tvm_dev_mblob). ---- */

const char abi_test_system_lib_marker[] = "abi_test_kernels";
static int g_system_lib_register_rc = -2;

__attribute__((constructor)) static void RegisterWithSystemLib(void) {
  g_system_lib_register_rc =
      TVMBackendRegisterSystemLibSymbol("abi_test_kernels.marker", (void*)abi_test_system_lib_marker);
}

/* Returns what the registration returned at load time (0 = registered). */
int system_lib_register_result(TVMValue* args, int* type_codes, int num_args, TVMValue* out_ret_value,
                               int* out_ret_tcode, void* resource_handle) {
  out_ret_value->v_int64 = g_system_lib_register_rc;
  *out_ret_tcode = kTVMArgInt;
  return 0;
}
