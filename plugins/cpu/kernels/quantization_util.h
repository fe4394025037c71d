// Fixed-point requantization helpers with the exact integer arithmetic of
// TFLite's quantized kernels (gemmlowp-style rounding doubling high multiply
// and rounding right shift), so integer outputs match LiteRT bit for bit.
#ifndef KILN_PLUGINS_CPU_KERNELS_QUANTIZATION_UTIL_H_
#define KILN_PLUGINS_CPU_KERNELS_QUANTIZATION_UTIL_H_

#include <cstdint>
#include <limits>

#include "kiln/kiln_extension.h"

namespace kiln::cpu {

// A real multiplier m represented as m ~= multiplier * 2^(shift - 31), with
// multiplier in [2^30, 2^31) (0 for m == 0).
struct QuantizedMultiplier {
  int32_t multiplier = 0;
  int32_t shift = 0;  // > 0 multiplies by 2^shift, < 0 divides
};

// Splits a non-negative `real_multiplier` into a Q31 significand and a
// power-of-two exponent, rounding the significand half away from zero.
// Multipliers below 2^-32 become 0; above 2^30 they saturate.
QuantizedMultiplier QuantizeMultiplier(double real_multiplier);

// round((a * b) / 2^31), saturating the single overflow case
// (INT32_MIN * INT32_MIN).
inline int32_t SaturatingRoundingDoublingHighMul(int32_t a, int32_t b) {
  if (a == b && a == std::numeric_limits<int32_t>::min()) {
    return std::numeric_limits<int32_t>::max();
  }
  const int64_t product = static_cast<int64_t>(a) * static_cast<int64_t>(b);
  const int64_t nudge =
      product >= 0 ? (int64_t{1} << 30) : (int64_t{1} - (int64_t{1} << 30));
  return static_cast<int32_t>((product + nudge) / (int64_t{1} << 31));
}

// x / 2^exponent rounded to nearest, ties away from zero; exponent in
// [0, 31].
inline int32_t RoundingDivideByPOT(int32_t x, int32_t exponent) {
  const int32_t mask = static_cast<int32_t>((int64_t{1} << exponent) - 1);
  const int32_t remainder = x & mask;
  const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

// x * m for the m that `q` encodes (any sign of q.shift), as TFLite's
// MultiplyByQuantizedMultiplier.
inline int32_t MultiplyByQuantizedMultiplier(int32_t x,
                                             const QuantizedMultiplier& q) {
  const int32_t left_shift = q.shift > 0 ? q.shift : 0;
  const int32_t right_shift = q.shift > 0 ? 0 : -q.shift;
  const int32_t shifted = static_cast<int32_t>(
      static_cast<uint32_t>(x) << static_cast<uint32_t>(left_shift));
  return RoundingDivideByPOT(
      SaturatingRoundingDoublingHighMul(shifted, q.multiplier), right_shift);
}

// x * m for a multiplier m < 1 (q.shift <= 0), as TFLite's
// MultiplyByQuantizedMultiplierSmallerThanOneExp.
inline int32_t MultiplyByQuantizedMultiplierSmallerThanOne(
    int32_t x, const QuantizedMultiplier& q) {
  return RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(x, q.multiplier),
                             -q.shift);
}

// The quantized clamp range [*lo, *hi] of a clamp activation (NONE, RELU,
// RELU_N1_TO_1, RELU6) on an output of integer range [qmin, qmax] with the
// given scale and zero point, as TFLite's CalculateActivationRangeQuantized
// (bounds quantized with round-half-away, then intersected with the type
// range). False, leaving the bounds untouched, for other activations.
bool QuantizedActivationRange(int64_t activation, float scale,
                              int32_t zero_point, int32_t qmin, int32_t qmax,
                              int32_t* lo, int32_t* hi);

}  // namespace kiln::cpu

#endif  // KILN_PLUGINS_CPU_KERNELS_QUANTIZATION_UTIL_H_
