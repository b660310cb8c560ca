// Writes the seed corpora of relax_fuzzer and relax_vm_fuzzer (fuzz/make_corpus.sh runs it):
//   relax_fuzzer/     the blob symbols of the real TVM 0.27 exports (testdata/relax/*.so) and
//                     hand-assembled containers and executables of every generation and tag dialect
//                     (tests/relax/relax_fixtures.h), each behind its selector byte (fuzz_targets_relax.cc);
//   relax_vm_fuzzer/  the root executable of every real export (TVM 0.27 mlp, cnn, dyn_batch, bool_if,
//                     prim_scale, sort_topk, tir_par; TVM 0.16 legacy_mlp) behind the selector of its own
//                     kernel library, and a hand-assembled
//                     executable that calls builtins only (If / Goto, a VM -> VM call, the shape heap with a
//                     dynamic input dimension, storage, views, tuples) in both constant dialects.
// Usage: make_relax_corpus <corpus_root> <testdata/relax directory>
#include <cstdio>
#include <string>

#include "relax/library_blob.h"
#include "runtime/registry_keys.h"
#include "tests/relax/relax_fixtures.h"

namespace {

namespace t = sorun::relax::testing;
using t::Const;
using t::FixtureExecutable;
using t::Func;
using t::Imm;
using t::kVm;
using t::kVoid;
using t::Reg;

bool Write(const std::string& path, char selector, const std::string& bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  const std::string all = std::string(1, selector) + bytes;
  const bool ok = std::fwrite(all.data(), 1, all.size(), f) == all.size();
  return std::fclose(f) == 0 && ok;
}

// The root executable's payload inside `symbol` of the export at `path` (empty when it does not parse).
std::string RootPayload(const std::string& path, const char* symbol) {
  const std::string bytes = t::ReadSymbolBytes(path, symbol);
  auto blob = sorun::relax::ParseLibraryBlob(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), symbol);
  if (!blob.ok()) return "";
  auto root = sorun::relax::RootExecutable(*blob);
  if (!root.ok()) return "";
  return std::string(reinterpret_cast<const char*>((*root)->payload), (*root)->payload_size);
}

// main(x: f32[1, n]) with builtins only: checks x, stores n in the shape heap, makes [1, n], allocates
// storage and a [1, 4] view, reshapes it to [4], branches on read_if_cond(1) to a VM call of `helper`
// (the other arm copies), and returns (tuple_getitem(make_tuple(..), 0), view): two outputs.
FixtureExecutable ControlFlow(bool ffi_tags) {
  FixtureExecutable e;
  e.ffi_tags = ffi_tags;
  e.functions = {
      {1, "main", 0, 16, 1, 8, {"x"}},
      {1, "helper", 16, 18, 1, 2, {"y"}},
      {0, "vm.builtin.check_tensor_info"},  // 2
      {0, "vm.builtin.match_shape"},        // 3
      {0, "vm.builtin.alloc_storage"},      // 4
      {0, "vm.builtin.alloc_tensor"},       // 5
      {0, "vm.builtin.make_tuple"},         // 6
      {0, "vm.builtin.tuple_getitem"},      // 7
      {0, "vm.builtin.read_if_cond"},       // 8
      {0, "vm.builtin.reshape"},            // 9
      {0, "vm.builtin.copy"},               // 10
      {0, "vm.builtin.alloc_shape_heap"},   // 11
      {0, "vm.builtin.make_shape"},         // 12
  };
  e.AddDataType(2 /* kDLFloat */, 32);   // c[0]
  e.AddString("ErrorContext(param=x)");  // c[1]
  e.AddShape({64});                      // c[2]: storage bytes
  e.AddShape({1, 4});                    // c[3]
  e.AddShape({4});                       // c[4]
  e.AddString("global");                 // c[5]
  e.instructions = {
      {1, kVoid, 2, 4, Reg(0), Imm(2), Const(0), Const(1)},
      {1, 1, 11, 2, Reg(kVm), Imm(2)},
      {1, kVoid, 3, 8, Reg(0), Reg(1), Imm(2), Imm(0), Imm(1), Imm(1), Imm(0), Const(1)},
      {1, 2, 12, 6, Reg(1), Imm(2), Imm(0), Imm(1), Imm(1), Imm(0)},
      {1, 3, 4, 5, Reg(kVm), Const(2), Imm(0), Const(0), Const(5)},
      {1, 4, 5, 4, Reg(3), Imm(0), Const(3), Const(0)},
      {1, 5, 9, 2, Reg(4), Const(4)},
      {1, 6, 8, 1, Imm(1)},
      {4, 6, 3},  // If r6: 9, else 11
      {1, 7, 1, 1, Reg(5)},
      {3, 2},  // Goto 12
      {1, 7, 10, 1, Reg(5)},
      {1, 6, 6, 2, Reg(7), Reg(4)},
      {1, 5, 7, 2, Reg(6), Imm(0)},
      {1, 6, 6, 2, Reg(5), Reg(4)},
      {2, 6},
      // helper(y)
      {1, 1, 10, 1, Reg(0)},
      {2, 1},
  };
  return e;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: make_relax_corpus <corpus_root> <testdata/relax directory>\n");
    return 2;
  }
  const std::string out = std::string(argv[1]) + "/relax_fuzzer";
  const std::string vm_out = std::string(argv[1]) + "/relax_vm_fuzzer";
  const std::string relax = argv[2];
  const std::string ffi_v1 = FixtureExecutable::Small(true, false).Serialize();
  const std::string enum_v1 = FixtureExecutable::Small(false, false).Serialize();
  using sorun::keys::kSymbolDevMblob;
  using sorun::keys::kSymbolFfiLibraryBinV22;
  bool ok = true;
  ok &= Write(out + "/tvm027_mlp.bin", 2, t::ReadSymbolBytes(relax + "/mlp.so", kSymbolFfiLibraryBinV22));
  ok &= Write(out + "/tvm027_dyn_batch.bin", 2, t::ReadSymbolBytes(relax + "/dyn_batch.so", kSymbolFfiLibraryBinV22));
  ok &= Write(out + "/tree_first_small.bin", 2, t::WrapTreeFirst(FixtureExecutable::Small(true, true).Serialize()));
  ok &= Write(out + "/legacy_dev_mblob_small.bin", 0, t::WrapLegacy(enum_v1, "relax.Executable"));
  ok &= Write(out + "/legacy_ffi021_small.bin", 1, t::WrapLegacy(ffi_v1, "relax.VMExecutable"));
  ok &= Write(out + "/payload_ffi_v1.bin", 3, ffi_v1);
  ok &= Write(out + "/payload_enum_v1.bin", 7, enum_v1);
  // relax_vm_fuzzer: selector bits 0-1 and 4 pick the kernel library (fuzz_targets_relax.cc's kVmFixtures).
  struct Export {
    const char* name;
    const char* symbol;
    char selector;
  };
  for (const Export& e :
       {Export{"mlp", kSymbolFfiLibraryBinV22, 0}, Export{"cnn", kSymbolFfiLibraryBinV22, 1},
        Export{"dyn_batch", kSymbolFfiLibraryBinV22, 2 | 4 /* batch 2 */}, Export{"legacy_mlp", kSymbolDevMblob, 3},
        Export{"bool_if", kSymbolFfiLibraryBinV22, 0x10}, Export{"prim_scale", kSymbolFfiLibraryBinV22, 0x11},
        Export{"sort_topk", kSymbolFfiLibraryBinV22, 0x12}, Export{"tir_par", kSymbolFfiLibraryBinV22, 0x13}}) {
    const std::string payload = RootPayload(relax + "/" + e.name + ".so", e.symbol);
    ok &= !payload.empty() && Write(vm_out + "/" + e.name + ".bin", e.selector, payload);
  }
  ok &= Write(vm_out + "/control_flow_ffi.bin", 0 | 8 /* n = 3 */, ControlFlow(true).Serialize());
  ok &= Write(vm_out + "/control_flow_enum.bin", 3, ControlFlow(false).Serialize());
  if (!ok) {
    std::fprintf(stderr, "make_relax_corpus: cannot read the exports under %s or write under %s\n", relax.c_str(),
                 argv[1]);
    return 1;
  }
  return 0;
}
