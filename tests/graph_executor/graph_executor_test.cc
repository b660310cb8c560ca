// The graph executor against the real kernel library (testdata/kernels/nn_kernels.c, dlopen'd) and
// an independent double-precision reference.
#include "graph_executor/graph_executor.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>

#include "base/file_util.h"
#include "format/binary_writer.h"
#include "graph_executor/factory_module.h"
#include "graph_executor/graph_builder.h"
#include "graph_executor/graph_executable.h"
#include "graph_executor/graph_executor_module.h"
#include "graph_executor/graph_json.h"
#include "graph_executor/register.h"
#include "runtime/blob_loader.h"
#include "runtime/data_type.h"
#include "runtime/function_registry.h"
#include "runtime/library_module.h"
#include "runtime/tensor_io.h"
#include "testdata/models/reference_ops.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

namespace ref = reference;

Module Kernels() {
  auto opened = LibraryModuleNode::Open(testing::Runfile("testdata/kernels/libnn_kernels.so"));
  EXPECT_TRUE(opened.ok()) << opened.status().ToString();
  return Module(ObjectPtr<ModuleNode>(opened->module));
}

Tensor RandomTensor(std::vector<int64_t> shape, uint32_t seed, float scale = 1.0f) {
  auto t = Tensor::Empty(shape, Float32(), CpuDevice());
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  for (int64_t i = 0; i < t->num_elements(); ++i) t->data_as<float>()[i] = dist(rng);
  return *t;
}

ref::Array Ref(const Tensor& t) { return ref::FromFloats(t.shape(), t.data_as<float>()); }

std::vector<float> Floats(const Tensor& t) {
  return std::vector<float>(t.data_as<float>(), t.data_as<float>() + t.num_elements());
}

// data[2,16] -> dense_bias_relu(32) -> dense_bias(10) -> softmax
struct Mlp {
  std::string json;
  NamedTensors params;
  ref::Array Expected(const Tensor& x) const {
    ref::Array w1 = Ref(params[0].second), b1 = Ref(params[1].second);
    ref::Array w2 = Ref(params[2].second), b2 = Ref(params[3].second);
    ref::Array h = ref::Relu(ref::Dense(Ref(x), w1, &b1));
    return ref::Softmax(ref::Dense(h, w2, &b2));
  }
};

Mlp MakeMlp() {
  GraphBuilder b;
  int x = b.Input("data", {2, 16});
  int w1 = b.Input("w1", {32, 16});
  int b1 = b.Input("b1", {32});
  int w2 = b.Input("w2", {10, 32});
  int b2 = b.Input("b2", {10});
  int h = b.Op("sorun_dense_bias_relu", {x, w1, b1}, {2, 32}, Float32(), "fc1");
  int o = b.Op("sorun_dense_bias", {h, w2, b2}, {2, 10}, Float32(), "fc2");
  int s = b.Op("sorun_softmax", {o}, {2, 10}, Float32(), "softmax");
  b.Output(s);
  Mlp m;
  m.json = *b.BuildJson();
  m.params = {{"w1", RandomTensor({32, 16}, 1, 0.5f)},
              {"b1", RandomTensor({32}, 2, 0.1f)},
              {"w2", RandomTensor({10, 32}, 3, 0.5f)},
              {"b2", RandomTensor({10}, 4, 0.1f)}};
  return m;
}

StatusOr<Module> MakeFactory(const Mlp& m) { return MakeGraphExecutorFactory(m.json, m.params, Kernels()); }

GraphExecutorFactoryNode* AsFactory(const Module& m) { return static_cast<GraphExecutorFactoryNode*>(m.get()); }

TEST(GraphExecutorTest, MlpMatchesReference) {
  Mlp m = MakeMlp();
  auto factory = MakeFactory(m);
  ASSERT_TRUE(factory.ok()) << factory.status().ToString();
  auto e = AsFactory(*factory)->CreateExecutor({CpuDevice()});
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  Tensor x = RandomTensor({2, 16}, 7);
  ASSERT_TRUE((*e)->SetInput("data", *x.dl()).ok());
  ASSERT_TRUE((*e)->Run().ok());
  auto out = (*e)->GetOutput(0);
  ASSERT_TRUE(out.ok());
  EXPECT_LT(ref::MaxRelativeError(Floats(*out), m.Expected(x)), 1e-5);
  // Inputs exclude bound params.
  auto inputs = (*e)->InputInfo(/*include_params=*/false);
  ASSERT_EQ(inputs.size(), 1u);
  EXPECT_EQ(inputs[0].name, "data");
  EXPECT_EQ((*e)->num_inputs(), 5);  // TVM counts params too
}

TEST(GraphExecutorTest, ThreeFilePathGivesTheSameOutputs) {
  Mlp m = MakeMlp();
  auto spec = GraphSpec::Parse(m.json);
  ASSERT_TRUE(spec.ok());
  auto e = GraphExecutor::Create(std::make_shared<const GraphSpec>(*spec), Kernels(), {CpuDevice()}, nullptr);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  BinaryWriter w;
  ASSERT_TRUE(WriteParamsDict(m.params, &w, /*align_data=*/true).ok());
  ASSERT_TRUE((*e)->LoadParams(w.bytes()).ok());
  Tensor x = RandomTensor({2, 16}, 7);
  ASSERT_TRUE((*e)->SetInput(0, *x.dl()).ok());
  ASSERT_TRUE((*e)->Run().ok());
  EXPECT_LT(ref::MaxRelativeError(Floats(*(*e)->GetOutput(0)), m.Expected(x)), 1e-5);
  // Loaded params are not listed as user inputs.
  EXPECT_EQ((*e)->InputInfo(false).size(), 1u);
}

TEST(GraphExecutorTest, ExecutorsShareWeightsButNotActivations) {
  Mlp m = MakeMlp();
  auto factory = MakeFactory(m);
  ASSERT_TRUE(factory.ok());
  auto e1 = AsFactory(*factory)->CreateExecutor({CpuDevice()});
  auto e2 = AsFactory(*factory)->CreateExecutor({CpuDevice()});
  ASSERT_TRUE(e1.ok() && e2.ok());
  for (int i = 1; i < 5; ++i) {
    EXPECT_EQ((*e1)->GetInput(i)->data(), (*e2)->GetInput(i)->data()) << "param " << i << " is not shared";
    EXPECT_EQ((*e1)->GetInput(i)->data(), m.params[static_cast<size_t>(i - 1)].second.data());
  }
  EXPECT_NE((*e1)->GetInput(0)->data(), (*e2)->GetInput(0)->data());
  EXPECT_NE((*e1)->GetOutput(0)->data(), (*e2)->GetOutput(0)->data());
  // The plan reports weights separately from this executor's activations.
  const MemoryPlan& plan = (*e1)->memory_plan();
  EXPECT_EQ(plan.total_weight_bytes(), (32 * 16 + 32 + 10 * 32 + 10) * 4u);
  EXPECT_GT(plan.total_activation_bytes(), 0u);

  // Writing a shared param is copy-on-write: e2 keeps the original.
  Tensor zeros = RandomTensor({10}, 99);
  std::fill(zeros.data_as<float>(), zeros.data_as<float>() + 10, 0.0f);
  ASSERT_TRUE((*e1)->SetInput("b2", *zeros.dl()).ok());
  EXPECT_NE((*e1)->GetInput(4)->data(), (*e2)->GetInput(4)->data());
  EXPECT_EQ((*e2)->GetInput(4)->data_as<float>()[3], m.params[3].second.data_as<float>()[3]);
}

TEST(GraphExecutorTest, ConcurrentExecutorsFromOneFactoryAgree) {
  Mlp m = MakeMlp();
  auto factory = MakeFactory(m);
  ASSERT_TRUE(factory.ok());
  Tensor x = RandomTensor({2, 16}, 11);
  ref::Array expected = m.Expected(x);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      auto e = AsFactory(*factory)->CreateExecutor({CpuDevice()});
      if (!e.ok()) {
        ++failures;
        return;
      }
      for (int i = 0; i < 200; ++i) {
        if (!(*e)->SetInput(0, *x.dl()).ok() || !(*e)->Run().ok() ||
            ref::MaxRelativeError(Floats(*(*e)->GetOutput(0)), expected) > 1e-5) {
          ++failures;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(GraphExecutorTest, StorageIsSharedByDeadIntermediates) {
  // x -> relu -> relu -> relu -> add(.., x): the third relu's output reuses the first one's pool.
  GraphBuilder b;
  int x = b.Input("x", {4, 8});
  int a = b.Op("sorun_relu", {x}, {4, 8});
  int c = b.Op("sorun_bias_add", {a, b.Input("bias", {8})}, {4, 8});
  int d = b.Op("sorun_relu", {c}, {4, 8});
  int out = b.Op("sorun_add", {d, x}, {4, 8});
  b.Output(out);
  auto spec = b.Build();
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->storage_id[static_cast<size_t>(d)], spec->storage_id[static_cast<size_t>(a)]);
  auto e = GraphExecutor::Create(std::make_shared<const GraphSpec>(*spec), Kernels(), {CpuDevice()}, nullptr);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  // Fewer pools than entries, and the plan's activation bytes are the pools' sum.
  EXPECT_LT((*e)->memory_plan().pools.size(), static_cast<size_t>(spec->num_entries()));
  uint64_t sum = 0;
  for (const auto& p : (*e)->memory_plan().pools) sum += p.bytes;
  EXPECT_EQ((*e)->memory_plan().total_activation_bytes(), sum);
  Tensor xv = RandomTensor({4, 8}, 5);
  Tensor bias = RandomTensor({8}, 6);
  ASSERT_TRUE((*e)->SetInput("x", *xv.dl()).ok());
  ASSERT_TRUE((*e)->SetInput("bias", *bias.dl()).ok());
  ASSERT_TRUE((*e)->Run().ok());
  ref::Array expected = ref::Add(ref::Relu(ref::BiasAdd(ref::Relu(Ref(xv)), Ref(bias))), Ref(xv));
  EXPECT_LT(ref::MaxRelativeError(Floats(*(*e)->GetOutput(0)), expected), 1e-6);
}

TEST(GraphExecutorTest, ZeroCopyInputAndOutputIncludingReshapeAlias) {
  // x -> relu -> reshape(__nop) -> output: binding the output must redirect the relu's writes.
  GraphBuilder b;
  int x = b.Input("x", {2, 8});
  int r = b.Op("sorun_relu", {x}, {2, 8});
  int flat = b.Reshape(r, {16});
  b.Output(flat);
  auto spec = b.Build();
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  auto e = GraphExecutor::Create(std::make_shared<const GraphSpec>(*spec), Kernels(), {CpuDevice()}, nullptr);
  ASSERT_TRUE(e.ok());
  Tensor in = RandomTensor({2, 8}, 3);
  Tensor out = RandomTensor({16}, 4);
  ASSERT_TRUE((*e)->SetInputZeroCopy(0, *in.dl(), in.node()).ok());
  ASSERT_TRUE((*e)->SetOutputZeroCopy(0, *out.dl(), out.node()).ok());
  Status run = (*e)->Run();
  ASSERT_TRUE(run.ok()) << run.ToString();
  for (int i = 0; i < 16; ++i) EXPECT_EQ(out.data_as<float>()[i], std::max(0.0f, in.data_as<float>()[i]));
  EXPECT_EQ((*e)->GetOutput(0)->data(), out.data());
  // Changing the bound input changes the next run's output (it is read in place).
  in.data_as<float>()[0] = 42.0f;
  ASSERT_TRUE((*e)->Run().ok());
  EXPECT_EQ(out.data_as<float>()[0], 42.0f);
}

// A bool entry (TVM 0.16's uint1) also takes DLPack 1.x's bool (code 6, 8 bits: numpy's and torch's
// DLPack export), copied or bound, while the graph keeps its own dtype; uint8 is still refused.
TEST(GraphExecutorTest, BoolEntriesTakeDLPackBool) {
  GraphBuilder b;
  int x = b.Input("mask", {4}, Bool());
  b.Output(b.Reshape(x, {2, 2}));
  auto spec = b.Build();
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  auto e = GraphExecutor::Create(std::make_shared<const GraphSpec>(*spec), Kernels(), {CpuDevice()}, nullptr);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  auto mask = Tensor::Empty({4}, DLPackBool(), CpuDevice());
  ASSERT_TRUE(mask.ok());
  const uint8_t bits[4] = {1, 0, 0, 1};
  std::memcpy(mask->data(), bits, 4);
  ASSERT_TRUE((*e)->SetInput(0, *mask->dl()).ok());
  ASSERT_TRUE((*e)->Run().ok());
  auto out = Tensor::Empty({2, 2}, DLPackBool(), CpuDevice());
  ASSERT_TRUE(out.ok());
  ASSERT_TRUE((*e)->CopyOutputTo(0, *out->dl()).ok());
  EXPECT_EQ(std::memcmp(out->data(), bits, 4), 0);
  EXPECT_EQ((*e)->GetOutput(0)->dtype(), Bool());  // the graph's spelling
  ASSERT_TRUE((*e)->SetInputZeroCopy(0, *mask->dl(), mask->node()).ok());
  EXPECT_EQ((*e)->GetInput(0)->dtype(), Bool());
  auto bytes = Tensor::Empty({4}, UInt8(), CpuDevice());
  ASSERT_TRUE(bytes.ok());
  Status s = (*e)->SetInput(0, *bytes->dl());
  EXPECT_NE(s.message().find("expected bool[4], got uint8[4]"), std::string::npos) << s.message();
}

// A node with two outputs as two heads (TVM's topk: values and indices): output info names them
// "topk" and "topk:1", the keys GetOutputIndex finds, so no two outputs share a name (Triton configs
// are keyed by it).
TEST(GraphExecutorTest, OutputsOfOneNodeHaveDistinctNames) {
  const char kJson[] = R"({
    "nodes": [
      {"op": "null", "name": "data", "inputs": []},
      {"op": "tvm_op", "name": "topk", "attrs": {"func_name": "sorun_topk", "num_inputs": "1",
        "num_outputs": "2", "flatten_data": "0"}, "inputs": [[0, 0, 0]]}
    ],
    "arg_nodes": [0],
    "heads": [[1, 0, 0], [1, 1, 0]],
    "attrs": {
      "dltype": ["list_str", ["float32", "float32", "int32"]],
      "storage_id": ["list_int", [0, 1, 2]],
      "shape": ["list_shape", [[2, 8], [2, 3], [2, 3]]]
    },
    "node_row_ptr": [0, 1, 3]
  })";
  auto g = GraphSpec::Parse(kJson);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const std::vector<TensorInfo> outputs = DescribeGraphOutputs(*g);
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_EQ(outputs[0].name, "topk");
  EXPECT_EQ(outputs[1].name, "topk:1");
  EXPECT_EQ(outputs[1].dtype, Int32());
}

TEST(GraphExecutorTest, ZeroCopyChecks) {
  Mlp m = MakeMlp();
  auto factory = MakeFactory(m);
  ASSERT_TRUE(factory.ok()) << factory.status().ToString();
  auto e = AsFactory(*factory)->CreateExecutor({CpuDevice()});
  ASSERT_TRUE(e.ok());
  Tensor wrong_shape = RandomTensor({2, 15}, 1);
  Status s = (*e)->SetInputZeroCopy(0, *wrong_shape.dl());
  EXPECT_NE(s.message().find("expected float32[2, 16], got float32[2, 15]"), std::string::npos) << s.message();
  auto big = Tensor::Empty({40}, Float32(), CpuDevice());
  auto misaligned = big->View({2, 16}, Float32(), 4);
  s = (*e)->SetInputZeroCopy(0, *misaligned->dl());
  EXPECT_NE(s.message().find("not 64-byte aligned"), std::string::npos) << s.message();
  s = (*e)->SetOutputZeroCopy(3, *wrong_shape.dl());
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
}

TEST(GraphExecutorTest, ErrorsNameInputsNodesAndKernels) {
  Mlp m = MakeMlp();
  auto factory = MakeFactory(m);
  ASSERT_TRUE(factory.ok()) << factory.status().ToString();
  auto e = AsFactory(*factory)->CreateExecutor({CpuDevice()});
  ASSERT_TRUE(e.ok());
  Tensor x = RandomTensor({2, 16}, 1);
  Status s = (*e)->SetInput("dat", *x.dl());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("no input named 'dat' (inputs: data)"), std::string::npos) << s.message();
  Tensor bad = RandomTensor({16, 2}, 1);
  s = (*e)->SetInput("data", *bad.dl());
  EXPECT_NE(s.message().find("set_input 'data': expected float32[2, 16], got float32[16, 2]"), std::string::npos)
      << s.message();
  EXPECT_EQ((*e)->SetInput(9, *x.dl()).code(), StatusCode::kOutOfRange);
  EXPECT_EQ((*e)->GetOutput(1).status().code(), StatusCode::kOutOfRange);
  EXPECT_FALSE((*e)->GetOutputIndex("nope").ok());
  EXPECT_EQ(*(*e)->GetOutputIndex("softmax"), 0);
  EXPECT_EQ(*(*e)->GetOutputIndex("softmax:0"), 0);

  // Missing kernel symbol: an error at creation naming node and function.
  GraphBuilder b;
  int in = b.Input("in", {4});
  b.Output(b.Op("no_such_kernel", {in}, {4}, Float32(), "mystery"));
  auto missing =
      GraphExecutor::Create(std::make_shared<const GraphSpec>(*b.Build()), Kernels(), {CpuDevice()}, nullptr);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(),
            "node 1 ('mystery'): kernel function 'no_such_kernel' is not in the kernel library or its imports");

  // A kernel failing at run time: the node and the kernel's message.
  GraphBuilder f;
  int fin = f.Input("in", {4});
  f.Output(f.Op("sorun_fail", {fin}, {4}, Float32(), "boom"));
  auto failing =
      GraphExecutor::Create(std::make_shared<const GraphSpec>(*f.Build()), Kernels(), {CpuDevice()}, nullptr);
  ASSERT_TRUE(failing.ok());
  Status run = (*failing)->Run();
  EXPECT_EQ(run.code(), StatusCode::kAborted);
  EXPECT_EQ(run.message(),
            "node 1 ('boom'): function 'sorun_fail' failed (returned -1): sorun_fail: this kernel always fails");

  // A kernel rejecting its arguments (shape mismatch caught inside the kernel).
  GraphBuilder k;
  int kin = k.Input("in", {4, 4});
  k.Output(k.Op("sorun_softmax", {kin}, {4, 5}, Float32(), "wrong_softmax"));
  auto rejecting =
      GraphExecutor::Create(std::make_shared<const GraphSpec>(*k.Build()), Kernels(), {CpuDevice()}, nullptr);
  ASSERT_TRUE(rejecting.ok());
  EXPECT_NE((*rejecting)->Run().message().find("sorun_softmax: input and output shapes differ"), std::string::npos);
}

TEST(GraphExecutorTest, AbsentDeviceAndWrongDeviceGraph) {
  Mlp m = MakeMlp();
  auto factory = MakeFactory(m);
  ASSERT_TRUE(factory.ok()) << factory.status().ToString();
  auto e = AsFactory(*factory)->CreateExecutor({DLDevice{kDLCPU, 3}});
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), StatusCode::kUnavailable);
  // A graph asking for an OpenCL device, run with only the CPU.
  GraphBuilder b;
  int x = b.Input("x", {4});
  int r = b.Op("sorun_relu", {x}, {4});
  b.SetDeviceType(x, kDLOpenCL);
  b.SetDeviceType(r, kDLOpenCL);
  b.Output(r);
  auto wrong = GraphExecutor::Create(std::make_shared<const GraphSpec>(*b.Build()), Kernels(), {CpuDevice()}, nullptr);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("must live on a opencl device but the executor was created with cpu:0"),
            std::string::npos)
      << wrong.status().message();
}

TEST(GraphExecutorTest, ParamShapeMismatchIsRejected) {
  Mlp m = MakeMlp();
  m.params[0].second = RandomTensor({32, 15}, 1);
  auto factory = MakeFactory(m);
  ASSERT_FALSE(factory.ok());
  EXPECT_NE(factory.status().message().find(
                "param 'w1' is float32[32, 15] on cpu:0 but the graph input expects float32[32, 16]"),
            std::string::npos)
      << factory.status().message();
}

TEST(GraphExecutorTest, LoadParamsRejectsUnknownNamesAndGarbage) {
  Mlp m = MakeMlp();
  auto e = GraphExecutor::Create(std::make_shared<const GraphSpec>(*GraphSpec::Parse(m.json)), Kernels(), {CpuDevice()},
                                 nullptr);
  ASSERT_TRUE(e.ok());
  BinaryWriter w;
  NamedTensors extra = {{"w9", RandomTensor({2}, 1)}};
  ASSERT_TRUE(WriteParamsDict(extra, &w, false).ok());
  Status s = (*e)->LoadParams(w.bytes());
  EXPECT_NE(s.message().find("'w9' is not an input of this graph"), std::string::npos) << s.message();
  s = (*e)->LoadParams("not a params file at all");
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("params byte 0: bad params magic"), std::string::npos) << s.message();
}

TEST(GraphExecutorTest, ParamMismatchFromAParamsFileNamesTheFile) {
  Mlp m = MakeMlp();
  m.params[0].second = RandomTensor({32, 15}, 1);
  auto weights = SharedWeights::Create(m.params, "model.params");
  ASSERT_TRUE(weights.ok()) << weights.status().ToString();
  auto e = GraphExecutor::Create(std::make_shared<const GraphSpec>(*GraphSpec::Parse(m.json)), Kernels(), {CpuDevice()},
                                 *weights);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(e.status().message().find(
                "model.params: param 'w1' is float32[32, 15] on cpu:0 but the graph input expects float32[32, 16]"),
            std::string::npos)
      << e.status().message();
}

// A params dict written by hand: `entries` in order, names as given (the writer refuses pad names).
std::string HandWrittenParams(const NamedTensors& entries) {
  BinaryWriter w;
  w.WriteU64(kNDArrayListMagic);
  w.WriteU64(0);
  w.WriteU64(entries.size());
  for (const auto& kv : entries) w.WriteString(kv.first);
  w.WriteU64(entries.size());
  for (const auto& kv : entries) EXPECT_TRUE(WriteNDArray(*kv.second.dl(), &w).ok());
  return std::string(w.bytes());
}

TEST(GraphExecutorTest, OnlyRealAlignmentPadsAreSkipped) {
  auto pad = Tensor::Empty({5}, UInt8(), CpuDevice());
  auto big = Tensor::Empty({64}, UInt8(), CpuDevice());
  ASSERT_TRUE(pad.ok() && big.ok());
  const std::string bytes = HandWrittenParams({{"__sorun_pad_000007", *pad},                  // a pad
                                               {"__sorun_pad_000008", RandomTensor({3}, 1)},  // float32
                                               {"__sorun_pad_x", *pad},                       // not 6 digits
                                               {"__sorun_pad_000009", *big},                  // 64 bytes
                                               {"w", RandomTensor({2}, 2)}});
  BinaryReader reader(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "params");
  auto params = ReadParamsDict(reader, /*allow_zero_copy=*/false);
  ASSERT_TRUE(params.ok()) << params.status().ToString();
  std::vector<std::string> names;
  for (const auto& kv : *params) names.push_back(kv.first);
  EXPECT_EQ(names, (std::vector<std::string>{"__sorun_pad_000008", "__sorun_pad_x", "__sorun_pad_000009", "w"}));
  // So load_params reports a real tensor named like a pad instead of dropping it.
  Mlp m = MakeMlp();
  auto e = GraphExecutor::Create(std::make_shared<const GraphSpec>(*GraphSpec::Parse(m.json)), Kernels(), {CpuDevice()},
                                 nullptr);
  ASSERT_TRUE(e.ok());
  Status s = (*e)->LoadParams(HandWrittenParams({{"__sorun_pad_000001", RandomTensor({3}, 1)}}));
  EXPECT_NE(s.message().find("load_params: params byte 58: param '__sorun_pad_000001' is not an input of this graph"),
            std::string::npos)
      << s.message();
}

// A params file that gives a tensor twice is the params file's fault: the three-file path names the
// file and where both copies start (issue 25), and load_params the same offsets in its bytes.
TEST(GraphExecutorTest, ParamGivenTwiceNamesTheParamsFileAndBothOffsets) {
  Mlp m = MakeMlp();
  const std::string bytes = HandWrittenParams({{"w1", m.params[0].second}, {"w1", m.params[0].second}});
  const uint64_t first = 8 + 8 + 8 + 2 * (8 + 2) + 8;  // magic, reserved, names, count
  const uint64_t second = first + NDArrayHeaderBytes(2) + 32 * 16 * 4;
  const std::string dir = testing::MakeTempDir("twice");
  const std::string json_path = dir + "/model.json";
  const std::string params_path = dir + "/model.params";
  ASSERT_TRUE(WriteFileBytes(json_path, m.json).ok());
  ASSERT_TRUE(WriteFileBytes(params_path, bytes).ok());
  auto parts = PartsOfThreeFiles(json_path, Kernels(), params_path);
  ASSERT_FALSE(parts.ok());
  EXPECT_EQ(parts.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(parts.status().message(), params_path + " byte " + std::to_string(second) +
                                          ": param 'w1' is given twice (first at byte " + std::to_string(first) + ")");

  auto e = GraphExecutor::Create(std::make_shared<const GraphSpec>(*GraphSpec::Parse(m.json)), Kernels(), {CpuDevice()},
                                 nullptr);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  Status s = (*e)->LoadParams(bytes);
  EXPECT_EQ(s.message(), "load_params: params byte " + std::to_string(second) +
                             ": param 'w1' is given twice (first at byte " + std::to_string(first) + ")");
}

// docs/threading.md: a call overlapping another on the same executor fails cleanly. Readers of the
// executor's tensors (GetOutput, GetInput, CopyOutputTo) against a writer of its bindings
// (SetOutputZeroCopy): every call succeeds or is refused as busy; never a torn or freed tensor.
TEST(GraphExecutorTest, AccessorsRacingZeroCopyRebindingFailCleanly) {
  Mlp m = MakeMlp();
  auto factory = MakeFactory(m);
  ASSERT_TRUE(factory.ok()) << factory.status().ToString();
  auto e = AsFactory(*factory)->CreateExecutor({CpuDevice()});
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  GraphExecutor& exec = **e;
  auto is_busy = [](const Status& s) {
    return s.code() == StatusCode::kFailedPrecondition &&
           s.message().find("being used by another thread") != std::string::npos;
  };
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0};
  std::atomic<long> reads{0}, rebinds{0};
  std::string first_bad;
  std::mutex bad_mutex;
  auto record = [&](const Status& s) {
    if (s.ok() || is_busy(s)) return;
    std::lock_guard<std::mutex> lock(bad_mutex);
    if (bad++ == 0) first_bad = s.ToString();
  };
  std::thread reader([&] {
    Tensor copy = *Tensor::Empty({2, 10}, Float32(), CpuDevice());
    while (!stop.load()) {
      auto out = exec.GetOutput(0);
      record(out.status());
      if (out.ok()) {
        volatile float v = out->data_as<float>()[19];  // the tensor must still own its memory
        (void)v;
        reads.fetch_add(1);
      }
      auto in = exec.GetInput(0);
      record(in.status());
      record(exec.CopyOutputTo(0, *copy.dl()));
    }
  });
  std::thread writer([&] {
    while (!stop.load()) {
      // A fresh buffer each time: the one bound before is released when the executor lets go of it.
      Tensor t = *Tensor::Empty({2, 10}, Float32(), CpuDevice());
      Status s = exec.SetOutputZeroCopy(0, *t.dl(), t.node());
      record(s);
      if (s.ok()) rebinds.fetch_add(1);
    }
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  while ((reads.load() < 100 || rebinds.load() < 100) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  stop = true;
  reader.join();
  writer.join();
  EXPECT_EQ(bad.load(), 0) << first_bad;
  EXPECT_GE(reads.load(), 100);
  EXPECT_GE(rebinds.load(), 100);
}

TEST(GraphExecutorTest, ShareParamsAliasesAnotherExecutor) {
  Mlp m = MakeMlp();
  auto spec = std::make_shared<const GraphSpec>(*GraphSpec::Parse(m.json));
  auto a = GraphExecutor::Create(spec, Kernels(), {CpuDevice()}, nullptr);
  auto b = GraphExecutor::Create(spec, Kernels(), {CpuDevice()}, nullptr);
  ASSERT_TRUE(a.ok() && b.ok());
  BinaryWriter w;
  ASSERT_TRUE(WriteParamsDict(m.params, &w, false).ok());
  ASSERT_TRUE((*a)->LoadParams(w.bytes()).ok());
  ASSERT_TRUE((*b)->ShareParams(**a, w.bytes()).ok());
  EXPECT_EQ((*a)->GetInput(1)->data(), (*b)->GetInput(1)->data());
  Tensor x = RandomTensor({2, 16}, 8);
  ASSERT_TRUE((*b)->SetInput(0, *x.dl()).ok());
  Status run = (*b)->Run();
  ASSERT_TRUE(run.ok()) << run.ToString();
  EXPECT_LT(ref::MaxRelativeError(Floats(*(*b)->GetOutput(0)), m.Expected(x)), 1e-5);
}

TEST(GraphExecutorTest, ProfileTimesEveryOperator) {
  Mlp m = MakeMlp();
  auto factory = MakeFactory(m);
  ASSERT_TRUE(factory.ok()) << factory.status().ToString();
  auto e = AsFactory(*factory)->CreateExecutor({CpuDevice()});
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  auto prof = (*e)->Profile(3);
  ASSERT_TRUE(prof.ok()) << prof.status().ToString();
  ASSERT_EQ(prof->size(), 3u);
  EXPECT_EQ((*prof)[0].name, "fc1");
  EXPECT_EQ((*prof)[2].func_name, "sorun_softmax");
  for (const auto& p : *prof) EXPECT_GE(p.mean_us, p.min_us);
}

TEST(GraphExecutorTest, PackedFuncSurfaceUsesTvmNames) {
  ASSERT_TRUE(RegisterGraphExecutor().ok());
  Mlp m = MakeMlp();
  auto factory = MakeFactory(m);
  ASSERT_TRUE(factory.ok());
  auto gmod = factory->GetFunction("default")(DLDevice{kDLCPU, 0});
  ASSERT_TRUE(gmod.ok()) << gmod.status().ToString();
  Module g = *gmod->AsModule();
  Tensor x = RandomTensor({2, 16}, 21);
  ASSERT_TRUE(g.GetFunction("set_input")("data", x).ok());
  ASSERT_TRUE(g.GetFunction("run")().ok());
  auto out = g.GetFunction("get_output")(0);
  ASSERT_TRUE(out.ok());
  EXPECT_LT(ref::MaxRelativeError(Floats(*out->AsTensor()), m.Expected(x)), 1e-5);
  Tensor copy = RandomTensor({2, 10}, 1);
  ASSERT_TRUE(g.GetFunction("get_output")(0, copy).ok());
  EXPECT_LT(ref::MaxRelativeError(Floats(copy), m.Expected(x)), 1e-5);
  EXPECT_EQ(*g.GetFunction("get_num_outputs")()->AsInt(), 1);
  EXPECT_EQ(*g.GetFunction("get_num_inputs")()->AsInt(), 5);
  EXPECT_EQ(*g.GetFunction("get_input_index")("w2")->AsInt(), 3);
  EXPECT_EQ(*g.GetFunction("get_input_index")("nope")->AsInt(), -1);
  auto bad = g.GetFunction("set_input")("nope", x);
  EXPECT_FALSE(bad.ok());  // unlike TVM, an unknown name is an error
  std::string info = *g.GetFunction("get_input_info")()->AsString();
  EXPECT_NE(info.find("\"data\":[2,16]"), std::string::npos) << info;
  EXPECT_NE(g.GetFunction("get_memory_plan")()->AsString()->find("activation_bytes"), std::string::npos);
  EXPECT_EQ(*factory->GetFunction("get_graph_json")()->AsString(), m.json);
  // remove_params gives a factory whose executors need params.
  auto bare = factory->GetFunction("remove_params")();
  ASSERT_TRUE(bare.ok());
  auto bare_exec = AsFactory(*bare->AsModule())->CreateExecutor({CpuDevice()});
  ASSERT_TRUE(bare_exec.ok());
  EXPECT_EQ((*bare_exec)->InputInfo(false).size(), 5u);
  // tvm.graph_executor.create
  auto created = FunctionRegistry::Global().Get("tvm.graph_executor.create")(m.json, Kernels(), 1, 0);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(std::string(created->AsModule()->type_key()), "GraphExecutor");
}

// The factory payload assembled byte by byte from docs/spec/FORMAT.md section 7.2, independent of the
// writer: graph_json string, u64 count, names vector, NDArrays, module name.
TEST(GraphExecutorFactoryTest, LoadsPayloadAssembledFromTheSpec) {
  ASSERT_TRUE(RegisterGraphExecutor().ok());
  GraphBuilder b;
  int x = b.Input("x", {1, 2});
  int w = b.Input("w", {3, 2});
  b.Output(b.Op("sorun_dense", {x, w}, {1, 3}, Float32(), "dense"));
  std::string json = *b.BuildJson();
  std::string bytes;
  auto u64 = [&](uint64_t v) {
    for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  auto u32 = [&](uint32_t v) {
    for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  auto str = [&](const std::string& s) {
    u64(s.size());
    bytes += s;
  };
  str(json);
  u64(1);  // sz
  u64(1);  // names vector count
  str("w");
  u64(0xDD5E40F096B4A13Full);                   // NDArray magic
  u64(0);                                       // reserved
  u32(1);                                       // device_type = cpu
  u32(0);                                       // device_id
  u32(2);                                       // ndim
  bytes += std::string("\x02\x20\x01\x00", 4);  // dtype float32 (code 2, 32 bits, 1 lane)
  u64(3);
  u64(2);
  u64(24);  // data bytes
  const float wv[6] = {1, 2, 3, 4, 5, 6};
  bytes.append(reinterpret_cast<const char*>(wv), sizeof(wv));
  str("default");
  BinaryReader reader(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "hand blob");
  auto factory = RunBlobLoader("GraphExecutorFactory", reader);
  ASSERT_TRUE(factory.ok()) << factory.status().ToString();
  EXPECT_TRUE(reader.at_end());
  ASSERT_TRUE(factory->Import(Kernels()).ok());
  auto e = AsFactory(*factory)->CreateExecutor({CpuDevice()});
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  Tensor xv = RandomTensor({1, 2}, 1);
  xv.data_as<float>()[0] = 1;
  xv.data_as<float>()[1] = 10;
  ASSERT_TRUE((*e)->SetInput("x", *xv.dl()).ok());
  ASSERT_TRUE((*e)->Run().ok());
  const float* y = (*e)->GetOutput(0)->data_as<float>();
  EXPECT_EQ(y[0], 21.0f);
  EXPECT_EQ(y[1], 43.0f);
  EXPECT_EQ(y[2], 65.0f);
  // The legacy key loads the same grammar.
  BinaryReader again(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "hand blob");
  EXPECT_TRUE(RunBlobLoader("GraphRuntimeFactory", again).ok());
  // And the writer round-trips it, with params data 64-byte aligned relative to the origin.
  BinaryWriter rewritten(/*origin=*/8);
  ASSERT_TRUE(factory->get()->SaveToBinary(&rewritten).ok());
  BinaryReader r2(reinterpret_cast<const uint8_t*>(rewritten.bytes().data()), rewritten.bytes().size(), "rewritten");
  FactoryPayload payload;
  ASSERT_TRUE(ReadFactoryPayload(r2, false, &payload).ok());
  ASSERT_EQ(payload.params.size(), 1u);
  EXPECT_EQ(payload.pad_count, 1u);
  EXPECT_EQ((payload.params[0].header.data_offset + 8) % 64, 0u);
}

TEST(GraphExecutorFactoryTest, TruncatedPayloadsFailCleanly) {
  Mlp m = MakeMlp();
  auto factory = MakeFactory(m);
  ASSERT_TRUE(factory.ok()) << factory.status().ToString();
  BinaryWriter w(8);
  ASSERT_TRUE(factory->get()->SaveToBinary(&w).ok());
  const std::string& bytes = w.bytes();
  for (size_t cut = 0; cut < bytes.size(); cut += std::max<size_t>(1, bytes.size() / 97)) {
    BinaryReader r(reinterpret_cast<const uint8_t*>(bytes.data()), cut, "cut blob");
    auto loaded = LoadGraphExecutorFactory(r);
    EXPECT_FALSE(loaded.ok()) << "cut at " << cut;
    EXPECT_EQ(loaded.status().code(), StatusCode::kDataLoss) << loaded.status().ToString();
  }
}

}  // namespace
}  // namespace sorun
