// The ustar header block (POSIX.1-1988) as the tar reader (format/tar_archive.h) and the tar writer
// (packer/tar_writer.h) both see it: the block size, the header's field offsets and widths, contents
// padded to whole blocks, and the rule for entry names (relative, no '..' component, no NUL byte;
// empty and "." components dropped). Stateless; thread-safe.
#ifndef SORUN_FORMAT_USTAR_LAYOUT_H_
#define SORUN_FORMAT_USTAR_LAYOUT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sorun {

inline constexpr size_t kTarBlockSize = 512;
// The largest file a ustar header's 11 octal digits can describe (8 GiB - 1).
inline constexpr uint64_t kTarMaxFileSize = 077777777777ull;

namespace ustar {

// Header field offsets and widths.
inline constexpr size_t kNameOffset = 0, kNameSize = 100;
inline constexpr size_t kModeOffset = 100, kModeSize = 8;
inline constexpr size_t kUidOffset = 108, kGidOffset = 116, kIdSize = 8;
inline constexpr size_t kSizeOffset = 124, kSizeSize = 12;
inline constexpr size_t kMtimeOffset = 136, kMtimeSize = 12;
inline constexpr size_t kChecksumOffset = 148, kChecksumSize = 8;
inline constexpr size_t kTypeOffset = 156;
inline constexpr size_t kMagicOffset = 257;  // "ustar\0" + "00" (POSIX) or "ustar " + " \0" (GNU)
inline constexpr size_t kDevMajorOffset = 329, kDevMinorOffset = 337, kDevSize = 8;
inline constexpr size_t kPrefixOffset = 345, kPrefixSize = 155;

// `size` rounded up to whole blocks.
inline uint64_t PaddedSize(uint64_t size) { return (size + kTarBlockSize - 1) / kTarBlockSize * kTarBlockSize; }

// Splits a path into components, rejecting what can escape the extraction directory.
// Returns the components (without "" and "." ones) or an error message.
bool SplitPath(std::string_view name, std::vector<std::string_view>* parts, std::string* problem);
// The components joined with '/': the normalised name.
std::string JoinPath(const std::vector<std::string_view>& parts);

}  // namespace ustar
}  // namespace sorun

#endif  // SORUN_FORMAT_USTAR_LAYOUT_H_
