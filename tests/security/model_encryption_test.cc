// EncryptModel / AesGcmDecryptor with real keys: the round trip through a PlaintextSink, chunked
// writes, the wrong key, altered and truncated ciphertext, bytes that are not encrypted, key files.
#include "security/model_encryption.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "tests/security/security_test_util.h"
#include "tests/util/status_matchers.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace security {
namespace {

// Collects the plaintext and what the hook asked for.
class StringSink : public PlaintextSink {
 public:
  Status Write(const void* data, size_t size) override {
    bytes.append(static_cast<const char*>(data), size);
    ++writes;
    largest_write = std::max(largest_write, size);
    return Status::Ok();
  }
  Status Reserve(size_t size) override {
    reserved = size;
    return Status::Ok();
  }
  std::string bytes;
  size_t reserved = 0;
  int writes = 0;
  size_t largest_write = 0;
};

class FailingSink : public PlaintextSink {
 public:
  Status Write(const void*, size_t) override { return ResourceExhausted("memfd: no space"); }
  Status Reserve(size_t) override { return Status::Ok(); }
};

class ModelEncryptionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("sorun_encryption");
    key_ = testing::WriteAesKeyHex(dir_, "model");
    library_ = testing::ReadFileOrDie(testing::Runfile("testdata/models/mlp.so"));
    auto stored = EncryptModel(library_, key_);
    ASSERT_TRUE(stored.ok()) << stored.status().ToString();
    stored_ = *stored;
    auto hook = AesGcmDecryptor(key_);
    ASSERT_TRUE(hook.ok()) << hook.status().ToString();
    decrypt_ = *hook;
  }

  Status Decrypt(std::string_view stored, StringSink* sink) { return decrypt_(stored, *sink, "model.so"); }

  std::string dir_;
  std::string key_;
  std::string library_;
  std::string stored_;
  DecryptHook decrypt_;
};

TEST_F(ModelEncryptionTest, RoundTrip) {
  ASSERT_EQ(stored_.size(), kEncryptionHeaderBytes + library_.size() + kEncryptionTagBytes);
  EXPECT_TRUE(IsEncryptedModel(stored_));
  EXPECT_FALSE(IsEncryptedModel(library_));
  EXPECT_EQ(stored_.find(library_.substr(0, 64)), std::string::npos);  // not stored in the clear
  StringSink sink;
  Status s = Decrypt(stored_, &sink);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(sink.bytes, library_);
  EXPECT_EQ(sink.reserved, library_.size());
}

TEST_F(ModelEncryptionTest, EveryEncryptionHasItsOwnNonce) {
  auto again = EncryptModel(library_, key_);
  ASSERT_TRUE(again.ok());
  EXPECT_NE(again->substr(0, kEncryptionHeaderBytes), stored_.substr(0, kEncryptionHeaderBytes));
  EXPECT_NE(*again, stored_);
}

TEST_F(ModelEncryptionTest, LargeModelsAreWrittenInChunks) {
  std::string big(3 * kDecryptChunkBytes + 12345, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>((i * 2654435761u) >> 13);
  auto stored = EncryptModel(big, key_);
  ASSERT_TRUE(stored.ok());
  StringSink sink;
  ASSERT_TRUE(Decrypt(*stored, &sink).ok());
  EXPECT_EQ(sink.bytes, big);
  EXPECT_EQ(sink.writes, 4);
  EXPECT_EQ(sink.largest_write, kDecryptChunkBytes);
}

TEST_F(ModelEncryptionTest, EmptyPlaintextRoundTrips) {
  auto stored = EncryptModel("", key_);
  ASSERT_TRUE(stored.ok());
  StringSink sink;
  ASSERT_TRUE(Decrypt(*stored, &sink).ok());
  EXPECT_EQ(sink.bytes, "");
}

TEST_F(ModelEncryptionTest, WrongKeyIsRefused) {
  auto other = AesGcmDecryptor(testing::WriteAesKeyHex(dir_, "other"));
  ASSERT_TRUE(other.ok());
  StringSink sink;
  EXPECT_ERROR((*other)(stored_, sink, "model.so"), StatusCode::kPermissionDenied,
               "model.so: decryption failed: wrong key or the file was altered");
}

TEST_F(ModelEncryptionTest, AlteredBytesAreRefused) {
  // The nonce, the version byte's neighbours, ciphertext at both ends and the middle, the tag.
  for (size_t offset :
       {size_t{9}, size_t{20}, kEncryptionHeaderBytes, stored_.size() / 2, stored_.size() - kEncryptionTagBytes - 1,
        stored_.size() - kEncryptionTagBytes, stored_.size() - 1}) {
    StringSink sink;
    EXPECT_ERROR(Decrypt(testing::FlipByte(stored_, offset), &sink), StatusCode::kPermissionDenied,
                 "model.so: decryption failed: wrong key or the file was altered");
  }
}

TEST_F(ModelEncryptionTest, TruncatedCiphertextIsRefused) {
  for (size_t cut : {size_t{1}, size_t{16}, size_t{17}, stored_.size() / 2}) {
    StringSink sink;
    EXPECT_ERROR(Decrypt(std::string_view(stored_).substr(0, stored_.size() - cut), &sink),
                 StatusCode::kPermissionDenied, "model.so: decryption failed");
  }
  StringSink sink;
  EXPECT_ERROR(Decrypt(std::string_view(stored_).substr(0, 30), &sink), StatusCode::kDataLoss,
               "model.so: truncated encrypted model (30 bytes; header and tag alone are 37)");
}

TEST_F(ModelEncryptionTest, BytesThatAreNotEncryptedAreRefused) {
  StringSink sink;
  EXPECT_ERROR(Decrypt(library_, &sink), StatusCode::kDataLoss, "model.so: not an encrypted sorun model");
  EXPECT_ERROR(Decrypt("", &sink), StatusCode::kDataLoss, "model.so: not an encrypted sorun model");
  std::string future = stored_;
  future[8] = 2;
  EXPECT_ERROR(Decrypt(future, &sink), StatusCode::kDataLoss, "model.so: encrypted model format version 2");
  EXPECT_TRUE(sink.bytes.empty());
}

TEST_F(ModelEncryptionTest, SinkErrorsArePassedOn) {
  FailingSink sink;
  EXPECT_ERROR(decrypt_(stored_, sink, "model.so"), StatusCode::kResourceExhausted, "memfd: no space");
}

TEST_F(ModelEncryptionTest, RawAndHexKeyFilesAreTheSameKey) {
  std::string hex = testing::ReadFileOrDie(key_);
  std::string raw;
  for (size_t i = 0; i < 64; i += 2) raw.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  const std::string raw_path = dir_ + "/raw.key", crlf_path = dir_ + "/crlf.key", bare_path = dir_ + "/bare.key";
  testing::WriteFileOrDie(raw_path, raw);
  testing::WriteFileOrDie(crlf_path, hex.substr(0, 64) + "\r\n");
  testing::WriteFileOrDie(bare_path, hex.substr(0, 64));
  for (const std::string& path : {raw_path, crlf_path, bare_path}) {
    auto hook = AesGcmDecryptor(path);
    ASSERT_TRUE(hook.ok()) << hook.status().ToString();
    StringSink sink;
    EXPECT_TRUE((*hook)(stored_, sink, "model.so").ok()) << path;
    EXPECT_EQ(sink.bytes, library_);
  }
}

TEST_F(ModelEncryptionTest, BadKeyFilesAreInvalidArgumentsNamingTheFile) {
  EXPECT_ERROR(AesGcmDecryptor(dir_ + "/missing.key").status(), StatusCode::kInvalidArgument,
               dir_ + "/missing.key: cannot read the model key file");
  const std::string short_key = dir_ + "/short.key", bad_hex = dir_ + "/bad.key";
  testing::WriteFileOrDie(short_key, "0123456789abcdef\n");
  EXPECT_ERROR(AesGcmDecryptor(short_key).status(), StatusCode::kInvalidArgument,
               short_key + ": 17 bytes (a model key file holds 32 raw bytes or 64 hex digits");
  testing::WriteFileOrDie(bad_hex, std::string(63, 'a') + "g\n");
  EXPECT_ERROR(EncryptModel(library_, bad_hex).status(), StatusCode::kInvalidArgument,
               bad_hex + ": byte 63 is not a hex digit");
}

TEST_F(ModelEncryptionTest, OneDecryptorIsUsedFromManyThreads) {
  std::vector<std::thread> threads;
  std::vector<int> good(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        StringSink sink;
        good[t] += Decrypt(stored_, &sink).ok() && sink.bytes == library_;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int g : good) EXPECT_EQ(g, 10);
}

}  // namespace
}  // namespace security
}  // namespace sorun
