/* sorun's C API: a stable ABI over the C++ API (api/sorun.h) for C programs and for other languages
 * through their foreign-function interfaces (Python ctypes, Rust, Go, C#...). Nothing C++ crosses it:
 * opaque handles, fixed-width integers, status codes, and DLPack tensors in and out.
 *
 *   sorun_model_t* model = NULL;
 *   if (sorun_model_load("model.so", NULL, &model) != SORUN_OK) {
 *     fprintf(stderr, "%s\n", sorun_last_error());
 *     return 1;
 *   }
 *   sorun_executor_t* exec = NULL;
 *   sorun_executor_new(model, NULL, &exec);               // NULL options: one CPU, defaults
 *   sorun_executor_set_input_by_name(exec, "data", &input);   // input: any DLTensor
 *   sorun_executor_run(exec);
 *   sorun_executor_copy_output(exec, 0, &output);         // or sorun_executor_get_output (zero-copy)
 *   sorun_executor_free(exec);
 *   sorun_model_free(model);
 *
 * docs/api.md has a complete example (tests/api/c/example.c).
 *
 * Library: //api:libsorun.so (every backend: CPU, OpenCL, CUDA; .so and .tar models). It exports only
 * the sorun_* functions below and the TVM* functions compiled kernels call (runtime/c_runtime_api.h).
 * At run time it needs the C and C++ standard libraries (libc.so.6, libm.so.6, libstdc++.so.6,
 * libgcc_s.so.1) and zlib (libz.so.1). The OpenCL ICD loader (libOpenCL.so.1) and the CUDA driver
 * (libcuda.so.1) are opened on first use: without them the library loads and CPU models run.
 * Build against it with //api:sorun_c_header (this file and DLPack), or `-I<sorun> -I<dlpack include
 * dir>` and `-lsorun`; //api:sorun_c is the same API as a static library.
 *
 * Errors: every function that can fail returns a sorun_status_t; SORUN_OK (0) is success and then
 * every output argument is written. On failure no output is written (handles stay as they were), and
 * sorun_last_error() describes the failure. Nothing aborts and no C++ exception leaves the library.
 *
 * Ownership: a handle returned through an out argument is the caller's and is released with its _free
 * function (which accepts NULL). Pointers passed in are borrowed for the duration of the call only,
 * except where a function says otherwise (the _zero_copy functions). Strings and shapes returned by
 * the library are owned by the handle they came from.
 *
 * Threads: a model may be used by any number of threads at once; an executor by one thread at a time
 * (an overlapping call fails with SORUN_FAILED_PRECONDITION); executors of one model run concurrently
 * and share its weights. sorun_last_error() is per thread.
 *
 * ABI stability (SORUN_API_VERSION, major << 16 | minor): within one major version functions, enum
 * values and struct layouts are only ever added, never changed or removed. Option structs start with
 * `struct_size` (the caller sets sizeof as it compiled it) and only grow at the end; every field's zero
 * value means "the default", so `sorun_executor_options_t o = {.struct_size = sizeof(o)};` (or memset
 * to zero, then set struct_size) is the default. The library reads the first struct_size bytes; a
 * caller built against a newer header may pass a larger struct as long as the fields this library does
 * not know are zero. Structs the library fills (sorun_tensor_info_t) also start with struct_size, set
 * by the caller: the library writes only that many bytes.
 */
#ifndef SORUN_API_SORUN_C_H_
#define SORUN_API_SORUN_C_H_

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define SORUN_C_API __attribute__((visibility("default")))
#else
#define SORUN_C_API
#endif

/* The version of this header; compare with sorun_api_version() (the library's) at startup. A library
 * with the same major and a minor >= the header's has every function and field used. */
#define SORUN_API_VERSION_MAJOR 1
#define SORUN_API_VERSION_MINOR 3
#define SORUN_API_VERSION ((SORUN_API_VERSION_MAJOR << 16) | SORUN_API_VERSION_MINOR)

/* Error classes; the numeric values are stable (they are sorun::StatusCode's, base/status.h). */
typedef enum sorun_status {
  SORUN_OK = 0,
  SORUN_INVALID_ARGUMENT = 1,    /* a bad value: NULL argument, wrong shape or dtype, bad device */
  SORUN_NOT_FOUND = 2,           /* a named thing (file, input, function, loader) does not exist */
  SORUN_ALREADY_EXISTS = 3,      /* a name registered twice */
  SORUN_OUT_OF_RANGE = 4,        /* an index past the end */
  SORUN_FAILED_PRECONDITION = 5, /* the object is not in a state that allows the call */
  SORUN_DATA_LOSS = 6,           /* a malformed or truncated model file */
  SORUN_UNAVAILABLE = 7,         /* a device or driver is absent */
  SORUN_UNIMPLEMENTED = 8,       /* a valid request this build does not support */
  SORUN_RESOURCE_EXHAUSTED = 9,  /* allocation failure */
  SORUN_INTERNAL = 10,           /* a broken invariant inside sorun */
  SORUN_ABORTED = 11,            /* a kernel reported failure (its message is carried) */
  SORUN_PERMISSION_DENIED = 12   /* a configured check (a signature) refused the model (API 1.3) */
} sorun_status_t;

typedef struct sorun_model sorun_model_t;       /* a loaded model; immutable, shareable */
typedef struct sorun_executor sorun_executor_t; /* one executor of a model; one thread at a time */

/* ------------------------------------------------------------------------------------- library */

/* The library's SORUN_API_VERSION. */
SORUN_C_API uint32_t sorun_api_version(void);
/* The sorun release, e.g. "0.4.0" (static storage). */
SORUN_C_API const char* sorun_version(void);
/* The lower-case name of a status ("invalid_argument"; "unknown" for other values; static storage). */
SORUN_C_API const char* sorun_status_name(sorun_status_t status);
/* What the most recent failing sorun_* call on this thread reported, as "<status name>: <message>"
 * ("" if none has failed). Valid until the next sorun_* call on this thread. */
SORUN_C_API const char* sorun_last_error(void);

/* Registers the linked backends and validates the SORUN_* environment variables. Optional (loading
 * a model does it); idempotent and thread-safe. */
SORUN_C_API sorun_status_t sorun_initialize(void);

/* "cpu", "cpu:0", "opencl", "opencl:1", "cuda:0" ("gpu" means cuda) -> *device. */
SORUN_C_API sorun_status_t sorun_parse_device(const char* text, DLDevice* device);

/* ---------------------------------------------------------------------------------------- model */

/* Option values shared by the option structs: 0 is always the default. */
#define SORUN_OPTION_DEFAULT 0
#define SORUN_OPTION_ON 1
#define SORUN_OPTION_OFF (-1)

/* The load hooks (API 1.3; docs/security.md). Both run on the loading thread, before anything of the
 * library is mapped or run; both may be called by many loads at once when options are shared. A hook
 * returns SORUN_OK, or a status (SORUN_PERMISSION_DENIED for a refusal) with a reason written into
 * `message` (NUL-terminated, at most message_size bytes), which the load's error carries. */
typedef struct sorun_plaintext_sink sorun_plaintext_sink_t; /* owned by the loader, valid during the hook */
/* Decryption on the way in: `stored` is the file's (or buffer's) bytes; write the library's plaintext to
 * `plaintext` with sorun_plaintext_sink_write (it goes to a sealed anonymous memory file, never to disk). */
typedef sorun_status_t (*sorun_decrypt_fn)(void* user_data, const void* stored, size_t size, const char* name,
                                           sorun_plaintext_sink_t* plaintext, char* message, size_t message_size);
/* Judges the library's exact bytes (decrypted, if a decrypt hook is set) before dlopen. */
typedef sorun_status_t (*sorun_verify_library_fn)(void* user_data, const void* library, size_t size, const char* name,
                                                  char* message, size_t message_size);
/* Appends plaintext bytes; sorun_plaintext_sink_reserve optionally sizes the memory file once. */
SORUN_C_API sorun_status_t sorun_plaintext_sink_write(sorun_plaintext_sink_t* sink, const void* data, size_t size);
SORUN_C_API sorun_status_t sorun_plaintext_sink_reserve(sorun_plaintext_sink_t* sink, size_t size);

/* What loading does to the model file's pages. */
typedef enum sorun_prefetch {
  SORUN_PREFETCH_DEFAULT = 0,   /* SORUN_PREFETCH_WILL_NEED */
  SORUN_PREFETCH_NONE = 1,      /* fault them in on first use */
  SORUN_PREFETCH_WILL_NEED = 2, /* start reading them into the page cache in the background */
  SORUN_PREFETCH_POPULATE = 3   /* map them all before returning */
} sorun_prefetch_t;

typedef struct sorun_runtime_options {
  size_t struct_size;      /* sizeof(sorun_runtime_options_t) */
  int32_t verify_checksum; /* SORUN_OPTION_ON / _OFF; _DEFAULT: SORUN_VERIFY_CHECKSUM, else off */
  int32_t prefetch;        /* a sorun_prefetch_t */
  /* API 1.3: NULL for none. */
  sorun_decrypt_fn decrypt;
  void* decrypt_user_data;
  sorun_verify_library_fn verify_library;
  void* verify_user_data;
} sorun_runtime_options_t;

/* Loads a packed model (.so or .tar) into *model. `options` may be NULL (defaults). */
SORUN_C_API sorun_status_t sorun_model_load(const char* path, const sorun_runtime_options_t* options,
                                            sorun_model_t** model);
/* API 1.3: a model from `size` bytes at `data` (copied into a sealed anonymous memfd and loaded from
 * there: nothing is written to a file system; the caller may free `data` on return). `name` (NULL:
 * "<memory>") stands for the path in messages. SORUN_UNIMPLEMENTED where the kernel lacks memfd_create. */
SORUN_C_API sorun_status_t sorun_model_load_from_memory(const void* data, size_t size, const char* name,
                                                        const sorun_runtime_options_t* options, sorun_model_t** model);
/* The three-file deployment: graph JSON, kernel library, params file (NULL or "": none). */
SORUN_C_API sorun_status_t sorun_model_load_files(const char* graph_json_path, const char* library_path,
                                                  const char* params_path, const sorun_runtime_options_t* options,
                                                  sorun_model_t** model);
/* Releases the caller's handle (NULL: no-op). Executors created from it keep the model alive. */
SORUN_C_API void sorun_model_free(sorun_model_t* model);

/* A graph input or output. */
typedef struct sorun_tensor_info {
  size_t struct_size;   /* set by the caller: sizeof(sorun_tensor_info_t) */
  const char* name;     /* owned by the model (valid while the model lives) */
  const int64_t* shape; /* ndim entries, owned by the model */
  int32_t ndim;
  DLDataType dtype;
  int32_t is_param; /* 1: a parameter bound from the model's weights (inputs only) */
} sorun_tensor_info_t;

/* Inputs count the model's parameters too (flagged is_param), as the graph lists them. */
SORUN_C_API sorun_status_t sorun_model_num_inputs(const sorun_model_t* model, int32_t* count);
SORUN_C_API sorun_status_t sorun_model_num_outputs(const sorun_model_t* model, int32_t* count);
/* SORUN_OUT_OF_RANGE for an index outside [0, count). */
SORUN_C_API sorun_status_t sorun_model_input_info(const sorun_model_t* model, int32_t index, sorun_tensor_info_t* info);
SORUN_C_API sorun_status_t sorun_model_output_info(const sorun_model_t* model, int32_t index,
                                                   sorun_tensor_info_t* info);

/* ------------------------------------------------------------------------------------- executor */

typedef struct sorun_executor_options {
  size_t struct_size;      /* sizeof(sorun_executor_options_t) */
  const DLDevice* devices; /* num_devices devices, the first the default; none: cpu:0 */
  size_t num_devices;
  int32_t num_threads;         /* 0: the process-wide pool; > 0: a pool of this many (caller included) */
  int32_t warmup;              /* non-zero: touch every page the first run would fault in, now */
  const int32_t* cpu_affinity; /* CPU ids the pool's workers are pinned to; none: not pinned */
  size_t num_cpu_affinity;
  int64_t spin_us;     /* microseconds an idle worker spins, when spin_us_set is non-zero */
  int32_t spin_us_set; /* 0: SORUN_SPIN_US, else the built-in default */
  int32_t reserved;    /* zero */
} sorun_executor_options_t;

/* A new executor of `model` (`options` may be NULL: defaults). Weights are shared, not copied. Devices
 * that do not fit the model's kernels are SORUN_INVALID_ARGUMENT before anything is allocated: a model
 * whose kernels are in a CUDA / OpenCL module needs a device of that type ("model.so: its kernels are in
 * a CUDA module: it needs a cuda device, the executor was given cpu:0"), a CPU-only model runs on the
 * CPU only ("model.so: it has kernels for cpu only (no OpenCL module): it cannot run on opencl:0"). */
SORUN_C_API sorun_status_t sorun_executor_new(const sorun_model_t* model, const sorun_executor_options_t* options,
                                              sorun_executor_t** executor);
SORUN_C_API void sorun_executor_free(sorun_executor_t* executor);

/* Input and output indices are the model's (sorun_model_input_info). SORUN_NOT_FOUND lists the names. */
SORUN_C_API sorun_status_t sorun_executor_input_index(const sorun_executor_t* executor, const char* name,
                                                      int32_t* index);
SORUN_C_API sorun_status_t sorun_executor_output_index(const sorun_executor_t* executor, const char* name,
                                                       int32_t* index);
/* Since 1.1. The executor's outputs as its last run gave them, real shapes included (for a graph model
 * always the model's, sorun_model_output_info); before the first run, the model's description (dims -1
 * where computed at run time; a Relax model whose bytecode tells its outputs only by running has none).
 * The info's pointers are valid until the executor's next run or free. SORUN_OUT_OF_RANGE for an index
 * outside [0, count). Called by the thread that uses the executor. */
SORUN_C_API sorun_status_t sorun_executor_num_outputs(const sorun_executor_t* executor, int32_t* count);
SORUN_C_API sorun_status_t sorun_executor_output_info(const sorun_executor_t* executor, int32_t index,
                                                      sorun_tensor_info_t* info);
/* Threads of the pool the executor's parallel kernels use. */
SORUN_C_API sorun_status_t sorun_executor_num_threads(const sorun_executor_t* executor, int32_t* count);

/* Copies `value` (same shape and dtype, any device, compact) into an input. */
SORUN_C_API sorun_status_t sorun_executor_set_input(sorun_executor_t* executor, int32_t index, const DLTensor* value);
SORUN_C_API sorun_status_t sorun_executor_set_input_by_name(sorun_executor_t* executor, const char* name,
                                                            const DLTensor* value);
/* Binds `value`'s memory as the input (same shape, dtype and device; 64-byte aligned on the CPU): the
 * kernels read it in place, and sorun_executor_set_input writes into it. The memory must stay valid
 * while bound: until the next _zero_copy call for that input or sorun_executor_free. The DLTensor
 * struct itself is not kept. */
SORUN_C_API sorun_status_t sorun_executor_set_input_zero_copy(sorun_executor_t* executor, int32_t index,
                                                              const DLTensor* value);
/* Binds `value`'s memory as the output (same checks and lifetime): the kernels write into it. */
SORUN_C_API sorun_status_t sorun_executor_set_output_zero_copy(sorun_executor_t* executor, int32_t index,
                                                               const DLTensor* value);

/* Runs the model once with the inputs set so far. */
SORUN_C_API sorun_status_t sorun_executor_run(sorun_executor_t* executor);
/* A run queues device work and may return before it finishes: waits until the work this executor
 * queued has finished (the CPU always has after a run). */
SORUN_C_API sorun_status_t sorun_executor_synchronize(sorun_executor_t* executor);
/* Since 1.2. The stream the executor queues the work of `device` on (its own, or the one given to
 * sorun_executor_set_stream; NULL where the device has no streams). A device it does not use, or
 * the CPU, is SORUN_INVALID_ARGUMENT. */
SORUN_C_API sorun_status_t sorun_executor_get_stream(sorun_executor_t* executor, DLDevice device, void** stream);
/* Since 1.2. Queues the executor's work on `device` on `stream` (a CUstream of that device for CUDA), which the
 * caller keeps alive while the executor uses it; NULL goes back to the executor's own stream. Work
 * queued on the previous stream is waited for first. */
SORUN_C_API sorun_status_t sorun_executor_set_stream(sorun_executor_t* executor, DLDevice device, void* stream);

/* The executor's own output array, no copy: *out is the caller's and is released by calling
 * (*out)->deleter(*out); the memory stays valid until then, even past sorun_executor_free. Its values
 * are those of the last run; the next run overwrites them. */
SORUN_C_API sorun_status_t sorun_executor_get_output(sorun_executor_t* executor, int32_t index, DLManagedTensor** out);
/* Copies output `index` into `dst` (same shape and dtype, any device, allocated by the caller). */
SORUN_C_API sorun_status_t sorun_executor_copy_output(sorun_executor_t* executor, int32_t index, const DLTensor* dst);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SORUN_API_SORUN_C_H_ */
