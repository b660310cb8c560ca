#include "tests/tools/cli_test_util.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "format/binary_writer.h"
#include "graph_executor/graph_builder.h"
#include "runtime/data_type.h"
#include "runtime/tensor_io.h"
#include "tests/util/test_util.h"
#include "tools/npy.h"

extern char** environ;

namespace sorun {
namespace testing {
namespace {

std::vector<float> Weights() {
  std::vector<float> w(32);
  for (int i = 0; i < 32; ++i) w[i] = 0.1f * static_cast<float>((i % 7) - 3);
  return w;
}

std::vector<float> Bias() {
  std::vector<float> b(4);
  for (int i = 0; i < 4; ++i) b[i] = 0.05f * static_cast<float>(i) - 0.02f;
  return b;
}

Tensor FloatTensor(const std::vector<int64_t>& shape, const std::vector<float>& values) {
  auto t = Tensor::Empty(shape, Float32(), CpuDevice());
  if (!t.ok()) throw std::runtime_error(t.status().ToString());
  std::memcpy(t->data(), values.data(), values.size() * sizeof(float));
  return *t;
}

}  // namespace

CliResult RunSorun(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
                   const std::string& cwd, const std::string& stdin_path) {
  const std::string dir = MakeTempDir("cli_run");
  const std::string out_path = dir + "/stdout", err_path = dir + "/stderr";
  std::string binary = Runfile("tools/sorun");
  if (binary[0] != '/') {
    char buf[4096];
    if (getcwd(buf, sizeof(buf))) binary = std::string(buf) + "/" + binary;
  }
  // Build argv and envp. Under --config=aarch64 the CLI is an aarch64 program and there is no binfmt_misc
  // to run it: toolchains/aarch64/qemu_run.sh names the emulator in SORUN_TEST_EMULATOR.
  std::vector<std::string> argv_s = {binary};
  const char* emulator = std::getenv("SORUN_TEST_EMULATOR");
  if (emulator != nullptr && *emulator != '\0') argv_s.insert(argv_s.begin(), emulator);
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : argv_s) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::map<std::string, std::string> merged;
  for (char** e = environ; *e; ++e) {
    std::string kv(*e);
    size_t eq = kv.find('=');
    if (eq != std::string::npos) merged[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& kv : env) merged[kv.first] = kv.second;
  std::vector<std::string> env_s;
  for (const auto& kv : merged) env_s.push_back(kv.first + "=" + kv.second);
  std::vector<char*> envp;
  for (std::string& s : env_s) envp.push_back(s.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, stdin_path.empty() ? "/dev/null" : stdin_path.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, argv_s[0].c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  CliResult result;
  if (rc != 0) throw std::runtime_error("cannot start " + binary + ": " + std::strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error("waitpid failed");
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = ReadFileOrDie(out_path);
  result.err = ReadFileOrDie(err_path);
  return result;
}

std::string Describe(const CliResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\nstdout:\n" + r.out + "\nstderr:\n" + r.err;
}

bool IsOneErrorLine(const CliResult& r) {
  if (r.err.rfind("sorun: error: ", 0) != 0) return false;
  size_t nl = r.err.find('\n');
  return nl == r.err.size() - 1;
}

std::string NnKernelsSource() { return Runfile("testdata/kernels/nn_kernels.c"); }
std::string OpenclHostKernelsSource() { return Runfile("testdata/opencl/opencl_host_kernels.c"); }

std::vector<float> SmallModelReference(const std::vector<float>& x) {
  std::vector<float> w = Weights(), b = Bias();
  double h[4], sum = 0;
  for (int j = 0; j < 4; ++j) {
    double acc = b[j];
    for (int k = 0; k < 8; ++k) acc += static_cast<double>(x[k]) * w[j * 8 + k];
    h[j] = acc > 0 ? acc : 0;
  }
  double mx = *std::max_element(h, h + 4);
  for (double& v : h) sum += (v = std::exp(v - mx));
  std::vector<float> out;
  for (double v : h) out.push_back(static_cast<float>(v / sum));
  return out;
}

SmallModelFiles WriteSmallModel(const std::string& dir) {
  GraphBuilder b;
  int x = b.Input("data", {1, 8});
  int w = b.Input("w", {4, 8});
  int bias = b.Input("bias", {4});
  int h = b.Op("sorun_dense_bias_relu", {x, w, bias}, {1, 4}, Float32(), "fc");
  b.Output(b.Op("sorun_softmax", {h}, {1, 4}, Float32(), "softmax"));
  auto json = b.BuildJson();
  if (!json.ok()) throw std::runtime_error(json.status().ToString());
  SmallModelFiles files;
  files.graph = dir + "/graph.json";
  files.params = dir + "/params.params";
  files.input = dir + "/x.npy";
  WriteFileOrDie(files.graph, *json);
  NamedTensors params = {{"w", FloatTensor({4, 8}, Weights())}, {"bias", FloatTensor({4}, Bias())}};
  BinaryWriter writer;
  Status s = WriteParamsDict(params, &writer, /*align_data=*/true);
  if (!s.ok()) throw std::runtime_error(s.ToString());
  WriteFileOrDie(files.params, writer.bytes());
  for (int i = 0; i < 8; ++i) files.input_values.push_back(static_cast<float>(i) / 8.0f);
  WriteFloatNpy(files.input, {1, 8}, files.input_values);
  files.expected = SmallModelReference(files.input_values);
  return files;
}

OpenclModelFiles WriteOpenclModel(const std::string& dir, int n) {
  GraphBuilder b;
  int a = b.Input("a", {n});
  int bb = b.Input("b", {n});
  b.Output(b.Op("add_scale_host", {a, bb}, {n}, Float32(), "add_scale"));
  auto json = b.BuildJson();
  if (!json.ok()) throw std::runtime_error(json.status().ToString());
  OpenclModelFiles files;
  files.graph = dir + "/cl_graph.json";
  files.source = dir + "/kernels.cl";
  files.fmap = dir + "/kernels.json";
  files.a = dir + "/a.npy";
  files.b = dir + "/b.npy";
  WriteFileOrDie(files.graph, *json);
  WriteFileOrDie(files.source,
                 "// Function: vadd\n"
                 "__kernel void vadd(__global const float* restrict a, __global const float* restrict b,\n"
                 "                   __global float* restrict c, int n) {\n"
                 "  int i = get_group_id(0) * get_local_size(0) + get_local_id(0);\n"
                 "  if (i < n) c[i] = a[i] + b[i];\n"
                 "}\n"
                 "// Function: scale\n"
                 "__kernel void scale(__global const float* restrict x, __global float* restrict y, float alpha,"
                 " int n) {\n"
                 "  int i = get_group_id(0) * get_local_size(0) + get_local_id(0);\n"
                 "  if (i < n) y[i] = alpha * x[i];\n"
                 "}\n");
  // TVM's .tvm_meta.json layout; "scale" uses the old key thread_axis_tags.
  WriteFileOrDie(files.fmap,
                 "{\"tvm_version\": \"0.16.0\", \"func_info\": {\n"
                 "  \"vadd\": {\"name\": \"\", \"arg_types\": [\"handle\", \"handle\", \"handle\", \"int32\"],\n"
                 "           \"launch_param_tags\": [\"blockIdx.x\", \"threadIdx.x\"]},\n"
                 "  \"scale\": {\"name\": \"\", \"arg_types\": [\"handle\", \"handle\", \"float32\", \"int32\"],\n"
                 "            \"thread_axis_tags\": [\"blockIdx.x\", \"threadIdx.x\"]}}}\n");
  std::vector<float> av(n), bv(n);
  for (int i = 0; i < n; ++i) {
    av[i] = 0.5f * static_cast<float>(i);
    bv[i] = 3.0f - 0.25f * static_cast<float>(i);
    files.expected.push_back(2.0f * (av[i] + bv[i]));
  }
  WriteFloatNpy(files.a, {n}, av);
  WriteFloatNpy(files.b, {n}, bv);
  return files;
}

void WriteFloatNpy(const std::string& path, const std::vector<int64_t>& shape, const std::vector<float>& values) {
  Tensor t = FloatTensor(shape, values);
  Status s = WriteNpyFile(path, *t.dl());
  if (!s.ok()) throw std::runtime_error(s.ToString());
}

std::vector<float> ReadFloatNpy(const std::string& path, std::vector<int64_t>* shape) {
  auto t = ReadNpyFile(path);
  if (!t.ok()) throw std::runtime_error(t.status().ToString());
  if (t->dtype() != Float32()) throw std::runtime_error(path + " is not float32");
  if (shape) *shape = t->shape();
  const float* p = t->data_as<float>();
  return std::vector<float>(p, p + t->num_elements());
}

}  // namespace testing
}  // namespace sorun
