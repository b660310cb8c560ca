#include "tools/cli/text_table.h"

#include <algorithm>

namespace sorun {
namespace cli {

void TextTable::AlignRight(size_t column) {
  if (right_.size() <= column) right_.resize(column + 1, false);
  right_[column] = true;
}

void TextTable::AddRow(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }

std::string TextTable::Render() const {
  std::vector<size_t> width;
  for (const auto& row : rows_) {
    if (width.size() < row.size()) width.resize(row.size(), 0);
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows_) {
    std::string line = indent_;
    for (size_t c = 0; c < row.size(); ++c) {
      const std::string& cell = row[c];
      const size_t pad = width[c] - cell.size();
      const bool right = c < right_.size() && right_[c];
      if (right) line.append(pad, ' ');
      line += cell;
      if (c + 1 < row.size()) {
        if (!right) line.append(pad, ' ');
        line += "  ";
      }
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

}  // namespace cli
}  // namespace sorun
