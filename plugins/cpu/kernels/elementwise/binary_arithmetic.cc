// Binary arithmetic with NumPy broadcasting (rank <= 6): ADD SUB MUL DIV
// SQUARED_DIFFERENCE MAXIMUM MINIMUM POW FLOOR_DIV FLOOR_MOD ATAN2 PRELU.
//
// Prepare validates types and shapes, plans the broadcast once (node state)
// and sizes the output; invoke runs tight row loops over the plan and applies
// the fused activation in a second pass. Kernels dispatch on tensor types;
// op versions only gate which nodes reach them.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/activation.h"
#include "kernels/broadcast.h"
#include "kernels/elementwise/elementwise_common.h"
#include "kernels/quantization_util.h"
#include "kernels/registry.h"

namespace kiln::cpu {
namespace {

using sdk::Input;
using sdk::KernelContext;
using sdk::Output;
using sdk::Tensor;
using sdk::TypeSet;

constexpr TypeSet kFloatIntTypes{KILN_TYPE_FLOAT32, KILN_TYPE_INT32,
                                 KILN_TYPE_INT64};
constexpr TypeSet kFloatInt32Types{KILN_TYPE_FLOAT32, KILN_TYPE_INT32};
constexpr TypeSet kFloatTypes{KILN_TYPE_FLOAT32};

// Integer arithmetic wraps (two's complement) instead of overflowing into
// undefined behaviour, matching what TFLite's kernels produce in practice.
template <typename T>
T WrapAdd(T x, T y) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(x) + static_cast<U>(y));
}
template <typename T>
T WrapSub(T x, T y) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(x) - static_cast<U>(y));
}
template <typename T>
T WrapMul(T x, T y) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(x) * static_cast<U>(y));
}
// Truncating division with y != 0; lowest() / -1 wraps to lowest().
template <typename T>
T TruncDiv(T x, T y) {
  if (y == T(-1)) return WrapSub(T(0), x);
  return x / y;
}
template <typename T>
T TruncMod(T x, T y) {
  if (y == T(-1)) return T(0);
  return x % y;
}

// What invoke must check on input 1 before computing.
enum class OperandCheck {
  kNone,
  kNonZeroIntegerDivisor,  // integer types only
  kNonZeroDivisor,         // every type, float included
  kNonNegativeIntExp,      // integer types only
};

struct AddOp {
  static constexpr TypeSet kTypes = kFloatIntTypes;
  static constexpr bool kFusedActivation = true;
  static constexpr OperandCheck kCheck = OperandCheck::kNone;
  template <typename T>
  static T Apply(T x, T y) {
    if constexpr (std::is_integral_v<T>) return WrapAdd(x, y);
    return x + y;
  }
};

struct SubOp {
  static constexpr TypeSet kTypes = kFloatIntTypes;
  static constexpr bool kFusedActivation = true;
  static constexpr OperandCheck kCheck = OperandCheck::kNone;
  template <typename T>
  static T Apply(T x, T y) {
    if constexpr (std::is_integral_v<T>) return WrapSub(x, y);
    return x - y;
  }
};

struct MulOp {
  static constexpr TypeSet kTypes = kFloatIntTypes;
  static constexpr bool kFusedActivation = true;
  static constexpr OperandCheck kCheck = OperandCheck::kNone;
  template <typename T>
  static T Apply(T x, T y) {
    if constexpr (std::is_integral_v<T>) return WrapMul(x, y);
    return x * y;
  }
};

// Float division follows IEEE (x/0 = +-inf, 0/0 = NaN); integer division
// truncates and a zero divisor fails the invoke, as in TFLite.
struct DivOp {
  static constexpr TypeSet kTypes = kFloatInt32Types;
  static constexpr bool kFusedActivation = true;
  static constexpr OperandCheck kCheck = OperandCheck::kNonZeroIntegerDivisor;
  template <typename T>
  static T Apply(T x, T y) {
    if constexpr (std::is_integral_v<T>) return TruncDiv(x, y);
    return x / y;
  }
};

struct SquaredDifferenceOp {
  static constexpr TypeSet kTypes = kFloatInt32Types;
  static constexpr bool kFusedActivation = false;
  static constexpr OperandCheck kCheck = OperandCheck::kNone;
  template <typename T>
  static T Apply(T x, T y) {
    if constexpr (std::is_integral_v<T>) {
      const T d = WrapSub(x, y);
      return WrapMul(d, d);
    }
    const T d = x - y;
    return d * d;
  }
};

// As TFLite: x > y ? x : y (a NaN in x yields y).
struct MaximumOp {
  static constexpr TypeSet kTypes = kFloatIntTypes;
  static constexpr bool kFusedActivation = false;
  static constexpr OperandCheck kCheck = OperandCheck::kNone;
  template <typename T>
  static T Apply(T x, T y) {
    return x > y ? x : y;
  }
};

struct MinimumOp {
  static constexpr TypeSet kTypes = kFloatIntTypes;
  static constexpr bool kFusedActivation = false;
  static constexpr OperandCheck kCheck = OperandCheck::kNone;
  template <typename T>
  static T Apply(T x, T y) {
    return x < y ? x : y;
  }
};

// Float: std::pow. INT32: exact integer power (wrapping); a negative exponent
// fails the invoke, as in TFLite.
struct PowOp {
  static constexpr TypeSet kTypes = kFloatInt32Types;
  static constexpr bool kFusedActivation = false;
  static constexpr OperandCheck kCheck = OperandCheck::kNonNegativeIntExp;
  template <typename T>
  static T Apply(T x, T y) {
    if constexpr (std::is_integral_v<T>) {
      T result = 1;
      T base = x;
      for (T e = y; e > 0; e >>= 1) {
        if (e & 1) result = WrapMul(result, base);
        base = WrapMul(base, base);
      }
      return result;
    }
    return std::pow(x, y);
  }
};

// floor(x / y). A zero divisor fails the invoke for every type, float
// included, as in TFLite (whose kernel validates the whole denominator).
struct FloorDivOp {
  static constexpr TypeSet kTypes = kFloatIntTypes;
  static constexpr bool kFusedActivation = false;
  static constexpr OperandCheck kCheck = OperandCheck::kNonZeroDivisor;
  template <typename T>
  static T Apply(T x, T y) {
    if constexpr (std::is_integral_v<T>) {
      const T q = TruncDiv(x, y);
      const T r = TruncMod(x, y);
      return (r != 0 && ((r < 0) != (y < 0))) ? static_cast<T>(q - 1) : q;
    }
    return std::floor(x / y);
  }
};

// x - floor(x / y) * y: the result takes the sign of y (Python/TFLite).
// Float: NaN for y == 0. Integer: a zero divisor fails.
struct FloorModOp {
  static constexpr TypeSet kTypes = kFloatIntTypes;
  static constexpr bool kFusedActivation = false;
  static constexpr OperandCheck kCheck = OperandCheck::kNonZeroIntegerDivisor;
  template <typename T>
  static T Apply(T x, T y) {
    T r;
    if constexpr (std::is_integral_v<T>) {
      r = TruncMod(x, y);
    } else {
      r = std::fmod(x, y);
    }
    return (r != 0 && ((r < 0) != (y < 0))) ? static_cast<T>(r + y) : r;
  }
};

// atan2(input 0, input 1), i.e. atan2(y, x).
struct Atan2Op {
  static constexpr TypeSet kTypes = kFloatTypes;
  static constexpr bool kFusedActivation = false;
  static constexpr OperandCheck kCheck = OperandCheck::kNone;
  template <typename T>
  static T Apply(T y, T x) {
    return std::atan2(y, x);
  }
};

// x >= 0 ? x : alpha * x, alpha (input 1) broadcast against x.
struct PreluOp {
  static constexpr TypeSet kTypes = kFloatTypes;
  static constexpr bool kFusedActivation = false;
  static constexpr OperandCheck kCheck = OperandCheck::kNone;
  template <typename T>
  static T Apply(T x, T alpha) {
    return x >= 0 ? x : alpha * x;
  }
};

// Requantization parameters of quantized ADD (UINT8/INT8), derived in
// prepare from the tensors' scales and zero points as TFLite's add.cc does:
// both inputs are offset, shifted left by kLeftShift, rescaled to twice the
// larger input scale, summed and rescaled to the output scale.
struct QuantizedAddParams {
  static constexpr int32_t kLeftShift = 20;
  int32_t input0_offset = 0, input1_offset = 0, output_offset = 0;
  QuantizedMultiplier input0_multiplier, input1_multiplier, output_multiplier;
  int32_t activation_min = 0, activation_max = 0;
};

struct BinaryState {
  BroadcastPlan plan;
  KilnTensorType type = KILN_TYPE_FLOAT32;
  int64_t activation = KILN_ACTIVATION_NONE;
  QuantizedAddParams quantized;  // set only for UINT8/INT8 ADD
};

// Prepare of UINT8/INT8 ADD: both inputs and the output share the type
// (checked by the caller); fused activation must be a clamp.
KilnStatus QuantizedAddPrepare(KernelContext& k, BinaryState& state) {
  sdk::TensorQuantization qa, qb, qout;
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ReadQuantization(k, Input(0), sdk::kPerTensor, &qa));
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ReadQuantization(k, Input(1), sdk::kPerTensor, &qb));
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ReadQuantization(k, Output(0), sdk::kPerTensor, &qout));
  const float scale_a = qa.scales[0], scale_b = qb.scales[0];
  const float scale_out = qout.scales[0];
  const int32_t zp_a = qa.zero_points[0], zp_b = qb.zero_points[0];
  const int32_t zp_out = qout.zero_points[0];
  int64_t act = KILN_ACTIVATION_NONE;
  KILN_SDK_RETURN_IF_ERROR(sdk::ReadFusedActivation(k, state.type, &act));
  const bool is_uint8 = state.type == KILN_TYPE_UINT8;
  const int32_t qmin = is_uint8 ? 0 : -128, qmax = is_uint8 ? 255 : 127;
  QuantizedAddParams& p = state.quantized;
  if (!QuantizedActivationRange(act, scale_out, zp_out, qmin, qmax,
                                &p.activation_min, &p.activation_max)) {
    return k.Fail(KILN_STATUS_INTERNAL,
                  "ADD: no quantized range for fused "
                  "activation ",
                  sdk::ActivationName(act));
  }
  state.activation = act;
  p.input0_offset = -zp_a;
  p.input1_offset = -zp_b;
  p.output_offset = zp_out;
  const double twice_max_input_scale =
      2.0 * static_cast<double>(std::max(scale_a, scale_b));
  p.input0_multiplier =
      QuantizeMultiplier(static_cast<double>(scale_a) / twice_max_input_scale);
  p.input1_multiplier =
      QuantizeMultiplier(static_cast<double>(scale_b) / twice_max_input_scale);
  const double real_output_multiplier =
      twice_max_input_scale /
      (static_cast<double>(1 << QuantizedAddParams::kLeftShift) *
       static_cast<double>(scale_out));
  p.output_multiplier = QuantizeMultiplier(real_output_multiplier);
  if (p.output_multiplier.shift > 0) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, sdk::Describe(k, Output(0)),
                  " has scale ", scale_out, ", too small for inputs of scale ",
                  scale_a, " and ", scale_b,
                  " (the output rescale factor must be below 1); requantize "
                  "the model");
  }
  return elementwise::PrepareBroadcast(k, 2, &state.plan);
}

template <typename T>
KilnStatus RunQuantizedAdd(KernelContext& k, const BinaryState& state) {
  const T *pa = nullptr, *pb = nullptr;
  T* po = nullptr;
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, Input(0), &pa));
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, Input(1), &pb));
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, Output(0), &po));
  const QuantizedAddParams& p = state.quantized;
  BroadcastBinary(state.plan, pa, pb, po, [&p](T x, T y) {
    constexpr int32_t kScale = 1 << QuantizedAddParams::kLeftShift;
    const int32_t shifted_x = (p.input0_offset + x) * kScale;
    const int32_t shifted_y = (p.input1_offset + y) * kScale;
    const int32_t sum = MultiplyByQuantizedMultiplierSmallerThanOne(
                            shifted_x, p.input0_multiplier) +
                        MultiplyByQuantizedMultiplierSmallerThanOne(
                            shifted_y, p.input1_multiplier);
    const int32_t result =
        MultiplyByQuantizedMultiplierSmallerThanOne(sum, p.output_multiplier) +
        p.output_offset;
    return static_cast<T>(
        std::min(p.activation_max, std::max(p.activation_min, result)));
  });
  return KILN_STATUS_OK;
}

template <typename Op>
KilnStatus BinaryPrepare(KernelContext& k, BinaryState& state) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectArity(k, 2, 1));
  const KilnTensorType type = k.input(0).type();
  constexpr bool kQuantizedAdd = std::is_same_v<Op, AddOp>;
  if (!(kQuantizedAdd && (type == KILN_TYPE_UINT8 || type == KILN_TYPE_INT8))) {
    KILN_SDK_RETURN_IF_ERROR(sdk::ExpectType(k, Input(0), Op::kTypes));
  }
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectSameType(k, Input(1), Input(0)));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectSameType(k, Output(0), Input(0)));
  state.type = type;
  if (type == KILN_TYPE_UINT8 || type == KILN_TYPE_INT8) {
    return QuantizedAddPrepare(k, state);
  }
  state.activation = KILN_ACTIVATION_NONE;
  if constexpr (Op::kFusedActivation) {
    KILN_SDK_RETURN_IF_ERROR(
        sdk::ReadFusedActivation(k, state.type, &state.activation));
  }
  return elementwise::PrepareBroadcast(k, 2, &state.plan);
}

template <typename Op, typename T>
KilnStatus RunBinary(KernelContext& k, const BinaryState& state) {
  const T *pa = nullptr, *pb = nullptr;
  T* po = nullptr;
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, Input(0), &pa));
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, Input(1), &pb));
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, Output(0), &po));
  constexpr bool kIntegral = std::is_integral_v<T>;
  constexpr bool kCheckZero =
      Op::kCheck == OperandCheck::kNonZeroDivisor ||
      (kIntegral && Op::kCheck == OperandCheck::kNonZeroIntegerDivisor);
  constexpr bool kCheckNegative =
      kIntegral && Op::kCheck == OperandCheck::kNonNegativeIntExp;
  if constexpr (kCheckZero || kCheckNegative) {
    const int64_t n = k.input(1).num_elements();
    for (int64_t i = 0; i < n; ++i) {
      if (kCheckZero && pb[i] == T(0)) {
        return k.Fail(KILN_STATUS_INVALID_ARGUMENT, sdk::Describe(k, Input(1)),
                      " holds 0 at element ", i,
                      kIntegral ? "; integer division by zero is undefined"
                                : "; FLOOR_DIV refuses a zero divisor");
      }
      if (kCheckNegative && pb[i] < T(0)) {
        return k.Fail(KILN_STATUS_INVALID_ARGUMENT, sdk::Describe(k, Input(1)),
                      " holds ", static_cast<int64_t>(pb[i]), " at element ", i,
                      "; integer POW needs non-negative exponents");
      }
    }
  }
  BroadcastBinary(state.plan, pa, pb, po,
                  [](T x, T y) { return Op::template Apply<T>(x, y); });
  if constexpr (Op::kFusedActivation) {
    ApplyActivationInPlace<T>(state.activation, po, state.plan.total);
  }
  return KILN_STATUS_OK;
}

template <typename Op>
KilnStatus BinaryInvoke(KernelContext& k, BinaryState& state) {
  switch (state.type) {
    case KILN_TYPE_FLOAT32:
      return RunBinary<Op, float>(k, state);
    case KILN_TYPE_INT32:
      if constexpr (Op::kTypes.contains(KILN_TYPE_INT32)) {
        return RunBinary<Op, int32_t>(k, state);
      }
      break;
    case KILN_TYPE_INT64:
      if constexpr (Op::kTypes.contains(KILN_TYPE_INT64)) {
        return RunBinary<Op, int64_t>(k, state);
      }
      break;
    case KILN_TYPE_UINT8:
      if constexpr (std::is_same_v<Op, AddOp>) {
        return RunQuantizedAdd<uint8_t>(k, state);
      }
      break;
    case KILN_TYPE_INT8:
      if constexpr (std::is_same_v<Op, AddOp>) {
        return RunQuantizedAdd<int8_t>(k, state);
      }
      break;
    default:
      break;
  }
  return k.Fail(KILN_STATUS_INTERNAL, sdk::OpName(k), ": invoke reached type ",
                sdk::TypeName(state.type), " that prepare did not accept");
}

template <typename Op>
void Register(sdk::PluginDefinition& def, int32_t code,
              std::initializer_list<elementwise::VersionRange> ranges) {
  elementwise::AddStatefulKernelForVersions<BinaryState, BinaryPrepare<Op>,
                                            BinaryInvoke<Op>>(def, code,
                                                              ranges);
}

}  // namespace

void RegisterBinaryArithmetic(sdk::PluginDefinition& def) {
  // Version meanings per TFLite's op_version.cc. Versions that add only
  // types these kernels do not implement (quantized int8/int16, complex,
  // uint32) are not claimed; v1 is claimed by every op here although it also
  // covers quantized uint8, because converters write v1 for every float
  // model (ADD implements uint8; the other ops refuse it in prepare).
  // ADD: v1 float32/int32/quantized uint8, v2 quantized int8, v4 int64.
  // Not 3 (int16 quantized), 5 (int16).
  Register<AddOp>(def, KILN_OP_ADD, {{1, 2}, {4, 4}});
  // SUB: v1 float32/int32, v3 5-D broadcast, v4 int64. Not 2 (int8), 5.
  Register<SubOp>(def, KILN_OP_SUB, {{1, 1}, {3, 4}});
  // MUL: v1 float32/int32, v5 int64. Not 2-4 (quantized), 6 (complex64),
  // 7 (int16/uint32).
  Register<MulOp>(def, KILN_OP_MUL, {{1, 1}, {5, 5}});
  // DIV: v1 float32/int32, v2 5-D broadcast; the newest version.
  Register<DivOp>(def, KILN_OP_DIV, {{1, 2}});
  // SQUARED_DIFFERENCE: v1 float32/int32. Not 2 (int8).
  Register<SquaredDifferenceOp>(def, KILN_OP_SQUARED_DIFFERENCE, {{1, 1}});
  // MAXIMUM/MINIMUM: v1 float32/int32/int64, v3 5-D broadcast. Not 2
  // (int8), 4 (int16).
  Register<MaximumOp>(def, KILN_OP_MAXIMUM, {{1, 1}, {3, 3}});
  Register<MinimumOp>(def, KILN_OP_MINIMUM, {{1, 1}, {3, 3}});
  // POW: only v1 exists (float32, int32).
  Register<PowOp>(def, KILN_OP_POW, {{1, 1}});
  // FLOOR_DIV: v1 int32 (int64 too here), v2 float32. Not 3 (int8/int16).
  Register<FloorDivOp>(def, KILN_OP_FLOOR_DIV, {{1, 2}});
  // FLOOR_MOD: v1 float32/int32/int64. Not 2 (int8/int16).
  Register<FloorModOp>(def, KILN_OP_FLOOR_MOD, {{1, 1}});
  // ATAN2: only v1 exists (float32 here; float64 refused).
  Register<Atan2Op>(def, KILN_OP_ATAN2, {{1, 1}});
  // PRELU: only v1 exists (float32 here; quantized refused).
  Register<PreluOp>(def, KILN_OP_PRELU, {{1, 1}});
}

}  // namespace kiln::cpu
