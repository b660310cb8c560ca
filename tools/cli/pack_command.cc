#include "tools/cli/pack_command.h"

#include <filesystem>

#include "base/file_checks.h"
#include "base/file_util.h"
#include "base/xxhash64.h"
#include "graph_executor/memory_plan.h"
#include "packer/model_packer.h"
#include "runtime/registry_keys.h"
#include "security/model_encryption.h"
#include "security/model_signature.h"
#include "serialization/blob_checksum.h"
#include "tools/cli/flags.h"
#include "tools/cli/model_protection.h"
#include "tools/cli/text_table.h"

namespace sorun {
namespace cli {
namespace {

const std::vector<FlagSpec>& PackFlags() {
  static const std::vector<FlagSpec> specs = {
      {"--output", "-o", true, false, "OUT", "the model library to write (.so, or .tar)"},
      {"--lib", "", true, true, "FILE",
       "host code: .o .a .c .cc .cpp .S, a TVM .tar, or .so (not yet); more FILEs may follow"},
      {"--graph", "", true, false, "G.json", "graph JSON: makes a GraphExecutorFactory model (else a kernel library)"},
      {"--params", "", true, false, "P.params", "params file (TVM save_param_dict format; needs --graph)"},
      {"--cuda", "", true, true, "FILE", "CUDA device code: .ptx, .cubin or .fatbin"},
      {"--cuda-fmap", "", true, true, "F.json",
       "kernel description of the n-th --cuda file (default: its .tvm_meta.json)"},
      {"--opencl", "", true, true, "FILE.cl", "OpenCL C source"},
      {"--opencl-fmap", "", true, true, "F.json",
       "kernel description of the n-th --opencl file (default: its .tvm_meta.json)"},
      {"--include-dir", "", true, true, "DIR", "-I for compiling sources (before the embedded ABI headers)"},
      {"--cflag", "", true, true, "FLAG", "extra compiler flag for sources"},
      {"--ldflag", "", true, true, "FLAG", "extra linker flag"},
      {"--tar", "", false, false, "", "write a .tar of objects (also when OUT ends in .tar)"},
      {"--c-route", "", false, false, "",
       "embed the blob through a C source (TVM's PackImportsToC) instead of assembly"},
      {"--no-checksum", "", false, false, "", "do not write the __sorun_blob_checksum integrity record"},
      {"--module-name", "", true, false, "NAME", "the factory's module name (default 'default')"},
      {"--sign", "", true, false, "KEY.pem",
       "append an Ed25519 signature of the packed library (private key; docs/security.md)"},
      {"--encrypt", "", true, false, "KEYFILE",
       "store the (signed) library AES-256-GCM encrypted with this key (run/bench --key KEYFILE)"},
  };
  return specs;
}

// Pairs device-code files with their kernel descriptions (explicit, or TVM's sidecar names).
StatusOr<std::vector<DeviceCodeFile>> PairDeviceCode(const std::string& type_key, const std::string& flag,
                                                     const std::vector<std::string>& files,
                                                     const std::vector<std::string>& fmaps) {
  if (!fmaps.empty() && fmaps.size() != files.size()) {
    return InvalidArgument(std::to_string(files.size()) + " " + flag + " file(s) but " + std::to_string(fmaps.size()) +
                           " " + flag + "-fmap file(s): give one kernel description per file, in the same order");
  }
  std::vector<DeviceCodeFile> out;
  for (size_t i = 0; i < files.size(); ++i) {
    if (files[i].empty()) return InvalidArgument(flag + " needs a file name");
    if (type_key == keys::kTypeKeyCuda && CudaFormatFromExtension(files[i]).empty()) {
      return InvalidArgument(flag + " " + files[i] + ": unknown CUDA code format (expected .ptx, .cubin or .fatbin)");
    }
    out.push_back(DeviceCodeFile{type_key, files[i], fmaps.empty() ? SidecarFmapPath(files[i]) : fmaps[i]});
  }
  return out;
}

}  // namespace

std::string SidecarFmapPath(const std::string& code_path) {
  std::filesystem::path p(code_path);
  return (p.parent_path() / (p.stem().string() + ".tvm_meta.json")).string();
}

std::string PackUsage() {
  return "Usage: sorun pack -o OUT --lib FILE... [--graph G.json [--params P.params]]\n"
         "       sorun pack RELAX.so -o OUT.so [--no-checksum]      (or: sorun pack RELAX.so OUT.so)\n"
         "                  [--cuda FILE --cuda-fmap F.json]... [--opencl FILE.cl --opencl-fmap F.json]...\n"
         "                  [--include-dir DIR]... [--tar] [--c-route] [--no-checksum] [--module-name NAME]\n"
         "                  [--sign KEY.pem] [--encrypt KEYFILE]\n"
         "\n"
         "Packs host code, device code, a graph and its parameters into ONE model library:\n"
         "GraphExecutorFactory -> host code (_lib) -> device modules, as TVM's export_library does. Without\n"
         "--graph the result is a kernel library with the device modules imported (TVM's lib export).\n"
         "Sources are compiled with the system compiler ($CC / $CXX); the ABI headers runtime/c_runtime_api.h\n"
         "and dlpack/dlpack.h are embedded in sorun and found automatically (after any --include-dir).\n"
         "Kernel descriptions use TVM's .tvm_meta.json layout (docs/cli.md).\n"
         "A Relax VM export (TVM 0.16 - 0.27) given alone is rewritten so that its constants are 64-byte aligned\n"
         "once loaded (used in place, by sorun and TVM alike) and gets the checksum record (docs/relax.md).\n"
         "--sign appends a signature over the finished library; --encrypt then encrypts the whole file, so the\n"
         "signature is checked on the plaintext after decryption (docs/security.md).\n"
         "\n" +
         FormatFlagHelp(PackFlags());
}

namespace {

// --sign / --encrypt of one pack.
struct PackProtection {
  std::string sign_key;     // private key PEM, or empty
  std::string encrypt_key;  // AES-256 key file, or empty
};

// Checks the key files before any packing work (a bad key costs no compile): usage errors.
Status CheckProtectionKeys(const PackProtection& p) {
  if (!p.sign_key.empty()) {
    auto signed_nothing = security::SignLibrary("", p.sign_key);
    if (!signed_nothing.ok()) return std::move(signed_nothing).status().Annotate("--sign");
  }
  if (!p.encrypt_key.empty()) {
    auto hook = security::AesGcmDecryptor(p.encrypt_key);
    if (!hook.ok()) return std::move(hook).status().Annotate("--encrypt");
  }
  return Status::Ok();
}

// Signs, then encrypts, the packed file; the report's row ("" when neither was asked for).
StatusOr<std::string> ApplyProtection(const std::string& output, const PackProtection& p) {
  if (p.sign_key.empty() && p.encrypt_key.empty()) return std::string();
  SORUN_RETURN_IF_ERROR(ProtectPackedFile(output, p.sign_key, p.encrypt_key));
  std::string row;
  if (!p.sign_key.empty()) row = "signed (Ed25519, " + p.sign_key + ")";
  if (!p.encrypt_key.empty()) row += std::string(row.empty() ? "" : ", then ") + "encrypted (AES-256-GCM)";
  return row;
}

const char* GenerationLabel(relax::BlobGeneration g) {
  switch (g) {
    case relax::BlobGeneration::kLegacyDevMblob: return "TVM 0.16 - 0.20 container";
    case relax::BlobGeneration::kFfiLegacy021: return "TVM 0.21 container";
    case relax::BlobGeneration::kFfiTreeFirst: return "TVM 0.22+ container";
  }
  return "?";
}

// `sorun pack IN.so -o OUT.so` (or `sorun pack IN.so OUT.so`) on a Relax VM export.
int RunRelaxPack(const std::string& input, const std::string& output, bool checksum, const PackProtection& protection,
                 CommandIo& io) {
  auto report = PackRelaxExport(input, output, checksum);
  if (!report.ok()) return ModelError(io, report.status());
  auto protected_row = ApplyProtection(output, protection);
  if (!protected_row.ok()) return ModelError(io, protected_row.status());
  const relax::RelaxPackReport& r = *report;
  const relax::RealignReport& a = r.realign;
  io.out << "wrote " << output << " (" << FormatBytes(r.output_bytes) << ")\n";
  TextTable t;
  t.AddRow({"relax", r.blob_symbol + " (" + GenerationLabel(r.generation) + ")"});
  t.AddRow({"constants", std::to_string(a.tensor_constants) +
                             " tensors; 64-byte aligned: " + std::to_string(a.aligned_before) + " before, " +
                             std::to_string(a.aligned_after) + " after (" + std::to_string(a.pads_added) + " pads, +" +
                             std::to_string(a.bytes_added) + " B)"});
  t.AddRow({"blob", std::to_string(r.old_blob_bytes) + " B -> " + std::to_string(r.new_blob_bytes) +
                        " B at file offset " + std::to_string(r.blob_file_offset)});
  std::string hash = "none (--no-checksum)";
  if (auto record = DecodeBlobChecksumRecord(r.checksum_record.data(), r.checksum_record.size()); record.ok()) {
    hash = "xxh64 " + Xxh64ToHex(record->hash);
  }
  t.AddRow({"checksum", hash});
  if (!protected_row->empty()) t.AddRow({"protected", *protected_row});
  io.out << t.Render();
  io.out.flush();
  return kExitSuccess;
}

}  // namespace

namespace {

// `sorun pack IN.so -o OUT.so --sign KEY.pem [--encrypt KEYFILE]` on a library that is already packed
// (or any shared library): OUT is IN signed, then encrypted.
int ProtectLibrary(const std::string& input, const std::string& output, const PackProtection& protection,
                   CommandIo& io) {
  Status checked = CheckRegularFile(input, "library");
  if (!checked.ok()) return ModelError(io, checked);
  checked = CheckOutputFile(output, "output");
  if (!checked.ok()) return ModelError(io, checked);
  auto bytes = ReadFileToString(input);
  if (!bytes.ok()) return ModelError(io, NamePath(bytes.status(), input));
  Status written = WriteFileBytes(output, bytes->data(), bytes->size());
  if (!written.ok()) return ModelError(io, written);
  auto row = ApplyProtection(output, protection);
  if (!row.ok()) return ModelError(io, row.status());
  io.out << "wrote " << output << " (" << FormatBytes(bytes->size()) << " library from " << input << ")\n";
  TextTable t;
  t.AddRow({"protected", *row});
  io.out << t.Render();
  io.out.flush();
  return kExitSuccess;
}

}  // namespace

int RunPackCommand(const std::vector<std::string>& args, CommandIo& io) {
  auto flags = ParseFlags(args, PackFlags());
  if (!flags.ok()) return UsageError(io, "pack: " + flags.status().message());
  PackProtection protection{flags->Value("--sign"), flags->Value("--encrypt")};
  if (flags->Has("--sign") && protection.sign_key.empty()) return UsageError(io, "pack: --sign needs a key file");
  if (flags->Has("--encrypt") && protection.encrypt_key.empty()) {
    return UsageError(io, "pack: --encrypt needs a key file");
  }
  if (Status keys = CheckProtectionKeys(protection); !keys.ok()) return UsageError(io, "pack: " + keys.message());
  PackRequest request;
  request.output_path = flags->Value("--output");
  // `sorun pack IN.so OUT.so`: a Relax export and its packed copy.
  const std::vector<std::string>& positionals = flags->positionals();
  const bool only_library = flags->Values("--lib").empty() && !flags->Has("--graph") && !flags->Has("--params") &&
                            flags->Values("--cuda").empty() && flags->Values("--opencl").empty();
  if (request.output_path.empty() && only_library && positionals.size() == 2 &&
      HostFileKind(positionals[0]) == "shared" && HostFileKind(positionals[1]) == "shared") {
    auto is_relax = IsRelaxExportFile(positionals[0]);
    if (is_relax.ok() && *is_relax) {
      return RunRelaxPack(positionals[0], positionals[1], !flags->Has("--no-checksum"), protection, io);
    }
  }
  if (request.output_path.empty()) return UsageError(io, "pack: missing -o OUT (the library to write)");
  request.lib_files = flags->Values("--lib");
  for (const std::string& p : flags->positionals()) request.lib_files.push_back(p);
  if (request.lib_files.empty()) return UsageError(io, "pack: missing --lib FILE (the host code)");
  size_t shared = 0;
  for (const std::string& f : request.lib_files) {
    if (f.empty()) return UsageError(io, "pack: --lib needs a file name");
    std::string kind = HostFileKind(f);
    if (kind.empty()) {
      return UsageError(
          io, "pack: --lib " + f + ": unknown kind of host code (expected .o, .a, .c, .cc, .cpp, .S, .s, .tar or .so)");
    }
    if (kind == "shared") ++shared;
  }
  request.graph_path = flags->Value("--graph");
  request.params_path = flags->Value("--params");
  if (flags->Has("--graph") && request.graph_path.empty()) return UsageError(io, "pack: --graph needs a file name");
  if (flags->Has("--params") && request.params_path.empty()) return UsageError(io, "pack: --params needs a file name");
  if (!request.params_path.empty() && request.graph_path.empty()) {
    return UsageError(io, "pack: --params needs --graph (parameters belong to a graph)");
  }
  auto cuda = PairDeviceCode(keys::kTypeKeyCuda, "--cuda", flags->Values("--cuda"), flags->Values("--cuda-fmap"));
  if (!cuda.ok()) return UsageError(io, "pack: " + cuda.status().message());
  auto opencl =
      PairDeviceCode(keys::kTypeKeyOpenCL, "--opencl", flags->Values("--opencl"), flags->Values("--opencl-fmap"));
  if (!opencl.ok()) return UsageError(io, "pack: " + opencl.status().message());
  request.device_code = *cuda;
  request.device_code.insert(request.device_code.end(), opencl->begin(), opencl->end());
  request.include_dirs = flags->Values("--include-dir");
  request.compile_flags = flags->Values("--cflag");
  request.link_flags = flags->Values("--ldflag");
  request.tar = flags->Has("--tar");
  request.c_route = flags->Has("--c-route");
  const bool tar_output = request.tar || (request.output_path.size() > 4 &&
                                          request.output_path.compare(request.output_path.size() - 4, 4, ".tar") == 0);
  if (tar_output && (!protection.sign_key.empty() || !protection.encrypt_key.empty())) {
    return UsageError(io, "pack: --sign and --encrypt apply to a .so library, not a .tar of objects");
  }
  request.checksum = !flags->Has("--no-checksum");
  if (flags->Has("--module-name")) {
    request.module_name = flags->Value("--module-name");
    if (request.module_name.empty()) return UsageError(io, "pack: --module-name must not be empty");
    if (request.graph_path.empty()) return UsageError(io, "pack: --module-name needs --graph (it names the factory)");
  }
  if (shared > 0) {
    if (request.lib_files.size() != 1) {
      return UsageError(io, "pack: a .so library must be the only --lib file");
    }
    if (request.tar || request.c_route) {
      return UsageError(io, "pack: --tar and --c-route do not apply to a .so library (its code is already linked)");
    }
    if (request.graph_path.empty() && request.device_code.empty()) {
      // A Relax VM export: realign its constants and add the checksum record (docs/relax.md "Packing").
      auto is_relax = IsRelaxExportFile(request.lib_files[0]);
      if (!is_relax.ok()) return ModelError(io, is_relax.status());
      if (*is_relax) {
        return RunRelaxPack(request.lib_files[0], request.output_path, request.checksum, protection, io);
      }
      if (!protection.sign_key.empty() || !protection.encrypt_key.empty()) {
        return ProtectLibrary(request.lib_files[0], request.output_path, protection, io);
      }
      return UsageError(io, "pack: nothing to add to " + request.lib_files[0] +
                                " (give --graph or device code, or --sign / --encrypt; it is not a Relax VM export)");
    }
  }

  auto result = PackModel(request);
  if (!result.ok()) return ModelError(io, result.status());
  const PackResult& r = *result;
  auto protected_row = ApplyProtection(r.output_path, protection);
  if (!protected_row.ok()) return ModelError(io, protected_row.status());
  io.out << "wrote " << r.output_path << " (" << FormatBytes(r.output_bytes) << (r.is_tar ? ", tar archive" : "")
         << ")\n";
  TextTable t;
  if (r.type_keys.empty()) {
    t.AddRow({"blob", "none (a plain kernel library: no graph, no device code)"});
  } else {
    std::string tree;
    for (size_t i = 0; i < r.type_keys.size(); ++i) {
      tree += (i ? ", " : "") + std::string("[") + std::to_string(i) + "] " + r.type_keys[i];
    }
    t.AddRow({"modules", tree});
    std::string exact = std::to_string(r.blob_bytes) + " B";
    t.AddRow({"blob", FormatBytes(r.blob_bytes) == exact ? exact : FormatBytes(r.blob_bytes) + " (" + exact + ")"});
    t.AddRow({"checksum", r.checksum_hash.empty() ? "none (--no-checksum)" : "xxh64 " + r.checksum_hash});
  }
  if (!request.graph_path.empty()) {
    t.AddRow({"params", std::to_string(r.param_count) + " tensors, " + FormatBytes(r.param_bytes)});
  }
  if (!protected_row->empty()) t.AddRow({"protected", *protected_row});
  io.out << t.Render();
  io.out.flush();
  return kExitSuccess;
}

}  // namespace cli
}  // namespace sorun
