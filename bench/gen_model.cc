// Writes one synthetic model (bench/synthetic_model.h) for the scripts:
//   gen_model --mib N [--layout aligned|foreign] [--no-checksum] -o OUT.so
// Prints the model's shape and export time.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench/bench_util.h"
#include "bench/synthetic_model.h"

int main(int argc, char** argv) {
  using namespace sorun;
  bench::SyntheticModelSpec spec;
  std::string out;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    if (k == "--mib" && i + 1 < argc) {
      spec.param_mib = std::strtoull(argv[++i], nullptr, 10);
    } else if (k == "--layout" && i + 1 < argc) {
      std::string v = argv[++i];
      spec.layout = v == "foreign" ? bench::ParamLayout::kForeign : bench::ParamLayout::kAligned;
    } else if (k == "--no-checksum") {
      spec.write_checksum = false;
    } else if (k == "-o" && i + 1 < argc) {
      out = argv[++i];
    } else {
      out.clear();
      break;
    }
  }
  if (out.empty()) {
    std::fprintf(stderr, "usage: gen_model --mib N [--layout aligned|foreign] [--no-checksum] -o OUT.so\n");
    return 2;
  }
  std::string header = bench::Runfile("runtime/c_runtime_api.h");
  std::string root = header.substr(0, header.size() - std::string("runtime/c_runtime_api.h").size());
  auto info =
      bench::WriteSyntheticModel(spec, out, bench::Runfile("testdata/kernels/nn_kernels.c"), root.empty() ? "." : root);
  if (!info.ok()) {
    std::fprintf(stderr, "gen_model: %s\n", info.status().ToString().c_str());
    return 1;
  }
  std::printf("%s: %d x dense %lldx%lld, params %.1f MiB, export %.2f s\n", out.c_str(), info->layers,
              static_cast<long long>(info->width), static_cast<long long>(info->width), info->param_bytes / 1048576.0,
              info->export_seconds);
  return 0;
}
