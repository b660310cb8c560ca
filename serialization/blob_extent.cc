#include "serialization/blob_extent.h"

namespace sorun {
namespace {

// "PT_LOAD segment 2 [0x1000, 0x3000) file-backed"
std::string SegmentLabel(const LoadSegment& s) {
  return "PT_LOAD segment " + std::to_string(s.index) + " [" + HexString(s.vaddr) + ", " +
         HexString(s.vaddr + s.file_size) + ") file-backed";
}

}  // namespace

StatusOr<SymbolExtent> BoundSymbolBytes(std::string_view name, uint64_t address, uint64_t size,
                                        const std::vector<LoadSegment>& segments) {
  const std::string symbol =
      std::string(name) + " at address " + HexString(address) + " (st_size " + std::to_string(size) + ")";
  for (const LoadSegment& s : segments) {
    if (address < s.vaddr) continue;
    const uint64_t delta = address - s.vaddr;
    if (delta >= s.file_size) continue;
    if (!s.readable) {
      return DataLoss(symbol + " lies in " + SegmentLabel(s) + ", which is not readable (no PF_R)");
    }
    const uint64_t left = s.file_size - delta;
    if (size > left) {
      return DataLoss(symbol + " runs past the end of " + SegmentLabel(s) + ": only " + std::to_string(left) +
                      " bytes are left there");
    }
    SymbolExtent extent;
    extent.data = s.bytes + delta;
    extent.address = address;
    extent.file_offset = s.file_offset + delta;
    extent.bytes = size != 0 ? size : left;
    extent.sized = size != 0;
    extent.segment = s.index;
    return extent;
  }
  // Without its start in file bytes the size is irrelevant, and the loader cannot always read it
  // back (dladdr1 may name another symbol there): these messages leave it out.
  for (const LoadSegment& s : segments) {
    if (address >= s.vaddr && address - s.vaddr < s.memory_size) {
      return DataLoss(std::string(name) + " at address " + HexString(address) +
                      " lies in the zero-filled (.bss) part of " + SegmentLabel(s) + ", " +
                      std::to_string(s.memory_size) + " bytes in memory: no file bytes hold it");
    }
  }
  std::string list;
  for (const LoadSegment& s : segments) {
    list += (list.empty() ? "[" : ", [") + HexString(s.vaddr) + ", " + HexString(s.vaddr + s.file_size) + ")";
  }
  return DataLoss(std::string(name) + " at address " + HexString(address) +
                  " is outside the file-backed part of every PT_LOAD segment (" +
                  (list.empty() ? std::string("the library has none") : list) + ")");
}

}  // namespace sorun
