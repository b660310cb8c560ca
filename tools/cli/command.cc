#include "tools/cli/command.h"

namespace sorun {
namespace cli {

std::string OneLine(std::string_view message) {
  std::string out;
  out.reserve(message.size());
  for (size_t i = 0; i < message.size(); ++i) {
    char c = message[i];
    if (c == '\r' || c == '\n') {
      // Collapse runs of line breaks (and the blanks around them) into one separator.
      while (!out.empty() && (out.back() == ' ' || out.back() == '\t')) out.pop_back();
      while (i + 1 < message.size() &&
             (message[i + 1] == '\n' || message[i + 1] == '\r' || message[i + 1] == ' ' || message[i + 1] == '\t')) {
        ++i;
      }
      if (!out.empty() && i + 1 < message.size()) out += " | ";
      continue;
    }
    out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? ' ' : c;
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == '\t')) out.pop_back();
  return out;
}

int UsageError(CommandIo& io, std::string_view message) {
  io.err << "sorun: error: " << OneLine(message) << "\n";
  io.err.flush();
  return kExitUsageError;
}

int ModelError(CommandIo& io, std::string_view message) {
  io.err << "sorun: error: " << OneLine(message) << "\n";
  io.err.flush();
  return kExitModelError;
}

int ModelError(CommandIo& io, const Status& status) { return ModelError(io, status.message()); }

}  // namespace cli
}  // namespace sorun
