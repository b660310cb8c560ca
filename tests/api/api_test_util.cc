#include "tests/api/api_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tests/util/test_util.h"
#include "tools/npy.h"

namespace sorun {
namespace testing {

std::string ZooFile(const std::string& file) { return Runfile("testdata/models/" + file); }

NDArray ReadZooNpy(const std::string& file) { return ReadNpyArray(ZooFile(file)); }

NDArray ReadNpyArray(const std::string& path) {
  auto tensor = ReadNpyFile(path);
  EXPECT_TRUE(tensor.ok()) << tensor.status().ToString();
  if (!tensor.ok()) return NDArray();
  auto array = NDArray::Empty(tensor->shape(), tensor->dtype());
  EXPECT_TRUE(array.ok()) << array.status().ToString();
  if (!array.ok()) return NDArray();
  Status copied = array->CopyFrom(*tensor->dl());
  EXPECT_TRUE(copied.ok()) << copied.ToString();
  return *array;
}

std::string ReadZooBytes(const std::string& file) { return ReadFileOrDie(ZooFile(file)); }

double MaxRelativeError(const NDArray& actual, const NDArray& expected) {
  if (!actual.defined() || !expected.defined() || actual.shape() != expected.shape() ||
      DataTypeName(actual.dtype()) != "float32" || DataTypeName(expected.dtype()) != "float32") {
    return INFINITY;
  }
  double worst = 0;
  for (int64_t i = 0; i < expected.num_elements(); ++i) {
    const double e = expected.data_as<float>()[i];
    const double err = std::fabs(actual.data_as<float>()[i] - e) / std::max(1.0, std::fabs(e));
    if (!(err <= worst)) worst = err;  // NaN counts as the worst
  }
  return worst;
}

}  // namespace testing
}  // namespace sorun
