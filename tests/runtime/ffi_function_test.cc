// The tvm-ffi C ABI (runtime/ffi_c_api.h, runtime/ffi_function.h): error messages from parts, the
// argument conversion into sorun's packed functions, TVMFFIHandleInitOnce, and the kernel lookup
// `__tvm_ffi_<name>` under the kernel rule on a real TVM 0.27 export (testdata/relax/mlp.so).
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "runtime/ffi_c_api.h"
#include "runtime/ffi_function.h"
#include "runtime/last_error.h"
#include "runtime/library_module.h"
#include "tests/util/host_build.h"
#include "tests/util/status_matchers.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

TEST(FfiErrorTest, PartsAreJoinedAndNullPartsSkipped) {
  const char* parts[] = {"Invalid x.shape[1] ", nullptr, "on argument #0", ""};
  TVMFFIErrorSetRaisedFromCStrParts("ValueError", parts, 4);
  EXPECT_EQ(GetLastErrorMessage(), "ValueError: Invalid x.shape[1] on argument #0");
  TVMFFIErrorSetRaisedFromCStr(nullptr, "no kind");
  EXPECT_EQ(GetLastErrorMessage(), "Error: no kind");
  EXPECT_EQ(FfiErrorMessage("K", nullptr, 3), "K: ");
  ClearLastError();
}

TEST(FfiCallTest, ArgumentsReachAPackedFunctionConverted) {
  std::vector<int> codes;
  PackedFunc f = PackedFunc::FromBody("probe", [&](PackedArgs args, Value* ret) -> Status {
    for (int i = 0; i < args.size(); ++i) codes.push_back(args.code(i));
    SORUN_ASSIGN_OR_RETURN(int64_t a, args.GetInt(0));
    *ret = Value::Int(a + 1);
    return Status::Ok();
  });
  DLTensor t{};
  TVMFFIAny args[5] = {FfiInt(41), FfiFloat(0.5), FfiDLTensor(&t), FfiNone(), FfiNone()};
  args[3].type_index = kTVMFFIOpaquePtr;
  args[3].v_ptr = &t;
  args[4].type_index = kTVMFFIBool;
  args[4].v_int64 = 7;
  TVMFFIAny result = FfiNone();
  ASSERT_EQ(TVMFFIFunctionCall(f.get(), args, 5, &result), 0) << GetLastErrorMessage();
  EXPECT_EQ(codes, (std::vector<int>{kTVMArgInt, kTVMArgFloat, kTVMDLTensorHandle, kTVMOpaqueHandle, kTVMArgInt}));
  EXPECT_EQ(result.type_index, kTVMFFIInt);
  EXPECT_EQ(result.v_int64, 42);

  TVMFFIAny object = FfiNone();
  object.type_index = 70;  // a tvm-ffi Tensor object: sorun passes no objects
  EXPECT_EQ(TVMFFIFunctionCall(f.get(), &object, 1, &result), -1);
  EXPECT_NE(GetLastErrorMessage().find("argument 0 is a object(70)"), std::string::npos) << GetLastErrorMessage();
  EXPECT_EQ(TVMFFIFunctionCall(nullptr, args, 1, &result), -1);
  ClearLastError();
}

int g_init_calls = 0;
int InitHandle(void** out) {
  ++g_init_calls;
  *out = &g_init_calls;
  return 0;
}

TEST(FfiHandleTest, InitOnceRunsTheInitializerOnceAcrossThreads) {
  void* handle = nullptr;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      if (TVMFFIHandleInitOnce(&handle, InitHandle) != 0) ++failures;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(g_init_calls, 1);
  EXPECT_EQ(handle, &g_init_calls);
}

TEST(FfiKernelTest, KernelsResolveUnderTheKernelRule) {
  auto opened = LibraryModuleNode::Open(testing::Runfile(testing::HostBuild("testdata/relax/mlp.so")));
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  ObjectPtr<LibraryModuleNode> lib = opened->module;
  ObjectPtr<ModuleNode> self(lib);
  auto matmul = lib->GetFfiKernel("matmul", self);
  ASSERT_TRUE(matmul.ok()) << matmul.status().ToString();
  EXPECT_EQ(matmul->name(), "matmul");
  // The kernel checks its arguments and reports through TVMFFIErrorSetRaisedFromCStrParts.
  TVMFFIAny none = FfiNone();
  EXPECT_ERROR(matmul->Call(&none, 1), StatusCode::kAborted, "function 'matmul' failed", "matmul");
  EXPECT_ERROR(lib->GetFfiKernel("no_such_kernel", self).status(), StatusCode::kNotFound, "no_such_kernel");
  EXPECT_ERROR(lib->GetFfiKernel("_library_bin", self).status(), StatusCode::kInvalidArgument, "reserved");
  EXPECT_ERROR(lib->GetFfiKernel("", self).status(), StatusCode::kInvalidArgument, "reserved");
}

}  // namespace
}  // namespace sorun
