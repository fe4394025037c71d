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
#include "kernels/elementwise/binary_float.h"
#include "kernels/elementwise/elementwise_common.h"
#include "kernels/elementwise/quantized_binary.h"
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
// FLOOR_DIV / FLOOR_MOD: LiteRT divides INT8 / INT16 stored values as
// integers (no requantization).
constexpr TypeSet kFloorTypes{KILN_TYPE_FLOAT32, KILN_TYPE_INT32,
                              KILN_TYPE_INT64, KILN_TYPE_INT8, KILN_TYPE_INT16};
constexpr TypeSet kFloatTypes{KILN_TYPE_FLOAT32};
constexpr TypeSet kQuantizedTypes{KILN_TYPE_UINT8, KILN_TYPE_INT8,
                                  KILN_TYPE_INT16};

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
  static constexpr TypeSet kTypes = kFloorTypes;
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
  static constexpr TypeSet kTypes = kFloorTypes;
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

struct BinaryState {
  BroadcastPlan plan;
  KilnTensorType type = KILN_TYPE_FLOAT32;
  int64_t activation = KILN_ACTIVATION_NONE;
  bool is_quantized = false;  // UINT8 / INT8 / INT16 inputs
  elementwise::QuantizedBinaryState quantized;
};

// The ops with quantized kernels (kernels/elementwise/quantized_binary.h).
template <typename Op>
constexpr bool kHasQuantizedKernel =
    std::is_same_v<Op, AddOp> || std::is_same_v<Op, SubOp> ||
    std::is_same_v<Op, MulOp> || std::is_same_v<Op, SquaredDifferenceOp> ||
    std::is_same_v<Op, MaximumOp> || std::is_same_v<Op, MinimumOp> ||
    std::is_same_v<Op, PreluOp> || std::is_same_v<Op, DivOp>;

// The ops whose LiteRT prepare gives the output input 1's type
// (`output->type = input2->type` in add.cc, sub.cc, div.cc and
// squared_difference.cc), whatever type the model declares for it: a
// quantized ADD whose output the model declares FLOAT32 writes its input
// type (tflite-testdata/add_quantized.bin). MUL and the others keep the
// declared type.
template <typename Op>
constexpr bool kOutputTakesInputType =
    std::is_same_v<Op, AddOp> || std::is_same_v<Op, SubOp> ||
    std::is_same_v<Op, DivOp> || std::is_same_v<Op, SquaredDifferenceOp>;

// Gives the output input 1's type, as LiteRT's prepare does (see
// kOutputTakesInputType), when the inputs agree and the model declares
// another type for it (KilnHostApi.tensor_set_type, extension API 1.2).
KilnStatus TakeInputTypeForOutput(KernelContext& k) {
  const KilnTensorType type = k.input(1).type();
  if (k.input(0).type() != type || k.output(0).type() == type) {
    return KILN_STATUS_OK;  // mismatched inputs are refused by the checks
  }
  return k.SetType(k.output(0), type);
}

// The fused activation as LiteRT's arithmetic kernels apply it: RELU,
// RELU_N1_TO_1 and RELU6 clamp; TANH and SIGN_BIT are ignored for every
// output type (CalculateActivationRange leaves the full range).
KilnStatus ReadClampOnlyActivation(KernelContext& k, int64_t* activation) {
  *activation = k.OptionInt(KILN_OPTION_FUSED_ACTIVATION, KILN_ACTIVATION_NONE);
  if (!sdk::IsKnownActivation(*activation)) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, sdk::OpName(k),
                  " has unknown fused activation ", *activation,
                  "; expected NONE, RELU, RELU_N1_TO_1, RELU6, TANH or "
                  "SIGN_BIT");
  }
  if (!sdk::IsClampActivation(*activation)) *activation = KILN_ACTIVATION_NONE;
  return KILN_STATUS_OK;
}

template <typename Op>
KilnStatus BinaryPrepare(KernelContext& k, BinaryState& state) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectArity(k, 2, 1));
  if constexpr (kOutputTakesInputType<Op>) {
    KILN_SDK_RETURN_IF_ERROR(TakeInputTypeForOutput(k));
  }
  const KilnTensorType type = k.input(0).type();
  state.type = type;
  state.is_quantized = false;
  if constexpr (kHasQuantizedKernel<Op>) {
    if (elementwise::IsQuantizedBinaryType(type)) {
      state.is_quantized = true;
      KILN_SDK_RETURN_IF_ERROR(
          elementwise::PrepareQuantizedBinary(k, &state.quantized));
      return elementwise::PrepareBroadcast(k, 2, &state.plan);
    }
  }
  // A refusal lists the quantized types too where the op has their kernel.
  constexpr TypeSet kSupported =
      kHasQuantizedKernel<Op> ? Op::kTypes | kQuantizedTypes : Op::kTypes;
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectType(k, Input(0), kSupported));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectSameType(k, Input(1), Input(0)));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectSameType(k, Output(0), Input(0)));
  state.activation = KILN_ACTIVATION_NONE;
  if constexpr (Op::kFusedActivation) {
    KILN_SDK_RETURN_IF_ERROR(ReadClampOnlyActivation(k, &state.activation));
  }
  return elementwise::PrepareBroadcast(k, 2, &state.plan);
}

// The AVX2 float row kernel of Op (binary_float.h), or null: none for the
// op, or none on this CPU. Bit for bit the scalar loops.
template <typename Op>
elementwise::FloatBinaryRow FloatRowKernel() {
  using elementwise::FloatBinaryOp;
  static const elementwise::FloatBinaryRow row = []() {
    if constexpr (std::is_same_v<Op, AddOp>) {
      return elementwise::FloatBinaryRowAvx2(FloatBinaryOp::kAdd);
    } else if constexpr (std::is_same_v<Op, SubOp>) {
      return elementwise::FloatBinaryRowAvx2(FloatBinaryOp::kSub);
    } else if constexpr (std::is_same_v<Op, MulOp>) {
      return elementwise::FloatBinaryRowAvx2(FloatBinaryOp::kMul);
    } else if constexpr (std::is_same_v<Op, DivOp>) {
      return elementwise::FloatBinaryRowAvx2(FloatBinaryOp::kDiv);
    } else if constexpr (std::is_same_v<Op, SquaredDifferenceOp>) {
      return elementwise::FloatBinaryRowAvx2(FloatBinaryOp::kSquaredDifference);
    } else if constexpr (std::is_same_v<Op, MaximumOp>) {
      return elementwise::FloatBinaryRowAvx2(FloatBinaryOp::kMaximum);
    } else if constexpr (std::is_same_v<Op, MinimumOp>) {
      return elementwise::FloatBinaryRowAvx2(FloatBinaryOp::kMinimum);
    } else {
      return elementwise::FloatBinaryRow{nullptr};
    }
  }();
  return row;
}

// out = a op b over the plan's rows.
template <typename Op, typename T>
void ComputeBinary(const BroadcastPlan& plan, const T* pa, const T* pb, T* po) {
  if constexpr (std::is_same_v<T, float>) {
    if (const elementwise::FloatBinaryRow row = FloatRowKernel<Op>()) {
      const int64_t sa = plan.inner_stride(0), sb = plan.inner_stride(1);
      ForEachBroadcastRow(plan, [&](int64_t o, const int64_t* off, int64_t n) {
        row(pa + off[0], sa, pb + off[1], sb, po + o, n);
      });
      return;
    }
  }
  BroadcastBinary(plan, pa, pb, po,
                  [](T x, T y) { return Op::template Apply<T>(x, y); });
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
  ComputeBinary<Op>(state.plan, pa, pb, po);
  if constexpr (Op::kFusedActivation) {
    ApplyActivationInPlace<T>(state.activation, po, state.plan.total);
  }
  return KILN_STATUS_OK;
}

template <typename Op>
KilnStatus BinaryInvoke(KernelContext& k, BinaryState& state) {
  if (state.is_quantized) {
    return elementwise::InvokeQuantizedBinary(k, state.quantized, state.plan);
  }
  return elementwise::InvokeForType<Op>(k, state.type, [&](auto zero) {
    return RunBinary<Op, decltype(zero)>(k, state);
  });
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
  // Version meanings per TFLite's op_version.cc; each range covers exactly
  // the versions whose types these kernels implement (quantized ones in
  // quantized_binary.cc, bit-exact with LiteRT's reference kernels).
  // ADD: v1 float32/int32/uint8 (and int16 with power-of-two scales), v2
  // int8, v3 int16, v4 int64. Not 5 (int16 without quantization).
  Register<AddOp>(def, KILN_OP_ADD, {{1, 4}});
  // SUB: v1 float32/int32/uint8, v2 int8, v3 5-D broadcast, v4 int64, v5
  // int16.
  Register<SubOp>(def, KILN_OP_SUB, {{1, 5}});
  // MUL: v1 float32/int32/uint8, v2 int8, v3 uint8/int8 with a rescale
  // factor >= 1, v4 int16, v5 int64. Not 6 (complex64), 7 (int16 without
  // quantization, uint32).
  Register<MulOp>(def, KILN_OP_MUL, {{1, 5}});
  // DIV: v1 float32/int32 and quantized uint8/int8/int16 (LiteRT gives
  // them no versions of their own), v2 5-D broadcast; the newest version.
  Register<DivOp>(def, KILN_OP_DIV, {{1, 2}});
  // SQUARED_DIFFERENCE: v1 float32/int32, v2 int8.
  Register<SquaredDifferenceOp>(def, KILN_OP_SQUARED_DIFFERENCE, {{1, 2}});
  // MAXIMUM/MINIMUM: v1 float32/int32/int64/uint8, v2 int8, v3 5-D
  // broadcast, v4 int16.
  Register<MaximumOp>(def, KILN_OP_MAXIMUM, {{1, 4}});
  Register<MinimumOp>(def, KILN_OP_MINIMUM, {{1, 4}});
  // POW: only v1 exists (float32, int32).
  Register<PowOp>(def, KILN_OP_POW, {{1, 1}});
  // FLOOR_DIV: v1 int32 (int64 too here), v2 float32, v3 int8/int16.
  Register<FloorDivOp>(def, KILN_OP_FLOOR_DIV, {{1, 3}});
  // FLOOR_MOD: v1 float32/int32/int64, v2 int8/int16.
  Register<FloorModOp>(def, KILN_OP_FLOOR_MOD, {{1, 2}});
  // ATAN2: only v1 exists (float32 here; float64 refused).
  Register<Atan2Op>(def, KILN_OP_ATAN2, {{1, 1}});
  // PRELU: only v1 exists (float32, uint8, int8).
  Register<PreluOp>(def, KILN_OP_PRELU, {{1, 1}});
}

}  // namespace kiln::cpu
