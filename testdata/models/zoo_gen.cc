// zoo_gen: writes one model of the zoo — graph JSON, params (every tensor 64-byte aligned), a sample
// input and the expected output computed by the independent reference operators (double
// precision). Deterministic: weights come from a fixed-seed splitmix64 generator, except the digits
// classifier, whose weights are the committed output of digits/train_digits.py.
//
// Usage: zoo_gen MODEL OUT_DIR [DIGITS_DIR]
// Writes OUT_DIR/MODEL.json, MODEL.params, MODEL_input.npy, MODEL_expected.npy.
// Models: mlp, cnn, resblock, digits, big256, mlp_opencl, mlp_cuda, mlp_cuda_only, chain10k, conv_heavy.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/file_util.h"
#include "format/binary_writer.h"
#include "graph_executor/graph_builder.h"
#include "runtime/data_type.h"
#include "runtime/tensor_io.h"
#include "testdata/models/reference_ops.h"
#include "tools/npy.h"

namespace sorun {
namespace {

namespace ref = reference;

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  // splitmix64 -> uniform in [-1, 1).
  float Uniform() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return static_cast<float>(static_cast<double>(z >> 11) / 9007199254740992.0 * 2.0 - 1.0);
  }

 private:
  uint64_t state_;
};

struct Model {
  bool heterogeneous = false;  // every node is placed explicitly (device_index)
  GraphBuilder graph;
  NamedTensors params;
  std::map<std::string, ref::Array> ref_params;
  Tensor input;
  ref::Array expected;
};

Tensor NewTensor(const std::vector<int64_t>& shape) { return *Tensor::Empty(shape, Float32(), CpuDevice()); }

// A param with values uniform in [-scale, scale).
ref::Array AddParam(Model& m, Rng& rng, const std::string& name, std::vector<int64_t> shape, float scale) {
  Tensor t = NewTensor(shape);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data_as<float>()[i] = scale * rng.Uniform();
  m.params.emplace_back(name, t);
  ref::Array a = ref::FromFloats(shape, t.data_as<float>());
  m.ref_params[name] = a;
  return a;
}

ref::Array SetInput(Model& m, Rng& rng, std::vector<int64_t> shape) {
  m.input = NewTensor(shape);
  for (int64_t i = 0; i < m.input.num_elements(); ++i) m.input.data_as<float>()[i] = rng.Uniform();
  return ref::FromFloats(shape, m.input.data_as<float>());
}

float Fan(int64_t fan_in) { return static_cast<float>(1.0 / std::sqrt(static_cast<double>(fan_in))); }

// A dense layer (optionally with relu) on `device_type`'s kernels: adds params and the op.
int Dense(Model& m, Rng& rng, const std::string& name, int x, int64_t batch, int64_t in, int64_t out, bool relu,
          ref::Array* value, const char* kernel = nullptr, int device_type = kDLCPU) {
  ref::Array w = AddParam(m, rng, name + "_w", {out, in}, Fan(in));
  ref::Array b = AddParam(m, rng, name + "_b", {out}, 0.1f);
  int wn = m.graph.Input(name + "_w", {out, in});
  int bn = m.graph.Input(name + "_b", {out});
  std::string fn = kernel ? kernel : (relu ? "sorun_dense_bias_relu" : "sorun_dense_bias");
  int y = m.graph.Op(fn, {x, wn, bn}, {batch, out}, Float32(), name);
  if (m.heterogeneous) {
    m.graph.SetDeviceType(wn, device_type);
    m.graph.SetDeviceType(bn, device_type);
    m.graph.SetDeviceType(y, device_type);
  }
  *value = ref::Dense(*value, w, &b);
  if (relu && !kernel) *value = ref::Relu(*value);
  return y;
}

Model Mlp() {
  Model m;
  Rng rng(1);
  ref::Array v = SetInput(m, rng, {1, 64});
  int x = m.graph.Input("data", {1, 64});
  x = Dense(m, rng, "fc1", x, 1, 64, 128, true, &v);
  x = Dense(m, rng, "fc2", x, 1, 128, 64, true, &v);
  x = Dense(m, rng, "fc3", x, 1, 64, 10, false, &v);
  m.graph.Output(m.graph.Op("sorun_softmax", {x}, {1, 10}, Float32(), "softmax"));
  m.expected = ref::Softmax(v);
  return m;
}

// LeNet-5 sized: conv(6,5x5,pad 2)+relu, pool, conv(16,5x5)+relu, pool, flatten, 120, 84, 10, softmax.
Model Cnn() {
  Model m;
  Rng rng(2);
  ref::Array v = SetInput(m, rng, {1, 1, 28, 28});
  int x = m.graph.Input("data", {1, 1, 28, 28});
  ref::Array w1 = AddParam(m, rng, "conv1_w", {6, 1, 5, 5}, Fan(25));
  ref::Array b1 = AddParam(m, rng, "conv1_b", {6}, 0.1f);
  int c1 = m.graph.Op("sorun_conv2d_bias_relu_nchw",
                      {x, m.graph.Input("conv1_w", {6, 1, 5, 5}), m.graph.Input("conv1_b", {6})}, {1, 6, 28, 28},
                      Float32(), "conv1");
  v = ref::Relu(ref::BiasAdd(ref::Conv2D(v, w1, 1, 2), b1));
  int p1 = m.graph.Op("sorun_max_pool2d", {c1}, {1, 6, 14, 14}, Float32(), "pool1");
  v = ref::MaxPool2D(v, 2);
  ref::Array w2 = AddParam(m, rng, "conv2_w", {16, 6, 5, 5}, Fan(150));
  ref::Array b2 = AddParam(m, rng, "conv2_b", {16}, 0.1f);
  int c2 = m.graph.Op("sorun_conv2d_bias_relu_nchw",
                      {p1, m.graph.Input("conv2_w", {16, 6, 5, 5}), m.graph.Input("conv2_b", {16})}, {1, 16, 10, 10},
                      Float32(), "conv2");
  v = ref::Relu(ref::BiasAdd(ref::Conv2D(v, w2, 1, 0), b2));
  int p2 = m.graph.Op("sorun_max_pool2d", {c2}, {1, 16, 5, 5}, Float32(), "pool2");
  v = ref::MaxPool2D(v, 2);
  int flat = m.graph.Reshape(p2, {1, 400}, "flatten_nop");
  v = ref::Reshape(v, {1, 400});
  x = Dense(m, rng, "fc1", flat, 1, 400, 120, true, &v);
  x = Dense(m, rng, "fc2", x, 1, 120, 84, true, &v);
  x = Dense(m, rng, "fc3", x, 1, 84, 10, false, &v);
  m.graph.Output(m.graph.Op("sorun_softmax", {x}, {1, 10}, Float32(), "softmax"));
  m.expected = ref::Softmax(v);
  return m;
}

// A residual block: conv3x3+bias+relu, conv3x3, bias_add, add(input), relu, global avg pool,
// reshape, dense, softmax.
Model ResBlock() {
  Model m;
  Rng rng(3);
  ref::Array in = SetInput(m, rng, {1, 8, 16, 16});
  int x = m.graph.Input("data", {1, 8, 16, 16});
  ref::Array w1 = AddParam(m, rng, "conv1_w", {8, 8, 3, 3}, Fan(72));
  ref::Array b1 = AddParam(m, rng, "conv1_b", {8}, 0.1f);
  int c1 = m.graph.Op("sorun_conv2d_bias_relu_nchw",
                      {x, m.graph.Input("conv1_w", {8, 8, 3, 3}), m.graph.Input("conv1_b", {8})}, {1, 8, 16, 16},
                      Float32(), "conv1");
  ref::Array v = ref::Relu(ref::BiasAdd(ref::Conv2D(in, w1, 1, 1), b1));
  ref::Array w2 = AddParam(m, rng, "conv2_w", {8, 8, 3, 3}, Fan(72));
  ref::Array b2 = AddParam(m, rng, "conv2_b", {8}, 0.1f);
  int c2 =
      m.graph.Op("sorun_conv2d_nchw", {c1, m.graph.Input("conv2_w", {8, 8, 3, 3})}, {1, 8, 16, 16}, Float32(), "conv2");
  int ba = m.graph.Op("sorun_bias_add", {c2, m.graph.Input("conv2_b", {8})}, {1, 8, 16, 16}, Float32(), "bias2");
  v = ref::BiasAdd(ref::Conv2D(v, w2, 1, 1), b2);
  int sum = m.graph.Op("sorun_add", {ba, x}, {1, 8, 16, 16}, Float32(), "residual");
  int r = m.graph.Op("sorun_relu", {sum}, {1, 8, 16, 16}, Float32(), "relu");
  v = ref::Relu(ref::Add(v, in));
  int gap = m.graph.Op("sorun_global_avg_pool2d", {r}, {1, 8, 1, 1}, Float32(), "gap");
  v = ref::GlobalAvgPool2D(v);
  int flat = m.graph.Reshape(gap, {1, 8}, "flatten_nop");
  v = ref::Reshape(v, {1, 8});
  int fc = Dense(m, rng, "fc", flat, 1, 8, 10, false, &v);
  m.graph.Output(m.graph.Op("sorun_softmax", {fc}, {1, 10}, Float32(), "softmax"));
  m.expected = ref::Softmax(v);
  return m;
}

StatusOr<Model> Digits(const std::string& dir) {
  Model m;
  auto load = [&](const std::string& name) -> StatusOr<Tensor> {
    return ReadNpyFile(dir + "/digits_" + name + ".npy");
  };
  SORUN_ASSIGN_OR_RETURN(Tensor w1, load("w1"));
  SORUN_ASSIGN_OR_RETURN(Tensor b1, load("b1"));
  SORUN_ASSIGN_OR_RETURN(Tensor w2, load("w2"));
  SORUN_ASSIGN_OR_RETURN(Tensor b2, load("b2"));
  SORUN_ASSIGN_OR_RETURN(Tensor test_x, load("test_x"));
  m.params = {{"fc1_w", w1}, {"fc1_b", b1}, {"fc2_w", w2}, {"fc2_b", b2}};
  int x = m.graph.Input("data", {1, 64});
  int h = m.graph.Op("sorun_dense_bias_relu", {x, m.graph.Input("fc1_w", {32, 64}), m.graph.Input("fc1_b", {32})},
                     {1, 32}, Float32(), "fc1");
  int o = m.graph.Op("sorun_dense_bias", {h, m.graph.Input("fc2_w", {10, 32}), m.graph.Input("fc2_b", {10})}, {1, 10},
                     Float32(), "fc2");
  m.graph.Output(m.graph.Op("sorun_softmax", {o}, {1, 10}, Float32(), "probabilities"));
  m.input = NewTensor({1, 64});
  std::memcpy(m.input.data(), test_x.data(), 64 * sizeof(float));
  ref::Array v = ref::FromFloats({1, 64}, m.input.data_as<float>());
  ref::Array rw1 = ref::FromFloats({32, 64}, w1.data_as<float>()), rb1 = ref::FromFloats({32}, b1.data_as<float>());
  ref::Array rw2 = ref::FromFloats({10, 32}, w2.data_as<float>()), rb2 = ref::FromFloats({10}, b2.data_as<float>());
  m.expected = ref::Softmax(ref::Dense(ref::Relu(ref::Dense(v, rw1, &rb1)), rw2, &rb2));
  return m;
}

// Compute-bound and small on disk (37 KiB of params, ~21 M multiply-adds per run): four 3x3 convs
// 16 -> 16 channels (+bias+relu) on a 48x48 map, global average pool, dense, softmax. Used to measure
// executor throughput scaling (bench/executor_throughput_bench.cc).
Model ConvHeavy() {
  Model m;
  Rng rng(8);
  ref::Array v = SetInput(m, rng, {1, 16, 48, 48});
  int x = m.graph.Input("data", {1, 16, 48, 48});
  for (int i = 0; i < 4; ++i) {
    const std::string name = "conv" + std::to_string(i);
    ref::Array w = AddParam(m, rng, name + "_w", {16, 16, 3, 3}, Fan(144));
    ref::Array b = AddParam(m, rng, name + "_b", {16}, 0.1f);
    x = m.graph.Op("sorun_conv2d_bias_relu_nchw",
                   {x, m.graph.Input(name + "_w", {16, 16, 3, 3}), m.graph.Input(name + "_b", {16})}, {1, 16, 48, 48},
                   Float32(), name);
    v = ref::Relu(ref::BiasAdd(ref::Conv2D(v, w, 1, 1), b));
  }
  int gap = m.graph.Op("sorun_global_avg_pool2d", {x}, {1, 16, 1, 1}, Float32(), "gap");
  v = ref::GlobalAvgPool2D(v);
  int flat = m.graph.Reshape(gap, {1, 16}, "flatten_nop");
  v = ref::Reshape(v, {1, 16});
  int fc = Dense(m, rng, "fc", flat, 1, 16, 10, false, &v);
  m.graph.Output(m.graph.Op("sorun_softmax", {fc}, {1, 10}, Float32(), "softmax"));
  m.expected = ref::Softmax(v);
  return m;
}

// >= 256 MiB of params: four 4096x4096 dense+relu layers.
Model Big256() {
  Model m;
  Rng rng(4);
  ref::Array v = SetInput(m, rng, {1, 4096});
  int x = m.graph.Input("data", {1, 4096});
  for (int i = 0; i < 4; ++i) x = Dense(m, rng, "fc" + std::to_string(i), x, 1, 4096, 4096, true, &v);
  m.graph.Output(x);
  m.expected = v;
  return m;
}

// CPU and a device: fc1 on the CPU, then on the device fc2 + relu + add(h, h), back to the CPU for fc3
// and softmax. `prefix` picks the host functions (sorun_ocl_ / sorun_cuda_).
Model Heterogeneous(int device_type, const std::string& prefix, uint64_t seed) {
  Model m;
  m.heterogeneous = true;
  Rng rng(seed);
  ref::Array v = SetInput(m, rng, {1, 64});
  int x = m.graph.Input("data", {1, 64});
  m.graph.SetDeviceType(x, kDLCPU);
  x = Dense(m, rng, "fc1", x, 1, 64, 128, true, &v);
  int to_dev = m.graph.Op("__copy", {x}, {1, 128}, Float32(), "copy_to_device");
  m.graph.SetDeviceType(to_dev, device_type);
  int h = Dense(m, rng, "fc2", to_dev, 1, 128, 64, false, &v, (prefix + "dense_bias").c_str(), device_type);
  int r = m.graph.Op(prefix + "relu", {h}, {1, 64}, Float32(), "device_relu");
  m.graph.SetDeviceType(r, device_type);
  v = ref::Relu(v);
  int twice = m.graph.Op(prefix + "add", {r, r}, {1, 64}, Float32(), "device_add");
  m.graph.SetDeviceType(twice, device_type);
  v = ref::Add(v, v);
  int back = m.graph.Op("__copy", {twice}, {1, 64}, Float32(), "copy_to_host");
  m.graph.SetDeviceType(back, kDLCPU);
  int fc3 = Dense(m, rng, "fc3", back, 1, 64, 10, false, &v);
  int out = m.graph.Op("sorun_softmax", {fc3}, {1, 10}, Float32(), "softmax");
  m.graph.SetDeviceType(out, kDLCPU);
  m.graph.Output(out);
  m.expected = ref::Softmax(v);
  return m;
}

// Every node on the device (fc1 + relu + add(h, h), input and output there too): a run is device
// work only, which a device graph can record (tests/cuda/device_graph_test.cc).
Model DeviceOnly(int device_type, const std::string& prefix, uint64_t seed) {
  Model m;
  m.heterogeneous = true;
  Rng rng(seed);
  ref::Array v = SetInput(m, rng, {1, 64});
  int x = m.graph.Input("data", {1, 64});
  m.graph.SetDeviceType(x, device_type);
  int h = Dense(m, rng, "fc1", x, 1, 64, 32, false, &v, (prefix + "dense_bias").c_str(), device_type);
  int r = m.graph.Op(prefix + "relu", {h}, {1, 32}, Float32(), "device_relu");
  m.graph.SetDeviceType(r, device_type);
  v = ref::Relu(v);
  int twice = m.graph.Op(prefix + "add", {r, r}, {1, 32}, Float32(), "device_add");
  m.graph.SetDeviceType(twice, device_type);
  v = ref::Add(v, v);
  m.graph.Output(twice);
  m.expected = v;
  return m;
}

// 10,000 calls of an empty kernel in a chain (dispatch overhead).
Model Chain10k() {
  Model m;
  Rng rng(5);
  ref::Array v = SetInput(m, rng, {1, 16});
  int x = m.graph.Input("data", {1, 16});
  for (int i = 0; i < 10000; ++i) x = m.graph.Op("sorun_empty", {x}, {1, 16}, Float32(), "empty" + std::to_string(i));
  m.graph.Output(x);
  m.expected = ref::Array{{1, 16}, std::vector<double>(16, 0.0)};  // sorun_empty writes nothing
  return m;
}

Status WriteModel(const Model& m, const std::string& dir, const std::string& name) {
  SORUN_ASSIGN_OR_RETURN(std::string json, m.graph.BuildJson());
  SORUN_RETURN_IF_ERROR(WriteFileBytes(dir + "/" + name + ".json", json));
  BinaryWriter w;
  SORUN_RETURN_IF_ERROR(WriteParamsDict(m.params, &w, /*align_data=*/true));
  SORUN_RETURN_IF_ERROR(WriteFileBytes(dir + "/" + name + ".params", w.bytes()));
  SORUN_RETURN_IF_ERROR(WriteNpyFile(dir + "/" + name + "_input.npy", *m.input.dl()));
  std::vector<float> expected = ref::ToFloats(m.expected);
  Tensor e = NewTensor(m.expected.shape);
  std::memcpy(e.data(), expected.data(), expected.size() * sizeof(float));
  return WriteNpyFile(dir + "/" + name + "_expected.npy", *e.dl());
}

}  // namespace
}  // namespace sorun

int main(int argc, char** argv) {
  using namespace sorun;
  if (argc < 3) {
    std::fprintf(stderr, "usage: zoo_gen MODEL OUT_DIR [DIGITS_DIR]\n");
    return 2;
  }
  const std::string name = argv[1];
  const std::string out = argv[2];
  StatusOr<Model> model = InvalidArgument("unknown model '" + name + "'");
  if (name == "mlp") model = Mlp();
  if (name == "cnn") model = Cnn();
  if (name == "resblock") model = ResBlock();
  if (name == "big256") model = Big256();
  if (name == "mlp_opencl") model = Heterogeneous(kDLOpenCL, "sorun_ocl_", 6);
  if (name == "mlp_cuda") model = Heterogeneous(kDLCUDA, "sorun_cuda_", 7);
  if (name == "mlp_cuda_only") model = DeviceOnly(kDLCUDA, "sorun_cuda_", 8);
  if (name == "chain10k") model = Chain10k();
  if (name == "conv_heavy") model = ConvHeavy();
  if (name == "digits") {
    if (argc < 4) {
      std::fprintf(stderr, "zoo_gen: digits needs DIGITS_DIR\n");
      return 2;
    }
    model = Digits(argv[3]);
  }
  Status s = model.ok() ? WriteModel(*model, out, name) : model.status();
  if (!s.ok()) {
    std::fprintf(stderr, "zoo_gen: %s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
