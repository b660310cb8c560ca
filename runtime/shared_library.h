// SharedLibrary: one dlopen'd file, closed when the last reference goes.
//
// Opened with RTLD_NOW | RTLD_LOCAL: every undefined symbol is bound at load, so a library needing a
// function nobody provides fails to load with a message instead of aborting the process at its
// first call; and the weak names every TVM library defines (__tvm_module_ctx, __TVMFuncCall, ...)
// never leak into the global scope. Modules, functions and tensors that point into the library hold a
// reference, so the code and data stay mapped while anything uses them. Thread-safe.
#ifndef SORUN_RUNTIME_SHARED_LIBRARY_H_
#define SORUN_RUNTIME_SHARED_LIBRARY_H_

#include <string>

#include "runtime/object.h"
#include "runtime/status.h"

namespace sorun {

class SharedLibrary final : public Object {
 public:
  // dlopen(path). NotFound if the file does not exist; DataLoss with dlerror()'s text otherwise.
  static StatusOr<ObjectPtr<SharedLibrary>> Open(const std::string& path);
  ~SharedLibrary() override;

  // dlsym, or nullptr.
  void* FindSymbol(const char* name) const;
  const std::string& path() const { return path_; }
  // The dlopen handle (identical for every Open of the same file in one process).
  void* handle() const { return handle_; }

 private:
  SharedLibrary(std::string path, void* handle) : path_(std::move(path)), handle_(handle) {}
  std::string path_;
  void* handle_;
};

}  // namespace sorun

#endif  // SORUN_RUNTIME_SHARED_LIBRARY_H_
