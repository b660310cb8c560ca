#include "tools/cli/run_command.h"

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>

#include "base/file_checks.h"
#include "runtime/data_type.h"
#include "tools/cli/command.h"
#include "tools/cli/flags.h"
#include "tools/cli/model_protection.h"
#include "tools/cli/model_session.h"
#include "tools/cli/text_table.h"
#include "tools/npy.h"

namespace sorun {
namespace cli {
namespace {

constexpr int kShownValues = 8;

const std::vector<FlagSpec>& RunFlags() {
  static const std::vector<FlagSpec> specs = [] {
    std::vector<FlagSpec> v = {
        {"--device", "", true, false, "DEVICE", "cpu (default), opencl[:N] or cuda[:N]"},
        {"--graph", "", true, false, "G.json", "three-file deployment: graph JSON; MODEL is then the kernel library"},
        {"--params", "", true, false, "P.params", "three-file deployment: params file (needs --graph)"},
        {"--input", "", true, true, "NAME=FILE.npy", "value of graph input NAME"},
        {"--output-dir", "", true, false, "DIR", "where output_<i>.npy files go (default '.'; created if missing)"},
        {"--no-verify", "", false, false, "", "skip the blob integrity check at load"},
    };
    for (FlagSpec& f : ProtectionFlagSpecs()) v.push_back(std::move(f));
    return v;
  }();
  return specs;
}

Status MakeDirectories(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return FailedPrecondition("cannot create output directory " + dir + ": " + ec.message());
  if (!std::filesystem::is_directory(dir, ec))
    return FailedPrecondition("output directory " + dir + " is not a directory");
  return Status::Ok();
}

// `dir` may be missing (created after the run) or a directory (a link to one is fine: files are
// created inside it); anything else is refused before the model is loaded.
Status CheckOutputDirectory(const std::string& dir) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) return Status::Ok();
  if (!S_ISDIR(st.st_mode)) {
    return FailedPrecondition("output directory " + dir + " exists and is " +
                              (S_ISREG(st.st_mode) ? std::string("a file") : FileTypeName(st.st_mode)) +
                              ", not a directory");
  }
  return Status::Ok();
}

}  // namespace

std::string RunUsage() {
  return "Usage: sorun run MODEL [--device cpu|opencl[:N]|cuda[:N]] [--input NAME=FILE.npy]...\n"
         "                 [--graph G.json [--params P.params]] [--output-dir DIR] [--no-verify]\n"
         "                 [--key KEYFILE] [--public-key PUB.pem]\n"
         "\n"
         "Loads MODEL (a packed .so or .tar; '-' reads a packed .so from standard input and loads it from\n"
         "memory, writing no file), runs it once on the given .npy inputs and writes every output as\n"
         "DIR/output_<i>.npy. Every graph input that is not a parameter needs an --input. With --graph,\n"
         "MODEL is used as the kernel library of a three-file deployment (graph JSON + library + params).\n"
         "--key decrypts a model written by `pack --encrypt` on the way in (the plaintext stays in memory);\n"
         "--public-key refuses a model not signed by `pack --sign` with that key's private half, before any\n"
         "of its code runs (docs/security.md).\n"
         "\n" +
         FormatFlagHelp(RunFlags());
}

int RunRunCommand(const std::vector<std::string>& args, CommandIo& io) {
  auto flags = ParseFlags(args, RunFlags());
  if (!flags.ok()) return UsageError(io, "run: " + flags.status().message());
  const auto& pos = flags->positionals();
  if (pos.empty()) return UsageError(io, "run: missing MODEL (usage: sorun run MODEL [flags])");
  if (pos.size() > 1) return UsageError(io, "run: unexpected argument '" + pos[1] + "' (one MODEL only)");
  DLDevice device = CpuDevice();
  if (flags->Has("--device")) {
    auto d = ParseDevice(flags->Value("--device"));
    if (!d.ok()) return UsageError(io, "run: --device: " + d.status().message());
    device = *d;
  }
  auto inputs = ParseInputFlags(flags->Values("--input"));
  if (!inputs.ok()) return UsageError(io, "run: " + inputs.status().message());
  ModelSource source;
  source.model_path = pos[0];
  source.graph_path = flags->Value("--graph");
  source.params_path = flags->Value("--params");
  source.verify_checksum = !flags->Has("--no-verify");
  auto protection = ReadProtectionFlags(*flags);
  if (!protection.ok()) return UsageError(io, "run: " + protection.status().message());
  source.protection = *protection;
  if (flags->Has("--graph") && source.graph_path.empty()) return UsageError(io, "run: --graph needs a file name");
  if (flags->Has("--params") && source.params_path.empty()) return UsageError(io, "run: --params needs a file name");
  if (!source.params_path.empty() && source.graph_path.empty()) {
    return UsageError(io, "run: --params needs --graph (a packed model carries its own parameters)");
  }
  std::string out_dir = flags->Has("--output-dir") ? flags->Value("--output-dir") : ".";
  if (out_dir.empty()) return UsageError(io, "run: --output-dir needs a directory name");

  // The output directory (a directory or nothing yet) is checked before any work.
  Status dir_ok = CheckOutputDirectory(out_dir);
  if (!dir_ok.ok()) return ModelError(io, dir_ok);

  auto session = ModelSession::Open(source, device);
  if (!session.ok()) return ModelError(io, session.status());
  ModelSession& s = **session;
  std::vector<std::string> paths;
  // The outputs known before running (all of a graph's; a Relax model's may be known only after).
  auto check_paths = [&](size_t count) -> Status {
    for (size_t i = paths.size(); i < count; ++i) {
      paths.push_back((std::filesystem::path(out_dir) / ("output_" + std::to_string(i) + ".npy")).string());
      SORUN_RETURN_IF_ERROR(CheckOutputFile(paths.back(), "output file"));
    }
    return Status::Ok();
  };
  Status writable = check_paths(s.executor().outputs().size());
  if (!writable.ok()) return ModelError(io, writable);
  Status bound = s.BindInputs(*inputs, /*fill_missing=*/false, nullptr);
  if (!bound.ok()) return ModelError(io, bound);
  double t0 = NowMs();
  Status ran = s.Run();
  double run_ms = NowMs() - t0;
  if (!ran.ok()) return ModelError(io, ran);
  const int num_outputs = s.executor().num_outputs();
  writable = check_paths(static_cast<size_t>(num_outputs));
  if (!writable.ok()) return ModelError(io, writable);
  Status made = MakeDirectories(out_dir);
  if (!made.ok()) return ModelError(io, made);

  // Nothing goes to stdout until every output is written: a failing run prints only its error.
  TextTable table;
  for (int i = 0; i < num_outputs; ++i) {
    auto host = s.OutputOnHost(i);
    if (!host.ok()) return ModelError(io, host.status());
    const std::string& path = paths[static_cast<size_t>(i)];
    Status w = WriteNpyFile(path, *host->dl());
    if (!w.ok()) return ModelError(io, NamePath(w, path));
    table.AddRow({"output " + std::to_string(i), s.OutputName(i), DTypeToString(host->dtype()),
                  ShapeToString(host->shape().data(), host->ndim()), path, FormatLeadingValues(*host, kShownValues)});
  }
  char ms[32];
  std::snprintf(ms, sizeof(ms), run_ms < 1 ? "%.4f" : "%.3f", run_ms);
  io.out << "ran " << source.model_path << " on " << DeviceToString(device) << " in " << ms << " ms\n";
  io.out << table.Render();
  io.out.flush();
  return kExitSuccess;
}

}  // namespace cli
}  // namespace sorun
