// Checks on a file path before a command reads or writes it, and statuses that name the path: what
// `sorun` and the libraries behind its commands (inspection, packing) report about input and output
// files. Stateless; thread-safe.
#ifndef SORUN_BASE_FILE_CHECKS_H_
#define SORUN_BASE_FILE_CHECKS_H_

#include <string>
#include <string_view>

#include "base/status.h"

namespace sorun {

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

}  // namespace sorun

#endif  // SORUN_BASE_FILE_CHECKS_H_
