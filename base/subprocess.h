// RunCommand: runs a program (the system compiler, for export and for loading .tar files) without a
// shell, capturing its combined output. Thread-safe.
#ifndef SORUN_BASE_SUBPROCESS_H_
#define SORUN_BASE_SUBPROCESS_H_

#include <string>
#include <vector>

#include "base/status.h"

namespace sorun {

// Runs argv[0] (searched in PATH) with `argv`. On a non-zero exit or a signal returns Internal with
// the command line and the last lines of its output. `output` (optional) receives stdout+stderr.
Status RunCommand(const std::vector<std::string>& argv, std::string* output = nullptr);

// The C compiler driver to use: `preferred` if non-empty, else $CC, else "cc". Same for C++ ($CXX, "c++").
std::string CCompiler(const std::string& preferred = "");
std::string CxxCompiler(const std::string& preferred = "");

// A fresh private directory under $TMPDIR (or /tmp); removed by the returned guard's destructor.
class TempDir {
 public:
  static StatusOr<TempDir> Create(const std::string& prefix);
  TempDir(TempDir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  TempDir& operator=(TempDir&&) = delete;
  TempDir(const TempDir&) = delete;
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  explicit TempDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

}  // namespace sorun

#endif  // SORUN_BASE_SUBPROCESS_H_
