// `sorun compile MODEL.onnx -o OUT.so [--target T] [--tune B --database DIR] ...`: the ONNX compiler lives
// in the Python package (python/sorun/compile: TVM 0.27 is Python), so this command runs
// `PYTHON -m sorun.compile ARGS...` and returns its exit status. PYTHON is $SORUN_PYTHON, else python3 on
// PATH; one without the package (pip install 'sorun[compile]') is refused with that instruction.
#ifndef SORUN_TOOLS_CLI_COMPILE_COMMAND_H_
#define SORUN_TOOLS_CLI_COMPILE_COMMAND_H_

#include <string>
#include <vector>

#include "tools/cli/command.h"

namespace sorun {
namespace cli {

std::string CompileUsage();
int RunCompileCommand(const std::vector<std::string>& args, CommandIo& io);

}  // namespace cli
}  // namespace sorun

#endif  // SORUN_TOOLS_CLI_COMPILE_COMMAND_H_
