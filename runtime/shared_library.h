// SharedLibrary: one dlopen'd file, closed when the last reference goes.
//
// Opened with RTLD_NOW | RTLD_LOCAL: every undefined symbol is bound at load, so a library needing a
// function nobody provides fails to load with a message instead of aborting the process at its
// first call; and the weak names every TVM library defines (__tvm_module_ctx, __TVMFuncCall, ...)
// never leak into the global scope. Modules, functions and tensors that point into the library hold a
// reference, so the code and data stay mapped while anything uses them. Thread-safe: every dlopen and
// dlclose runs under one process-wide lock (ld.so serializes them anyway; the lock makes that order
// visible to ThreadSanitizer).
#ifndef SORUN_RUNTIME_SHARED_LIBRARY_H_
#define SORUN_RUNTIME_SHARED_LIBRARY_H_

#include <cstdint>
#include <string>

#include "base/object.h"
#include "base/status.h"

namespace sorun {

class SharedLibrary final : public Object {
 public:
  // dlopen(path). NotFound if the file does not exist; DataLoss with dlerror()'s text otherwise.
  static StatusOr<ObjectPtr<SharedLibrary>> Open(const std::string& path);
  // dlopen("/proc/self/fd/<fd>") of an open, already checked file (a sealed memory file): takes
  // ownership of `fd`, which stays open while the library is mapped, so its number (the name ld.so
  // knows the library by) cannot be reused for another file; a number already naming a loaded library
  // is first moved to a fresh one. `name` stands for the path in messages and path(). No preflight:
  // the caller checked the bytes (PreflightSharedLibraryBytes).
  static StatusOr<ObjectPtr<SharedLibrary>> OpenDescriptor(int fd, const std::string& name);
  ~SharedLibrary() override;

  // dlsym, or nullptr. Searches this library AND its dependencies (libc...) and returns data too:
  // never use it on a name read from a file (see DescribeSymbol and the kernel rule).
  void* FindSymbol(const char* name) const;

  // What dlsym(name) finds and which loaded file defines it: the facts the kernel rule
  // (LibraryModuleNode::GetKernelFunction) judges. Plain data.
  struct SymbolInfo {
    void* address = nullptr;    // dlsym's answer; null when no object in the library's scope defines it
    bool defined_here = false;  // defined by this library itself (its link map), not by a dependency
    std::string defined_in;     // the file whose mapping holds `address` ("" when none does, e.g. TLS)
    bool has_entry = false;     // a defined dynamic symbol of that file starts at `address`
    unsigned char type = 0;     // its ELF type, STT_* (when has_entry)
    unsigned char binding = 0;  // its ELF binding, STB_* (when has_entry)
    uint64_t size = 0;          // its st_size (when has_entry)
    bool in_code = false;       // `address` lies in an executable PT_LOAD segment of this library
  };
  // dlsym(name), then dladdr1 (RTLD_DL_LINKMAP, RTLD_DL_SYMENT) against dlinfo(RTLD_DI_LINKMAP) and
  // the library's program headers. Resolving a STT_GNU_IFUNC name runs the library's resolver (the
  // library is trusted code). Thread-safe.
  SymbolInfo DescribeSymbol(const char* name) const;
  const std::string& path() const { return path_; }
  // OK when the pages holding [begin, begin + bytes) lie wholly inside one readable, non-writable,
  // non-executable PT_LOAD segment of this library (private, never-written file pages), outside
  // PT_GNU_RELRO, on pages no other segment maps; FailedPrecondition saying why otherwise. Such pages
  // may be released (base/mapped_pages.h) or made copy-on-write. Thread-safe.
  Status CheckReadOnlyFileRange(const void* begin, uint64_t bytes) const;
  // Makes those pages (CheckReadOnlyFileRange) writable, so data the runtime uses in place (Relax VM
  // constants) can never fault a kernel that writes to it: a write copies the page for this process
  // and leaves the file and other pages shared. Thread-safe.
  Status MakeCopyOnWrite(const void* begin, uint64_t bytes) const;
  // The dlopen handle (identical for every Open of the same file in one process).
  void* handle() const { return handle_; }

 private:
  SharedLibrary(std::string path, void* handle, int fd = -1) : path_(std::move(path)), handle_(handle), fd_(fd) {}
  std::string path_;
  void* handle_;
  int fd_;  // the descriptor dlopen'ed through /proc/self/fd (OpenDescriptor), else -1
};

}  // namespace sorun

#endif  // SORUN_RUNTIME_SHARED_LIBRARY_H_
