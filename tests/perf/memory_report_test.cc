// The memory report is exact: the plan's activation bytes (GraphExecutor::memory_plan(), available
// right after creation, before the first run) are the bytes the executor really asks its device for,
// parameters are allocated once per device whatever the executor count, and `sorun inspect --json`
// reports the same plan as the API for zoo models.
//
// Allocations are counted by a host-memory DeviceApi registered for an otherwise unused device type
// (tests/util/counting_device_api.h): the executor's storage setup is device-agnostic, so what it asks
// this device for is what it asks the CPU for.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "api/model_loading.h"
#include "graph_executor/graph_builder.h"
#include "graph_executor/graph_executable.h"
#include "runtime/data_type.h"
#include "runtime/device_api.h"
#include "runtime/library_module.h"
#include "tests/tools/cli_test_util.h"
#include "tests/util/counting_device_api.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

using testing::CountingDeviceApi;
constexpr DLDeviceType kCounted = CountingDeviceApi::kType;

Module Kernels() {
  auto opened = LibraryModuleNode::Open(testing::Runfile("testdata/kernels/libnn_kernels.so"));
  EXPECT_TRUE(opened.ok()) << opened.status().ToString();
  return Module(ObjectPtr<ModuleNode>(opened->module));
}

Tensor Filled(std::vector<int64_t> shape, DLDataType dtype) {
  auto t = Tensor::Empty(shape, dtype, CpuDevice());
  std::memset(t->data(), 1, static_cast<size_t>(t->nbytes()));
  return *t;
}

// Sizes that are not multiples of 4 or 64 (a 7-byte uint8 input, 15-float entries) so any rounding
// of pool sizes shows, storage reused by dead intermediates, a reshape alias and two parameters.
StatusOr<Module> OddSizedFactory() {
  GraphBuilder b;
  int x = b.Input("x", {3, 5});
  int mask = b.Input("mask", {7}, UInt8());
  (void)mask;
  int bias = b.Input("bias", {5});
  int w = b.Input("w", {4, 5});
  int r1 = b.Op("sorun_relu", {x}, {3, 5});
  int ba = b.Op("sorun_bias_add", {r1, bias}, {3, 5});
  int r2 = b.Op("sorun_relu", {ba}, {3, 5});
  int flat = b.Reshape(r2, {15});
  int back = b.Reshape(flat, {3, 5});
  int d = b.Op("sorun_dense", {back, w}, {3, 4});
  b.Output(d);
  SORUN_ASSIGN_OR_RETURN(std::string json, b.BuildJson());
  return MakeGraphExecutorFactory(json, {{"bias", Filled({5}, Float32())}, {"w", Filled({4, 5}, Float32())}},
                                  Kernels());
}

uint64_t PoolSum(const MemoryPlan& plan, bool weights_only) {
  uint64_t n = 0;
  for (const StoragePool& p : plan.pools) n += p.weights_only == weights_only ? p.bytes : 0;
  return n;
}

TEST(MemoryReportTest, PlanEqualsTheBytesTheExecutorAllocates) {
  ASSERT_TRUE(Initialize().ok());
  CountingDeviceApi* api = CountingDeviceApi::Get();
  auto factory = OddSizedFactory();
  ASSERT_TRUE(factory.ok()) << factory.status().ToString();
  auto* f = static_cast<GraphExecutorFactoryNode*>(factory->get());
  const DLDevice dev{kCounted, 0};

  const uint64_t before = api->live_bytes();
  auto e1 = f->CreateExecutor({dev});
  ASSERT_TRUE(e1.ok()) << e1.status().ToString();
  const MemoryPlan& plan = (*e1)->memory_plan();
  ASSERT_EQ(plan.devices.size(), 1u);
  const DeviceMemory m = plan.devices[0];  // a copy: checked again after the executors are gone
  EXPECT_EQ(m.device, dev);
  // Independent of the plan's own sums, from the graph: x 60 B, mask 7 B, and two 60-byte pools for the
  // intermediates (r2 reuses r1's storage, the 48-byte dense output reuses bias_add's); bias 20 B and
  // w 80 B are weights.
  EXPECT_EQ(m.activation_bytes, 60u + 7u + 60u + 60u);
  EXPECT_EQ(m.weight_bytes, 20u + 80u);
  EXPECT_EQ(m.activation_bytes, PoolSum(plan, false));
  EXPECT_EQ(m.weight_bytes, PoolSum(plan, true));
  EXPECT_EQ(m.workspace_bytes, 0u);  // nothing has run yet
  // The first executor on a device uploads the weights once, then allocates exactly its plan.
  EXPECT_EQ(f->weights()->uploaded_bytes(dev), m.weight_bytes);
  EXPECT_EQ(api->live_bytes() - before, m.activation_bytes + m.weight_bytes);

  // Every further executor costs exactly its activations: the weights are shared.
  const uint64_t allocs_before = api->allocations();
  auto e2 = f->CreateExecutor({dev});
  ASSERT_TRUE(e2.ok());
  EXPECT_EQ(api->live_bytes() - before, 2 * m.activation_bytes + m.weight_bytes);
  size_t allocated_pools = 0;
  for (const StoragePool& p : plan.pools) allocated_pools += p.weights_only ? 0 : 1;
  EXPECT_EQ(api->allocations() - allocs_before, allocated_pools) << "one allocation per activation pool";

  e1->reset();
  e2->reset();
  EXPECT_EQ(api->live_bytes() - before, m.weight_bytes) << "activations are freed with their executor";
}

// Extracts the first unsigned number after "key": in `json` at or after `from`.
uint64_t JsonU64(const std::string& json, const std::string& key, size_t from) {
  size_t at = json.find("\"" + key + "\":", from);
  EXPECT_NE(at, std::string::npos) << key;
  if (at == std::string::npos) return ~0ull;
  return std::strtoull(json.c_str() + at + key.size() + 3, nullptr, 10);
}

class InspectMatchesApiTest : public ::testing::TestWithParam<std::string> {};

TEST_P(InspectMatchesApiTest, InspectReportsTheApisPlan) {
  ASSERT_TRUE(Initialize().ok());
  const std::string path = testing::Runfile("testdata/models/" + GetParam() + ".so");
  testing::CliResult r = testing::RunSorun({"inspect", "--json", path});
  ASSERT_EQ(r.exit_code, 0) << testing::Describe(r);
  size_t plan_at = r.out.find("\"memory_plan\":[");
  ASSERT_NE(plan_at, std::string::npos) << r.out;

  auto model = Load(path);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  auto exec = CreateExecutor(*model, {CpuDevice()});
  ASSERT_TRUE(exec.ok()) << exec.status().ToString();
  const MemoryPlan& plan = (*exec)->memory_plan();  // before the first run
  ASSERT_EQ(plan.devices.size(), 1u);
  EXPECT_EQ(r.out.substr(r.out.find("\"device\":", plan_at), 16), "\"device\":\"cpu:0\"");
  EXPECT_EQ(JsonU64(r.out, "param_bytes", plan_at), plan.devices[0].weight_bytes);
  EXPECT_EQ(JsonU64(r.out, "activation_bytes", plan_at), plan.devices[0].activation_bytes);
  EXPECT_GT(plan.devices[0].activation_bytes, 0u);
  // The shared weights the factory holds are the params inspect lists (no unused params here).
  size_t params_at = r.out.find("\"params\":{");
  ASSERT_NE(params_at, std::string::npos);
  auto factory = GetFactory(*model);
  ASSERT_TRUE(factory.ok());
  EXPECT_EQ(JsonU64(r.out, "bytes", params_at), (*factory)->weights()->total_bytes());
  EXPECT_EQ(plan.devices[0].weight_bytes, (*factory)->weights()->total_bytes());
}

INSTANTIATE_TEST_SUITE_P(Zoo, InspectMatchesApiTest, ::testing::Values("mlp", "cnn", "resblock", "conv_heavy"));

}  // namespace
}  // namespace sorun
