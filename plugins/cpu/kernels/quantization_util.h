// Fixed-point requantization helpers with the exact integer arithmetic of
// TFLite's quantized kernels (gemmlowp-style rounding doubling high multiply
// and rounding right shift), so integer outputs match LiteRT bit for bit.
#ifndef KILN_PLUGINS_CPU_KERNELS_QUANTIZATION_UTIL_H_
#define KILN_PLUGINS_CPU_KERNELS_QUANTIZATION_UTIL_H_

#include <algorithm>
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

// x * m for a 64-bit accumulator (int16 activations), as TFLite's
// MultiplyByQuantizedMultiplier(int64_t, ...): the multiplier is first
// rounded to 16 significant bits, then one rounding shift. Requires
// q.shift < 8 and |x| < 2^47 (what TFLite's kernels guarantee).
inline int32_t MultiplyByQuantizedMultiplier(int64_t x,
                                             const QuantizedMultiplier& q) {
  const int32_t reduced =
      q.multiplier < 0x7FFF0000 ? ((q.multiplier + (1 << 15)) >> 16) : 0x7FFF;
  const int32_t total_shift = 15 - q.shift;
  const int64_t rounded =
      x * static_cast<int64_t>(reduced) + (int64_t{1} << (total_shift - 1));
  return static_cast<int32_t>(rounded >> total_shift);
}

// x * m for a multiplier m >= 1 (q.shift >= 0), as TFLite's
// MultiplyByQuantizedMultiplierGreaterThanOne (the shift wraps like its
// int32 arithmetic).
inline int32_t MultiplyByQuantizedMultiplierGreaterThanOne(
    int32_t x, const QuantizedMultiplier& q) {
  return SaturatingRoundingDoublingHighMul(
      static_cast<int32_t>(static_cast<uint32_t>(x) << q.shift), q.multiplier);
}

// x * m for a multiplier m < 1 (q.shift <= 0), as TFLite's
// MultiplyByQuantizedMultiplierSmallerThanOneExp.
inline int32_t MultiplyByQuantizedMultiplierSmallerThanOne(
    int32_t x, const QuantizedMultiplier& q) {
  return RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(x, q.multiplier),
                             -q.shift);
}

// ---- Fixed-point math with gemmlowp's exact semantics ----------------------
// (TFLite's integer softmax, log-softmax and normalisations are built on it.)

// x * 2^kExponent: saturating for kExponent > 0, rounding to nearest (ties
// away from zero) for kExponent < 0.
template <int kExponent>
int32_t SaturatingRoundingMultiplyByPOT(int32_t x) {
  if constexpr (kExponent > 0) {
    constexpr int32_t kThreshold = (int32_t{1} << (31 - kExponent)) - 1;
    if (x > kThreshold) return std::numeric_limits<int32_t>::max();
    if (x < -kThreshold) return std::numeric_limits<int32_t>::min();
    return static_cast<int32_t>(static_cast<uint32_t>(x) << kExponent);
  } else if constexpr (kExponent < 0) {
    return RoundingDivideByPOT(x, -kExponent);
  } else {
    return x;
  }
}

// A signed fixed-point number with kIntegerBits integer bits and
// 31 - kIntegerBits fractional bits in an int32 (gemmlowp's
// FixedPoint<int32_t, kIntegerBits>). Addition and subtraction wrap.
template <int kIntegerBits>
struct Fixed32 {
  static_assert(kIntegerBits >= 0 && kIntegerBits < 32, "bad integer bits");
  static constexpr int kFractionalBits = 31 - kIntegerBits;
  int32_t raw = 0;

  static Fixed32 FromRaw(int32_t r) { return Fixed32{r}; }
  // The largest value below 1 when there are no integer bits.
  static Fixed32 One() {
    return FromRaw(kIntegerBits == 0 ? std::numeric_limits<int32_t>::max()
                                     : int32_t{1} << kFractionalBits);
  }
  template <int kExponent>
  static Fixed32 ConstantPOT() {
    static_assert(kFractionalBits + kExponent < 31, "not representable");
    return FromRaw(int32_t{1} << (kFractionalBits + kExponent));
  }
  friend Fixed32 operator+(Fixed32 a, Fixed32 b) {
    return FromRaw(static_cast<int32_t>(static_cast<uint32_t>(a.raw) +
                                        static_cast<uint32_t>(b.raw)));
  }
  friend Fixed32 operator-(Fixed32 a, Fixed32 b) {
    return FromRaw(static_cast<int32_t>(static_cast<uint32_t>(a.raw) -
                                        static_cast<uint32_t>(b.raw)));
  }
};

template <int kA, int kB>
Fixed32<kA + kB> operator*(Fixed32<kA> a, Fixed32<kB> b) {
  return Fixed32<kA + kB>::FromRaw(
      SaturatingRoundingDoublingHighMul(a.raw, b.raw));
}

// The same value with kDst integer bits (saturating / rounding).
template <int kDst, int kSrc>
Fixed32<kDst> Rescale(Fixed32<kSrc> x) {
  return Fixed32<kDst>::FromRaw(
      SaturatingRoundingMultiplyByPOT<kSrc - kDst>(x.raw));
}

// (a + b) / 2 rounded to nearest, ties away from zero.
inline int32_t RoundingHalfSum(int32_t a, int32_t b) {
  const int64_t sum = static_cast<int64_t>(a) + b;
  return static_cast<int32_t>((sum + (sum >= 0 ? 1 : -1)) / 2);
}

// exp(a) for a in [-1/4, 0).
Fixed32<0> ExpOnIntervalBetweenNegativeOneQuarterAnd0Excl(Fixed32<0> a);

// exp(a) for a <= 0 (1 for a == 0; 0 below -32 when kIntegerBits > 5).
template <int kIntegerBits>
Fixed32<0> ExpOnNegativeValues(Fixed32<kIntegerBits> a) {
  using In = Fixed32<kIntegerBits>;
  constexpr int kFractionalBits = In::kFractionalBits;
  const In one_quarter = In::template ConstantPOT<-2>();
  const In mask = one_quarter - In::FromRaw(1);
  const In a_mod_quarter_minus_one_quarter =
      In::FromRaw(a.raw & mask.raw) - one_quarter;
  Fixed32<0> result = ExpOnIntervalBetweenNegativeOneQuarterAnd0Excl(
      Rescale<0>(a_mod_quarter_minus_one_quarter));
  const int32_t remainder = (a_mod_quarter_minus_one_quarter - a).raw;
  // exp(-2^e) in Q0.31 for e = -2..4: multiply in the factor of every power
  // of two present in the remainder.
  constexpr int32_t kFactors[] = {1672461947, 1302514674, 790015084, 290630308,
                                  39332535,   720401,     242};
  for (int e = -2; e <= 4; ++e) {
    if (kIntegerBits > e) {
      const int shift = kFractionalBits + e;
      if ((remainder & (int32_t{1} << shift)) != 0) {
        result = result * Fixed32<0>::FromRaw(kFactors[e + 2]);
      }
    }
  }
  if constexpr (kIntegerBits > 5) {
    constexpr int kClampShift = 36 - kIntegerBits;
    if (a.raw < -(int32_t{1} << kClampShift)) result = Fixed32<0>::FromRaw(0);
  }
  if (a.raw == 0) result = Fixed32<0>::One();
  return result;
}

// 1 / (1 + a) for a in [0, 1) (Newton-Raphson, three iterations).
Fixed32<0> OneOverOnePlusXForXIn01(Fixed32<0> a);

// x * 2^exponent for exponent >= 0, saturated to int32 (TFLite's
// SaturatingRoundingMultiplyByPOTParam on non-negative exponents).
inline int32_t SaturatingShiftLeft(int32_t x, int exponent) {
  if (exponent == 0) return x;
  const int32_t threshold = (int32_t{1} << (31 - exponent)) - 1;
  if (x > threshold) return std::numeric_limits<int32_t>::max();
  if (x < -threshold) return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(static_cast<uint32_t>(x) << exponent);
}

// a + b and a - b saturated to int32.
inline int32_t SaturatingAdd32(int32_t a, int32_t b) {
  const int64_t r = static_cast<int64_t>(a) + b;
  return static_cast<int32_t>(
      std::min<int64_t>(std::max<int64_t>(r, INT32_MIN), INT32_MAX));
}
inline int32_t SaturatingSub32(int32_t a, int32_t b) {
  const int64_t r = static_cast<int64_t>(a) - b;
  return static_cast<int32_t>(
      std::min<int64_t>(std::max<int64_t>(r, INT32_MIN), INT32_MAX));
}

// Leading zero bits of x; 32 for 0.
inline int CountLeadingZeros32(uint32_t x) {
  return x == 0 ? 32 : __builtin_clz(x);
}

// TFLite's log_x_for_x_greater_than_or_equal_to_1: log(x) in fixed point
// (a rational approximation on the mantissa plus the exponent times log 2).
template <int kOut, int kIn>
Fixed32<kOut> LogXForXGreaterThanOrEqualTo1(Fixed32<kIn> input) {
  constexpr int kAccum = kOut + 1;  // headroom for z * log(2)
  using F0 = Fixed32<0>;
  using FA = Fixed32<kAccum>;
  const F0 log_2 = F0::FromRaw(1488522236);
  const F0 sqrt_sqrt_half = F0::FromRaw(1805811301);
  const F0 sqrt_half = F0::FromRaw(1518500250);
  const F0 alpha_n = F0::FromRaw(117049297);
  const F0 alpha_d = F0::FromRaw(127690142);
  const F0 alpha_i = F0::FromRaw(1057819769);
  const F0 alpha_f = F0::FromRaw(638450708);
  const FA shifted_quarter = Rescale<kAccum>(F0::FromRaw(536870912));
  const F0 z_a = F0::FromRaw(input.raw);
  const int z_a_headroom_plus_1 =
      CountLeadingZeros32(static_cast<uint32_t>(z_a.raw));
  const F0 r_a_tmp =
      F0::FromRaw(SaturatingShiftLeft(z_a.raw, z_a_headroom_plus_1 - 1));
  const int32_t r_a_raw = SaturatingShiftLeft((r_a_tmp * sqrt_half).raw, 1);
  const FA z_a_pow_2_adj = FA::FromRaw(SaturatingAdd32(
      SaturatingShiftLeft(kIn - z_a_headroom_plus_1, 31 - kAccum),
      shifted_quarter.raw));
  const F0 z_b = z_a * sqrt_half;
  const int z_b_headroom =
      CountLeadingZeros32(static_cast<uint32_t>(z_b.raw)) - 1;
  const int32_t r_b_raw = SaturatingShiftLeft(z_a.raw, z_b_headroom);
  const FA z_b_pow_2_adj = FA::FromRaw(
      SaturatingSub32(SaturatingShiftLeft(kIn - z_b_headroom, 31 - kAccum),
                      shifted_quarter.raw));
  const F0 r = F0::FromRaw(std::min(r_a_raw, r_b_raw));
  const FA z_pow_2_adj =
      FA::FromRaw(std::max(z_a_pow_2_adj.raw, z_b_pow_2_adj.raw));
  const F0 p = F0::FromRaw(RoundingHalfSum(r.raw, sqrt_sqrt_half.raw));
  F0 q = r - sqrt_sqrt_half;
  q = q + q;
  const F0 common_sq = q * q;
  const F0 num = q * r + q * common_sq * alpha_n;
  const F0 denom_minus_one =
      p * (alpha_i + q + alpha_d * common_sq) + alpha_f * q;
  const F0 recip_denom = OneOverOnePlusXForXIn01(denom_minus_one);
  const FA num_scaled = Rescale<kAccum>(num);
  return Rescale<kOut>(z_pow_2_adj * log_2 + num_scaled * recip_denom);
}

// TFLite's GetReciprocal: for x a positive fixed-point value with
// x_integer_digits integer bits, returns s in Q0.31 and *num_bits_over_unit
// such that 1/x = s * 2^-num_bits_over_unit.
int32_t GetReciprocal(int32_t x, int x_integer_digits, int* num_bits_over_unit);

// TFLite's PreprocessSoftmaxScaling: the multiplier (>= 1) that maps an
// input difference to Q(input_integer_bits).(31 - input_integer_bits),
// min(beta * input_scale * 2^(31 - input_integer_bits), 2^31 - 1). False
// when that multiplier is not above 1 (TFLite aborts on such a model).
bool PreprocessSoftmaxScaling(double beta, double input_scale,
                              int input_integer_bits, QuantizedMultiplier* q);

// TFLite's CalculateInputRadius: the largest input difference that does not
// overflow once scaled by a multiplier with `input_left_shift`.
int CalculateInputRadius(int input_integer_bits, int input_left_shift);

// A 513-entry int16 lookup table of f, as TFLite's LUTPopulate<int16_t>
// (the double-precision overload): entry i samples f at input
// input_scale * (-32768 + i * 128 - input_zero_point), corrected by half
// the interpolation error at the midpoint; values in the output
// quantization (output_scale, output_zero_point), saturated to int16.
void PopulateInt16Lut(double input_scale, int32_t input_zero_point,
                      double output_scale, int32_t output_zero_point,
                      double (*f)(double), int16_t* lut);

// Interpolated lookup in a table from PopulateInt16Lut (TFLite's
// LUTLookup): the top 9 bits index, the low 7 interpolate.
inline int16_t Int16LutLookup(int16_t value, const int16_t* lut) {
  const int index = 256 + (value >> 7);
  const int offset = value & 0x7f;
  const int base = lut[index];
  const int slope = lut[index + 1] - lut[index];
  return static_cast<int16_t>(base + ((slope * offset + 64) >> 7));
}

// TFLite's GetInvSqrtQuantizedMultiplierExp: 1/sqrt(input) for a positive
// fixed-point `input` as a Q31 multiplier and shift (Newton-Raphson in
// gemmlowp fixed point, five iterations), the shift multiplied by
// `reverse_shift` (-1: a left shift as QuantizedMultiplier expects). Inputs
// 0 and 1 give (INT32_MAX, 0), as TFLite treats them.
QuantizedMultiplier InvSqrtQuantizedMultiplier(int32_t input,
                                               int32_t reverse_shift);

// TFLite's CheckedLog2: true when `x` is a power of two within 1e-3 in log2
// (float arithmetic); *log2_result = round(log2(x)) either way.
bool CheckedLog2(float x, int32_t* log2_result);

// A float-to-int32 conversion as the x86-64 builds of LiteRT perform it with
// static_cast: truncation toward zero, and INT32_MIN for NaN and for values
// outside int32 (the "integer indefinite" of cvttss2si).
inline int32_t TruncateToInt32LikeX86(double v) {
  return v > -2147483649.0 && v < 2147483648.0
             ? static_cast<int32_t>(v)
             : std::numeric_limits<int32_t>::min();
}

// The quantized output range [*lo, *hi] of a fused activation, exactly as
// TFLite's CalculateActivationRangeQuantized: RELU, RELU6 and RELU_N1_TO_1
// clamp (bounds computed in float, rounded half away from zero, intersected
// with [qmin, qmax]); NONE, TANH, SIGN_BIT and unknown values leave
// [qmin, qmax] (TFLite's quantized kernels ignore non-clamp activations).
// Returns false, leaving the bounds untouched, when a bound does not fit
// int32 (TFLite then refuses the node: "no_integer_overflow_from_
// quantization"), e.g. RELU6 on an output scale below 6 / 2^31.
bool QuantizedActivationBounds(int64_t activation, float scale,
                               int32_t zero_point, int32_t qmin, int32_t qmax,
                               int32_t* lo, int32_t* hi);

// The quantized clamp range [*lo, *hi] of a clamp activation (NONE, RELU,
// RELU_N1_TO_1, RELU6) on an output of integer range [qmin, qmax] with the
// given scale and zero point, as TFLite's CalculateActivationRangeQuantized
// (bounds quantized with round-half-away, then intersected with the type
// range). False, leaving the bounds untouched, for other activations and
// when a bound overflows int32 (see QuantizedActivationBounds).
bool QuantizedActivationRange(int64_t activation, float scale,
                              int32_t zero_point, int32_t qmin, int32_t qmax,
                              int32_t* lo, int32_t* hi);

}  // namespace kiln::cpu

#endif  // KILN_PLUGINS_CPU_KERNELS_QUANTIZATION_UTIL_H_
