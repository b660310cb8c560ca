/*
 * The model zoo's kernel library: neural-network operators written in plain C against the TVM C
 * ABI (runtime/c_runtime_api.h), the same ABI TVM-generated host code uses. Operators read shapes
 * from their DLTensor arguments, so one kernel serves every model. Like LLVM-generated code they
 * reach the runtime only through the weak __TVM* pointer slots the loader fills (so libraries built
 * from this file also load in TVM's own runtime), use TVMBackendParallelLaunch for large loops and
 * TVMBackendAllocWorkspace for scratch memory, and report bad arguments with TVMAPISetLastError.
 *
 * Layouts follow TVM: dense weights [units, in_features]; conv2d NCHW input, OIHW weights.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "runtime/c_runtime_api.h"

__attribute__((weak)) void* __tvm_module_ctx = NULL;
__attribute__((weak)) int (*__TVMFuncCall)(TVMFunctionHandle, TVMValue*, int*, int, TVMValue*, int*) = NULL;
__attribute__((weak)) void (*__TVMAPISetLastError)(const char*) = NULL;
__attribute__((weak)) int (*__TVMBackendGetFuncFromEnv)(void*, const char*, TVMFunctionHandle*) = NULL;
__attribute__((weak)) void* (*__TVMBackendAllocWorkspace)(int, int, uint64_t, int, int) = NULL;
__attribute__((weak)) int (*__TVMBackendFreeWorkspace)(int, int, void*) = NULL;
__attribute__((weak)) int (*__TVMBackendParallelLaunch)(FTVMParallelLambda, void*, int) = NULL;
__attribute__((weak)) int (*__TVMBackendParallelBarrier)(int, TVMParallelGroupEnv*) = NULL;

#define KERNEL(name)                                                                                   \
  int name(TVMValue* args, int* type_codes, int num_args, TVMValue* out_ret_value, int* out_ret_tcode, \
           void* resource_handle)

/* Minimum multiply-adds before a loop is split across the thread pool. */
#define PARALLEL_THRESHOLD (1 << 16)

static int Fail(const char* msg) {
  if (__TVMAPISetLastError) __TVMAPISetLastError(msg);
  return -1;
}

/* Checks `n` tensor arguments of float32 type and returns them. */
static int TensorArgs(const char* fn, TVMValue* args, int* codes, int num_args, int n, DLTensor** out) {
  static __thread char msg[160];
  if (num_args != n) {
    snprintf(msg, sizeof(msg), "%s: num_args should be %d", fn, n);
    return Fail(msg);
  }
  for (int i = 0; i < n; ++i) {
    if (codes[i] != kTVMDLTensorHandle && codes[i] != kTVMNDArrayHandle && codes[i] != kTVMOpaqueHandle) {
      snprintf(msg, sizeof(msg), "%s: Expect arg[%d] to be pointer", fn, i);
      return Fail(msg);
    }
    out[i] = (DLTensor*)args[i].v_handle;
    if (out[i] == NULL || out[i]->dtype.code != kDLFloat || out[i]->dtype.bits != 32 || out[i]->dtype.lanes != 1) {
      snprintf(msg, sizeof(msg), "%s: arg[%d] must be a float32 tensor", fn, i);
      return Fail(msg);
    }
    if (out[i]->device.device_type != kDLCPU) {
      snprintf(msg, sizeof(msg), "%s: arg[%d] must be on the CPU", fn, i);
      return Fail(msg);
    }
  }
  return 0;
}

static float* F(const DLTensor* t) { return (float*)((char*)t->data + t->byte_offset); }

static int64_t Numel(const DLTensor* t) {
  int64_t n = 1;
  for (int i = 0; i < t->ndim; ++i) n *= t->shape[i];
  return n;
}

static int SameShape(const DLTensor* a, const DLTensor* b) {
  if (a->ndim != b->ndim) return 0;
  for (int i = 0; i < a->ndim; ++i)
    if (a->shape[i] != b->shape[i]) return 0;
  return 1;
}

/* ---------------------------------------------------------------- elementwise */

KERNEL(sorun_relu) {
  DLTensor* t[2];
  if (TensorArgs("sorun_relu", args, type_codes, num_args, 2, t)) return -1;
  if (Numel(t[0]) != Numel(t[1])) return Fail("sorun_relu: input and output sizes differ");
  const float* x = F(t[0]);
  float* y = F(t[1]);
  for (int64_t i = 0, n = Numel(t[0]); i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  return 0;
}

KERNEL(sorun_add) {
  DLTensor* t[3];
  if (TensorArgs("sorun_add", args, type_codes, num_args, 3, t)) return -1;
  if (!SameShape(t[0], t[1]) || Numel(t[0]) != Numel(t[2])) return Fail("sorun_add: shapes differ");
  const float* a = F(t[0]);
  const float* b = F(t[1]);
  float* y = F(t[2]);
  for (int64_t i = 0, n = Numel(t[0]); i < n; ++i) y[i] = a[i] + b[i];
  return 0;
}

/* y = x + b broadcast over axis 1 (channels). */
static int BiasAdd(const char* fn, DLTensor* xt, DLTensor* bt, DLTensor* yt, int relu) {
  if (xt->ndim < 2 || bt->ndim != 1 || bt->shape[0] != xt->shape[1] || Numel(xt) != Numel(yt)) {
    return Fail(relu ? "sorun_bias_add_relu: bias must match axis 1" : "sorun_bias_add: bias must match axis 1");
  }
  (void)fn;
  int64_t n = xt->shape[0], c = xt->shape[1], inner = 1;
  for (int i = 2; i < xt->ndim; ++i) inner *= xt->shape[i];
  const float* x = F(xt);
  const float* b = F(bt);
  float* y = F(yt);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < c; ++j)
      for (int64_t k = 0; k < inner; ++k) {
        int64_t idx = (i * c + j) * inner + k;
        float v = x[idx] + b[j];
        y[idx] = relu && v < 0.0f ? 0.0f : v;
      }
  return 0;
}

KERNEL(sorun_bias_add) {
  DLTensor* t[3];
  if (TensorArgs("sorun_bias_add", args, type_codes, num_args, 3, t)) return -1;
  return BiasAdd("sorun_bias_add", t[0], t[1], t[2], 0);
}

KERNEL(sorun_bias_add_relu) {
  DLTensor* t[3];
  if (TensorArgs("sorun_bias_add_relu", args, type_codes, num_args, 3, t)) return -1;
  return BiasAdd("sorun_bias_add_relu", t[0], t[1], t[2], 1);
}

/* ---------------------------------------------------------------- dense */

typedef struct {
  const float* x;
  const float* w;
  const float* b; /* may be NULL */
  float* y;
  int64_t n, k, m;
  int relu;
} DenseClosure;

static void DenseRows(const DenseClosure* c, int64_t row_begin, int64_t row_end) {
  for (int64_t r = row_begin; r < row_end; ++r) {
    int64_t i = r / c->m, j = r % c->m; /* flattened (batch, unit) */
    const float* xi = c->x + i * c->k;
    const float* wj = c->w + j * c->k;
    float acc = c->b ? c->b[j] : 0.0f;
    for (int64_t p = 0; p < c->k; ++p) acc += xi[p] * wj[p];
    c->y[r] = c->relu && acc < 0.0f ? 0.0f : acc;
  }
}

static int DenseTask(int task_id, TVMParallelGroupEnv* penv, void* cdata) {
  const DenseClosure* c = (const DenseClosure*)cdata;
  int64_t total = c->n * c->m;
  int64_t chunk = (total + penv->num_task - 1) / penv->num_task;
  int64_t begin = task_id * chunk;
  int64_t end = begin + chunk < total ? begin + chunk : total;
  if (begin < end) DenseRows(c, begin, end);
  return 0;
}

static int Dense(const char* fn, DLTensor* xt, DLTensor* wt, DLTensor* bt, DLTensor* yt, int relu) {
  static __thread char msg[160];
  if (xt->ndim != 2 || wt->ndim != 2 || yt->ndim != 2 || wt->shape[1] != xt->shape[1] || yt->shape[0] != xt->shape[0] ||
      yt->shape[1] != wt->shape[0] || (bt && (bt->ndim != 1 || bt->shape[0] != wt->shape[0]))) {
    snprintf(msg, sizeof(msg), "%s: shape mismatch (x [N,K], w [M,K], b [M], y [N,M])", fn);
    return Fail(msg);
  }
  DenseClosure c = {F(xt), F(wt), bt ? F(bt) : NULL, F(yt), xt->shape[0], xt->shape[1], wt->shape[0], relu};
  if (c.n * c.m * c.k >= PARALLEL_THRESHOLD && __TVMBackendParallelLaunch) {
    return __TVMBackendParallelLaunch(DenseTask, &c, 0);
  }
  DenseRows(&c, 0, c.n * c.m);
  return 0;
}

KERNEL(sorun_dense) {
  DLTensor* t[3];
  if (TensorArgs("sorun_dense", args, type_codes, num_args, 3, t)) return -1;
  return Dense("sorun_dense", t[0], t[1], NULL, t[2], 0);
}

KERNEL(sorun_dense_bias) {
  DLTensor* t[4];
  if (TensorArgs("sorun_dense_bias", args, type_codes, num_args, 4, t)) return -1;
  return Dense("sorun_dense_bias", t[0], t[1], t[2], t[3], 0);
}

KERNEL(sorun_dense_bias_relu) {
  DLTensor* t[4];
  if (TensorArgs("sorun_dense_bias_relu", args, type_codes, num_args, 4, t)) return -1;
  return Dense("sorun_dense_bias_relu", t[0], t[1], t[2], t[3], 1);
}

/* ---------------------------------------------------------------- conv2d (NCHW, OIHW) */

typedef struct {
  const float* x;
  const float* w;
  const float* b;
  float* y;
  int64_t n, c, h, wd, o, kh, kw, oh, ow, stride, pad_h, pad_w;
  int relu;
} ConvClosure;

/* One output plane (batch i, channel oc), through an im2col-style patch buffer from the workspace. */
static int ConvPlane(const ConvClosure* c, int64_t i, int64_t oc, float* patch) {
  const int64_t patch_len = c->c * c->kh * c->kw;
  const float* wo = c->w + oc * patch_len;
  for (int64_t y = 0; y < c->oh; ++y) {
    for (int64_t x = 0; x < c->ow; ++x) {
      int64_t p = 0;
      for (int64_t ic = 0; ic < c->c; ++ic)
        for (int64_t dy = 0; dy < c->kh; ++dy)
          for (int64_t dx = 0; dx < c->kw; ++dx) {
            int64_t iy = y * c->stride + dy - c->pad_h, ix = x * c->stride + dx - c->pad_w;
            patch[p++] = (iy < 0 || iy >= c->h || ix < 0 || ix >= c->wd)
                             ? 0.0f
                             : c->x[((i * c->c + ic) * c->h + iy) * c->wd + ix];
          }
      float acc = c->b ? c->b[oc] : 0.0f;
      for (int64_t q = 0; q < patch_len; ++q) acc += patch[q] * wo[q];
      c->y[((i * c->o + oc) * c->oh + y) * c->ow + x] = c->relu && acc < 0.0f ? 0.0f : acc;
    }
  }
  return 0;
}

static int ConvTask(int task_id, TVMParallelGroupEnv* penv, void* cdata) {
  const ConvClosure* c = (const ConvClosure*)cdata;
  uint64_t bytes = (uint64_t)(c->c * c->kh * c->kw) * sizeof(float);
  float* patch = (float*)__TVMBackendAllocWorkspace(kDLCPU, 0, bytes, kDLFloat, 32);
  if (patch == NULL) return -1;
  int64_t planes = c->n * c->o;
  for (int64_t p = task_id; p < planes; p += penv->num_task) ConvPlane(c, p / c->o, p % c->o, patch);
  return __TVMBackendFreeWorkspace(kDLCPU, 0, patch);
}

static int Conv(const char* fn, int64_t stride, DLTensor* xt, DLTensor* wt, DLTensor* bt, DLTensor* yt, int relu) {
  static __thread char msg[200];
  if (xt->ndim != 4 || wt->ndim != 4 || yt->ndim != 4 || wt->shape[1] != xt->shape[1] || yt->shape[0] != xt->shape[0] ||
      yt->shape[1] != wt->shape[0] || (bt && (bt->ndim != 1 || bt->shape[0] != wt->shape[0]))) {
    snprintf(msg, sizeof(msg), "%s: shape mismatch (x NCHW, w OIHW, b [O], y NOHW)", fn);
    return Fail(msg);
  }
  ConvClosure c;
  c.x = F(xt);
  c.w = F(wt);
  c.b = bt ? F(bt) : NULL;
  c.y = F(yt);
  c.n = xt->shape[0];
  c.c = xt->shape[1];
  c.h = xt->shape[2];
  c.wd = xt->shape[3];
  c.o = wt->shape[0];
  c.kh = wt->shape[2];
  c.kw = wt->shape[3];
  c.oh = yt->shape[2];
  c.ow = yt->shape[3];
  c.stride = stride;
  c.relu = relu;
  /* Symmetric padding implied by the shapes: (oh - 1) * stride + kh = h + 2 * pad. */
  int64_t ph2 = (c.oh - 1) * stride + c.kh - c.h, pw2 = (c.ow - 1) * stride + c.kw - c.wd;
  if (ph2 < 0 || pw2 < 0 || ph2 % 2 || pw2 % 2) {
    snprintf(msg, sizeof(msg), "%s: output %lldx%lld is not reachable from input %lldx%lld with a %lldx%lld kernel", fn,
             (long long)c.oh, (long long)c.ow, (long long)c.h, (long long)c.wd, (long long)c.kh, (long long)c.kw);
    return Fail(msg);
  }
  c.pad_h = ph2 / 2;
  c.pad_w = pw2 / 2;
  int64_t work = c.n * c.o * c.oh * c.ow * c.c * c.kh * c.kw;
  if (work >= PARALLEL_THRESHOLD) return __TVMBackendParallelLaunch(ConvTask, &c, 0);
  TVMParallelGroupEnv env = {NULL, 1};
  return ConvTask(0, &env, &c);
}

KERNEL(sorun_conv2d_nchw) {
  DLTensor* t[3];
  if (TensorArgs("sorun_conv2d_nchw", args, type_codes, num_args, 3, t)) return -1;
  return Conv("sorun_conv2d_nchw", 1, t[0], t[1], NULL, t[2], 0);
}

KERNEL(sorun_conv2d_bias_relu_nchw) {
  DLTensor* t[4];
  if (TensorArgs("sorun_conv2d_bias_relu_nchw", args, type_codes, num_args, 4, t)) return -1;
  return Conv("sorun_conv2d_bias_relu_nchw", 1, t[0], t[1], t[2], t[3], 1);
}

KERNEL(sorun_conv2d_bias_relu_nchw_s2) {
  DLTensor* t[4];
  if (TensorArgs("sorun_conv2d_bias_relu_nchw_s2", args, type_codes, num_args, 4, t)) return -1;
  return Conv("sorun_conv2d_bias_relu_nchw_s2", 2, t[0], t[1], t[2], t[3], 1);
}

/* ---------------------------------------------------------------- pooling, softmax */

/* Max pool with window = stride = input / output size per axis (2x2 for a halving). */
KERNEL(sorun_max_pool2d) {
  DLTensor* t[2];
  if (TensorArgs("sorun_max_pool2d", args, type_codes, num_args, 2, t)) return -1;
  DLTensor *xt = t[0], *yt = t[1];
  if (xt->ndim != 4 || yt->ndim != 4 || yt->shape[0] != xt->shape[0] || yt->shape[1] != xt->shape[1] ||
      yt->shape[2] == 0 || yt->shape[3] == 0 || xt->shape[2] % yt->shape[2] || xt->shape[3] % yt->shape[3]) {
    return Fail("sorun_max_pool2d: output must divide the input (NCHW)");
  }
  int64_t nc = xt->shape[0] * xt->shape[1], h = xt->shape[2], w = xt->shape[3];
  int64_t oh = yt->shape[2], ow = yt->shape[3], sh = h / oh, sw = w / ow;
  const float* x = F(xt);
  float* y = F(yt);
  for (int64_t p = 0; p < nc; ++p)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        float m = -INFINITY;
        for (int64_t di = 0; di < sh; ++di)
          for (int64_t dj = 0; dj < sw; ++dj) {
            float v = x[(p * h + i * sh + di) * w + j * sw + dj];
            m = v > m ? v : m;
          }
        y[(p * oh + i) * ow + j] = m;
      }
  return 0;
}

KERNEL(sorun_global_avg_pool2d) {
  DLTensor* t[2];
  if (TensorArgs("sorun_global_avg_pool2d", args, type_codes, num_args, 2, t)) return -1;
  DLTensor *xt = t[0], *yt = t[1];
  if (xt->ndim != 4 || Numel(yt) != xt->shape[0] * xt->shape[1]) {
    return Fail("sorun_global_avg_pool2d: expects NCHW input and N*C outputs");
  }
  int64_t nc = xt->shape[0] * xt->shape[1], hw = xt->shape[2] * xt->shape[3];
  const float* x = F(xt);
  float* y = F(yt);
  for (int64_t p = 0; p < nc; ++p) {
    double s = 0;
    for (int64_t q = 0; q < hw; ++q) s += x[p * hw + q];
    y[p] = hw ? (float)(s / (double)hw) : 0.0f;
  }
  return 0;
}

/* Softmax over the last axis; the exponentials go through a workspace buffer. */
KERNEL(sorun_softmax) {
  DLTensor* t[2];
  if (TensorArgs("sorun_softmax", args, type_codes, num_args, 2, t)) return -1;
  DLTensor *xt = t[0], *yt = t[1];
  if (xt->ndim < 1 || !SameShape(xt, yt)) return Fail("sorun_softmax: input and output shapes differ");
  int64_t m = xt->shape[xt->ndim - 1];
  int64_t rows = m ? Numel(xt) / m : 0;
  float* e = (float*)__TVMBackendAllocWorkspace(kDLCPU, 0, (uint64_t)(m ? m : 1) * sizeof(float), kDLFloat, 32);
  if (e == NULL) return -1;
  const float* x = F(xt);
  float* y = F(yt);
  for (int64_t r = 0; r < rows; ++r) {
    float mx = -INFINITY;
    for (int64_t j = 0; j < m; ++j) mx = x[r * m + j] > mx ? x[r * m + j] : mx;
    double s = 0;
    for (int64_t j = 0; j < m; ++j) {
      e[j] = expf(x[r * m + j] - mx);
      s += e[j];
    }
    for (int64_t j = 0; j < m; ++j) y[r * m + j] = (float)(e[j] / s);
  }
  return __TVMBackendFreeWorkspace(kDLCPU, 0, e);
}

/* Does nothing (dispatch-overhead benchmarks). */
KERNEL(sorun_empty) { return 0; }

/* Always fails (error-path tests). */
KERNEL(sorun_fail) { return Fail("sorun_fail: this kernel always fails"); }
