// The blob integrity record: sorun's exporter writes a 32-byte symbol `__sorun_blob_checksum` next to
// `__tvm_dev_mblob` (TVM ignores it):
//   char magic[8] = "SORUNCK1"; u64 algorithm (1 = XXH64, seed 0); u64 blob_bytes; u64 hash
// where blob_bytes and hash cover the whole blob symbol (8-byte length prefix + payload), all little
// endian. This file is the record's one home: writing it (MakeBlobChecksumRecord), decoding it
// (DecodeBlobChecksumRecord: the loader, `sorun inspect` / `verify` and `sorun pack` all read it
// through here) and checking it against a blob (VerifyBlobChecksum). The loader verifies it when
// present and asked (LoadOptions::verify_checksum); `sorun verify` checks it without loading.
// Pure functions; thread-safe.
#ifndef SORUN_SERIALIZATION_BLOB_CHECKSUM_H_
#define SORUN_SERIALIZATION_BLOB_CHECKSUM_H_

#include <cstdint>
#include <string>

#include "base/status.h"

namespace sorun {

inline constexpr size_t kBlobChecksumRecordBytes = 32;

// The fields of an integrity record as stored: decoding checks none of them (VerifyBlobChecksum does).
struct BlobChecksumRecord {
  bool magic_ok = false;    // the first 8 bytes are "SORUNCK1"
  uint64_t algorithm = 0;   // 1 = XXH64, seed 0
  uint64_t blob_bytes = 0;  // bytes the hash covers (length prefix + payload)
  uint64_t hash = 0;
};

// The record for `blob` (prefix + payload).
std::string MakeBlobChecksumRecord(const std::string& blob);
// Decodes the record at `record`, of which `record_size` bytes may be read (bytes past the 32 are
// ignored). DataLoss "__sorun_blob_checksum holds N bytes, expected 32" when fewer than 32 may be read.
StatusOr<BlobChecksumRecord> DecodeBlobChecksumRecord(const void* record, uint64_t record_size);
// Checks `record` (`record_size` bytes, 0 = unknown: 32 are read) against the blob bytes. DataLoss on
// a malformed record, a size mismatch or a hash mismatch, with both hashes in the message.
Status VerifyBlobChecksum(const uint8_t* blob, uint64_t blob_bytes, const void* record, uint64_t record_size);

}  // namespace sorun

#endif  // SORUN_SERIALIZATION_BLOB_CHECKSUM_H_
