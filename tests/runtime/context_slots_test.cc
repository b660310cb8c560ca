// The one list of context slots: each name is "__" + a C function of the runtime that every binary
// linking the runtime exports by that name (runtime/c_api_exports.bzl), the slot holds that very
// function, the names are reserved (never kernels), and a real library gets its slots filled from it.
#include "runtime/context_slots.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "runtime/library_module.h"
#include "runtime/registry_keys.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

TEST(ContextSlotsTest, EachSlotHoldsTheExportedFunctionOfItsName) {
  std::set<std::string> names;
  for (const ContextSlot& slot : ContextSlots()) {
    const std::string name = slot.name;
    SCOPED_TRACE(name);
    EXPECT_TRUE(names.insert(name).second) << "listed twice";
    ASSERT_EQ(name.rfind("__TVM", 0), 0u);
    EXPECT_TRUE(keys::IsReservedAbiSymbol(name));
    ASSERT_NE(slot.function, nullptr);
    // The plain name is exported from every binary that links the runtime: the same function.
    EXPECT_EQ(dlsym(RTLD_DEFAULT, name.c_str() + 2), slot.function);
  }
  EXPECT_EQ(names.size(), kContextSlotCount);
}

TEST(ContextSlotsTest, LegacySlotsComeFirstInTvmOrder) {
  const char* const legacy[] = {"__TVMFuncCall",
                                "__TVMAPISetLastError",
                                "__TVMBackendGetFuncFromEnv",
                                "__TVMBackendAllocWorkspace",
                                "__TVMBackendFreeWorkspace",
                                "__TVMBackendParallelLaunch",
                                "__TVMBackendParallelBarrier"};
  for (size_t i = 0; i < sizeof(legacy) / sizeof(legacy[0]); ++i) {
    EXPECT_STREQ(ContextSlots()[i].name, legacy[i]);
  }
  for (size_t i = 7; i < kContextSlotCount; ++i) {
    EXPECT_EQ(std::string(ContextSlots()[i].name).rfind("__TVMFFI", 0), 0u) << ContextSlots()[i].name;
  }
}

TEST(ContextSlotsTest, LoadingFillsEverySlotALibraryDefines) {
  // testdata/kernels/abi_test_kernels.c defines the seven legacy slots.
  auto opened = LibraryModuleNode::Open(testing::Runfile("testdata/kernels/libabi_test_kernels.so"));
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  const LibraryModuleNode& lib = *opened->module;
  int defined = 0;
  for (const ContextSlot& slot : ContextSlots()) {
    void** p = static_cast<void**>(lib.FindSymbol(slot.name));
    if (p == nullptr) continue;
    ++defined;
    EXPECT_EQ(*p, slot.function) << slot.name;
  }
  EXPECT_EQ(defined, 7);
  EXPECT_EQ(lib.context_slots_filled(), defined);
}

}  // namespace
}  // namespace sorun
