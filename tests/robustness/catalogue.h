// The bad-input catalogue's shared parts: a good model built once per test process (CatalogueEnv),
// the case type, and the one parameterised test every case runs through.
//
// A case is a malformed artifact or call driven through the public API; it must fail with a Status
// whose message contains `expected` (naming the cause and where), never crash, and afterwards the good
// model must still load and run. Each area keeps its cases in its own file
// (tests/robustness/bad_input_<area>_test.cc) and instantiates the suite:
//
//   std::vector<CatalogueCase> KernelCases() { ... }
//   SORUN_CATALOGUE_CASES(Kernels, KernelCases());
//
// Cases are built when GoogleTest registers tests (after main starts), so building a case may use
// CatalogueEnv. Not thread-safe: the catalogue runs its cases one after another.
#ifndef SORUN_TESTS_ROBUSTNESS_CATALOGUE_H_
#define SORUN_TESTS_ROBUSTNESS_CATALOGUE_H_

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "api/model_loading.h"
#include "graph_executor/graph_executable.h"
#include "runtime/data_type.h"
#include "runtime/tensor_io.h"

namespace sorun {
namespace catalogue {

// The good model (a dense+relu+softmax MLP over nn_kernels.c) and the temporary directory cases
// write their inputs to. Built on first use; lives until the process exits.
struct CatalogueEnv {
  std::string dir;
  std::string kernels_o;  // nn_kernels.c compiled once
  std::string good_so;
  std::string good_json;
  NamedTensors params;
  int count = 0;

  static CatalogueEnv& Get();

  // The kernel library's host code (nn_kernels.o).
  Module Host() const;
  // A fresh path in `dir` ending in `name`.
  std::string Path(const std::string& name);
  // A library whose blob payload is exactly `payload`.
  std::string WithBlob(const std::string& payload, const std::string& name);
  // A library whose factory has graph `json` and params `p` (written as sorun writes them).
  std::string WithFactory(const std::string& json, const NamedTensors& p, const std::string& name);
  // `s` as the blob format writes a string (u64 length + bytes).
  static std::string Str(const std::string& s);
  // `v` as 8 little-endian bytes.
  static std::string U64(uint64_t v);
};

// One bad input: `run` must fail with a message containing `expected`.
struct CatalogueCase {
  std::string name;
  std::function<Status()> run;
  std::string expected;
};

// Load(path).status().
Status LoadStatus(const std::string& path);
// Loads the good model, creates a CPU executor and runs `body` on it.
Status RunGood(const std::function<Status(GraphExecutor&)>& body);
// Asserts that the good model still loads, runs and gives a softmax summing to 1.
void ExpectGoodModelStillWorks();
// A GoogleTest-safe test name for `c` ("library truncated at 64" -> "library_truncated_at_64").
std::string CaseName(const ::testing::TestParamInfo<CatalogueCase>& info);

class BadInputCatalogueTest : public ::testing::TestWithParam<CatalogueCase> {};

}  // namespace catalogue
}  // namespace sorun

// Registers `cases` (an expression giving std::vector<CatalogueCase>) under the prefix `area`. Use it
// inside namespace sorun::catalogue (GoogleTest wants the suite's unqualified name).
#define SORUN_CATALOGUE_CASES(area, cases) \
  INSTANTIATE_TEST_SUITE_P(area, BadInputCatalogueTest, ::testing::ValuesIn(cases), ::sorun::catalogue::CaseName)

#endif  // SORUN_TESTS_ROBUSTNESS_CATALOGUE_H_
