// `sorun inspect MODEL [--json]`: prints what a model library holds (InspectModelFile) as aligned
// text or as one JSON object, without loading or executing the library. Schema: docs/cli.md.
#ifndef SORUN_TOOLS_CLI_INSPECT_COMMAND_H_
#define SORUN_TOOLS_CLI_INSPECT_COMMAND_H_

#include <string>
#include <vector>

#include "inspect/model_inspector.h"
#include "tools/cli/command.h"

namespace sorun {
namespace cli {

std::string InspectUsage();
int RunInspectCommand(const std::vector<std::string>& args, CommandIo& io);

// The renderings, for tests and other tools.
std::string InspectReportToText(const InspectReport& report);
std::string InspectReportToJson(const InspectReport& report);

}  // namespace cli
}  // namespace sorun

#endif  // SORUN_TOOLS_CLI_INSPECT_COMMAND_H_
