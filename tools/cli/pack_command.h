// `sorun pack -o OUT --lib FILE... [--graph G.json [--params P.params]] [--cuda F --cuda-fmap J]...
// [--opencl F.cl --opencl-fmap J]... [--include-dir DIR]... [--cflag F]... [--ldflag F]... [--tar]
// [--c-route] [--no-checksum] [--module-name NAME]`: the exporter as a command (PackModel).
#ifndef SORUN_TOOLS_CLI_PACK_COMMAND_H_
#define SORUN_TOOLS_CLI_PACK_COMMAND_H_

#include <string>
#include <vector>

#include "tools/cli/command.h"

namespace sorun {
namespace cli {

std::string PackUsage();
int RunPackCommand(const std::vector<std::string>& args, CommandIo& io);

// TVM's sidecar name for a device-code file: "dir/kernels.ptx" -> "dir/kernels.tvm_meta.json".
std::string SidecarFmapPath(const std::string& code_path);

}  // namespace cli
}  // namespace sorun

#endif  // SORUN_TOOLS_CLI_PACK_COMMAND_H_
