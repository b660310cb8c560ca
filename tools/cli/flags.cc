#include "tools/cli/flags.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

namespace sorun {
namespace cli {

bool ParsedFlags::Has(std::string_view name) const { return values_.find(name) != values_.end(); }

std::string ParsedFlags::Value(std::string_view name) const {
  auto it = values_.find(name);
  return it == values_.end() || it->second.empty() ? std::string() : it->second.back();
}

std::vector<std::string> ParsedFlags::Values(std::string_view name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>() : it->second;
}

StatusOr<ParsedFlags> ParseFlags(const std::vector<std::string>& args, const std::vector<FlagSpec>& specs) {
  ParsedFlags parsed;
  bool flags_done = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (flags_done || arg.size() < 2 || arg[0] != '-') {
      parsed.positionals_.push_back(arg);
      continue;
    }
    if (arg == "--") {
      flags_done = true;
      continue;
    }
    std::string name = arg;
    std::string inline_value;
    bool has_inline = false;
    if (arg.rfind("--", 0) == 0) {
      size_t eq = arg.find('=');
      if (eq != std::string::npos) {
        name = arg.substr(0, eq);
        inline_value = arg.substr(eq + 1);
        has_inline = true;
      }
    }
    auto spec = std::find_if(specs.begin(), specs.end(), [&](const FlagSpec& s) {
      return s.name == name || (!s.short_name.empty() && s.short_name == name);
    });
    if (spec == specs.end()) return InvalidArgument("unknown flag '" + name + "' (see --help)");
    std::string value;
    if (spec->takes_value) {
      if (has_inline) {
        value = inline_value;
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return InvalidArgument(spec->name + " needs a value (" + spec->name + " " + spec->value_name + ")");
      }
    } else if (has_inline) {
      return InvalidArgument(spec->name + " takes no value");
    }
    auto& slot = parsed.values_[spec->name];
    if (!spec->repeated && !slot.empty()) return InvalidArgument(spec->name + " given more than once");
    slot.push_back(std::move(value));
  }
  return parsed;
}

bool WantsHelp(const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    if (a == "--") return false;
    if (a == "--help" || a == "-h") return true;
  }
  return false;
}

std::string FormatFlagHelp(const std::vector<FlagSpec>& specs) {
  std::vector<std::string> lefts;
  size_t width = 0;
  for (const FlagSpec& s : specs) {
    std::string left = s.short_name.empty() ? s.name : s.short_name + ", " + s.name;
    if (s.takes_value) left += " " + s.value_name;
    width = std::max(width, left.size());
    lefts.push_back(std::move(left));
  }
  std::string out = "Flags:\n";
  for (size_t i = 0; i < specs.size(); ++i) {
    out += "  " + lefts[i] + std::string(width - lefts[i].size() + 2, ' ') + specs[i].help;
    if (specs[i].repeated) out += " (repeatable)";
    out += "\n";
  }
  out += "  -h, --help" + std::string(width > 10 ? width - 10 + 2 : 2, ' ') + "show this help\n";
  return out;
}

StatusOr<int64_t> ParseIntFlag(std::string_view flag, std::string_view text, int64_t min, int64_t max) {
  std::string s(text);
  if (s.empty()) return InvalidArgument(std::string(flag) + ": empty value, expected an integer");
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (end == s.c_str() || *end != '\0' || s.find_first_of(" \t") != std::string::npos) {
    return InvalidArgument(std::string(flag) + ": '" + s + "' is not an integer");
  }
  if (errno == ERANGE || v < min || v > max) {
    return InvalidArgument(std::string(flag) + ": " + s + " is out of range [" + std::to_string(min) + ", " +
                           std::to_string(max) + "]");
  }
  return static_cast<int64_t>(v);
}

}  // namespace cli
}  // namespace sorun
