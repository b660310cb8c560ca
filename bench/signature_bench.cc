// What the optional load hooks of //security cost on a large model (docs/security.md "Cost"):
// Ed25519 verification and AES-256-GCM decryption of a FILE (or N MiB of pseudo-random bytes written to
// a temporary file), against reading the same bytes from the page cache and the XXH64 integrity check,
// in the same run. Wall-clock medians of --repeat runs; /proc/loadavg before and after.
//
//   bazel run -c opt //bench:signature_bench -- [FILE | --synthetic MiB] [--repeat N]
#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "base/xxhash64.h"
#include "security/model_encryption.h"
#include "security/model_signature.h"

namespace {

double NowMs() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string LoadAverage() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return a + " " + b + " " + c;
}

std::string ReadWhole(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) std::exit((std::perror(path.c_str()), 1));
  const off_t size = ::lseek(fd, 0, SEEK_END);
  std::string out(static_cast<size_t>(size < 0 ? 0 : size), '\0');  // sized once, as the loader's copy is
  size_t done = 0;
  for (ssize_t n; done < out.size() && (n = ::pread(fd, out.data() + done, out.size() - done, done)) > 0;) {
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  out.resize(done);
  return out;
}

void WriteWhole(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f) std::exit((std::fprintf(stderr, "cannot write %s\n", path.c_str()), 1));
}

double MedianMs(int repeat, const std::function<void()>& fn) {
  std::vector<double> times;
  for (int i = 0; i < repeat; ++i) {
    const double t0 = NowMs();
    fn();
    times.push_back(NowMs() - t0);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

class NullSink : public sorun::PlaintextSink {
 public:
  sorun::Status Write(const void* data, size_t size) override {
    checksum_ ^= static_cast<const unsigned char*>(data)[size - 1];  // touch the plaintext
    return sorun::Status::Ok();
  }
  sorun::Status Reserve(size_t) override { return sorun::Status::Ok(); }
  unsigned checksum_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  std::string file;
  size_t synthetic_mib = 256;
  int repeat = 5;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--synthetic" && i + 1 < argc) {
      synthetic_mib = std::strtoul(argv[++i], nullptr, 10);
    } else if (a == "--repeat" && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else {
      file = a;
    }
  }
  const char* tmp = std::getenv("TMPDIR");
  const std::string dir = tmp != nullptr ? tmp : "/tmp";
  const std::string stem = dir + "/sorun_signature_bench_" + std::to_string(::getpid());
  if (file.empty()) {
    std::string bytes(synthetic_mib << 20, '\0');
    RAND_bytes(reinterpret_cast<unsigned char*>(bytes.data()),
               static_cast<int>(std::min<size_t>(bytes.size(), 1 << 20)));
    for (size_t i = 1 << 20; i < bytes.size(); ++i) bytes[i] = static_cast<char>(bytes[i - (1 << 20)] * 31 + i);
    file = stem + ".bin";
    WriteWhole(file, bytes);
  }
  // Keys: a fresh Ed25519 pair and AES key, in temporary files.
  EVP_PKEY* key = EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519");
  const std::string priv = stem + ".pem", pub = stem + ".pub.pem", aes = stem + ".key";
  FILE* f1 = std::fopen(priv.c_str(), "wb");
  FILE* f2 = std::fopen(pub.c_str(), "wb");
  PEM_write_PrivateKey(f1, key, nullptr, nullptr, 0, nullptr, nullptr);
  PEM_write_PUBKEY(f2, key);
  std::fclose(f1);
  std::fclose(f2);
  EVP_PKEY_free(key);
  unsigned char raw[32];
  RAND_bytes(raw, sizeof(raw));
  WriteWhole(aes, std::string(reinterpret_cast<char*>(raw), sizeof(raw)));

  const std::string library = ReadWhole(file);  // also warms the page cache
  auto signed_library = sorun::security::SignLibrary(library, priv);
  auto verifier = sorun::security::Ed25519Verifier(pub);
  auto stored = sorun::security::EncryptModel(*signed_library, aes);
  auto decrypt = sorun::security::AesGcmDecryptor(aes);
  if (!signed_library.ok() || !verifier.ok() || !stored.ok() || !decrypt.ok()) {
    std::fprintf(stderr, "setup failed\n");
    return 1;
  }
  const std::string load_before = LoadAverage();
  size_t sink = 0;
  const double read_ms = MedianMs(repeat, [&] { sink += ReadWhole(file).size(); });
  const double xxh_ms = MedianMs(repeat, [&] { sink += sorun::Xxh64(library.data(), library.size()) & 1; });
  const double verify_ms = MedianMs(repeat, [&] {
    if (!(*verifier)(*signed_library, "bench").ok()) std::exit((std::fprintf(stderr, "verify failed\n"), 1));
  });
  NullSink null_sink;
  const double decrypt_ms = MedianMs(repeat, [&] {
    if (!(*decrypt)(*stored, null_sink, "bench").ok()) std::exit((std::fprintf(stderr, "decrypt failed\n"), 1));
  });
  const double mib = static_cast<double>(library.size()) / (1 << 20);
  std::printf("file: %s (%.1f MiB), median of %d runs, load average before: %s, after: %s\n", file.c_str(), mib, repeat,
              load_before.c_str(), LoadAverage().c_str());
  std::printf("%-34s %10s %10s %8s\n", "step", "ms", "MiB/s", "x read");
  auto row = [&](const char* name, double ms) {
    std::printf("%-34s %10.1f %10.0f %8.2f\n", name, ms, mib / (ms / 1000), ms / read_ms);
  };
  row("read (page cache, pread(2))", read_ms);
  row("XXH64 (integrity record)", xxh_ms);
  row("Ed25519 verify (--public-key)", verify_ms);
  row("AES-256-GCM decrypt (--key)", decrypt_ms);
  volatile size_t keep = sink + null_sink.checksum_;  // the timed work is not optimised away
  (void)keep;
  for (const std::string& p : {priv, pub, aes, stem + ".bin"}) ::unlink(p.c_str());
  return 0;
}
