#include "testdata/models/reference_ops.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace sorun {
namespace reference {

int64_t Array::size() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Array FromFloats(std::vector<int64_t> shape, const float* values) {
  Array a;
  a.shape = std::move(shape);
  a.data.assign(values, values + a.size());
  return a;
}

std::vector<float> ToFloats(const Array& a) { return std::vector<float>(a.data.begin(), a.data.end()); }

Array Dense(const Array& x, const Array& w, const Array* bias) {
  const int64_t n = x.shape[0], k = x.shape[1], m = w.shape[0];
  Array y{{n, m}, std::vector<double>(static_cast<size_t>(n * m))};
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < m; ++j) {
      double acc = bias ? bias->data[static_cast<size_t>(j)] : 0.0;
      for (int64_t p = 0; p < k; ++p)
        acc += x.data[static_cast<size_t>(i * k + p)] * w.data[static_cast<size_t>(j * k + p)];
      y.data[static_cast<size_t>(i * m + j)] = acc;
    }
  }
  return y;
}

Array BiasAdd(const Array& x, const Array& b) {
  Array y = x;
  int64_t c = x.shape[1], inner = 1;
  for (size_t i = 2; i < x.shape.size(); ++i) inner *= x.shape[i];
  for (int64_t idx = 0; idx < x.size(); ++idx)
    y.data[static_cast<size_t>(idx)] += b.data[static_cast<size_t>((idx / inner) % c)];
  return y;
}

Array Relu(const Array& x) {
  Array y = x;
  for (double& v : y.data) v = v > 0 ? v : 0;
  return y;
}

Array Add(const Array& a, const Array& b) {
  Array y = a;
  for (size_t i = 0; i < y.data.size(); ++i) y.data[i] += b.data[i];
  return y;
}

Array Conv2D(const Array& x, const Array& w, int64_t stride, int64_t pad) {
  const int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], wd = x.shape[3];
  const int64_t o = w.shape[0], kh = w.shape[2], kw = w.shape[3];
  const int64_t oh = (h + 2 * pad - kh) / stride + 1, ow = (wd + 2 * pad - kw) / stride + 1;
  Array y{{n, o, oh, ow}, std::vector<double>(static_cast<size_t>(n * o * oh * ow), 0.0)};
  auto X = [&](int64_t i, int64_t ch, int64_t r, int64_t col) -> double {
    if (r < 0 || r >= h || col < 0 || col >= wd) return 0.0;
    return x.data[static_cast<size_t>(((i * c + ch) * h + r) * wd + col)];
  };
  for (int64_t i = 0; i < n; ++i)
    for (int64_t oc = 0; oc < o; ++oc)
      for (int64_t r = 0; r < oh; ++r)
        for (int64_t col = 0; col < ow; ++col) {
          double acc = 0;
          for (int64_t ic = 0; ic < c; ++ic)
            for (int64_t dy = 0; dy < kh; ++dy)
              for (int64_t dx = 0; dx < kw; ++dx)
                acc += X(i, ic, r * stride + dy - pad, col * stride + dx - pad) *
                       w.data[static_cast<size_t>(((oc * c + ic) * kh + dy) * kw + dx)];
          y.data[static_cast<size_t>(((i * o + oc) * oh + r) * ow + col)] = acc;
        }
  return y;
}

Array MaxPool2D(const Array& x, int64_t window) {
  const int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], w = x.shape[3];
  const int64_t oh = h / window, ow = w / window;
  Array y{{n, c, oh, ow}, std::vector<double>(static_cast<size_t>(n * c * oh * ow))};
  for (int64_t p = 0; p < n * c; ++p)
    for (int64_t r = 0; r < oh; ++r)
      for (int64_t col = 0; col < ow; ++col) {
        double m = -std::numeric_limits<double>::infinity();
        for (int64_t dy = 0; dy < window; ++dy)
          for (int64_t dx = 0; dx < window; ++dx)
            m = std::max(m, x.data[static_cast<size_t>((p * h + r * window + dy) * w + col * window + dx)]);
        y.data[static_cast<size_t>((p * oh + r) * ow + col)] = m;
      }
  return y;
}

Array GlobalAvgPool2D(const Array& x) {
  const int64_t n = x.shape[0], c = x.shape[1], hw = x.shape[2] * x.shape[3];
  Array y{{n, c, 1, 1}, std::vector<double>(static_cast<size_t>(n * c))};
  for (int64_t p = 0; p < n * c; ++p) {
    double s = 0;
    for (int64_t q = 0; q < hw; ++q) s += x.data[static_cast<size_t>(p * hw + q)];
    y.data[static_cast<size_t>(p)] = s / static_cast<double>(hw);
  }
  return y;
}

Array Softmax(const Array& x) {
  Array y = x;
  const int64_t m = x.shape.back(), rows = x.size() / m;
  for (int64_t r = 0; r < rows; ++r) {
    double mx = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < m; ++j) mx = std::max(mx, x.data[static_cast<size_t>(r * m + j)]);
    double s = 0;
    for (int64_t j = 0; j < m; ++j) s += std::exp(x.data[static_cast<size_t>(r * m + j)] - mx);
    for (int64_t j = 0; j < m; ++j) {
      y.data[static_cast<size_t>(r * m + j)] = std::exp(x.data[static_cast<size_t>(r * m + j)] - mx) / s;
    }
  }
  return y;
}

Array Reshape(const Array& x, std::vector<int64_t> shape) {
  Array y = x;
  y.shape = std::move(shape);
  if (y.size() != x.size()) throw std::invalid_argument("Reshape: element count changes");
  return y;
}

double MaxRelativeError(const std::vector<float>& actual, const Array& expected) {
  if (actual.size() != expected.data.size()) return std::numeric_limits<double>::infinity();
  double worst = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    double e = expected.data[i];
    double err = std::fabs(static_cast<double>(actual[i]) - e) / std::max(1.0, std::fabs(e));
    if (!(err <= worst)) worst = err;  // NaN propagates as the worst
  }
  return worst;
}

}  // namespace reference
}  // namespace sorun
