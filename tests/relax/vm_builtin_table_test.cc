// relax/vm_builtin_table: the table's rows are well formed (enumerators in order, unique TVM names,
// found by name and by id), every row has its own handler, and the table is the list the
// classification, and so `sorun inspect`, reports as supported.
#include "relax/vm_builtin_table.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "relax/vm_builtin_call.h"
#include "relax/vm_disassembler.h"

namespace sorun {
namespace relax {
namespace {

TEST(VmBuiltinTableTest, RowsAreNumberedNamedAndFound) {
  ASSERT_EQ(kNumBuiltins, 16u);
  std::set<std::string> names;
  for (size_t i = 0; i < kNumBuiltins; ++i) {
    const BuiltinRow& row = kBuiltinRows[i];
    EXPECT_EQ(static_cast<size_t>(row.id), i) << row.name;
    EXPECT_EQ(std::string(row.name).rfind("vm.builtin.", 0), 0u) << row.name;
    EXPECT_TRUE(names.insert(row.name).second) << row.name << " twice";
    EXPECT_EQ(FindBuiltin(row.name), &row) << row.name;
    EXPECT_STREQ(BuiltinName(row.id), row.name);
  }
  for (const char* other : {"", "vm.builtin.", "vm.builtin.to_device", "vm.builtin.reshape ", "reshape",
                            "vm.builtin.paged_attention_kv_cache_create"}) {
    EXPECT_EQ(FindBuiltin(other), nullptr) << other;
  }
}

TEST(VmBuiltinTableTest, EveryRowHasItsOwnHandler) {
  std::set<BuiltinHandler> handlers;
  for (const BuiltinRow& row : kBuiltinRows) {
    const BuiltinHandler handler = BuiltinHandlerFor(row.id);
    EXPECT_NE(handler, nullptr) << row.name;
    EXPECT_TRUE(handlers.insert(handler).second) << row.name << " shares another row's handler";
  }
}

TEST(VmBuiltinTableTest, InspectListsTheTable) {
  std::vector<std::string> rows;
  for (const BuiltinRow& row : kBuiltinRows) rows.emplace_back(row.name);
  EXPECT_EQ(SupportedBuiltins(), rows);
  // An executable whose function table names every row, and one other builtin: each row is classified
  // a supported builtin, the other is not.
  VmExecutable exec;
  for (const std::string& name : rows) {
    VmFunction fn;
    fn.name = name;
    exec.functions.push_back(fn);
    EXPECT_TRUE(IsSupportedBuiltin(name)) << name;
  }
  VmFunction other;
  other.name = "vm.builtin.invoke_closure";
  exec.functions.push_back(other);
  const std::vector<CalleeInfo> callees = ClassifyFunctions(exec, nullptr);
  ASSERT_EQ(callees.size(), rows.size() + 1);
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(callees[i].callee_class, CalleeClass::kSupportedBuiltin) << rows[i];
  }
  EXPECT_EQ(callees.back().callee_class, CalleeClass::kUnsupported);
  EXPECT_EQ(callees.back().reason, "VM builtin not implemented by sorun");
}

}  // namespace
}  // namespace relax
}  // namespace sorun
