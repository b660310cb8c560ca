// The blob integrity record: sorun's exporter writes a 32-byte symbol `__sorun_blob_checksum` next to
// `__tvm_dev_mblob` (TVM ignores it):
//   char magic[8] = "SORUNCK1"; u64 algorithm (1 = XXH64, seed 0); u64 blob_bytes; u64 hash
// where blob_bytes and hash cover the whole blob symbol (8-byte length prefix + payload), all little
// endian. The loader verifies it when present (LoadOptions::verify_checksum, SORUN_VERIFY_CHECKSUM=0
// to skip); `sorun verify` checks it without loading. Pure functions; thread-safe.
#ifndef SORUN_SERIALIZATION_BLOB_CHECKSUM_H_
#define SORUN_SERIALIZATION_BLOB_CHECKSUM_H_

#include <cstdint>
#include <string>

#include "base/status.h"

namespace sorun {

inline constexpr size_t kBlobChecksumRecordBytes = 32;

// The record for `blob` (prefix + payload).
std::string MakeBlobChecksumRecord(const std::string& blob);
// Checks `record` (`record_size` bytes, 0 = unknown) against the blob bytes. DataLoss on a malformed
// record, a size mismatch or a hash mismatch, with both hashes in the message.
Status VerifyBlobChecksum(const uint8_t* blob, uint64_t blob_bytes, const void* record, uint64_t record_size);

}  // namespace sorun

#endif  // SORUN_SERIALIZATION_BLOB_CHECKSUM_H_
