// TVM's sort helpers as kernels reach them (the global registry): orderings against a plain reference
// (stable: ties keep index order), every output dtype and axis kind, and the checks that keep a bad
// call from reading or writing out of bounds. Real TVM kernels calling them, bit for bit against TVM:
// the interop jobs' sort_topk models (TVM 0.16 graph executor, TVM 0.27 Relax).
#include "runtime/contrib/sort.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

#include "graph_executor/register.h"
#include "relax/relax_module.h"
#include "runtime/data_type.h"
#include "runtime/function_registry.h"
#include "runtime/registry_keys.h"
#include "runtime/tensor.h"
#include "tests/util/status_matchers.h"

namespace sorun {
namespace {

PackedFunc Get(const char* name) {
  EXPECT_TRUE(RegisterGlobalSortFunctions().ok());
  PackedFunc f = FunctionRegistry::Global().Get(name);
  EXPECT_TRUE(f.defined()) << name;
  return f;
}

template <typename T>
Tensor Make(const std::vector<int64_t>& shape, DLDataType dtype, const std::vector<T>& values) {
  auto t = Tensor::Empty(shape, dtype, CpuDevice());
  EXPECT_TRUE(t.ok());
  EXPECT_EQ(static_cast<uint64_t>(values.size() * sizeof(T)), t->nbytes());
  std::memcpy(t->data(), values.data(), t->nbytes());
  return *t;
}

template <typename T>
std::vector<T> Read(const Tensor& t) {
  std::vector<T> v(static_cast<size_t>(t.nbytes() / sizeof(T)));
  std::memcpy(v.data(), t.data(), t.nbytes());
  return v;
}

// Positions 0..n-1 of `row` stably sorted by value.
std::vector<int64_t> StableOrder(const std::vector<float>& row, bool ascending) {
  std::vector<int64_t> idx(row.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) {
    return ascending ? row[static_cast<size_t>(a)] < row[static_cast<size_t>(b)]
                     : row[static_cast<size_t>(a)] > row[static_cast<size_t>(b)];
  });
  return idx;
}

// 3 rows of 8 small integers (many ties).
const std::vector<float> kData = {3, 1, 2, 1, 3, 0, 2, 1, 0, 0, 5, 5, 1, 4, 4, 2, 7, 6, 7, 6, 7, 6, 7, 6};

// Not a core built-in: the executors' registrations register them (kernels of both kinds call them).
TEST(SortFunctionsTest, RegisteredByEveryExecutorRegistrationNotByTheRegistryCore) {
  const char* names[] = {keys::kContribSort, keys::kContribArgsort, keys::kContribTopk, keys::kContribArgsortNms};
  FunctionRegistry core;
  ASSERT_TRUE(RegisterCoreFunctions(core).ok());
  for (const char* name : names) EXPECT_FALSE(core.Get(name).defined()) << name;

  FunctionRegistry& global = FunctionRegistry::Global();
  for (Status (*registration)() : {&RegisterGraphExecutor, &relax::RegisterRelaxVm, &RegisterGlobalSortFunctions}) {
    for (const char* name : names) global.Remove(name);
    ASSERT_TRUE(registration().ok());
    ASSERT_TRUE(registration().ok());  // idempotent
    for (const char* name : names) EXPECT_TRUE(global.Get(name).defined()) << name;
  }
}

TEST(SortFunctionsTest, SortAndArgsortAlongTheLastAxisAreStable) {
  Tensor data = Make<float>({3, 8}, Float32(), kData);
  for (bool ascending : {true, false}) {
    auto values = Tensor::Empty({3, 8}, Float32(), CpuDevice());
    auto indices = Tensor::Empty({3, 8}, Int64(), CpuDevice());
    ASSERT_TRUE(values.ok() && indices.ok());
    ASSERT_TRUE(Get(keys::kContribSort)(data, *values, -1, ascending).ok());
    ASSERT_TRUE(Get(keys::kContribArgsort)(data, *indices, 1, ascending).ok());
    const auto got_values = Read<float>(*values);
    const auto got_indices = Read<int64_t>(*indices);
    for (int r = 0; r < 3; ++r) {
      std::vector<float> row(kData.begin() + r * 8, kData.begin() + r * 8 + 8);
      const std::vector<int64_t> order = StableOrder(row, ascending);
      for (int k = 0; k < 8; ++k) {
        EXPECT_EQ(got_indices[static_cast<size_t>(r * 8 + k)], order[static_cast<size_t>(k)]) << r << "," << k;
        EXPECT_EQ(got_values[static_cast<size_t>(r * 8 + k)], row[static_cast<size_t>(order[static_cast<size_t>(k)])]);
      }
    }
  }
}

TEST(SortFunctionsTest, ArgsortAlongTheFirstAxisIntoEveryIndexDtype) {
  Tensor data = Make<float>({3, 8}, Float32(), kData);
  for (DLDataType dt : {Int32(), Int64(), Float32(), MakeDType(kDLFloat, 64)}) {
    auto out = Tensor::Empty({3, 8}, dt, CpuDevice());
    ASSERT_TRUE(out.ok());
    ASSERT_TRUE(Get(keys::kContribArgsort)(data, *out, 0, true).ok()) << DTypeToString(dt);
    for (int c = 0; c < 8; ++c) {
      std::vector<float> column = {kData[static_cast<size_t>(c)], kData[static_cast<size_t>(8 + c)],
                                   kData[static_cast<size_t>(16 + c)]};
      const std::vector<int64_t> order = StableOrder(column, true);
      for (int k = 0; k < 3; ++k) {
        const size_t at = static_cast<size_t>(k * 8 + c);
        double got = dt == Int32()     ? Read<int32_t>(*out)[at]
                     : dt == Int64()   ? static_cast<double>(Read<int64_t>(*out)[at])
                     : dt == Float32() ? Read<float>(*out)[at]
                                       : Read<double>(*out)[at];
        EXPECT_EQ(got, static_cast<double>(order[static_cast<size_t>(k)])) << DTypeToString(dt) << " " << c;
      }
    }
  }
}

TEST(SortFunctionsTest, SortsInt64AndFloat16) {
  Tensor ints = Make<int64_t>({5}, Int64(), {INT64_MAX, -3, INT64_MAX - 1, INT64_MIN, 0});
  auto sorted = Tensor::Empty({5}, Int64(), CpuDevice());
  ASSERT_TRUE(sorted.ok());
  ASSERT_TRUE(Get(keys::kContribSort)(ints, *sorted, 0, true).ok());
  EXPECT_EQ(Read<int64_t>(*sorted), (std::vector<int64_t>{INT64_MIN, -3, 0, INT64_MAX - 1, INT64_MAX}));
  // float16 2.0, -1.0, 0.5, -0.0 / +0.0 (equal: stable), compared as floats, copied as bits.
  Tensor halves = Make<uint16_t>({5}, MakeDType(kDLFloat, 16), {0x4000, 0xbc00, 0x3800, 0x8000, 0x0000});
  auto order = Tensor::Empty({5}, Int32(), CpuDevice());
  auto values = Tensor::Empty({5}, MakeDType(kDLFloat, 16), CpuDevice());
  ASSERT_TRUE(order.ok() && values.ok());
  ASSERT_TRUE(Get(keys::kContribArgsort)(halves, *order, 0, false).ok());
  EXPECT_EQ(Read<int32_t>(*order), (std::vector<int32_t>{0, 2, 3, 4, 1}));
  ASSERT_TRUE(Get(keys::kContribSort)(halves, *values, 0, false).ok());
  EXPECT_EQ(Read<uint16_t>(*values), (std::vector<uint16_t>{0x4000, 0x3800, 0x8000, 0x0000, 0xbc00}));
}

TEST(SortFunctionsTest, TopkBothValuesAndIndices) {
  Tensor data = Make<float>({3, 8}, Float32(), kData);
  for (bool ascending : {false, true}) {
    auto values = Tensor::Empty({3, 3}, Float32(), CpuDevice());
    auto indices = Tensor::Empty({3, 3}, Int32(), CpuDevice());
    ASSERT_TRUE(values.ok() && indices.ok());
    ASSERT_TRUE(Get(keys::kContribTopk)(data, *values, *indices, 3, -1, "both", ascending).ok());
    for (int r = 0; r < 3; ++r) {
      std::vector<float> row(kData.begin() + r * 8, kData.begin() + r * 8 + 8);
      const std::vector<int64_t> order = StableOrder(row, ascending);  // ties: lower index first
      for (int k = 0; k < 3; ++k) {
        EXPECT_EQ(Read<int32_t>(*indices)[static_cast<size_t>(r * 3 + k)], order[static_cast<size_t>(k)]);
        EXPECT_EQ(Read<float>(*values)[static_cast<size_t>(r * 3 + k)],
                  row[static_cast<size_t>(order[static_cast<size_t>(k)])]);
      }
    }
  }
  // One output, k < 1 (the whole axis), the first axis.
  auto only_indices = Tensor::Empty({3, 8}, Int64(), CpuDevice());
  ASSERT_TRUE(only_indices.ok());
  ASSERT_TRUE(Get(keys::kContribTopk)(data, *only_indices, 0, 0, "indices", false).ok());
  auto argsorted = Tensor::Empty({3, 8}, Int64(), CpuDevice());
  ASSERT_TRUE(argsorted.ok());
  ASSERT_TRUE(Get(keys::kContribArgsort)(data, *argsorted, 0, false).ok());
  EXPECT_EQ(Read<int64_t>(*only_indices), Read<int64_t>(*argsorted));
  auto only_values = Tensor::Empty({1, 8}, Float32(), CpuDevice());
  ASSERT_TRUE(only_values.ok());
  ASSERT_TRUE(Get(keys::kContribTopk)(data, *only_values, 1, 0, "values", false).ok());
  EXPECT_EQ(Read<float>(*only_values), (std::vector<float>{7, 6, 7, 6, 7, 6, 7, 6}));
}

TEST(SortFunctionsTest, ArgsortNmsSortsTheValidPrefixOfEachRow) {
  Tensor data = Make<float>({2, 4}, Float32(), {0.1f, 0.9f, 0.5f, 0.7f, 0.3f, 0.2f, 0.8f, 0.4f});
  Tensor counts = Make<int32_t>({2}, Int32(), {3, 0});
  auto out = Tensor::Empty({2, 4}, Int32(), CpuDevice());
  ASSERT_TRUE(out.ok());
  ASSERT_TRUE(Get(keys::kContribArgsortNms)(data, counts, *out, 1, false).ok());
  EXPECT_EQ(Read<int32_t>(*out), (std::vector<int32_t>{1, 2, 0, 3, 0, 1, 2, 3}));
  Tensor too_many = Make<int32_t>({2}, Int32(), {5, 0});
  EXPECT_ERROR(Get(keys::kContribArgsortNms)(data, too_many, *out, 1, false).status(), StatusCode::kInvalidArgument,
               "valid count 5 of row 0 is outside [0, 4]");
}

TEST(SortFunctionsTest, BadCallsAreErrorsNamingTheArgument) {
  Tensor data = Make<float>({3, 8}, Float32(), kData);
  auto out = Tensor::Empty({3, 8}, Float32(), CpuDevice());
  auto small = Tensor::Empty({3, 7}, Float32(), CpuDevice());
  auto ints = Tensor::Empty({3, 8}, MakeDType(kDLInt, 16), CpuDevice());
  ASSERT_TRUE(out.ok() && small.ok() && ints.ok());
  EXPECT_ERROR(Get(keys::kContribSort)(data, *out, 2, true).status(), StatusCode::kInvalidArgument,
               "tvm.contrib.sort.sort: axis 2 is out of range for a 2-d input");
  EXPECT_ERROR(Get(keys::kContribSort)(data, *small, 1, true).status(), StatusCode::kInvalidArgument,
               "the output is [3, 7], expected [3, 8]");
  EXPECT_ERROR(Get(keys::kContribArgsort)(data, *ints, 1, true).status(), StatusCode::kInvalidArgument,
               "output of dtype int16");
  EXPECT_ERROR(Get(keys::kContribSort)(*ints, *ints, 1, true).status(), StatusCode::kInvalidArgument,
               "data of dtype int16");
  EXPECT_ERROR(Get(keys::kContribSort)(data, 1, 1, true).status(), StatusCode::kInvalidArgument, "output (argument 1)");
  EXPECT_ERROR(Get(keys::kContribSort)(data, *out, 1).status(), StatusCode::kInvalidArgument, "4");
  // topk: k along the axis, ret_type and the argument count agreeing.
  auto top3 = Tensor::Empty({3, 3}, Float32(), CpuDevice());
  ASSERT_TRUE(top3.ok());
  EXPECT_ERROR(Get(keys::kContribTopk)(data, *top3, 4, 1, "values", false).status(), StatusCode::kInvalidArgument,
               "values is [3, 3], expected [3, 4]");
  EXPECT_ERROR(Get(keys::kContribTopk)(data, *top3, 3, 1, "all", false).status(), StatusCode::kInvalidArgument,
               "ret_type 'all'");
  EXPECT_ERROR(Get(keys::kContribTopk)(data, *top3, 3, 1, "both", false).status(), StatusCode::kInvalidArgument,
               "takes 7 arguments, got 6");
  // Strided and non-host tensors are refused before any access.
  auto strided = data.View({3, 4}, Float32());
  ASSERT_TRUE(strided.ok());
  DLTensor every_other = *strided->dl();
  int64_t strides[2] = {8, 2};
  every_other.strides = strides;
  EXPECT_ERROR(Get(keys::kContribSort)(&every_other, &every_other, 1, true).status(), StatusCode::kInvalidArgument,
               "data (argument 0) is strided");
  DLTensor on_gpu = *data.dl();
  on_gpu.device = DLDevice{kDLCUDA, 0};
  EXPECT_ERROR(Get(keys::kContribSort)(&on_gpu, *out, 1, true).status(), StatusCode::kInvalidArgument, "is on cuda:0");
}

}  // namespace
}  // namespace sorun
