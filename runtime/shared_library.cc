#include "runtime/shared_library.h"

#include "runtime/elf_preflight.h"

#include <dlfcn.h>
#include <sys/stat.h>

namespace sorun {

StatusOr<ObjectPtr<SharedLibrary>> SharedLibrary::Open(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return NotFound(path + ": no such file");
  if (!S_ISREG(st.st_mode)) return InvalidArgument(path + ": not a regular file");
  // glibc's loader crashes on truncated or corrupt files: check first.
  SORUN_RETURN_IF_ERROR(PreflightSharedLibrary(path));
  // dlopen treats names without '/' as library search names; force a path.
  std::string open_path = path.find('/') == std::string::npos ? "./" + path : path;
  dlerror();
  void* handle = dlopen(open_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    return DataLoss(path + ": cannot load shared library: " + (err ? err : "unknown dlopen error"));
  }
  return ObjectPtr<SharedLibrary>::FromRaw(new SharedLibrary(path, handle));
}

SharedLibrary::~SharedLibrary() {
  if (handle_) dlclose(handle_);
}

void* SharedLibrary::FindSymbol(const char* name) const { return dlsym(handle_, name); }

}  // namespace sorun
