// Where a symbol's bytes are in a loaded (or loadable) ELF library and how many of them may be read:
// the one rule shared by the loader (serialization/loader.cc, with the program headers of the
// dlopen'ed library from its link map) and the inspector (inspect/model_file.cc, with the program
// headers of the file from ElfImage), so both accept and reject exactly the same files with the same
// message. The rule:
//   - the symbol's address (st_value, relative to the load base) starts inside the file-backed part
//     [p_vaddr, p_vaddr + p_filesz) of a readable PT_LOAD segment (not in its zero-filled .bss tail,
//     not outside every segment);
//   - a size of 0 (no .size directive) means "bounded by the end of that file-backed part";
//   - a size running past that end is an error.
// Relocatable objects (the `.o` members of a `.tar` export) have no segments: their symbols are bounded
// by their section (ElfImage::FindSymbolData) instead.
// Pure functions of their arguments; thread-safe.
#ifndef SORUN_SERIALIZATION_BLOB_EXTENT_H_
#define SORUN_SERIALIZATION_BLOB_EXTENT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sorun {

// The file-backed part of one PT_LOAD segment, as the caller can read it now.
struct LoadSegment {
  uint32_t index = 0;        // program header index (messages)
  uint64_t vaddr = 0;        // p_vaddr
  uint64_t file_size = 0;    // p_filesz: bytes backed by the file
  uint64_t memory_size = 0;  // p_memsz: bytes in memory (the rest is zero-filled)
  uint64_t file_offset = 0;  // p_offset
  bool readable = false;     // p_flags has PF_R
  // [bytes, bytes + file_size) is readable and holds [vaddr, vaddr + file_size): the mapped segment
  // (loader) or the file image at p_offset (inspector). Borrowed.
  const uint8_t* bytes = nullptr;
};

// The bounded bytes of a symbol.
struct SymbolExtent {
  const uint8_t* data = nullptr;  // first byte of the symbol
  uint64_t address = 0;           // st_value (relative to the load base)
  uint64_t file_offset = 0;       // where the symbol's bytes are in the file
  uint64_t bytes = 0;             // how many bytes may be read: st_size, or up to the segment's end if 0
  bool sized = false;             // st_size was non-zero
  uint32_t segment = 0;           // program header index of the PT_LOAD holding it
};

// Applies the rule above to symbol `name` at `address` with `size` (0 = unknown). DataLoss naming the
// symbol, its address and size, and the segment (or every segment when none holds it).
StatusOr<SymbolExtent> BoundSymbolBytes(std::string_view name, uint64_t address, uint64_t size,
                                        const std::vector<LoadSegment>& segments);

}  // namespace sorun

#endif  // SORUN_SERIALIZATION_BLOB_EXTENT_H_
