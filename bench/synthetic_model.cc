#include "bench/synthetic_model.h"

#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <cstdlib>

#include "format/binary_writer.h"
#include "graph_executor/factory_module.h"
#include "graph_executor/graph_builder.h"
#include "packer/host_code_module.h"
#include "runtime/data_type.h"
#include "runtime/tensor_io.h"

namespace sorun {
namespace bench {
namespace {

struct Built {
  std::string json;
  NamedTensors params;
};

StatusOr<Built> BuildGraphAndParams(const SyntheticModelInfo& info) {
  Built b;
  GraphBuilder g;
  const int64_t w = info.width;
  int x = g.Input("data", {1, w});
  uint64_t state = 0x5eed;
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(w)));
  for (int i = 0; i < info.layers; ++i) {
    const std::string name = "fc" + std::to_string(i);
    SORUN_ASSIGN_OR_RETURN(Tensor weight, Tensor::Empty({w, w}, Float32(), CpuDevice()));
    SORUN_ASSIGN_OR_RETURN(Tensor bias, Tensor::Empty({w}, Float32(), CpuDevice()));
    float* p = weight.data_as<float>();
    for (int64_t k = 0; k < w * w; ++k) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;  // LCG: fast for 1 GiB
      p[k] = scale * (static_cast<float>(static_cast<int32_t>(state >> 32)) / 2147483648.0f);
    }
    for (int64_t k = 0; k < w; ++k) bias.data_as<float>()[k] = 0.01f;
    b.params.emplace_back(name + "_w", weight);
    b.params.emplace_back(name + "_b", bias);
    x = g.Op("sorun_dense_bias_relu", {x, g.Input(name + "_w", {w, w}), g.Input(name + "_b", {w})}, {1, w}, Float32(),
             name);
  }
  g.Output(x);
  SORUN_ASSIGN_OR_RETURN(b.json, g.BuildJson());
  return b;
}

// The blob payload TVM's exporter would write: no alignment pads, every tensor's data at an offset
// = 2 mod 4 of the final file (the blob itself starts 64-byte aligned in a sorun-linked library).
StatusOr<std::string> ForeignPayload(Built built) {
  BinaryWriter w(/*origin=*/8);
  w.WriteU64(3);
  w.WriteString("GraphExecutorFactory");
  // Where the first tensor's data would land for the JSON as it is; pad the JSON with spaces to move it.
  uint64_t names_bytes = 8 + 8;
  for (const auto& kv : built.params) names_bytes += 8 + kv.first.size();
  uint64_t first_data =
      w.AbsolutePosition() + 8 + built.json.size() + names_bytes + NDArrayHeaderBytes(built.params[0].second.ndim());
  built.json.append(static_cast<size_t>((2 + 4 - first_data % 4) % 4), ' ');
  w.WriteString(built.json);
  SORUN_RETURN_IF_ERROR(WriteNamedTensorSection(built.params, &w, /*align_data=*/false, /*leading_count=*/true));
  w.WriteString("default");
  w.WriteString("_lib");
  w.WriteString("_import_tree");
  w.WriteU64Vector({0, 1, 1});
  w.WriteU64Vector({1});
  return w.TakeBytes();
}

bool FileExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && st.st_size > 0;
}

}  // namespace

SyntheticModelInfo DescribeSyntheticModel(const SyntheticModelSpec& spec) {
  SyntheticModelInfo info;
  const uint64_t bytes = spec.param_mib << 20;
  info.width = 256;
  for (int64_t w : {4096, 2048, 1024, 512, 256}) {
    if (static_cast<uint64_t>(w * w * 4) <= bytes) {
      info.width = w;
      break;
    }
  }
  const uint64_t layer = static_cast<uint64_t>(info.width * info.width * 4);
  info.layers = static_cast<int>(bytes / layer < 1 ? 1 : bytes / layer);
  info.param_bytes = info.layers * (layer + static_cast<uint64_t>(info.width) * 4);
  return info;
}

StatusOr<SyntheticModelInfo> WriteSyntheticModel(const SyntheticModelSpec& spec, const std::string& path,
                                                 const std::string& kernels_c, const std::string& include_root) {
  SyntheticModelInfo info = DescribeSyntheticModel(spec);
  info.path = path;
  SORUN_ASSIGN_OR_RETURN(Built built, BuildGraphAndParams(info));
  HostCode host;
  host.files = {kernels_c};
  host.compile_flags = {"-I" + include_root, "-std=c11", "-D_GNU_SOURCE"};
  ExportOptions options;
  options.embedding = spec.embedding;
  options.write_checksum = spec.write_checksum;
  auto t0 = std::chrono::steady_clock::now();
  if (spec.layout == ParamLayout::kAligned) {
    SORUN_ASSIGN_OR_RETURN(Module factory, MakeGraphExecutorFactory(std::move(built.json), std::move(built.params),
                                                                    MakeHostCodeModule(host)));
    SORUN_RETURN_IF_ERROR(ExportLibrary(factory, path, options).status());
  } else {
    SORUN_ASSIGN_OR_RETURN(std::string payload, ForeignPayload(std::move(built)));
    t0 = std::chrono::steady_clock::now();
    SORUN_RETURN_IF_ERROR(LinkLibraryWithBlob(&payload, {host}, path, options).status());
  }
  info.export_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return info;
}

StatusOr<SyntheticModelInfo> GetSyntheticModel(const SyntheticModelSpec& spec, const std::string& dir,
                                               const std::string& kernels_c, const std::string& include_root) {
  ::mkdir(dir.c_str(), 0755);
  std::string path = dir + "/dense_" + std::to_string(spec.param_mib) + "mib_" +
                     (spec.layout == ParamLayout::kAligned ? "aligned" : "foreign") +
                     (spec.embedding == BlobEmbedding::kCSource ? "_c" : "") + (spec.write_checksum ? "" : "_nock") +
                     ".so";
  if (FileExists(path)) {
    SyntheticModelInfo info = DescribeSyntheticModel(spec);
    info.path = path;
    return info;
  }
  return WriteSyntheticModel(spec, path, kernels_c, include_root);
}

std::string SyntheticModelDir() {
  const char* env = std::getenv("SORUN_BENCH_MODEL_DIR");
  return env && *env ? env : "/tmp/sorun_bench_models";
}

}  // namespace bench
}  // namespace sorun
