// The `sorun` command line: dispatches `sorun <command> [args]` to inspect, run, bench, pack and
// verify, and handles `--help` / `help [COMMAND]` / `<command> --help` (usage on stdout, exit 0) and
// `--version`. Unknown commands and a missing command are usage errors (exit 2). The binary's main()
// is a thin wrapper around RunSorunCli (tools/sorun_main.cc), so all of it is testable in-process.
#ifndef SORUN_TOOLS_CLI_CLI_MAIN_H_
#define SORUN_TOOLS_CLI_CLI_MAIN_H_

#include <string>
#include <vector>

#include "tools/cli/command.h"

namespace sorun {
namespace cli {

// "sorun 0.1.0 (TVM legacy ABI v0.8-v0.20, graph executor; backends: cpu, opencl, cuda)".
std::string VersionLine();
// The top-level usage text.
std::string MainUsage();

// `args` excludes the program name. Returns the process exit code.
int RunSorunCli(const std::vector<std::string>& args, CommandIo& io);

}  // namespace cli
}  // namespace sorun

#endif  // SORUN_TOOLS_CLI_CLI_MAIN_H_
