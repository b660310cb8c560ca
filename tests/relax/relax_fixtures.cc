#include "tests/relax/relax_fixtures.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "format/binary_writer.h"
#include "inspect/elf_reader.h"

namespace sorun {
namespace relax {
namespace testing {
namespace {

int64_t Word(int64_t kind, int64_t value) {
  return static_cast<int64_t>((static_cast<uint64_t>(kind) << 56) |
                              (static_cast<uint64_t>(value) & ((uint64_t{1} << 56) - 1)));
}

}  // namespace

int64_t Reg(int64_t r) { return Word(0, r); }
int64_t Imm(int64_t v) { return Word(1, v); }
int64_t Const(int64_t c) { return Word(2, c); }
int64_t Func(int64_t f) { return Word(3, f); }

void FixtureExecutable::AddDataType(uint8_t code, uint8_t bits) {
  BinaryWriter w;
  w.WriteI32(ffi_tags ? 5 : 1);
  w.WriteDataType(DLDataType{code, bits, 1});
  constant_bytes += w.bytes();
  ++n_constants;
}

void FixtureExecutable::AddString(const std::string& s) {
  BinaryWriter w;
  w.WriteI32(ffi_tags ? 65 : 3);
  w.WriteString(s);
  constant_bytes += w.bytes();
  ++n_constants;
}

void FixtureExecutable::AddTensorF32(const std::vector<int64_t>& shape, const std::vector<float>& values) {
  BinaryWriter w;
  w.WriteI32(ffi_tags ? 70 : 0);
  w.WriteU64(0xDD5E40F096B4A13FULL);
  w.WriteU64(0);
  w.WriteDevice(DLDevice{kDLCPU, 0});
  w.WriteI32(static_cast<int32_t>(shape.size()));
  w.WriteDataType(DLDataType{kDLFloat, 32, 1});
  for (int64_t d : shape) w.WriteI64(d);
  w.WriteI64(static_cast<int64_t>(values.size() * 4));
  w.WriteBytes(values.data(), values.size() * 4);
  constant_bytes += w.bytes();
  ++n_constants;
}

void FixtureExecutable::AddShape(const std::vector<int64_t>& dims) {
  BinaryWriter w;
  w.WriteI32(ffi_tags ? 69 : 2);
  w.WriteU64(dims.size());
  for (int64_t d : dims) w.WriteI64(d);
  constant_bytes += w.bytes();
  ++n_constants;
}

void FixtureExecutable::AddInt(int64_t v) {
  BinaryWriter w;
  w.WriteI32(ffi_tags ? 1 : 4);
  w.WriteI64(v);
  constant_bytes += w.bytes();
  ++n_constants;
}

void FixtureExecutable::AddFloat(double v) {
  BinaryWriter w;
  w.WriteI32(ffi_tags ? 3 : 5);
  w.WriteF64(v);
  constant_bytes += w.bytes();
  ++n_constants;
}

FixtureExecutable FixtureExecutable::Small(bool ffi_tags, bool v2) {
  FixtureExecutable e;
  e.ffi_tags = ffi_tags;
  e.v2 = v2;
  e.functions = {
      {1, "main", 0, 5, 1, 4, {"x"}}, {0, "vm.builtin.check_tensor_info"},
      {0, "vm.builtin.match_shape"},  {0, "add_one"},
      {0, "vm.builtin.null_value"},
  };
  e.AddDataType(kDLFloat, 32);           // c[0]
  e.AddString("ErrorContext(param=x)");  // c[1]
  e.AddTensorF32({4}, {1, 2, 3, 4});     // c[2]
  e.AddShape({1, 4});                    // c[3]
  e.AddInt(7);                           // c[4]
  e.AddFloat(0.5);                       // c[5]
  if (v2) e.scopes = {{2, "global"}};
  e.instructions = {
      {1, kVoid, 1, 4, Reg(0), Imm(2), Const(0), Const(1)},
      {1, kVoid, 2, 8, Reg(0), Reg(kVoid), Imm(2), Imm(0), Imm(1), Imm(0), Imm(4), Const(1)},
      {1, 1, 3, 3, Reg(0), Const(2), Reg(kVm)},
      {1, 2, 4, 0},
      {2, 1},
  };
  return e;
}

std::string FixtureExecutable::Serialize() const {
  BinaryWriter w;
  w.WriteU64(v2 ? 0xD225DE2F4214151EULL : 0xD225DE2F4214151DULL);
  w.WriteString(version);
  w.WriteU64(functions.size());
  for (const FixtureFunction& f : functions) {
    w.WriteI32(f.kind);
    w.WriteString(f.name);
    w.WriteI64(f.start);
    w.WriteI64(f.end);
    w.WriteI64(f.kind == 1 ? f.num_args : -2);
    w.WriteI64(f.registers);
    w.WriteStringVector(f.params);
  }
  if (v2) {
    w.WriteU64(scopes.size());
    for (const auto& [index, scope] : scopes) {
      w.WriteI64(index);
      w.WriteString(scope);
    }
  }
  w.WriteU64(n_constants);
  w.WriteBytes(constant_bytes.data(), constant_bytes.size());
  std::vector<int64_t> offsets, words;
  for (const auto& in : instructions) {
    offsets.push_back(static_cast<int64_t>(words.size()));
    words.insert(words.end(), in.begin(), in.end());
  }
  w.WriteU64(offsets.size());
  for (int64_t o : offsets) w.WriteI64(o);
  w.WriteU64(words.size());
  for (int64_t x : words) w.WriteI64(x);
  return w.TakeBytes();
}

std::string WrapTreeFirst(const std::string& payload, const std::string& key) {
  BinaryWriter w;
  w.WriteU64(0);  // patched
  w.WriteU64Vector({0, 1, 1});
  w.WriteU64Vector({1});
  w.WriteString(key);
  w.WriteString(payload);
  w.WriteString("_lib");
  w.PatchU64(0, w.bytes().size() - 8);
  return w.TakeBytes();
}

std::string WrapLegacy(const std::string& payload, const std::string& key) {
  BinaryWriter w;
  w.WriteU64(0);  // patched
  w.WriteU64(3);
  w.WriteString(key);
  w.WriteString(payload);
  w.WriteString("_lib");
  w.WriteString("_import_tree");
  w.WriteU64Vector({0, 1, 1});
  w.WriteU64Vector({1});
  w.PatchU64(0, w.bytes().size() - 8);
  return w.TakeBytes();
}

std::string ReadSymbolBytes(const std::string& path, const std::string& symbol) {
  auto image = ElfImage::ReadFile(path);
  if (!image.ok()) {
    std::fprintf(stderr, "%s: %s\n", path.c_str(), image.status().ToString().c_str());
    std::abort();
  }
  auto data = image->FindSymbolData(symbol);
  if (!data.ok()) {
    std::fprintf(stderr, "%s: %s\n", path.c_str(), data.status().ToString().c_str());
    std::abort();
  }
  return std::string(reinterpret_cast<const char*>(data->data), static_cast<size_t>(data->size));
}

std::vector<std::string> KernelNames(const std::string& path) {
  auto image = ElfImage::ReadFile(path);
  if (!image.ok()) std::abort();
  std::vector<std::string> out;
  const std::string prefix = "__tvm_ffi_";
  for (const std::string& s : image->DefinedSymbolNames(prefix)) {
    if (s.rfind("__tvm_ffi__", 0) == 0) continue;
    out.push_back(s.substr(prefix.size()));
  }
  return out;
}

}  // namespace testing
}  // namespace relax
}  // namespace sorun
