// relax/vm_disassembler: the disassembly and callee classification of the real TVM 0.27 exports and of
// hand-built executables calling unsupported families; input facts from main's leading checks.
#include "relax/vm_disassembler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "relax/library_blob.h"
#include "tests/relax/relax_fixtures.h"
#include "tests/util/status_matchers.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace relax {
namespace {

using testing::FixtureExecutable;

struct RealModel {
  std::string symbol;  // keeps the bytes the executable borrows
  VmExecutable exec;
  std::vector<std::string> kernels;
};

RealModel LoadReal(const std::string& model) {
  RealModel m;
  const std::string path = sorun::testing::Runfile("testdata/relax/" + model + ".so");
  m.symbol = testing::ReadSymbolBytes(path, keys::kSymbolFfiLibraryBinV22);
  m.kernels = testing::KernelNames(path);
  auto blob = ParseLibraryBlob(reinterpret_cast<const uint8_t*>(m.symbol.data()), m.symbol.size(),
                               keys::kSymbolFfiLibraryBinV22);
  EXPECT_TRUE(blob.ok()) << blob.status().ToString();
  if (!blob.ok()) return m;
  auto root = RootExecutable(*blob);
  EXPECT_TRUE(root.ok());
  if (!root.ok()) return m;
  auto exec = ParseVmExecutable((*root)->payload, (*root)->payload_size, ConstantTagDialect::kFfiTypeIndex,
                                "relax.VMExecutable", (*root)->payload_offset);
  EXPECT_TRUE(exec.ok()) << exec.status().ToString();
  if (exec.ok()) m.exec = std::move(*exec);
  return m;
}

KernelPredicate KernelsOf(const std::vector<std::string>& names) {
  return [names](const std::string& n) { return std::find(names.begin(), names.end(), n) != names.end(); };
}

const CalleeInfo& Named(const std::vector<CalleeInfo>& callees, const std::string& name) {
  for (const CalleeInfo& c : callees) {
    if (c.name == name) return c;
  }
  static const CalleeInfo none;
  ADD_FAILURE() << name << " not in the function table";
  return none;
}

TEST(VmDisassemblerTest, ClassifiesTheRealMlp) {
  RealModel m = LoadReal("mlp");
  ASSERT_EQ(m.kernels, (std::vector<std::string>{"add", "add1", "matmul", "matmul1", "relu"}));
  const auto callees = ClassifyFunctions(m.exec, KernelsOf(m.kernels));
  ASSERT_EQ(callees.size(), 11u);
  EXPECT_EQ(Named(callees, "main").callee_class, CalleeClass::kVmFunction);
  for (const char* k : {"matmul", "add", "relu", "matmul1", "add1"}) {
    EXPECT_EQ(Named(callees, k).callee_class, CalleeClass::kKernel) << k;
  }
  for (const char* b : {"vm.builtin.check_tensor_info", "vm.builtin.match_shape", "vm.builtin.alloc_storage",
                        "vm.builtin.alloc_tensor", "vm.builtin.null_value"}) {
    EXPECT_EQ(Named(callees, b).callee_class, CalleeClass::kSupportedBuiltin) << b;
  }
  EXPECT_EQ(Named(callees, "vm.builtin.null_value").call_sites, 7);
  EXPECT_TRUE(CheckCalleesSupported(m.exec, callees).ok());
  // Without the library's kernels, the kernels are what is missing.
  EXPECT_ERROR(CheckCalleesSupported(m.exec, ClassifyFunctions(m.exec, nullptr)), StatusCode::kUnimplemented,
               "5 function(s)", "'matmul' (neither a kernel of the library nor a known builtin)");
}

TEST(VmDisassemblerTest, DisassemblesTheRealMlp) {
  RealModel m = LoadReal("mlp");
  const std::string text = Disassemble(m.exec, KernelsOf(m.kernels));
  for (const char* part :
       {"magic V2, version 0.14, 11 functions, 12 constants, 23 instructions", "c[0] dtype float32", "c[2] shape [128]",
        "c[6] tensor float32[16, 32] 2048 bytes", "@main(x) vm function, 9 registers, instructions [0, 23)",
        "0: %void = call vm.builtin.check_tensor_info(%0, i2, c[0], c[1])",
        "2: %1 = call vm.builtin.alloc_storage(%vm, c[2], i0, c[3], c[4])", "4: %void = call matmul(%0, c[6], %2)",
        "22: ret %8", "@matmul kernel, 1 call site(s)", "@vm.builtin.alloc_tensor supported builtin, 5 call site(s)"}) {
    EXPECT_NE(text.find(part), std::string::npos) << "'" << part << "' missing in:\n" << text;
  }
}

TEST(VmDisassemblerTest, ReportsTheAlignmentOfRealConstants) {
  RealModel m = LoadReal("mlp");
  for (const VmConstant& c : m.exec.constants) {
    if (c.kind != VmConstantKind::kTensor) continue;
    const uint64_t a = c.DataAlignment();
    EXPECT_GE(a, 1u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(c.data) % a, 0u);
    EXPECT_EQ(c.data, reinterpret_cast<const uint8_t*>(m.symbol.data()) + c.data_offset);
  }
}

TEST(VmDisassemblerTest, DescribesInputsOfStaticAndDynamicModels) {
  RealModel mlp = LoadReal("mlp");
  auto inputs = DescribeInputs(mlp.exec);
  ASSERT_TRUE(inputs.ok()) << inputs.status().ToString();
  ASSERT_EQ(inputs->size(), 1u);
  EXPECT_EQ((*inputs)[0].name, "x");
  EXPECT_EQ((*inputs)[0].ndim, 2);
  EXPECT_TRUE((*inputs)[0].has_dtype);
  EXPECT_EQ((*inputs)[0].dtype.code, kDLFloat);
  EXPECT_EQ((*inputs)[0].dims, (std::vector<int64_t>{1, 16}));

  RealModel dyn = LoadReal("dyn_batch");
  inputs = DescribeInputs(dyn.exec);
  ASSERT_TRUE(inputs.ok());
  ASSERT_EQ(inputs->size(), 1u);
  EXPECT_EQ((*inputs)[0].dims, (std::vector<int64_t>{-1, 8}));
  const auto callees = ClassifyFunctions(dyn.exec, KernelsOf(dyn.kernels));
  for (const char* b : {"vm.builtin.alloc_shape_heap", "vm.builtin.make_shape", "vm.builtin.make_tuple"}) {
    EXPECT_EQ(Named(callees, b).callee_class, CalleeClass::kSupportedBuiltin) << b;
  }
  EXPECT_EQ(Named(callees, "shape_func").callee_class, CalleeClass::kKernel);
  EXPECT_TRUE(CheckCalleesSupported(dyn.exec, callees).ok());
  EXPECT_ERROR(DescribeInputs(dyn.exec, "prefill").status(), StatusCode::kNotFound, "'prefill'");
}

TEST(VmDisassemblerTest, NamesUnsupportedFamilies) {
  EXPECT_EQ(UnsupportedFamily("vm.builtin.paged_attention_kv_cache_attention"), "KV-cache builtin");
  EXPECT_EQ(UnsupportedFamily("vm.builtin.cuda_graph.run_or_capture"), "CUDA-graph builtin");
  EXPECT_EQ(UnsupportedFamily("runtime.disco.allreduce"), "disco (distributed) builtin");
  EXPECT_EQ(UnsupportedFamily("tvm.contrib.cublas.matmul"), "BYOC / contrib extern");
  EXPECT_EQ(UnsupportedFamily("vm.builtin.invoke_closure"), "VM builtin not implemented by sorun");
  EXPECT_EQ(UnsupportedFamily("my_kernel"), "");
  EXPECT_TRUE(IsSupportedBuiltin("vm.builtin.reshape"));
  EXPECT_FALSE(IsSupportedBuiltin("vm.builtin.to_device"));

  FixtureExecutable e = FixtureExecutable::Small(true, false);
  e.functions[3].name = "vm.builtin.cuda_graph.run_or_capture";
  e.functions.push_back({2, "__vmtir__unused"});
  std::string payload = e.Serialize();
  auto exec = ParseVmExecutable(reinterpret_cast<const uint8_t*>(payload.data()), payload.size(),
                                ConstantTagDialect::kFfiTypeIndex);
  ASSERT_TRUE(exec.ok()) << exec.status().ToString();
  const auto callees = ClassifyFunctions(*exec, nullptr);
  EXPECT_EQ(callees[5].callee_class, CalleeClass::kUnsupported);
  EXPECT_NE(callees[5].reason.find("compiled-mode"), std::string::npos);
  // Only what the bytecode reaches is refused: the vmtir function is never called.
  EXPECT_ERROR(CheckCalleesSupported(*exec, callees), StatusCode::kUnimplemented, "1 function(s)",
               "'vm.builtin.cuda_graph.run_or_capture' (CUDA-graph builtin)");
  const std::string text = Disassemble(*exec, nullptr);
  EXPECT_NE(text.find("@vm.builtin.cuda_graph.run_or_capture NOT supported (CUDA-graph builtin), 1 call site(s)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("c[2] tensor float32[4] 16 bytes"), std::string::npos) << text;
  EXPECT_NE(text.find("c[5] float 0.5"), std::string::npos) << text;
}

TEST(VmDisassemblerTest, FormatsJumps) {
  FixtureExecutable e = FixtureExecutable::Small(true, false);
  e.instructions[2] = {4, 1, 2};
  e.instructions[3] = {3, 1};
  std::string payload = e.Serialize();
  auto exec = ParseVmExecutable(reinterpret_cast<const uint8_t*>(payload.data()), payload.size(),
                                ConstantTagDialect::kFfiTypeIndex);
  ASSERT_TRUE(exec.ok()) << exec.status().ToString();
  EXPECT_EQ(FormatInstruction(*exec, exec->instructions[2]), "if %1 else +2");
  EXPECT_EQ(FormatInstruction(*exec, exec->instructions[3]), "goto +1");
  EXPECT_EQ(FormatInstruction(*exec, exec->instructions[1]),
            "%void = call vm.builtin.match_shape(%0, %void, i2, i0, i1, i0, i4, c[1])");
}

}  // namespace
}  // namespace relax
}  // namespace sorun
