// `sorun run MODEL [--device D] [--graph G.json [--params P.params]] [--input NAME=FILE.npy]...
// [--output-dir DIR] [--no-verify]`: runs a model once on .npy inputs, writes every output as
// DIR/output_<i>.npy and prints each output's name, dtype, shape and first values.
#ifndef SORUN_TOOLS_CLI_RUN_COMMAND_H_
#define SORUN_TOOLS_CLI_RUN_COMMAND_H_

#include <string>
#include <vector>

#include "tools/cli/command.h"

namespace sorun {
namespace cli {

std::string RunUsage();
int RunRunCommand(const std::vector<std::string>& args, CommandIo& io);

}  // namespace cli
}  // namespace sorun

#endif  // SORUN_TOOLS_CLI_RUN_COMMAND_H_
