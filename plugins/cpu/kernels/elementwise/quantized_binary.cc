#include "kernels/elementwise/quantized_binary.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/elementwise/quantized_common.h"
#include "kernels/quantization_util.h"

namespace kiln::cpu::elementwise {
namespace {

using sdk::KernelContext;
using sdk::Tensor;
using Kind = QuantizedBinaryState::Kind;

// The node's two inputs and output with their quantization.
struct BinaryNode {
  const char* op = "";
  int32_t code = 0;
  KilnTensorType type = KILN_TYPE_INT8;      // input 0 (and input 1)
  KilnTensorType type1 = KILN_TYPE_INT8;     // input 1
  KilnTensorType out_type = KILN_TYPE_INT8;  // output
  Affine a, b, out;
  int32_t qmin = 0, qmax = 0;  // of out_type
};

// "ADD", "RELU6": the op's name for messages.
const char* OpName(int32_t code) { return KilnBuiltinOpName(code); }

bool IsComparison(int32_t code) {
  return code == KILN_OP_LESS || code == KILN_OP_LESS_EQUAL ||
         code == KILN_OP_GREATER || code == KILN_OP_GREATER_EQUAL ||
         code == KILN_OP_EQUAL || code == KILN_OP_NOT_EQUAL;
}

KilnStatus Refuse(KernelContext& k, const BinaryNode& n, const char* what) {
  return k.Fail(KILN_STATUS_UNIMPLEMENTED, n.op, ": quantized ",
                sdk::TypeName(n.type), " inputs with ",
                sdk::TypeName(n.out_type), " output: ", what);
}

KilnStatus ExpectSymmetric(KernelContext& k, const BinaryNode& n) {
  if (n.a.zero_point == 0 && n.b.zero_point == 0 && n.out.zero_point == 0) {
    return KILN_STATUS_OK;
  }
  return k.Fail(KILN_STATUS_INVALID_ARGUMENT, n.op,
                ": INT16 inputs and output need zero point 0 (symmetric "
                "quantization, as LiteRT requires), got ",
                n.a.zero_point, ", ", n.b.zero_point, " and ",
                n.out.zero_point);
}

// LiteRT's offsets: the input zero points negated, the output's as is.
void SetOffsets(const BinaryNode& n, QuantizedBinaryState* s) {
  s->offset0 = -n.a.zero_point;
  s->offset1 = -n.b.zero_point;
  s->output_offset = n.out.zero_point;
}

KilnStatus ExpectOutputOfInputType(KernelContext& k, const BinaryNode& n) {
  if (n.out_type == n.type) return KILN_STATUS_OK;
  return Refuse(k, n, "the output must have the inputs' type");
}

// The output clamp of a fused activation (TFLite's
// CalculateActivationRangeQuantized; TANH and SIGN_BIT leave the range).
KilnStatus FusedActivationRange(KernelContext& k, const BinaryNode& n,
                                QuantizedBinaryState* s) {
  const int64_t act =
      k.OptionInt(KILN_OPTION_FUSED_ACTIVATION, KILN_ACTIVATION_NONE);
  if (QuantizedActivationBounds(act, n.out.scale, n.out.zero_point, n.qmin,
                                n.qmax, &s->act_min, &s->act_max)) {
    return KILN_STATUS_OK;
  }
  return k.Fail(KILN_STATUS_INVALID_ARGUMENT, n.op,
                ": the fused activation's bounds overflow int32 for output "
                "scale ",
                n.out.scale,
                " (LiteRT refuses this node too); requantize the model");
}

// ADD / SUB, general scales (LiteRT's PrepareGeneralSubOp and add.cc):
// inputs shifted left by 20 (8-bit) or 15 (int16) and rescaled to twice the
// larger input scale; all products in double.
KilnStatus PrepareAddSub(KernelContext& k, const BinaryNode& n,
                         QuantizedBinaryState* s) {
  s->kind = Kind::kAddSub;
  s->subtract = n.code == KILN_OP_SUB;
  SetOffsets(n, s);
  s->left_shift = n.type == KILN_TYPE_INT16 ? 15 : 20;
  const double twice_max =
      2 * static_cast<double>(std::max(n.a.scale, n.b.scale));
  s->multiplier0 = QuantizeMultiplier(n.a.scale / twice_max);
  s->multiplier1 = QuantizeMultiplier(n.b.scale / twice_max);
  s->output_multiplier = QuantizeMultiplier(
      twice_max / static_cast<double>(static_cast<float>(1 << s->left_shift) *
                                      n.out.scale));
  if (s->output_multiplier.shift > 0) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, n.op, ": output scale ",
                  n.out.scale, " is too small for input scales ", n.a.scale,
                  " and ", n.b.scale,
                  " (the output rescale factor must be below 1, as LiteRT's "
                  "kernel assumes); requantize the model");
  }
  return FusedActivationRange(k, n, s);
}

// int16 ADD / SUB with power-of-two scales and zero points 0
// (pot_scale_int16): one input is shifted right onto the output's scale and
// the two are added with int16 saturation. False when the scales are not
// powers of two (the general path applies then).
bool PreparePot16(const BinaryNode& n, QuantizedBinaryState* s) {
  int32_t la = 0, lb = 0, lo = 0;
  const bool pot = CheckedLog2(n.a.scale, &la) && CheckedLog2(n.b.scale, &lb) &&
                   CheckedLog2(n.out.scale, &lo);
  if (!pot || n.a.zero_point != 0 || n.b.zero_point != 0 ||
      n.out.zero_point != 0) {
    return false;
  }
  s->kind = Kind::kAddSubPot16;
  s->subtract = n.code == KILN_OP_SUB;
  s->pot_shift0 = -(la - lo);
  s->pot_shift1 = -(lb - lo);
  return true;
}

KilnStatus PrepareAddSubNode(KernelContext& k, const BinaryNode& n,
                             QuantizedBinaryState* s) {
  KILN_SDK_RETURN_IF_ERROR(ExpectOutputOfInputType(k, n));
  if (n.type == KILN_TYPE_INT16) {
    if (n.code == KILN_OP_SUB) KILN_SDK_RETURN_IF_ERROR(ExpectSymmetric(k, n));
    const bool pot_requested = k.OptionInt(KILN_OPTION_POT_SCALE_INT16, 0) != 0;
    if (pot_requested && PreparePot16(n, s)) {
      if (s->pot_shift0 != 0 && s->pot_shift1 != 0) {
        return k.Fail(KILN_STATUS_INVALID_ARGUMENT, n.op,
                      ": with power-of-two int16 scales one input must have "
                      "the output's scale (LiteRT shifts only one input)");
      }
      if (s->pot_shift0 < 0 || s->pot_shift1 < 0) {
        return k.Fail(KILN_STATUS_INVALID_ARGUMENT, n.op,
                      ": with power-of-two int16 scales an input scale "
                      "larger than the output's is not supported (LiteRT "
                      "only shifts right)");
      }
      return FusedActivationRange(k, n, s);
    }
  }
  return PrepareAddSub(k, n, s);
}

// MUL (LiteRT's mul.cc): the multiplier is in1 * in2 / out computed in
// float.
KilnStatus PrepareMul(KernelContext& k, const BinaryNode& n,
                      QuantizedBinaryState* s) {
  const bool narrow =
      n.type == KILN_TYPE_INT16 &&
      (n.out_type == KILN_TYPE_INT8 || n.out_type == KILN_TYPE_UINT8);
  if (n.out_type != n.type && !narrow) {
    return Refuse(k, n,
                  "MUL supports the inputs' type, or INT8/UINT8 for "
                  "INT16 inputs");
  }
  s->kind = narrow ? Kind::kMulInt16ToNarrow : Kind::kMul;
  SetOffsets(n, s);
  s->output_multiplier = QuantizeMultiplier(
      static_cast<double>(n.a.scale * n.b.scale / n.out.scale));
  if (n.type == KILN_TYPE_INT16 && !narrow) {
    KILN_SDK_RETURN_IF_ERROR(ExpectSymmetric(k, n));
  }
  return FusedActivationRange(k, n, s);
}

// SQUARED_DIFFERENCE (int8): inputs shifted left by 7, rescaled to twice the
// larger input scale, squared, rescaled by (2 max)^2 / (2^14 out).
KilnStatus PrepareSquaredDifference(KernelContext& k, const BinaryNode& n,
                                    QuantizedBinaryState* s) {
  if (n.type != KILN_TYPE_INT8 || n.out_type != KILN_TYPE_INT8) {
    return Refuse(k, n, "SQUARED_DIFFERENCE is implemented for INT8 only");
  }
  s->kind = Kind::kSquaredDifference;
  SetOffsets(n, s);
  s->left_shift = 7;
  const double twice_max =
      2 * static_cast<double>(std::max(n.a.scale, n.b.scale));
  s->multiplier0 = QuantizeMultiplier(n.a.scale / twice_max);
  s->multiplier1 = QuantizeMultiplier(n.b.scale / twice_max);
  s->output_multiplier = QuantizeMultiplier(
      twice_max * twice_max /
      static_cast<double>(static_cast<float>(1 << 14) * n.out.scale));
  if (s->output_multiplier.shift > 0) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, n.op, ": output scale ",
                  n.out.scale, " is too small for input scales ", n.a.scale,
                  " and ", n.b.scale, "; requantize the model");
  }
  s->act_min = n.qmin;
  s->act_max = n.qmax;
  return KILN_STATUS_OK;
}

// PRELU: alpha (input 1) of the input's type, INT8 for an INT16 input
// (int16x8); multipliers in / out and in * alpha / out computed in float.
KilnStatus PreparePrelu(KernelContext& k, const BinaryNode& n,
                        QuantizedBinaryState* s) {
  KILN_SDK_RETURN_IF_ERROR(ExpectOutputOfInputType(k, n));
  if (n.type == KILN_TYPE_INT16 && n.type1 != KILN_TYPE_INT8) {
    return Refuse(k, n,
                  "an INT16 PRELU needs an INT8 alpha (the int16x8 scheme; "
                  "LiteRT reads an INT16 alpha's bytes as INT8 values)");
  }
  s->kind = Kind::kPrelu;
  SetOffsets(n, s);
  s->multiplier0 =
      QuantizeMultiplier(static_cast<double>(n.a.scale / n.out.scale));
  s->multiplier1 = QuantizeMultiplier(
      static_cast<double>(n.a.scale * n.b.scale / n.out.scale));
  s->act_min = n.qmin;
  s->act_max = n.qmax;
  return KILN_STATUS_OK;
}

// DIV (LiteRT's div.cc): multiplier in1 / (in2 * out) computed in float.
KilnStatus PrepareDiv(KernelContext& k, const BinaryNode& n,
                      QuantizedBinaryState* s) {
  KILN_SDK_RETURN_IF_ERROR(ExpectOutputOfInputType(k, n));
  s->kind = Kind::kDiv;
  SetOffsets(n, s);
  s->output_multiplier = QuantizeMultiplier(
      static_cast<double>(n.a.scale / (n.b.scale * n.out.scale)));
  return FusedActivationRange(k, n, s);
}

// LiteRT compares INT16 inputs of LESS, LESS_EQUAL, GREATER and
// GREATER_EQUAL by their stored codes (EQUAL and NOT_EQUAL rescale them
// like 8-bit inputs).
bool RawInt16Comparison(const BinaryNode& n) {
  return n.type == KILN_TYPE_INT16 && IsComparison(n.code) &&
         n.code != KILN_OP_EQUAL && n.code != KILN_OP_NOT_EQUAL;
}

// Comparisons: inputs are rescaled (shifted left by 8, times their scale)
// so that differently quantized inputs compare by real value, as LiteRT's
// ComparisonQuantized does.
KilnStatus PrepareCompare(KernelContext& k, const BinaryNode& n,
                          QuantizedBinaryState* s) {
  if (n.out_type != KILN_TYPE_BOOL) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, n.op, ": output has type ",
                  sdk::TypeName(n.out_type), "; comparisons output BOOL");
  }
  if (RawInt16Comparison(n)) {
    s->kind = Kind::kRaw;
    return KILN_STATUS_OK;
  }
  s->kind = Kind::kCompare;
  s->offset0 = -n.a.zero_point;
  s->offset1 = -n.b.zero_point;
  s->left_shift = 8;
  s->multiplier0 = QuantizeMultiplier(static_cast<double>(n.a.scale));
  s->multiplier1 = QuantizeMultiplier(static_cast<double>(n.b.scale));
  if (s->multiplier0.shift > 0 || s->multiplier1.shift > 0) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, n.op,
                  ": input scales must be below 1 (got ", n.a.scale, " and ",
                  n.b.scale, "), as LiteRT's quantized comparison assumes");
  }
  return KILN_STATUS_OK;
}

KilnStatus ReadNode(KernelContext& k, BinaryNode* n) {
  n->code = k.builtin_code();
  n->op = OpName(n->code);
  const Tensor a = k.input(0), b = k.input(1), out = k.output(0);
  n->type = a.type();
  n->type1 = b.type();
  n->out_type = out.type();
  // The int16x8 PRELU has an INT8 alpha.
  const bool int16x8_prelu = n->code == KILN_OP_PRELU &&
                             n->type == KILN_TYPE_INT16 &&
                             n->type1 == KILN_TYPE_INT8;
  if (b.type() != n->type && !int16x8_prelu) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, n->op, ": input 1 '", b.name(),
                  "' has type ", sdk::TypeName(b.type()), " but input 0 '",
                  a.name(), "' has type ", sdk::TypeName(n->type),
                  "; they must have the same type");
  }
  QuantizedTypeRange(n->out_type, &n->qmin, &n->qmax);
  // MAXIMUM/MINIMUM and some int16 comparisons compare stored codes:
  // LiteRT reads no quantization for them.
  if (n->code == KILN_OP_MAXIMUM || n->code == KILN_OP_MINIMUM ||
      RawInt16Comparison(*n)) {
    return KILN_STATUS_OK;
  }
  KILN_SDK_RETURN_IF_ERROR(ReadAffine(k, sdk::Input(0), &n->a));
  KILN_SDK_RETURN_IF_ERROR(ReadAffine(k, sdk::Input(1), &n->b));
  if (IsComparison(n->code)) return KILN_STATUS_OK;
  return ReadAffine(k, sdk::Output(0), &n->out);
}

// ---- Element functions ------------------------------------------------------

int32_t Clamp(const QuantizedBinaryState& s, int32_t v) {
  return std::min(s.act_max, std::max(s.act_min, v));  // LiteRT's order
}

int32_t AddSub(const QuantizedBinaryState& s, int32_t x, int32_t y) {
  const int32_t sx = MultiplyByQuantizedMultiplierSmallerThanOne(
      (s.offset0 + x) * (1 << s.left_shift), s.multiplier0);
  const int32_t sy = MultiplyByQuantizedMultiplierSmallerThanOne(
      (s.offset1 + y) * (1 << s.left_shift), s.multiplier1);
  const int32_t raw = s.subtract ? sx - sy : sx + sy;
  return Clamp(
      s, MultiplyByQuantizedMultiplierSmallerThanOne(raw, s.output_multiplier) +
             s.output_offset);
}

int32_t SaturateInt16(int32_t v) {
  return std::min<int32_t>(32767, std::max<int32_t>(-32768, v));
}

int32_t AddSubPot16(const QuantizedBinaryState& s, int32_t x, int32_t y) {
  const int32_t sx = RoundingDivideByPOT(x, s.pot_shift0);
  const int32_t sy = RoundingDivideByPOT(y, s.pot_shift1);
  return Clamp(s, SaturateInt16(s.subtract ? sx - sy : sx + sy));
}

int32_t Mul(const QuantizedBinaryState& s, int32_t x, int32_t y) {
  return Clamp(s, s.output_offset + MultiplyByQuantizedMultiplier(
                                        (s.offset0 + x) * (s.offset1 + y),
                                        s.output_multiplier));
}

// gemmlowp's int16 Q0.15 product, rounded by 2^8 onto the 8-bit output.
int32_t MulInt16ToNarrow(const QuantizedBinaryState& s, int32_t x, int32_t y) {
  int32_t product;
  if (x == y && x == -32768) {
    product = 32767;
  } else {
    const int32_t ab = x * y;
    product = (ab + (ab >= 0 ? (1 << 14) : (1 - (1 << 14)))) / (1 << 15);
  }
  const int32_t rescaled = RoundingDivideByPOT(product, 8);
  const int32_t clamped =
      std::max(s.act_min - s.output_offset,
               std::min(s.act_max - s.output_offset, rescaled));
  return s.output_offset + clamped;
}

int32_t SquaredDifference(const QuantizedBinaryState& s, int32_t x, int32_t y) {
  const int32_t sx = MultiplyByQuantizedMultiplierSmallerThanOne(
      (s.offset0 + x) * (1 << s.left_shift), s.multiplier0);
  const int32_t sy = MultiplyByQuantizedMultiplierSmallerThanOne(
      (s.offset1 + y) * (1 << s.left_shift), s.multiplier1);
  const int32_t diff = sx - sy;
  return Clamp(s, MultiplyByQuantizedMultiplierSmallerThanOne(
                      diff * diff, s.output_multiplier) +
                      s.output_offset);
}

int32_t Prelu(const QuantizedBinaryState& s, int32_t x, int32_t alpha) {
  const int32_t v = s.offset0 + x;
  const int32_t r = v >= 0 ? MultiplyByQuantizedMultiplier(v, s.multiplier0)
                           : MultiplyByQuantizedMultiplier(
                                 v * (s.offset1 + alpha), s.multiplier1);
  return Clamp(s, r + s.output_offset);
}

// gemmlowp's RoundingDivideByPOT as LiteRT's x86 build computes it for any
// exponent (DIV's can leave [0, 31]): the mask is the low 32 bits of
// 2^(e mod 64) - 1 and the shift counts e mod 32.
int32_t RoundingDivideByPotLikeX86(int32_t x, int32_t exponent) {
  const uint64_t wide_mask =
      (uint64_t{1} << (static_cast<uint32_t>(exponent) & 63u)) - 1;
  const int32_t mask = static_cast<int32_t>(static_cast<uint32_t>(wide_mask));
  const int32_t remainder = x & mask;
  const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> (static_cast<uint32_t>(exponent) & 31u)) +
         (remainder > threshold ? 1 : 0);
}

// LiteRT's DivElementwise: the quotient through GetReciprocal of the
// divisor, normalised by the dividend's headroom.
int32_t Div(const QuantizedBinaryState& s, int32_t x, int32_t y) {
  int32_t dividend = s.offset0 + x;
  int32_t divisor = s.offset1 + y;
  if (divisor < 0) {
    dividend = -dividend;
    divisor = -divisor;
  }
  int recip_shift = 0;
  const int32_t reciprocal = GetReciprocal(divisor, 31, &recip_shift);
  const int headroom = CountLeadingSignBits32(dividend);
  const int32_t unscaled = MultiplyByQuantizedMultiplierGreaterThanOne(
      dividend, QuantizedMultiplier{reciprocal, headroom});
  const int32_t total_shift =
      s.output_multiplier.shift - recip_shift - headroom;
  const int32_t quotient =
      RoundingDivideByPotLikeX86(SaturatingRoundingDoublingHighMul(
                                     unscaled, s.output_multiplier.multiplier),
                                 -total_shift);
  return Clamp(s, s.output_offset + quotient);
}

// LiteRT refuses a quantized DIV whose divisor holds a real 0 (its zero
// point) anywhere.
template <typename T>
KilnStatus ExpectNonZeroDivisor(KernelContext& k, int32_t zero_point) {
  const Tensor b = k.input(1);
  const T* pb = b.data<T>();
  const int64_t n = b.num_elements();
  for (int64_t i = 0; i < n; ++i) {
    if (pb[i] == zero_point) {
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT,
                    "DIV: input 1 holds 0 (its zero point ", zero_point,
                    ") at element ", i, "; division by zero");
    }
  }
  return KILN_STATUS_OK;
}

// An 8-bit input on the comparisons' common scale.
int32_t CompareValue(int32_t offset, const QuantizedMultiplier& m,
                     int32_t left_shift, int32_t x) {
  return MultiplyByQuantizedMultiplierSmallerThanOne(
      (offset + x) * (1 << left_shift), m);
}

template <typename In, typename Out, typename In1 = In, typename Fn>
KilnStatus Run(KernelContext& k, const BroadcastPlan& plan, Fn&& fn) {
  const Tensor a = k.input(0), b = k.input(1), out = k.output(0);
  const In* pa = a.data<In>();
  const In1* pb = b.data<In1>();
  Out* po = out.data<Out>();
  if (plan.total > 0 && (pa == nullptr || pb == nullptr || po == nullptr)) {
    return k.Fail(KILN_STATUS_FAILED_PRECONDITION, OpName(k.builtin_code()),
                  ": a tensor has no data buffer at invoke");
  }
  BroadcastBinary(plan, pa, pb, po, [&fn](In x, In1 y) {
    return static_cast<Out>(fn(int32_t{x}, int32_t{y}));
  });
  return KILN_STATUS_OK;
}

template <typename In>
KilnStatus RunCompare(KernelContext& k, const QuantizedBinaryState& s,
                      const BroadcastPlan& plan) {
  const int32_t code = k.builtin_code();
  const bool scaled = s.kind == Kind::kCompare;
  return Run<In, uint8_t>(k, plan, [&](int32_t x, int32_t y) {
    if (scaled) {
      x = CompareValue(s.offset0, s.multiplier0, s.left_shift, x);
      y = CompareValue(s.offset1, s.multiplier1, s.left_shift, y);
    }
    switch (code) {
      case KILN_OP_LESS:
        return x < y;
      case KILN_OP_LESS_EQUAL:
        return x <= y;
      case KILN_OP_GREATER:
        return x > y;
      case KILN_OP_GREATER_EQUAL:
        return x >= y;
      case KILN_OP_EQUAL:
        return x == y;
      default:
        return x != y;
    }
  });
}

// ---- Vectorized 8-bit rows -------------------------------------------------

const QuantizedBinaryRowKernels& RowKernels() {
  static const QuantizedBinaryRowKernels kernels =
      QuantizedBinaryRowKernelsAvx2();
  return kernels;
}

// True when a right shift by -q.shift is one the row kernels take.
bool SmallerThanOneInRange(const QuantizedMultiplier& q) {
  return q.shift <= 0 && q.shift >= -31;
}

// The row kernels reproduce the scalar arithmetic of 8-bit ADD / SUB, MUL
// and SQUARED_DIFFERENCE whose shifts all lie in [0, 31].
bool VectorRowsApply(const QuantizedBinaryState& s) {
  if (s.input_type != s.output_type || s.input_type == KILN_TYPE_INT16) {
    return false;
  }
  switch (s.kind) {
    case Kind::kMul:
      return s.output_multiplier.shift >= -31 &&
             s.output_multiplier.shift <= 31;
    case Kind::kAddSub:
    case Kind::kSquaredDifference:
      return s.left_shift >= 0 && s.left_shift <= 31 &&
             SmallerThanOneInRange(s.multiplier0) &&
             SmallerThanOneInRange(s.multiplier1) &&
             SmallerThanOneInRange(s.output_multiplier);
    default:
      return false;
  }
}

// The scalar element function of a kind VectorRowsApply takes.
int32_t VectorKindScalar(const QuantizedBinaryState& s, int32_t x, int32_t y) {
  switch (s.kind) {
    case Kind::kMul:
      return Mul(s, x, y);
    case Kind::kSquaredDifference:
      return SquaredDifference(s, x, y);
    default:
      return AddSub(s, x, y);
  }
}

// Every broadcast row through `row`, its tail through the scalar function.
template <typename T>
KilnStatus RunVectorRows(KernelContext& k, const QuantizedBinaryState& s,
                         const BroadcastPlan& plan, QuantizedBinaryRowFn row) {
  const T* a = k.input(0).data<T>();
  const T* b = k.input(1).data<T>();
  T* out = k.output(0).data<T>();
  if (plan.total > 0 && (a == nullptr || b == nullptr || out == nullptr)) {
    return k.Fail(KILN_STATUS_FAILED_PRECONDITION, OpName(k.builtin_code()),
                  ": a tensor has no data buffer at invoke");
  }
  const int64_t sa = plan.inner_stride(0), sb = plan.inner_stride(1);
  ForEachBroadcastRow(plan, [&](int64_t o, const int64_t* off, int64_t n) {
    const T* pa = a + off[0];
    const T* pb = b + off[1];
    T* po = out + o;
    for (int64_t i = row(s, pa, sa, pb, sb, po, n); i < n; ++i) {
      po[i] = static_cast<T>(
          VectorKindScalar(s, int32_t{pa[i * sa]}, int32_t{pb[i * sb]}));
    }
  });
  return KILN_STATUS_OK;
}

template <typename In, typename Out>
KilnStatus RunArithmetic(KernelContext& k, const QuantizedBinaryState& s,
                         const BroadcastPlan& plan) {
  if constexpr (std::is_same_v<In, Out> && sizeof(In) == 1) {
    const QuantizedBinaryRowFn row =
        std::is_same_v<In, int8_t> ? RowKernels().int8 : RowKernels().uint8;
    if (row != nullptr && VectorRowsApply(s)) {
      return RunVectorRows<In>(k, s, plan, row);
    }
  }
  switch (s.kind) {
    case Kind::kAddSub:
      return Run<In, Out>(
          k, plan, [&s](int32_t x, int32_t y) { return AddSub(s, x, y); });
    case Kind::kAddSubPot16:
      return Run<In, Out>(
          k, plan, [&s](int32_t x, int32_t y) { return AddSubPot16(s, x, y); });
    case Kind::kMul:
      return Run<In, Out>(k, plan,
                          [&s](int32_t x, int32_t y) { return Mul(s, x, y); });
    case Kind::kMulInt16ToNarrow:
      return Run<In, Out>(k, plan, [&s](int32_t x, int32_t y) {
        return MulInt16ToNarrow(s, x, y);
      });
    case Kind::kSquaredDifference:
      return Run<In, Out>(k, plan, [&s](int32_t x, int32_t y) {
        return SquaredDifference(s, x, y);
      });
    case Kind::kPrelu: {
      const auto prelu = [&s](int32_t x, int32_t y) { return Prelu(s, x, y); };
      if (s.input1_type == KILN_TYPE_INT8) {
        return Run<In, Out, int8_t>(k, plan, prelu);
      }
      return Run<In, Out>(k, plan, prelu);
    }
    case Kind::kDiv:
      KILN_SDK_RETURN_IF_ERROR(ExpectNonZeroDivisor<In>(k, -s.offset1));
      return Run<In, Out>(k, plan,
                          [&s](int32_t x, int32_t y) { return Div(s, x, y); });
    default:  // kRaw: MAXIMUM / MINIMUM
      return Run<In, Out>(k, plan, [&s](int32_t x, int32_t y) {
        return s.maximum ? (x > y ? x : y) : (x < y ? x : y);
      });
  }
}

template <typename In>
KilnStatus RunForInput(KernelContext& k, const QuantizedBinaryState& s,
                       const BroadcastPlan& plan) {
  if (IsComparison(k.builtin_code())) return RunCompare<In>(k, s, plan);
  switch (s.output_type) {
    case KILN_TYPE_UINT8:
      return RunArithmetic<In, uint8_t>(k, s, plan);
    case KILN_TYPE_INT8:
      return RunArithmetic<In, int8_t>(k, s, plan);
    default:
      return RunArithmetic<In, int16_t>(k, s, plan);
  }
}

}  // namespace

bool IsQuantizedBinaryType(KilnTensorType type) {
  return type == KILN_TYPE_UINT8 || type == KILN_TYPE_INT8 ||
         type == KILN_TYPE_INT16;
}

KilnStatus PrepareQuantizedBinary(KernelContext& k,
                                  QuantizedBinaryState* state) {
  BinaryNode n;
  KILN_SDK_RETURN_IF_ERROR(ReadNode(k, &n));
  *state = QuantizedBinaryState{};
  state->input_type = n.type;
  state->input1_type = n.type1;
  state->output_type = n.out_type;
  switch (n.code) {
    case KILN_OP_ADD:
    case KILN_OP_SUB:
      return PrepareAddSubNode(k, n, state);
    case KILN_OP_MUL:
      return PrepareMul(k, n, state);
    case KILN_OP_SQUARED_DIFFERENCE:
      return PrepareSquaredDifference(k, n, state);
    case KILN_OP_MAXIMUM:
    case KILN_OP_MINIMUM:
      KILN_SDK_RETURN_IF_ERROR(ExpectOutputOfInputType(k, n));
      state->kind = Kind::kRaw;
      state->maximum = n.code == KILN_OP_MAXIMUM;
      return KILN_STATUS_OK;
    case KILN_OP_PRELU:
      return PreparePrelu(k, n, state);
    case KILN_OP_DIV:
      return PrepareDiv(k, n, state);
    default:
      if (IsComparison(n.code)) return PrepareCompare(k, n, state);
      return Refuse(k, n, "no quantized kernel for this op");
  }
}

KilnStatus InvokeQuantizedBinary(KernelContext& k,
                                 const QuantizedBinaryState& state,
                                 const BroadcastPlan& plan) {
  switch (state.input_type) {
    case KILN_TYPE_UINT8:
      return RunForInput<uint8_t>(k, state, plan);
    case KILN_TYPE_INT8:
      return RunForInput<int8_t>(k, state, plan);
    default:
      return RunForInput<int16_t>(k, state, plan);
  }
}

}  // namespace kiln::cpu::elementwise
