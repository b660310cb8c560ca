#include "tools/cli/cli_main.h"

#include "api/sorun.h"
#include "tools/cli/bench_command.h"
#include "tools/cli/compile_command.h"
#include "tools/cli/flags.h"
#include "tools/cli/inspect_command.h"
#include "tools/cli/pack_command.h"
#include "tools/cli/run_command.h"
#include "tools/cli/text_table.h"
#include "tools/cli/verify_command.h"

namespace sorun {
namespace cli {
namespace {

struct CommandEntry {
  const char* name;
  const char* summary;
  std::string (*usage)();
  CommandFn run;
};

const std::vector<CommandEntry>& Commands() {
  static const std::vector<CommandEntry> commands = {
      {"inspect", "show what a model library holds, without loading it", InspectUsage, RunInspectCommand},
      {"run", "run a model once on .npy inputs and write .npy outputs", RunUsage, RunRunCommand},
      {"bench", "time loading, creation and runs; report memory", BenchUsage, RunBenchCommand},
      {"pack", "pack host code, device code, graph and params into one library", PackUsage, RunPackCommand},
      {"verify", "check a packed library's integrity record and structure", VerifyUsage, RunVerifyCommand},
      {"compile", "compile an ONNX model into one packed model file with TVM (Python package)", CompileUsage,
       RunCompileCommand},
  };
  return commands;
}

const CommandEntry* FindCommand(const std::string& name) {
  for (const CommandEntry& c : Commands()) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

std::string CommandNames() {
  std::string s;
  for (const CommandEntry& c : Commands()) s += (s.empty() ? "" : ", ") + std::string(c.name);
  return s;
}

}  // namespace

std::string VersionLine() {
  return std::string("sorun ") + Version() +
         " (TVM legacy ABI v0.8-v0.20, graph executor; backends: cpu, opencl, cuda)";
}

std::string MainUsage() {
  std::string s =
      "Usage: sorun <command> [arguments]\n"
      "\n"
      "Runs, inspects and packs TVM-compiled models shipped as ONE shared library.\n"
      "\n"
      "Commands:\n";
  TextTable t;
  for (const CommandEntry& c : Commands()) t.AddRow({c.name, c.summary});
  s += t.Render();
  s += "\n"
       "  sorun help COMMAND, sorun COMMAND --help   usage of one command\n"
       "  sorun --version                            version\n"
       "\n"
       "Exit codes: 0 success; 1 the model, its inputs or the machine failed; 2 usage error.\n"
       "Errors are one line on stderr: 'sorun: error: <message>'. See docs/cli.md.\n";
  return s;
}

int RunSorunCli(const std::vector<std::string>& args, CommandIo& io) {
  if (args.empty()) return UsageError(io, "no command given (commands: " + CommandNames() + "; see sorun --help)");
  const std::string& first = args[0];
  if (first == "--help" || first == "-h") {
    io.out << MainUsage();
    return kExitSuccess;
  }
  if (first == "--version" || first == "version") {
    io.out << VersionLine() << "\n";
    return kExitSuccess;
  }
  if (first == "help") {
    if (args.size() == 1) {
      io.out << MainUsage();
      return kExitSuccess;
    }
    const CommandEntry* c = FindCommand(args[1]);
    if (c == nullptr)
      return UsageError(io, "help: unknown command '" + args[1] + "' (commands: " + CommandNames() + ")");
    io.out << c->usage();
    return kExitSuccess;
  }
  if (!first.empty() && first[0] == '-') {
    return UsageError(io, "unknown option '" + first + "' before the command (see sorun --help)");
  }
  const CommandEntry* c = FindCommand(first);
  if (c == nullptr) return UsageError(io, "unknown command '" + first + "' (commands: " + CommandNames() + ")");
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (WantsHelp(rest)) {
    io.out << c->usage();
    return kExitSuccess;
  }
  return c->run(rest, io);
}

}  // namespace cli
}  // namespace sorun
