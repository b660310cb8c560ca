// NumPy .npy files (format versions 1.0, 2.0 and 3.0) to and from sorun Tensors, for the `sorun` CLI's
// inputs and outputs.
//
// Format (numpy.lib.format): "\x93NUMPY", major and minor version bytes, the header length (u16 for
// 1.0, u32 for 2.0/3.0, little-endian), then a Python dict literal such as
// "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" padded with spaces and a newline, then
// the C-order array data.
//
// Reading parses the dict robustly (any whitespace, key order, trailing commas, quotes, Python 2 'L'
// suffixes) and accepts the dtypes float16/32/64, int8/16/32/64, uint8/16/32/64 and bool ('|b1') with
// byte order '<', '|', '=' (or none). Big-endian data, Fortran order, structured and other dtypes are
// Unimplemented; anything malformed is DataLoss naming the source, the byte offset and the cause, e.g.
// "x.npy byte 10: header: missing key 'shape'" or "x.npy byte 128: data is 20 bytes but shape (2, 3)
// of '<f4' needs 24". Tensors are created on the CPU with Tensor::Empty (64-byte aligned) and own a
// copy of the data.
//
// Writing produces the bytes numpy.save() would (numpy 1.24): version 1.0, keys in sorted order, room
// to grow the first axis, and data starting at a multiple of 64.
// Tensors on other devices are copied to the host first.
//
// All functions are reentrant; they borrow their inputs only for the duration of the call.
#ifndef SORUN_TOOLS_NPY_H_
#define SORUN_TOOLS_NPY_H_

#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "runtime/tensor.h"

namespace sorun {

// The most dimensions an .npy file may have here (numpy 2 allows 64).
inline constexpr int kNpyMaxDims = 64;

// A parsed .npy header.
struct NpyHeader {
  int major_version = 1;
  int minor_version = 0;
  std::string descr;   // as written, e.g. "<f4"
  DLDataType dtype{};  // its sorun dtype
  bool fortran_order = false;
  std::vector<int64_t> shape;  // () for a scalar
  uint64_t data_offset = 0;    // byte offset of the array data
  uint64_t data_size = 0;      // bytes of array data the shape requires
};

// numpy descr ("<f4", "|u1", "|b1", "=i8") -> DLDataType. Unimplemented for big-endian multi-byte and
// unsupported kinds/sizes; the message names the descr.
StatusOr<DLDataType> NpyDescrToDType(std::string_view descr);
// DLDataType -> the descr numpy writes on a little-endian host ("<f4", "|u1", "|b1").
// Unimplemented for dtypes .npy cannot hold here (bfloat16, vectors, handles, other bit widths).
StatusOr<std::string> DTypeToNpyDescr(DLDataType dtype);

// Parses the header of the .npy image [data, data + size) without touching the array data (beyond
// checking that exactly data_size bytes follow the header). `source_name` names it in errors.
StatusOr<NpyHeader> ParseNpyHeader(const uint8_t* data, size_t size, const std::string& source_name);
// Parses a whole .npy image into a new CPU tensor.
StatusOr<Tensor> ParseNpy(const uint8_t* data, size_t size, const std::string& source_name);
StatusOr<Tensor> ParseNpy(std::string_view bytes, const std::string& source_name);
// Reads the file at `path` (NotFound if it does not exist).
StatusOr<Tensor> ReadNpyFile(const std::string& path);

// The .npy header (magic through padding newline) numpy.save() writes for `tensor`.
// InvalidArgument for malformed or non-compact tensors; Unimplemented for unsupported dtypes.
StatusOr<std::string> NpyHeaderFor(const DLTensor& tensor);
// The whole .npy image of `tensor`.
StatusOr<std::string> SerializeNpy(const DLTensor& tensor);
// Writes `tensor` to `path`, creating it or replacing a regular file's contents. FailedPrecondition
// naming the path when `path` is a symbolic link, a directory, a FIFO, a device or a socket (never
// followed, blocked on or written into).
Status WriteNpyFile(const std::string& path, const DLTensor& tensor);

}  // namespace sorun

#endif  // SORUN_TOOLS_NPY_H_
