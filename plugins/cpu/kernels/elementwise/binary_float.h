// AVX2 row kernels of the float32 binary arithmetic ops (ADD SUB MUL DIV
// SQUARED_DIFFERENCE MAXIMUM MINIMUM), selected at run time. Each lane
// computes exactly the scalar expression of binary_arithmetic.cc (one IEEE
// operation per step, no FMA, no reassociation), so the results are bit for
// bit those of the portable loops.
#ifndef KILN_PLUGINS_CPU_KERNELS_ELEMENTWISE_BINARY_FLOAT_H_
#define KILN_PLUGINS_CPU_KERNELS_ELEMENTWISE_BINARY_FLOAT_H_

#include <cstdint>

namespace kiln::cpu::elementwise {

enum class FloatBinaryOp {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kSquaredDifference,  // (x - y)^2
  kMaximum,            // x > y ? x : y
  kMinimum,            // x < y ? x : y
};

// out[i] = op(a[i * sa], b[i * sb]) for i in [0, n), with sa and sb each 0
// (a broadcast value) or 1 (a row).
using FloatBinaryRow = void (*)(const float* a, int64_t sa, const float* b,
                                int64_t sb, float* out, int64_t n);

// The AVX2 row kernel of `op`, or null when the CPU or the build lacks AVX2.
FloatBinaryRow FloatBinaryRowAvx2(FloatBinaryOp op);

}  // namespace kiln::cpu::elementwise

#endif  // KILN_PLUGINS_CPU_KERNELS_ELEMENTWISE_BINARY_FLOAT_H_
