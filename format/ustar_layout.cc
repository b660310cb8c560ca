#include "format/ustar_layout.h"

namespace sorun {
namespace ustar {

bool SplitPath(std::string_view name, std::vector<std::string_view>* parts, std::string* problem) {
  parts->clear();
  if (name.find('\0') != std::string_view::npos) {
    *problem = "contains a NUL byte";
    return false;
  }
  if (!name.empty() && name[0] == '/') {
    *problem = "is an absolute path";
    return false;
  }
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('/', start);
    if (end == std::string_view::npos) end = name.size();
    std::string_view part = name.substr(start, end - start);
    if (part == "..") {
      *problem = "has a '..' component (path traversal)";
      return false;
    }
    if (!part.empty() && part != ".") parts->push_back(part);
    start = end + 1;
  }
  return true;
}

std::string JoinPath(const std::vector<std::string_view>& parts) {
  std::string out;
  for (std::string_view p : parts) {
    if (!out.empty()) out += '/';
    out += p;
  }
  return out;
}

}  // namespace ustar
}  // namespace sorun
