#include "runtime/packed_func.h"

#include <gtest/gtest.h>

#include <new>
#include <string>
#include <vector>

#include "runtime/c_runtime_api.h"
#include "runtime/data_type.h"
#include "runtime/function_registry.h"
#include "runtime/module.h"

namespace sorun {
namespace {

PackedFunc Adder() {
  return PackedFunc::FromBody("adder", [](PackedArgs args, Value* ret) -> Status {
    SORUN_RETURN_IF_ERROR(args.ExpectCount(2, "adder"));
    SORUN_ASSIGN_OR_RETURN(int64_t a, args.GetInt(0));
    SORUN_ASSIGN_OR_RETURN(double b, args.GetFloat(1));
    *ret = Value::Float(static_cast<double>(a) + b);
    return Status::Ok();
  });
}

TEST(PackedFuncTest, TypedCallConvertsArgumentsAndReturn) {
  auto r = Adder()(3, 0.5);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r->AsFloat(), 3.5);
  // Int promotes to float where a float is expected.
  EXPECT_EQ(*Adder()(3, 4)->AsFloat(), 7.0);
}

TEST(PackedFuncTest, TypeErrorsNameTheArgument) {
  auto r = Adder()("x", 1.0);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "argument 0: expected int, got str (type code 11)");
  auto c = Adder()(1);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), "adder expects 2 argument(s), got 1");
}

TEST(PackedFuncTest, NullptrArgumentIsANullHandle) {
  PackedFunc probe = PackedFunc::FromBody("probe", [](PackedArgs args, Value* ret) -> Status {
    *ret = Value::Int(args.code(0));
    return Status::Ok();
  });
  auto r = probe(nullptr);  // not a string (std::string_view from a null pointer)
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r->AsInt(), kTVMNullptr);
}

TEST(PackedFuncTest, ValuesOwnStringsAndObjects) {
  Value s = Value::Str("hello");
  Value copy = s;
  EXPECT_STREQ(copy.raw().v_str, "hello");
  EXPECT_NE(copy.raw().v_str, s.raw().v_str);
  Value moved = std::move(copy);
  EXPECT_STREQ(moved.raw().v_str, "hello");

  auto t = Tensor::Empty({3}, Float32(), CpuDevice());
  ASSERT_TRUE(t.ok());
  Value tv = Value::FromTensor(*t);
  EXPECT_EQ(tv.type_code(), kTVMNDArrayHandle);
  EXPECT_EQ(tv.raw().v_handle, static_cast<void*>(t->dl()));
  auto back = tv.AsTensor();
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->data(), t->data());
  EXPECT_FALSE(tv.AsModule().ok());
}

TEST(PackedFuncTest, TensorArgumentsArriveAsDLTensor) {
  auto t = Tensor::Empty({2}, Float32(), CpuDevice());
  ASSERT_TRUE(t.ok());
  t->data_as<float>()[1] = 9.0f;
  PackedFunc f = PackedFunc::FromBody("second", [](PackedArgs args, Value* ret) -> Status {
    SORUN_ASSIGN_OR_RETURN(DLTensor * x, args.GetDLTensor(0));
    *ret = Value::Float(static_cast<float*>(x->data)[1]);
    return Status::Ok();
  });
  EXPECT_EQ(*f(*t)->AsFloat(), 9.0);
  EXPECT_EQ(*f(t->dl())->AsFloat(), 9.0);
  EXPECT_FALSE(f(1).ok());
}

TEST(PackedFuncTest, DevicesAndDtypes) {
  PackedFunc f = PackedFunc::FromBody("describe", [](PackedArgs args, Value* ret) -> Status {
    SORUN_ASSIGN_OR_RETURN(DLDevice d, args.GetDevice(0));
    SORUN_ASSIGN_OR_RETURN(DLDataType t, args.GetDType(1));
    *ret = Value::Str(DeviceToString(d) + " " + DTypeToString(t));
    return Status::Ok();
  });
  EXPECT_EQ(*f(DLDevice{kDLOpenCL, 2}, Float32())->AsString(), "opencl:2 float32");
  EXPECT_EQ(*f(DLDevice{kDLCPU, 0}, "int8")->AsString(), "cpu:0 int8");
}

TEST(PackedArgArraysTest, InlineUpToTheLimitThenOnTheHeap) {
  PackedArgArrays<4> small(4);
  const char* begin = reinterpret_cast<const char*>(&small);
  const char* end = begin + sizeof(small);
  const char* values = reinterpret_cast<const char*>(small.values());
  const char* codes = reinterpret_cast<const char*>(small.codes());
  EXPECT_TRUE(values >= begin && values < end);
  EXPECT_TRUE(codes >= begin && codes < end);
  PackedArgArrays<4> large(5);
  const char* large_begin = reinterpret_cast<const char*>(&large);
  const char* large_values = reinterpret_cast<const char*>(large.values());
  EXPECT_FALSE(large_values >= large_begin && large_values < large_begin + sizeof(large));
  for (int i = 0; i < 5; ++i) {  // all five slots are writable
    large.values()[i].v_int64 = i;
    large.codes()[i] = kTVMArgInt;
  }
  EXPECT_EQ(PackedArgs(large.values(), large.codes(), 5).GetInt(4).value(), 4);
}

TEST(PackedFuncTest, VectorCallsPassEveryArgumentPastTheInlineArrays) {
  PackedFunc sum = PackedFunc::FromBody("sum", [](PackedArgs args, Value* ret) -> Status {
    int64_t total = 0;
    for (int i = 0; i < args.size(); ++i) {
      SORUN_ASSIGN_OR_RETURN(int64_t v, args.GetInt(i));
      total += v;
    }
    *ret = Value::Int(total);
    return Status::Ok();
  });
  for (int n : {0, 8, 9, 20}) {
    std::vector<Value> args;
    for (int i = 1; i <= n; ++i) args.push_back(Value::Int(i));
    Value ret;
    ASSERT_TRUE(sum.CallPacked(args, &ret).ok());
    EXPECT_EQ(ret.AsInt().value(), n * (n + 1) / 2) << n;
  }
}

TEST(FunctionRegistryTest, RegisterGetOverrideAndList) {
  FunctionRegistry registry;
  ASSERT_TRUE(registry.Register("test.add", Adder()).ok());
  Status dup = registry.Register("test.add", Adder());
  EXPECT_EQ(dup.code(), StatusCode::kAlreadyExists);
  EXPECT_TRUE(registry.Register("test.add", Adder(), /*allow_override=*/true).ok());
  EXPECT_TRUE(registry.Get("test.add").defined());
  EXPECT_FALSE(registry.Get("test.missing").defined());
  ASSERT_TRUE(registry.Register("test.b", Adder()).ok());
  EXPECT_EQ(registry.ListNames("test."), (std::vector<std::string>{"test.add", "test.b"}));
  EXPECT_TRUE(registry.Remove("test.b"));
  EXPECT_FALSE(registry.Remove("test.b"));
}

TEST(FunctionRegistryTest, GlobalHasCoreBuiltins) {
  PackedFunc set_device = FunctionRegistry::Global().Get("__tvm_set_device");
  ASSERT_TRUE(set_device.defined());
  EXPECT_TRUE(set_device(static_cast<int>(kDLCPU), 0).ok());
  auto bad = set_device(static_cast<int>(kDLCPU), 3);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kUnavailable);
}

// A C++ module with one function, to test module trees.
class ConstModule : public ModuleNode {
 public:
  ConstModule(std::string key, std::string fn, int64_t v) : key_(std::move(key)), fn_(std::move(fn)), v_(v) {}
  const char* type_key() const override { return key_.c_str(); }
  PackedFunc GetFunction(std::string_view name, const ObjectPtr<ModuleNode>& self) override {
    if (name != fn_) return PackedFunc();
    int64_t v = v_;
    return PackedFunc::FromBody(fn_, [v, self](PackedArgs, Value* ret) -> Status {
      *ret = Value::Int(v);
      return Status::Ok();
    });
  }

 private:
  std::string key_, fn_;
  int64_t v_;
};

Module MakeConst(const std::string& key, const std::string& fn, int64_t v) {
  return Module(ObjectPtr<ModuleNode>(MakeObject<ConstModule>(key, fn, v)));
}

TEST(ModuleTest, ImportsAreSearchedDepthFirstInOrder) {
  Module root = MakeConst("root", "r", 0);
  Module a = MakeConst("a", "f", 1);
  Module b = MakeConst("b", "f", 2);
  Module a_child = MakeConst("a_child", "g", 3);
  ASSERT_TRUE(a.Import(a_child).ok());
  ASSERT_TRUE(root.Import(a).ok());
  ASSERT_TRUE(root.Import(b).ok());
  EXPECT_FALSE(root.GetFunction("f").defined());
  EXPECT_EQ(*root.GetFunction("f", true)()->AsInt(), 1);
  EXPECT_EQ(*root.GetFunction("g", true)()->AsInt(), 3);
  auto env = root->GetFuncFromEnv("g");
  ASSERT_TRUE(env.ok());
  EXPECT_EQ(*(*env)()->AsInt(), 3);
  // Env lookup falls back to the global registry.
  EXPECT_TRUE(root->GetFuncFromEnv("__tvm_set_device").ok());
  auto missing = root->GetFuncFromEnv("nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "cannot find function 'nope' in the imported modules or the global registry");
}

TEST(ModuleTest, ImportCyclesAreRefused) {
  Module a = MakeConst("a", "f", 1);
  Module b = MakeConst("b", "f", 2);
  ASSERT_TRUE(a.Import(b).ok());
  Status s = b.Import(a);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cycle"), std::string::npos);
  EXPECT_FALSE(a.Import(a).ok());
}

TEST(ModuleTest, FunctionsKeepTheirModuleAlive) {
  PackedFunc f;
  {
    Module m = MakeConst("m", "f", 42);
    f = m.GetFunction("f");
  }
  EXPECT_EQ(*f()->AsInt(), 42);
}

// Issue 13 class 9: no C++ exception crosses a C entry point; it becomes -1 (or NULL) + the message.
TEST(CBoundaryTest, ExceptionsFromPackedFunctionsBecomeErrorReturns) {
  PackedFunc throws_length = PackedFunc::FromBody("grows", [](PackedArgs, Value*) -> Status {
    std::string s;
    s.resize(s.max_size() + 1);  // std::length_error
    return Status::Ok();
  });
  PackedFunc throws_alloc =
      PackedFunc::FromBody("allocates", [](PackedArgs, Value*) -> Status { throw std::bad_alloc(); });
  PackedFunc throws_other = PackedFunc::FromBody("throws", [](PackedArgs, Value*) -> Status { throw 42; });
  TVMValue ret;
  int ret_code = 0;
  EXPECT_EQ(TVMFuncCall(throws_length.get(), nullptr, nullptr, 0, &ret, &ret_code), -1);
  EXPECT_EQ(std::string(TVMGetLastError()).rfind("TVMFuncCall: C++ exception: ", 0), 0u) << TVMGetLastError();
  EXPECT_EQ(TVMFuncCall(throws_alloc.get(), nullptr, nullptr, 0, &ret, &ret_code), -1);
  EXPECT_EQ(std::string(TVMGetLastError()), "TVMFuncCall: out of memory (std::bad_alloc)");
  EXPECT_EQ(TVMFuncCall(throws_other.get(), nullptr, nullptr, 0, &ret, &ret_code), -1);
  EXPECT_EQ(std::string(TVMGetLastError()), "TVMFuncCall: C++ exception of unknown type");
  // The thread is fine afterwards: a normal call succeeds.
  TVMValue args[2];
  int codes[2] = {kDLInt, kDLFloat};
  args[0].v_int64 = 2;
  args[1].v_float64 = 0.25;
  ASSERT_EQ(TVMFuncCall(Adder().get(), args, codes, 2, &ret, &ret_code), 0) << TVMGetLastError();
  EXPECT_EQ(ret_code, kDLFloat);
  EXPECT_EQ(ret.v_float64, 2.25);
}

TEST(CBoundaryTest, GuardTurnsExceptionsIntoTheErrorValue) {
  int* none =
      GuardCBoundary("TVMBackendAllocWorkspace", static_cast<int*>(nullptr), []() -> int* { throw std::bad_alloc(); });
  EXPECT_EQ(none, nullptr);
  EXPECT_EQ(std::string(TVMGetLastError()), "TVMBackendAllocWorkspace: out of memory (std::bad_alloc)");
  EXPECT_EQ(GuardCBoundary("x", -1, [] { return 7; }), 7);
}

TEST(CBoundaryTest, AbsurdWorkspacesAndUnknownDevicesFailWithAMessage) {
  // (A size the pool refuses before asking the allocator: ASan aborts on absurd malloc sizes.)
  EXPECT_EQ(TVMBackendAllocWorkspace(kDLCPU, 0, UINT64_MAX, kDLFloat, 32), nullptr);
  EXPECT_NE(std::string(TVMGetLastError()).find("out of memory for 18446744073709551615 bytes"), std::string::npos)
      << TVMGetLastError();
  EXPECT_EQ(TVMBackendAllocWorkspace(99, 0, 64, kDLFloat, 32), nullptr);
  EXPECT_NE(std::string(TVMGetLastError()).find("unknown device type 99"), std::string::npos) << TVMGetLastError();
  EXPECT_EQ(TVMBackendFreeWorkspace(-5, 0, nullptr), -1);
  EXPECT_NE(std::string(TVMGetLastError()).find("unknown device type -5"), std::string::npos) << TVMGetLastError();
}

TEST(DeviceTypeTest, IntegersBecomeDevicesOnlyThroughMakeDevice) {
  EXPECT_EQ(MakeDevice(kDLOpenCL, 1)->device_type, kDLOpenCL);
  EXPECT_EQ(MakeDevice(99, 0).status().message(), "unknown device type 99 (DLPack device types are 0..15)");
  EXPECT_FALSE(MakeDevice(-1, 0).ok());
  EXPECT_FALSE(MakeDevice(kDLCPU, int64_t{1} << 40).ok());
  EXPECT_EQ(DescribeDeviceType(kDLCUDA), "cuda");
  EXPECT_EQ(DescribeDeviceType(99), "unknown device type 99");
}

}  // namespace
}  // namespace sorun
