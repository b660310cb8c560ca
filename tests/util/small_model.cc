#include "tests/util/small_model.h"

#include <algorithm>
#include <cmath>

#include "graph_executor/graph_builder.h"
#include "runtime/data_type.h"
#include "runtime/tensor.h"

namespace sorun {
namespace testing {

SmallModel MakeModel() {
  GraphBuilder b;
  int x = b.Input("data", {1, 8});
  int w = b.Input("w", {4, 8});
  int bias = b.Input("bias", {4});
  int h = b.Op("sorun_dense_bias_relu", {x, w, bias}, {1, 4}, Float32(), "fc");
  b.Output(b.Op("sorun_softmax", {h}, {1, 4}, Float32(), "softmax"));
  SmallModel m;
  m.json = *b.BuildJson();
  auto wt = Tensor::Empty({4, 8}, Float32(), CpuDevice());
  auto bt = Tensor::Empty({4}, Float32(), CpuDevice());
  for (int i = 0; i < 32; ++i) wt->data_as<float>()[i] = 0.1f * static_cast<float>((i % 7) - 3);
  for (int i = 0; i < 4; ++i) bt->data_as<float>()[i] = 0.05f * static_cast<float>(i);
  m.params = {{"w", *wt}, {"bias", *bt}};
  return m;
}

std::vector<float> Reference(const SmallModel& m) {
  const float* w = m.params[0].second.data_as<float>();
  const float* b = m.params[1].second.data_as<float>();
  double h[4], sum = 0;
  for (int j = 0; j < 4; ++j) {
    double acc = b[j];
    for (int k = 0; k < 8; ++k) acc += (k / 8.0) * w[j * 8 + k];
    h[j] = acc > 0 ? acc : 0;
  }
  double mx = *std::max_element(h, h + 4);
  for (double& v : h) sum += (v = std::exp(v - mx));
  std::vector<float> out;
  for (double v : h) out.push_back(static_cast<float>(v / sum));
  return out;
}

}  // namespace testing
}  // namespace sorun
