// Synthetic models for the benchmarks: a chain of dense+bias+relu layers holding (about) N MiB of
// float32 parameters, packed into ONE shared library with the zoo's kernels (testdata/kernels/
// nn_kernels.c, compiled by the exporter).
//
//   kAligned  sorun's own export (ExportLibrary): every parameter's data 64-byte aligned in the file,
//             so the factory uses the weights in place from the mapped library.
//   kForeign  what TVM's exporter produces: the factory payload written WITHOUT alignment pads
//             (WriteNamedTensorSection(..., align_data=false)), every tensor's data deliberately at an
//             offset = 2 mod 4 of the file, so the factory must copy each parameter once.
//
// Layer width: the largest of 4096, 2048, 1024, 512, 256 whose W x W weight fits in the requested
// size; layer count = requested bytes / (W * W * 4) (at least 1). Weights are a fixed-seed pattern.
// Generation needs about 3x the parameter bytes of memory and of temporary disk. Not thread-safe.
#ifndef SORUN_BENCH_SYNTHETIC_MODEL_H_
#define SORUN_BENCH_SYNTHETIC_MODEL_H_

#include <cstdint>
#include <string>

#include "base/status.h"
#include "packer/exporter.h"

namespace sorun {
namespace bench {

enum class ParamLayout { kAligned, kForeign };

struct SyntheticModelSpec {
  uint64_t param_mib = 16;
  ParamLayout layout = ParamLayout::kAligned;
  BlobEmbedding embedding = BlobEmbedding::kAssembly;
  bool write_checksum = true;
};

struct SyntheticModelInfo {
  std::string path;
  int64_t width = 0;
  int layers = 0;
  uint64_t param_bytes = 0;   // weights + biases
  double export_seconds = 0;  // ExportLibrary / LinkLibraryWithBlob only (0 if reused)
};

// Shape of the model for `spec` (no file written).
SyntheticModelInfo DescribeSyntheticModel(const SyntheticModelSpec& spec);

// Writes the model to `path` (overwriting). `kernels_c` is testdata/kernels/nn_kernels.c and
// `include_root` the directory holding runtime/c_runtime_api.h.
StatusOr<SyntheticModelInfo> WriteSyntheticModel(const SyntheticModelSpec& spec, const std::string& path,
                                                 const std::string& kernels_c, const std::string& include_root);

// The cached model for `spec` under `dir` (created when absent): dir/dense_<mib>mib_<layout>[_c].so.
StatusOr<SyntheticModelInfo> GetSyntheticModel(const SyntheticModelSpec& spec, const std::string& dir,
                                               const std::string& kernels_c, const std::string& include_root);

// Directory for generated models: $SORUN_BENCH_MODEL_DIR, else /tmp/sorun_bench_models.
std::string SyntheticModelDir();

}  // namespace bench
}  // namespace sorun

#endif  // SORUN_BENCH_SYNTHETIC_MODEL_H_
