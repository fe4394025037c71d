// Row primitives on int16 spans with int32 accumulation, for the integer
// kernels. Built for AVX2 and a portable baseline; the best one runs.
#ifndef KILN_PLUGINS_CPU_KERNELS_NN_INT_VEC_H_
#define KILN_PLUGINS_CPU_KERNELS_NN_INT_VEC_H_

#include <cstdint>

namespace kiln::cpu::nn {

// acc[i] += x[i] * w[i] for i < n (int32 sums wrap).
void MulAccInt16(int32_t* acc, const int16_t* x, const int16_t* w, int32_t n);

}  // namespace kiln::cpu::nn

#endif  // KILN_PLUGINS_CPU_KERNELS_NN_INT_VEC_H_
