// Export routes for a large blob: the assembly route (.incbin of the blob file, the default) against
// the C-source route (BlobEmbedding::kCSource, TVM's PackImportsToC: the blob as a C byte array). One
// fresh process per route (bench/run_export_routes.sh); prints one JSON line:
//   export_s                 ExportLibrary wall time (serialize + compile + link)
//   exporter_peak_rss_mib    this process's own peak RSS
// The compiler's peak RSS comes from bench/timed_cc.sh (/usr/bin/time -v around $CC): getrusage
// RUSAGE_CHILDREN cannot give it, because a child spawned with vfork/posix_spawn inherits the parent's
// RSS high-water mark at exec.
//   load_ms / load_verify_ms median load-to-ready (Load + CreateExecutor) of the result, 5 repetitions
//
//   export_route_driver --mib 256 --route asm|c [--out PATH] [--keep]
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "api/model_loading.h"
#include "bench/bench_util.h"
#include "bench/synthetic_model.h"
#include "graph_executor/graph_executable.h"
#include "runtime/data_type.h"

int main(int argc, char** argv) {
  using namespace sorun;
  uint64_t mib = 256;
  std::string route = "asm", out;
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    if (k == "--mib" && i + 1 < argc) {
      mib = std::strtoull(argv[++i], nullptr, 10);
    } else if (k == "--route" && i + 1 < argc) {
      route = argv[++i];
    } else if (k == "--out" && i + 1 < argc) {
      out = argv[++i];
    } else if (k == "--keep") {
      keep = true;
    } else {
      std::fprintf(stderr, "usage: export_route_driver --mib N --route asm|c [--out PATH] [--keep]\n");
      return 2;
    }
  }
  if (!Initialize().ok()) return 1;
  bench::SyntheticModelSpec spec;
  spec.param_mib = mib;
  spec.embedding = route == "c" ? BlobEmbedding::kCSource : BlobEmbedding::kAssembly;
  if (out.empty()) out = bench::SyntheticModelDir() + "/export_" + route + "_" + std::to_string(mib) + "mib.so";
  ::mkdir(bench::SyntheticModelDir().c_str(), 0755);
  std::string header = bench::Runfile("runtime/c_runtime_api.h");
  std::string root = header.substr(0, header.size() - std::string("runtime/c_runtime_api.h").size());
  auto info =
      bench::WriteSyntheticModel(spec, out, bench::Runfile("testdata/kernels/nn_kernels.c"), root.empty() ? "." : root);
  if (!info.ok()) {
    std::fprintf(stderr, "export_route_driver: %s\n", info.status().ToString().c_str());
    return 1;
  }
  struct rusage self;
  getrusage(RUSAGE_SELF, &self);
  struct stat st;
  ::stat(out.c_str(), &st);

  auto load_ms = [&](bool verify) {
    std::vector<double> v;
    for (int i = 0; i < 5; ++i) {
      LoadOptions o;
      o.verify_checksum = verify;
      auto t0 = std::chrono::steady_clock::now();
      auto model = Load(out, o);
      if (!model.ok()) {
        std::fprintf(stderr, "export_route_driver: %s\n", model.status().ToString().c_str());
        std::exit(1);
      }
      auto exec = CreateExecutor(*model, {CpuDevice()});
      if (!exec.ok()) std::exit(1);
      v.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  double load = load_ms(false), load_verify = load_ms(true);
  std::printf(
      "{\"route\":\"%s\",\"param_mib\":%.1f,\"so_mib\":%.1f,\"export_s\":%.2f,"
      "\"exporter_peak_rss_mib\":%.1f,\"load_ms\":%.3f,\"load_verify_ms\":%.3f}\n",
      route.c_str(), info->param_bytes / 1048576.0, st.st_size / 1048576.0, info->export_seconds,
      self.ru_maxrss / 1024.0, load, load_verify);
  if (!keep) std::remove(out.c_str());
  return 0;
}
