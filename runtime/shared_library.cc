#include "runtime/shared_library.h"

#include "format/elf_preflight.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/stat.h>

#include <cstring>

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

}  // namespace

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
