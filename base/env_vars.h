// sorun's SORUN_* environment variables, parsed strictly and all the same way.
//
// Unset or empty means "the default". Any other value must be exactly one of the accepted spellings,
// else the result is InvalidArgument naming the variable, its value and what it accepts:
//   "environment variable SORUN_NUM_THREADS is 'abc': use a whole number from 1 to 1024 (threads in
//    the CPU pool; unset: one per hardware thread)".
// Booleans accept exactly 1 and 0. Integers accept decimal digits only (no sign, spaces or suffix).
//
// Who calls: the code that reads a variable (thread pool, loader) and CheckSorunEnvironment() (runtime/environment.h),
// which validates every variable sorun reads so that a bad value is reported as an error by the first call that can
// return one (sorun::Initialize(), the CLI) even where the reader itself cannot fail (the process-wide thread pool
// falls back to its default). Thread-safe (getenv only; no setenv).
#ifndef SORUN_BASE_ENV_VARS_H_
#define SORUN_BASE_ENV_VARS_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "base/status.h"

namespace sorun {

inline constexpr char kEnvNumThreads[] = "SORUN_NUM_THREADS";
inline constexpr char kEnvSpinUs[] = "SORUN_SPIN_US";
inline constexpr char kEnvVerifyChecksum[] = "SORUN_VERIFY_CHECKSUM";

// The variable `name` as a boolean: nullopt when unset or empty; true for "1", false for "0";
// InvalidArgument otherwise. `meaning` says what 1 does ("verify the blob checksum at load").
StatusOr<std::optional<bool>> GetEnvBool(const char* name, std::string_view meaning);

// The variable `name` as an integer in [min_value, max_value]: nullopt when unset or empty;
// InvalidArgument for anything else than decimal digits in range. `meaning` describes the number and
// the default ("threads in the CPU pool; unset: one per hardware thread").
StatusOr<std::optional<int64_t>> GetEnvInt(const char* name, int64_t min_value, int64_t max_value,
                                           std::string_view meaning);

// The same rules applied to a given value (tests; callers that already hold the text). `value` may
// be null (unset).
StatusOr<std::optional<bool>> ParseEnvBool(const char* name, const char* value, std::string_view meaning);
StatusOr<std::optional<int64_t>> ParseEnvInt(const char* name, const char* value, int64_t min_value, int64_t max_value,
                                             std::string_view meaning);

}  // namespace sorun

#endif  // SORUN_BASE_ENV_VARS_H_
