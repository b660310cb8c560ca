// The version of the `sorun` tool and runtime, printed by `sorun --version`.
#ifndef SORUN_TOOLS_CLI_VERSION_H_
#define SORUN_TOOLS_CLI_VERSION_H_

namespace sorun {
namespace cli {

inline constexpr char kSorunVersion[] = "0.1.0";

}  // namespace cli
}  // namespace sorun

#endif  // SORUN_TOOLS_CLI_VERSION_H_
