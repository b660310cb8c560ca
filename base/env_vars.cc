#include "base/env_vars.h"

#include <cstdlib>
#include <string>

namespace sorun {
namespace {

Status Bad(const char* name, const char* value, std::string_view accepted) {
  return InvalidArgument(std::string("environment variable ") + name + " is '" + value + "': use " +
                         std::string(accepted));
}

}  // namespace

StatusOr<std::optional<bool>> ParseEnvBool(const char* name, const char* value, std::string_view meaning) {
  if (value == nullptr || value[0] == '\0') return std::optional<bool>();
  if (value[0] == '1' && value[1] == '\0') return std::optional<bool>(true);
  if (value[0] == '0' && value[1] == '\0') return std::optional<bool>(false);
  return Bad(name, value, "1 (" + std::string(meaning) + ") or 0 (do not)");
}

StatusOr<std::optional<int64_t>> ParseEnvInt(const char* name, const char* value, int64_t min_value, int64_t max_value,
                                             std::string_view meaning) {
  if (value == nullptr || value[0] == '\0') return std::optional<int64_t>();
  const std::string accepted = "a whole number from " + std::to_string(min_value) + " to " + std::to_string(max_value) +
                               " (" + std::string(meaning) + ")";
  int64_t v = 0;
  for (const char* p = value; *p != '\0'; ++p) {
    if (*p < '0' || *p > '9') return Bad(name, value, accepted);
    const int digit = *p - '0';
    if (v > (max_value - digit) / 10) return Bad(name, value, accepted);  // past max_value (no overflow)
    v = v * 10 + digit;
  }
  if (v < min_value) return Bad(name, value, accepted);
  return std::optional<int64_t>(v);
}

StatusOr<std::optional<bool>> GetEnvBool(const char* name, std::string_view meaning) {
  return ParseEnvBool(name, std::getenv(name), meaning);
}

StatusOr<std::optional<int64_t>> GetEnvInt(const char* name, int64_t min_value, int64_t max_value,
                                           std::string_view meaning) {
  return ParseEnvInt(name, std::getenv(name), min_value, max_value, meaning);
}

}  // namespace sorun
