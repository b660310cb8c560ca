// SystemLibModuleNode: the kernel rule of a system library (registered names only, reserved ABI names
// refused), prefixes, and the context slots / __tvm_module_ctx it fills (and clears when it goes).
#include "runtime/system_lib_module.h"

#include <gtest/gtest.h>

#include "runtime/c_runtime_api.h"
#include "runtime/library_module.h"
#include "tests/util/status_matchers.h"

namespace sorun {
namespace {

int ReturnSeven(TVMValue*, int*, int, TVMValue* ret, int* ret_code, void*) {
  ret->v_int64 = 7;
  *ret_code = kTVMArgInt;
  return 0;
}

TEST(SystemLibModuleTest, KernelsAreTheRegisteredNamesUnderThePrefix) {
  RegisterSystemLibSymbol("unit_a_seven", reinterpret_cast<void*>(&ReturnSeven));
  ObjectPtr<SystemLibModuleNode> lib = SystemLibModuleNode::Create("unit_a_");
  Module m{ObjectPtr<ModuleNode>(lib)};
  EXPECT_STREQ(m.type_key(), "library");
  EXPECT_TRUE(m->provides_kernels());
  EXPECT_EQ(ModuleNodeAs<SystemLibModuleNode>(m), lib.get());
  EXPECT_EQ(ModuleNodeAs<LibraryModuleNode>(m), nullptr);
  auto seven = m.GetKernel("seven");
  ASSERT_TRUE(seven.ok()) << seven.status().ToString();
  auto result = (*seven)();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  auto value = result->AsInt();
  ASSERT_TRUE(value.ok()) << value.status().ToString();
  EXPECT_EQ(*value, 7);
  EXPECT_ERROR(lib->GetKernelFunction("unit_a_seven", m.node()).status(), StatusCode::kNotFound,
               "kernel function 'unit_a_seven'", "prefix 'unit_a_'");
  // Another prefix sees nothing of this one.
  Module other{ObjectPtr<ModuleNode>(SystemLibModuleNode::Create("unit_b_"))};
  EXPECT_EQ(other.GetKernel("seven").status().code(), StatusCode::kNotFound);
}

void* g_module_ctx = nullptr;
void* g_alloc_workspace_slot = nullptr;

TEST(SystemLibModuleTest, ReservedAbiNamesAreNeverKernels) {
  void* ctx = nullptr;
  RegisterSystemLibSymbol("unit_c___tvm_module_ctx", &ctx);
  Module m{ObjectPtr<ModuleNode>(SystemLibModuleNode::Create("unit_c_"))};
  EXPECT_ERROR(m.GetKernel("__tvm_module_ctx").status(), StatusCode::kInvalidArgument, "reserved by the TVM ABI");
}

TEST(SystemLibModuleTest, FillsTheRegisteredContextAndClearsItWhenGone) {
  RegisterSystemLibSymbol("unit_d___tvm_module_ctx", &g_module_ctx);
  RegisterSystemLibSymbol("unit_d___TVMBackendAllocWorkspace", &g_alloc_workspace_slot);
  {
    ObjectPtr<SystemLibModuleNode> lib = SystemLibModuleNode::Create("unit_d_");
    EXPECT_EQ(lib->context_slots_filled(), 1);
    EXPECT_EQ(g_alloc_workspace_slot, reinterpret_cast<void*>(&TVMBackendAllocWorkspace));
    EXPECT_EQ(g_module_ctx, static_cast<void*>(static_cast<ModuleNode*>(lib.get())));
  }
  EXPECT_EQ(g_module_ctx, nullptr);
}

TEST(SystemLibModuleTest, CountsRegisteredNamesByPrefix) {
  EXPECT_EQ(CountSystemLibSymbols("unit_e_"), 0u);
  RegisterSystemLibSymbol("unit_e_x", &g_module_ctx);
  RegisterSystemLibSymbol("unit_e_y", &g_module_ctx);
  EXPECT_EQ(CountSystemLibSymbols("unit_e_"), 2u);
  EXPECT_GE(CountSystemLibSymbols(""), 2u);
}

}  // namespace
}  // namespace sorun
