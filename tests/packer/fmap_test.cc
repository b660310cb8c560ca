// Kernel description files (packer/fmap.h): TVM's .tvm_meta.json layout, and errors that name the file
// and the kernel.
#include "packer/fmap.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/data_type.h"

namespace sorun {
namespace {

TEST(FmapTest, TvmMetaJsonLayout) {
  auto k = ParseFmapJson(R"({"tvm_version": "0.16.0", "func_info": {
      "b_kernel": {"name": "", "arg_types": ["handle", "float32", "int64"],
                   "launch_param_tags": ["blockIdx.x", "threadIdx.x", "tir.use_dyn_shared_memory"]},
      "a_kernel": {"arg_types": ["handle"], "thread_axis_tags": ["threadIdx.y"], "arg_extra_tags": [0]}}})",
                         "k.json");
  ASSERT_TRUE(k.ok()) << k.status().ToString();
  ASSERT_EQ(k->size(), 2u);
  EXPECT_EQ((*k)[0].first, "a_kernel");  // sorted
  EXPECT_EQ((*k)[0].second.launch_param_tags, (std::vector<std::string>{"threadIdx.y"}));
  EXPECT_EQ((*k)[1].second.arg_types.size(), 3u);
  EXPECT_EQ((*k)[1].second.arg_types[0], MakeDType(kDTypeHandle, 64));
  EXPECT_EQ((*k)[1].second.arg_types[2], Int64());
  EXPECT_EQ((*k)[1].second.launch_param_tags.back(), "tir.use_dyn_shared_memory");
}

TEST(FmapTest, ErrorsNameTheFileAndKernel) {
  struct Case {
    const char* json;
    std::vector<std::string> parts;
  };
  for (
      const Case& c : std::vector<Case>{
          {"[1]", {"f.json", "func_info"}},
          {"{", {"f.json", "invalid JSON"}},
          {R"({"func_info": {}})", {"f.json", "no kernels"}},
          {R"({"func_info": {"k": {}}})", {"f.json", "'k'", "arg_types"}},
          {R"({"func_info": {"k": {"arg_types": ["float99"]}}})", {"f.json", "'k'", "float99"}},
          {R"({"func_info": {"k": {"arg_types": ["float32x4"]}}})", {"f.json", "'k'"}},
          {R"({"func_info": {"k": {"arg_types": [], "launch_param_tags": ["warpIdx.x"]}}})",
           {"f.json", "'k'", "warpIdx.x"}},
          {R"({"func_info": {"k": {"arg_types": [], "launch_param_tags": ["tir.use_dyn_shared_memory", "blockIdx.x"]}}})",
           {"f.json", "'k'", "last"}},
          {R"({"func_info": {"k": {"arg_types": [], "launch_param_tags": ["blockIdx.x"], "thread_axis_tags": ["blockIdx.y"]}}})",
           {"f.json", "'k'", "disagree"}},
          {R"({"func_info": {"k": {"arg_types": [], "arg_extra_tags": [1]}}})", {"f.json", "'k'", "arg_extra_tags"}},
          {R"({"func_info": {"k": {"arg_types": [], "launch_tags": []}}})", {"f.json", "'k'", "launch_tags"}},
          {R"({"func_info": {"k": {"arg_types": []}}, "extra": 1})", {"f.json", "extra"}},
      }) {
    auto k = ParseFmapJson(c.json, "f.json");
    ASSERT_FALSE(k.ok()) << c.json;
    for (const std::string& p : c.parts) {
      EXPECT_NE(k.status().message().find(p), std::string::npos) << c.json << " -> " << k.status().message();
    }
  }
}

}  // namespace
}  // namespace sorun
