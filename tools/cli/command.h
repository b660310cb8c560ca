// The plumbing every `sorun` command shares: where it writes (CommandIo), its exit codes and the
// one-line error report "sorun: error: <message>" on stderr.
//
// Exit codes are a contract scripts rely on (docs/cli.md): 0 success; 1 the model, its inputs or the
// machine failed (load/parse/shape errors, missing files, kernel failures, absent devices); 2 usage
// errors (unknown command or flag, missing argument, bad flag value). Stateless; thread-compatible
// (a CommandIo's streams belong to one command at a time).
#ifndef SORUN_TOOLS_CLI_COMMAND_H_
#define SORUN_TOOLS_CLI_COMMAND_H_

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sorun {
namespace cli {

enum ExitCode : int {
  kExitSuccess = 0,
  kExitModelError = 1,
  kExitUsageError = 2,
};

// The streams a command writes to (std::cout / std::cerr in the binary). Borrowed.
struct CommandIo {
  std::ostream& out;
  std::ostream& err;
};

// A command's entry point: its arguments after the command name.
using CommandFn = int (*)(const std::vector<std::string>& args, CommandIo& io);

// `message` on one line: line breaks (e.g. compiler output inside a message) become " | ", other
// control characters spaces, and trailing blanks go.
std::string OneLine(std::string_view message);

// Writes "sorun: error: <message>" (one line) to io.err and returns kExitUsageError.
int UsageError(CommandIo& io, std::string_view message);
// Same for any other failure; returns kExitModelError.
int ModelError(CommandIo& io, std::string_view message);
int ModelError(CommandIo& io, const Status& status);

}  // namespace cli
}  // namespace sorun

#endif  // SORUN_TOOLS_CLI_COMMAND_H_
