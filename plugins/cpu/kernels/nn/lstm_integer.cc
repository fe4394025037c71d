// Full-integer LSTM (see lstm_integer.h). Written from the semantics of
// TFLite's lstm.cc / unidirectional_sequence_lstm.cc (prepare) and
// lstm_eval.cc with the portable tensor utilities (the step), which are
// what LiteRT's reference kernels run on x86-64.
#include "kernels/nn/lstm_integer.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace kiln::cpu::nn {
namespace {

// ---- gemmlowp's FixedPoint<int16_t, N> -------------------------------------
// Raw int16 values; additions and negations wrap as gemmlowp's int16
// arithmetic does, multiplications are the rounding doubling high multiply.

int16_t Wrap16(int32_t v) {
  return static_cast<int16_t>(static_cast<uint16_t>(static_cast<uint32_t>(v)));
}

int16_t SaturatingRoundingDoublingHighMul16(int16_t a, int16_t b) {
  if (a == b && a == std::numeric_limits<int16_t>::min()) {
    return std::numeric_limits<int16_t>::max();
  }
  const int32_t ab = int32_t{a} * int32_t{b};
  const int32_t nudge = ab >= 0 ? (1 << 14) : (1 - (1 << 14));
  return Wrap16((ab + nudge) / (1 << 15));
}

int16_t RoundingDivideByPOT16(int16_t x, int exponent) {
  const int16_t mask = Wrap16((1 << exponent) - 1);
  const int16_t remainder = static_cast<int16_t>(x & mask);
  const int16_t threshold = Wrap16((mask >> 1) + (x < 0 ? 1 : 0));
  return Wrap16((x >> exponent) + (remainder > threshold ? 1 : 0));
}

// x * 2^kExponent: saturating for kExponent > 0, rounding for < 0.
template <int kExponent>
int16_t SaturatingRoundingMultiplyByPOT16(int16_t x) {
  if constexpr (kExponent > 0) {
    constexpr int32_t kThreshold = (1 << (15 - kExponent)) - 1;
    if (x > kThreshold) return std::numeric_limits<int16_t>::max();
    if (x < -kThreshold) return std::numeric_limits<int16_t>::min();
    return Wrap16(int32_t{x} * (1 << kExponent));
  } else if constexpr (kExponent < 0) {
    return RoundingDivideByPOT16(x, -kExponent);
  } else {
    return x;
  }
}

// An int32 Q0.31 constant as gemmlowp rescales it to int16.
int16_t Constant16(int32_t q31) { return Wrap16(RoundingDivideByPOT(q31, 16)); }

int16_t SaturatingAdd16(int16_t a, int16_t b) {
  return static_cast<int16_t>(
      std::clamp(int32_t{a} + int32_t{b}, int32_t{-32768}, int32_t{32767}));
}

int16_t RoundingHalfSum16(int16_t a, int16_t b) {
  const int32_t sum = int32_t{a} + int32_t{b};
  return Wrap16((sum + (sum >= 0 ? 1 : -1)) / 2);
}

constexpr int16_t kQ0One = 32767;    // Q0.15 "one"
constexpr int16_t kQ2One = 1 << 13;  // Q2.13 one

// exp(a) for a in [-1/4, 0), Q0.15 in and out.
int16_t ExpOnIntervalBetweenNegativeOneQuarterAnd0Excl16(int16_t a) {
  const int16_t constant_term = Constant16(1895147668);  // exp(-1/8)
  const int16_t one_third = Constant16(715827883);
  const int16_t x = Wrap16(a + (1 << 12));  // a + 1/8
  const int16_t x2 = SaturatingRoundingDoublingHighMul16(x, x);
  const int16_t x3 = SaturatingRoundingDoublingHighMul16(x2, x);
  const int16_t x4 = SaturatingRoundingDoublingHighMul16(x2, x2);
  const int16_t x4_over_4 = SaturatingRoundingMultiplyByPOT16<-2>(x4);
  const int16_t poly = SaturatingRoundingMultiplyByPOT16<-1>(Wrap16(
      SaturatingRoundingDoublingHighMul16(Wrap16(x4_over_4 + x3), one_third) +
      x2));
  return SaturatingAdd16(constant_term, SaturatingRoundingDoublingHighMul16(
                                            constant_term, Wrap16(x + poly)));
}

// exp(a) for a <= 0 in Q(kIntegerBits), result in Q0.15.
template <int kIntegerBits>
int16_t ExpOnNegativeValues16(int16_t a) {
  constexpr int kFractionalBits = 15 - kIntegerBits;
  constexpr int16_t kOneQuarter = int16_t{1} << (kFractionalBits - 2);
  constexpr int16_t kMask = kOneQuarter - 1;
  const int16_t a_mod_quarter_minus_one_quarter =
      Wrap16((a & kMask) - kOneQuarter);
  int16_t result = ExpOnIntervalBetweenNegativeOneQuarterAnd0Excl16(
      SaturatingRoundingMultiplyByPOT16<kIntegerBits>(
          a_mod_quarter_minus_one_quarter));
  const int16_t remainder = Wrap16(a_mod_quarter_minus_one_quarter - a);
  // exp(-2^e) in Q0.31 for e = -2..4.
  constexpr int32_t kFactors[] = {1672461947, 1302514674, 790015084, 290630308,
                                  39332535,   720401,     242};
  for (int e = -2; e <= 4; ++e) {
    if (kIntegerBits > e && (remainder & (1 << (kFractionalBits + e))) != 0) {
      result = SaturatingRoundingDoublingHighMul16(result,
                                                   Constant16(kFactors[e + 2]));
    }
  }
  if constexpr (kIntegerBits > 5) {
    const int16_t clamp = Constant16(-(1 << (36 - kIntegerBits)));  // -32
    if (a < clamp) result = 0;
  }
  return a == 0 ? kQ0One : result;
}

// Newton-Raphson on 1 / (half the denominator (1 + a) / 2), a in [0, 1)
// Q0.15; returns the Q2.13 reciprocal estimate x.
int16_t HalfDenominatorReciprocal16(int16_t half_denominator) {
  const int16_t c48_over_17 = Constant16(1515870810);
  const int16_t c_neg32_over_17 = Constant16(-1010580540);
  int16_t x = Wrap16(c48_over_17 + SaturatingRoundingDoublingHighMul16(
                                       half_denominator, c_neg32_over_17));
  for (int i = 0; i < 3; ++i) {
    const int16_t half_denominator_times_x =
        SaturatingRoundingDoublingHighMul16(half_denominator, x);
    const int16_t one_minus = Wrap16(kQ2One - half_denominator_times_x);
    x = Wrap16(x + SaturatingRoundingMultiplyByPOT16<2>(
                       SaturatingRoundingDoublingHighMul16(x, one_minus)));
  }
  return x;
}

// 1 / (1 + a) for a in [0, 1), Q0.15.
int16_t OneOverOnePlusXForXIn01_16(int16_t a) {
  const int16_t x = HalfDenominatorReciprocal16(RoundingHalfSum16(a, kQ0One));
  return SaturatingRoundingMultiplyByPOT16<1>(x);  // x / 2, Q1 -> Q0
}

// (1 - a) / (1 + a) for a in [0, 1), Q0.15.
int16_t OneMinusXOverOnePlusXForXIn01_16(int16_t a) {
  const int16_t x = HalfDenominatorReciprocal16(RoundingHalfSum16(a, kQ0One));
  return SaturatingRoundingMultiplyByPOT16<2>(Wrap16(x - kQ2One));
}

// gemmlowp::tanh on FixedPoint<int16_t, kIntegerBits>, result Q0.15.
template <int kIntegerBits>
int16_t Tanh16(int16_t a) {
  if (a == 0) return 0;
  const bool negative = a < 0;
  const int16_t n = negative ? a : Wrap16(-int32_t{a});
  const int16_t t = OneMinusXOverOnePlusXForXIn01_16(
      ExpOnNegativeValues16<kIntegerBits + 1>(n));
  return negative ? Wrap16(-int32_t{t}) : t;
}

// gemmlowp::logistic on FixedPoint<int16_t, 3> (Q3.12), result Q0.15.
int16_t Sigmoid16(int16_t a) {
  if (a == 0) return Constant16(1 << 30);  // 1/2
  const bool positive = a > 0;
  const int16_t abs_a = positive ? a : Wrap16(-int32_t{a});
  const int16_t if_positive = OneOverOnePlusXForXIn01_16(
      ExpOnNegativeValues16<3>(Wrap16(-int32_t{abs_a})));
  return positive ? if_positive : Wrap16(kQ0One - if_positive);
}

// TFLite's ApplyTanh(integer_bits, ...) for integer_bits 0..6 (prepare
// refuses others).
void ApplyTanh16(int integer_bits, const int16_t* in, int32_t n, int16_t* out) {
  int16_t (*f)(int16_t) = nullptr;
  switch (integer_bits) {
    case 0:
      f = Tanh16<0>;
      break;
    case 1:
      f = Tanh16<1>;
      break;
    case 2:
      f = Tanh16<2>;
      break;
    case 3:
      f = Tanh16<3>;
      break;
    case 4:
      f = Tanh16<4>;
      break;
    case 5:
      f = Tanh16<5>;
      break;
    case 6:
      f = Tanh16<6>;
      break;
    default:
      return;
  }
  for (int32_t i = 0; i < n; ++i) out[i] = f(in[i]);
}

int32_t Clamp16(int32_t v) {
  return std::clamp(v, int32_t{-32768}, int32_t{32767});
}
int32_t Clamp8(int32_t v) { return std::clamp(v, int32_t{-128}, int32_t{127}); }

// a + b and a * b in int32 arithmetic that wraps (as LiteRT's int32 sums
// do on x86-64) rather than overflowing.
int32_t WrapAdd(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) +
                              static_cast<uint32_t>(b));
}
int32_t WrapMul(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) *
                              static_cast<uint32_t>(b));
}

// out[r] = clamp(MBQM(bias[r] + m[r] . v) + zero_point + out[r]) for the
// int16 gates (zero point 0) or the int8 projection (TFLite's integer
// MatrixBatchVectorMultiplyAccumulate for one batch row).
template <typename T>
void MatVecAccumulate(const int8_t* m, int32_t rows, int32_t cols,
                      const int8_t* v, const int32_t* bias,
                      const QuantizedMultiplier& scale, int32_t zero_point,
                      T* out) {
  for (int32_t r = 0; r < rows; ++r) {
    const int8_t* row = m + static_cast<int64_t>(r) * cols;
    int32_t acc = bias[r];
    for (int32_t c = 0; c < cols; ++c) {
      acc = WrapAdd(acc, int32_t{row[c]} * int32_t{v[c]});
    }
    int32_t value = MultiplyByQuantizedMultiplier(acc, scale);
    value = WrapAdd(WrapAdd(value, zero_point), out[r]);
    out[r] = static_cast<T>(std::clamp<int32_t>(
        value, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
  }
}

// TFLite's integer ApplyLayerNorm on one row of n values, in place.
void LayerNorm16(int16_t* x, int32_t n, const int16_t* weights,
                 const int32_t* bias, const QuantizedMultiplier& scale,
                 int32_t variance_guard) {
  constexpr int64_t kTwoToPower20 = int64_t{1} << 20;
  int64_t sum = 0, sum_sq = 0;
  for (int32_t j = 0; j < n; ++j) {
    const int32_t v = x[j];
    sum += v;
    sum_sq += v * v;
  }
  const int32_t mean = static_cast<int32_t>(sum * 1024 / n);
  const int32_t temp = static_cast<int32_t>(kTwoToPower20 / n);
  const int64_t variance =
      sum_sq * temp - static_cast<int64_t>(mean) * static_cast<int64_t>(mean);
  int32_t variance2 = static_cast<int32_t>(variance / kTwoToPower20);
  if (variance2 < 1) variance2 = variance_guard;
  const QuantizedMultiplier inv_stddev =
      InvSqrtQuantizedMultiplier(variance2, /*reverse_shift=*/-1);
  const QuantizedMultiplier out_scale{scale.multiplier, scale.shift + 12};
  for (int32_t j = 0; j < n; ++j) {
    const int32_t shifted = WrapAdd(WrapMul(1024, x[j]), -mean);
    const int32_t rescaled = MultiplyByQuantizedMultiplier(shifted, inv_stddev);
    // int32 product and sum (wrapping), widened afterwards, as LiteRT.
    const int64_t val3 = WrapAdd(WrapMul(rescaled, weights[j]), bias[j]);
    const int32_t val4 =
        static_cast<int32_t>((val3 > 0 ? val3 + 512 : val3 - 512) / 1024);
    const int32_t val5 = MultiplyByQuantizedMultiplier(val4, out_scale);
    x[j] = static_cast<int16_t>(Clamp16(val5));
  }
}

// CwiseMul(a, b, shift): the int32 product rounded right by `shift`,
// truncated to int16.
int16_t MulShift16(int16_t a, int16_t b, int shift) {
  return Wrap16(RoundingDivideByPOT(int32_t{a} * int32_t{b}, shift));
}

// The weights of one invoke.
struct IntegerWeights {
  const int8_t* input_to[kLstmGates] = {};
  const int8_t* recurrent_to[kLstmGates] = {};
  const int16_t* cell_to[kLstmGates] = {};
  const int16_t* layer_norm[kLstmGates] = {};
  const int32_t* bias[kLstmGates] = {};
  const int8_t* projection = nullptr;
};

// One gate for one batch row: input and recurrent products, peephole,
// layer norm, then sigmoid (tanh for the cell gate).
void Gate(const LstmLayout& l, const IntegerLstm& s, const IntegerWeights& w,
          int g, const int8_t* x, const int8_t* h, const int16_t* c,
          int16_t* gate) {
  const int32_t n_cell = l.n_cell;
  std::fill_n(gate, n_cell, int16_t{0});
  MatVecAccumulate(w.input_to[g], n_cell, l.n_input, x, s.input_bias[g].data(),
                   s.input_to[g], 0, gate);
  MatVecAccumulate(w.recurrent_to[g], n_cell, l.n_output, h,
                   s.recurrent_bias[g].data(), s.recurrent_to[g], 0, gate);
  if (l.peephole && g != kCellGate) {
    for (int32_t i = 0; i < n_cell; ++i) {
      const int32_t prod = MultiplyByQuantizedMultiplier(
          int32_t{w.cell_to[g][i]} * int32_t{c[i]}, s.cell_to[g]);
      gate[i] = static_cast<int16_t>(Clamp16(prod + gate[i]));
    }
  }
  if (l.layer_norm) {
    LayerNorm16(gate, n_cell, w.layer_norm[g], w.bias[g], s.layer_norm[g],
                s.variance_guard[g]);
  }
  if (g == kCellGate) {
    ApplyTanh16(3, gate, n_cell, gate);
  } else {
    for (int32_t i = 0; i < n_cell; ++i) gate[i] = Sigmoid16(gate[i]);
  }
}

// One time step for one batch row (LstmStepInteger8x8_16 with n_batch 1).
void Step(const LstmLayout& l, IntegerLstm& s, const IntegerWeights& w,
          const int8_t* x, int8_t* h, int16_t* c, int8_t* out) {
  const int32_t n_cell = l.n_cell;
  int16_t* gates[kLstmGates];
  for (int g = 0; g < kLstmGates; ++g) {
    gates[g] = s.gates.data() + static_cast<int64_t>(g) * n_cell;
  }
  if (!l.cifg) Gate(l, s, w, kInputGate, x, h, c, gates[kInputGate]);
  Gate(l, s, w, kForgetGate, x, h, c, gates[kForgetGate]);
  Gate(l, s, w, kCellGate, x, h, c, gates[kCellGate]);
  // The cell: forget * cell + input * cell gate (CIFG: input = 1 - forget).
  const int input_shift = 30 + s.cell_scale_log2;
  for (int32_t i = 0; i < n_cell; ++i) {
    const int16_t kept = MulShift16(gates[kForgetGate][i], c[i], 15);
    const int16_t input_gate =
        l.cifg ? Wrap16(kQ0One - gates[kForgetGate][i]) : gates[kInputGate][i];
    const int16_t added =
        MulShift16(input_gate, gates[kCellGate][i], input_shift);
    int16_t updated = SaturatingAdd16(kept, added);
    if (s.cell_clip > 0) {
      updated = std::clamp<int16_t>(updated, static_cast<int16_t>(-s.cell_clip),
                                    s.cell_clip);
    }
    c[i] = updated;
  }
  Gate(l, s, w, kOutputGate, x, h, c, gates[kOutputGate]);
  // Hidden: output gate * tanh(cell), requantized to int8.
  ApplyTanh16(15 + s.cell_scale_log2, c, n_cell, s.cell_tanh.data());
  for (int32_t i = 0; i < n_cell; ++i) {
    int32_t v = MultiplyByQuantizedMultiplier(
        int32_t{gates[kOutputGate][i]} * int32_t{s.cell_tanh[i]}, s.hidden);
    v -= s.hidden_offset;
    s.hidden_q[i] = static_cast<int8_t>(Clamp8(v));
  }
  if (l.projection) {
    std::fill_n(h, l.n_output, int8_t{0});
    MatVecAccumulate(w.projection, l.n_output, n_cell, s.hidden_q.data(),
                     s.projection_bias.data(), s.projection,
                     s.output_state_zero_point, h);
    if (s.proj_clip > 0) {
      for (int32_t i = 0; i < l.n_output; ++i) {
        h[i] = std::clamp<int8_t>(h[i], static_cast<int8_t>(-s.proj_clip),
                                  s.proj_clip);
      }
    }
  } else {
    std::copy_n(s.hidden_q.data(), l.n_output, h);
  }
  std::copy_n(h, l.n_output, out);
}

// The peephole weights of gate g (there are none for the cell gate).
int32_t PeepholeOperand(int g) {
  return g == kOutputGate ? kCellToOutputWeights : kCellToInputWeights + g;
}

// Per-tensor scale and zero point of `t` (an operand or an intermediate).
KilnStatus ScaleOf(const KernelContext& k, const Tensor& t, const char* what,
                   float* scale, int32_t* zero_point) {
  KilnQuantizationParams q;
  KILN_SDK_RETURN_IF_ERROR(k.Quantization(t, &q));
  if (q.num_channels != 1 || !(q.scales[0] > 0.f) ||
      !std::isfinite(q.scales[0])) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, sdk::OpName(k), ": ", what,
                  " (tensor '", t.name(),
                  "') needs one positive finite quantization scale; it has ",
                  q.num_channels, " channel(s)");
  }
  *scale = q.scales[0];
  if (zero_point != nullptr)
    *zero_point = static_cast<int32_t>(q.zero_points[0]);
  return KILN_STATUS_OK;
}

KilnStatus InputScale(const KernelContext& k, int32_t index, float* scale,
                      int32_t* zero_point = nullptr) {
  return ScaleOf(k, k.input(index), sdk::Describe(k, sdk::Input(index)).c_str(),
                 scale, zero_point);
}

// Intermediate `index`'s scale and zero point.
KilnStatus IntermediateScale(const KernelContext& k, int32_t index,
                             float* scale, int32_t* zero_point) {
  const Tensor t = k.intermediate(index);
  if (!t.present()) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, sdk::OpName(k),
                  ": intermediate tensor ", index,
                  " is omitted; the integer LSTM reads its quantization");
  }
  const std::string what = "intermediate " + std::to_string(index);
  return ScaleOf(k, t, what.c_str(), scale, zero_point);
}

// bias[r] (or 0) + zero_point * sum of row r of the int8 matrix.
std::vector<int32_t> ZeroPointTimesWeightWithBias(const int8_t* m, int32_t rows,
                                                  int32_t cols,
                                                  int32_t zero_point,
                                                  const int32_t* bias) {
  std::vector<int32_t> out(static_cast<size_t>(rows), 0);
  for (int32_t r = 0; r < rows; ++r) {
    int32_t row_sum = 0;
    for (int32_t c = 0; c < cols; ++c) {
      row_sum += m[static_cast<int64_t>(r) * cols + c];
    }
    out[static_cast<size_t>(r)] =
        WrapAdd(bias != nullptr ? bias[r] : 0, WrapMul(row_sum, zero_point));
  }
  return out;
}

// Refuses the integer LSTM forms this kernel does not implement.
KilnStatus CheckIntegerLstmForm(KernelContext& k, const LstmLayout& l) {
  const int32_t count = k.num_intermediates();
  if (!k.HostHas(&KilnHostApi::node_intermediate)) {
    return k.Fail(KILN_STATUS_UNIMPLEMENTED, sdk::OpName(k),
                  ": the integer LSTM reads its gate and hidden scales from "
                  "the node's intermediate tensors, which this host does not "
                  "pass on (KilnHostApi.node_intermediate, extension API "
                  "1.3); run it with a Kiln host that serves 1.3 or later");
  }
  if (count == 12) {
    return k.Fail(KILN_STATUS_UNIMPLEMENTED, sdk::OpName(k),
                  ": the integer LSTM with 12 intermediate tensors (LiteRT's "
                  "8x8_8 kernel) is not implemented; the 8x8_16 form (5 "
                  "intermediates) is");
  }
  if (count != 5) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, sdk::OpName(k),
                  ": an integer LSTM needs 5 intermediate tensors (the "
                  "layer-norm inputs and the hidden state); the node has ",
                  count);
  }
  if (l.peephole && l.n_output != l.n_cell) {
    return k.Fail(KILN_STATUS_UNIMPLEMENTED, sdk::OpName(k),
                  ": an integer LSTM with peephole weights and a projection "
                  "to another size (",
                  l.n_output, " outputs, ", l.n_cell,
                  " cells) is not implemented (LiteRT's kernel indexes the "
                  "peephole by the output size)");
  }
  return KILN_STATUS_OK;
}

// The scales and zero points of the 5 intermediates (the 4 layer-norm
// inputs, Q3.12 without layer norm, and the hidden state).
KilnStatus ReadIntermediateScales(const KernelContext& k, const LstmLayout& l,
                                  float inter_scale[5], int32_t inter_zp[5]) {
  for (int i = 0; i < 4; ++i) {
    if (l.layer_norm) {
      KILN_SDK_RETURN_IF_ERROR(
          IntermediateScale(k, i, &inter_scale[i], &inter_zp[i]));
    } else {
      inter_scale[i] = static_cast<float>(std::pow(2.0, -12));  // Q3.12
      inter_zp[i] = 0;
    }
  }
  KILN_SDK_RETURN_IF_ERROR(
      IntermediateScale(k, 4, &inter_scale[4], &inter_zp[4]));

  return KILN_STATUS_OK;
}

// Effective scales of the gates, the hidden state and the projection.
KilnStatus SetEffectiveScales(const KernelContext& k, const LstmLayout& l,
                              const float inter_scale[5], float input_scale,
                              float state_scale, IntegerLstm* s) {
  // The effective scales, in float arithmetic as LiteRT computes them.
  for (int g = 0; g < kLstmGates; ++g) {
    s->input_to[g] = s->recurrent_to[g] = s->cell_to[g] = QuantizedMultiplier{};
    s->layer_norm[g] = QuantizeMultiplier(1.0);
    s->variance_guard[g] = 1;
    if (g == kInputGate && l.cifg) continue;
    float w_in = 1.f, w_rec = 1.f;
    KILN_SDK_RETURN_IF_ERROR(InputScale(k, kInputToInputWeights + g, &w_in));
    KILN_SDK_RETURN_IF_ERROR(
        InputScale(k, kRecurrentToInputWeights + g, &w_rec));
    const float in_eff = w_in * input_scale / inter_scale[g];
    const float rec_eff = w_rec * state_scale / inter_scale[g];
    s->input_to[g] = QuantizeMultiplier(in_eff);
    s->recurrent_to[g] = QuantizeMultiplier(rec_eff);
    if (l.peephole && g != kCellGate) {
      float w_cell = 1.f;
      KILN_SDK_RETURN_IF_ERROR(InputScale(k, PeepholeOperand(g), &w_cell));
      const float cell_eff = static_cast<float>(
          std::pow(2.0, s->cell_scale_log2) * w_cell / inter_scale[g]);
      s->cell_to[g] = QuantizeMultiplier(cell_eff);
    }
    if (l.layer_norm) {
      float ln = 1.f;
      KILN_SDK_RETURN_IF_ERROR(InputScale(k, kInputLayerNorm + g, &ln));
      s->layer_norm[g] = QuantizeMultiplier(ln);
      s->variance_guard[g] =
          std::max(int32_t{1}, static_cast<int32_t>(10000 * ln));
    }
  }
  const float hidden_eff = static_cast<float>(
      std::pow(2.0, -15) / inter_scale[4] * std::pow(2.0, -15));
  s->hidden = QuantizeMultiplier(hidden_eff);
  s->projection = QuantizedMultiplier{};
  if (l.projection) {
    float w_proj = 1.f;
    KILN_SDK_RETURN_IF_ERROR(InputScale(k, kProjectionWeights, &w_proj));
    const float proj_eff = w_proj * inter_scale[4] / state_scale;
    s->projection = QuantizeMultiplier(proj_eff);
  }
  return KILN_STATUS_OK;
}

// The cell clip (int16) and the projection clip (int8, output scale).
KilnStatus SetClips(const KernelContext& k, const LstmLayout& l,
                    float cell_scale, IntegerLstm* s) {
  s->cell_clip =
      l.cell_clip > 0.f
          ? static_cast<int16_t>(std::min(
                std::max(l.cell_clip / cell_scale, -32768.0f), 32767.0f))
          : 0;
  s->proj_clip = 0;
  if (l.proj_clip > 0.f) {
    float out_scale = 1.f;
    KILN_SDK_RETURN_IF_ERROR(
        ScaleOf(k, k.output(0), "output 0", &out_scale, nullptr));
    s->proj_clip = static_cast<int8_t>(
        std::min(std::max(l.proj_clip / out_scale, -128.0f), 127.0f));
  }

  return KILN_STATUS_OK;
}

// Effective biases: zero point times the weights' row sums (plus the gate
// bias without layer norm, the projection bias with a projection).
KilnStatus SetEffectiveBiases(KernelContext& k, const LstmLayout& l,
                              int32_t input_zp, int32_t state_zp,
                              IntegerLstm* s) {
  // Zero point times weights (plus the gate bias without layer norm).
  for (int g = 0; g < kLstmGates; ++g) {
    s->input_bias[g].clear();
    s->recurrent_bias[g].clear();
    if (g == kInputGate && l.cifg) continue;
    const int8_t* w_in = k.input(kInputToInputWeights + g).data<int8_t>();
    const int8_t* w_rec = k.input(kRecurrentToInputWeights + g).data<int8_t>();
    const int32_t* bias =
        l.layer_norm ? nullptr : k.input(kInputGateBias + g).data<int32_t>();
    if (w_in == nullptr || w_rec == nullptr ||
        (!l.layer_norm && bias == nullptr)) {
      return k.Fail(KILN_STATUS_FAILED_PRECONDITION, sdk::OpName(k),
                    ": the weights and biases of gate ", g,
                    " have no data at prepare; the integer LSTM needs "
                    "constant weights");
    }
    s->input_bias[g] = ZeroPointTimesWeightWithBias(w_in, l.n_cell, l.n_input,
                                                    -input_zp, bias);
    s->recurrent_bias[g] = ZeroPointTimesWeightWithBias(
        w_rec, l.n_cell, l.n_output, -state_zp, nullptr);
  }
  s->projection_bias.clear();
  if (l.projection) {
    const int8_t* w = k.input(kProjectionWeights).data<int8_t>();
    const int32_t* bias =
        l.projection_bias ? k.input(kProjectionBias).data<int32_t>() : nullptr;
    if (w == nullptr || (l.projection_bias && bias == nullptr)) {
      return k.Fail(KILN_STATUS_FAILED_PRECONDITION, sdk::OpName(k),
                    ": the projection weights or bias have no data at "
                    "prepare; the integer LSTM needs constant weights");
    }
    s->projection_bias = ZeroPointTimesWeightWithBias(w, l.n_output, l.n_cell,
                                                      s->hidden_offset, bias);
  }
  return KILN_STATUS_OK;
}

}  // namespace

KilnStatus PrepareIntegerLstm(KernelContext& k, const LstmLayout& l,
                              IntegerLstm* s) {
  KILN_SDK_RETURN_IF_ERROR(CheckIntegerLstmForm(k, l));
  float inter_scale[5];
  int32_t inter_zp[5];
  KILN_SDK_RETURN_IF_ERROR(ReadIntermediateScales(k, l, inter_scale, inter_zp));
  float input_scale = 1.f, state_scale = 1.f, cell_scale = 1.f;
  int32_t input_zp = 0, state_zp = 0;
  KILN_SDK_RETURN_IF_ERROR(InputScale(k, kInput, &input_scale, &input_zp));
  KILN_SDK_RETURN_IF_ERROR(
      InputScale(k, kOutputState, &state_scale, &state_zp));
  KILN_SDK_RETURN_IF_ERROR(InputScale(k, kCellState, &cell_scale));
  if (!CheckedLog2(cell_scale, &s->cell_scale_log2) ||
      s->cell_scale_log2 > -9 || s->cell_scale_log2 < -15) {
    return k.Fail(KILN_STATUS_UNIMPLEMENTED, sdk::OpName(k),
                  ": the int16 cell state's scale must be a power of two "
                  "from 2^-15 to 2^-9 (LiteRT's integer LSTM); it is ",
                  cell_scale);
  }
  s->output_state_zero_point = state_zp;
  // The hidden state's zero point z as LiteRT (ai_edge_litert 2.3's
  // reference kernels) applies it, measured against it: with a projection
  // the requantized hidden value is v - z and the projection's effective
  // bias adds z times the weights' row sums (TFLite's lstm_eval); without
  // one the hidden value, which is the output, is v + z.
  s->hidden_offset = l.projection ? inter_zp[4] : -inter_zp[4];

  KILN_SDK_RETURN_IF_ERROR(
      SetEffectiveScales(k, l, inter_scale, input_scale, state_scale, s));
  KILN_SDK_RETURN_IF_ERROR(SetClips(k, l, cell_scale, s));
  KILN_SDK_RETURN_IF_ERROR(SetEffectiveBiases(k, l, input_zp, state_zp, s));
  s->gates.assign(static_cast<size_t>(kLstmGates) * l.n_cell, 0);
  s->cell_tanh.assign(static_cast<size_t>(l.n_cell), 0);
  s->hidden_q.assign(static_cast<size_t>(l.n_cell), 0);
  return KILN_STATUS_OK;
}

KilnStatus InvokeIntegerLstm(KernelContext& k, const LstmLayout& l,
                             IntegerLstm& s) {
  IntegerWeights w;
  for (int g = 0; g < kLstmGates; ++g) {
    if (g == kInputGate && l.cifg) continue;
    w.input_to[g] = k.input(kInputToInputWeights + g).data<int8_t>();
    w.recurrent_to[g] = k.input(kRecurrentToInputWeights + g).data<int8_t>();
    w.bias[g] = k.input(kInputGateBias + g).data<int32_t>();
    if (l.peephole && g != kCellGate) {
      w.cell_to[g] = k.input(PeepholeOperand(g)).data<int16_t>();
    }
    if (l.layer_norm) {
      w.layer_norm[g] = k.input(kInputLayerNorm + g).data<int16_t>();
    }
    if (w.input_to[g] == nullptr || w.recurrent_to[g] == nullptr ||
        w.bias[g] == nullptr || (l.layer_norm && w.layer_norm[g] == nullptr) ||
        (l.peephole && g != kCellGate && w.cell_to[g] == nullptr)) {
      return k.Fail(KILN_STATUS_FAILED_PRECONDITION, sdk::OpName(k),
                    ": a weight, bias or coefficient tensor of gate ", g,
                    " has no data at invoke");
    }
  }
  if (l.projection) w.projection = k.input(kProjectionWeights).data<int8_t>();
  const int8_t* input = k.input(kInput).data<int8_t>();
  int8_t* h = k.input(kOutputState).data<int8_t>();
  int16_t* c = k.input(kCellState).data<int16_t>();
  int8_t* out = k.output(0).data<int8_t>();
  if ((l.projection && w.projection == nullptr) ||
      (input == nullptr && l.n_input > 0) || h == nullptr || c == nullptr ||
      out == nullptr) {
    if (static_cast<int64_t>(l.n_batch) * l.n_time == 0) return KILN_STATUS_OK;
    return k.Fail(KILN_STATUS_FAILED_PRECONDITION, sdk::OpName(k),
                  ": the input, a state, the projection or the output has "
                  "no data at invoke");
  }
  const LstmRowStrides r = RowStrides(l);
  for (int32_t t = 0; t < l.n_time; ++t) {
    for (int32_t b = 0; b < l.n_batch; ++b) {
      Step(l, s, w, input + t * r.in_step + b * r.in_batch,
           h + static_cast<int64_t>(b) * l.n_output,
           c + static_cast<int64_t>(b) * l.n_cell,
           out + t * r.out_step + b * r.out_batch);
    }
  }
  return KILN_STATUS_OK;
}

}  // namespace kiln::cpu::nn
