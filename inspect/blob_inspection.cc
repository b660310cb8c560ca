#include "inspect/blob_inspection.h"

#include <utility>

#include "base/xxhash64.h"
#include "runtime/data_type.h"
#include "serialization/blob_checksum.h"

namespace sorun {

void InspectChecksum(const ModelFile& file, const uint8_t* blob, uint64_t blob_bytes, ChecksumInfo* out) {
  const ElfSymbolData* record = file.checksum();
  if (record == nullptr || blob == nullptr) return;
  out->present = true;
  auto fields = file.ReadChecksumRecord();
  if (fields.ok()) {
    out->blob_bytes = fields->blob_bytes;
    out->hash = Xxh64ToHex(fields->hash);
  }
  Status s = VerifyBlobChecksum(blob, blob_bytes, record->data, record->size);
  out->valid = s.ok();
  if (!s.ok()) out->error = s.message();
}

Status InspectDeviceModule(size_t index, const std::string& type_key, BinaryReader& reader, PayloadGrammar grammar,
                           InspectedDeviceModule* out) {
  DeviceModulePayload payload;
  SORUN_RETURN_IF_ERROR(ReadDeviceModulePayload(reader, type_key.c_str(), &payload, grammar));
  out->module_index = index;
  out->type_key = type_key;
  out->fmt = payload.fmt;
  out->code_bytes = payload.data.size();
  for (const auto& [name, info] : payload.functions) {
    InspectedKernel k;
    k.name = name;
    for (DLDataType t : info.arg_types) k.arg_types.push_back(DTypeToString(t));
    k.launch_param_tags = info.launch_param_tags;
    out->kernels.push_back(std::move(k));
  }
  return Status::Ok();
}

}  // namespace sorun
