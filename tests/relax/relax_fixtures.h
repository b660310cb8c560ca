// Test fixtures for relax/: hand-assembled Relax VM executables and containers written from the
// layouts of docs/spec/RELAX_FORMAT.md (independently of the parsers under test), and the blob symbol of a real
// TVM 0.27 export (testdata/relax/*.so) read through ElfImage. Test-only; thread-compatible.
#ifndef SORUN_TESTS_RELAX_RELAX_FIXTURES_H_
#define SORUN_TESTS_RELAX_RELAX_FIXTURES_H_

#include <cstdint>
#include <string>
#include <vector>

namespace sorun {
namespace relax {
namespace testing {

// Argument words: kind << 56 | value (56 bits).
int64_t Reg(int64_t r);
int64_t Imm(int64_t v);
int64_t Const(int64_t c);
int64_t Func(int64_t f);
inline constexpr int64_t kVoid = int64_t{1} << 54;
inline constexpr int64_t kVm = (int64_t{1} << 54) + 1;

struct FixtureFunction {
  int32_t kind = 0;
  std::string name;
  int64_t start = 0, end = 0, num_args = -2, registers = 0;
  std::vector<std::string> params;
};

// A small executable: `main(x)` checks x (float32, [1, 4]), calls kernel "add_one" and a builtin, and
// returns; constants: dtype, error string, a float32[4] tensor, a shape, an int and a float.
struct FixtureExecutable {
  bool v2 = false;
  bool ffi_tags = true;
  std::string version = "0.14";
  std::vector<FixtureFunction> functions;
  std::vector<std::pair<int64_t, std::string>> scopes;  // V2 only
  std::string constant_bytes;                           // pre-encoded constant records
  uint64_t n_constants = 0;
  std::vector<std::vector<int64_t>> instructions;  // words per instruction

  // The default small executable described above.
  static FixtureExecutable Small(bool ffi_tags, bool v2);
  // Appends one constant record in this executable's dialect.
  void AddDataType(uint8_t code, uint8_t bits);
  void AddString(const std::string& s);
  void AddTensorF32(const std::vector<int64_t>& shape, const std::vector<float>& values);
  void AddShape(const std::vector<int64_t>& dims);
  void AddInt(int64_t v);
  void AddFloat(double v);
  // The payload bytes (magic first).
  std::string Serialize() const;
};

// Container bytes of a blob symbol (length prefix included) holding `payload` as module 0 with `key`,
// and a "_lib" child. TreeFirst: TVM 0.22+; Legacy: TVM 0.16 - 0.21 (tree last).
std::string WrapTreeFirst(const std::string& payload, const std::string& key = "relax.VMExecutable");
std::string WrapLegacy(const std::string& payload, const std::string& key = "relax.Executable");

// The bytes of `symbol` in the ELF file at `path` (aborts the test binary if missing).
std::string ReadSymbolBytes(const std::string& path, const std::string& symbol);
// The names of the kernels `path` defines (`__tvm_ffi_<name>` stripped to <name>).
std::vector<std::string> KernelNames(const std::string& path);

}  // namespace testing
}  // namespace relax
}  // namespace sorun

#endif  // SORUN_TESTS_RELAX_RELAX_FIXTURES_H_
