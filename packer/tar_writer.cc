#include "packer/tar_writer.h"

#include <cstring>
#include <utility>

#include "base/file_util.h"
#include "format/ustar_layout.h"

namespace sorun {
namespace {

// Writes `value` as `digits` zero-padded octal digits followed by a NUL into `field`.
void PutOctal(char* field, size_t digits, uint64_t value) {
  for (size_t i = digits; i > 0; --i) {
    field[i - 1] = static_cast<char>('0' + (value & 7));
    value >>= 3;
  }
  field[digits] = '\0';
}

}  // namespace

Status TarWriter::AddFile(std::string_view name, std::string_view contents, uint32_t mode) {
  const std::string quoted = "'" + std::string(name.substr(0, 300)) + "'";
  std::vector<std::string_view> parts;
  std::string problem;
  if (name.empty()) return InvalidArgument("tar entry name is empty");
  if (!ustar::SplitPath(name, &parts, &problem)) return InvalidArgument("tar entry name " + quoted + " " + problem);
  if (ustar::JoinPath(parts) != name) {
    return InvalidArgument("tar entry name " + quoted + " is not normalised (empty or '.' components)");
  }
  if (name.size() > ustar::kNameSize + 1 + ustar::kPrefixSize) {
    return InvalidArgument("tar entry name " + quoted + " is " + std::to_string(name.size()) +
                           " bytes; ustar names are at most 255");
  }
  if (mode > 07777) return InvalidArgument("tar entry " + quoted + ": mode " + std::to_string(mode) + " > 07777");
  if (contents.size() > kTarMaxFileSize) {
    return InvalidArgument("tar entry " + quoted + " is " + std::to_string(contents.size()) +
                           " bytes; ustar files are at most 8 GiB - 1");
  }
  if (names_.count(name) != 0) return InvalidArgument("tar entry name " + quoted + " is already in the archive");

  std::string_view prefix;
  std::string_view base = name;
  if (name.size() > ustar::kNameSize) {
    // Split at a '/' so that the tail fits the name field and the head the prefix field.
    bool split = false;
    for (size_t i = name.size() - ustar::kNameSize - 1; i < name.size() && i <= ustar::kPrefixSize; ++i) {
      if (name[i] == '/') {
        prefix = name.substr(0, i);
        base = name.substr(i + 1);
        split = true;
        break;
      }
    }
    if (!split) {
      return InvalidArgument("tar entry name " + quoted + " (" + std::to_string(name.size()) +
                             " bytes) cannot be split at a '/' into a 155-byte prefix and a 100-byte name");
    }
  }

  char header[kTarBlockSize];
  std::memset(header, 0, sizeof(header));
  std::memcpy(header + ustar::kNameOffset, base.data(), base.size());
  PutOctal(header + ustar::kModeOffset, ustar::kModeSize - 1, mode);
  PutOctal(header + ustar::kUidOffset, ustar::kIdSize - 1, 0);
  PutOctal(header + ustar::kGidOffset, ustar::kIdSize - 1, 0);
  PutOctal(header + ustar::kSizeOffset, ustar::kSizeSize - 1, contents.size());
  PutOctal(header + ustar::kMtimeOffset, ustar::kMtimeSize - 1, 0);
  header[ustar::kTypeOffset] = '0';
  std::memcpy(header + ustar::kMagicOffset,
              "ustar\0"
              "00",
              8);
  PutOctal(header + ustar::kDevMajorOffset, ustar::kDevSize - 1, 0);
  PutOctal(header + ustar::kDevMinorOffset, ustar::kDevSize - 1, 0);
  if (!prefix.empty()) std::memcpy(header + ustar::kPrefixOffset, prefix.data(), prefix.size());
  // Checksum: the unsigned byte sum with the checksum field read as spaces; 6 digits, NUL, space.
  std::memset(header + ustar::kChecksumOffset, ' ', ustar::kChecksumSize);
  uint32_t sum = 0;
  for (unsigned char c : header) sum += c;
  PutOctal(header + ustar::kChecksumOffset, 6, sum);
  header[ustar::kChecksumOffset + 7] = ' ';

  bytes_.reserve(bytes_.size() + kTarBlockSize + static_cast<size_t>(ustar::PaddedSize(contents.size())));
  bytes_.append(header, sizeof(header));
  if (!contents.empty()) bytes_.append(contents.data(), contents.size());
  bytes_.append(static_cast<size_t>(ustar::PaddedSize(contents.size()) - contents.size()), '\0');
  names_.emplace(name);
  return Status::Ok();
}

std::string TarWriter::Finish() {
  bytes_.append(2 * kTarBlockSize, '\0');
  std::string out = std::move(bytes_);
  bytes_.clear();
  names_.clear();
  return out;
}

Status TarWriter::WriteToFile(const std::string& path) {
  std::string archive = Finish();
  return WriteFileBytes(path, archive.data(), archive.size(), 0644, 0);
}

}  // namespace sorun
