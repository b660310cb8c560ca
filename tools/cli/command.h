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

// `status` with `path` in front of its message unless the message already names it.
Status NamePath(Status status, const std::string& path);

// `status` whose message starts with `path` (prefixing "path: " unless it already starts with it):
// for errors about one input file (a params file), where the file must be the first thing named.
Status StartWithPath(Status status, const std::string& path);

// Checks that `path` names a regular file (not missing, not a directory): NotFound /
// InvalidArgument naming the path otherwise. `what` names the role in messages ("model", "input").
Status CheckRegularFile(const std::string& path, std::string_view what);

// Checks, before any work is done, that a command may create or replace the file `path` (lstat, so
// links are not followed): OK when nothing is there or a regular file is (it will be replaced);
// FailedPrecondition naming the path and what is there otherwise: a directory, FIFO, device or socket
// is never replaced, and neither is a symbolic link (sorun renames a finished temporary file over
// its output, which would replace the link itself, not its target). `what` names the role ("output").
Status CheckOutputFile(const std::string& path, std::string_view what);
// "a directory", "a FIFO", "a character device", ... for a stat mode that is not a regular file.
std::string FileTypeName(unsigned mode);

}  // namespace cli
}  // namespace sorun

#endif  // SORUN_TOOLS_CLI_COMMAND_H_
