#include "tools/npy.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <utility>

#include "base/file_util.h"
#include "format/binary_reader.h"
#include "runtime/data_type.h"

namespace sorun {

// '=' (native byte order) and the data copies below assume a little-endian host, like the rest of sorun.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "npy support assumes a little-endian host");

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
constexpr size_t kArrayAlign = 64;        // numpy's ARRAY_ALIGN
constexpr size_t kGrowthAxisDigits = 21;  // numpy's GROWTH_AXIS_MAX_DIGITS

// "(2, 3)", "(5,)", "()": the Python repr of a shape tuple.
std::string ShapeTuple(const int64_t* shape, int ndim) {
  std::string s = "(";
  for (int i = 0; i < ndim; ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (ndim == 1) s += ",";
  return s + ")";
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// Recursive-descent parser for the header's Python dict literal. Errors carry the absolute byte
// offset of the offending character.
class DictParser {
 public:
  DictParser(std::string_view text, uint64_t base_offset, const std::string& source)
      : text_(text), base_(base_offset), source_(source) {}

  Status Parse(NpyHeader* header) {
    SkipSpace();
    SORUN_RETURN_IF_ERROR(Expect('{', "the header dict to start with '{'"));
    bool have_descr = false, have_fortran = false, have_shape = false;
    while (true) {
      SkipSpace();
      if (Peek() == '}') {
        ++pos_;
        break;
      }
      const size_t key_pos = pos_;
      std::string key;
      SORUN_RETURN_IF_ERROR(ParseString(&key, "a quoted key or '}'"));
      SkipSpace();
      SORUN_RETURN_IF_ERROR(Expect(':', "':' after key '" + key + "'"));
      SkipSpace();
      bool* seen = key == "descr"           ? &have_descr
                   : key == "fortran_order" ? &have_fortran
                   : key == "shape"         ? &have_shape
                                            : nullptr;
      if (seen == nullptr) {
        return Error(key_pos, "unexpected key '" + key + "' (an .npy header has 'descr', 'fortran_order' and 'shape')");
      }
      if (*seen) return Error(key_pos, "duplicate key '" + key + "'");
      *seen = true;
      if (key == "descr") {
        SORUN_RETURN_IF_ERROR(ParseDescr(header));
      } else if (key == "fortran_order") {
        SORUN_RETURN_IF_ERROR(ParseBool(&header->fortran_order));
      } else {
        SORUN_RETURN_IF_ERROR(ParseShape(&header->shape));
      }
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
        continue;
      }
      if (Peek() == '}') {
        ++pos_;
        break;
      }
      return Error(pos_, "expected ',' or '}' after the value of '" + key + "'" + Found());
    }
    SkipSpace();
    if (pos_ != text_.size()) return Error(pos_, "unexpected text after the header dict" + Found());
    if (!have_descr) return Error(text_.size(), "missing key 'descr'");
    if (!have_fortran) return Error(text_.size(), "missing key 'fortran_order'");
    if (!have_shape) return Error(text_.size(), "missing key 'shape'");
    return Status::Ok();
  }

  uint64_t descr_offset() const { return base_ + descr_pos_; }
  uint64_t shape_offset() const { return base_ + shape_pos_; }
  uint64_t fortran_offset() const { return base_ + fortran_pos_; }

  Status Error(size_t pos, const std::string& message, StatusCode code = StatusCode::kDataLoss) const {
    return Status(code, source_ + " byte " + std::to_string(base_ + pos) + ": header: " + message);
  }

 private:
  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void SkipSpace() {
    while (pos_ < text_.size() && IsSpace(text_[pos_])) ++pos_;
  }
  std::string Found() const {
    if (pos_ >= text_.size()) return " but the header ends";
    const char c = text_[pos_];
    if (c >= 0x20 && c < 0x7f) return std::string(" but found '") + c + "'";
    return " but found byte " + std::to_string(static_cast<unsigned char>(c));
  }
  Status Expect(char c, const std::string& what) {
    if (Peek() != c || pos_ >= text_.size()) return Error(pos_, "expected " + what + Found());
    ++pos_;
    return Status::Ok();
  }

  // A Python string literal in single or double quotes, without escapes.
  Status ParseString(std::string* out, const std::string& what) {
    const char quote = Peek();
    if (pos_ >= text_.size() || (quote != '\'' && quote != '"')) return Error(pos_, "expected " + what + Found());
    const size_t start = pos_;
    ++pos_;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\') return Error(pos_, "escape sequences in strings are not supported");
      if (text_[pos_] == '\n') return Error(pos_, "unterminated string");
      ++pos_;
    }
    if (pos_ >= text_.size()) return Error(start, "unterminated string");
    *out = std::string(text_.substr(start + 1, pos_ - start - 1));
    ++pos_;
    return Status::Ok();
  }

  Status ParseDescr(NpyHeader* header) {
    descr_pos_ = pos_;
    if (Peek() == '[') {
      return Error(pos_, "structured dtypes (a list 'descr') are not supported", StatusCode::kUnimplemented);
    }
    SORUN_RETURN_IF_ERROR(ParseString(&header->descr, "a quoted string for 'descr'"));
    StatusOr<DLDataType> dtype = NpyDescrToDType(header->descr);
    if (!dtype.ok()) return Error(descr_pos_, dtype.status().message(), dtype.status().code());
    header->dtype = *dtype;
    return Status::Ok();
  }

  Status ParseBool(bool* out) {
    fortran_pos_ = pos_;
    if (text_.substr(pos_, 4) == "True") {
      *out = true;
      pos_ += 4;
    } else if (text_.substr(pos_, 5) == "False") {
      *out = false;
      pos_ += 5;
    } else {
      return Error(pos_, "expected True or False for 'fortran_order'" + Found());
    }
    return Status::Ok();
  }

  Status ParseShape(std::vector<int64_t>* shape) {
    shape_pos_ = pos_;
    if (Peek() != '(') return Error(pos_, "expected a tuple for 'shape'" + Found());
    ++pos_;
    shape->clear();
    bool trailing_comma = false;
    while (true) {
      SkipSpace();
      if (Peek() == ')') {
        ++pos_;
        break;
      }
      if (static_cast<int>(shape->size()) == kNpyMaxDims) {
        return Error(pos_, "shape has more than " + std::to_string(kNpyMaxDims) + " dimensions");
      }
      int64_t dim = 0;
      SORUN_RETURN_IF_ERROR(ParseDimension(&dim));
      shape->push_back(dim);
      SkipSpace();
      trailing_comma = false;
      if (Peek() == ',') {
        ++pos_;
        trailing_comma = true;
        continue;
      }
      if (Peek() == ')') {
        ++pos_;
        break;
      }
      return Error(pos_, "expected ',' or ')' in 'shape'" + Found());
    }
    if (shape->size() == 1 && !trailing_comma) {
      return Error(shape_pos_, "'shape' is a parenthesised integer, not a tuple (a 1-d shape is written (n,))");
    }
    return Status::Ok();
  }

  Status ParseDimension(int64_t* out) {
    const size_t start = pos_;
    if (Peek() == '-') return Error(pos_, "negative dimension in 'shape'");
    if (Peek() == '+') ++pos_;
    if (Peek() < '0' || Peek() > '9' || pos_ >= text_.size()) {
      return Error(pos_, "expected an integer dimension in 'shape'" + Found());
    }
    uint64_t v = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      const uint64_t digit = static_cast<uint64_t>(text_[pos_] - '0');
      if (v > (static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) - digit) / 10) {
        size_t end = pos_;
        while (end < text_.size() && end - start < 40 && text_[end] >= '0' && text_[end] <= '9') ++end;
        return Error(start, "dimension " + std::string(text_.substr(start, end - start)) + " in 'shape' exceeds int64");
      }
      v = v * 10 + digit;
      ++pos_;
    }
    if (Peek() == 'L' || Peek() == 'l') ++pos_;  // Python 2 long literal
    *out = static_cast<int64_t>(v);
    return Status::Ok();
  }

  std::string_view text_;
  uint64_t base_;
  const std::string& source_;
  size_t pos_ = 0;
  size_t descr_pos_ = 0;
  size_t shape_pos_ = 0;
  size_t fortran_pos_ = 0;
};

// The host bytes of a compact tensor: the tensor's own memory on the CPU, else a host copy.
struct HostBytes {
  const uint8_t* data = nullptr;
  uint64_t size = 0;
  Tensor copy;  // keeps a staged copy alive
};

Status CheckTensor(const DLTensor& t) {
  if (t.ndim < 0 || t.ndim > kNpyMaxDims) {
    return InvalidArgument("cannot write .npy: ndim " + std::to_string(t.ndim) + " is outside [0, " +
                           std::to_string(kNpyMaxDims) + "]");
  }
  if (t.ndim > 0 && t.shape == nullptr) return InvalidArgument("cannot write .npy: tensor has ndim > 0 but no shape");
  if (!IsCompact(t)) {
    return InvalidArgument("cannot write .npy: " + DescribeDLTensor(t) + " has non-compact strides");
  }
  return Status::Ok();
}

StatusOr<HostBytes> GetHostBytes(const DLTensor& t) {
  HostBytes out;
  SORUN_ASSIGN_OR_RETURN(out.size, ShapeByteSize(t.shape, t.ndim, t.dtype));
  if (out.size == 0) return out;
  if (t.data == nullptr) return InvalidArgument("cannot write .npy: " + DescribeDLTensor(t) + " has no data");
  if (t.device.device_type == kDLCPU) {
    out.data = static_cast<const uint8_t*>(t.data) + t.byte_offset;
    return out;
  }
  std::vector<int64_t> shape(t.shape, t.shape + t.ndim);
  SORUN_ASSIGN_OR_RETURN(out.copy, Tensor::Empty(shape, t.dtype, CpuDevice()));
  SORUN_RETURN_IF_ERROR(CopyTensor(t, *out.copy.dl()));
  out.data = static_cast<const uint8_t*>(out.copy.data());
  return out;
}

}  // namespace

StatusOr<DLDataType> NpyDescrToDType(std::string_view descr) {
  const std::string quoted = "'" + std::string(descr.substr(0, 40)) + "'";
  std::string_view rest = descr;
  char order = '=';
  if (!rest.empty() && (rest[0] == '<' || rest[0] == '>' || rest[0] == '|' || rest[0] == '=')) {
    order = rest[0];
    rest.remove_prefix(1);
  }
  if (rest.size() < 2) return Unimplemented("unsupported dtype descr " + quoted);
  const char kind = rest[0];
  int size = 0;
  for (char c : rest.substr(1)) {
    if (c < '0' || c > '9' || size > 1000) return Unimplemented("unsupported dtype descr " + quoted);
    size = size * 10 + (c - '0');
  }
  DLDataType dtype{};
  bool ok = false;
  switch (kind) {
    case 'f':
      ok = size == 2 || size == 4 || size == 8;
      dtype = MakeDType(kDLFloat, static_cast<uint8_t>(size * 8));
      break;
    case 'i':
      ok = size == 1 || size == 2 || size == 4 || size == 8;
      dtype = MakeDType(kDLInt, static_cast<uint8_t>(size * 8));
      break;
    case 'u':
      ok = size == 1 || size == 2 || size == 4 || size == 8;
      dtype = MakeDType(kDLUInt, static_cast<uint8_t>(size * 8));
      break;
    case 'b':
      ok = size == 1;
      dtype = Bool();
      break;
    default: break;
  }
  if (!ok) {
    return Unimplemented("unsupported dtype descr " + quoted +
                         " (supported: float16/32/64, int8/16/32/64, uint8/16/32/64, bool)");
  }
  if (order == '>' && size > 1) {
    return Unimplemented("big-endian arrays (descr " + quoted +
                         ") are not supported; convert with arr.astype(arr.dtype.newbyteorder('<'))");
  }
  return dtype;
}

StatusOr<std::string> DTypeToNpyDescr(DLDataType dtype) {
  if (dtype.lanes == 1) {
    if (dtype.code == kDLUInt && dtype.bits == 1) return std::string("|b1");
    const bool int_width = dtype.bits == 8 || dtype.bits == 16 || dtype.bits == 32 || dtype.bits == 64;
    char kind = 0;
    if (dtype.code == kDLFloat && (dtype.bits == 16 || dtype.bits == 32 || dtype.bits == 64)) kind = 'f';
    if (dtype.code == kDLInt && int_width) kind = 'i';
    if (dtype.code == kDLUInt && int_width) kind = 'u';
    if (kind != 0) return std::string(dtype.bits == 8 ? "|" : "<") + kind + std::to_string(dtype.bits / 8);
  }
  return Unimplemented("dtype " + DTypeToString(dtype) + " has no .npy equivalent here " +
                       "(supported: float16/32/64, int8/16/32/64, uint8/16/32/64, bool)");
}

StatusOr<NpyHeader> ParseNpyHeader(const uint8_t* data, size_t size, const std::string& source_name) {
  BinaryReader r(data, size, source_name);
  const uint8_t* magic = nullptr;
  if (size < kMagicSize || std::memcmp(data, kMagic, kMagicSize) != 0) {
    return r.ErrorAt(0, "not an .npy file (no \\x93NUMPY magic)");
  }
  SORUN_RETURN_IF_ERROR(r.ReadBytes(kMagicSize, &magic, "magic"));
  uint8_t major = 0, minor = 0;
  SORUN_RETURN_IF_ERROR(r.ReadU8(&major));
  SORUN_RETURN_IF_ERROR(r.ReadU8(&minor));
  NpyHeader header;
  header.major_version = major;
  header.minor_version = minor;
  if (minor != 0 || major < 1 || major > 3) {
    return Unimplemented(source_name + " byte 6: .npy format version " + std::to_string(major) + "." +
                         std::to_string(minor) + " is not supported (1.0, 2.0 and 3.0 are)");
  }
  const uint64_t length_offset = r.offset();
  uint64_t header_length = 0;
  if (major == 1) {
    uint16_t len = 0;
    SORUN_RETURN_IF_ERROR(r.ReadU16(&len));
    header_length = len;
  } else {
    uint32_t len = 0;
    SORUN_RETURN_IF_ERROR(r.ReadU32(&len));
    header_length = len;
  }
  if (header_length > r.remaining()) {
    return r.ErrorAt(length_offset, "header length " + std::to_string(header_length) + " exceeds the " +
                                        std::to_string(r.remaining()) + " bytes left in the file");
  }
  const uint64_t text_offset = r.offset();
  const uint8_t* text = nullptr;
  SORUN_RETURN_IF_ERROR(r.ReadBytes(static_cast<size_t>(header_length), &text, "header"));
  DictParser parser(std::string_view(reinterpret_cast<const char*>(text), static_cast<size_t>(header_length)),
                    text_offset, source_name);
  SORUN_RETURN_IF_ERROR(parser.Parse(&header));
  if (header.fortran_order) {
    return Unimplemented(source_name + " byte " + std::to_string(parser.fortran_offset()) +
                         ": header: fortran-order arrays are not supported (save a C-contiguous array)");
  }
  StatusOr<uint64_t> nbytes = ShapeByteSize(header.shape.data(), static_cast<int>(header.shape.size()), header.dtype);
  if (!nbytes.ok()) {
    return DataLoss(source_name + " byte " + std::to_string(parser.shape_offset()) + ": header: shape " +
                    ShapeTuple(header.shape.data(), static_cast<int>(header.shape.size())) + " of '" + header.descr +
                    "' is too large");
  }
  header.data_offset = r.offset();
  header.data_size = *nbytes;
  if (r.remaining() != header.data_size) {
    return r.Error("data is " + std::to_string(r.remaining()) + " bytes but shape " +
                   ShapeTuple(header.shape.data(), static_cast<int>(header.shape.size())) + " of '" + header.descr +
                   "' needs " + std::to_string(header.data_size) +
                   (r.remaining() < header.data_size ? " (truncated)" : " (trailing bytes)"));
  }
  return header;
}

StatusOr<Tensor> ParseNpy(const uint8_t* data, size_t size, const std::string& source_name) {
  SORUN_ASSIGN_OR_RETURN(NpyHeader header, ParseNpyHeader(data, size, source_name));
  SORUN_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Empty(header.shape, header.dtype, CpuDevice()));
  if (header.data_size > 0) {
    std::memcpy(tensor.data(), data + header.data_offset, static_cast<size_t>(header.data_size));
  }
  return tensor;
}

StatusOr<Tensor> ParseNpy(std::string_view bytes, const std::string& source_name) {
  return ParseNpy(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), source_name);
}

StatusOr<Tensor> ReadNpyFile(const std::string& path) {
  SORUN_ASSIGN_OR_RETURN(ObjectPtr<MappedFile> file, MappedFile::Open(path));
  return ParseNpy(file->data(), file->size(), path);
}

StatusOr<std::string> NpyHeaderFor(const DLTensor& tensor) {
  SORUN_RETURN_IF_ERROR(CheckTensor(tensor));
  SORUN_RETURN_IF_ERROR(ShapeByteSize(tensor.shape, tensor.ndim, tensor.dtype).status());
  SORUN_ASSIGN_OR_RETURN(std::string descr, DTypeToNpyDescr(tensor.dtype));
  // numpy.lib.format._write_array_header: sorted keys, reprs, a trailing ", ", then spaces so the
  // first axis can grow in place to GROWTH_AXIS_MAX_DIGITS digits.
  std::string dict =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + ShapeTuple(tensor.shape, tensor.ndim) + ", }";
  if (tensor.ndim > 0) {
    const size_t digits = std::to_string(tensor.shape[0]).size();
    if (digits < kGrowthAxisDigits) dict.append(kGrowthAxisDigits - digits, ' ');
  }
  // _wrap_header: pad with spaces and a newline so the data starts at a multiple of ARRAY_ALIGN.
  // With at most kNpyMaxDims dimensions the header always fits version 1.0's u16 length.
  const size_t hlen = dict.size() + 1;
  const size_t padlen = kArrayAlign - (kMagicSize + 2 + 2 + hlen) % kArrayAlign;
  const size_t total = hlen + padlen;
  if (total > 0xffff) return Internal("npy header of " + std::to_string(total) + " bytes does not fit version 1.0");
  std::string out(kMagic, kMagicSize);
  out += '\x01';
  out += '\0';
  out += static_cast<char>(total & 0xff);
  out += static_cast<char>(total >> 8);
  out += dict;
  out.append(padlen, ' ');
  out += '\n';
  return out;
}

StatusOr<std::string> SerializeNpy(const DLTensor& tensor) {
  SORUN_ASSIGN_OR_RETURN(std::string out, NpyHeaderFor(tensor));
  SORUN_ASSIGN_OR_RETURN(HostBytes bytes, GetHostBytes(tensor));
  if (bytes.size > 0) out.append(reinterpret_cast<const char*>(bytes.data), static_cast<size_t>(bytes.size));
  return out;
}

Status WriteNpyFile(const std::string& path, const DLTensor& tensor) {
  SORUN_ASSIGN_OR_RETURN(std::string header, NpyHeaderFor(tensor));
  SORUN_ASSIGN_OR_RETURN(HostBytes bytes, GetHostBytes(tensor));
  // Never through a link, never blocking on a FIFO, never into a device: open without truncating,
  // check that a regular file was opened, then truncate it.
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
  if (fd < 0) {
    const int err = errno;
    if (err == ELOOP) return FailedPrecondition("cannot create " + path + ": it is a symbolic link");
    return FailedPrecondition("cannot create " + path + ": " + std::strerror(err));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return FailedPrecondition("cannot create " + path + ": it exists and is not a regular file");
  }
  if (::ftruncate(fd, 0) != 0) {
    const int err = errno;
    ::close(fd);
    return FailedPrecondition("cannot create " + path + ": " + std::strerror(err));
  }
  Status status = WriteAll(fd, reinterpret_cast<const uint8_t*>(header.data()), header.size(), path);
  if (status.ok()) status = WriteAll(fd, bytes.data, bytes.size, path);
  if (::close(fd) != 0 && status.ok())
    status = FailedPrecondition("cannot write " + path + ": " + std::strerror(errno));
  return status;
}

}  // namespace sorun
