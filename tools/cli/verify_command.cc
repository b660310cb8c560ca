#include "tools/cli/verify_command.h"

#include "base/file_checks.h"
#include "inspect/model_file.h"
#include "inspect/model_inspector.h"
#include "inspect/relax_inspector.h"
#include "inspect/runnable_check.h"
#include "runtime/registry_keys.h"
#include "serialization/blob_checksum.h"
#include "tools/cli/flags.h"
#include "tools/cli/model_protection.h"

namespace sorun {
namespace cli {
namespace {

const std::vector<FlagSpec>& VerifyFlags() {
  static const std::vector<FlagSpec> specs = ProtectionFlagSpecs();
  return specs;
}

}  // namespace

std::string VerifyUsage() {
  return "Usage: sorun verify MODEL [--key KEYFILE] [--public-key PUB.pem]\n"
         "\n"
         "Checks a packed model library without loading it: the integrity record __sorun_blob_checksum\n"
         "(written by `sorun pack` unless --no-checksum) must be present and match an XXH64 of the blob\n"
         "bytes in the file, and the blob must parse (module tree, graph, parameters, device modules).\n"
         "Then every check that loading and executor creation make, without running anything: the root is a\n"
         "graph-executor factory whose first import is the kernel library, the storage plan is valid, and\n"
         "every kernel a node calls is a function the library itself exports (never libc, a data object or\n"
         "a reserved ABI name). OK means the file is safe to run (its kernels are trusted code).\n"
         "Prints 'MODEL: OK (blob N bytes, xxh64 H; devices needed: D)' and exits 0 (D: cpu, or the type of\n"
         "the model's CUDA / OpenCL module, which `run --device` must name), or the error and exits 1.\n"
         "--public-key first checks the file's Ed25519 signature (`pack --sign`; OK then ends with\n"
         "'signature matches PUB.pem'); --key reads a model written by `pack --encrypt`, decrypted in memory.\n"
         "\n" +
         FormatFlagHelp(VerifyFlags());
}

StatusOr<std::string> VerifyModelFile(const std::string& path) {
  SORUN_RETURN_IF_ERROR(CheckRegularFile(path, "model"));
  auto opened = ModelFile::Open(path);
  if (!opened.ok()) return NamePath(std::move(opened).status(), path);
  const ModelFile& file = *opened;
  if (IsRelaxExportFile(file)) {  // Relax VM exports: the record over their blob symbol, then the one check
    auto report = InspectModelFile(path);
    if (!report.ok()) return NamePath(std::move(report).status(), path);
    if (!report->checksum.present) {
      return FailedPrecondition(path + ": the library has no integrity record (" + keys::kSymbolBlobChecksum +
                                "): it was not packed by sorun (run `sorun pack` on the TVM export)");
    }
    if (!report->checksum.valid) return DataLoss(path + ": " + report->checksum.error);
    if (report->relax && !report->relax->refusals.empty()) {
      std::string why;
      for (const std::string& r : report->relax->refusals) why += "\n  " + r;
      return FailedPrecondition(path + ": sorun cannot run this Relax export:" + why);
    }
    return "OK (Relax export, blob " + std::to_string(report->blob_bytes) + " bytes, xxh64 " + report->checksum.hash +
           "; devices needed: " + report->DevicesNeededNames() + ")";
  }
  const ElfSymbolData* blob = file.blob();
  if (blob == nullptr) {
    if (!file.ffi_symbols().empty()) {
      return FailedPrecondition(path + ": built by TVM v0.21 or later (tvm-ffi ABI); it has no " +
                                keys::kSymbolDevMblob + " and no sorun integrity record to verify");
    }
    return FailedPrecondition(path + ": no " + std::string(keys::kSymbolDevMblob) +
                              " (a plain kernel library): there is no module blob to verify");
  }
  const ElfSymbolData* record = file.checksum();
  if (record == nullptr) {
    return FailedPrecondition(path + ": the library has no integrity record (" + keys::kSymbolBlobChecksum +
                              "): it was not packed by sorun (e.g. exported by TVM) or was packed with --no-checksum");
  }
  const uint64_t blob_bytes = 8 + file.payload_size();
  Status s = VerifyBlobChecksum(blob->data, blob_bytes, record->data, record->size);
  if (!s.ok()) return std::move(s).Annotate(path);
  auto report = InspectModelFile(path);
  if (!report.ok()) return NamePath(std::move(report).status(), path);
  SORUN_RETURN_IF_ERROR(CheckRunnable(file, *report));
  return "OK (blob " + std::to_string(blob_bytes) + " bytes, xxh64 " + report->checksum.hash +
         "; devices needed: " + report->DevicesNeededNames() + ")";
}

int RunVerifyCommand(const std::vector<std::string>& args, CommandIo& io) {
  auto flags = ParseFlags(args, VerifyFlags());
  if (!flags.ok()) return UsageError(io, "verify: " + flags.status().message());
  const auto& pos = flags->positionals();
  if (pos.empty()) return UsageError(io, "verify: missing MODEL (usage: sorun verify MODEL)");
  if (pos.size() > 1) return UsageError(io, "verify: unexpected argument '" + pos[1] + "' (one MODEL only)");
  auto protection = ReadProtectionFlags(*flags);
  if (!protection.ok()) return UsageError(io, "verify: " + protection.status().message());
  auto bytes = ProtectedModelBytes::Open(pos[0], *protection);
  if (!bytes.ok()) return ModelError(io, NamePath(bytes.status(), pos[0]));
  auto ok = VerifyModelFile(bytes->readable_path());
  if (!ok.ok()) return ModelError(io, Status(ok.status().code(), bytes->NameModel(ok.status().message())));
  std::string line = *ok;
  if (bytes->signature_checked() && !line.empty() && line.back() == ')') {
    line.insert(line.size() - 1, "; signature matches " + protection->public_key_path);
  }
  io.out << pos[0] << ": " << line << "\n";
  io.out.flush();
  return kExitSuccess;
}

}  // namespace cli
}  // namespace sorun
