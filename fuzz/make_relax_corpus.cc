// Writes the seed corpus of relax_fuzzer (fuzz/make_corpus.sh runs it): the blob symbols of the real
// TVM 0.27 exports (testdata/relax/*.so) and hand-assembled containers and executables of every
// generation and tag dialect (tests/relax/relax_fixtures.h), each behind its selector byte
// (fuzz_targets_relax.cc). Usage: make_relax_corpus <out_dir> <mlp.so> <dyn_batch.so>
#include <cstdio>
#include <string>

#include "runtime/registry_keys.h"
#include "tests/relax/relax_fixtures.h"

namespace {

bool Write(const std::string& path, char selector, const std::string& bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  const std::string all = std::string(1, selector) + bytes;
  const bool ok = std::fwrite(all.data(), 1, all.size(), f) == all.size();
  return std::fclose(f) == 0 && ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: make_relax_corpus <out_dir> <mlp.so> <dyn_batch.so>\n");
    return 2;
  }
  namespace t = sorun::relax::testing;
  using t::FixtureExecutable;
  const std::string out = argv[1];
  const std::string ffi_v1 = FixtureExecutable::Small(true, false).Serialize();
  const std::string enum_v1 = FixtureExecutable::Small(false, false).Serialize();
  bool ok = true;
  ok &= Write(out + "/tvm027_mlp.bin", 2, t::ReadSymbolBytes(argv[2], sorun::keys::kSymbolFfiLibraryBinV22));
  ok &= Write(out + "/tvm027_dyn_batch.bin", 2, t::ReadSymbolBytes(argv[3], sorun::keys::kSymbolFfiLibraryBinV22));
  ok &= Write(out + "/tree_first_small.bin", 2, t::WrapTreeFirst(FixtureExecutable::Small(true, true).Serialize()));
  ok &= Write(out + "/legacy_dev_mblob_small.bin", 0, t::WrapLegacy(enum_v1, "relax.Executable"));
  ok &= Write(out + "/legacy_ffi021_small.bin", 1, t::WrapLegacy(ffi_v1, "relax.VMExecutable"));
  ok &= Write(out + "/payload_ffi_v1.bin", 3, ffi_v1);
  ok &= Write(out + "/payload_enum_v1.bin", 7, enum_v1);
  if (!ok) {
    std::fprintf(stderr, "make_relax_corpus: cannot write under %s\n", out.c_str());
    return 1;
  }
  return 0;
}
