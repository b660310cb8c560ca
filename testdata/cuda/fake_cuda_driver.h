/*
 * What the two files of the stand-in libcuda.so.1 share (fake_cuda_driver.c: devices, memory,
 * copies, streams, modules, launches; fake_cuda_graph.c: stream capture and CUDA graphs). Internal
 * to //testdata/cuda:libfake_cuda_driver.so; see fake_cuda_driver.c for what the stand-in models.
 */
#ifndef SORUN_TESTDATA_CUDA_FAKE_CUDA_DRIVER_H_
#define SORUN_TESTDATA_CUDA_FAKE_CUDA_DRIVER_H_

#include <stddef.h>
#include <stdint.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;

enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_IMAGE = 200,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
  CUDA_ERROR_INVALID_PTX = 218,
  CUDA_ERROR_INVALID_HANDLE = 400,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_ILLEGAL_ADDRESS = 700,
  CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
  CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901,
  CUDA_ERROR_STREAM_CAPTURE_IMPLICIT = 906,
};

#define FAKE_DEVICES 2
#define FAKE_SM 90
#define FAKE_MAX_SHARED_OPTIN 232448
#define FAKE_DEFAULT_DYN_SHARED (48 * 1024)
#define MAX_CONTEXT_STACK 8
#define FAKE_MAX_KERNEL_PARAMS 8

typedef struct CUctx_st {
  int device;
} CUctx_st;

enum {
  KERNEL_VECTOR_ADD,
  KERNEL_AFFINE_2D,
  KERNEL_REVERSE_DYN_SMEM,
  KERNEL_BARRIER_PROBE,
  KERNEL_ZOO_RELU,
  KERNEL_ZOO_ADD,
  KERNEL_ZOO_DENSE_BIAS,
  NUM_KERNELS,
  /* Any other kernel named in an image, when SORUN_FAKE_CUDA_ANY_KERNEL=1: launches do nothing (for
     tests that follow a real TVM export's launches, not its values). */
  KERNEL_NOOP = NUM_KERNELS,
};

struct CUmod_st;
typedef struct CUfunc_st {
  struct CUmod_st* module;
  int kernel;
  int max_dynamic_shared;
} CUfunc_st;

typedef struct CUmod_st {
  int device;
  int has_kernel[NUM_KERNELS + 1];
  CUfunc_st functions[NUM_KERNELS + 1];
  uint32_t* barrier_state; /* __tvm_global_barrier_state, when the image has it */
} CUmod_st;

struct FakeCapture;
typedef struct CUstream_st {
  int device;
  unsigned int flags;
  unsigned long long ops;      /* launches, copies, memsets and graph launches queued on it */
  struct FakeCapture* capture; /* the capture in progress on it, or NULL (fake_cuda_graph.c) */
} CUstream_st;

/* fake_cuda_driver.c */
CUctx_st* FakeCurrentContext(void);
void FakeQueued(CUstream_st* s);
/* Bytes of each parameter of `kernel` (0 past the last); the number of parameters. */
int FakeKernelParams(int kernel, size_t sizes[FAKE_MAX_KERNEL_PARAMS]);
/* Runs a launch now (host versions of the kernels; the launch was validated). */
CUresult FakeRunKernel(const CUfunc_st* f, const unsigned grid[3], const unsigned block[3], unsigned shared_bytes,
                       void** params);
/* memmove with the pointers checked (dst_device / src_device: that side is device memory). */
CUresult FakeCopy(void* dst, const void* src, size_t bytes, int dst_device, int src_device);
CUresult FakeMemset32(CUdeviceptr dst, unsigned int value, size_t count);

/* fake_cuda_graph.c: each Capture* returns 1 when `s` is capturing (the operation was recorded, or it
   failed: *result says which), 0 when the caller runs it. */
int FakeCaptureLaunch(CUstream_st* s, const CUfunc_st* f, const unsigned grid[3], const unsigned block[3],
                      unsigned shared_bytes, void** params, CUresult* result);
int FakeCaptureCopy(CUstream_st* s, void* dst, const void* src, size_t bytes, int dst_device, int src_device,
                    CUresult* result);
int FakeCaptureMemset32(CUstream_st* s, CUdeviceptr dst, unsigned int value, size_t count, CUresult* result);
/* What a capture makes of an operation that cannot be recorded: CUDA_SUCCESS when it does not
   conflict with one; else the driver's error (the capture it conflicts with is invalidated). */
enum { FAKE_SYNC_LEGACY_STREAM, FAKE_SYNC_STREAM, FAKE_SYNC_CONTEXT, FAKE_SYNC_ALLOC };
CUresult FakeCaptureConflict(int what, CUstream_st* s);

#endif /* SORUN_TESTDATA_CUDA_FAKE_CUDA_DRIVER_H_ */
