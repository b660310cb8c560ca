// Helpers for the `sorun` CLI tests: run the built binary (//tools:sorun) as a subprocess and
// capture its exit code, stdout and stderr; build small models (graph JSON with GraphBuilder, params
// files with alignment pads, .npy inputs) and pack them with `sorun pack` itself.
#ifndef SORUN_TESTS_TOOLS_CLI_TEST_UTIL_H_
#define SORUN_TESTS_TOOLS_CLI_TEST_UTIL_H_

#include <map>
#include <string>
#include <vector>

#include "runtime/tensor.h"

namespace sorun {
namespace testing {

struct CliResult {
  int exit_code = -1;  // 128 + signal when killed by a signal
  std::string out;
  std::string err;
};

// Runs `sorun ARGS...` in `cwd` (empty: the test's working directory) with `env` added to the
// environment, standard input read from `stdin_path` (empty: /dev/null).
CliResult RunSorun(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {},
                   const std::string& cwd = "", const std::string& stdin_path = "");

// For failures: "exit N\nstdout:\n...\nstderr:\n...".
std::string Describe(const CliResult& r);

// True when `r.err` is exactly one line starting with "sorun: error:".
bool IsOneErrorLine(const CliResult& r);

// Paths of the kernel sources (runfiles).
std::string NnKernelsSource();
std::string OpenclHostKernelsSource();

// data[1,8] -> dense_bias_relu(w[4,8], bias[4]) -> softmax, written to `dir`:
// graph.json, params.params (aligned), x.npy (the input 0, 1/8, ..., 7/8).
struct SmallModelFiles {
  std::string graph;
  std::string params;
  std::string input;
  std::vector<float> input_values;
  std::vector<float> expected;  // the reference output for `input`
};
SmallModelFiles WriteSmallModel(const std::string& dir);
// softmax(relu(x w^T + b)) of the small model for input `x` (8 values).
std::vector<float> SmallModelReference(const std::vector<float>& x);

// a[n] + b[n] -> add_scale_host (2 * (a + b) on OpenCL), written to `dir`: cl_graph.json, kernels.cl,
// kernels.json (fmap), a.npy, b.npy.
struct OpenclModelFiles {
  std::string graph;
  std::string source;
  std::string fmap;
  std::string a, b;
  std::vector<float> expected;
};
OpenclModelFiles WriteOpenclModel(const std::string& dir, int n);

// Writes a float32 .npy file of `shape` holding `values`.
void WriteFloatNpy(const std::string& path, const std::vector<int64_t>& shape, const std::vector<float>& values);
// Reads a float32 .npy file (aborts the test on failure).
std::vector<float> ReadFloatNpy(const std::string& path, std::vector<int64_t>* shape = nullptr);

}  // namespace testing
}  // namespace sorun

#endif  // SORUN_TESTS_TOOLS_CLI_TEST_UTIL_H_
