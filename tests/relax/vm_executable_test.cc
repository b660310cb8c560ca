// relax/vm_executable: hand-assembled executables in both tag dialects and magics, the real TVM 0.27
// MLP, and mutations of both (truncations, out-of-range indices, jumps, bad kinds) refused precisely.
#include "relax/vm_executable.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "relax/library_blob.h"
#include "tests/relax/relax_fixtures.h"
#include "tests/util/status_matchers.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace relax {
namespace {

using testing::Const;
using testing::FixtureExecutable;
using testing::Func;
using testing::Imm;
using testing::kVoid;
using testing::Reg;

const uint8_t* Bytes(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

StatusOr<VmExecutable> Parse(const std::string& payload, bool ffi_tags = true) {
  return ParseVmExecutable(Bytes(payload), payload.size(),
                           ffi_tags ? ConstantTagDialect::kFfiTypeIndex : ConstantTagDialect::kLegacyEnum);
}

Status ParseStatus(const FixtureExecutable& e) { return Parse(e.Serialize(), e.ffi_tags).status(); }

// The real MLP's executable payload.
std::string RealPayload(const std::string& model) {
  static std::string symbol;
  symbol = testing::ReadSymbolBytes(sorun::testing::Runfile("testdata/relax/" + model + ".so"),
                                    keys::kSymbolFfiLibraryBinV22);
  auto blob = ParseLibraryBlob(Bytes(symbol), symbol.size(), keys::kSymbolFfiLibraryBinV22);
  if (!blob.ok()) return "";
  auto root = RootExecutable(*blob);
  if (!root.ok()) return "";
  return std::string(reinterpret_cast<const char*>((*root)->payload), (*root)->payload_size);
}

void PatchWord(std::string* payload, uint64_t byte_offset, int64_t value) {
  std::memcpy(&(*payload)[byte_offset], &value, 8);
}

TEST(VmExecutableTest, DecodesArgumentWords) {
  EXPECT_EQ(DecodeVmArg(Reg(3)).kind, VmArgKind::kRegister);
  EXPECT_EQ(DecodeVmArg(Reg(kVoid)).value, kVoidRegister);
  EXPECT_EQ(DecodeVmArg(Imm(-5)).value, -5);
  EXPECT_EQ(DecodeVmArg(Imm(-5)).kind, VmArgKind::kImmediate);
  EXPECT_EQ(DecodeVmArg(Const(11)).kind, VmArgKind::kConstIdx);
  EXPECT_EQ(DecodeVmArg(Func(2)).kind, VmArgKind::kFuncIdx);
  EXPECT_EQ(DecodeVmArg(0x0200000000000001).value, 1);  // docs/spec/RELAX_FORMAT.md 4.5's example
}

TEST(VmExecutableTest, ReadsBothDialectsAndMagics) {
  for (bool ffi : {true, false}) {
    for (bool v2 : {false, true}) {
      SCOPED_TRACE(std::string(ffi ? "ffi tags" : "enum tags") + (v2 ? " V2" : " V1"));
      const FixtureExecutable fixture = FixtureExecutable::Small(ffi, v2);
      const std::string payload = fixture.Serialize();  // the executable borrows it
      auto exec = Parse(payload, ffi);
      ASSERT_TRUE(exec.ok()) << exec.status().ToString();
      EXPECT_EQ(exec->magic, v2 ? kVmMagicV2 : kVmMagicV1);
      EXPECT_EQ(exec->version, "0.14");
      ASSERT_EQ(exec->functions.size(), 5u);
      EXPECT_EQ(exec->functions[0].name, "main");
      EXPECT_EQ(exec->functions[0].kind, VmFunctionKind::kVmFunc);
      EXPECT_EQ(exec->functions[0].param_names, std::vector<std::string>{"x"});
      EXPECT_EQ(exec->functions[3].kind, VmFunctionKind::kPackedFunc);
      EXPECT_EQ(exec->FindFunction("add_one"), 3);
      ASSERT_EQ(exec->constants.size(), 6u);
      EXPECT_EQ(exec->constants[0].kind, VmConstantKind::kDataType);
      EXPECT_EQ(exec->constants[0].dtype.bits, 32);
      EXPECT_EQ(exec->constants[1].str, "ErrorContext(param=x)");
      EXPECT_EQ(exec->constants[2].kind, VmConstantKind::kTensor);
      EXPECT_EQ(exec->constants[2].shape, std::vector<int64_t>{4});
      EXPECT_EQ(exec->constants[2].data_bytes, 16u);
      float third = 0;
      std::memcpy(&third, exec->constants[2].data + 8, 4);
      EXPECT_EQ(third, 3.0f);
      EXPECT_EQ(exec->constants[3].shape, (std::vector<int64_t>{1, 4}));
      EXPECT_EQ(exec->constants[4].int_value, 7);
      EXPECT_EQ(exec->constants[5].float_value, 0.5);
      EXPECT_EQ(exec->scopes.size(), v2 ? 1u : 0u);
      ASSERT_EQ(exec->instructions.size(), 5u);
      EXPECT_EQ(exec->instructions[2].func_index, 3);
      EXPECT_EQ(exec->instructions[2].args[2].value, kVmContextRegister);
      EXPECT_EQ(exec->instructions[4].op, VmOpcode::kRet);
      EXPECT_EQ(exec->FunctionOfInstruction(4), 0);
      EXPECT_EQ(exec->FunctionOfInstruction(5), -1);
    }
  }
}

TEST(VmExecutableTest, TheDialectMustMatchTheGeneration) {
  // ffi tag 5 (dtype) reads as the enum dialect's float, and what follows is garbage.
  EXPECT_ERROR(Parse(FixtureExecutable::Small(true, false).Serialize(), false).status(), StatusCode::kDataLoss,
               "constant 1", "unknown constant tag", "enum tags");
  // enum tag 0 (tensor) is unknown to the ffi dialect.
  EXPECT_ERROR(Parse(FixtureExecutable::Small(false, false).Serialize(), true).status(), StatusCode::kDataLoss,
               "unknown constant tag", "tvm-ffi type-index tags");
}

TEST(VmExecutableTest, ReadsTheRealTvm027Mlp) {
  const std::string payload = RealPayload("mlp");
  auto exec = Parse(payload);
  ASSERT_TRUE(exec.ok()) << exec.status().ToString();
  EXPECT_EQ(exec->magic, kVmMagicV2);
  ASSERT_EQ(exec->functions.size(), 11u);
  EXPECT_EQ(exec->functions[0].name, "main");
  EXPECT_EQ(exec->functions[0].param_names, std::vector<std::string>{"x"});
  EXPECT_EQ(exec->functions[0].end_instr, 23);
  EXPECT_EQ(exec->constants.size(), 12u);
  int tensors = 0;
  for (const VmConstant& c : exec->constants) tensors += c.kind == VmConstantKind::kTensor;
  EXPECT_EQ(tensors, 4);
  EXPECT_EQ(exec->instructions.size(), 23u);
  const VmInstruction& first = exec->instructions[0];  // %void = check_tensor_info(%0, i2, c[0], c[1])
  EXPECT_EQ(exec->functions[static_cast<size_t>(first.func_index)].name, "vm.builtin.check_tensor_info");
  EXPECT_EQ(first.dst, kVoidRegister);
  ASSERT_EQ(first.args.size(), 4u);
  EXPECT_EQ(first.args[1].value, 2);
  EXPECT_EQ(first.args[3].kind, VmArgKind::kConstIdx);
  EXPECT_EQ(exec->instructions[22].op, VmOpcode::kRet);
  EXPECT_TRUE(Parse(RealPayload("dyn_batch")).ok());
}

TEST(VmExecutableTest, EveryTruncationOfTheRealMlpIsRefused) {
  const std::string payload = RealPayload("mlp");
  for (size_t cut = 0; cut < payload.size(); cut += (cut < 400 ? 1 : 61)) {
    auto exec = Parse(payload.substr(0, cut));
    ASSERT_FALSE(exec.ok()) << "cut at " << cut;
    EXPECT_EQ(exec.status().code(), StatusCode::kDataLoss) << exec.status().ToString();
  }
}

TEST(VmExecutableTest, RefusesMutationsOfTheRealMlp) {
  const std::string payload = RealPayload("mlp");
  auto exec = Parse(payload);
  ASSERT_TRUE(exec.ok());
  auto word_at = [&](int64_t instruction, int64_t k) {
    return exec->instr_data_offset + 8 * static_cast<uint64_t>(exec->instructions[instruction].word_offset + k);
  };
  std::string m = payload;  // instruction 4 calls matmul: func index 99
  PatchWord(&m, word_at(4, 2), 99);
  EXPECT_ERROR(Parse(m).status(), StatusCode::kDataLoss, "'main' instruction 4", "calls function 99 of 11");

  m = payload;  // its second argument c[6] -> c[40]
  PatchWord(&m, word_at(4, 5), Const(40));
  EXPECT_ERROR(Parse(m).status(), StatusCode::kDataLoss, "instruction 4", "argument 1: constant 40 of 12");

  m = payload;  // its first argument %0 -> %500
  PatchWord(&m, word_at(4, 4), Reg(500));
  EXPECT_ERROR(Parse(m).status(), StatusCode::kDataLoss, "argument 0: register 500 outside the 9 registers");

  m = payload;  // an argument of kind 7
  PatchWord(&m, word_at(4, 4), static_cast<int64_t>(uint64_t{7} << 56));
  EXPECT_ERROR(Parse(m).status(), StatusCode::kDataLoss, "argument kind 7");

  m = payload;  // the final "ret %8" becomes "goto +100"
  PatchWord(&m, word_at(22, 0), 3);
  PatchWord(&m, word_at(22, 1), 100);
  EXPECT_ERROR(Parse(m).status(), StatusCode::kDataLoss, "instruction 22", "jump by 100 leaves 'main'");

  m = payload;  // ... or "goto -30" (inside main, but backwards: a loop)
  PatchWord(&m, word_at(22, 0), 3);
  PatchWord(&m, word_at(22, 1), -30);
  EXPECT_ERROR(Parse(m).status(), StatusCode::kDataLoss, "goto by -30 jumps backwards");

  m = payload;  // "goto -3": inside main, still a loop
  PatchWord(&m, word_at(22, 0), 3);
  PatchWord(&m, word_at(22, 1), -3);
  EXPECT_ERROR(Parse(m).status(), StatusCode::kDataLoss, "goto by -3 jumps backwards");

  m = payload;  // opcode 9
  PatchWord(&m, word_at(3, 0), 9);
  EXPECT_ERROR(Parse(m).status(), StatusCode::kDataLoss, "instruction 3", "unknown opcode 9");

  m = payload;  // instruction 21 (a call of null_value) claims 1000 arguments
  PatchWord(&m, word_at(21, 3), 1000);
  EXPECT_ERROR(Parse(m).status(), StatusCode::kDataLoss, "instruction 21", "call with 1000 arguments runs past");

  m = payload;  // the version
  m[16] = '9';
  EXPECT_ERROR(Parse(m).status(), StatusCode::kDataLoss, "byte 8", "version '9.14'");

  m = payload;
  m[0] = 0x1f;
  EXPECT_ERROR(Parse(m).status(), StatusCode::kDataLoss, "bad VM executable magic");
}

TEST(VmExecutableTest, ValidatesFunctionsAndJumps) {
  FixtureExecutable e = FixtureExecutable::Small(true, false);
  e.functions[0].end = 9;
  EXPECT_ERROR(ParseStatus(e), StatusCode::kDataLoss, "function 0 'main'", "[0, 9)", "outside the 5 instructions");

  e = FixtureExecutable::Small(true, false);
  e.functions[0].registers = 70000000;
  EXPECT_ERROR(ParseStatus(e), StatusCode::kDataLoss, "register_file_size 70000000");

  e = FixtureExecutable::Small(true, false);
  e.functions[0].params = {"x", "y"};
  EXPECT_ERROR(ParseStatus(e), StatusCode::kDataLoss, "num_args 1 but 2 param_names");

  e = FixtureExecutable::Small(true, false);
  e.functions[3].name = "main";
  EXPECT_ERROR(ParseStatus(e), StatusCode::kDataLoss, "function 3 'main'", "repeats function 0");

  e = FixtureExecutable::Small(true, false);
  e.functions[1].kind = 7;
  EXPECT_ERROR(ParseStatus(e), StatusCode::kDataLoss, "function 1", "kind 7");

  e = FixtureExecutable::Small(true, false);
  e.functions.push_back({1, "helper", 3, 5, 0, 2, {}});
  EXPECT_ERROR(ParseStatus(e), StatusCode::kDataLoss, "'helper'", "overlap");

  e = FixtureExecutable::Small(true, false);
  e.functions[0].end = 4;  // ends on a call
  EXPECT_ERROR(ParseStatus(e), StatusCode::kDataLoss, "neither Ret nor Goto");

  e = FixtureExecutable::Small(true, false);
  e.instructions[3] = {4, 1, 1};  // if false_offset 1
  EXPECT_ERROR(ParseStatus(e), StatusCode::kDataLoss, "instruction 3", "false_offset 1 must be > 1");

  e = FixtureExecutable::Small(true, false);
  e.instructions[3] = {4, 1, 2};  // if %1 else +2: jumps to instruction 5, past main's end
  EXPECT_ERROR(ParseStatus(e), StatusCode::kDataLoss, "jump by 2 leaves 'main'");

  e = FixtureExecutable::Small(true, false);
  e.instructions[2] = {4, 1, 2};  // if %1 else +2 -> instruction 4 (ret): fine
  EXPECT_TRUE(ParseStatus(e).ok()) << ParseStatus(e).ToString();

  e = FixtureExecutable::Small(true, false);
  e.instructions[3] = {3, 0};
  EXPECT_ERROR(ParseStatus(e), StatusCode::kDataLoss, "goto by 0 jumps backwards");

  e = FixtureExecutable::Small(true, false);
  e.instructions[4] = {2, kVoid + 7};
  EXPECT_ERROR(ParseStatus(e), StatusCode::kDataLoss, "ret: register");

  e = FixtureExecutable::Small(true, false);
  e.instructions[0][2] = -1;
  EXPECT_ERROR(ParseStatus(e), StatusCode::kDataLoss, "calls function -1 of 5");

  e = FixtureExecutable::Small(true, false);
  e.instructions[0].push_back(Func(9));
  e.instructions[0][3] = 5;
  EXPECT_ERROR(ParseStatus(e), StatusCode::kDataLoss, "argument 4: function 9 of 5");

  e = FixtureExecutable::Small(true, true);
  e.scopes = {{6, "global.texture"}};
  EXPECT_ERROR(ParseStatus(e), StatusCode::kDataLoss, "scope 0 ('global.texture') names constant 6 of 6");

  e = FixtureExecutable::Small(true, false);
  e.version = "0.16.dev0";
  EXPECT_ERROR(ParseStatus(e), StatusCode::kDataLoss, "version '0.16.dev0' is not '0.14'");
}

TEST(VmExecutableTest, RefusesBadConstantsAndCounts) {
  FixtureExecutable e = FixtureExecutable::Small(true, false);
  e.AddTensorF32({3}, {1, 2, 3, 4});  // shape says 12 bytes, 16 written
  EXPECT_ERROR(ParseStatus(e), StatusCode::kDataLoss, "constant 6", "data size 16");

  e = FixtureExecutable::Small(true, false);
  e.n_constants = 1u << 30;
  EXPECT_ERROR(ParseStatus(e), StatusCode::kDataLoss, "constant count 1073741824 is impossible");

  std::string payload = FixtureExecutable::Small(true, false).Serialize();
  PatchWord(&payload, 8 + 12, int64_t{1} << 40);  // function count
  EXPECT_ERROR(Parse(payload).status(), StatusCode::kDataLoss, "byte 20", "function count");
}

}  // namespace
}  // namespace relax
}  // namespace sorun
