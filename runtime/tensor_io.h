// Tensor serialization in TVM's formats: one NDArray (docs/spec/FORMAT.md section 5.1) and the params
// dictionary (section 5.2) used by params files and GraphExecutor.load_params.
//
// Reading can be zero-copy: when the reader has an owner (e.g. a mapped shared library) and a
// tensor's data is 64-byte aligned in memory, the Tensor points into the input and keeps the owner
// alive; such tensors are marked read-only. Otherwise the data is copied once into an aligned buffer.
// Writing can insert alignment pads: extra entries named "__sorun_pad_NNNNNN" (uint8 vectors of 0-63
// bytes) that place every real tensor's data at a 64-byte boundary of the final artifact. TVM skips
// names that are not graph inputs, so padded files stay loadable by TVM. Thread-compatible.
#ifndef SORUN_RUNTIME_TENSOR_IO_H_
#define SORUN_RUNTIME_TENSOR_IO_H_

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "format/binary_reader.h"
#include "format/binary_writer.h"
#include "runtime/tensor.h"

namespace sorun {

inline constexpr uint64_t kNDArrayMagic = 0xDD5E40F096B4A13Full;
inline constexpr uint64_t kNDArrayListMagic = 0xF7E58D4F05049CB7ull;
inline constexpr char kAlignmentPadPrefix[] = "__sorun_pad_";

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// True for names in the pads' reserved namespace (the prefix): writers refuse such param names and
// graphs refuse such input names, so no real tensor is ever taken for a pad.
bool IsAlignmentPadName(std::string_view name);

// The header of one NDArray plus where its data is, without touching the data (for inspection).
struct NDArrayHeader {
  DLDataType dtype{kDLFloat, 32, 1};
  std::vector<int64_t> shape;
  uint64_t data_offset = 0;  // absolute offset of the data in the reader's input
  uint64_t data_bytes = 0;
  const uint8_t* data = nullptr;
};
// Reads and validates an NDArray header and skips its data.
Status ReadNDArrayHeader(BinaryReader& reader, NDArrayHeader* header);
// True when `name` and `header` are exactly what the writer emits as a pad: "__sorun_pad_" + 6
// digits, a 1-D uint8 array of 0-63 bytes. Readers skip only these; anything else is a real tensor.
bool IsAlignmentPad(std::string_view name, const NDArrayHeader& header);

// Reads one NDArray. `allow_zero_copy`: share aligned data with reader.owner().
StatusOr<Tensor> ReadNDArray(BinaryReader& reader, bool allow_zero_copy);
// Writes a compact CPU tensor.
Status WriteNDArray(const DLTensor& tensor, BinaryWriter* writer);

// Reads a params dictionary (magic, reserved, names, count, arrays). Alignment pads are dropped. Every
// error is DataLoss "<section> byte <offset>: ...", a tensor's naming it ("... byte 96: param 'w': bad
// NDArray magic ..."); a name given twice is refused (RecordParamName). `offsets` (optional) receives the
// offset of each returned tensor's NDArray, for later messages about it (shared_weights.h).
StatusOr<NamedTensors> ReadParamsDict(BinaryReader& reader, bool allow_zero_copy,
                                      std::vector<uint64_t>* offsets = nullptr);
// The rule every params reader applies (params files and the factory payload): a name is given once.
// Records `name`, whose NDArray starts at `offset`, in `first_offsets`; DataLoss "<section> byte
// <offset>: param 'p' is given twice (first at byte <first>)" when it was recorded before.
Status RecordParamName(const BinaryReader& reader, const std::string& name, uint64_t offset,
                       std::map<std::string, uint64_t>* first_offsets);
// Writes a params dictionary; with `align_data`, pads make every tensor's data 64-byte aligned
// relative to writer->origin().
Status WriteParamsDict(const NamedTensors& params, BinaryWriter* writer, bool align_data);

// The factory payload's params section (docs/spec/FORMAT.md section 7.2): u64 count, names vector, arrays
// — laid out with alignment pads when `align_data`. Shared by the factory writer and tests.
Status WriteNamedTensorSection(const NamedTensors& params, BinaryWriter* writer, bool align_data, bool leading_count);

// Size in bytes of the NDArray header for `ndim` dimensions (data follows).
inline uint64_t NDArrayHeaderBytes(int ndim) { return 8 + 8 + 8 + 4 + 4 + 8ull * ndim + 8; }

}  // namespace sorun

#endif  // SORUN_RUNTIME_TENSOR_IO_H_
