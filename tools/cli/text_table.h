// TextTable: aligned plain-text columns for the human-readable output of `sorun` commands. Cells are
// left-aligned (right-aligned for columns marked numeric), separated by two spaces, trailing blanks
// trimmed. Not thread-safe; build, render, discard.
#ifndef SORUN_TOOLS_CLI_TEXT_TABLE_H_
#define SORUN_TOOLS_CLI_TEXT_TABLE_H_

#include <string>
#include <vector>

namespace sorun {
namespace cli {

class TextTable {
 public:
  explicit TextTable(std::string indent = "  ") : indent_(std::move(indent)) {}
  // Right-aligns column `column` (numbers).
  void AlignRight(size_t column);
  void AddRow(std::vector<std::string> cells);
  bool empty() const { return rows_.empty(); }
  std::string Render() const;

 private:
  std::string indent_;
  std::vector<bool> right_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace cli
}  // namespace sorun

#endif  // SORUN_TOOLS_CLI_TEXT_TABLE_H_
