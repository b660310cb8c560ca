// `sorun verify MODEL`: integrity check without loading. Requires sorun's `__sorun_blob_checksum`
// record, recomputes its XXH64 over the blob bytes in the file, then validates the blob's structure
// with the inspector's walk. Prints "MODEL: OK (blob N bytes, xxh64 H)" and exits 0, or prints the
// error and exits 1 (no blob, no record, mismatch, malformed blob).
#ifndef SORUN_TOOLS_CLI_VERIFY_COMMAND_H_
#define SORUN_TOOLS_CLI_VERIFY_COMMAND_H_

#include <string>
#include <vector>

#include "tools/cli/command.h"

namespace sorun {
namespace cli {

std::string VerifyUsage();
int RunVerifyCommand(const std::vector<std::string>& args, CommandIo& io);

// The check itself: the OK line's text after "MODEL: ", or the error.
StatusOr<std::string> VerifyModelFile(const std::string& path);

}  // namespace cli
}  // namespace sorun

#endif  // SORUN_TOOLS_CLI_VERIFY_COMMAND_H_
