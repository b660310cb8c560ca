// The "opencl" module on a real OpenCL device (PoCL in CI): hand-written payloads launched through
// their PackedFuncs with TVM's convention, split vs whole-program sources, load-time and call-time
// errors, the blob round trip and concurrent launches.
#include "backends/opencl/opencl_module.h"

#include <gtest/gtest.h>

#include <future>
#include <thread>
#include <vector>

#include "backends/opencl/opencl_devices.h"
#include "format/binary_reader.h"
#include "format/binary_writer.h"
#include "runtime/blob_loader.h"
#include "runtime/data_type.h"
#include "tests/opencl/opencl_test_util.h"

namespace sorun {
namespace {

using testing::DeviceFloats;
using testing::DeviceZeros;
using testing::HostFloats;
using testing::MakeFunctionInfo;

constexpr char kVaddSource[] = R"CL(
__kernel void vadd(__global const float* restrict a, __global const float* restrict b,
                   __global float* restrict c, int n) {
  int i = get_group_id(0) * get_local_size(0) + get_local_id(0);
  if (i < n) c[i] = a[i] + b[i];
}
)CL";

// y = alpha * x + offset (int) for the first n elements; exercises int32, float32, int64 and double.
constexpr char kAxpbSource[] = R"CL(
__kernel void axpb(__global const float* x, __global float* y, float alpha, int offset, long n,
                   double unused) {
  long i = get_global_id(0);
  if (i < n) y[i] = alpha * x[i] + (float)offset;
}
)CL";

// 2-D: out[r * cols + c] = r * 1000 + c, with a (blockIdx.y, blockIdx.x, threadIdx.y, threadIdx.x) launch.
constexpr char kIndex2dSource[] = R"CL(
__kernel void index2d(__global float* out, int rows, int cols) {
  int r = get_group_id(1) * get_local_size(1) + get_local_id(1);
  int c = get_group_id(0) * get_local_size(0) + get_local_id(0);
  if (r < rows && c < cols) out[r * cols + c] = (float)(r * 1000 + c);
}
)CL";

FunctionInfo VaddInfo() {
  return MakeFunctionInfo({"handle", "handle", "handle", "int32"}, {"blockIdx.x", "threadIdx.x"});
}
FunctionInfo AxpbInfo() {
  return MakeFunctionInfo({"handle", "handle", "float32", "int32", "int64", "float64"}, {"blockIdx.x", "threadIdx.x"});
}
FunctionInfo Index2dInfo() {
  return MakeFunctionInfo({"handle", "int32", "int32"}, {"blockIdx.y", "blockIdx.x", "threadIdx.y", "threadIdx.x"});
}

// TVM v0.9+ layout: one "// Function:" piece per kernel.
DeviceModulePayload SplitPayload() {
  DeviceModulePayload p;
  p.fmt = "cl";
  p.functions = {{"axpb", AxpbInfo()}, {"index2d", Index2dInfo()}, {"vadd", VaddInfo()}};
  p.data = std::string("// Function: vadd\n") + kVaddSource + "// Function: axpb\n" + kAxpbSource +
           "// Function: index2d\n" + kIndex2dSource;
  return p;
}

// Older layout: one program with every kernel.
DeviceModulePayload WholePayload() {
  DeviceModulePayload p = SplitPayload();
  p.data = std::string(kVaddSource) + kAxpbSource + kIndex2dSource;
  return p;
}

OpenclModuleOptions NoCache() {
  OpenclModuleOptions options;
  options.disable_program_cache = true;
  return options;
}

Module MustCreate(DeviceModulePayload payload, OpenclModuleOptions options = NoCache()) {
  auto m = CreateOpenclModule(std::move(payload), std::move(options));
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? *m : Module();
}

class OpenclModuleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SORUN_REQUIRE_OPENCL();
    ASSERT_TRUE(OpenclDevices::Global().SetCurrentDevice(0).ok());
  }
};

void ExpectVaddWorks(const Module& m, int n = 1000) {
  std::vector<float> a(n), b(n), want(n);
  for (int i = 0; i < n; ++i) {
    a[i] = 0.5f * i;
    b[i] = 1000.0f - i;
    want[i] = a[i] + b[i];
  }
  Tensor ta = DeviceFloats(a), tb = DeviceFloats(b), tc = DeviceZeros(n);
  PackedFunc vadd = m.GetFunction("vadd");
  ASSERT_TRUE(vadd.defined());
  const int block = 64;
  // TVM's convention: buffers as cl_mem handles (type code 3), ints as i64, then grid and block extents.
  auto r = vadd(ta.data(), tb.data(), tc.data(), n, (n + block - 1) / block, block);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(HostFloats(tc), want);
}

TEST_F(OpenclModuleTest, VectorAddThroughPackedFunc) {
  Module m = MustCreate(SplitPayload());
  EXPECT_STREQ(m.type_key(), "opencl");
  EXPECT_EQ(m->property_mask(), kModuleBinarySerializable | kModuleRunnable);
  ExpectVaddWorks(m);
  ExpectVaddWorks(m, 37);  // a partial last block, same cached kernel
}

TEST_F(OpenclModuleTest, ScalarParamsAreNarrowedToTheirDtypes) {
  Module m = MustCreate(SplitPayload());
  const int n = 300;
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i);
  Tensor tx = DeviceFloats(x), ty = DeviceZeros(n);
  // alpha (float32) comes as f64, offset (int32) and n (int64) as i64, unused (float64) as an int.
  auto r = m.GetFunction("axpb")(tx.data(), ty.data(), 2.5, -7, int64_t{250}, 3, 3, 128);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::vector<float> y = HostFloats(ty);
  for (int i = 0; i < n; ++i) EXPECT_EQ(y[i], i < 250 ? 2.5f * i - 7.0f : 0.0f) << i;
}

TEST_F(OpenclModuleTest, TwoDimensionalLaunch) {
  Module m = MustCreate(SplitPayload());
  const int rows = 13, cols = 21;
  Tensor out = DeviceZeros(rows * cols);
  // Tags: blockIdx.y, blockIdx.x, threadIdx.y, threadIdx.x -> grid (3, 4), block (8, 4).
  auto r = m.GetFunction("index2d")(out.data(), rows, cols, (rows + 3) / 4, (cols + 7) / 8, 4, 8);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::vector<float> got = HostFloats(out);
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j) EXPECT_EQ(got[i * cols + j], static_cast<float>(i * 1000 + j)) << i << "," << j;
  }
}

TEST_F(OpenclModuleTest, TensorArgumentsPassTheirBuffer) {
  Module m = MustCreate(SplitPayload());
  Tensor ta = DeviceFloats({1, 2, 3}), tb = DeviceFloats({10, 20, 30}), tc = DeviceZeros(3);
  auto r = m.GetFunction("vadd")(ta, tb.dl(), tc, 3, 1, 4);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(HostFloats(tc), (std::vector<float>{11, 22, 33}));
  // A view with a byte offset cannot be passed as a cl_mem.
  auto view = tc.View({2}, Float32(), 4);
  ASSERT_TRUE(view.ok());
  auto bad = m.GetFunction("vadd")(ta, tb, *view, 2, 1, 4);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("byte_offset"), std::string::npos) << bad.status().message();
  // A host tensor is refused.
  auto host = Tensor::Empty({3}, Float32(), CpuDevice());
  auto wrong_device = m.GetFunction("vadd")(ta, tb, *host, 3, 1, 4);
  ASSERT_FALSE(wrong_device.ok());
  EXPECT_NE(wrong_device.status().message().find("not on an OpenCL device"), std::string::npos);
}

TEST_F(OpenclModuleTest, SplitSourceBuildsOneProgramPerKernel) {
  auto node = OpenclModuleNode::Create(SplitPayload(), NoCache());
  ASSERT_TRUE(node.ok()) << node.status().ToString();
  EXPECT_EQ((*node)->num_programs(), 3u);
  // Each piece is its own program: a broken piece does not stop the others.
  DeviceModulePayload p = SplitPayload();
  p.data = std::string("// Function: vadd\n") + kVaddSource + "// Function: axpb\n this is not OpenCL C;\n" +
           "// Function: index2d\n" + kIndex2dSource;
  Module m = MustCreate(p);
  ExpectVaddWorks(m);
  Tensor t = DeviceZeros(4);
  auto r = m.GetFunction("axpb")(t.data(), t.data(), 1.0, 0, int64_t{4}, 0.0, 1, 4);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("the program of kernel 'axpb'"), std::string::npos) << r.status().message();
}

TEST_F(OpenclModuleTest, WholeSourceIsOneProgramForAllKernels) {
  auto node = OpenclModuleNode::Create(WholePayload(), NoCache());
  ASSERT_TRUE(node.ok()) << node.status().ToString();
  EXPECT_EQ((*node)->num_programs(), 1u);
  Module m{ObjectPtr<ModuleNode>(*node)};
  ExpectVaddWorks(m);
  Tensor out = DeviceZeros(6);
  ASSERT_TRUE(m.GetFunction("index2d")(out.data(), 2, 3, 1, 1, 2, 3).ok());
  EXPECT_EQ(HostFloats(out), (std::vector<float>{0, 1, 2, 1000, 1001, 1002}));
}

TEST_F(OpenclModuleTest, PreambleBeforeTheFirstDelimiterIsSharedByEveryPiece) {
  DeviceModulePayload p;
  p.fmt = "cl";
  p.functions = {{"twice", MakeFunctionInfo({"handle", "int32"}, {"threadIdx.x"})}};
  p.data =
      "#define FACTOR 2.0f\n// Function: twice\n"
      "__kernel void twice(__global float* x, int n) { int i = get_local_id(0); if (i < n) x[i] *= FACTOR; }\n";
  Module m = MustCreate(p);
  Tensor t = DeviceFloats({1, 2, 3});
  ASSERT_TRUE(m.GetFunction("twice")(t.data(), 3, 3).ok());
  EXPECT_EQ(HostFloats(t), (std::vector<float>{2, 4, 6}));
}

TEST(OpenclSourceSplitTest, SplitsOnDelimiterLines) {
  auto pieces = SplitOpenclSource("// Function: a\nA1\nA2\n// Function: b\r\nB\n");
  ASSERT_TRUE(pieces.ok());
  ASSERT_EQ(pieces->size(), 2u);
  EXPECT_EQ((*pieces)[0].kernel, "a");
  EXPECT_EQ((*pieces)[0].source, "A1\nA2\n");
  EXPECT_EQ((*pieces)[1].kernel, "b");
  EXPECT_EQ((*pieces)[1].source, "B\n");
  // Not at the start of a line: not a delimiter.
  auto whole = SplitOpenclSource("int x; // Function: a\n");
  ASSERT_TRUE(whole.ok());
  ASSERT_EQ(whole->size(), 1u);
  EXPECT_EQ((*whole)[0].kernel, "");
  EXPECT_FALSE(SplitOpenclSource("// Function: a\nx\n// Function: a\ny\n").ok());
  EXPECT_FALSE(SplitOpenclSource("// Function: \nx\n").ok());
}

TEST(OpenclModuleLoadTest, PieceCountMustMatchTheFunctionMap) {
  testing::SetUpOpenclTestEnvironment();
  DeviceModulePayload p = SplitPayload();
  p.functions.pop_back();  // 2 kernels, 3 pieces
  auto m = CreateOpenclModule(p, NoCache());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(m.status().message().find("3 kernel pieces"), std::string::npos) << m.status().message();
  EXPECT_NE(m.status().message().find("lists 2 kernels"), std::string::npos) << m.status().message();
  // Same count, but a kernel without a piece of its name.
  p = SplitPayload();
  p.functions[0].first = "renamed";
  m = CreateOpenclModule(p, NoCache());
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("'renamed'"), std::string::npos) << m.status().message();
}

TEST(OpenclModuleLoadTest, UnsupportedAndUnknownFormats) {
  testing::SetUpOpenclTestEnvironment();
  for (const char* fpga : {"xclbin", "awsxclbin", "aocx"}) {
    DeviceModulePayload p = SplitPayload();
    p.fmt = fpga;
    auto m = CreateOpenclModule(p, NoCache());
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.status().code(), StatusCode::kUnimplemented) << fpga;
    EXPECT_NE(m.status().message().find(fpga), std::string::npos);
  }
  DeviceModulePayload p = SplitPayload();
  p.fmt = "spirv";
  auto m = CreateOpenclModule(p, NoCache());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(m.status().message().find("unknown fmt 'spirv'"), std::string::npos);
  p = SplitPayload();
  p.data = "  \n";
  EXPECT_EQ(CreateOpenclModule(p, NoCache()).status().code(), StatusCode::kDataLoss);
  // Argument types a kernel cannot take are refused at load, naming the kernel.
  p = SplitPayload();
  p.functions[2].second.arg_types[3] = MakeDType(kDLFloat, 16, 4);
  m = CreateOpenclModule(p, NoCache());
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("kernel 'vadd' argument 3"), std::string::npos) << m.status().message();
}

TEST_F(OpenclModuleTest, BuildErrorCarriesTheCompilerLog) {
  DeviceModulePayload p;
  p.fmt = "cl";
  p.functions = {{"broken", MakeFunctionInfo({"handle"}, {"threadIdx.x"})}};
  p.data = "// Function: broken\n__kernel void broken(__global float* x) { x[0] = undeclared_identifier_42; }\n";
  Module m = MustCreate(p);
  Tensor t = DeviceZeros(1);
  auto r = m.GetFunction("broken")(t.data(), 1);
  ASSERT_FALSE(r.ok());
  const std::string& msg = r.status().message();
  EXPECT_NE(msg.find("opencl kernel 'broken'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("CL_BUILD_PROGRAM_FAILURE"), std::string::npos) << msg;
  EXPECT_NE(msg.find("build log:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("undeclared_identifier_42"), std::string::npos) << msg;  // from the compiler's log
  // BuildPrograms reports the same failure without a launch.
  auto node = OpenclModuleNode::Create(p, NoCache());
  ASSERT_TRUE(node.ok());
  Status s = (*node)->BuildPrograms(0);
  EXPECT_NE(s.message().find("undeclared_identifier_42"), std::string::npos) << s.message();
}

TEST_F(OpenclModuleTest, CallErrorsNameTheKernel) {
  Module m = MustCreate(SplitPayload());
  PackedFunc vadd = m.GetFunction("vadd");
  Tensor t = DeviceZeros(4);
  // Wrong argument count.
  auto r = vadd(t.data(), t.data(), t.data(), 4, 1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("kernel 'vadd' expects 6 packed arguments"), std::string::npos)
      << r.status().message();
  // A launch value that is not an int.
  r = vadd(t.data(), t.data(), t.data(), 4, 1, 4.0);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("launch value (argument 5) must be an integer"), std::string::npos)
      << r.status().message();
  // A scalar where a buffer belongs, a string where an int belongs.
  r = vadd(t.data(), 1.5, t.data(), 4, 1, 4);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("opencl kernel 'vadd' argument 1 (handle): expected a buffer handle"),
            std::string::npos)
      << r.status().message();
  r = vadd(t.data(), t.data(), t.data(), "four", 1, 4);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("argument 3 (int32): expected an int"), std::string::npos)
      << r.status().message();
  // A work-group size the device refuses: the OpenCL error and the sizes are reported.
  r = vadd(t.data(), t.data(), t.data(), 4, 1, 1 << 30);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("opencl kernel 'vadd'"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("clEnqueueNDRangeKernel failed: CL_INVALID_WORK"), std::string::npos)
      << r.status().message();
  // An unknown function is a null PackedFunc.
  EXPECT_FALSE(m.GetFunction("nope").defined());
}

TEST_F(OpenclModuleTest, SourceAndFunctionMapMustAgree) {
  DeviceModulePayload p;
  p.fmt = "cl";
  p.functions = {{"vadd", MakeFunctionInfo({"handle", "handle", "int32"}, {"threadIdx.x"})}};
  p.data = kVaddSource;  // 4 parameters, the map says 3
  Module m = MustCreate(p);
  Tensor t = DeviceZeros(4);
  auto r = m.GetFunction("vadd")(t.data(), t.data(), 4, 4);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("declares 4 parameters but the function map lists 3"), std::string::npos)
      << r.status().message();
  // A kernel the program does not define.
  p.functions = {{"missing", MakeFunctionInfo({"handle"}, {"threadIdx.x"})}};
  m = MustCreate(p);
  r = m.GetFunction("missing")(t.data(), 1);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("defines no __kernel named 'missing'"), std::string::npos)
      << r.status().message();
}

TEST_F(OpenclModuleTest, DynamicSharedMemoryIsRefusedClearly) {
  DeviceModulePayload p = SplitPayload();
  p.functions[2].second.launch_param_tags.push_back("tir.use_dyn_shared_memory");
  Module m = MustCreate(p);
  Tensor t = DeviceZeros(4);
  auto r = m.GetFunction("vadd")(t.data(), t.data(), t.data(), 4, 1, 4, 128);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnimplemented);
}

TEST_F(OpenclModuleTest, SaveToBinaryRoundTripsThroughTheBlobLoader) {
  Module m = MustCreate(SplitPayload());
  BinaryWriter writer;
  ASSERT_TRUE(m->SaveToBinary(&writer).ok());
  const std::string bytes = writer.bytes();
  BinaryReader reader(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "opencl blob");
  auto loaded = RunBlobLoader("opencl", reader);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_TRUE(reader.at_end());
  EXPECT_STREQ(loaded->type_key(), "opencl");
  EXPECT_EQ((*loaded)->ListFunctionNames(), (std::vector<std::string>{"axpb", "index2d", "vadd"}));
  BinaryWriter again;
  ASSERT_TRUE((*loaded)->SaveToBinary(&again).ok());
  EXPECT_EQ(again.bytes(), bytes);
  ExpectVaddWorks(*loaded);
  // A truncated payload is a DataLoss error from the loader.
  BinaryReader truncated(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size() - 10, "opencl blob");
  auto bad = RunBlobLoader("opencl", truncated);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kDataLoss);
}

TEST_F(OpenclModuleTest, ConcurrentLaunchesOfOneKernel) {
  Module m = MustCreate(SplitPayload());
  PackedFunc axpb = m.GetFunction("axpb");
  constexpr int kThreads = 2, kIters = 50, kN = 512;
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      if (!OpenclDevices::Global().SetCurrentDevice(0).ok()) {
        failures[t] = "SetCurrentDevice";
        return;
      }
      std::vector<float> x(kN);
      for (int i = 0; i < kN; ++i) x[i] = static_cast<float>(i);
      Tensor tx = DeviceFloats(x), ty = DeviceZeros(kN);
      for (int it = 0; it < kIters && failures[t].empty(); ++it) {
        // Each thread uses its own scalars, so a shared cl_kernel would mix them up.
        const float alpha = static_cast<float>(t + 1);
        const int offset = 100 * t + it;
        auto r = axpb(tx.data(), ty.data(), static_cast<double>(alpha), offset, int64_t{kN}, 0.0, kN / 64, 64);
        if (!r.ok()) {
          failures[t] = r.status().ToString();
          break;
        }
        std::vector<float> y = HostFloats(ty);
        for (int i = 0; i < kN; ++i) {
          if (y[i] != alpha * i + offset) {
            failures[t] = "wrong result at " + std::to_string(i) + " in iteration " + std::to_string(it);
            break;
          }
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], "") << "thread " << t;
}

TEST_F(OpenclModuleTest, ModulesDieWhileOtherThreadsHoldTheirKernels) {
  // A live thread keeps cl_kernels of a module in its thread-local table; the module dies; the thread
  // goes on with another module (dropping the dead module's kernels) without crashing.
  std::promise<void> launched, module_dead;
  std::shared_future<void> dead = module_dead.get_future().share();
  Module m = MustCreate(SplitPayload());
  std::thread worker([&launched, dead, m]() mutable {
    EXPECT_TRUE(OpenclDevices::Global().SetCurrentDevice(0).ok());
    ExpectVaddWorks(m);
    m = Module();  // the worker's reference goes; its kernels stay in its table
    launched.set_value();
    dead.wait();
    ExpectVaddWorks(MustCreate(WholePayload()));
  });
  launched.get_future().wait();
  m = Module();  // the last reference: the module dies while the worker holds its kernels
  module_dead.set_value();
  worker.join();
  // The same on this thread.
  Module first = MustCreate(SplitPayload());
  ExpectVaddWorks(first);
  first = Module();
  ExpectVaddWorks(MustCreate(SplitPayload()));
}

}  // namespace
}  // namespace sorun
