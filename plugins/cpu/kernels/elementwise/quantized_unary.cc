#include "kernels/elementwise/quantized_unary.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "kernels/elementwise/quantized_common.h"
#include "kernels/quantization_util.h"

namespace kiln::cpu::elementwise {
namespace {

using sdk::KernelContext;
using sdk::Tensor;

// Quantized INT16 kernels of LiteRT need symmetric tensors.
KilnStatus ExpectZeroPoints(KernelContext& k, const char* op, const Affine& in,
                            const Affine& out) {
  if (in.zero_point == 0 && out.zero_point == 0) return KILN_STATUS_OK;
  return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op,
                ": INT16 input and output need zero point 0 (symmetric "
                "quantization), got ",
                in.zero_point, " and ", out.zero_point,
                "; requantize the model with symmetric int16 activations");
}

// RELU, RELU6, RELU_N1_TO_1, RELU_0_TO_1 (LiteRT's ReluPrepare and
// QuantizedReluX): rescale by in/out scale, clamp at the activation's bounds
// quantized with roundf in float.
void PrepareRelu(float act_min, float act_max, const Affine& in,
                 const Affine& out, int32_t qmin, int32_t qmax,
                 PiecewiseAffine* f) {
  const QuantizedMultiplier m =
      QuantizeMultiplier(static_cast<double>(in.scale / out.scale));
  f->input_offset = in.zero_point;
  f->output_offset = out.zero_point;
  f->positive = f->negative = m;
  f->lo = std::max(qmin, out.zero_point + static_cast<int32_t>(
                                              std::round(act_min / out.scale)));
  f->hi = std::isinf(act_max)
              ? qmax
              : std::min(qmax, out.zero_point + static_cast<int32_t>(std::round(
                                                    act_max / out.scale)));
}

// LEAKY_RELU: identity and alpha multipliers, computed in float as LiteRT's
// LeakyReluPrepare does.
void PrepareLeakyRelu(float alpha, const Affine& in, const Affine& out,
                      int32_t qmin, int32_t qmax, PiecewiseAffine* f) {
  f->input_offset = in.zero_point;
  f->output_offset = out.zero_point;
  f->positive = QuantizeMultiplier(static_cast<double>(in.scale / out.scale));
  f->negative =
      QuantizeMultiplier(static_cast<double>(in.scale * alpha / out.scale));
  f->lo = qmin;
  f->hi = qmax;
}

// ABS: |x - zp|, rescaled when the scales differ.
void PrepareAbs(const Affine& in, const Affine& out, int32_t qmin, int32_t qmax,
                PiecewiseAffine* f) {
  f->input_offset = in.zero_point;
  f->output_offset = out.zero_point;
  f->absolute = true;
  f->rescale = in.scale != out.scale;
  f->positive = f->negative =
      QuantizeMultiplier(static_cast<double>(in.scale / out.scale));
  f->lo = qmin;
  f->hi = qmax;
}

template <typename Fn>
void FillTable(KilnTensorType type, Fn&& f, std::array<uint8_t, 256>* table) {
  int32_t lo = 0, hi = 0;
  QuantizedTypeRange(type, &lo, &hi);
  for (int32_t code = lo; code <= hi; ++code) {
    (*table)[static_cast<uint8_t>(code)] = static_cast<uint8_t>(f(code));
  }
}

// LiteRT's LUTPopulate: each input code dequantized, transformed and
// requantized in float.
template <typename Transform>
void FillFloatTable(KilnTensorType type, const Affine& in, const Affine& out,
                    Transform transform, std::array<uint8_t, 256>* table) {
  int32_t lo = 0, hi = 0;
  QuantizedTypeRange(type, &lo, &hi);
  const float inverse_scale = 1 / out.scale;
  FillTable(
      type,
      [&](int32_t code) {
        const float dequantized =
            in.scale * static_cast<float>(code - in.zero_point);
        const float rescaled =
            std::round(transform(dequantized) * inverse_scale);
        const int32_t q = TruncateToInt32LikeX86(
            rescaled + static_cast<float>(out.zero_point));
        return std::min(hi, std::max(lo, q));
      },
      table);
}

float Elu(float x) { return x < 0.0f ? std::expm1(x) : x; }
float Exp(float x) { return std::exp(x); }
float Log(float x) { return std::log(x); }
float Logistic(float x) { return 1.0f / (1.0f + std::exp(-x)); }
float Tanh(float x) { return std::tanh(x); }
float Gelu(float x) {
  return 0.5f * x * std::erfc(x * static_cast<float>(-M_SQRT1_2));
}
float GeluApproximate(float x) {
  constexpr float kSqrt2OverPi = M_2_SQRTPI * M_SQRT1_2;
  return 0.5f * x *
         (1.f + std::tanh(kSqrt2OverPi * (x + 0.044715f * x * x * x)));
}

// ---- HARD_SWISH (LiteRT's reference_ops::HardSwish on 16-bit fixed point).

int16_t Srdhm16(int16_t a, int16_t b) {  // gemmlowp, rounding
  if (a == b && a == std::numeric_limits<int16_t>::min()) {
    return std::numeric_limits<int16_t>::max();
  }
  const int32_t ab = int32_t{a} * int32_t{b};
  const int32_t nudge = ab >= 0 ? (1 << 14) : (1 - (1 << 14));
  return static_cast<int16_t>((ab + nudge) / (1 << 15));
}

int16_t Sdhm16(int16_t a, int16_t b) {  // truncating (ARM SQDMULH)
  if (a == b && a == std::numeric_limits<int16_t>::min()) {
    return std::numeric_limits<int16_t>::max();
  }
  return static_cast<int16_t>((int32_t{a} * int32_t{b}) / (1 << 15));
}

int16_t RoundingDivideByPot16(int16_t x, int32_t exponent) {
  const int16_t mask = static_cast<int16_t>((1 << exponent) - 1);
  const int16_t remainder = static_cast<int16_t>(x & mask);
  const int16_t threshold = static_cast<int16_t>((mask >> 1) + (x < 0 ? 1 : 0));
  return static_cast<int16_t>((x >> exponent) +
                              (remainder > threshold ? 1 : 0));
}

int16_t SaturatingLeftShift16(int16_t value, int32_t amount) {
  const int64_t r = int64_t{value} * (int64_t{1} << amount);
  return static_cast<int16_t>(
      std::min<int64_t>(32767, std::max<int64_t>(-32768, r)));
}

// TFLite's DownScaleInt32ToInt16Multiplier.
int16_t DownScaleMultiplier(int32_t m) {
  constexpr int32_t kRounding = 1 << 15;
  if (m >= std::numeric_limits<int32_t>::max() - kRounding) return 32767;
  return static_cast<int16_t>((m + kRounding) >> 16);
}

struct HardSwishParams {
  int32_t input_zero_point = 0, output_zero_point = 0;
  int16_t output_multiplier = 0, reluish_multiplier = 0;
  int32_t output_exponent = 0, reluish_exponent = 0;
};

int32_t HardSwishElement(const HardSwishParams& p, int32_t code) {
  const int16_t input_value = static_cast<int16_t>(code - p.input_zero_point);
  const int16_t hires = static_cast<int16_t>(input_value * (1 << 7));
  const int16_t preshift_output = Srdhm16(hires, p.output_multiplier);
  int16_t reluish = hires;
  if (p.reluish_exponent > 0) {
    reluish = SaturatingLeftShift16(reluish, p.reluish_exponent - 1);
  }
  reluish = Srdhm16(reluish, p.reluish_multiplier);
  if (p.reluish_exponent > 0) reluish = SaturatingLeftShift16(reluish, 1);
  if (p.reluish_exponent < 0) {
    reluish = RoundingDivideByPot16(reluish, -p.reluish_exponent);
  }
  reluish = static_cast<int16_t>((reluish + (1 << 15)) >> 1);
  const int16_t preshift = Sdhm16(reluish, preshift_output);
  // LiteRT adds the zero point in int16 (wrapping), then clamps.
  return static_cast<int16_t>(
      RoundingDivideByPot16(preshift, -p.output_exponent) +
      p.output_zero_point);
}

KilnStatus PrepareHardSwish(KernelContext& k, KilnTensorType type,
                            const Affine& in, const Affine& out,
                            std::array<uint8_t, 256>* table) {
  HardSwishParams p;
  p.input_zero_point = in.zero_point;
  p.output_zero_point = out.zero_point;
  const float hires_input_scale = (1.0f / 128.0f) * in.scale;
  const float reluish_scale = 3.0f / 32768.0f;
  const QuantizedMultiplier om =
      QuantizeMultiplier(static_cast<double>(hires_input_scale / out.scale));
  const QuantizedMultiplier rm = QuantizeMultiplier(
      static_cast<double>(hires_input_scale / reluish_scale));
  if (om.shift > 0) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "HARD_SWISH: output scale ",
                  out.scale, " is too small for input scale ", in.scale,
                  " (input_scale / 128 / output_scale must be below 1, as "
                  "LiteRT requires); requantize the model");
  }
  p.output_multiplier = DownScaleMultiplier(om.multiplier);
  p.output_exponent = om.shift;
  p.reluish_multiplier = DownScaleMultiplier(rm.multiplier);
  p.reluish_exponent = rm.shift;
  int32_t lo = 0, hi = 0;
  QuantizedTypeRange(type, &lo, &hi);
  FillTable(
      type,
      [&](int32_t code) {
        return std::min(hi, std::max(lo, HardSwishElement(p, code)));
      },
      table);
  return KILN_STATUS_OK;
}

// ---- RSQRT (LiteRT's RsqrtEvalQuantized, int8 only).

void PrepareRsqrt(const Affine& in, const Affine& out,
                  QuantizedUnaryState* state) {
  const QuantizedMultiplier m = QuantizeMultiplier(
      1. / static_cast<double>(std::sqrt(in.scale) * out.scale));
  constexpr int32_t kShift = 20;
  state->min_valid_code = in.zero_point;
  FillTable(
      KILN_TYPE_INT8,
      [&](int32_t code) {
        const int32_t value = code - in.zero_point;
        if (value <= 0) return 127;  // 0 -> max; < 0 is refused at invoke
        QuantizedMultiplier inv = InvSqrtQuantizedMultiplier(value, -1);
        inv.shift += kShift;
        const int32_t data = MultiplyByQuantizedMultiplier(1, inv);
        QuantizedMultiplier out_m = m;
        out_m.shift -= kShift;
        const int32_t q =
            MultiplyByQuantizedMultiplier(data, out_m) + out.zero_point;
        return std::min(127, std::max(-128, q));
      },
      &state->table);
}

// ---- SQRT (LiteRT's SqrtEvalQuantized): sqrtf of the dequantized value,
// divided by the output scale and truncated toward zero (x86 conversion),
// plus the output zero point (wrapping int arithmetic), clamped.

int32_t SqrtCode(float input_scale, int32_t input_zero_point,
                 float output_scale, int32_t output_zero_point, int32_t code,
                 int32_t lo, int32_t hi) {
  const float dequantized =
      input_scale * static_cast<float>(code - input_zero_point);
  const int32_t truncated =
      TruncateToInt32LikeX86(std::sqrt(dequantized) / output_scale);
  const int32_t q =
      static_cast<int32_t>(static_cast<uint32_t>(truncated) +
                           static_cast<uint32_t>(output_zero_point));
  return std::min(std::max(q, lo), hi);
}

// ---- INT16 EXP, LOG, RSQRT, GELU: LiteRT's LUTPopulate<int16_t> tables.

float ExpOf(float x, const void*) { return std::exp(x); }
// LOG of a value <= 0 is the output's lowest value (LiteRT's LogLUTPrepare).
float LogOrMin(float x, const void* output_min) {
  return x <= 0.0f ? *static_cast<const float*>(output_min) : std::log(x);
}
// RSQRT of a value <= 0 is INT16_MAX output steps (LiteRT's RSQRT prepare).
float RsqrtOrMax(float x, const void* output_scale) {
  return x <= 0.0f ? 32767 * *static_cast<const float*>(output_scale)
                   : 1.0f / std::sqrt(x);
}

// GELU (`approximate`: a bool) as LiteRT's int8 table computes it.
float GeluOf(float x, const void* approximate) {
  return *static_cast<const bool*>(approximate) ? GeluApproximate(x) : Gelu(x);
}

void PrepareInt16Lut(int32_t code, bool approximate, const Affine& in,
                     const Affine& out, QuantizedUnaryState* s) {
  const float output_min = (-32768 - out.zero_point) * out.scale;
  float (*f)(float, const void*) = ExpOf;
  const void* params = nullptr;
  if (code == KILN_OP_GELU) {
    f = GeluOf;
    params = &approximate;
  } else if (code == KILN_OP_LOG) {
    f = LogOrMin;
    params = &output_min;
  } else if (code == KILN_OP_RSQRT) {
    f = RsqrtOrMax;
    params = &out.scale;
    s->min_valid_code = in.zero_point;
  }
  s->int16_kind = Int16Kind::kLut;
  s->int16_lut.resize(513);
  PopulateInt16LutFloat(in.scale, in.zero_point, out.scale, out.zero_point, f,
                        params, s->int16_lut.data());
}

// ---- Dispatch -------------------------------------------------------------

struct UnaryNode {
  const char* op;
  int32_t code;
  KilnTensorType type;
  Affine in, out;
  int32_t qmin, qmax;
};

bool IsEightBit(KilnTensorType type) {
  return type == KILN_TYPE_UINT8 || type == KILN_TYPE_INT8;
}

KilnStatus Unsupported(KernelContext& k, const UnaryNode& n,
                       const char* supported) {
  return k.Fail(
      KILN_STATUS_UNIMPLEMENTED, n.op, ": quantized ", sdk::TypeName(n.type),
      " input is not supported; Kiln's quantized ", n.op, " implements ",
      supported, " (see docs/quantization.md for what runs)");
}

KilnStatus PrepareClampOp(KernelContext& k, const UnaryNode& n,
                          QuantizedUnaryState* s) {
  const float inf = std::numeric_limits<float>::infinity();
  float lo = 0.f, hi = inf;
  switch (n.code) {
    case KILN_OP_RELU6:
      hi = 6.f;
      break;
    case KILN_OP_RELU_N1_TO_1:
      lo = -1.f, hi = 1.f;
      break;
    case KILN_OP_RELU_0_TO_1:
      hi = 1.f;
      break;
    default:
      break;
  }
  const bool int16_ok = n.code == KILN_OP_RELU || n.code == KILN_OP_RELU6;
  if (n.type == KILN_TYPE_INT16 && !int16_ok) {
    return Unsupported(k, n, "UINT8 and INT8 only");
  }
  if (n.type == KILN_TYPE_INT16) {
    KILN_SDK_RETURN_IF_ERROR(ExpectZeroPoints(k, n.op, n.in, n.out));
  }
  PiecewiseAffine f;
  PrepareRelu(lo, hi, n.in, n.out, n.qmin, n.qmax, &f);
  s->int16 = f;
  if (IsEightBit(n.type)) FillTable(n.type, f, &s->table);
  return KILN_STATUS_OK;
}

KilnStatus PrepareAffineOp(KernelContext& k, const UnaryNode& n,
                           QuantizedUnaryState* s) {
  PiecewiseAffine f;
  if (n.code == KILN_OP_LEAKY_RELU) {
    PrepareLeakyRelu(k.OptionFloat(KILN_OPTION_ALPHA, 0.f), n.in, n.out, n.qmin,
                     n.qmax, &f);
  } else {  // ABS
    if (n.type == KILN_TYPE_UINT8) return Unsupported(k, n, "INT8 and INT16");
    PrepareAbs(n.in, n.out, n.qmin, n.qmax, &f);
  }
  if (n.type == KILN_TYPE_INT16) {
    KILN_SDK_RETURN_IF_ERROR(ExpectZeroPoints(k, n.op, n.in, n.out));
  }
  s->int16 = f;
  if (IsEightBit(n.type)) FillTable(n.type, f, &s->table);
  return KILN_STATUS_OK;
}

// INT16 GELU, EXP, LOG, RSQRT and SQRT; LiteRT needs symmetric tensors for
// all but GELU.
KilnStatus PrepareInt16MathOp(KernelContext& k, const UnaryNode& n,
                              QuantizedUnaryState* s) {
  if (n.code == KILN_OP_ELU) return Unsupported(k, n, "INT8");
  if (n.code == KILN_OP_GELU) {
    PrepareInt16Lut(n.code, k.OptionInt(KILN_OPTION_APPROXIMATE, 0) != 0, n.in,
                    n.out, s);
    return KILN_STATUS_OK;
  }
  if (n.code != KILN_OP_EXP && n.code != KILN_OP_LOG &&
      n.code != KILN_OP_RSQRT && n.code != KILN_OP_SQRT) {
    return Unsupported(k, n, "UINT8 and INT8");
  }
  KILN_SDK_RETURN_IF_ERROR(ExpectZeroPoints(k, n.op, n.in, n.out));
  if (n.code != KILN_OP_SQRT) {
    PrepareInt16Lut(n.code, false, n.in, n.out, s);
    return KILN_STATUS_OK;
  }
  s->int16_kind = Int16Kind::kSqrt;
  s->sqrt_input_scale = n.in.scale;
  s->sqrt_output_scale = n.out.scale;
  s->min_valid_code = 0;
  return KILN_STATUS_OK;
}

// INT8 SQRT (LiteRT has no UINT8 SQRT).
KilnStatus PrepareInt8Sqrt(KernelContext& k, const UnaryNode& n,
                           QuantizedUnaryState* s) {
  if (n.type != KILN_TYPE_INT8) return Unsupported(k, n, "INT8 and INT16");
  s->min_valid_code = n.in.zero_point;
  FillTable(
      n.type,
      [&](int32_t code) {
        return SqrtCode(n.in.scale, n.in.zero_point, n.out.scale,
                        n.out.zero_point, code, n.qmin, n.qmax);
      },
      &s->table);
  return KILN_STATUS_OK;
}

KilnStatus PrepareTableOp(KernelContext& k, const UnaryNode& n,
                          QuantizedUnaryState* s) {
  if (!IsEightBit(n.type)) return PrepareInt16MathOp(k, n, s);
  switch (n.code) {
    case KILN_OP_HARD_SWISH:
      return PrepareHardSwish(k, n.type, n.in, n.out, &s->table);
    case KILN_OP_LOGISTIC:
      if (static_cast<double>(n.out.scale) != 1. / 256) {
        return k.Fail(KILN_STATUS_INVALID_ARGUMENT,
                      "LOGISTIC: quantized output scale must be 1/256 "
                      "(LiteRT requires it), got ",
                      n.out.scale);
      }
      FillFloatTable(n.type, n.in, n.out, Logistic, &s->table);
      return KILN_STATUS_OK;
    case KILN_OP_TANH:
      FillFloatTable(n.type, n.in, n.out, Tanh, &s->table);
      return KILN_STATUS_OK;
    case KILN_OP_ELU:
    case KILN_OP_EXP:
    case KILN_OP_LOG:
      if (n.type != KILN_TYPE_INT8) {
        return Unsupported(k, n,
                           n.code == KILN_OP_ELU ? "INT8" : "INT8 and INT16");
      }
      FillFloatTable(n.type, n.in, n.out,
                     n.code == KILN_OP_ELU   ? Elu
                     : n.code == KILN_OP_EXP ? Exp
                                             : Log,
                     &s->table);
      return KILN_STATUS_OK;
    case KILN_OP_GELU:
      FillFloatTable(
          n.type, n.in, n.out,
          k.OptionInt(KILN_OPTION_APPROXIMATE, 0) != 0 ? GeluApproximate : Gelu,
          &s->table);
      return KILN_STATUS_OK;
    case KILN_OP_SQRT:
      return PrepareInt8Sqrt(k, n, s);
    default:  // RSQRT
      if (n.type != KILN_TYPE_INT8) return Unsupported(k, n, "INT8 and INT16");
      PrepareRsqrt(n.in, n.out, s);
      return KILN_STATUS_OK;
  }
}

KilnStatus PrepareForOp(KernelContext& k, const UnaryNode& n,
                        QuantizedUnaryState* s) {
  switch (n.code) {
    case KILN_OP_RELU:
    case KILN_OP_RELU6:
    case KILN_OP_RELU_N1_TO_1:
    case KILN_OP_RELU_0_TO_1:
      return PrepareClampOp(k, n, s);
    case KILN_OP_LEAKY_RELU:
    case KILN_OP_ABS:
      return PrepareAffineOp(k, n, s);
    case KILN_OP_HARD_SWISH:
    case KILN_OP_LOGISTIC:
    case KILN_OP_TANH:
    case KILN_OP_ELU:
    case KILN_OP_EXP:
    case KILN_OP_LOG:
    case KILN_OP_GELU:
    case KILN_OP_RSQRT:
    case KILN_OP_SQRT:
      return PrepareTableOp(k, n, s);
    default:
      return k.Fail(KILN_STATUS_UNIMPLEMENTED, n.op,
                    ": quantized inputs are not supported by this kernel");
  }
}

// "ADD", "RELU6": the op's name for messages.
const char* OpName(int32_t code) { return KilnBuiltinOpName(code); }

// ABS v4: INT16 without quantization parameters is a plain integer ABS.
bool IsUnquantizedInt16Abs(KernelContext& k, int32_t code, const Tensor& in) {
  if (code != KILN_OP_ABS || in.type() != KILN_TYPE_INT16) return false;
  KilnQuantizationParams q{};
  return k.Quantization(in, &q) == KILN_STATUS_OK && q.num_channels == 0;
}

template <typename T>
void LookUp(const T* in, T* out, int64_t n,
            const std::array<uint8_t, 256>& table) {
  for (int64_t i = 0; i < n; ++i) {
    out[i] = static_cast<T>(table[static_cast<uint8_t>(in[i])]);
  }
}

// RSQRT and SQRT fail the invoke on a negative input, as LiteRT does.
template <typename T>
KilnStatus ExpectValidCodes(KernelContext& k, const T* in, int64_t n,
                            int32_t min_valid_code) {
  if (min_valid_code <= std::numeric_limits<T>::min()) return KILN_STATUS_OK;
  for (int64_t i = 0; i < n; ++i) {
    if (in[i] < min_valid_code) {
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT, OpName(k.builtin_code()),
                    ": input element ", i, " (code ", int32_t{in[i]},
                    ") is below the zero point ", min_valid_code, "; ",
                    OpName(k.builtin_code()),
                    " is only defined for non-negative values");
    }
  }
  return KILN_STATUS_OK;
}

void RunInt16(const QuantizedUnaryState& s, const int16_t* in, int16_t* out,
              int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const int32_t x = in[i];
    int32_t y = 0;
    switch (s.int16_kind) {
      case Int16Kind::kAffine:
        y = s.int16(x);
        break;
      case Int16Kind::kRawAbs:
        y = std::abs(x);
        break;
      case Int16Kind::kLut:
        y = Int16LutLookup(in[i], s.int16_lut.data());
        break;
      case Int16Kind::kSqrt:
        y = SqrtCode(s.sqrt_input_scale, 0, s.sqrt_output_scale, 0, x, -32768,
                     32767);
        break;
    }
    out[i] = static_cast<int16_t>(y);
  }
}

QuantizedUnaryKey KeyOf(KernelContext& k, const UnaryNode& n) {
  QuantizedUnaryKey key;
  key.code = n.code;
  key.type = n.type;
  key.in_scale = n.in.scale;
  key.out_scale = n.out.scale;
  key.in_zero_point = n.in.zero_point;
  key.out_zero_point = n.out.zero_point;
  if (n.code == KILN_OP_LEAKY_RELU) {
    key.alpha = k.OptionFloat(KILN_OPTION_ALPHA, 0.f);
  } else if (n.code == KILN_OP_GELU) {
    key.approximate = k.OptionInt(KILN_OPTION_APPROXIMATE, 0);
  }
  return key;
}

}  // namespace

bool IsQuantizedUnaryType(KilnTensorType type) {
  return type == KILN_TYPE_UINT8 || type == KILN_TYPE_INT8 ||
         type == KILN_TYPE_INT16;
}

KilnStatus PrepareQuantizedUnary(KernelContext& k, QuantizedUnaryState* state) {
  UnaryNode n;
  n.code = k.builtin_code();
  n.op = OpName(n.code);
  const Tensor in = k.input(0), out = k.output(0);
  n.type = in.type();
  if (out.type() != n.type) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, n.op, ": output '", out.name(),
                  "' has type ", sdk::TypeName(out.type()),
                  " but the input has type ", sdk::TypeName(n.type),
                  "; quantized ", n.op, " needs them to be the same type");
  }
  if (IsUnquantizedInt16Abs(k, n.code, in)) {
    *state = QuantizedUnaryState{};
    state->type = n.type;
    state->int16_kind = Int16Kind::kRawAbs;
  } else {
    KILN_SDK_RETURN_IF_ERROR(ReadAffine(k, sdk::Input(0), &n.in));
    KILN_SDK_RETURN_IF_ERROR(ReadAffine(k, sdk::Output(0), &n.out));
    const QuantizedUnaryKey key = KeyOf(k, n);
    if (!(state->key == key)) {  // else the tables are already built
      *state = QuantizedUnaryState{};
      state->type = n.type;
      QuantizedTypeRange(n.type, &n.qmin, &n.qmax);
      KILN_SDK_RETURN_IF_ERROR(PrepareForOp(k, n, state));
      state->key = key;
    }
  }
  if (in.rank() < 0) {
    return k.Fail(KILN_STATUS_FAILED_PRECONDITION, n.op, ": input '", in.name(),
                  "' has an unknown shape at prepare");
  }
  return k.Resize(out, in.shape());
}

KilnStatus InvokeQuantizedUnary(KernelContext& k,
                                const QuantizedUnaryState& state) {
  const Tensor in = k.input(0), out = k.output(0);
  const int64_t n = out.num_elements();
  if (n > 0 && (in.data<void>() == nullptr || out.data<void>() == nullptr)) {
    return k.Fail(KILN_STATUS_FAILED_PRECONDITION, OpName(k.builtin_code()),
                  ": a tensor has no data buffer at invoke");
  }
  if (state.type == KILN_TYPE_UINT8) {
    LookUp(in.data<uint8_t>(), out.data<uint8_t>(), n, state.table);
    return KILN_STATUS_OK;
  }
  if (state.type == KILN_TYPE_INT16) {
    const int16_t* pi = in.data<int16_t>();
    KILN_SDK_RETURN_IF_ERROR(ExpectValidCodes(k, pi, n, state.min_valid_code));
    RunInt16(state, pi, out.data<int16_t>(), n);
    return KILN_STATUS_OK;
  }
  const int8_t* pi = in.data<int8_t>();
  KILN_SDK_RETURN_IF_ERROR(ExpectValidCodes(k, pi, n, state.min_valid_code));
  LookUp(pi, out.data<int8_t>(), n, state.table);
  return KILN_STATUS_OK;
}

}  // namespace kiln::cpu::elementwise
