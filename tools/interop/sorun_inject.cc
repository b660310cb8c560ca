// sorun_inject: the injection half of `sorun pack` as a stand-alone tool, for interop checks.
//
//   sorun_inject pack --lib LIB.so --graph GRAPH.json --params P.params --out OUT.so [--no-checksum] [--replace]
//       TVM three-file set -> one library: a GraphExecutorFactory blob ([GraphExecutorFactory, _lib,
//       _import_tree], the factory importing a placeholder host-code module that stands for LIB.so
//       itself) is added to a copy of LIB.so as __tvm_dev_mblob (+ __sorun_blob_checksum).
//   sorun_inject blob --lib LIB.so --payload PAYLOAD.bin --out OUT.so [--no-checksum] [--replace]
//       Injects an arbitrary blob payload (the 8-byte length prefix is added).
//   sorun_inject run --model OUT.so [--input NAME=X.npy]... [--expect Y.npy]... [--atol A] [--rtol R]
//       Loads OUT.so with sorun (LoadModule), prints the module tree, runs it on CPU and compares each
//       output with the expected .npy (float32 outputs: |a - b| <= atol + rtol * |b|; others exact).
// Exit status 0 on success, 1 on any failure (message on stderr). Single-threaded tool.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "api/model_loading.h"
#include "base/file_util.h"
#include "format/binary_reader.h"
#include "graph_executor/factory_module.h"
#include "graph_executor/graph_executable.h"
#include "packer/elf_blob_injector.h"
#include "packer/exporter.h"
#include "packer/host_code_module.h"
#include "packer/module_serializer.h"
#include "runtime/data_type.h"
#include "runtime/tensor_io.h"
#include "serialization/blob_checksum.h"
#include "tools/npy.h"

namespace sorun {
namespace {

struct Args {
  std::string command;
  std::string lib, graph, params, payload, out, model;
  std::vector<std::pair<std::string, std::string>> inputs;  // name, path
  std::vector<std::string> expects;
  bool checksum = true;
  bool replace = false;
  double atol = 1e-5, rtol = 1e-5;
};

int Usage() {
  std::fprintf(
      stderr,
      "usage: sorun_inject pack --lib LIB.so --graph GRAPH.json --params P.params --out OUT.so "
      "[--no-checksum] [--replace]\n"
      "       sorun_inject blob --lib LIB.so --payload PAYLOAD.bin --out OUT.so [--no-checksum] [--replace]\n"
      "       sorun_inject run --model OUT.so [--input NAME=X.npy]... [--expect Y.npy]... [--atol A] [--rtol R]\n");
  return 2;
}

bool ParseArgs(int argc, char** argv, Args* a) {
  if (argc < 2) return false;
  a->command = argv[1];
  for (int i = 2; i < argc; ++i) {
    std::string flag = argv[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    std::string v;
    if (flag == "--lib") {
      if (!value(&a->lib)) return false;
    } else if (flag == "--graph") {
      if (!value(&a->graph)) return false;
    } else if (flag == "--params") {
      if (!value(&a->params)) return false;
    } else if (flag == "--payload") {
      if (!value(&a->payload)) return false;
    } else if (flag == "--out") {
      if (!value(&a->out)) return false;
    } else if (flag == "--model") {
      if (!value(&a->model)) return false;
    } else if (flag == "--no-checksum") {
      a->checksum = false;
    } else if (flag == "--replace") {
      a->replace = true;
    } else if (flag == "--atol") {
      if (!value(&v)) return false;
      a->atol = std::atof(v.c_str());
    } else if (flag == "--rtol") {
      if (!value(&v)) return false;
      a->rtol = std::atof(v.c_str());
    } else if (flag == "--expect") {
      if (!value(&v)) return false;
      a->expects.push_back(v);
    } else if (flag == "--input") {
      if (!value(&v)) return false;
      size_t eq = v.find('=');
      if (eq == std::string::npos) return false;
      a->inputs.emplace_back(v.substr(0, eq), v.substr(eq + 1));
    } else {
      return false;
    }
  }
  return true;
}

// The GraphExecutorFactory blob payload for a graph JSON + params file.
StatusOr<std::string> FactoryPayload(const std::string& graph_path, const std::string& params_path) {
  SORUN_ASSIGN_OR_RETURN(std::string json, ReadFileToString(graph_path));
  SORUN_ASSIGN_OR_RETURN(std::string params_bytes, ReadFileToString(params_path));
  BinaryReader reader(reinterpret_cast<const uint8_t*>(params_bytes.data()), params_bytes.size(), params_path);
  SORUN_ASSIGN_OR_RETURN(NamedTensors params, ReadParamsDict(reader, /*allow_zero_copy=*/false));
  if (!reader.at_end()) return reader.Error("trailing bytes after the params");
  // The placeholder host-code module becomes the "_lib" entry: the library the blob is injected into.
  SORUN_ASSIGN_OR_RETURN(Module factory,
                         MakeGraphExecutorFactory(std::move(json), std::move(params), MakeHostCodeModule(HostCode{})));
  SORUN_ASSIGN_OR_RETURN(SerializedModuleTree tree, SerializeModuleTree(factory));
  std::string keys;
  for (const std::string& k : tree.type_keys) keys += (keys.empty() ? "" : ", ") + k;
  std::printf("blob entries: [%s]%s, payload %zu bytes\n", keys.c_str(), tree.has_import_tree ? " + _import_tree" : "",
              tree.payload.size());
  return tree.payload;
}

Status Inject(const Args& a, const std::string& payload) {
  const std::string blob = MakeBlobBytes(payload);
  const std::string checksum = a.checksum ? MakeBlobChecksumRecord(blob) : std::string();
  BlobInjectionOptions options;
  options.replace_existing = a.replace;
  BlobInjectionReport r;
  SORUN_RETURN_IF_ERROR(InjectBlobIntoSharedLibrary(a.lib, blob, checksum, a.out, options, &r));
  std::printf(
      "injected %llu-byte blob at address 0x%llx (file offset %llu)%s into %s -> %s (%llu bytes); new "
      "PT_LOAD at 0x%llx, %llu dynamic symbols%s%s%s\n",
      static_cast<unsigned long long>(r.blob_bytes), static_cast<unsigned long long>(r.blob_address),
      static_cast<unsigned long long>(r.blob_offset), a.checksum ? " + checksum record" : "", a.lib.c_str(),
      a.out.c_str(), static_cast<unsigned long long>(r.output_bytes),
      static_cast<unsigned long long>(r.segment_address), static_cast<unsigned long long>(r.dynamic_symbols),
      r.converted_gnu_hash ? ", DT_GNU_HASH converted to DT_HASH" : "",
      r.dropped_gnu_hash ? ", DT_GNU_HASH dropped" : "", r.replaced_existing ? ", replaced existing" : "");
  if (r.program_headers_in_place) {
    std::printf("program headers grew in place (%llu note segment(s) moved)\n",
                static_cast<unsigned long long>(r.moved_note_segments));
  } else {
    std::printf("program headers moved into the new segment: %s\n", r.program_headers_moved_because.c_str());
  }
  return Status::Ok();
}

std::string Describe(const Module& m, int depth) {
  std::string s(static_cast<size_t>(depth) * 2, ' ');
  s += m.type_key();
  s += "\n";
  for (const Module& child : m.imports()) s += Describe(child, depth + 1);
  return s;
}

Status Run(const Args& a) {
  SORUN_RETURN_IF_ERROR(Initialize());
  SORUN_ASSIGN_OR_RETURN(Module model, Load(a.model));
  std::printf("module tree of %s:\n%s", a.model.c_str(), Describe(model, 1).c_str());
  SORUN_ASSIGN_OR_RETURN(std::unique_ptr<GraphExecutor> executor, CreateExecutor(model, {CpuDevice()}));
  for (const auto& [name, path] : a.inputs) {
    SORUN_ASSIGN_OR_RETURN(Tensor t, ReadNpyFile(path));
    SORUN_RETURN_IF_ERROR_CTX(executor->SetInput(name, *t.dl()), "input " + name);
  }
  SORUN_RETURN_IF_ERROR(executor->Run());
  if (static_cast<int>(a.expects.size()) > executor->num_outputs()) {
    return InvalidArgument(std::to_string(a.expects.size()) + " expected outputs but the model has " +
                           std::to_string(executor->num_outputs()));
  }
  for (size_t i = 0; i < a.expects.size(); ++i) {
    SORUN_ASSIGN_OR_RETURN(Tensor want, ReadNpyFile(a.expects[i]));
    SORUN_ASSIGN_OR_RETURN(Tensor got, executor->GetOutput(static_cast<int>(i)));
    if (got.shape() != want.shape() || got.dtype().code != want.dtype().code || got.dtype().bits != want.dtype().bits ||
        got.nbytes() != want.nbytes()) {
      return DataLoss("output " + std::to_string(i) + ": shape/dtype differs from " + a.expects[i]);
    }
    double max_err = 0;
    if (got.dtype().code == kDLFloat && got.dtype().bits == 32) {
      const float* g = got.data_as<float>();
      const float* w = want.data_as<float>();
      const uint64_t n = got.nbytes() / 4;
      for (uint64_t k = 0; k < n; ++k) {
        const double err = std::fabs(static_cast<double>(g[k]) - w[k]);
        max_err = std::max(max_err, err);
        if (!(err <= a.atol + a.rtol * std::fabs(static_cast<double>(w[k])))) {
          return DataLoss("output " + std::to_string(i) + " element " + std::to_string(k) + ": " +
                          std::to_string(g[k]) + " vs expected " + std::to_string(w[k]));
        }
      }
    } else if (std::memcmp(got.data_as<uint8_t>(), want.data_as<uint8_t>(), static_cast<size_t>(got.nbytes())) != 0) {
      return DataLoss("output " + std::to_string(i) + " differs from " + a.expects[i]);
    }
    std::printf("output %zu matches %s (max abs error %.3g)\n", i, a.expects[i].c_str(), max_err);
  }
  return Status::Ok();
}

int Main(int argc, char** argv) {
  Args a;
  if (!ParseArgs(argc, argv, &a)) return Usage();
  Status s;
  if (a.command == "pack") {
    if (a.lib.empty() || a.graph.empty() || a.params.empty() || a.out.empty()) return Usage();
    auto payload = FactoryPayload(a.graph, a.params);
    s = payload.ok() ? Inject(a, *payload) : payload.status();
  } else if (a.command == "blob") {
    if (a.lib.empty() || a.payload.empty() || a.out.empty()) return Usage();
    auto payload = ReadFileToString(a.payload);
    s = payload.ok() ? Inject(a, *payload) : payload.status();
  } else if (a.command == "run") {
    if (a.model.empty()) return Usage();
    s = Run(a);
  } else {
    return Usage();
  }
  if (!s.ok()) {
    std::fprintf(stderr, "sorun_inject %s: %s\n", a.command.c_str(), s.ToString().c_str());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace sorun

int main(int argc, char** argv) { return sorun::Main(argc, argv); }
