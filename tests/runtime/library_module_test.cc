// Loads a real kernel library (testdata/kernels/abi_test_kernels.c, built by Bazel) with dlopen and
// exercises every runtime service its kernels call: workspace, parallel launch + barrier, env lookup,
// error reporting, and the C-backend plain-name path.
#include "runtime/library_module.h"

#include "format/elf_preflight.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "runtime/c_runtime_api.h"
#include "runtime/data_type.h"
#include "runtime/function_registry.h"
#include "runtime/thread_pool.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

const char kKernels[] = "testdata/kernels/libabi_test_kernels.so";

class LibraryModuleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = LibraryModuleNode::Open(testing::Runfile(kKernels));
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    lib_ = Module(ObjectPtr<ModuleNode>(opened->module));
  }
  Module lib_;
};

Tensor FloatTensor(std::vector<float> values) {
  auto t = Tensor::Empty({static_cast<int64_t>(values.size())}, Float32(), CpuDevice());
  for (size_t i = 0; i < values.size(); ++i) t->data_as<float>()[i] = values[i];
  return *t;
}

TEST_F(LibraryModuleTest, FillsAllContextSlots) {
  auto* node = static_cast<LibraryModuleNode*>(lib_.get());
  EXPECT_EQ(node->context_slots_filled(), 7);
  EXPECT_STREQ(lib_.type_key(), "library");
  void** ctx = static_cast<void**>(node->FindSymbol("__tvm_module_ctx"));
  ASSERT_NE(ctx, nullptr);
  EXPECT_EQ(*ctx, static_cast<void*>(static_cast<ModuleNode*>(node)));
}

TEST_F(LibraryModuleTest, CallsKernelOnTensors) {
  Tensor in = FloatTensor({1, 2, 3});
  Tensor out = FloatTensor({0, 0, 0});
  PackedFunc add_one = lib_.GetFunction("add_one");
  ASSERT_TRUE(add_one.defined());
  EXPECT_NE(add_one.get()->c_function(), nullptr);
  ASSERT_TRUE(add_one(in, out).ok());
  EXPECT_EQ(out.data_as<float>()[2], 4.0f);
  // Borrowed DLTensor* (type code 7) works the same.
  ASSERT_TRUE(add_one(in.dl(), out.dl()).ok());
}

TEST_F(LibraryModuleTest, MissingSymbolIsNull) { EXPECT_FALSE(lib_.GetFunction("no_such_kernel").defined()); }

TEST_F(LibraryModuleTest, ReturnValuesAndScalars) {
  auto r = lib_.GetFunction("sum_ints")(1, 2, 39);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r->AsInt(), 42);
}

TEST_F(LibraryModuleTest, KernelErrorCarriesItsMessage) {
  auto r = lib_.GetFunction("always_fails")();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kAborted);
  EXPECT_EQ(r.status().message(),
            "function 'always_fails' failed (returned -1): always_fails: the kernel detected an invalid state");
  // Argument checks inside the kernel too.
  auto bad = lib_.GetFunction("add_one")(1, 2);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("add_one: Expect arg[0] and arg[1] to be DLTensor"), std::string::npos);
}

TEST_F(LibraryModuleTest, MainEntryResolvesTheNamedFunction) {
  PackedFunc main = lib_.GetFunction("__tvm_main__");
  ASSERT_TRUE(main.defined());
  EXPECT_EQ(main.name(), "add_one");
  Tensor in = FloatTensor({5});
  Tensor out = FloatTensor({0});
  ASSERT_TRUE(main(in, out).ok());
  EXPECT_EQ(out.data_as<float>()[0], 6.0f);
}

TEST_F(LibraryModuleTest, WorkspaceAllocAndFreeInAnyOrder) {
  std::vector<float> values(1000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  Tensor in = FloatTensor(values);
  Tensor out = FloatTensor(std::vector<float>(1000, 0));
  for (int rep = 0; rep < 3; ++rep) {
    auto r = lib_.GetFunction("workspace_reverse")(in, out);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  EXPECT_EQ(out.data_as<float>()[0], 999.0f);
  EXPECT_EQ(out.data_as<float>()[999], 0.0f);
}

TEST_F(LibraryModuleTest, ParallelLaunchRunsEveryTaskAndBarrierHolds) {
  const int n = 1000;
  std::vector<float> values(n);
  for (int i = 0; i < n; ++i) values[i] = static_cast<float>(i);
  Tensor in = FloatTensor(values);
  int threads = ThreadPool::Global().num_threads();
  for (int num_task : {1, 2, threads}) {
    Tensor out = FloatTensor(std::vector<float>(n, 0));
    auto seen = Tensor::Empty({256}, Int32(), CpuDevice());
    std::fill(seen->data_as<int32_t>(), seen->data_as<int32_t>() + 256, 0);
    if (num_task > threads) continue;
    auto r = lib_.GetFunction("parallel_two_phase")(in, out, *seen, num_task);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    int64_t chunk = (n + num_task - 1) / num_task;
    for (int t = 0; t < num_task; ++t) {
      EXPECT_EQ(seen->data_as<int32_t>()[t], 1) << "task " << t << " of " << num_task;
      float neighbour_first = 2.0f * static_cast<float>(((t + 1) % num_task) * chunk);
      int64_t i = t * chunk;
      if (i < n) {
        EXPECT_EQ(out.data_as<float>()[i], 2.0f * i + neighbour_first) << "num_task " << num_task;
      }
    }
  }
}

TEST_F(LibraryModuleTest, ParallelLaunchWithZeroTasksUsesAllWorkers) {
  auto out = Tensor::Empty({2}, Int32(), CpuDevice());
  out->data_as<int32_t>()[0] = out->data_as<int32_t>()[1] = 0;
  ASSERT_TRUE(lib_.GetFunction("parallel_default_tasks")(*out).ok());
  EXPECT_EQ(out->data_as<int32_t>()[0], ThreadPool::Global().num_threads());
  EXPECT_EQ(out->data_as<int32_t>()[1], ThreadPool::Global().num_threads());
}

TEST_F(LibraryModuleTest, ParallelTaskFailureIsReported) {
  auto r = lib_.GetFunction("parallel_fails")();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("parallel task failed on purpose"), std::string::npos) << r.status().message();
}

TEST_F(LibraryModuleTest, NestedLaunchRunsInline) {
  auto out = Tensor::Empty({1}, Int32(), CpuDevice());
  out->data_as<int32_t>()[0] = 0;
  ASSERT_TRUE(lib_.GetFunction("parallel_nested")(*out).ok());
  // Every outer task launched an inline inner launch of one task.
  EXPECT_EQ(out->data_as<int32_t>()[0], ThreadPool::Global().num_threads());
}

TEST_F(LibraryModuleTest, EnvLookupFindsImportsThenRegistry) {
  ASSERT_TRUE(FunctionRegistry::Global()
                  .Register("test.triple",
                            PackedFunc::FromBody("test.triple",
                                                 [](PackedArgs args, Value* ret) -> Status {
                                                   SORUN_ASSIGN_OR_RETURN(int64_t v, args.GetInt(0));
                                                   *ret = Value::Int(3 * v);
                                                   return Status::Ok();
                                                 }),
                            true)
                  .ok());
  auto r = lib_.GetFunction("call_from_env")("test.triple", 14);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r->AsInt(), 42);
  auto missing = lib_.GetFunction("call_from_env")("test.nothing", 1);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("cannot find function 'test.nothing'"), std::string::npos);
}

TEST_F(LibraryModuleTest, CStyleKernelsCallTheRuntimeByName) {
  auto out = Tensor::Empty({10}, Float32(), CpuDevice());
  ASSERT_TRUE(lib_.GetFunction("c_style_workspace_fill")(*out).ok());
  EXPECT_EQ(out->data_as<float>()[9], 27.0f);
  auto once = lib_.GetFunction("c_style_run_once")();
  ASSERT_TRUE(once.ok());
  EXPECT_EQ(*once->AsInt(), 1);
}

// TVM system-lib builds call TVMBackendRegisterSystemLibSymbol by name from a constructor: dlopen
// needs the symbol, and the registration is recorded.
TEST_F(LibraryModuleTest, SystemLibRegistrationAtLoadTime) {
  auto rc = lib_.GetFunction("system_lib_register_result")();
  ASSERT_TRUE(rc.ok()) << rc.status().ToString();
  EXPECT_EQ(*rc->AsInt(), 0);
  const char* marker = static_cast<const char*>(FindSystemLibSymbol("abi_test_kernels.marker"));
  ASSERT_NE(marker, nullptr);
  EXPECT_STREQ(marker, "abi_test_kernels");
  EXPECT_EQ(FindSystemLibSymbol("no.such.symbol"), nullptr);
  int x = 0, y = 0;
  EXPECT_EQ(TVMBackendRegisterSystemLibSymbol("test.system_lib", &x), 0);
  EXPECT_EQ(TVMBackendRegisterSystemLibSymbol("test.system_lib", &y), 0);  // the later one wins, as in TVM
  EXPECT_EQ(FindSystemLibSymbol("test.system_lib"), &y);
  EXPECT_EQ(TVMBackendRegisterSystemLibSymbol(nullptr, &x), -1);
  EXPECT_NE(std::string(TVMGetLastError()).find("null name"), std::string::npos);
}

TEST_F(LibraryModuleTest, SecondOpenOfSameFileSharesTheNode) {
  auto again = LibraryModuleNode::Open(testing::Runfile(kKernels));
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->reused);
  EXPECT_EQ(static_cast<ModuleNode*>(again->module.get()), lib_.get());
}

TEST_F(LibraryModuleTest, FunctionsKeepLibraryMapped) {
  PackedFunc add_one = lib_.GetFunction("add_one");
  lib_ = Module();
  Tensor in = FloatTensor({1});
  Tensor out = FloatTensor({0});
  ASSERT_TRUE(add_one(in, out).ok());
  EXPECT_EQ(out.data_as<float>()[0], 2.0f);
}

TEST(LibraryModuleOpenTest, ErrorsNameTheFile) {
  auto missing = LibraryModuleNode::Open("/nonexistent/model.so");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("/nonexistent/model.so"), std::string::npos);
  std::string dir = testing::MakeTempDir();
  std::string junk = dir + "/junk.so";
  testing::WriteFileOrDie(junk, "this is not an ELF file");
  auto bad = LibraryModuleNode::Open(junk);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("junk.so: not an ELF file"), std::string::npos) << bad.status().message();
}

TEST(CBackendApiTest, FuncCallThroughCAbi) {
  TVMFunctionHandle f = nullptr;
  ASSERT_EQ(TVMFuncGetGlobal("__tvm_set_device", &f), 0);
  ASSERT_NE(f, nullptr);
  TVMValue args[2];
  int codes[2] = {kTVMArgInt, kTVMArgInt};
  args[0].v_int64 = kDLCPU;
  args[1].v_int64 = 5;
  TVMValue rv;
  int rcode;
  EXPECT_EQ(TVMFuncCall(f, args, codes, 2, &rv, &rcode), -1);
  EXPECT_NE(std::string(TVMGetLastError()).find("cpu:5 does not exist"), std::string::npos) << TVMGetLastError();
  args[1].v_int64 = 0;
  EXPECT_EQ(TVMFuncCall(f, args, codes, 2, &rv, &rcode), 0);
  EXPECT_EQ(TVMFuncFree(f), 0);
  EXPECT_EQ(TVMFuncCall(nullptr, args, codes, 2, &rv, &rcode), -1);
}

TEST(CBackendApiTest, WorkspaceFreeOfForeignPointerFails) {
  int x;
  EXPECT_EQ(TVMBackendFreeWorkspace(kDLCPU, 0, &x), -1);
  EXPECT_NE(std::string(TVMGetLastError()).find("not allocated by this thread"), std::string::npos);
  EXPECT_EQ(TVMBackendAllocWorkspace(kDLVulkan, 0, 16, 2, 32), nullptr);
  EXPECT_NE(std::string(TVMGetLastError()).find("vulkan"), std::string::npos);
}

TEST(CBackendApiTest, GetFuncFromEnvWithoutContextUsesRegistry) {
  TVMFunctionHandle f = nullptr;
  EXPECT_EQ(TVMBackendGetFuncFromEnv(nullptr, "__tvm_set_device", &f), 0);
  EXPECT_NE(f, nullptr);
  EXPECT_EQ(TVMBackendGetFuncFromEnv(nullptr, "nope", &f), -1);
}

}  // namespace
}  // namespace sorun

namespace sorun {
namespace {

// glibc's dlopen dies with SIGBUS on a truncated library; the preflight check must refuse every
// truncation that cuts the program headers or a loaded segment.
TEST(ElfPreflightTest, EveryTruncationOfARealLibraryIsRefusedOrHarmless) {
  std::string bytes = testing::ReadFileOrDie(testing::Runfile(kKernels));
  ASSERT_TRUE(PreflightSharedLibraryBytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "k.so").ok());
  std::string dir = testing::MakeTempDir("preflight");
  for (size_t cut = 0; cut < bytes.size(); cut += 97) {
    Status s = PreflightSharedLibraryBytes(reinterpret_cast<const uint8_t*>(bytes.data()), cut, "k.so");
    if (s.ok()) {
      // Only section headers or other unmapped trailing data were cut: dlopen must work on it.
      std::string path = dir + "/cut" + std::to_string(cut) + ".so";
      testing::WriteFileOrDie(path, bytes.substr(0, cut));
      EXPECT_TRUE(LibraryModuleNode::Open(path).ok()) << cut;
    } else {
      EXPECT_EQ(s.code(), StatusCode::kDataLoss);
      EXPECT_TRUE(s.message().find("k.so: not a loadable shared library") != std::string::npos ||
                  s.message().find("k.so: not an ELF file") != std::string::npos)
          << s.message();
    }
  }
}

}  // namespace
}  // namespace sorun
