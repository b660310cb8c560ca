/* The TVM side of bench/interop_compare.py: loads a deploy.so with TVM's own C++ runtime
 * (libtvm_runtime.so, through its C API only) and times it the way `sorun bench` times sorun.
 *
 *   tvm_runtime_bench LIB.so NAME=INPUT.raw:DTYPE:D0xD1x... [--warmup W] [--repeat N] [--output OUT.raw]
 *
 * load-to-ready = TVMModLoadFromFile + lib["default"](cpu) (GraphExecutor creation and the factory's
 * parameter upload) + looking up set_input/run/get_output; first run = the first run() after
 * set_input; then W untimed and N timed run() calls (median, p90, min, max, mean). Peak RSS = VmHWM
 * (as `sorun bench`). Prints one JSON object on one line. Built by bench/interop_compare.py with
 * the TVM wheel's headers and libtvm_runtime.so; not part of the Bazel build (TVM is not a dependency
 * of sorun). Exit 1 with a message on stderr when a TVM call fails.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <tvm/runtime/c_runtime_api.h>

static double NowMs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void Check(int rc, const char* what) {
  if (rc != 0) {
    fprintf(stderr, "tvm_runtime_bench: %s failed: %s\n", what, TVMGetLastError());
    exit(1);
  }
}

static void Die(const char* msg, const char* arg) {
  fprintf(stderr, "tvm_runtime_bench: %s%s\n", msg, arg ? arg : "");
  exit(1);
}

/* Peak RSS of this program: VmHWM (getrusage's ru_maxrss would include the parent's peak, which Linux
 * carries over fork + execve; the same rule as `sorun bench`). */
static long PeakRssBytes(void) {
  FILE* f = fopen("/proc/self/status", "r");
  if (f) {
    char line[256];
    long kib = -1;
    while (fgets(line, sizeof(line), f)) {
      if (sscanf(line, "VmHWM: %ld kB", &kib) == 1) break;
    }
    fclose(f);
    if (kib >= 0) return kib * 1024L;
  }
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss * 1024L;
}

static int CompareDouble(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static TVMFunctionHandle GetFunction(TVMModuleHandle mod, const char* name) {
  TVMFunctionHandle f = NULL;
  Check(TVMModGetFunction(mod, name, 0, &f), name);
  if (f == NULL) Die("no function ", name);
  return f;
}

static void CallNoArgs(TVMFunctionHandle f, const char* what) {
  TVMValue ret;
  int ret_code = kTVMNullptr;
  Check(TVMFuncCall(f, NULL, NULL, 0, &ret, &ret_code), what);
}

int main(int argc, char** argv) {
  if (argc < 3)
    Die("usage: tvm_runtime_bench LIB.so NAME=IN.raw:DTYPE:D0xD1 [--warmup W] [--repeat N] [--output OUT.raw]", NULL);
  const char* lib_path = argv[1];
  char* spec = argv[2];
  int warmup = 5, repeat = 50;
  const char* output_path = NULL;
  for (int i = 3; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--warmup") == 0)
      warmup = atoi(argv[i + 1]);
    else if (strcmp(argv[i], "--repeat") == 0)
      repeat = atoi(argv[i + 1]);
    else if (strcmp(argv[i], "--output") == 0)
      output_path = argv[i + 1];
    else
      Die("unknown flag ", argv[i]);
  }
  if (repeat < 1 || warmup < 0) Die("bad --repeat/--warmup", NULL);

  /* NAME=PATH:DTYPE:SHAPE */
  char* eq = strchr(spec, '=');
  if (!eq) Die("bad input spec ", spec);
  *eq = '\0';
  const char* input_name = spec;
  char* path = eq + 1;
  char* c1 = strchr(path, ':');
  if (!c1) Die("bad input spec (no dtype)", NULL);
  *c1 = '\0';
  char* dtype = c1 + 1;
  char* c2 = strchr(dtype, ':');
  if (!c2) Die("bad input spec (no shape)", NULL);
  *c2 = '\0';
  int code, bits;
  if (strcmp(dtype, "float32") == 0) {
    code = kDLFloat;
    bits = 32;
  } else if (strcmp(dtype, "int32") == 0) {
    code = kDLInt;
    bits = 32;
  } else if (strcmp(dtype, "int64") == 0) {
    code = kDLInt;
    bits = 64;
  } else
    Die("unsupported dtype ", dtype);
  int64_t shape[8];
  int ndim = 0;
  int64_t elems = 1;
  for (char* tok = strtok(c2 + 1, "x"); tok && ndim < 8; tok = strtok(NULL, "x")) {
    shape[ndim] = atoll(tok);
    elems *= shape[ndim++];
  }
  const size_t nbytes = (size_t)elems * (size_t)(bits / 8);
  void* host = malloc(nbytes ? nbytes : 1);
  FILE* f = fopen(path, "rb");
  if (!f || fread(host, 1, nbytes, f) != nbytes) Die("cannot read ", path);
  fclose(f);

  const long rss_before_load = PeakRssBytes();

  /* load-to-ready */
  const double t0 = NowMs();
  TVMModuleHandle lib = NULL;
  Check(TVMModLoadFromFile(lib_path, "so", &lib), "TVMModLoadFromFile");
  TVMFunctionHandle create = GetFunction(lib, "default");
  TVMValue dev_arg;
  dev_arg.v_device.device_type = kDLCPU;
  dev_arg.v_device.device_id = 0;
  int dev_code = kDLDevice;
  TVMValue gmod_value;
  int gmod_code = kTVMNullptr;
  Check(TVMFuncCall(create, &dev_arg, &dev_code, 1, &gmod_value, &gmod_code), "lib[\"default\"](cpu)");
  if (gmod_code != kTVMModuleHandle) Die("default() did not return a module", NULL);
  TVMModuleHandle gmod = gmod_value.v_handle;
  TVMFunctionHandle set_input = GetFunction(gmod, "set_input");
  TVMFunctionHandle run = GetFunction(gmod, "run");
  TVMFunctionHandle get_output = GetFunction(gmod, "get_output");
  const double t1 = NowMs();

  TVMArrayHandle input = NULL;
  Check(TVMArrayAlloc(shape, ndim, code, bits, 1, kDLCPU, 0, &input), "TVMArrayAlloc");
  Check(TVMArrayCopyFromBytes(input, host, nbytes), "TVMArrayCopyFromBytes");
  TVMValue args[2];
  int codes[2] = {kTVMStr, kTVMDLTensorHandle};
  args[0].v_str = input_name;
  args[1].v_handle = input;
  TVMValue ret;
  int ret_code = kTVMNullptr;
  Check(TVMFuncCall(set_input, args, codes, 2, &ret, &ret_code), "set_input");

  const double t2 = NowMs();
  CallNoArgs(run, "run");
  const double first_run = NowMs() - t2;

  for (int i = 0; i < warmup; ++i) CallNoArgs(run, "run");
  double* times = (double*)malloc(sizeof(double) * (size_t)repeat);
  double sum = 0;
  for (int i = 0; i < repeat; ++i) {
    const double s = NowMs();
    CallNoArgs(run, "run"); /* CPU: synchronous */
    times[i] = NowMs() - s;
    sum += times[i];
  }
  qsort(times, (size_t)repeat, sizeof(double), CompareDouble);
  const double median = repeat % 2 ? times[repeat / 2] : 0.5 * (times[repeat / 2 - 1] + times[repeat / 2]);
  int p90_index = (int)((9 * (int64_t)repeat + 9) / 10) - 1; /* nearest rank: ceil(0.9 n)-th */
  if (p90_index < 0) p90_index = 0;

  if (output_path) {
    TVMValue idx;
    idx.v_int64 = 0;
    int idx_code = kDLInt;
    TVMValue out;
    int out_code = kTVMNullptr;
    Check(TVMFuncCall(get_output, &idx, &idx_code, 1, &out, &out_code), "get_output");
    DLTensor* t = (DLTensor*)out.v_handle;
    int64_t n = 1;
    for (int d = 0; d < t->ndim; ++d) n *= t->shape[d];
    const size_t out_bytes = (size_t)n * (size_t)((t->dtype.bits * t->dtype.lanes + 7) / 8);
    void* buf = malloc(out_bytes ? out_bytes : 1);
    Check(TVMArrayCopyToBytes(t, buf, out_bytes), "TVMArrayCopyToBytes");
    FILE* o = fopen(output_path, "wb");
    if (!o || fwrite(buf, 1, out_bytes, o) != out_bytes) Die("cannot write ", output_path);
    fclose(o);
    free(buf);
    if (out_code == kTVMNDArrayHandle) TVMArrayFree((TVMArrayHandle)out.v_handle);
  }

  printf(
      "{\"runtime\":\"tvm\",\"load_ms\":%.6f,\"first_run_ms\":%.6f,\"run_ms\":{\"min\":%.6f,\"median\":%.6f,"
      "\"p90\":%.6f,\"max\":%.6f,\"mean\":%.6f},\"repeat\":%d,\"warmup\":%d,\"peak_rss_bytes\":%ld,"
      "\"rss_before_load_bytes\":%ld}\n",
      t1 - t0, first_run, times[0], median, times[p90_index], times[repeat - 1], sum / repeat, repeat, warmup,
      PeakRssBytes(), rss_before_load);
  free(times);
  TVMArrayFree(input);
  TVMModFree(gmod);
  TVMModFree(lib);
  free(host);
  return 0;
}
