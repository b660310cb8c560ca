// Command-line flag parsing for the `sorun` commands: each command declares its flags (FlagSpec) and
// ParseFlags splits its arguments into flag values and positional arguments.
//
// Accepted syntax: `--name VALUE`, `--name=VALUE`, short aliases (`-o VALUE`), boolean flags
// (`--json`), repeatable flags (`--input a=x.npy --input b=y.npy`) and `--` ending the flags. A value
// is always the next argument, even when it starts with '-' (`--cflag -O3`). Errors (InvalidArgument,
// reported as usage errors) name the flag: unknown flag, missing value, value given to a boolean
// flag, non-repeatable flag given twice. Pure functions; thread-safe.
#ifndef SORUN_TOOLS_CLI_FLAGS_H_
#define SORUN_TOOLS_CLI_FLAGS_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sorun {
namespace cli {

struct FlagSpec {
  std::string name;        // "--device"
  std::string short_name;  // "-o", or empty
  bool takes_value = false;
  bool repeated = false;
  std::string value_name;  // "DEVICE" in usage text
  std::string help;
};

class ParsedFlags {
 public:
  bool Has(std::string_view name) const;
  // The value of a non-repeated flag ("" when absent).
  std::string Value(std::string_view name) const;
  // Every value of a repeated flag, in order.
  std::vector<std::string> Values(std::string_view name) const;
  const std::vector<std::string>& positionals() const { return positionals_; }

 private:
  friend StatusOr<ParsedFlags> ParseFlags(const std::vector<std::string>& args, const std::vector<FlagSpec>& specs);
  std::map<std::string, std::vector<std::string>, std::less<>> values_;
  std::vector<std::string> positionals_;
};

StatusOr<ParsedFlags> ParseFlags(const std::vector<std::string>& args, const std::vector<FlagSpec>& specs);

// True when `args` asks for help (`--help` or `-h` before any `--`).
bool WantsHelp(const std::vector<std::string>& args);

// The "Flags:" block of a usage text: one aligned line per flag.
std::string FormatFlagHelp(const std::vector<FlagSpec>& specs);

// Integer flag values: decimal, optional sign, no trailing characters, in [min, max]. InvalidArgument
// naming the flag and the value otherwise ("--repeat: 'abc' is not an integer").
StatusOr<int64_t> ParseIntFlag(std::string_view flag, std::string_view text, int64_t min, int64_t max);

}  // namespace cli
}  // namespace sorun

#endif  // SORUN_TOOLS_CLI_FLAGS_H_
