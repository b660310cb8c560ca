#include "runtime/shared_library.h"

#include "format/elf_preflight.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "runtime/library_module.h"

namespace sorun {
namespace {

// Held around every dlopen and dlclose sorun makes. ld.so already runs them one at a time behind its
// own lock, so this costs no concurrency; but ThreadSanitizer cannot see ld.so's lock (nor its mmaps),
// and without an order it can see it reports a link map filled by one thread's dlopen and read by
// another thread after its own dlopen of the same file, or a library mapped where an unloaded one
// was, as races. Recursive because a library's constructor or destructor may reach sorun again, as
// ld.so's own lock allows.
std::recursive_mutex& DynamicLoaderMutex() {
  static auto* mutex = new std::recursive_mutex();
  return *mutex;
}

}  // namespace

StatusOr<ObjectPtr<SharedLibrary>> SharedLibrary::Open(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return NotFound(path + ": no such file");
  if (!S_ISREG(st.st_mode)) return InvalidArgument(path + ": not a regular file");
  // glibc's loader crashes on truncated or corrupt files: check first.
  SORUN_RETURN_IF_ERROR(PreflightSharedLibrary(path));
  // dlopen treats names without '/' as library search names; force a path.
  std::string open_path = path.find('/') == std::string::npos ? "./" + path : path;
  void* handle = nullptr;
  std::string message;
  {
    std::lock_guard<std::recursive_mutex> lock(DynamicLoaderMutex());
    dlerror();
    handle = dlopen(open_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* err = dlerror();
      message = err ? err : "unknown dlopen error";
    }
  }
  if (handle == nullptr) {
    // TVM 0.21+ system-lib builds register their blob from a constructor through this tvm-ffi function,
    // which a host that does not export sorun's C API lacks: say what the file is rather than only what
    // the loader missed.
    if (message.find("TVMFFIEnvModRegisterSystemLibSymbol") != std::string::npos) {
      return Unimplemented(path +
                           ": a TVM system-lib build (tvm-ffi, TVM 0.21+: it registers its module blob "
                           "at load time); link its objects into the program and load it with "
                           "Model::LoadSystemLib, or export it without system-lib (" +
                           message + ")");
    }
    return DataLoss(path + ": cannot load shared library: " + message);
  }
  return ObjectPtr<SharedLibrary>::FromRaw(new SharedLibrary(path, handle));
}

namespace {

std::string DescriptorPath(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

// dlerror()'s text with the /proc path replaced by the caller's name for the bytes.
std::string NameInMessage(std::string message, const std::string& proc_path, const std::string& name) {
  for (size_t at = message.find(proc_path); at != std::string::npos; at = message.find(proc_path, at + name.size())) {
    message.replace(at, proc_path.size(), name);
  }
  return message;
}

}  // namespace

StatusOr<ObjectPtr<SharedLibrary>> SharedLibrary::OpenDescriptor(int fd, const std::string& name) {
  std::lock_guard<std::recursive_mutex> lock(DynamicLoaderMutex());
  // ld.so finds an already loaded library by the name it was opened with before it compares files: a
  // library still mapped under /proc/self/fd/<fd> (its descriptor closed by someone else, or kept
  // loaded by RTLD_NODELETE) would be returned for this file. Move to a number no loaded library has.
  for (int attempt = 0;; ++attempt) {
    void* existing = dlopen(DescriptorPath(fd).c_str(), RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
    if (existing == nullptr) break;
    dlclose(existing);
    const int moved = attempt < 64 ? ::fcntl(fd, F_DUPFD_CLOEXEC, fd + 1) : -1;
    if (moved < 0) {
      ::close(fd);
      return Internal(name + ": no file descriptor number is free of an earlier library's name");
    }
    ::close(fd);
    fd = moved;
  }
  const std::string proc_path = DescriptorPath(fd);
  dlerror();
  void* handle = dlopen(proc_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    ::close(fd);
    return DataLoss(
        name + ": cannot load shared library: " + NameInMessage(err ? err : "unknown dlopen error", proc_path, name));
  }
  return ObjectPtr<SharedLibrary>::FromRaw(new SharedLibrary(name, handle, fd));
}

namespace {

// The loaded image of one library: its base, name and PT_LOAD address ranges.
struct LoadedImage {
  uintptr_t base = 0;
  std::string name;
  std::vector<std::pair<uintptr_t, uintptr_t>> segments;  // [begin, end)
  bool found = false;
};

// dl_iterate_phdr callback: fills `image` (base and name set) from the object loaded there.
int FindImage(struct dl_phdr_info* info, size_t, void* data) {
  auto* image = static_cast<LoadedImage*>(data);
  if (info->dlpi_addr != image->base || image->name != (info->dlpi_name ? info->dlpi_name : "")) return 0;
  image->found = true;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    image->segments.emplace_back(info->dlpi_addr + ph.p_vaddr, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
  }
  return 1;
}

// The image of `handle` (nothing found when ld.so cannot describe it).
LoadedImage ImageOf(void* handle) {
  LoadedImage image;
  struct link_map* self = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &self) != 0 || self == nullptr) return image;
  image.base = self->l_addr;
  image.name = self->l_name ? self->l_name : "";
  dl_iterate_phdr(FindImage, &image);
  return image;
}

}  // namespace

SharedLibrary::~SharedLibrary() {
  if (handle_ == nullptr) return;
  std::lock_guard<std::recursive_mutex> lock(DynamicLoaderMutex());
  // A system-lib build loaded as a library registered addresses inside it from its constructors
  // (runtime/library_module.h): once ld.so unmaps it, Model::LoadSystemLib must not find them.
  LoadedImage image = ImageOf(handle_);
  dlclose(handle_);
  if (image.found) {
    LoadedImage after{image.base, image.name, {}, false};
    dl_iterate_phdr(FindImage, &after);
    if (!after.found) {
      for (const auto& [begin, end] : image.segments) ForgetSystemLibSymbolsIn(begin, end);
    }
  }
  if (fd_ < 0) return;
  // Close the descriptor only when ld.so really unmapped the library: while it is loaded its name is
  // /proc/self/fd/<fd>, and a reused number would make a later dlopen of another file return it.
  void* still = dlopen(DescriptorPath(fd_).c_str(), RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
  if (still != nullptr) {
    dlclose(still);
    return;  // kept loaded (RTLD_NODELETE, a unique symbol): the descriptor stays open with it
  }
  ::close(fd_);
}

void* SharedLibrary::FindSymbol(const char* name) const { return dlsym(handle_, name); }

namespace {

struct CodeQuery {
  const struct link_map* library;
  uintptr_t address;
  bool found_library = false;
  bool in_code = false;
};

// dl_iterate_phdr callback: finds `library` and whether `address` is in one of its executable segments.
int FindInCode(struct dl_phdr_info* info, size_t, void* data) {
  auto* q = static_cast<CodeQuery*>(data);
  const char* name = info->dlpi_name ? info->dlpi_name : "";
  const char* lib_name = q->library->l_name ? q->library->l_name : "";
  if (info->dlpi_addr != q->library->l_addr || std::strcmp(name, lib_name) != 0) return 0;
  q->found_library = true;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_X) == 0) continue;
    const uintptr_t start = info->dlpi_addr + ph.p_vaddr;
    if (q->address >= start && q->address - start < ph.p_memsz) q->in_code = true;
  }
  return 1;  // stop: this was the library
}

// dl_iterate_phdr callback for MakeCopyOnWrite: the verdict on a page range of `library`.
struct CowQuery {
  const struct link_map* library;
  uintptr_t page_begin;
  uintptr_t page_end;
  uintptr_t page;
  bool found_library = false;
  std::string refusal = "it lies in no PT_LOAD segment of the library";
};

int CheckCow(struct dl_phdr_info* info, size_t, void* data) {
  auto* q = static_cast<CowQuery*>(data);
  const char* name = info->dlpi_name ? info->dlpi_name : "";
  const char* lib_name = q->library->l_name ? q->library->l_name : "";
  if (info->dlpi_addr != q->library->l_addr || std::strcmp(name, lib_name) != 0) return 0;
  q->found_library = true;
  int holders = 0;
  bool suitable = false;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    const uintptr_t start = info->dlpi_addr + ph.p_vaddr;
    const uintptr_t page_start = start / q->page * q->page;
    const uintptr_t page_end = (start + ph.p_memsz + q->page - 1) / q->page * q->page;
    const bool overlaps = page_start < q->page_end && q->page_begin < page_end;
    if (ph.p_type == PT_GNU_RELRO && overlaps) {
      q->refusal = "it shares pages with the library's RELRO region";
      return 1;
    }
    if (ph.p_type != PT_LOAD || !overlaps) continue;
    ++holders;
    const bool inside = page_start <= q->page_begin && q->page_end <= page_end;
    if (inside && (ph.p_flags & PF_R) && !(ph.p_flags & (PF_W | PF_X))) suitable = true;
  }
  if (holders == 1 && suitable) {
    q->refusal.clear();
  } else if (holders > 1) {
    q->refusal = "its pages are shared by two segments of the library";
  } else if (holders == 1) {
    q->refusal = "its segment is writable or executable";
  }
  return 1;
}

}  // namespace

// The page range [first, last) of [begin, begin + bytes) if it passes CheckReadOnlyFileRange's rule.
static StatusOr<std::pair<uintptr_t, uintptr_t>> ReadOnlyPages(void* handle, const std::string& path, const void* begin,
                                                               uint64_t bytes) {
  struct link_map* self = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &self) != 0 || self == nullptr) {
    return FailedPrecondition(path + ": no link map");
  }
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t b = reinterpret_cast<uintptr_t>(begin);
  if (b + bytes < b) return FailedPrecondition("range wraps around");
  CowQuery q{self, b / page * page, (b + bytes + page - 1) / page * page, page};
  dl_iterate_phdr(CheckCow, &q);
  if (!q.found_library || !q.refusal.empty()) {
    return FailedPrecondition(path + ": not read-only file pages of the library: " + q.refusal);
  }
  return std::make_pair(q.page_begin, q.page_end);
}

Status SharedLibrary::CheckReadOnlyFileRange(const void* begin, uint64_t bytes) const {
  if (bytes == 0) return Status::Ok();
  return ReadOnlyPages(handle_, path_, begin, bytes).status();
}

Status SharedLibrary::MakeCopyOnWrite(const void* begin, uint64_t bytes) const {
  if (bytes == 0) return Status::Ok();
  SORUN_ASSIGN_OR_RETURN(auto pages, ReadOnlyPages(handle_, path_, begin, bytes));
  if (mprotect(reinterpret_cast<void*>(pages.first), pages.second - pages.first, PROT_READ | PROT_WRITE) != 0) {
    return FailedPrecondition(path_ + ": mprotect failed: " + std::strerror(errno));
  }
  return Status::Ok();
}

SharedLibrary::SymbolInfo SharedLibrary::DescribeSymbol(const char* name) const {
  SymbolInfo out;
  out.address = dlsym(handle_, name);
  if (out.address == nullptr) return out;
  struct link_map* self = nullptr;
  if (dlinfo(handle_, RTLD_DI_LINKMAP, &self) != 0 || self == nullptr) return out;
  Dl_info where{};
  struct link_map* owner = nullptr;
  if (dladdr1(out.address, &where, reinterpret_cast<void**>(&owner), RTLD_DL_LINKMAP) == 0) return out;
  out.defined_here = owner == self;
  out.defined_in = where.dli_fname != nullptr ? where.dli_fname : "";
  void* entry = nullptr;
  const auto* sym = static_cast<const ElfW(Sym)*>(nullptr);
  if (dladdr1(out.address, &where, &entry, RTLD_DL_SYMENT) != 0 &&
      (sym = static_cast<const ElfW(Sym)*>(entry)) != nullptr && where.dli_saddr == out.address &&
      sym->st_shndx != SHN_UNDEF) {
    out.has_entry = true;
    out.type = static_cast<unsigned char>(ELF64_ST_TYPE(sym->st_info));
    out.binding = static_cast<unsigned char>(ELF64_ST_BIND(sym->st_info));
    out.size = sym->st_size;
  }
  if (out.defined_here) {
    CodeQuery q{self, reinterpret_cast<uintptr_t>(out.address)};
    dl_iterate_phdr(FindInCode, &q);
    out.in_code = q.in_code;
  }
  return out;
}

}  // namespace sorun
