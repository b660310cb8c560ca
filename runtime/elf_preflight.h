// PreflightSharedLibrary: checks, before dlopen, that a file is a loadable ELF shared library whose
// program headers stay inside the file. glibc's loader maps segments without checking them against
// the file size and dies with SIGBUS on a truncated library (and may read wild addresses from a
// corrupt dynamic section); this check turns those into errors naming the file and the cause.
// Checks: ELF magic, 64-bit little-endian, ET_DYN, this machine's architecture, the program header
// table, every PT_LOAD and PT_DYNAMIC range within the file, and the dynamic section's string,
// symbol and hash tables inside a loaded segment. Pure function of the file; thread-safe.
#ifndef SORUN_RUNTIME_ELF_PREFLIGHT_H_
#define SORUN_RUNTIME_ELF_PREFLIGHT_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "runtime/status.h"

namespace sorun {

Status PreflightSharedLibrary(const std::string& path);
// The same on bytes in memory (tests, fuzzing). `path` names the file in messages.
Status PreflightSharedLibraryBytes(const uint8_t* data, size_t size, const std::string& path);

}  // namespace sorun

#endif  // SORUN_RUNTIME_ELF_PREFLIGHT_H_
