#include "kernels/nn/vec_math.h"

#include <algorithm>
#include <cmath>

namespace kiln::cpu::nn {
namespace {

void GeluPortable(const float* x, float* y, int64_t n, bool approximate) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    if (approximate) {
      constexpr float kSqrt2OverPi = 0.7978845608028654f;
      y[i] = 0.5f * v *
             (1.f + std::tanh(kSqrt2OverPi * (v + 0.044715f * v * v * v)));
    } else {
      constexpr float kInvSqrt2 = 0.7071067811865476f;
      y[i] = 0.5f * v * (1.f + std::erf(v * kInvSqrt2));
    }
  }
}

float ExpSumPortable(const float* x, float offset, float scale, float* y,
                     int64_t n) {
  float sum = 0.f;
  for (int64_t i = 0; i < n; ++i) {
    y[i] = std::exp((x[i] - offset) * scale);
    sum += y[i];
  }
  return sum;
}

void SoftmaxPairsPortable(const float* x, float beta, float* y, int64_t n) {
  for (int64_t i = 0; i < 2 * n; i += 2) {
    const float max = x[i] > x[i + 1] ? x[i] : x[i + 1];
    const float e0 = std::exp((x[i] - max) * beta);
    const float e1 = std::exp((x[i + 1] - max) * beta);
    const float inverse = 1.f / (e0 + e1);
    y[i] = e0 * inverse;
    y[i + 1] = e1 * inverse;
  }
}

void SoftmaxRowsPortable(const float* x, float beta, float* y, int64_t rows,
                         int64_t depth) {
  for (int64_t r = 0; r < rows; ++r, x += depth, y += depth) {
    const float max = *std::max_element(x, x + depth);
    const float inverse = 1.f / ExpSumPortable(x, max, beta, y, depth);
    for (int64_t i = 0; i < depth; ++i) y[i] *= inverse;
  }
}

}  // namespace

const VecMathKernels& GetVecMathKernels() {
  static const VecMathKernels kKernels = [] {
    VecMathKernels k = VecMathKernelsAvx2Fma();
    if (k.gelu == nullptr) k.gelu = &GeluPortable;
    if (k.exp_sum == nullptr) k.exp_sum = &ExpSumPortable;
    if (k.softmax_pairs == nullptr) k.softmax_pairs = &SoftmaxPairsPortable;
    if (k.softmax_rows == nullptr) k.softmax_rows = &SoftmaxRowsPortable;
    return k;
  }();
  return kKernels;
}

}  // namespace kiln::cpu::nn
