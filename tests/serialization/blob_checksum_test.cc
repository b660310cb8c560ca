// The integrity record's one home: the 32 bytes written by MakeBlobChecksumRecord, assembled here by
// hand from docs/format.md, decoded by DecodeBlobChecksumRecord (the fields as stored, nothing
// checked) and checked by VerifyBlobChecksum (magic, algorithm, covered bytes, hash).
#include "serialization/blob_checksum.h"

#include <gtest/gtest.h>

#include <string>

#include "base/xxhash64.h"
#include "tests/util/status_matchers.h"

namespace sorun {
namespace {

std::string U64(uint64_t v) {
  std::string s;
  for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return s;
}

// "SORUNCK1", algorithm, blob bytes, hash: the layout docs/format.md gives.
std::string Record(const std::string& magic, uint64_t algorithm, uint64_t blob_bytes, uint64_t hash) {
  return magic + U64(algorithm) + U64(blob_bytes) + U64(hash);
}

const uint8_t* Bytes(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

const std::string kBlob = U64(5) + "hello";

TEST(BlobChecksumTest, MakeWritesTheDocumentedLayout) {
  const std::string record = MakeBlobChecksumRecord(kBlob);
  EXPECT_EQ(record.size(), kBlobChecksumRecordBytes);
  EXPECT_EQ(record, Record("SORUNCK1", 1, kBlob.size(), Xxh64(kBlob.data(), kBlob.size(), 0)));
}

TEST(BlobChecksumTest, DecodeReadsTheFieldsAsStored) {
  auto fields = DecodeBlobChecksumRecord(MakeBlobChecksumRecord(kBlob).data(), kBlobChecksumRecordBytes);
  ASSERT_TRUE(fields.ok()) << fields.status().ToString();
  EXPECT_TRUE(fields->magic_ok);
  EXPECT_EQ(fields->algorithm, 1u);
  EXPECT_EQ(fields->blob_bytes, kBlob.size());
  EXPECT_EQ(fields->hash, Xxh64(kBlob.data(), kBlob.size(), 0));
}

TEST(BlobChecksumTest, DecodeChecksNothingButTheSize) {
  // A record with a wrong magic and an unknown algorithm still decodes: inspection shows what is stored.
  const std::string odd = Record("XXXXXXXX", 7, 123, 0x1122334455667788ull) + "trailing bytes are ignored";
  auto fields = DecodeBlobChecksumRecord(odd.data(), odd.size());
  ASSERT_TRUE(fields.ok()) << fields.status().ToString();
  EXPECT_FALSE(fields->magic_ok);
  EXPECT_EQ(fields->algorithm, 7u);
  EXPECT_EQ(fields->blob_bytes, 123u);
  EXPECT_EQ(fields->hash, 0x1122334455667788ull);
}

TEST(BlobChecksumTest, DecodeRefusesAShortRecord) {
  const std::string record = MakeBlobChecksumRecord(kBlob);
  EXPECT_ERROR(DecodeBlobChecksumRecord(record.data(), 8).status(), StatusCode::kDataLoss,
               "__sorun_blob_checksum holds 8 bytes, expected 32");
  EXPECT_ERROR(DecodeBlobChecksumRecord(record.data(), 0).status(), StatusCode::kDataLoss, "holds 0 bytes");
}

TEST(BlobChecksumTest, VerifyAcceptsTheRecordOfTheBlob) {
  const std::string record = MakeBlobChecksumRecord(kBlob);
  EXPECT_TRUE(VerifyBlobChecksum(Bytes(kBlob), kBlob.size(), record.data(), record.size()).ok());
  // Size 0: unknown, the 32 bytes are read.
  EXPECT_TRUE(VerifyBlobChecksum(Bytes(kBlob), kBlob.size(), record.data(), 0).ok());
}

TEST(BlobChecksumTest, VerifyNamesWhatIsWrong) {
  const uint64_t n = kBlob.size();
  const uint64_t hash = Xxh64(kBlob.data(), kBlob.size(), 0);
  const std::string good = MakeBlobChecksumRecord(kBlob);
  EXPECT_ERROR(VerifyBlobChecksum(Bytes(kBlob), n, good.data(), 31), StatusCode::kDataLoss, "holds 31 bytes");
  const std::string magic = Record("SORUNCK2", 1, n, hash);
  EXPECT_ERROR(VerifyBlobChecksum(Bytes(kBlob), n, magic.data(), magic.size()), StatusCode::kDataLoss, "bad magic");
  const std::string algorithm = Record("SORUNCK1", 2, n, hash);
  EXPECT_ERROR(VerifyBlobChecksum(Bytes(kBlob), n, algorithm.data(), algorithm.size()), StatusCode::kDataLoss,
               "unknown algorithm 2");
  EXPECT_ERROR(VerifyBlobChecksum(Bytes(kBlob), n - 1, good.data(), good.size()), StatusCode::kDataLoss,
               "the record covers 13 bytes but __tvm_dev_mblob holds 12");
  const std::string modified = U64(5) + "jello";
  EXPECT_ERROR(VerifyBlobChecksum(Bytes(modified), n, good.data(), good.size()), StatusCode::kDataLoss,
               "modified or corrupted", "stored xxh64 " + Xxh64ToHex(hash));
}

}  // namespace
}  // namespace sorun
