/*
 * Stream capture and CUDA graphs of the stand-in libcuda.so.1 (fake_cuda_driver.c), with the
 * driver's rules as the CUDA Programming Guide states them:
 *   - cuStreamBeginCapture_v2 on a created stream (not the legacy stream 0); from then on the
 *     launches, asynchronous copies and memsets queued on it are recorded, not run;
 *   - what cannot be recorded spoils the capture (cuStreamEndCapture then fails with
 *     CUDA_ERROR_STREAM_CAPTURE_INVALIDATED) and fails itself: synchronizing the capturing stream or
 *     (from the capturing thread) the context, cuMemAlloc and synchronous copies from the capturing
 *     thread (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED: THREAD_LOCAL and GLOBAL modes), and legacy-stream
 *     work of any thread while a stream that synchronizes with it (CU_STREAM_DEFAULT) is capturing
 *     (CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
 *   - cuGraphInstantiateWithFlags / cuGraphLaunch replay the recorded operations in order (here: at
 *     once, on the calling thread), counted as one operation of the stream they are launched on.
 * For tests: unsigned long long sorun_fake_cuda_graph_launches(void) counts cuGraphLaunch calls.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "testdata/cuda/fake_cuda_driver.h"

typedef struct CUgraph_st CUgraph_st;
typedef struct CUgraphExec_st CUgraphExec_st;

typedef struct FakeOp {
  enum { OP_LAUNCH, OP_COPY, OP_MEMSET } kind;
  const CUfunc_st* function;
  unsigned grid[3], block[3], shared_bytes;
  uint64_t param_words[FAKE_MAX_KERNEL_PARAMS]; /* each parameter's value, copied; 8-byte aligned */
  void* dst;
  const void* src;
  size_t bytes;
  int dst_device, src_device;
  CUdeviceptr memset_dst;
  unsigned int value;
} FakeOp;

/* A recorded operation list: a capture in progress, a graph, or an executable graph. */
typedef struct FakeOps {
  FakeOp* ops;
  size_t count, capacity;
} FakeOps;

struct CUgraph_st {
  FakeOps recorded;
};
struct CUgraphExec_st {
  FakeOps recorded;
};

typedef struct FakeCapture {
  int mode;
  int invalidated;
  FakeOps recorded;
} FakeCapture;

#define MAX_CAPTURES 64
static pthread_mutex_t g_capture_lock = PTHREAD_MUTEX_INITIALIZER;
static CUstream_st* g_capturing[MAX_CAPTURES]; /* streams with a capture in progress */
static _Thread_local CUstream_st* t_capturing = NULL;
static unsigned long long g_graph_launches = 0;

unsigned long long sorun_fake_cuda_graph_launches(void) { return __atomic_load_n(&g_graph_launches, __ATOMIC_RELAXED); }

static int Append(FakeOps* list, const FakeOp* op) {
  if (list->count == list->capacity) {
    size_t capacity = list->capacity ? 2 * list->capacity : 16;
    FakeOp* grown = (FakeOp*)realloc(list->ops, capacity * sizeof(FakeOp));
    if (grown == NULL) return 0;
    list->ops = grown;
    list->capacity = capacity;
  }
  list->ops[list->count++] = *op;
  return 1;
}

static int Copied(const FakeOps* from, FakeOps* to) {
  memset(to, 0, sizeof(*to));
  if (from->count == 0) return 1;
  to->ops = (FakeOp*)malloc(from->count * sizeof(FakeOp));
  if (to->ops == NULL) return 0;
  memcpy(to->ops, from->ops, from->count * sizeof(FakeOp));
  to->count = to->capacity = from->count;
  return 1;
}

/* Records `op` on `s` when it captures: 1 (and *result) if so. */
static int Record(CUstream_st* s, const FakeOp* op, CUresult* result) {
  if (s == NULL || s->capture == NULL) return 0;
  if (s->capture->invalidated) {
    *result = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  } else {
    *result = Append(&s->capture->recorded, op) ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
  }
  return 1;
}

int FakeCaptureLaunch(CUstream_st* s, const CUfunc_st* f, const unsigned grid[3], const unsigned block[3],
                      unsigned shared_bytes, void** params, CUresult* result) {
  if (s == NULL || s->capture == NULL) return 0;
  FakeOp op;
  memset(&op, 0, sizeof(op));
  op.kind = OP_LAUNCH;
  op.function = f;
  memcpy(op.grid, grid, sizeof(op.grid));
  memcpy(op.block, block, sizeof(op.block));
  op.shared_bytes = shared_bytes;
  size_t sizes[FAKE_MAX_KERNEL_PARAMS];
  const int n = FakeKernelParams(f->kernel, sizes);
  for (int i = 0; i < n; ++i) memcpy(&op.param_words[i], params[i], sizes[i]); /* by value, as the driver */
  return Record(s, &op, result);
}

int FakeCaptureCopy(CUstream_st* s, void* dst, const void* src, size_t bytes, int dst_device, int src_device,
                    CUresult* result) {
  if (s == NULL || s->capture == NULL) return 0;
  FakeOp op;
  memset(&op, 0, sizeof(op));
  op.kind = OP_COPY;
  op.dst = dst;
  op.src = src;
  op.bytes = bytes;
  op.dst_device = dst_device;
  op.src_device = src_device;
  return Record(s, &op, result);
}

int FakeCaptureMemset32(CUstream_st* s, CUdeviceptr dst, unsigned int value, size_t count, CUresult* result) {
  if (s == NULL || s->capture == NULL) return 0;
  FakeOp op;
  memset(&op, 0, sizeof(op));
  op.kind = OP_MEMSET;
  op.memset_dst = dst;
  op.value = value;
  op.bytes = count;
  return Record(s, &op, result);
}

CUresult FakeCaptureConflict(int what, CUstream_st* s) {
  CUresult result = CUDA_SUCCESS;
  pthread_mutex_lock(&g_capture_lock);
  if (t_capturing != NULL && t_capturing->capture != NULL && what != FAKE_SYNC_STREAM) {
    /* An unsafe call of the capturing thread (mode THREAD_LOCAL or GLOBAL; RELAXED allows allocations). */
    if (!(what == FAKE_SYNC_ALLOC && t_capturing->capture->mode == 2)) {
      t_capturing->capture->invalidated = 1;
      result = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
  }
  if (what == FAKE_SYNC_STREAM && s != NULL && s->capture != NULL) {
    s->capture->invalidated = 1;
    result = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  if (what == FAKE_SYNC_LEGACY_STREAM && result == CUDA_SUCCESS) {
    for (int i = 0; i < MAX_CAPTURES; ++i) {
      CUstream_st* c = g_capturing[i];
      if (c != NULL && c->flags == 0 && c->capture != NULL) { /* it synchronizes with stream 0 */
        c->capture->invalidated = 1;
        result = CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
      }
    }
  }
  pthread_mutex_unlock(&g_capture_lock);
  return result;
}

CUresult cuStreamBeginCapture_v2(CUstream_st* s, int mode) {
  if (FakeCurrentContext() == NULL) return CUDA_ERROR_INVALID_CONTEXT;
  if (s == NULL) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; /* the legacy stream */
  if (mode < 0 || mode > 2) return CUDA_ERROR_INVALID_VALUE;
  if (s->capture != NULL) return CUDA_ERROR_INVALID_VALUE;
  FakeCapture* c = (FakeCapture*)calloc(1, sizeof(FakeCapture));
  if (c == NULL) return CUDA_ERROR_OUT_OF_MEMORY;
  c->mode = mode;
  pthread_mutex_lock(&g_capture_lock);
  int slot = -1;
  for (int i = 0; i < MAX_CAPTURES && slot < 0; ++i) slot = g_capturing[i] == NULL ? i : -1;
  if (slot >= 0) {
    g_capturing[slot] = s;
    s->capture = c;
    t_capturing = s;
  }
  pthread_mutex_unlock(&g_capture_lock);
  if (slot < 0) {
    free(c);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  return CUDA_SUCCESS;
}

CUresult cuStreamEndCapture(CUstream_st* s, CUgraph_st** graph) {
  if (s == NULL || s->capture == NULL || graph == NULL) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&g_capture_lock);
  FakeCapture* c = s->capture;
  s->capture = NULL;
  for (int i = 0; i < MAX_CAPTURES; ++i) {
    if (g_capturing[i] == s) g_capturing[i] = NULL;
  }
  if (t_capturing == s) t_capturing = NULL;
  pthread_mutex_unlock(&g_capture_lock);
  *graph = NULL;
  CUresult result = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  if (!c->invalidated) {
    CUgraph_st* g = (CUgraph_st*)calloc(1, sizeof(CUgraph_st));
    result = CUDA_ERROR_OUT_OF_MEMORY;
    if (g != NULL) {
      g->recorded = c->recorded; /* takes the list */
      c->recorded.ops = NULL;
      *graph = g;
      result = CUDA_SUCCESS;
    }
  }
  free(c->recorded.ops);
  free(c);
  return result;
}

CUresult cuGraphInstantiateWithFlags(CUgraphExec_st** exec, CUgraph_st* graph, unsigned long long flags) {
  if (exec == NULL || graph == NULL || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  CUgraphExec_st* e = (CUgraphExec_st*)calloc(1, sizeof(CUgraphExec_st));
  if (e == NULL || !Copied(&graph->recorded, &e->recorded)) {
    free(e);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  *exec = e;
  return CUDA_SUCCESS;
}

CUresult cuGraphGetNodes(CUgraph_st* graph, void** nodes, size_t* count) {
  if (graph == NULL || count == NULL || nodes != NULL) return CUDA_ERROR_INVALID_VALUE; /* counting only */
  *count = graph->recorded.count;
  return CUDA_SUCCESS;
}

CUresult cuGraphLaunch(CUgraphExec_st* exec, CUstream_st* s) {
  if (FakeCurrentContext() == NULL) return CUDA_ERROR_INVALID_CONTEXT;
  if (exec == NULL) return CUDA_ERROR_INVALID_HANDLE;
  if (s != NULL && s->capture != NULL) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; /* not modelled */
  FakeQueued(s);
  __atomic_fetch_add(&g_graph_launches, 1, __ATOMIC_RELAXED);
  for (size_t i = 0; i < exec->recorded.count; ++i) {
    FakeOp* op = &exec->recorded.ops[i];
    CUresult r = CUDA_SUCCESS;
    if (op->kind == OP_LAUNCH) {
      void* params[FAKE_MAX_KERNEL_PARAMS];
      for (int p = 0; p < FAKE_MAX_KERNEL_PARAMS; ++p) params[p] = &op->param_words[p];
      r = FakeRunKernel(op->function, op->grid, op->block, op->shared_bytes, params);
    } else if (op->kind == OP_COPY) {
      r = FakeCopy(op->dst, op->src, op->bytes, op->dst_device, op->src_device);
    } else {
      r = FakeMemset32(op->memset_dst, op->value, op->bytes);
    }
    if (r != CUDA_SUCCESS) return r;
  }
  return CUDA_SUCCESS;
}

CUresult cuGraphExecDestroy(CUgraphExec_st* exec) {
  if (exec == NULL) return CUDA_ERROR_INVALID_HANDLE;
  free(exec->recorded.ops);
  free(exec);
  return CUDA_SUCCESS;
}

CUresult cuGraphDestroy(CUgraph_st* graph) {
  if (graph == NULL) return CUDA_ERROR_INVALID_HANDLE;
  free(graph->recorded.ops);
  free(graph);
  return CUDA_SUCCESS;
}
