// Vector pieces of QuantizeHybridRow (hybrid.cc): the row's range and the
// rounding of its blocks of eight, as LiteRT's x86 build computes them.
#ifndef KILN_PLUGINS_CPU_KERNELS_NN_HYBRID_QUANTIZE_H_
#define KILN_PLUGINS_CPU_KERNELS_NN_HYBRID_QUANTIZE_H_

#include <cstdint>

namespace kiln::cpu::nn {

struct HybridQuantizeKernels {
  // Folds x[0, n) into *lo = min(*lo, x[i]) and *hi = max(*hi, x[i]) (a NaN
  // x[i] leaves them as they are, as std::min / std::max do).
  void (*min_max)(const float* x, int32_t n, float* lo, float* hi) = nullptr;
  // q[i] = clamp(trunc(inv * x[i] +- 0.5) + zero_point, qmin, 127) for
  // i < n, n a multiple of 8 (the sign of the 0.5 that of inv * x[i]).
  void (*round_blocks)(const float* x, int32_t n, float inv, int32_t zero_point,
                       int32_t qmin, int8_t* q) = nullptr;
};

// The AVX2 kernels, or all null when the CPU or the build lacks AVX2.
HybridQuantizeKernels HybridQuantizeKernelsAvx2();

}  // namespace kiln::cpu::nn

#endif  // KILN_PLUGINS_CPU_KERNELS_NN_HYBRID_QUANTIZE_H_
