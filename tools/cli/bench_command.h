// `sorun bench MODEL [--device D] [--input NAME=FILE.npy]... [--warmup N] [--repeat N] [--json]`:
// load time, executor creation time, first run, steady-state latency (min / median / p90 / max / mean
// over --repeat runs after --warmup), peak and current RSS and the memory plan. Inputs not given are
// filled with deterministic pseudo-random values. Device work is synchronised before every clock read.
#ifndef SORUN_TOOLS_CLI_BENCH_COMMAND_H_
#define SORUN_TOOLS_CLI_BENCH_COMMAND_H_

#include <string>
#include <vector>

#include "tools/cli/command.h"

namespace sorun {
namespace cli {

inline constexpr int kDefaultWarmup = 5;
inline constexpr int kDefaultRepeat = 50;

std::string BenchUsage();
int RunBenchCommand(const std::vector<std::string>& args, CommandIo& io);

}  // namespace cli
}  // namespace sorun

#endif  // SORUN_TOOLS_CLI_BENCH_COMMAND_H_
