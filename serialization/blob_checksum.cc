#include "serialization/blob_checksum.h"

#include <cstring>

#include "base/xxhash64.h"

namespace sorun {
namespace {

constexpr char kMagic[8] = {'S', 'O', 'R', 'U', 'N', 'C', 'K', '1'};
constexpr uint64_t kAlgorithmXxh64 = 1;

void PutU64(std::string* s, uint64_t v) {
  for (int i = 0; i < 8; ++i) s->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t GetU64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

}  // namespace

std::string MakeBlobChecksumRecord(const std::string& blob) {
  std::string record(kMagic, sizeof(kMagic));
  PutU64(&record, kAlgorithmXxh64);
  PutU64(&record, blob.size());
  PutU64(&record, Xxh64(blob.data(), blob.size(), 0));
  return record;
}

StatusOr<BlobChecksumRecord> DecodeBlobChecksumRecord(const void* record, uint64_t record_size) {
  if (record_size < kBlobChecksumRecordBytes) {
    return DataLoss("__sorun_blob_checksum holds " + std::to_string(record_size) + " bytes, expected 32");
  }
  const uint8_t* r = static_cast<const uint8_t*>(record);
  BlobChecksumRecord fields;
  fields.magic_ok = std::memcmp(r, kMagic, sizeof(kMagic)) == 0;
  fields.algorithm = GetU64(r + 8);
  fields.blob_bytes = GetU64(r + 16);
  fields.hash = GetU64(r + 24);
  return fields;
}

Status VerifyBlobChecksum(const uint8_t* blob, uint64_t blob_bytes, const void* record, uint64_t record_size) {
  SORUN_ASSIGN_OR_RETURN(const BlobChecksumRecord fields,
                         DecodeBlobChecksumRecord(record, record_size == 0 ? kBlobChecksumRecordBytes : record_size));
  if (!fields.magic_ok) return DataLoss("__sorun_blob_checksum has a bad magic");
  if (fields.algorithm != kAlgorithmXxh64) {
    return DataLoss("__sorun_blob_checksum uses unknown algorithm " + std::to_string(fields.algorithm));
  }
  if (fields.blob_bytes != blob_bytes) {
    return DataLoss("blob checksum mismatch: the record covers " + std::to_string(fields.blob_bytes) +
                    " bytes but __tvm_dev_mblob holds " + std::to_string(blob_bytes));
  }
  uint64_t actual = Xxh64(blob, static_cast<size_t>(blob_bytes), 0);
  if (fields.hash != actual) {
    return DataLoss("blob checksum mismatch: __tvm_dev_mblob was modified or corrupted (stored xxh64 " +
                    Xxh64ToHex(fields.hash) + ", computed " + Xxh64ToHex(actual) + ")");
  }
  return Status::Ok();
}

}  // namespace sorun
