// Memory use of the calling process, for `sorun bench`: peak resident set size (VmHWM of
// /proc/self/status; getrusage ru_maxrss where that is missing) and current resident set size
// (/proc/self/statm). Thread-safe.
#ifndef SORUN_TOOLS_CLI_PROCESS_MEMORY_H_
#define SORUN_TOOLS_CLI_PROCESS_MEMORY_H_

#include <cstdint>

namespace sorun {
namespace cli {

// Peak RSS in bytes since the program started (since its execve(): not its parent's; 0 if unknown).
uint64_t PeakRssBytes();
// Current RSS in bytes (0 if unknown).
uint64_t CurrentRssBytes();

}  // namespace cli
}  // namespace sorun

#endif  // SORUN_TOOLS_CLI_PROCESS_MEMORY_H_
