// Per-node lookup tables for TFLite's 8-bit fixed-point SOFTMAX and
// LOG_SOFTMAX. With int8 / uint8 input, an element's difference to its row
// maximum is one of the 256 values -255..0, and every per-element step of
// TFLite's reference kernels before the row sum (rescaling the difference,
// gemmlowp's exp_on_negative_values, rescaling to the sum's format) depends
// on that difference alone. Tabulating them once in prepare, with exactly
// the fixed-point functions the kernels used per element, turns those steps
// into one load and leaves the outputs bit-identical.
//
// Differences below diff_min (which TFLite skips in the sum and outputs as
// the type's minimum) get 0 in the exp tables: adding 0 to the sum changes
// nothing, and 0 times the row's reciprocal rounds to 0, i.e. the minimum.
// The zeros are needed: below diff_min the rescaled difference no longer
// fits Q5.26 (the shift wraps), and the exp computed from it is not 0.
#ifndef KILN_PLUGINS_CPU_KERNELS_NN_SOFTMAX_EXP_TABLE_H_
#define KILN_PLUGINS_CPU_KERNELS_NN_SOFTMAX_EXP_TABLE_H_

#include <cstdint>
#include <vector>

#include "kernels/quantization_util.h"

namespace kiln::cpu::nn {

// The largest 8-bit input difference magnitude: tables hold the difference
// d in [-255, 0] at index kSoftmaxMaxDiff + d.
inline constexpr int32_t kSoftmaxMaxDiff = 255;
inline constexpr int kSoftmaxTableSize = kSoftmaxMaxDiff + 1;
// TFLite's fixed-point formats: scaled differences in Q5.26, sums in Q12.19.
inline constexpr int kSoftmaxScaledDiffIntegerBits = 5;
inline constexpr int kSoftmaxAccumulationIntegerBits = 12;

// TFLite's Softmax (8-bit input): `exp` gets
// ExpOnNegativeValues(MultiplyByQuantizedMultiplierGreaterThanOne(d, m)) in
// Q0.31 and `exp_accum` the same rescaled to Q12.19, both 0 for d below
// `diff_min`.
void FillSoftmaxExpTables(const QuantizedMultiplier& m, int32_t diff_min,
                          std::vector<int32_t>* exp,
                          std::vector<int32_t>* exp_accum);

// TFLite's LogSoftmax (8-bit input): `scaled` gets
// MultiplyByQuantizedMultiplier(d, m) (Q5.26) for every d, and `exp_accum`
// ExpOnNegativeValues of it rescaled to Q12.19, 0 for d below `diff_min`.
void FillLogSoftmaxTables(const QuantizedMultiplier& m, int32_t diff_min,
                          std::vector<int32_t>* scaled,
                          std::vector<int32_t>* exp_accum);

}  // namespace kiln::cpu::nn

#endif  // KILN_PLUGINS_CPU_KERNELS_NN_SOFTMAX_EXP_TABLE_H_
