// Reference operators: plain, unoptimised C++ in double precision, written independently of the
// kernel library (testdata/kernels/nn_kernels.c) so the zoo's expected outputs do not share its
// bugs. Used by the zoo generator and by tests. Explicit stride/padding parameters (the kernels
// infer them from shapes). Tensors are row-major float vectors with explicit shapes.
#ifndef SORUN_TESTDATA_MODELS_REFERENCE_OPS_H_
#define SORUN_TESTDATA_MODELS_REFERENCE_OPS_H_

#include <cstdint>
#include <vector>

namespace sorun {
namespace reference {

struct Array {
  std::vector<int64_t> shape;
  std::vector<double> data;
  int64_t size() const;
};

Array FromFloats(std::vector<int64_t> shape, const float* values);
std::vector<float> ToFloats(const Array& a);

// y[n, m] = sum_k x[n, k] * w[m, k] (+ b[m]).
Array Dense(const Array& x, const Array& w, const Array* bias);
// y = x + b over axis 1.
Array BiasAdd(const Array& x, const Array& b);
Array Relu(const Array& x);
Array Add(const Array& a, const Array& b);
// NCHW x OIHW, symmetric zero padding.
Array Conv2D(const Array& x, const Array& w, int64_t stride, int64_t pad);
Array MaxPool2D(const Array& x, int64_t window);
Array GlobalAvgPool2D(const Array& x);  // -> [N, C, 1, 1]
Array Softmax(const Array& x);          // over the last axis
Array Reshape(const Array& x, std::vector<int64_t> shape);

// Largest |a - b| / max(1, |b|) over all elements (sizes must match).
double MaxRelativeError(const std::vector<float>& actual, const Array& expected);

}  // namespace reference
}  // namespace sorun

#endif  // SORUN_TESTDATA_MODELS_REFERENCE_OPS_H_
