#include "format/tar_archive.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <new>
#include <utility>

#include "base/file_util.h"
#include "format/binary_reader.h"

namespace sorun {
namespace {

// Extended headers (GNU long names, pax records) larger than this are rejected as malformed.
constexpr uint64_t kMaxExtendedHeaderSize = 1 << 20;

// A printable rendering of a header field for messages.
std::string Printable(const uint8_t* p, size_t n) {
  std::string out = "\"";
  for (size_t i = 0; i < n; ++i) {
    if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '"' && p[i] != '\\') {
      out += static_cast<char>(p[i]);
    } else {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[p[i] >> 4];
      out += kHex[p[i] & 0xf];
    }
  }
  return out + "\"";
}

std::string FieldText(const uint8_t* p, size_t n) {
  size_t len = 0;
  while (len < n && p[len] != 0) ++len;
  return std::string(reinterpret_cast<const char*>(p), len);
}

// A name for messages: at most 300 bytes, control bytes shown as '?'.
std::string Shown(const std::string& name) {
  std::string out = name.substr(0, 300);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return out;
}

std::string TypeDescription(char type) {
  switch (type) {
    case '1': return "a hard link";
    case '2': return "a symbolic link";
    case '3': return "a character device";
    case '4': return "a block device";
    case '6': return "a FIFO";
    default: {
      std::string t = "of unsupported type ";
      if (type >= 0x20 && type < 0x7f) {
        t += "'";
        t += type;
        t += "'";
      } else {
        t += std::to_string(static_cast<unsigned char>(type));
      }
      return t;
    }
  }
}

// Parses one header; its methods report errors at the absolute offset of the offending field.
class HeaderParser {
 public:
  HeaderParser(const BinaryReader& reader, const uint8_t* block, uint64_t offset, std::string label)
      : reader_(reader), block_(block), offset_(offset), label_(std::move(label)) {}

  Status Error(size_t field_offset, std::string_view message) const {
    return reader_.ErrorAt(offset_ + field_offset, label_ + ": " + std::string(message));
  }

  // A numeric field: octal digits (optionally led by spaces, ended by NUL/space), or GNU base-256
  // (high bit of the first byte set) for large values.
  Status Number(size_t field_offset, size_t width, const char* what, uint64_t* out) const {
    const uint8_t* f = block_ + field_offset;
    if (f[0] & 0x80) {
      if (f[0] & 0x40) return Error(field_offset, std::string("negative base-256 value in ") + what + " field");
      uint64_t v = f[0] & 0x3f;
      for (size_t i = 1; i < width; ++i) {
        if (v > (UINT64_MAX >> 8)) {
          return Error(field_offset, std::string("base-256 value in ") + what + " field exceeds 64 bits");
        }
        v = (v << 8) | f[i];
      }
      *out = v;
      return Status::Ok();
    }
    size_t i = 0;
    while (i < width && f[i] == ' ') ++i;
    const size_t first_digit = i;
    uint64_t v = 0;
    while (i < width && f[i] >= '0' && f[i] <= '7') {
      v = (v << 3) | static_cast<uint64_t>(f[i] - '0');  // at most 12 digits: no overflow
      ++i;
    }
    if (i == first_digit) {
      return Error(field_offset + i, std::string("no octal digits in ") + what + " field " + Printable(f, width));
    }
    for (; i < width; ++i) {
      if (f[i] != ' ' && f[i] != '\0') {
        return Error(field_offset + i, std::string("invalid octal digit in ") + what + " field " + Printable(f, width));
      }
    }
    *out = v;
    return Status::Ok();
  }

 private:
  const BinaryReader& reader_;
  const uint8_t* block_;
  uint64_t offset_;
  std::string label_;
};

// Applies the pax records of an extended header ("%d %s=%s\n" each) that matter here: path, size.
Status ParsePaxRecords(const BinaryReader& reader, const uint8_t* data, uint64_t size, uint64_t offset,
                       const std::string& label, std::string* path, bool* has_path, uint64_t* pax_size,
                       bool* has_size) {
  uint64_t pos = 0;
  while (pos < size) {
    const uint64_t record_offset = offset + pos;
    uint64_t length = 0;
    uint64_t i = pos;
    while (i < size && data[i] >= '0' && data[i] <= '9' && i - pos < 19) {
      length = length * 10 + static_cast<uint64_t>(data[i] - '0');
      ++i;
    }
    if (i == pos || i >= size || data[i] != ' ') {
      return reader.ErrorAt(record_offset, label + ": malformed pax record (expected \"<length> <key>=<value>\\n\")");
    }
    if (length <= i - pos + 1) {
      return reader.ErrorAt(record_offset,
                            label + ": pax record length " + std::to_string(length) + " is too short to hold a record");
    }
    if (length > size - pos) {
      return reader.ErrorAt(record_offset, label + ": pax record length " + std::to_string(length) +
                                               " does not fit the " + std::to_string(size - pos) +
                                               " bytes left in the extended header");
    }
    const uint64_t end = pos + length;  // one past the '\n'
    if (data[end - 1] != '\n') {
      return reader.ErrorAt(offset + end - 1, label + ": pax record does not end with a newline");
    }
    std::string_view record(reinterpret_cast<const char*>(data + i + 1), static_cast<size_t>(end - 1 - (i + 1)));
    size_t eq = record.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      return reader.ErrorAt(record_offset, label + ": pax record without a key=value pair");
    }
    std::string_view key = record.substr(0, eq);
    std::string_view value = record.substr(eq + 1);
    if (key == "path") {
      *path = std::string(value);
      *has_path = !value.empty();
    } else if (key == "size") {
      uint64_t v = 0;
      if (value.empty() || value.size() > 19) {
        return reader.ErrorAt(record_offset, label + ": invalid pax size '" + std::string(value) + "'");
      }
      for (char c : value) {
        if (c < '0' || c > '9') {
          return reader.ErrorAt(record_offset, label + ": invalid pax size '" + std::string(value) + "'");
        }
        v = v * 10 + static_cast<uint64_t>(c - '0');
      }
      *pax_size = v;
      *has_size = true;
    }
    pos = end;
  }
  return Status::Ok();
}

bool AllZero(const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (p[i] != 0) return false;
  }
  return true;
}

// A header block's checksum and magic (ReadTarArchive and TarExtent share this check). `posix`: the
// POSIX "ustar\0" "00" magic rather than GNU's "ustar  \0".
Status CheckHeaderBlock(const HeaderParser& header, const uint8_t* block, bool* posix) {
  uint64_t stored_checksum = 0;
  SORUN_RETURN_IF_ERROR(header.Number(ustar::kChecksumOffset, ustar::kChecksumSize, "checksum", &stored_checksum));
  uint64_t unsigned_sum = 0;
  int64_t signed_sum = 0;
  for (size_t i = 0; i < kTarBlockSize; ++i) {
    const uint8_t c =
        (i >= ustar::kChecksumOffset && i < ustar::kChecksumOffset + ustar::kChecksumSize) ? ' ' : block[i];
    unsigned_sum += c;
    signed_sum += static_cast<int8_t>(c);
  }
  // POSIX specifies the unsigned sum; some historical writers used signed chars.
  if (stored_checksum != unsigned_sum && static_cast<int64_t>(stored_checksum) != signed_sum) {
    return header.Error(ustar::kChecksumOffset, "header checksum mismatch: stored " + std::to_string(stored_checksum) +
                                                    ", computed " + std::to_string(unsigned_sum) +
                                                    " (corrupt header or not a tar archive)");
  }
  *posix = std::memcmp(block + ustar::kMagicOffset,
                       "ustar\0"
                       "00",
                       8) == 0;
  const bool gnu = std::memcmp(block + ustar::kMagicOffset, "ustar  \0", 8) == 0;
  if (!*posix && !gnu) {
    return header.Error(ustar::kMagicOffset,
                        "not a ustar header (magic " + Printable(block + ustar::kMagicOffset, 8) + ")");
  }
  return Status::Ok();
}

bool IsRegularFileType(char type) { return type == '0' || type == '\0' || type == '7'; }  // '7': contiguous
bool IsExtendedHeaderType(char type) { return type == 'L' || type == 'x' || type == 'g' || type == 'K'; }

// Follows an archive's headers while its bytes are being inflated, to find where the archive ends
// (just past its two end-of-archive zero blocks) before the rest of a gzip stream is inflated. Each
// header is checked as ReadTarArchive checks it (checksum, magic, size field, pax size records), so a
// forged header cannot make the archive look longer than a valid one would be. Single-threaded.
class TarExtent {
 public:
  explicit TarExtent(const std::string& source_name) : source_name_(source_name) {}

  // Walks the headers whose blocks lie in [data, data + size) (the archive's first `size` bytes,
  // growing between calls). Errors are ReadTarArchive's, at archive byte offsets.
  Status Advance(const uint8_t* data, uint64_t size) {
    while (!ended_ && size >= next_ && size - next_ >= kTarBlockSize) {
      const uint8_t* block = data + next_;
      if (AllZero(block, kTarBlockSize)) {
        ended_ = true;
        end_ = next_ + 2 * kTarBlockSize;
        return Status::Ok();
      }
      BinaryReader reader(data, static_cast<size_t>(size), source_name_);
      const std::string label = "entry " + std::to_string(index_);
      HeaderParser header(reader, block, next_, label);
      bool posix = false;
      SORUN_RETURN_IF_ERROR(CheckHeaderBlock(header, block, &posix));
      uint64_t entry_size = 0;
      SORUN_RETURN_IF_ERROR(header.Number(ustar::kSizeOffset, ustar::kSizeSize, "size", &entry_size));
      const char type = static_cast<char>(block[ustar::kTypeOffset]);
      if (type == 'x') {
        if (entry_size > kMaxExtendedHeaderSize) {
          return header.Error(ustar::kSizeOffset,
                              "extended header of " + std::to_string(entry_size) + " bytes is too large");
        }
        if (size - next_ - kTarBlockSize < entry_size) return Status::Ok();  // its records are not here yet
        std::string unused_path;
        bool unused_has_path = false;
        SORUN_RETURN_IF_ERROR(ParsePaxRecords(reader, block + kTarBlockSize, entry_size, next_ + kTarBlockSize, label,
                                              &unused_path, &unused_has_path, &pax_size_, &has_pax_size_));
      } else if (!IsExtendedHeaderType(type)) {
        if (IsRegularFileType(type) && has_pax_size_) entry_size = pax_size_;
        has_pax_size_ = false;
      }
      if (entry_size > (uint64_t{1} << 62)) {  // no real archive; keeps the offsets below from overflowing
        return header.Error(ustar::kSizeOffset, "entry size " + std::to_string(entry_size) + " is too large");
      }
      next_ += kTarBlockSize + ustar::PaddedSize(entry_size);
      ++index_;
    }
    return Status::Ok();
  }

  // True once the end-of-archive marker was seen; end() is then the byte just past its two blocks.
  bool ended() const { return ended_; }
  uint64_t end() const { return end_; }

 private:
  const std::string& source_name_;
  uint64_t next_ = 0;  // offset of the next header block
  size_t index_ = 0;   // header number, as ReadTarArchive counts them
  bool has_pax_size_ = false;
  uint64_t pax_size_ = 0;
  bool ended_ = false;
  uint64_t end_ = 0;
};

}  // namespace

// ---------------------------------------------------------------------------------------------------
// gzip (TVM's `.tar` exports are `tar -czf` output)

bool HasGzipMagic(const uint8_t* data, size_t size) { return size >= 2 && data[0] == 0x1f && data[1] == 0x8b; }

namespace {

// Inflates a gzip stream (every member) into a string of at most `max_output_bytes`; `limit_note`
// explains that limit in the error. With `extent`, the output is an archive: inflation keeps only its
// bytes up to the end-of-archive marker, and what the stream holds past it must be zero padding of at
// most kTarMaxTrailingPadding bytes (tar pads to its record size), so a stream cannot inflate far
// beyond what the archive's headers account for.
StatusOr<std::string> Inflate(const uint8_t* data, size_t size, const std::string& source_name,
                              uint64_t max_output_bytes, const std::string& limit_note, TarExtent* extent) {
  auto error = [&](uint64_t offset, const std::string& what) {
    return DataLoss(source_name + " byte " + std::to_string(offset) + ": gzip: " + what);
  };
  if (!HasGzipMagic(data, size)) return error(0, "not a gzip stream (no 1f 8b magic)");
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) return Internal(source_name + ": gzip: inflateInit2 failed");
  struct Closer {
    z_stream* zs;
    ~Closer() { inflateEnd(zs); }
  } closer{&zs};
  std::string out;
  size_t consumed = 0;    // input bytes handed to zlib so far
  uint64_t trailing = 0;  // zero bytes inflated past the end-of-archive marker (dropped)
  constexpr size_t kChunk = size_t{1} << 20;
  constexpr uInt kMaxIn = uInt{1} << 30;
  auto inflate_all = [&]() -> StatusOr<std::string> {
    out.resize(std::min<uint64_t>(std::max<uint64_t>(size * 4, 4096), max_output_bytes));
    size_t produced = 0;
    for (;;) {
      if (zs.avail_in == 0 && consumed < size) {
        zs.next_in = const_cast<Bytef*>(data + consumed);
        zs.avail_in = static_cast<uInt>(std::min<size_t>(size - consumed, kMaxIn));
        consumed += zs.avail_in;
      }
      if (produced == out.size()) {
        if (out.size() >= max_output_bytes) {
          return ResourceExhausted(source_name + ": gzip: the archive inflates to more than " +
                                   std::to_string(max_output_bytes) + " bytes" + limit_note);
        }
        out.resize(std::min<uint64_t>(out.size() + std::max(out.size(), kChunk), max_output_bytes));
      }
      zs.next_out = reinterpret_cast<Bytef*>(&out[produced]);
      zs.avail_out = static_cast<uInt>(std::min<size_t>(out.size() - produced, kMaxIn));
      const uInt avail_out_before = zs.avail_out;
      const int rc = inflate(&zs, Z_NO_FLUSH);
      produced += avail_out_before - zs.avail_out;
      const uint64_t offset = consumed - zs.avail_in;
      if (extent != nullptr) {
        SORUN_RETURN_IF_ERROR(extent->Advance(reinterpret_cast<const uint8_t*>(out.data()), produced));
        if (extent->ended() && produced > extent->end()) {
          const uint8_t* past = reinterpret_cast<const uint8_t*>(out.data()) + extent->end();
          const size_t n = produced - static_cast<size_t>(extent->end());
          trailing += n;
          if (!AllZero(past, n) || trailing > kTarMaxTrailingPadding) {
            return DataLoss(source_name +
                            ": gzip: the stream continues past the archive's end-of-archive marker "
                            "(ending at archive byte " +
                            std::to_string(extent->end()) + ") with " +
                            (AllZero(past, n)
                                 ? "more than " + std::to_string(kTarMaxTrailingPadding) + " bytes of zero padding"
                                 : std::string("non-zero data")) +
                            " that no header accounts for");
          }
          produced = static_cast<size_t>(extent->end());  // padding is checked, then dropped
        }
      }
      if (rc == Z_STREAM_END) {
        // Another member may follow (gzip streams can be concatenated); padding zeros are tolerated.
        const uint8_t* rest = data + offset;
        const size_t left = size - offset;
        if (left == 0 || std::all_of(rest, rest + left, [](uint8_t b) { return b == 0; })) break;
        if (!HasGzipMagic(rest, left)) return error(offset, "trailing bytes after the compressed data");
        if (inflateReset(&zs) != Z_OK) return error(offset, "inflateReset failed");
        continue;
      }
      if (rc == Z_BUF_ERROR && zs.avail_in == 0 && consumed == size) {
        return error(offset, "truncated compressed data");
      }
      if (rc != Z_OK && rc != Z_BUF_ERROR) {
        return error(offset, zs.msg ? zs.msg : "inflate error " + std::to_string(rc));
      }
    }
    out.resize(produced);
    return std::move(out);
  };
#if __cpp_exceptions
  try {
    return inflate_all();
  } catch (const std::bad_alloc&) {
    return ResourceExhausted(source_name + ": gzip: out of memory inflating the archive");
  }
#else  // a failed allocation aborts (base/call_guarded.h)
  return inflate_all();
#endif
}

}  // namespace

StatusOr<std::string> GunzipBytes(const uint8_t* data, size_t size, const std::string& source_name,
                                  uint64_t max_output_bytes) {
  return Inflate(data, size, source_name, max_output_bytes, "", nullptr);
}

uint64_t TarGzipInflateLimit(uint64_t compressed_bytes) {
  uint64_t relative = compressed_bytes > kTarGzipMaxInflatedBytes / kTarGzipMaxRatio
                          ? kTarGzipMaxInflatedBytes
                          : compressed_bytes * kTarGzipMaxRatio;
  return std::min(std::max(relative, kTarGzipMinInflateAllowance), kTarGzipMaxInflatedBytes);
}

StatusOr<std::string> GunzipTarArchive(const uint8_t* data, size_t size, const std::string& source_name,
                                       uint64_t max_output_bytes) {
  TarExtent extent(source_name);
  const std::string note = " (the limit for a gzip-compressed archive of " + std::to_string(size) +
                           " bytes: " + std::to_string(kTarGzipMaxRatio) + " times its size, at least " +
                           std::to_string(kTarGzipMinInflateAllowance >> 20) + " MiB, at most " +
                           std::to_string(kTarGzipMaxInflatedBytes >> 30) +
                           " GiB; pack larger models as an uncompressed .tar or a .so)";
  return Inflate(data, size, source_name, max_output_bytes, note, &extent);
}

StatusOr<ObjectPtr<TarFile>> TarFile::Open(const std::string& path) {
  ObjectPtr<TarFile> tar = ObjectPtr<TarFile>::FromRaw(new TarFile());
  SORUN_ASSIGN_OR_RETURN(tar->file_, MappedFile::Open(path));
  const uint8_t* bytes = tar->file_->data();
  const size_t size = tar->file_->size();
  if (HasGzipMagic(bytes, size)) {
    SORUN_ASSIGN_OR_RETURN(tar->inflated_, GunzipTarArchive(bytes, size, path, TarGzipInflateLimit(size)));
    tar->gzip_ = true;
  }
  return tar;
}

const uint8_t* TarFile::data() const {
  return gzip_ ? reinterpret_cast<const uint8_t*>(inflated_.data()) : file_->data();
}

size_t TarFile::size() const { return gzip_ ? inflated_.size() : file_->size(); }

// ---------------------------------------------------------------------------------------------------
// Reader

StatusOr<std::vector<TarEntry>> ReadTarArchive(const uint8_t* data, size_t size, const std::string& source_name) {
  BinaryReader reader(data, size, source_name);
  std::vector<TarEntry> entries;
  std::map<std::string, uint64_t> seen;  // name -> header offset
  // Pending extended-header values for the next entry.
  std::string long_name, pax_path;
  bool has_long_name = false, has_pax_path = false, has_pax_size = false;
  uint64_t pax_size = 0;
  uint64_t extended_offset = 0;  // where the pending extended headers started
  size_t index = 0;              // entry number in messages (every header counts)

  while (true) {
    const uint64_t offset = reader.offset();
    if (reader.at_end()) {
      return reader.ErrorAt(offset, "truncated: the archive ends without the end-of-archive zero blocks");
    }
    const uint8_t* block = nullptr;
    SORUN_RETURN_IF_ERROR(reader.ReadBytes(kTarBlockSize, &block, "header block"));
    if (AllZero(block, kTarBlockSize)) {
      // End of archive: a second zero block should follow. A lone zero block at the very end is
      // accepted (some writers stop there); anything else after it is not.
      if (reader.remaining() >= kTarBlockSize && !AllZero(reader.cursor(), kTarBlockSize)) {
        return reader.ErrorAt(offset + kTarBlockSize, "a zero block at byte " + std::to_string(offset) +
                                                          " ends the archive but is followed by a non-zero block");
      }
      if (reader.remaining() > 0 && reader.remaining() < kTarBlockSize) {
        return reader.ErrorAt(reader.offset(), "truncated: partial block after the end-of-archive zero block");
      }
      if (has_long_name || has_pax_path || has_pax_size) {
        return reader.ErrorAt(extended_offset, "extended header is not followed by an entry");
      }
      return entries;
    }

    const std::string raw_name = FieldText(block + ustar::kNameOffset, ustar::kNameSize);
    std::string label = "entry " + std::to_string(index) + " ('" + Shown(raw_name) + "')";
    ++index;
    HeaderParser header(reader, block, offset, label);

    bool posix = false;
    SORUN_RETURN_IF_ERROR(CheckHeaderBlock(header, block, &posix));

    uint64_t mode = 0, entry_size = 0, mtime = 0;
    SORUN_RETURN_IF_ERROR(header.Number(ustar::kModeOffset, ustar::kModeSize, "mode", &mode));
    SORUN_RETURN_IF_ERROR(header.Number(ustar::kSizeOffset, ustar::kSizeSize, "size", &entry_size));
    SORUN_RETURN_IF_ERROR(header.Number(ustar::kMtimeOffset, ustar::kMtimeSize, "mtime", &mtime));
    const char type = static_cast<char>(block[ustar::kTypeOffset]);
    const bool regular = IsRegularFileType(type);
    if (regular && has_pax_size) entry_size = pax_size;

    // The contents and their padding must lie inside the archive.
    const uint64_t data_offset = reader.offset();
    if (entry_size > reader.remaining() || ustar::PaddedSize(entry_size) > reader.remaining()) {
      return header.Error(ustar::kSizeOffset,
                          "truncated: the entry's " + std::to_string(entry_size) +
                              " bytes of contents (padded to a 512-byte block) need more than the " +
                              std::to_string(reader.remaining()) + " bytes left");
    }
    const uint8_t* contents = reader.cursor();
    SORUN_RETURN_IF_ERROR(reader.Skip(static_cast<size_t>(ustar::PaddedSize(entry_size)), "entry contents"));

    if (IsExtendedHeaderType(type)) {
      if (entry_size > kMaxExtendedHeaderSize) {
        return header.Error(ustar::kSizeOffset,
                            "extended header of " + std::to_string(entry_size) + " bytes is too large");
      }
      if (!has_long_name && !has_pax_path && !has_pax_size) extended_offset = offset;
      if (type == 'L') {  // GNU: the next entry's name
        long_name = FieldText(contents, static_cast<size_t>(entry_size));
        has_long_name = true;
      } else if (type == 'x') {  // pax: records for the next entry
        SORUN_RETURN_IF_ERROR(ParsePaxRecords(reader, contents, entry_size, data_offset, label, &pax_path,
                                              &has_pax_path, &pax_size, &has_pax_size));
      }
      // 'g' (pax global defaults) and 'K' (GNU long link target) do not affect regular files.
      continue;
    }

    std::string name = posix && block[ustar::kPrefixOffset] != 0
                           ? FieldText(block + ustar::kPrefixOffset, ustar::kPrefixSize) + "/" + raw_name
                           : raw_name;
    if (has_pax_path) {
      name = pax_path;
    } else if (has_long_name) {
      name = long_name;
    }
    has_long_name = has_pax_path = has_pax_size = false;
    label = "entry " + std::to_string(index - 1) + " ('" + Shown(name) + "')";
    HeaderParser named(reader, block, offset, label);

    std::vector<std::string_view> parts;
    std::string problem;
    if (!ustar::SplitPath(name, &parts, &problem)) return named.Error(ustar::kNameOffset, "name " + problem);
    if (type == '5') continue;  // directories are implied by the files' names
    if (!regular) {
      return Unimplemented(source_name + " byte " + std::to_string(offset) + ": " + label + " is " +
                           TypeDescription(type) + "; only regular files (and directories) are supported");
    }
    if (parts.empty()) return named.Error(ustar::kNameOffset, "empty file name");
    std::string normalised = ustar::JoinPath(parts);
    auto inserted = seen.emplace(normalised, offset);
    if (!inserted.second) {
      return named.Error(ustar::kNameOffset, "duplicate name '" + normalised + "' (first at byte " +
                                                 std::to_string(inserted.first->second) + ")");
    }

    TarEntry entry;
    entry.name = std::move(normalised);
    entry.mode = static_cast<uint32_t>(mode & 07777);
    entry.mtime = mtime;
    entry.size = entry_size;
    entry.header_offset = offset;
    entry.data_offset = data_offset;
    entry.data = contents;
    entries.push_back(std::move(entry));
  }
}

// ---------------------------------------------------------------------------------------------------
// Extraction

Status ExtractTarEntries(const std::vector<TarEntry>& entries, const std::string& directory) {
  struct stat st;
  if (::stat(directory.c_str(), &st) != 0) {
    return NotFound("cannot extract into " + directory + ": " + ErrnoText(errno));
  }
  if (!S_ISDIR(st.st_mode)) return FailedPrecondition("cannot extract into " + directory + ": not a directory");

  for (const TarEntry& entry : entries) {
    std::vector<std::string_view> parts;
    std::string problem;
    if (!ustar::SplitPath(entry.name, &parts, &problem) || parts.empty()) {
      return InvalidArgument("tar entry name '" + entry.name + "' " + (parts.empty() ? "is empty" : problem));
    }
    std::string path = directory;
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      path += "/";
      path += parts[i];
      if (::lstat(path.c_str(), &st) == 0) {
        if (S_ISLNK(st.st_mode)) {
          return FailedPrecondition("refusing to extract '" + entry.name + "' through the symbolic link " + path);
        }
        if (!S_ISDIR(st.st_mode)) {
          return FailedPrecondition("cannot extract '" + entry.name + "': " + path + " is not a directory");
        }
      } else if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
        return FailedPrecondition("cannot create directory " + path + ": " + ErrnoText(errno));
      }
    }
    path += "/";
    path += parts.back();
    const uint32_t mode = entry.mode & 0777;
    SORUN_RETURN_IF_ERROR(WriteFileBytes(path, entry.data, entry.size, mode != 0 ? mode : 0644, O_NOFOLLOW));
  }
  return Status::Ok();
}

Status ExtractTarArchive(const uint8_t* data, size_t size, const std::string& source_name,
                         const std::string& directory) {
  SORUN_ASSIGN_OR_RETURN(std::vector<TarEntry> entries, ReadTarArchive(data, size, source_name));
  return ExtractTarEntries(entries, directory);
}

}  // namespace sorun
