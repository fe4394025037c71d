// Per-channel requantization of rows of int32 accumulators, vectorized
// where the CPU allows: the epilogue of the integer CONV_2D,
// FULLY_CONNECTED and DEPTHWISE_CONV_2D kernels.
#ifndef KILN_PLUGINS_CPU_KERNELS_NN_REQUANTIZE_H_
#define KILN_PLUGINS_CPU_KERNELS_NN_REQUANTIZE_H_

#include <cstdint>

#include "kernels/nn/quantized_common.h"

namespace kiln::cpu::nn {

// True when RequantizeRows applies to `q`: int32 accumulators scaled by
// fixed-point multipliers or, with requant_in_double, by the real ones in
// double (not wide_accumulator: the int8 and uint8 schemes).
inline bool RowRequantApplies(const ChannelRequant& q) {
  return !q.wide_accumulator;
}

// out[r * ldo + c] = RequantizeChannel(acc[r * n + c] + bias[c], c, q) for
// r < rows and c < n, bit for bit (the int32 addition wraps); `bias` may be
// null (zero). Requires RowRequantApplies(q) and q.lanes filled
// (PrepareChannelRequant does both).
template <typename T>
void RequantizeRows(const int32_t* acc, int32_t rows, int32_t n,
                    const int32_t* bias, const ChannelRequant& q, T* out,
                    int64_t ldo);

// One row of RequantizeRows for channels [0, count) with count a multiple
// of 8, in AVX2; `out` is int8_t or uint8_t as the member's name says.
struct RequantRowArgs {
  const int32_t* acc;
  const int32_t* bias;  // may be null
  int32_t count;
  const RequantLanes* lanes;
  int32_t offset, act_min, act_max;
  // requant_in_double: the real multipliers (`lanes` unused); else null.
  const double* real_multipliers = nullptr;
};
struct RequantRowKernels {
  void (*int8)(const RequantRowArgs&, int8_t*) = nullptr;
  void (*uint8)(const RequantRowArgs&, uint8_t*) = nullptr;
};
// The AVX2 kernels, or all null when the CPU or the build lacks AVX2.
RequantRowKernels RequantRowKernelsAvx2();

}  // namespace kiln::cpu::nn

#endif  // KILN_PLUGINS_CPU_KERNELS_NN_REQUANTIZE_H_
