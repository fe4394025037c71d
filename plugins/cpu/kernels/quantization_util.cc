#include "kernels/quantization_util.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln::cpu {

QuantizedMultiplier QuantizeMultiplier(double real_multiplier) {
  QuantizedMultiplier q;
  if (real_multiplier == 0.0) return q;
  int exponent = 0;
  const double significand = std::frexp(real_multiplier, &exponent);
  int64_t fixed = static_cast<int64_t>(
      std::round(significand * static_cast<double>(int64_t{1} << 31)));
  if (fixed == (int64_t{1} << 31)) {
    fixed /= 2;
    ++exponent;
  }
  if (exponent < -31) {
    exponent = 0;
    fixed = 0;
  }
  if (exponent > 30) {
    exponent = 30;
    fixed = (int64_t{1} << 31) - 1;
  }
  q.multiplier = static_cast<int32_t>(fixed);
  q.shift = exponent;
  return q;
}

namespace {

// zero_point + round(real / scale), computed in float as TFLite does; false
// when the rounded quotient does not fit int32.
bool QuantizeBound(float real, float scale, int32_t zero_point, int32_t* q) {
  const float rounded = std::round(real / scale);
  if (!(rounded >= static_cast<float>(std::numeric_limits<int32_t>::min()) &&
        rounded <= static_cast<float>(std::numeric_limits<int32_t>::max()))) {
    return false;
  }
  *q = zero_point + static_cast<int32_t>(rounded);
  return true;
}

}  // namespace

bool QuantizedActivationBounds(int64_t activation, float scale,
                               int32_t zero_point, int32_t qmin, int32_t qmax,
                               int32_t* lo, int32_t* hi) {
  float real_lo = 0.f, real_hi = 0.f;
  bool has_hi = false;
  switch (activation) {
    case KILN_ACTIVATION_RELU:
      break;
    case KILN_ACTIVATION_RELU6:
      real_hi = 6.f;
      has_hi = true;
      break;
    case KILN_ACTIVATION_RELU_N1_TO_1:
      real_lo = -1.f;
      real_hi = 1.f;
      has_hi = true;
      break;
    default:
      *lo = qmin;
      *hi = qmax;
      return true;
  }
  int32_t q_lo = 0, q_hi = qmax;
  if (!QuantizeBound(real_lo, scale, zero_point, &q_lo)) return false;
  if (has_hi && !QuantizeBound(real_hi, scale, zero_point, &q_hi)) {
    return false;
  }
  *lo = std::max(qmin, q_lo);
  *hi = std::min(qmax, q_hi);
  return true;
}

bool QuantizedActivationRange(int64_t activation, float scale,
                              int32_t zero_point, int32_t qmin, int32_t qmax,
                              int32_t* lo, int32_t* hi) {
  if (activation != KILN_ACTIVATION_NONE &&
      activation != KILN_ACTIVATION_RELU &&
      activation != KILN_ACTIVATION_RELU6 &&
      activation != KILN_ACTIVATION_RELU_N1_TO_1) {
    return false;
  }
  return QuantizedActivationBounds(activation, scale, zero_point, qmin, qmax,
                                   lo, hi);
}

Fixed32<0> ExpOnIntervalBetweenNegativeOneQuarterAnd0Excl(Fixed32<0> a) {
  using F = Fixed32<0>;
  const F exp_minus_one_eighth = F::FromRaw(1895147668);
  const F one_third = F::FromRaw(715827883);
  // Taylor expansion around -1/8: x = a + 1/8.
  const F x = a + F::ConstantPOT<-3>();
  const F x2 = x * x;
  const F x3 = x2 * x;
  const F x4 = x2 * x2;
  const F x4_over_4 = F::FromRaw(SaturatingRoundingMultiplyByPOT<-2>(x4.raw));
  const F x4_over_24_plus_x3_over_6_plus_x2_over_2 =
      F::FromRaw(SaturatingRoundingMultiplyByPOT<-1>(
          (((x4_over_4 + x3) * one_third) + x2).raw));
  return exp_minus_one_eighth +
         exp_minus_one_eighth * (x + x4_over_24_plus_x3_over_6_plus_x2_over_2);
}

Fixed32<0> OneOverOnePlusXForXIn01(Fixed32<0> a) {
  using F0 = Fixed32<0>;
  using F2 = Fixed32<2>;
  const F0 half_denominator =
      F0::FromRaw(RoundingHalfSum(a.raw, F0::One().raw));
  const F2 constant_48_over_17 = F2::FromRaw(1515870810);
  const F2 constant_neg_32_over_17 = F2::FromRaw(-1010580540);
  F2 x = constant_48_over_17 + half_denominator * constant_neg_32_over_17;
  for (int i = 0; i < 3; ++i) {
    const F2 half_denominator_times_x = half_denominator * x;
    const F2 one_minus_half_denominator_times_x =
        F2::One() - half_denominator_times_x;
    x = x + Rescale<2>(x * one_minus_half_denominator_times_x);
  }
  // x / 2 exactly (the same raw value read with one integer bit), then
  // back to Q0.31.
  return Rescale<0>(Fixed32<1>::FromRaw(x.raw));
}

int32_t GetReciprocal(int32_t x, int x_integer_digits,
                      int* num_bits_over_unit) {
  const int headroom_plus_one =
      x == 0 ? 32 : __builtin_clz(static_cast<uint32_t>(x));
  *num_bits_over_unit = x_integer_digits - headroom_plus_one;
  const int32_t shifted_minus_one = static_cast<int32_t>(
      (static_cast<uint32_t>(x) << headroom_plus_one) - (uint32_t{1} << 31));
  return OneOverOnePlusXForXIn01(Fixed32<0>::FromRaw(shifted_minus_one)).raw;
}

bool PreprocessSoftmaxScaling(double beta, double input_scale,
                              int input_integer_bits, QuantizedMultiplier* q) {
  const double real = std::min(
      beta * input_scale * static_cast<double>(1 << (31 - input_integer_bits)),
      static_cast<double>((int64_t{1} << 31) - 1));
  if (!(real > 1.0)) return false;
  *q = QuantizeMultiplier(real);
  return q->shift >= 0;
}

int CalculateInputRadius(int input_integer_bits, int input_left_shift) {
  const double max_input_rescaled =
      1.0 * ((1 << input_integer_bits) - 1) *
      static_cast<double>(int64_t{1} << (31 - input_integer_bits)) /
      static_cast<double>(int64_t{1} << input_left_shift);
  return static_cast<int>(std::floor(max_input_rescaled));
}

void PopulateInt16Lut(double input_scale, int32_t input_zero_point,
                      double output_scale, int32_t output_zero_point,
                      double (*f)(double), int16_t* lut) {
  constexpr int kSteps = 512;
  const double input_min = input_scale * (-32768 - input_zero_point);
  const double input_max = input_scale * (32767 - input_zero_point);
  const double output_min = output_scale * (-32768 - output_zero_point);
  const double output_max = output_scale * (32767 - output_zero_point);
  const double step = (input_max - input_min) / kSteps;
  const double half_step = step / 2;
  const double scaling_inv = 65536.0 / (output_max - output_min);
  const auto saturate = [](double v) {
    return static_cast<int16_t>(std::min(std::max(v, -32768.0), 32767.0));
  };
  for (int i = 0; i < kSteps; ++i) {
    const double val = f(input_min + i * step);
    const double val_midpoint = f(input_min + i * step + half_step);
    const double val_next = f(input_min + (i + 1) * step);
    const double sample = std::round(val * scaling_inv);
    const double midpoint_interp = std::round(
        (val_next * scaling_inv + std::round(val * scaling_inv)) / 2);
    const double midpoint = std::round(val_midpoint * scaling_inv);
    const double bias = std::round((midpoint_interp - midpoint) / 2);
    lut[i] = saturate(sample - bias);
  }
  lut[kSteps] = saturate(std::round(f(input_max) * scaling_inv));
}

QuantizedMultiplier InvSqrtQuantizedMultiplier(int32_t input,
                                               int32_t reverse_shift) {
  QuantizedMultiplier q;
  if (input <= 1) {
    q.multiplier = std::numeric_limits<int32_t>::max();
    q.shift = 0;
    return q;
  }
  int32_t shift = 11;
  while (input >= (1 << 29)) {
    input /= 4;
    ++shift;
  }
  // Normalise input into [2^27, 2^29) by an even left shift.
  const int32_t max_left_shift_bits =
      __builtin_clz(static_cast<uint32_t>(input)) - 1;
  const int32_t left_shift_bit_pairs = max_left_shift_bits / 2 - 1;
  shift -= left_shift_bit_pairs;
  input <<= 2 * left_shift_bit_pairs;
  using F3 = Fixed32<3>;
  const F3 fixed_input = F3::FromRaw(input >> 1);
  const F3 half_input =
      F3::FromRaw(SaturatingRoundingMultiplyByPOT<-1>(fixed_input.raw));
  const F3 three_halves = F3::FromRaw((1 << 28) + (1 << 27));
  F3 x = F3::One();
  for (int i = 0; i < 5; ++i) {
    const F3 x3 = Rescale<3>(x * x * x);
    x = Rescale<3>(three_halves * x - half_input * x3);
  }
  const Fixed32<0> half_sqrt2 = Fixed32<0>::FromRaw(1518500250);  // sqrt(2)/2
  x = x * half_sqrt2;
  q.multiplier = x.raw;
  if (shift < 0) {
    q.multiplier =
        static_cast<int32_t>(static_cast<uint32_t>(q.multiplier) << -shift);
    shift = 0;
  }
  q.shift = shift * reverse_shift;
  return q;
}

bool CheckedLog2(float x, int32_t* log2_result) {
  const float x_log2 = std::log(x) * (1.0f / std::log(2.0f));
  const float x_log2_rounded = std::round(x_log2);
  *log2_result = static_cast<int32_t>(x_log2_rounded);
  return std::abs(x_log2 - x_log2_rounded) < 1e-3f;
}

}  // namespace kiln::cpu
