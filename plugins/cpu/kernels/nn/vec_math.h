// Float rows of the transcendental kernels (GELU, SOFTMAX's exponentials):
// an AVX2+FMA implementation selected at run time, and a portable one on
// the C library's functions. The vector code's relative error is a few
// 1e-7 (the exact GELU's absolute error below 1e-6: far inside the
// differential tests' float bound), not bit-equal to the C library's.
#ifndef KILN_PLUGINS_CPU_KERNELS_NN_VEC_MATH_H_
#define KILN_PLUGINS_CPU_KERNELS_NN_VEC_MATH_H_

#include <cstdint>

namespace kiln::cpu::nn {

struct VecMathKernels {
  // y[i] = GELU(x[i]): 0.5x(1 + erf(x / sqrt(2))), or with `approximate`
  // 0.5x(1 + tanh(sqrt(2 / pi)(x + 0.044715x^3))). In place allowed.
  void (*gelu)(const float* x, float* y, int64_t n, bool approximate) = nullptr;
  // y[i] = exp((x[i] - offset) * scale); returns the sum of the y[i] (in a
  // fixed order for a given n). In place allowed.
  float (*exp_sum)(const float* x, float offset, float scale, float* y,
                   int64_t n) = nullptr;
  // SOFTMAX over a last axis of 2 for n pairs: y = exp((x - max) * beta) /
  // (the pair's sum of them), each pair on its own. In place allowed.
  void (*softmax_pairs)(const float* x, float beta, float* y,
                        int64_t n) = nullptr;
  // SOFTMAX over `rows` rows of `depth` > 0 values: per row, e = exp_sum(x,
  // max of the row, beta), then y[i] = e[i] * (1 / sum): bit for bit
  // exp_sum's values and sum. In place allowed.
  void (*softmax_rows)(const float* x, float beta, float* y, int64_t rows,
                       int64_t depth) = nullptr;
};

// The fastest kernels this CPU runs (chosen once).
const VecMathKernels& GetVecMathKernels();

// The AVX2+FMA kernels, or all null when the CPU or the build lacks them.
VecMathKernels VecMathKernelsAvx2Fma();

}  // namespace kiln::cpu::nn

#endif  // KILN_PLUGINS_CPU_KERNELS_NN_VEC_MATH_H_
