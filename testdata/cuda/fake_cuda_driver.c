/*
 * A stand-in for NVIDIA's libcuda.so.1, so the CUDA backend's driver-present paths (contexts,
 * memory, copies, streams, module loading and the load-time architecture check, kernel launches
 * with marshalled parameters, dynamic shared-memory limits, the global barrier) run in CI on
 * machines without a GPU. tests/cuda/BUILD.bazel puts it first on LD_LIBRARY_PATH for the
 * *_fake_driver test targets; the real-GPU targets never see it.
 *
 * What it models: two devices of compute capability 9.0 ("sm_90"); "device memory" is host memory
 * from malloc, so copies are memcpy and everything is synchronous; modules are the nvcc-built
 * images of test_kernels.cu (PTX, cubin, fatbin): a cubin for another architecture fails with
 * CUDA_ERROR_NO_BINARY_FOR_GPU, text that is not PTX with CUDA_ERROR_INVALID_PTX (and a JIT log);
 * a kernel exists when its name appears in the image, and launching it runs a host version of the
 * kernel of test_kernels.cu with the same name over the launch grid. Launches are checked like the
 * driver checks them: a current context of the kernel's device, block <= 1024 threads, dynamic
 * shared memory within the kernel's limit (48 KiB unless raised with cuFuncSetAttribute), pointer
 * parameters inside live allocations. Declarations are written out here (no cuda.h needed).
 * It also runs the zoo's CUDA kernels (testdata/kernels/nn_cuda.cu: sorun_dev_{relu,add,dense_bias}
 * _kernel), so whole zoo models with a CUDA module (mlp_cuda) run on it, and it counts the work
 * queued on each stream: sorun_fake_cuda_stream_ops(stream) (NULL: stream 0) and
 * sorun_fake_cuda_stream_flags(stream), for tests that check where an executor queues its work.
 * Thread-safe (one lock); the current context is thread-local, as in the driver.
 *
 * For tests, beyond the driver API (look them up with dlsym on the loaded libcuda.so.1, e.g.
 * dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD); a real driver has none of them):
 *   unsigned long long sorun_fake_cuda_live_bytes(int device)     bytes of the live cuMemAlloc
 *   unsigned long long sorun_fake_cuda_live_allocations(int device)  allocations, and their count,
 *                                                                 on `device` (0 for a bad ordinal)
 *   void sorun_fake_cuda_fail_allocations_after(long long n)      the next n cuMemAlloc calls succeed,
 *                                                                 the ones after fail with
 *                                                                 CUDA_ERROR_OUT_OF_MEMORY; n < 0
 *                                                                 (the default) never fails
 * and cuMemGetInfo_v2 reports 80 GiB minus the live bytes of the current context's device (what a
 * test on a real GPU measures device memory with).
 * Stream capture and CUDA graphs, with the driver's rules for what spoils a capture, are in
 * fake_cuda_graph.c. With SORUN_FAKE_CUDA_ANY_KERNEL=1 in the environment, cuModuleGetFunction also
 * gives any other name a kernel that does nothing, so a real TVM export's launches can be followed.
 */
#define _POSIX_C_SOURCE 200112L /* posix_memalign */

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testdata/cuda/fake_cuda_driver.h"

static const char* const kKernelNames[NUM_KERNELS] = {"vector_add",
                                                      "affine_2d",
                                                      "reverse_dyn_smem",
                                                      "barrier_probe",
                                                      "sorun_dev_relu_kernel",
                                                      "sorun_dev_add_kernel",
                                                      "sorun_dev_dense_bias_kernel"};

static unsigned long long g_default_stream_ops = 0; /* the same for stream 0 */

/* Counts one operation queued on `s` (NULL: stream 0). */
void FakeQueued(CUstream_st* s) { __atomic_fetch_add(s ? &s->ops : &g_default_stream_ops, 1, __ATOMIC_RELAXED); }

unsigned long long sorun_fake_cuda_stream_ops(CUstream_st* s) {
  return __atomic_load_n(s ? &s->ops : &g_default_stream_ops, __ATOMIC_RELAXED);
}
unsigned int sorun_fake_cuda_stream_flags(CUstream_st* s) { return s ? s->flags : 0; }

typedef struct Allocation {
  char* base;
  size_t size;
  int device; /* -1: module globals, not counted as cuMemAlloc'd */
  struct Allocation* next;
} Allocation;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static CUctx_st g_contexts[FAKE_DEVICES] = {{0}, {1}};
static Allocation* g_allocations = NULL;
static long long g_allocations_until_failure = -1; /* sorun_fake_cuda_fail_allocations_after */
static _Thread_local CUctx_st* t_current = NULL;
static _Thread_local CUctx_st* t_stack[MAX_CONTEXT_STACK];
static _Thread_local int t_stack_size = 0;

CUctx_st* FakeCurrentContext(void) { return t_current; }

/* ---- allocations ---- */

static CUresult Track(void* base, size_t size, int device) {
  Allocation* a = (Allocation*)malloc(sizeof(Allocation));
  if (a == NULL) return CUDA_ERROR_OUT_OF_MEMORY;
  a->base = (char*)base;
  a->size = size;
  a->device = device;
  pthread_mutex_lock(&g_lock);
  a->next = g_allocations;
  g_allocations = a;
  pthread_mutex_unlock(&g_lock);
  return CUDA_SUCCESS;
}

/* 1 if [p, p + n) lies inside one live allocation. */
static int Valid(const void* p, size_t n) {
  const char* c = (const char*)p;
  int ok = 0;
  pthread_mutex_lock(&g_lock);
  for (Allocation* a = g_allocations; a != NULL && !ok; a = a->next) {
    ok = c >= a->base && n <= a->size && (size_t)(c - a->base) <= a->size - n;
  }
  pthread_mutex_unlock(&g_lock);
  return ok;
}

static int Untrack(void* base) {
  int found = 0;
  pthread_mutex_lock(&g_lock);
  for (Allocation** a = &g_allocations; *a != NULL; a = &(*a)->next) {
    if ((*a)->base == (char*)base) {
      Allocation* dead = *a;
      *a = dead->next;
      free(dead);
      found = 1;
      break;
    }
  }
  pthread_mutex_unlock(&g_lock);
  return found;
}

/* The bytes (count == 0) or the number (count == 1) of live cuMemAlloc allocations on `device`. */
static unsigned long long Live(int device, int count) {
  unsigned long long n = 0;
  pthread_mutex_lock(&g_lock);
  for (Allocation* a = g_allocations; a != NULL; a = a->next) {
    if (a->device == device) n += count ? 1 : a->size;
  }
  pthread_mutex_unlock(&g_lock);
  return n;
}

/* 1 when the allocation failure set by sorun_fake_cuda_fail_allocations_after is due. */
static int AllocationFails(void) {
  pthread_mutex_lock(&g_lock);
  int fail = g_allocations_until_failure == 0;
  if (g_allocations_until_failure > 0) --g_allocations_until_failure;
  pthread_mutex_unlock(&g_lock);
  return fail;
}

/* ---- test hooks (the header comment) ---- */

unsigned long long sorun_fake_cuda_live_bytes(int device) { return Live(device, 0); }
unsigned long long sorun_fake_cuda_live_allocations(int device) { return Live(device, 1); }
void sorun_fake_cuda_fail_allocations_after(long long n) {
  pthread_mutex_lock(&g_lock);
  g_allocations_until_failure = n < 0 ? -1 : n;
  pthread_mutex_unlock(&g_lock);
}

/* ---- errors, init, devices ---- */

static const struct {
  CUresult code;
  const char* name;
  const char* text;
} kErrors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU",
     "no kernel image is available for execution on the device"},
    {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
    {CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
     "operation not permitted when stream is capturing"},
    {CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
     "operation failed due to a previous error during capture"},
    {CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT",
     "operation would make the legacy stream depend on a capturing blocking stream"},
};

CUresult cuGetErrorName(CUresult error, const char** str) {
  for (size_t i = 0; i < sizeof(kErrors) / sizeof(kErrors[0]); ++i) {
    if (kErrors[i].code == error) {
      *str = kErrors[i].name;
      return CUDA_SUCCESS;
    }
  }
  *str = NULL;
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorString(CUresult error, const char** str) {
  for (size_t i = 0; i < sizeof(kErrors) / sizeof(kErrors[0]); ++i) {
    if (kErrors[i].code == error) {
      *str = kErrors[i].text;
      return CUDA_SUCCESS;
    }
  }
  *str = NULL;
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuInit(unsigned int flags) { return flags == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }
CUresult cuDriverGetVersion(int* version) {
  *version = 13000;
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetCount(int* count) {
  *count = FAKE_DEVICES;
  return CUDA_SUCCESS;
}
CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  if (ordinal < 0 || ordinal >= FAKE_DEVICES) return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetName(char* name, int len, CUdevice device) {
  if (device < 0 || device >= FAKE_DEVICES) return CUDA_ERROR_INVALID_DEVICE;
  const char* text = device == 0 ? "sorun fake CUDA device 0" : "sorun fake CUDA device 1";
  if (len <= 0) return CUDA_ERROR_INVALID_VALUE;
  strncpy(name, text, (size_t)len - 1);
  name[len - 1] = '\0';
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetAttribute(int* value, int attribute, CUdevice device) {
  if (device < 0 || device >= FAKE_DEVICES) return CUDA_ERROR_INVALID_DEVICE;
  switch (attribute) {
    case 16: *value = 132; return CUDA_SUCCESS;                   /* multiprocessors */
    case 75: *value = FAKE_SM / 10; return CUDA_SUCCESS;          /* compute capability major */
    case 76: *value = FAKE_SM % 10; return CUDA_SUCCESS;          /* compute capability minor */
    case 97: *value = FAKE_MAX_SHARED_OPTIN; return CUDA_SUCCESS; /* opt-in shared memory per block */
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}
CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice device) {
  if (device < 0 || device >= FAKE_DEVICES) return CUDA_ERROR_INVALID_DEVICE;
  *bytes = (size_t)80 << 30;
  return CUDA_SUCCESS;
}

/* ---- contexts ---- */

CUresult cuDevicePrimaryCtxRetain(CUctx_st** context, CUdevice device) {
  if (device < 0 || device >= FAKE_DEVICES) return CUDA_ERROR_INVALID_DEVICE;
  *context = &g_contexts[device];
  return CUDA_SUCCESS;
}
CUresult cuCtxSetCurrent(CUctx_st* context) {
  t_current = context;
  return CUDA_SUCCESS;
}
CUresult cuCtxPushCurrent_v2(CUctx_st* context) {
  if (t_stack_size == MAX_CONTEXT_STACK) return CUDA_ERROR_INVALID_VALUE;
  t_stack[t_stack_size++] = t_current;
  t_current = context;
  return CUDA_SUCCESS;
}
CUresult cuCtxPopCurrent_v2(CUctx_st** context) {
  if (t_stack_size == 0) return CUDA_ERROR_INVALID_CONTEXT;
  if (context) *context = t_current;
  t_current = t_stack[--t_stack_size];
  return CUDA_SUCCESS;
}
CUresult cuCtxSynchronize(void) {
  if (t_current == NULL) return CUDA_ERROR_INVALID_CONTEXT;
  return FakeCaptureConflict(FAKE_SYNC_CONTEXT, NULL);
}

/* ---- memory ---- */

CUresult cuMemAlloc_v2(CUdeviceptr* ptr, size_t bytes) {
  if (t_current == NULL) return CUDA_ERROR_INVALID_CONTEXT;
  if (bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  if (bytes > ((size_t)1 << 40)) return CUDA_ERROR_OUT_OF_MEMORY; /* more than any GPU has */
  const CUresult conflict = FakeCaptureConflict(FAKE_SYNC_ALLOC, NULL);
  if (conflict != CUDA_SUCCESS) return conflict;
  if (AllocationFails()) return CUDA_ERROR_OUT_OF_MEMORY;
  void* p = NULL;
  if (posix_memalign(&p, 256, bytes) != 0) return CUDA_ERROR_OUT_OF_MEMORY;
  if (Track(p, bytes, t_current->device) != CUDA_SUCCESS) {
    free(p);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  *ptr = (CUdeviceptr)(uintptr_t)p;
  return CUDA_SUCCESS;
}
CUresult cuMemFree_v2(CUdeviceptr ptr) {
  if (!Untrack((void*)(uintptr_t)ptr)) return CUDA_ERROR_INVALID_VALUE;
  free((void*)(uintptr_t)ptr);
  return CUDA_SUCCESS;
}
CUresult cuMemGetInfo_v2(size_t* free_bytes, size_t* total_bytes) {
  if (t_current == NULL) return CUDA_ERROR_INVALID_CONTEXT;
  const size_t total = (size_t)80 << 30; /* cuDeviceTotalMem_v2's */
  const unsigned long long live = Live(t_current->device, 0);
  if (free_bytes) *free_bytes = live < total ? total - (size_t)live : 0;
  if (total_bytes) *total_bytes = total;
  return CUDA_SUCCESS;
}

CUresult FakeCopy(void* dst, const void* src, size_t bytes, int dst_device, int src_device) {
  if (t_current == NULL) return CUDA_ERROR_INVALID_CONTEXT;
  if ((dst_device && !Valid(dst, bytes)) || (src_device && !Valid(src, bytes))) return CUDA_ERROR_INVALID_VALUE;
  memmove(dst, src, bytes);
  return CUDA_SUCCESS;
}
#define DEV(p) ((void*)(uintptr_t)(p))
/* The legacy stream's synchronous copies cannot be recorded and join captures of blocking streams. */
#define LEGACY_SYNC_POINT()                                                 \
  do {                                                                      \
    CUresult conflict = FakeCaptureConflict(FAKE_SYNC_LEGACY_STREAM, NULL); \
    if (conflict != CUDA_SUCCESS) return conflict;                          \
  } while (0)
/* An asynchronous operation on a capturing stream is recorded instead of run. */
#define RECORD_COPY(s, dst, src, n, dd, sd)                                              \
  do {                                                                                   \
    CUresult recorded;                                                                   \
    if (FakeCaptureCopy((s), (dst), (src), (n), (dd), (sd), &recorded)) return recorded; \
  } while (0)
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void* src, size_t n) {
  LEGACY_SYNC_POINT();
  FakeQueued(NULL);
  return FakeCopy(DEV(dst), src, n, 1, 0);
}
CUresult cuMemcpyDtoH_v2(void* dst, CUdeviceptr src, size_t n) {
  LEGACY_SYNC_POINT();
  FakeQueued(NULL);
  return FakeCopy(dst, DEV(src), n, 0, 1);
}
CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n) {
  LEGACY_SYNC_POINT();
  FakeQueued(NULL);
  return FakeCopy(DEV(dst), DEV(src), n, 1, 1);
}
static CUresult CopyPeer(CUdeviceptr dst, CUctx_st* dc, CUdeviceptr src, CUctx_st* sc, size_t n, CUstream_st* s) {
  if (dc == NULL || sc == NULL) return CUDA_ERROR_INVALID_CONTEXT;
  if (s == NULL) LEGACY_SYNC_POINT();
  RECORD_COPY(s, DEV(dst), DEV(src), n, 1, 1);
  FakeQueued(s);
  return FakeCopy(DEV(dst), DEV(src), n, 1, 1);
}
CUresult cuMemcpyPeer(CUdeviceptr dst, CUctx_st* dc, CUdeviceptr src, CUctx_st* sc, size_t n) {
  return CopyPeer(dst, dc, src, sc, n, NULL);
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, size_t n, CUstream_st* s) {
  RECORD_COPY(s, DEV(dst), src, n, 1, 0);
  FakeQueued(s);
  return FakeCopy(DEV(dst), src, n, 1, 0);
}
CUresult cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, size_t n, CUstream_st* s) {
  RECORD_COPY(s, dst, DEV(src), n, 0, 1);
  FakeQueued(s);
  return FakeCopy(dst, DEV(src), n, 0, 1);
}
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream_st* s) {
  RECORD_COPY(s, DEV(dst), DEV(src), n, 1, 1);
  FakeQueued(s);
  return FakeCopy(DEV(dst), DEV(src), n, 1, 1);
}
CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUctx_st* dc, CUdeviceptr src, CUctx_st* sc, size_t n, CUstream_st* s) {
  return CopyPeer(dst, dc, src, sc, n, s);
}
CUresult FakeMemset32(CUdeviceptr dst, unsigned int value, size_t count) {
  if (count > SIZE_MAX / 4 || !Valid(DEV(dst), count * 4)) return CUDA_ERROR_INVALID_VALUE;
  uint32_t* p = (uint32_t*)DEV(dst);
  for (size_t i = 0; i < count; ++i) p[i] = value;
  return CUDA_SUCCESS;
}
CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int value, size_t count, CUstream_st* s) {
  if (t_current == NULL) return CUDA_ERROR_INVALID_CONTEXT;
  CUresult recorded;
  if (FakeCaptureMemset32(s, dst, value, count, &recorded)) return recorded;
  FakeQueued(s);
  return FakeMemset32(dst, value, count);
}

/* ---- streams (work is synchronous, so they only need to exist; capture: fake_cuda_graph.c) ---- */

CUresult cuStreamCreate(CUstream_st** stream, unsigned int flags) {
  if (t_current == NULL) return CUDA_ERROR_INVALID_CONTEXT;
  if (flags > 1) return CUDA_ERROR_INVALID_VALUE;         /* CU_STREAM_DEFAULT or CU_STREAM_NON_BLOCKING */
  *stream = (CUstream_st*)calloc(1, sizeof(CUstream_st)); /* capture = NULL */
  if (*stream == NULL) return CUDA_ERROR_OUT_OF_MEMORY;
  (*stream)->device = t_current->device;
  (*stream)->flags = flags;
  return CUDA_SUCCESS;
}
CUresult cuStreamDestroy_v2(CUstream_st* stream) {
  if (stream == NULL) return CUDA_ERROR_INVALID_HANDLE;
  free(stream);
  return CUDA_SUCCESS;
}
CUresult cuStreamSynchronize(CUstream_st* stream) {
  if (t_current == NULL) return CUDA_ERROR_INVALID_CONTEXT;
  return FakeCaptureConflict(stream ? FAKE_SYNC_STREAM : FAKE_SYNC_LEGACY_STREAM, stream);
}

/* ---- modules ---- */

static const void* Find(const char* image, size_t n, const char* needle) {
  size_t k = strlen(needle);
  for (size_t i = 0; i + k <= n; ++i) {
    if (memcmp(image + i, needle, k) == 0) {
      char next = i + k < n ? image[i + k] : '\0';
      int ident =
          (next >= 'a' && next <= 'z') || (next >= 'A' && next <= 'Z') || (next >= '0' && next <= '9') || next == '_';
      if (!ident) return image + i;
    }
  }
  return NULL;
}

/* PTX lines are directives, braces, comments, or statements ending in ';', ':' or ','. */
static int LooksLikePtx(const char* text, char* log, size_t log_size) {
  if (strstr(text, ".version") == NULL || strstr(text, ".target") == NULL) return 0;
  int line_number = 1;
  for (const char* line = text; *line; ++line_number) {
    const char* end = strchr(line, '\n');
    if (end == NULL) end = line + strlen(line);
    const char* b = line;
    const char* e = end;
    while (b < e && (*b == ' ' || *b == '\t' || *b == '\r')) ++b;
    while (e > b && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r')) --e;
    if (b < e && !strchr("./{}()", *b) && !strchr(";:,", e[-1])) {
      if (log && log_size) {
        size_t len = (size_t)(e - b) < 64 ? (size_t)(e - b) : 64;
        char what[65];
        memcpy(what, b, len);
        what[len] = '\0';
        char msg[160];
        int m = snprintf(msg, sizeof(msg), "ptxas fatal   : line %d: syntax error at '%s'", line_number, what);
        (void)m;
        strncpy(log, msg, log_size - 1);
        log[log_size - 1] = '\0';
      }
      return 0;
    }
    line = *end ? end + 1 : end;
  }
  return 1;
}

CUresult cuModuleLoadDataEx(CUmod_st** module, const void* image, unsigned int num_options, int* options,
                            void** option_values) {
  if (t_current == NULL) return CUDA_ERROR_INVALID_CONTEXT;
  if (image == NULL) return CUDA_ERROR_INVALID_VALUE;
  char* log = NULL;
  size_t log_size = 0;
  for (unsigned i = 0; i < num_options; ++i) {
    if (options[i] == 5) log = (char*)option_values[i];                  /* CU_JIT_ERROR_LOG_BUFFER */
    if (options[i] == 6) log_size = (size_t)(uintptr_t)option_values[i]; /* ..._SIZE_BYTES */
  }
  float jit_wall_ms = 0; /* CU_JIT_WALL_TIME: only PTX is compiled */
  const unsigned char* bytes = (const unsigned char*)image;
  size_t size = 0;
  if (memcmp(bytes,
             "\x7f"
             "ELF",
             4) == 0) {
    /* cubin: ELF64 header, e_flags at byte 48; the SM is bits 8..15 (ABI version >= 8) or 0..7. */
    uint32_t flags;
    memcpy(&flags, bytes + 48, 4);
    uint64_t shoff;
    uint16_t shentsize, shnum;
    memcpy(&shoff, bytes + 40, 8);
    memcpy(&shentsize, bytes + 58, 2);
    memcpy(&shnum, bytes + 60, 2);
    size = (size_t)(shoff + (uint64_t)shentsize * shnum);
    int sm = bytes[8] >= 8 ? (int)((flags >> 8) & 0xff) : (int)(flags & 0xff);
    if (sm / 10 != FAKE_SM / 10 || sm > FAKE_SM) return CUDA_ERROR_NO_BINARY_FOR_GPU;
  } else if (bytes[0] == 0x50 && bytes[1] == 0xed && bytes[2] == 0x55 && bytes[3] == 0xba) {
    /* fatbin: 16-byte header (magic, version, header size, payload size). */
    uint64_t payload;
    memcpy(&payload, bytes + 8, 8);
    size = 16 + (size_t)payload;
  } else {
    if (!LooksLikePtx((const char*)image, log, log_size)) return CUDA_ERROR_INVALID_PTX;
    size = strlen((const char*)image);
    jit_wall_ms = 0.5f;
  }
  CUmod_st* m = (CUmod_st*)calloc(1, sizeof(CUmod_st));
  if (m == NULL) return CUDA_ERROR_OUT_OF_MEMORY;
  m->device = t_current->device;
  const char* any = getenv("SORUN_FAKE_CUDA_ANY_KERNEL");
  m->has_kernel[KERNEL_NOOP] = any != NULL && strcmp(any, "1") == 0;
  m->functions[KERNEL_NOOP].module = m;
  m->functions[KERNEL_NOOP].kernel = KERNEL_NOOP;
  m->functions[KERNEL_NOOP].max_dynamic_shared = FAKE_DEFAULT_DYN_SHARED;
  for (int k = 0; k < NUM_KERNELS; ++k) {
    m->has_kernel[k] = Find((const char*)image, size, kKernelNames[k]) != NULL;
    m->functions[k].module = m;
    m->functions[k].kernel = k;
    m->functions[k].max_dynamic_shared = FAKE_DEFAULT_DYN_SHARED;
  }
  if (Find((const char*)image, size, "__tvm_global_barrier_state")) {
    m->barrier_state = (uint32_t*)calloc(1, sizeof(uint32_t));
    if (m->barrier_state == NULL || Track(m->barrier_state, sizeof(uint32_t), -1) != CUDA_SUCCESS) {
      free(m->barrier_state);
      free(m);
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
  }
  for (unsigned i = 0; i < num_options; ++i) {
    if (options[i] == 2) memcpy(&option_values[i], &jit_wall_ms, sizeof(jit_wall_ms)); /* CU_JIT_WALL_TIME */
  }
  *module = m;
  return CUDA_SUCCESS;
}

CUresult cuModuleUnload(CUmod_st* module) {
  if (module == NULL) return CUDA_ERROR_INVALID_HANDLE;
  if (module->barrier_state) {
    Untrack(module->barrier_state);
    free(module->barrier_state);
  }
  free(module);
  return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(CUfunc_st** function, CUmod_st* module, const char* name) {
  if (module == NULL) return CUDA_ERROR_INVALID_HANDLE;
  for (int k = 0; k < NUM_KERNELS; ++k) {
    if (module->has_kernel[k] && strcmp(name, kKernelNames[k]) == 0) {
      *function = &module->functions[k];
      return CUDA_SUCCESS;
    }
  }
  if (module->has_kernel[KERNEL_NOOP]) {
    *function = &module->functions[KERNEL_NOOP];
    return CUDA_SUCCESS;
  }
  return CUDA_ERROR_NOT_FOUND;
}

CUresult cuModuleGetGlobal_v2(CUdeviceptr* ptr, size_t* bytes, CUmod_st* module, const char* name) {
  if (module == NULL) return CUDA_ERROR_INVALID_HANDLE;
  if (strcmp(name, "__tvm_global_barrier_state") != 0 || module->barrier_state == NULL) return CUDA_ERROR_NOT_FOUND;
  if (ptr) *ptr = (CUdeviceptr)(uintptr_t)module->barrier_state;
  if (bytes) *bytes = sizeof(uint32_t);
  return CUDA_SUCCESS;
}

CUresult cuFuncSetAttribute(CUfunc_st* function, int attribute, int value) {
  if (function == NULL) return CUDA_ERROR_INVALID_HANDLE;
  if (attribute != 8 || value < 0 || value > FAKE_MAX_SHARED_OPTIN) return CUDA_ERROR_INVALID_VALUE;
  function->max_dynamic_shared = value;
  return CUDA_SUCCESS;
}

/* ---- launches: host versions of test_kernels.cu ---- */

#define PARAM(type, i) (*(type*)params[i])

CUresult cuLaunchKernel(CUfunc_st* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared_bytes, CUstream_st* stream, void** params, void** extra) {
  if (t_current == NULL) return CUDA_ERROR_INVALID_CONTEXT;
  if (f == NULL) return CUDA_ERROR_INVALID_HANDLE;
  if (f->module->device != t_current->device) return CUDA_ERROR_INVALID_HANDLE;
  if (stream != NULL && stream->device != t_current->device) return CUDA_ERROR_INVALID_HANDLE;
  if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0 || bx > 1024 || by > 1024 || bz > 64 ||
      (uint64_t)bx * by * bz > 1024 || gy > 65535 || gz > 65535) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if ((int)shared_bytes > f->max_dynamic_shared) return CUDA_ERROR_INVALID_VALUE;
  if (extra != NULL) return CUDA_ERROR_INVALID_VALUE;
  const unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
  CUresult recorded;
  if (FakeCaptureLaunch(stream, f, grid, block, shared_bytes, params, &recorded)) return recorded;
  FakeQueued(stream);
  return FakeRunKernel(f, grid, block, shared_bytes, params);
}

int FakeKernelParams(int kernel, size_t sizes[FAKE_MAX_KERNEL_PARAMS]) {
  static const size_t kSizes[NUM_KERNELS + 1][FAKE_MAX_KERNEL_PARAMS] = {
      {8, 8, 8, 4},          /* vector_add(a, b, c, n) */
      {8, 8, 4, 4, 4, 8, 8}, /* affine_2d(out, in, w, h, alpha, beta, gamma) */
      {8, 8, 4},             /* reverse_dyn_smem(out, in, n) */
      {8},                   /* barrier_probe(out) */
      {8, 8, 4},             /* relu(x, y, n) */
      {8, 8, 8, 4},          /* add(a, b, y, n) */
      {8, 8, 8, 8, 4, 4, 4}, /* dense_bias(x, w, b, y, rows, k, m) */
      {0},                   /* no-op: its parameters are never read */
  };
  int n = 0;
  for (int i = 0; i < FAKE_MAX_KERNEL_PARAMS; ++i) {
    sizes[i] = kernel >= 0 && kernel <= NUM_KERNELS ? kSizes[kernel][i] : 0;
    if (sizes[i] != 0) n = i + 1;
  }
  return n;
}

CUresult FakeRunKernel(const CUfunc_st* f, const unsigned grid[3], const unsigned block[3], unsigned shared_bytes,
                       void** params) {
  const unsigned gz = grid[2], bz = block[2];
  const uint64_t nx = (uint64_t)grid[0] * block[0], ny = (uint64_t)grid[1] * block[1];
  switch (f->kernel) {
    case KERNEL_NOOP: return CUDA_SUCCESS;
    case KERNEL_VECTOR_ADD: {
      const float* a = PARAM(const float*, 0);
      const float* b = PARAM(const float*, 1);
      float* c = PARAM(float*, 2);
      int32_t n = PARAM(int32_t, 3);
      uint64_t count = (uint64_t)(n < 0 ? 0 : n) < nx ? (uint64_t)(n < 0 ? 0 : n) : nx;
      if (count && (!Valid(a, count * 4) || !Valid(b, count * 4) || !Valid(c, count * 4)))
        return CUDA_ERROR_ILLEGAL_ADDRESS;
      for (uint64_t i = 0; i < count; ++i) c[i] = a[i] + b[i];
      return CUDA_SUCCESS;
    }
    case KERNEL_AFFINE_2D: {
      float* out = PARAM(float*, 0);
      const float* in = PARAM(const float*, 1);
      int32_t w = PARAM(int32_t, 2), h = PARAM(int32_t, 3);
      float alpha = PARAM(float, 4);
      int64_t beta = PARAM(int64_t, 5);
      double gamma = PARAM(double, 6);
      if (w <= 0 || h <= 0) return CUDA_SUCCESS;
      uint64_t total = (uint64_t)w * (uint64_t)h * 4;
      if (!Valid(out, total) || !Valid(in, total)) return CUDA_ERROR_ILLEGAL_ADDRESS;
      for (uint64_t y = 0; y < ny && y < (uint64_t)h; ++y) {
        for (uint64_t x = 0; x < nx && x < (uint64_t)w; ++x) {
          uint64_t i = y * (uint64_t)w + x;
          out[i] = (float)(in[i] * alpha + (double)beta + gamma);
        }
      }
      return CUDA_SUCCESS;
    }
    case KERNEL_REVERSE_DYN_SMEM: {
      float* out = PARAM(float*, 0);
      const float* in = PARAM(const float*, 1);
      int32_t n = PARAM(int32_t, 2);
      if (n <= 0) return CUDA_SUCCESS;
      if ((uint64_t)n * 4 > shared_bytes) return CUDA_ERROR_ILLEGAL_ADDRESS; /* past the shared buffer */
      if (!Valid(out, (size_t)n * 4) || !Valid(in, (size_t)n * 4)) return CUDA_ERROR_ILLEGAL_ADDRESS;
      for (int32_t i = 0; i < n; ++i) out[i] = in[n - 1 - i];
      return CUDA_SUCCESS;
    }
    case KERNEL_BARRIER_PROBE: {
      uint32_t* out = PARAM(uint32_t*, 0);
      uint32_t* state = f->module->barrier_state;
      if (state == NULL || !Valid(out, 4)) return CUDA_ERROR_ILLEGAL_ADDRESS;
      for (uint64_t t = 0; t < nx * ny * gz * bz; ++t) *out = (*state)++;
      return CUDA_SUCCESS;
    }
    case KERNEL_ZOO_RELU: {
      const float* x = PARAM(const float*, 0);
      float* y = PARAM(float*, 1);
      int32_t n = PARAM(int32_t, 2);
      uint64_t count = n <= 0 ? 0 : ((uint64_t)n < nx ? (uint64_t)n : nx);
      if (count && (!Valid(x, count * 4) || !Valid(y, count * 4))) return CUDA_ERROR_ILLEGAL_ADDRESS;
      for (uint64_t i = 0; i < count; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
      return CUDA_SUCCESS;
    }
    case KERNEL_ZOO_ADD: {
      const float* a = PARAM(const float*, 0);
      const float* b = PARAM(const float*, 1);
      float* y = PARAM(float*, 2);
      int32_t n = PARAM(int32_t, 3);
      uint64_t count = n <= 0 ? 0 : ((uint64_t)n < nx ? (uint64_t)n : nx);
      if (count && (!Valid(a, count * 4) || !Valid(b, count * 4) || !Valid(y, count * 4)))
        return CUDA_ERROR_ILLEGAL_ADDRESS;
      for (uint64_t i = 0; i < count; ++i) y[i] = a[i] + b[i];
      return CUDA_SUCCESS;
    }
    case KERNEL_ZOO_DENSE_BIAS: {
      const float* x = PARAM(const float*, 0);
      const float* w = PARAM(const float*, 1);
      const float* b = PARAM(const float*, 2);
      float* y = PARAM(float*, 3);
      int32_t rows = PARAM(int32_t, 4), k = PARAM(int32_t, 5), m = PARAM(int32_t, 6);
      if (rows <= 0 || k <= 0 || m <= 0) return CUDA_SUCCESS;
      uint64_t total = (uint64_t)rows * (uint64_t)m;
      if (!Valid(x, (uint64_t)rows * k * 4) || !Valid(w, (uint64_t)m * k * 4) || !Valid(b, (uint64_t)m * 4) ||
          !Valid(y, total * 4))
        return CUDA_ERROR_ILLEGAL_ADDRESS;
      for (uint64_t o = 0; o < total && o < nx; ++o) {
        uint64_t i = o / (uint64_t)m, j = o % (uint64_t)m;
        float acc = b[j];
        for (int32_t p = 0; p < k; ++p) acc += x[i * (uint64_t)k + (uint64_t)p] * w[j * (uint64_t)k + (uint64_t)p];
        y[o] = acc;
      }
      return CUDA_SUCCESS;
    }
    default: return CUDA_ERROR_INVALID_HANDLE;
  }
}
