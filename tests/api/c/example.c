/* The C API example of docs/api.md: loads a packed model, lists its inputs and outputs, feeds zeros
 * to every non-parameter input, runs once and prints the first output's first values.
 *
 *   cc example.c -I<sorun checkout> -L<dir of libsorun.so> -lsorun -Wl,-rpath,<dir of libsorun.so> -o example
 *   ./example model.so
 */
#include <dlpack/dlpack.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "api/sorun_c.h"

/* Prints the failure and returns 1 from main. */
#define TRY(call)                                                    \
  do {                                                               \
    if ((call) != SORUN_OK) {                                        \
      fprintf(stderr, "%s failed: %s\n", #call, sorun_last_error()); \
      return 1;                                                      \
    }                                                                \
  } while (0)

static size_t ByteSize(const sorun_tensor_info_t* info) {
  size_t n = (size_t)(info->dtype.bits * info->dtype.lanes + 7) / 8;
  for (int32_t d = 0; d < info->ndim; ++d) n *= (size_t)info->shape[d];
  return n;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s MODEL.so\n", argv[0]);
    return 2;
  }
  if (sorun_api_version() >> 16 != SORUN_API_VERSION_MAJOR) {
    fprintf(stderr, "libsorun.so has C API %#x; this program was built for %#x\n", sorun_api_version(),
            SORUN_API_VERSION);
    return 1;
  }

  sorun_model_t* model = NULL;
  TRY(sorun_model_load(argv[1], NULL, &model)); /* NULL options: the defaults */

  sorun_executor_options_t options = {.struct_size = sizeof(options)}; /* zero: the default */
  options.num_threads = 2;                                             /* a pool of its own */
  sorun_executor_t* exec = NULL;
  TRY(sorun_executor_new(model, &options, &exec));

  /* Zeros into every input that is not a weight. The executor copies them, so the buffers may go. */
  int32_t num_inputs = 0;
  TRY(sorun_model_num_inputs(model, &num_inputs));
  for (int32_t i = 0; i < num_inputs; ++i) {
    sorun_tensor_info_t info = {.struct_size = sizeof(info)};
    TRY(sorun_model_input_info(model, i, &info));
    if (info.is_param) continue;
    printf("input %s: %d dims\n", info.name, info.ndim);
    void* zeros = calloc(1, ByteSize(&info));
    DLTensor value = {zeros, {kDLCPU, 0}, info.ndim, info.dtype, (int64_t*)info.shape, NULL, 0};
    sorun_status_t status = sorun_executor_set_input(exec, i, &value);
    free(zeros);
    TRY(status);
  }

  TRY(sorun_executor_run(exec));

  /* The first output, zero-copy, as DLPack: release it with its deleter. */
  DLManagedTensor* out = NULL;
  TRY(sorun_executor_get_output(exec, 0, &out));
  if (out->dl_tensor.dtype.code == kDLFloat && out->dl_tensor.dtype.bits == 32) {
    const float* y = (const float*)((const char*)out->dl_tensor.data + out->dl_tensor.byte_offset);
    int64_t n = 1;
    for (int32_t d = 0; d < out->dl_tensor.ndim; ++d) n *= out->dl_tensor.shape[d];
    printf("output 0:");
    for (int64_t k = 0; k < n && k < 4; ++k) printf(" %g", y[k]);
    printf("%s\n", n > 4 ? " ..." : "");
  }
  out->deleter(out);

  sorun_executor_free(exec);
  sorun_model_free(model);
  return 0;
}
