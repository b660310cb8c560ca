/* The C API (api/sorun_c.h) from a C program linked against libsorun.so: runs the zoo MLP (one file,
 * three files, copied and zero-copy inputs and outputs, DLPack output) and checks the error paths
 * (NULL arguments, bad path, unknown input, wrong dtype, out-of-range index, option struct sizes, the
 * last-error text); then Relax VM exports of TVM 0.27 and 0.16 (testdata/relax: mlp, cnn, legacy_mlp,
 * dyn_batch with batches 3 and 5), bit-exact against TVM's outputs (on aarch64: their aarch64 builds, within
 * 1e-5; legacy_mlp is x86-64 only). Plain C11, no test framework: CHECK prints what
 * failed and the test exits 1. */
#include <dlpack/dlpack.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/sorun_c.h"

static int failures = 0;

#define CHECK(cond)                                                                                                 \
  do {                                                                                                              \
    if (!(cond)) {                                                                                                  \
      fprintf(stderr, "%s:%d: CHECK failed: %s (last error: %s)\n", __FILE__, __LINE__, #cond, sorun_last_error()); \
      ++failures;                                                                                                   \
    }                                                                                                               \
  } while (0)

/* A call that must succeed; the test cannot go on otherwise. */
#define OK_OR_DIE(call)                                                                                     \
  do {                                                                                                      \
    sorun_status_t status_ = (call);                                                                        \
    if (status_ != SORUN_OK) {                                                                              \
      fprintf(stderr, "%s:%d: %s returned %s: %s\n", __FILE__, __LINE__, #call, sorun_status_name(status_), \
              sorun_last_error());                                                                          \
      exit(1);                                                                                              \
    }                                                                                                       \
  } while (0)

/* `call` fails with `expected` and the last error contains `text`. */
#define CHECK_FAILS(call, expected, text)                                                                  \
  do {                                                                                                     \
    sorun_status_t status_ = (call);                                                                       \
    if (status_ != (expected) || strstr(sorun_last_error(), (text)) == NULL) {                             \
      fprintf(stderr, "%s:%d: %s: expected %s containing '%s', got %s: '%s'\n", __FILE__, __LINE__, #call, \
              sorun_status_name(expected), (text), sorun_status_name(status_), sorun_last_error());        \
      ++failures;                                                                                          \
    }                                                                                                      \
  } while (0)

enum { kInputSize = 64, kOutputSize = 10 };
static const double kTolerance = 1e-4;

static char* Runfile(const char* workspace_relative) {
  const char* srcdir = getenv("TEST_SRCDIR");
  const char* workspace = getenv("TEST_WORKSPACE");
  size_t size = strlen(workspace_relative) + (srcdir ? strlen(srcdir) : 0) + (workspace ? strlen(workspace) : 0) + 3;
  char* path = malloc(size);
  if (srcdir && workspace) {
    snprintf(path, size, "%s/%s/%s", srcdir, workspace, workspace_relative);
  } else {
    snprintf(path, size, "%s", workspace_relative);
  }
  return path;
}

/* A float32 .npy file (version 1.0, little-endian, C order): its shape and values. */
typedef struct Npy {
  int64_t shape[8];
  int32_t ndim;
  size_t count;
  float* values; /* malloc'ed: NpyFree */
} Npy;

static Npy ReadNpy(const char* workspace_relative) {
  char* path = Runfile(workspace_relative);
  FILE* f = fopen(path, "rb");
  unsigned char preamble[10];
  if (f == NULL || fread(preamble, 1, sizeof(preamble), f) != sizeof(preamble) ||
      memcmp(preamble, "\x93NUMPY\x01", 7) != 0) {
    fprintf(stderr, "%s: not a version 1.0 .npy file\n", path);
    exit(1);
  }
  size_t header_size = (size_t)preamble[8] | ((size_t)preamble[9] << 8);
  char header[1024];
  if (header_size >= sizeof(header) || fread(header, 1, header_size, f) != header_size) {
    fprintf(stderr, "%s: bad header\n", path);
    exit(1);
  }
  header[header_size] = '\0';
  const char* dims = strstr(header, "'shape': (");
  if (strstr(header, "'<f4'") == NULL || strstr(header, "'fortran_order': False") == NULL || dims == NULL) {
    fprintf(stderr, "%s: expected a C-order float32 array: %s\n", path, header);
    exit(1);
  }
  Npy npy;
  memset(&npy, 0, sizeof(npy));
  npy.count = 1;
  for (dims += strlen("'shape': ("); *dims != ')' && npy.ndim < 8;) {
    char* end = NULL;
    long long dim = strtoll(dims, &end, 10);
    if (end == dims) break;
    npy.shape[npy.ndim++] = dim;
    npy.count *= (size_t)dim;
    dims = end;
    while (*dims == ',' || *dims == ' ') ++dims;
  }
  npy.values = malloc(npy.count * sizeof(float) + 1);
  if (*dims != ')' || fread(npy.values, sizeof(float), npy.count, f) != npy.count) {
    fprintf(stderr, "%s: expected %zu float32 values: %s\n", path, npy.count, header);
    exit(1);
  }
  fclose(f);
  free(path);
  return npy;
}

static void NpyFree(Npy* npy) {
  free(npy->values);
  npy->values = NULL;
}

/* Reads exactly `count` float32 values from a .npy file written by zoo_gen. */
static void ReadNpyFloats(const char* workspace_relative, float* out, size_t count) {
  Npy npy = ReadNpy(workspace_relative);
  if (npy.count != count) {
    fprintf(stderr, "%s: %zu values, expected %zu\n", workspace_relative, npy.count, count);
    exit(1);
  }
  memcpy(out, npy.values, count * sizeof(float));
  NpyFree(&npy);
}

static double MaxError(const float* actual, const float* expected, size_t count) {
  double worst = 0;
  for (size_t i = 0; i < count; ++i) {
    double e = fabs((double)actual[i] - (double)expected[i]);
    if (!(e <= worst)) worst = e; /* NaN counts as the worst */
  }
  return worst;
}

/* Whether `actual` is TVM's recorded output of a Relax fixture: bit for bit where the fixture is the x86-64
 * file TVM ran to record it; elsewhere (testdata/relax/aarch64: the same model built for aarch64, other
 * instructions and rounding) within 1e-5 of the largest recorded value. */
static int SameAsRecorded(const float* actual, const float* expected, size_t count) {
#if defined(__x86_64__)
  return memcmp(actual, expected, count * sizeof(float)) == 0;
#else
  double scale = 1.0;
  for (size_t i = 0; i < count; ++i) scale = fmax(scale, fabs((double)expected[i]));
  return MaxError(actual, expected, count) <= 1e-5 * scale;
#endif
}

/* The workspace path of a Relax fixture's library for this machine: testdata/relax/<name>.so (x86-64) or
 * testdata/relax/aarch64/<name>.so (written by make_relax_fixtures.py --aarch64). */
static void RelaxLibraryPath(char* out, size_t size, const char* name) {
#if defined(__x86_64__)
  snprintf(out, size, "testdata/relax/%s.so", name);
#else
  snprintf(out, size, "testdata/relax/aarch64/%s.so", name);
#endif
}

static DLTensor CpuTensor(void* data, int64_t* shape, int32_t ndim, DLDataType dtype) {
  DLTensor t;
  memset(&t, 0, sizeof(t));
  t.data = data;
  t.device.device_type = kDLCPU;
  t.device.device_id = 0;
  t.ndim = ndim;
  t.dtype = dtype;
  t.shape = shape;
  return t;
}

static const DLDataType kFloat32 = {kDLFloat, 32, 1};

static float input[kInputSize];
static float expected[kOutputSize];

static void TestLibrary(void) {
  CHECK(sorun_api_version() == SORUN_API_VERSION);
  CHECK(sorun_api_version() >> 16 == 1);
  CHECK(strlen(sorun_version()) > 0);
  CHECK(strcmp(sorun_status_name(SORUN_OK), "ok") == 0);
  CHECK(strcmp(sorun_status_name(SORUN_NOT_FOUND), "not_found") == 0);
  CHECK(strcmp(sorun_status_name(SORUN_ABORTED), "aborted") == 0);
  CHECK(strcmp(sorun_status_name((sorun_status_t)99), "unknown") == 0);
  OK_OR_DIE(sorun_initialize());

  DLDevice device = {kDLCPU, 7};
  OK_OR_DIE(sorun_parse_device("opencl:1", &device));
  CHECK(device.device_type == kDLOpenCL && device.device_id == 1);
  OK_OR_DIE(sorun_parse_device("cpu", &device));
  CHECK(device.device_type == kDLCPU && device.device_id == 0);
  device.device_id = 5;
  CHECK_FAILS(sorun_parse_device("tpu:0", &device), SORUN_INVALID_ARGUMENT, "tpu");
  CHECK(device.device_type == kDLCPU && device.device_id == 5); /* untouched on failure */
  CHECK_FAILS(sorun_parse_device(NULL, &device), SORUN_INVALID_ARGUMENT, "sorun_parse_device: text is NULL");
  CHECK_FAILS(sorun_parse_device("cpu", NULL), SORUN_INVALID_ARGUMENT, "device is NULL");
  /* The text names the status. */
  CHECK(strncmp(sorun_last_error(), "invalid_argument: ", 18) == 0);
}

static void TestModelInfo(const sorun_model_t* model) {
  int32_t count = -1;
  OK_OR_DIE(sorun_model_num_inputs(model, &count));
  CHECK(count == 7); /* data and six parameters */
  OK_OR_DIE(sorun_model_num_outputs(model, &count));
  CHECK(count == 1);

  sorun_tensor_info_t info;
  memset(&info, 0, sizeof(info));
  info.struct_size = sizeof(info);
  OK_OR_DIE(sorun_model_input_info(model, 0, &info));
  CHECK(strcmp(info.name, "data") == 0);
  CHECK(info.ndim == 2 && info.shape[0] == 1 && info.shape[1] == kInputSize);
  CHECK(info.dtype.code == kDLFloat && info.dtype.bits == 32 && info.dtype.lanes == 1);
  CHECK(info.is_param == 0);
  OK_OR_DIE(sorun_model_input_info(model, 1, &info));
  CHECK(strcmp(info.name, "fc1_w") == 0 && info.is_param == 1);
  OK_OR_DIE(sorun_model_output_info(model, 0, &info));
  CHECK(info.ndim == 2 && info.shape[0] == 1 && info.shape[1] == kOutputSize && info.is_param == 0);

  CHECK_FAILS(sorun_model_input_info(model, 7, &info), SORUN_OUT_OF_RANGE, "input index 7 is outside [0, 7)");
  CHECK_FAILS(sorun_model_output_info(model, -1, &info), SORUN_OUT_OF_RANGE, "output index -1");
  CHECK_FAILS(sorun_model_input_info(model, 0, NULL), SORUN_INVALID_ARGUMENT, "info is NULL");
  CHECK_FAILS(sorun_model_num_inputs(NULL, &count), SORUN_INVALID_ARGUMENT, "model is NULL");
  info.struct_size = 8;
  CHECK_FAILS(sorun_model_input_info(model, 0, &info), SORUN_INVALID_ARGUMENT, "struct_size is 8");
}

/* Sets the sample input by name, runs, and checks copy_output and the DLPack view. */
static void RunAndCheck(sorun_executor_t* exec) {
  int64_t in_shape[2] = {1, kInputSize};
  DLTensor in = CpuTensor(input, in_shape, 2, kFloat32);
  OK_OR_DIE(sorun_executor_set_input_by_name(exec, "data", &in));
  OK_OR_DIE(sorun_executor_run(exec));
  OK_OR_DIE(sorun_executor_synchronize(exec));
  /* A CPU executor has no streams (API 1.2): asking names why; the output stays untouched. */
  void* stream = &stream;
  DLDevice cuda0 = {kDLCUDA, 0};
  CHECK_FAILS(sorun_executor_get_stream(exec, cuda0, &stream), SORUN_INVALID_ARGUMENT, "a CPU executor queues nothing");
  CHECK(stream == &stream);
  CHECK_FAILS(sorun_executor_set_stream(exec, cuda0, NULL), SORUN_INVALID_ARGUMENT, "stream of cuda:0");
  CHECK_FAILS(sorun_executor_get_stream(exec, cuda0, NULL), SORUN_INVALID_ARGUMENT, "stream");

  float copied[kOutputSize];
  int64_t out_shape[2] = {1, kOutputSize};
  DLTensor out = CpuTensor(copied, out_shape, 2, kFloat32);
  OK_OR_DIE(sorun_executor_copy_output(exec, 0, &out));
  CHECK(MaxError(copied, expected, kOutputSize) <= kTolerance);

  DLManagedTensor* view = NULL;
  OK_OR_DIE(sorun_executor_get_output(exec, 0, &view));
  CHECK(view != NULL && view->deleter != NULL);
  CHECK(view->dl_tensor.ndim == 2 && view->dl_tensor.shape[1] == kOutputSize);
  CHECK(view->dl_tensor.device.device_type == kDLCPU);
  CHECK(view->dl_tensor.dtype.code == kDLFloat && view->dl_tensor.dtype.bits == 32);
  const float* values = (const float*)((const char*)view->dl_tensor.data + view->dl_tensor.byte_offset);
  CHECK(MaxError(values, expected, kOutputSize) <= kTolerance);
  view->deleter(view);
}

static void TestExecutorErrors(sorun_executor_t* exec) {
  int32_t index = -1;
  OK_OR_DIE(sorun_executor_input_index(exec, "data", &index));
  CHECK(index == 0);
  OK_OR_DIE(sorun_executor_input_index(exec, "fc2_b", &index));
  CHECK(index == 4);
  index = 42;
  CHECK_FAILS(sorun_executor_input_index(exec, "nope", &index), SORUN_NOT_FOUND, "nope");
  CHECK(index == 42);
  CHECK_FAILS(sorun_executor_input_index(exec, NULL, &index), SORUN_INVALID_ARGUMENT, "name is NULL");

  int32_t wrong[kInputSize] = {0};
  int64_t shape[2] = {1, kInputSize};
  DLDataType int32 = {kDLInt, 32, 1};
  DLTensor wrong_dtype = CpuTensor(wrong, shape, 2, int32);
  CHECK_FAILS(sorun_executor_set_input(exec, 0, &wrong_dtype), SORUN_INVALID_ARGUMENT, "int32");
  CHECK_FAILS(sorun_executor_set_input_by_name(exec, "nope", &wrong_dtype), SORUN_NOT_FOUND, "nope");
  int64_t wrong_shape_dims[2] = {2, kInputSize / 2};
  DLTensor wrong_shape = CpuTensor(input, wrong_shape_dims, 2, kFloat32);
  CHECK_FAILS(sorun_executor_set_input(exec, 0, &wrong_shape), SORUN_INVALID_ARGUMENT, "float32");
  DLTensor no_shape = CpuTensor(input, NULL, 2, kFloat32);
  CHECK_FAILS(sorun_executor_set_input(exec, 0, &no_shape), SORUN_INVALID_ARGUMENT, "shape is NULL");
  DLTensor no_data = CpuTensor(NULL, shape, 2, kFloat32);
  CHECK_FAILS(sorun_executor_set_input(exec, 0, &no_data), SORUN_INVALID_ARGUMENT, "value: data is NULL");
  CHECK_FAILS(sorun_executor_set_input(exec, 0, NULL), SORUN_INVALID_ARGUMENT, "value is NULL");
  CHECK_FAILS(sorun_executor_set_input(exec, 9, &no_shape), SORUN_INVALID_ARGUMENT, "shape is NULL");

  CHECK_FAILS(sorun_executor_run(NULL), SORUN_INVALID_ARGUMENT, "sorun_executor_run: executor is NULL");
  CHECK_FAILS(sorun_executor_copy_output(exec, 0, NULL), SORUN_INVALID_ARGUMENT, "dst is NULL");
  DLManagedTensor* view = (DLManagedTensor*)&index; /* must stay untouched */
  CHECK_FAILS(sorun_executor_get_output(exec, 3, &view), SORUN_OUT_OF_RANGE, "3");
  CHECK(view == (DLManagedTensor*)&index);
  CHECK_FAILS(sorun_executor_get_output(exec, 0, NULL), SORUN_INVALID_ARGUMENT, "out is NULL");
}

/* Zero-copy bindings on an executor of its own: the buffers must outlive it. */
static void TestZeroCopy(const sorun_model_t* model) {
  sorun_executor_t* exec = NULL;
  OK_OR_DIE(sorun_executor_new(model, NULL, &exec));
  float* in_data = aligned_alloc(64, 64 * sizeof(float) * 2);
  float* out_data = aligned_alloc(64, 64 * sizeof(float));
  memcpy(in_data, input, sizeof(input));
  memset(out_data, 0, 64 * sizeof(float));
  int64_t in_shape[2] = {1, kInputSize};
  int64_t out_shape[2] = {1, kOutputSize};
  DLTensor in = CpuTensor(in_data, in_shape, 2, kFloat32);
  DLTensor out = CpuTensor(out_data, out_shape, 2, kFloat32);
  OK_OR_DIE(sorun_executor_set_input_zero_copy(exec, 0, &in));
  OK_OR_DIE(sorun_executor_set_output_zero_copy(exec, 0, &out));
  OK_OR_DIE(sorun_executor_run(exec));
  CHECK(MaxError(out_data, expected, kOutputSize) <= kTolerance);

  DLTensor misaligned = CpuTensor(in_data + 1, in_shape, 2, kFloat32);
  CHECK_FAILS(sorun_executor_set_input_zero_copy(exec, 0, &misaligned), SORUN_INVALID_ARGUMENT, "aligned");
  /* set_input writes into the bound input; the bound output still receives the result. */
  memset(out_data, 0, 64 * sizeof(float));
  RunAndCheck(exec);
  CHECK(MaxError(in_data, input, kInputSize) == 0);
  CHECK(MaxError(out_data, expected, kOutputSize) <= kTolerance);
  sorun_executor_free(exec);
  free(in_data);
  free(out_data);
}

static void TestOptions(const sorun_model_t* model) {
  sorun_executor_options_t options;
  memset(&options, 0, sizeof(options));
  options.struct_size = sizeof(options);
  options.num_threads = 2;
  DLDevice cpu = {kDLCPU, 0};
  options.devices = &cpu;
  options.num_devices = 1;
  options.warmup = 1;
  sorun_executor_t* exec = NULL;
  OK_OR_DIE(sorun_executor_new(model, &options, &exec));
  int32_t threads = 0;
  OK_OR_DIE(sorun_executor_num_threads(exec, &threads));
  CHECK(threads == 2);
  RunAndCheck(exec);
  sorun_executor_free(exec);

  exec = NULL;
  options.struct_size = 8;
  CHECK_FAILS(sorun_executor_new(model, &options, &exec), SORUN_INVALID_ARGUMENT, "struct_size is 8");
  CHECK(exec == NULL);
  /* A newer caller's larger struct: accepted while the fields this library does not know are zero. */
  struct {
    sorun_executor_options_t known;
    int64_t newer_field;
  } newer;
  memset(&newer, 0, sizeof(newer));
  newer.known.struct_size = sizeof(newer);
  OK_OR_DIE(sorun_executor_new(model, &newer.known, &exec));
  sorun_executor_free(exec);
  exec = NULL;
  newer.newer_field = 1;
  CHECK_FAILS(sorun_executor_new(model, &newer.known, &exec), SORUN_INVALID_ARGUMENT, "does not know");
  options.struct_size = sizeof(options);
  options.num_devices = 2;
  options.devices = NULL;
  CHECK_FAILS(sorun_executor_new(model, &options, &exec), SORUN_INVALID_ARGUMENT, "options->devices is NULL");
  options.num_devices = 0;
  options.num_threads = -3;
  CHECK_FAILS(sorun_executor_new(model, &options, &exec), SORUN_INVALID_ARGUMENT, "num_threads is -3");
  CHECK(exec == NULL);
  /* The MLP has CPU kernels only: an OpenCL executor is refused by the device check, whether or not the
   * machine has OpenCL. */
  DLDevice opencl = {kDLOpenCL, 0};
  options.num_threads = 0;
  options.devices = &opencl;
  options.num_devices = 1;
  CHECK_FAILS(sorun_executor_new(model, &options, &exec), SORUN_INVALID_ARGUMENT,
              ": it has kernels for cpu only (no OpenCL module): it cannot run on opencl:0");
  CHECK(exec == NULL);
  CHECK_FAILS(sorun_executor_new(NULL, NULL, &exec), SORUN_INVALID_ARGUMENT, "model is NULL");
  CHECK_FAILS(sorun_executor_new(model, NULL, NULL), SORUN_INVALID_ARGUMENT, "executor is NULL");
}

static void TestLoadErrors(void) {
  sorun_model_t* model = NULL;
  char* missing = Runfile("testdata/models/no_such_model.so");
  CHECK_FAILS(sorun_model_load(missing, NULL, &model), SORUN_NOT_FOUND, missing);
  CHECK(model == NULL);
  free(missing);
  CHECK_FAILS(sorun_model_load(NULL, NULL, &model), SORUN_INVALID_ARGUMENT, "sorun_model_load: path is NULL");
  char* path = Runfile("testdata/models/mlp.so");
  CHECK_FAILS(sorun_model_load(path, NULL, NULL), SORUN_INVALID_ARGUMENT, "model is NULL");
  sorun_runtime_options_t options;
  memset(&options, 0, sizeof(options));
  options.struct_size = sizeof(options);
  options.prefetch = 9;
  CHECK_FAILS(sorun_model_load(path, &options, &model), SORUN_INVALID_ARGUMENT, "prefetch is 9");
  options.struct_size = 0;
  CHECK_FAILS(sorun_model_load(path, &options, &model), SORUN_INVALID_ARGUMENT, "struct_size is 0");
  CHECK(model == NULL);
  /* Every explicit option value loads. */
  options.struct_size = sizeof(options);
  options.verify_checksum = SORUN_OPTION_ON;
  options.prefetch = SORUN_PREFETCH_POPULATE;
  OK_OR_DIE(sorun_model_load(path, &options, &model));
  sorun_model_free(model);
  options.verify_checksum = SORUN_OPTION_OFF;
  options.prefetch = SORUN_PREFETCH_NONE;
  OK_OR_DIE(sorun_model_load(path, &options, &model));
  sorun_model_free(model);
  free(path);
  sorun_model_free(NULL);
  sorun_executor_free(NULL);
}

/* The three-file deployment: graph JSON, kernel library, params. */
static void TestLoadFiles(void) {
  char* graph = Runfile("testdata/models/mlp.json");
  char* library = Runfile("testdata/kernels/libnn_kernels.so");
  char* params = Runfile("testdata/models/mlp.params");
  sorun_model_t* model = NULL;
  OK_OR_DIE(sorun_model_load_files(graph, library, params, NULL, &model));
  sorun_executor_t* exec = NULL;
  OK_OR_DIE(sorun_executor_new(model, NULL, &exec));
  RunAndCheck(exec);
  sorun_executor_free(exec);
  sorun_model_free(model);
  CHECK_FAILS(sorun_model_load_files(NULL, library, params, NULL, &model), SORUN_INVALID_ARGUMENT,
              "graph_json_path is NULL");
  free(graph);
  free(library);
  free(params);
}

/* ------------------------------------------------------------------ Relax VM exports (TVM 0.16 - 0.27) */

/* Output `index` of the last run is `expected` (same shape; the values SameAsRecorded), through the DLPack view and
 * through copy_output. */
static void CheckOutputIs(sorun_executor_t* exec, int32_t index, const Npy* expected, const char* what) {
  DLManagedTensor* view = NULL;
  OK_OR_DIE(sorun_executor_get_output(exec, index, &view));
  const DLTensor* t = &view->dl_tensor;
  int same_shape = t->ndim == expected->ndim && t->dtype.code == kDLFloat && t->dtype.bits == 32;
  for (int32_t d = 0; same_shape && d < t->ndim; ++d) same_shape = t->shape[d] == expected->shape[d];
  if (!same_shape) {
    fprintf(stderr, "%s: output %d has ndim %d, dims [%lld, %lld], expected [%lld, %lld]\n", what, index, t->ndim,
            (long long)t->shape[0], (long long)(t->ndim > 1 ? t->shape[1] : 0), (long long)expected->shape[0],
            (long long)(expected->ndim > 1 ? expected->shape[1] : 0));
    ++failures;
    view->deleter(view);
    return;
  }
  const void* values = (const char*)t->data + t->byte_offset;
  if (!SameAsRecorded(values, expected->values, expected->count)) {
    fprintf(stderr, "%s: output %d differs from TVM's (max error %g)\n", what, index,
            MaxError(values, expected->values, expected->count));
    ++failures;
  }
  view->deleter(view);

  float* copied = malloc(expected->count * sizeof(float) + 1);
  int64_t shape[8];
  memcpy(shape, expected->shape, sizeof(shape));
  DLTensor dst = CpuTensor(copied, shape, expected->ndim, kFloat32);
  OK_OR_DIE(sorun_executor_copy_output(exec, index, &dst));
  CHECK(SameAsRecorded(copied, expected->values, expected->count));
  free(copied);
}

/* A static-shape Relax export (testdata/relax/<name>.so, one input "x", one output): the C API reports
 * main's parameter, runs it, and its output is TVM's, bit for bit. Errors name the input. */
static void TestRelaxStatic(const char* name) {
  char file[128];
  RelaxLibraryPath(file, sizeof(file), name);
  char* path = Runfile(file);
  snprintf(file, sizeof(file), "testdata/relax/%s.input_0.npy", name);
  Npy x = ReadNpy(file);
  snprintf(file, sizeof(file), "testdata/relax/%s.output_0.npy", name);
  Npy y = ReadNpy(file);

  sorun_model_t* model = NULL;
  OK_OR_DIE(sorun_model_load(path, NULL, &model));
  int32_t count = -1;
  OK_OR_DIE(sorun_model_num_inputs(model, &count));
  CHECK(count == 1);
  sorun_tensor_info_t info;
  memset(&info, 0, sizeof(info));
  info.struct_size = sizeof(info);
  OK_OR_DIE(sorun_model_input_info(model, 0, &info));
  CHECK(strcmp(info.name, "x") == 0 && info.is_param == 0);
  CHECK(info.ndim == x.ndim && info.shape[0] == x.shape[0] && info.shape[info.ndim - 1] == x.shape[x.ndim - 1]);
  CHECK(info.dtype.code == kDLFloat && info.dtype.bits == 32);
  /* The output count is what the bytecode tells before a run: 1, or 0 when it cannot. */
  OK_OR_DIE(sorun_model_num_outputs(model, &count));
  CHECK(count == 0 || count == 1);

  sorun_executor_t* exec = NULL;
  OK_OR_DIE(sorun_executor_new(model, NULL, &exec));
  DLManagedTensor* view = NULL;
  CHECK_FAILS(sorun_executor_get_output(exec, 0, &view), SORUN_FAILED_PRECONDITION, "Run the executor first");
  CHECK_FAILS(sorun_executor_run(exec), SORUN_FAILED_PRECONDITION, "input 'x' is not set");
  DLTensor in = CpuTensor(x.values, x.shape, x.ndim, kFloat32);
  OK_OR_DIE(sorun_executor_set_input_by_name(exec, "x", &in));
  OK_OR_DIE(sorun_executor_run(exec));
  CheckOutputIs(exec, 0, &y, name);
  CHECK_FAILS(sorun_executor_get_output(exec, 1, &view), SORUN_OUT_OF_RANGE, "output index 1");
  int32_t index = -1;
  OK_OR_DIE(sorun_executor_output_index(exec, "output_0", &index));
  CHECK(index == 0);
  CHECK_FAILS(sorun_executor_input_index(exec, "data", &index), SORUN_NOT_FOUND, "(inputs: x)");

  /* Wrong shape and dtype: the input is named, nothing runs with it. */
  int64_t wrong_dims[4];
  memcpy(wrong_dims, x.shape, sizeof(wrong_dims));
  wrong_dims[x.ndim - 1] -= 1;
  DLTensor wrong = CpuTensor(x.values, wrong_dims, x.ndim, kFloat32);
  CHECK_FAILS(sorun_executor_set_input(exec, 0, &wrong), SORUN_INVALID_ARGUMENT, "input 'x'");
  DLTensor wrong_ndim = CpuTensor(x.values, x.shape, x.ndim - 1, kFloat32);
  CHECK_FAILS(sorun_executor_set_input_by_name(exec, "x", &wrong_ndim), SORUN_INVALID_ARGUMENT, "input 'x'");
  DLDataType int32 = {kDLInt, 32, 1};
  DLTensor wrong_dtype = CpuTensor(x.values, x.shape, x.ndim, int32);
  CHECK_FAILS(sorun_executor_set_input(exec, 0, &wrong_dtype), SORUN_INVALID_ARGUMENT, "input 'x'");
  /* A Relax kernel writes into memory the bytecode allocates: no zero-copy outputs. */
  float sink[64];
  int64_t sink_shape[2] = {1, 10};
  DLTensor out = CpuTensor(sink, sink_shape, 2, kFloat32);
  CHECK_FAILS(sorun_executor_set_output_zero_copy(exec, 0, &out), SORUN_UNIMPLEMENTED, "Relax");

  /* A zero-copy input (64-byte aligned), on a second executor that shares the constants. */
  sorun_executor_t* second = NULL;
  OK_OR_DIE(sorun_executor_new(model, NULL, &second));
  float* aligned = aligned_alloc(64, (x.count * sizeof(float) + 63) / 64 * 64);
  memcpy(aligned, x.values, x.count * sizeof(float));
  DLTensor bound = CpuTensor(aligned, x.shape, x.ndim, kFloat32);
  OK_OR_DIE(sorun_executor_set_input_zero_copy(second, 0, &bound));
  OK_OR_DIE(sorun_executor_run(second));
  CheckOutputIs(second, 0, &y, name);
  sorun_executor_free(second);
  free(aligned);

  /* The failed calls changed nothing: a second run gives the same bits, also after the model handle is freed. */
  sorun_model_free(model);
  OK_OR_DIE(sorun_executor_run(exec));
  CheckOutputIs(exec, 0, &y, name);
  sorun_executor_free(exec);
  NpyFree(&x);
  NpyFree(&y);
  free(path);
}

/* `rows` of `source` (a [n, cols] array) stacked: a new [count(rows), cols] array. */
static Npy TakeRows(const Npy* source, const int* rows, int count) {
  Npy out = *source;
  const size_t cols = source->count / (size_t)source->shape[0];
  out.shape[0] = count;
  out.count = (size_t)count * cols;
  out.values = malloc(out.count * sizeof(float) + 1);
  for (int r = 0; r < count; ++r)
    memcpy(out.values + (size_t)r * cols, source->values + (size_t)rows[r] * cols, cols * sizeof(float));
  return out;
}

/* dyn_batch.so: x[n, 8] -> (h, softmax(h)), two outputs whose batch follows the input's. The recorded
 * batch of 3 matches TVM bit for bit; a batch of 5 made of those rows gives those rows' outputs; the
 * executor goes back to 3 after 5; a wrong inner dimension is refused naming the input. */
static void TestRelaxDynamicBatch(void) {
  char file[128];
  RelaxLibraryPath(file, sizeof(file), "dyn_batch");
  char* path = Runfile(file);
  Npy x = ReadNpy("testdata/relax/dyn_batch.input_0.npy");
  Npy y[2] = {ReadNpy("testdata/relax/dyn_batch.output_0.npy"), ReadNpy("testdata/relax/dyn_batch.output_1.npy")};
  CHECK(x.ndim == 2 && x.shape[0] == 3 && x.shape[1] == 8);

  sorun_model_t* model = NULL;
  OK_OR_DIE(sorun_model_load(path, NULL, &model));
  sorun_tensor_info_t info;
  memset(&info, 0, sizeof(info));
  info.struct_size = sizeof(info);
  OK_OR_DIE(sorun_model_input_info(model, 0, &info));
  CHECK(strcmp(info.name, "x") == 0);
  CHECK(info.ndim == 2 && info.shape[0] == -1 && info.shape[1] == 8); /* the batch dimension is dynamic */
  int32_t count = -1;
  OK_OR_DIE(sorun_model_num_outputs(model, &count));
  CHECK(count == 0 || count == 2);

  sorun_executor_t* exec = NULL;
  OK_OR_DIE(sorun_executor_new(model, NULL, &exec));
  DLTensor in = CpuTensor(x.values, x.shape, 2, kFloat32);
  OK_OR_DIE(sorun_executor_set_input_by_name(exec, "x", &in));
  OK_OR_DIE(sorun_executor_run(exec));
  CheckOutputIs(exec, 0, &y[0], "dyn_batch n=3");
  CheckOutputIs(exec, 1, &y[1], "dyn_batch n=3");
  DLManagedTensor* view = NULL;
  CHECK_FAILS(sorun_executor_get_output(exec, 2, &view), SORUN_OUT_OF_RANGE, "output index 2");

  /* Batch 5: rows 2, 0, 1, 2, 0 of the recorded input. Each output row depends on its input row only. */
  static const int kRows[5] = {2, 0, 1, 2, 0};
  Npy x5 = TakeRows(&x, kRows, 5);
  Npy y5[2] = {TakeRows(&y[0], kRows, 5), TakeRows(&y[1], kRows, 5)};
  in = CpuTensor(x5.values, x5.shape, 2, kFloat32);
  OK_OR_DIE(sorun_executor_set_input(exec, 0, &in));
  OK_OR_DIE(sorun_executor_run(exec));
  CheckOutputIs(exec, 0, &y5[0], "dyn_batch n=5");
  CheckOutputIs(exec, 1, &y5[1], "dyn_batch n=5");
  /* The executor's output info (API 1.1) is the last run's: two outputs of [5, 4]. */
  int32_t num_outputs = 0;
  OK_OR_DIE(sorun_executor_num_outputs(exec, &num_outputs));
  CHECK(num_outputs == 2);
  sorun_tensor_info_t out_info;
  memset(&out_info, 0, sizeof(out_info));
  out_info.struct_size = sizeof(out_info);
  OK_OR_DIE(sorun_executor_output_info(exec, 1, &out_info));
  CHECK(out_info.ndim == 2 && out_info.shape[0] == 5 && out_info.shape[1] == 4);
  CHECK(strcmp(out_info.name, "output_1") == 0);
  CHECK_FAILS(sorun_executor_output_info(exec, 2, &out_info), SORUN_OUT_OF_RANGE, "output");
  /* The last run's shape is [5, 4]: a [3, 4] target is refused. */
  float small[12];
  int64_t small_shape[2] = {3, 4};
  DLTensor small_out = CpuTensor(small, small_shape, 2, kFloat32);
  CHECK_FAILS(sorun_executor_copy_output(exec, 1, &small_out), SORUN_INVALID_ARGUMENT, "[3, 4]");

  /* Wrong inner dimension (the batch is free, 8 is not). */
  int64_t wrong_dims[2] = {5, 7};
  DLTensor wrong = CpuTensor(x5.values, wrong_dims, 2, kFloat32);
  CHECK_FAILS(sorun_executor_set_input_by_name(exec, "x", &wrong), SORUN_INVALID_ARGUMENT,
              "input 'x': expected float32[?, 8], got float32[5, 7]");

  /* Back to the recorded batch. */
  in = CpuTensor(x.values, x.shape, 2, kFloat32);
  OK_OR_DIE(sorun_executor_set_input(exec, 0, &in));
  OK_OR_DIE(sorun_executor_run(exec));
  CheckOutputIs(exec, 0, &y[0], "dyn_batch n=3 after n=5");
  CheckOutputIs(exec, 1, &y[1], "dyn_batch n=3 after n=5");

  sorun_executor_free(exec);
  sorun_model_free(model);
  for (int i = 0; i < 2; ++i) {
    NpyFree(&y[i]);
    NpyFree(&y5[i]);
  }
  NpyFree(&x);
  NpyFree(&x5);
  free(path);
}

/* ------------------------------------------------------------------ models from memory, load hooks (1.3) */

static char* ReadWhole(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* bytes = (char*)malloc((size_t)n);
  *size = fread(bytes, 1, (size_t)n, f);
  fclose(f);
  return bytes;
}

/* A verifier that refuses everything, counting the bytes it saw. */
static sorun_status_t RefuseLibrary(void* user_data, const void* library, size_t size, const char* name, char* message,
                                    size_t message_size) {
  (void)library;
  *(size_t*)user_data = size;
  snprintf(message, message_size, "%s carries no signature", name);
  return SORUN_PERMISSION_DENIED;
}

/* A toy cipher (XOR 0x5a) for the decrypt hook: writes the plaintext in 1000-byte pieces. */
static sorun_status_t XorDecrypt(void* user_data, const void* stored, size_t size, const char* name,
                                 sorun_plaintext_sink_t* plaintext, char* message, size_t message_size) {
  (void)user_data;
  (void)name;
  (void)message;
  (void)message_size;
  if (sorun_plaintext_sink_reserve(plaintext, size) != SORUN_OK) return SORUN_INTERNAL;
  const unsigned char* in = (const unsigned char*)stored;
  unsigned char chunk[1000];
  for (size_t at = 0; at < size; at += sizeof chunk) {
    size_t n = size - at < sizeof chunk ? size - at : sizeof chunk;
    for (size_t i = 0; i < n; ++i) chunk[i] = in[at + i] ^ 0x5a;
    sorun_status_t rc = sorun_plaintext_sink_write(plaintext, chunk, n);
    if (rc != SORUN_OK) return rc;
  }
  return SORUN_OK;
}

static void TestLoadFromMemory(void) {
  char* path = Runfile("testdata/models/mlp.so");
  size_t size = 0;
  char* bytes = ReadWhole(path, &size);
  CHECK(bytes != NULL && size > 0);
  sorun_model_t* model = NULL;
  OK_OR_DIE(sorun_model_load_from_memory(bytes, size, "mlp.so", NULL, &model));
  memset(bytes, 0, size); /* the caller's buffer may go once loading returns */
  sorun_executor_t* exec = NULL;
  OK_OR_DIE(sorun_executor_new(model, NULL, &exec));
  RunAndCheck(exec);
  sorun_executor_free(exec);
  sorun_model_free(model);
  model = NULL;
  free(bytes);
  bytes = ReadWhole(path, &size);

  /* A refusing verifier: the load fails with its status and message. */
  sorun_runtime_options_t options;
  memset(&options, 0, sizeof(options));
  options.struct_size = sizeof(options);
  size_t seen = 0;
  options.verify_library = RefuseLibrary;
  options.verify_user_data = &seen;
  CHECK_FAILS(sorun_model_load_from_memory(bytes, size, "mlp.so", &options, &model), SORUN_PERMISSION_DENIED,
              "mlp.so carries no signature");
  CHECK(seen == size);
  CHECK_FAILS(sorun_model_load(path, &options, &model), SORUN_PERMISSION_DENIED, "carries no signature");
  CHECK(model == NULL);

  /* A decrypt hook turns the stored bytes into the library. */
  for (size_t i = 0; i < size; ++i) bytes[i] = (char)(bytes[i] ^ 0x5a);
  memset(&options, 0, sizeof(options));
  options.struct_size = sizeof(options);
  options.decrypt = XorDecrypt;
  OK_OR_DIE(sorun_model_load_from_memory(bytes, size, "mlp.enc", &options, &model));
  OK_OR_DIE(sorun_executor_new(model, NULL, &exec));
  RunAndCheck(exec);
  sorun_executor_free(exec);
  sorun_model_free(model);
  model = NULL;
  /* Without the hook the stored bytes are no library: the file check's message, named. */
  CHECK_FAILS(sorun_model_load_from_memory(bytes, size, "mlp.enc", NULL, &model), SORUN_DATA_LOSS, "mlp.enc");
  CHECK_FAILS(sorun_model_load_from_memory(NULL, 10, "x", NULL, &model), SORUN_INVALID_ARGUMENT, "data is NULL");
  /* A 1.2 caller's smaller struct still works (the hook fields are read as absent). */
  options.struct_size = 16;
  CHECK_FAILS(sorun_model_load_from_memory(bytes, size, "mlp.enc", &options, &model), SORUN_DATA_LOSS, "mlp.enc");
  free(bytes);
  free(path);
}

int main(void) {
  ReadNpyFloats("testdata/models/mlp_input.npy", input, kInputSize);
  ReadNpyFloats("testdata/models/mlp_expected.npy", expected, kOutputSize);
  TestLibrary();
  TestLoadErrors();

  char* path = Runfile("testdata/models/mlp.so");
  sorun_model_t* model = NULL;
  OK_OR_DIE(sorun_model_load(path, NULL, &model));
  free(path);
  TestModelInfo(model);
  TestOptions(model);

  sorun_executor_t* exec = NULL;
  OK_OR_DIE(sorun_executor_new(model, NULL, &exec));
  RunAndCheck(exec);
  TestExecutorErrors(exec);
  TestZeroCopy(model);
  /* The executor keeps the model alive: free the model handle first, run again. */
  sorun_model_free(model);
  RunAndCheck(exec);
  sorun_executor_free(exec);

  TestLoadFiles();
  TestLoadFromMemory();

  TestRelaxStatic("mlp"); /* TVM 0.27 */
  TestRelaxStatic("cnn"); /* TVM 0.27, 4-d input */
#if defined(__x86_64__)
  TestRelaxStatic("legacy_mlp"); /* TVM 0.16 */
#else
  fprintf(stderr, "skipped: legacy_mlp (a TVM 0.16 export: built for x86_64 only)\n");
#endif
  TestRelaxDynamicBatch();

  if (failures != 0) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("sorun_c_test: all checks passed\n");
  return 0;
}
