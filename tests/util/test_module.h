// A user-defined module type for tests of the module tree machinery: type key "sorun_test_value",
// payload = string name + i64 value, functions "value" and "name". RegisterTestValueModule() registers
// its blob loader the way an application would.
#ifndef SORUN_TESTS_UTIL_TEST_MODULE_H_
#define SORUN_TESTS_UTIL_TEST_MODULE_H_

#include <string>

#include "runtime/blob_loader.h"
#include "runtime/module.h"

namespace sorun {
namespace testing {

inline constexpr char kTestValueKey[] = "sorun_test_value";

class TestValueModule final : public ModuleNode {
 public:
  TestValueModule(std::string name, int64_t value) : name_(std::move(name)), value_(value) {}
  const char* type_key() const override { return kTestValueKey; }
  int property_mask() const override { return kModuleBinarySerializable | kModuleRunnable; }
  PackedFunc GetFunction(std::string_view fn, const ObjectPtr<ModuleNode>& self) override {
    if (fn == "value") {
      int64_t v = value_;
      return PackedFunc::FromBody("value", [v, self](PackedArgs, Value* ret) {
        *ret = Value::Int(v);
        return Status::Ok();
      });
    }
    if (fn == "name_of_" + name_) {
      std::string n = name_;
      return PackedFunc::FromBody(std::string(fn), [n, self](PackedArgs, Value* ret) {
        *ret = Value::Str(n);
        return Status::Ok();
      });
    }
    return PackedFunc();
  }
  Status SaveToBinary(BinaryWriter* writer) const override {
    writer->WriteString(name_);
    writer->WriteI64(value_);
    return Status::Ok();
  }
  const std::string& name() const { return name_; }
  int64_t value() const { return value_; }

 private:
  std::string name_;
  int64_t value_;
};

inline Module MakeTestValue(const std::string& name, int64_t value) {
  return Module(ObjectPtr<ModuleNode>(MakeObject<TestValueModule>(name, value)));
}

inline Status RegisterTestValueModule() {
  return RegisterBlobLoader(kTestValueKey, [](BinaryReader& r) -> StatusOr<Module> {
    std::string name;
    int64_t value = 0;
    SORUN_RETURN_IF_ERROR(r.ReadString(&name, "test value name"));
    SORUN_RETURN_IF_ERROR(r.ReadI64(&value));
    return MakeTestValue(name, value);
  });
}

}  // namespace testing
}  // namespace sorun

#endif  // SORUN_TESTS_UTIL_TEST_MODULE_H_
