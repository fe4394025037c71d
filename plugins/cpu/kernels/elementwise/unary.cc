// Unary elementwise ops: math (ABS NEG EXP LOG SQRT RSQRT SQUARE SIN COS
// FLOOR CEIL ROUND SIGN) and activations (TANH LOGISTIC RELU RELU6
// RELU_N1_TO_1 RELU_0_TO_1 ELU LEAKY_RELU HARD_SWISH GELU). The output has the
// input's shape and type. Float results follow IEEE (LOG(0) = -inf,
// SQRT(-1) = NaN, RSQRT(0) = inf), as in TFLite.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "kernels/elementwise/elementwise_common.h"
#include "kernels/elementwise/quantized_unary.h"
#include "kernels/nn/parallel.h"
#include "kernels/nn/vec_math.h"
#include "kernels/registry.h"

namespace kiln::cpu {
namespace {

using sdk::KernelContext;

constexpr sdk::TypeSet kFloatTypes{KILN_TYPE_FLOAT32};
constexpr sdk::TypeSet kFloatInt32Types{KILN_TYPE_FLOAT32, KILN_TYPE_INT32};
// NEG: LiteRT negates INT8 / INT16 stored values too (no requantization).
constexpr sdk::TypeSet kNegTypes{KILN_TYPE_FLOAT32, KILN_TYPE_INT32,
                                 KILN_TYPE_INT64, KILN_TYPE_INT8,
                                 KILN_TYPE_INT16};
constexpr sdk::TypeSet kFloatIntTypes{KILN_TYPE_FLOAT32, KILN_TYPE_INT32,
                                      KILN_TYPE_INT64};

// Node options some unary ops read (once per invoke, never per element).
struct UnaryParams {
  float alpha = 0.f;         // LEAKY_RELU
  bool approximate = false;  // GELU
};

struct NoParams {
  static UnaryParams Read(const KernelContext&) { return {}; }
};

template <typename T>
T WrapNegate(T x) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(U(0) - static_cast<U>(x));
}

struct AbsOp : NoParams {
  static constexpr sdk::TypeSet kTypes = kFloatInt32Types;
  template <typename T>
  static T Apply(T x, const UnaryParams&) {
    if constexpr (std::is_integral_v<T>) return x < 0 ? WrapNegate(x) : x;
    return std::fabs(x);
  }
};
struct NegOp : NoParams {
  static constexpr sdk::TypeSet kTypes = kNegTypes;
  template <typename T>
  static T Apply(T x, const UnaryParams&) {
    if constexpr (std::is_integral_v<T>) return WrapNegate(x);
    return -x;
  }
};

#define KILN_FLOAT_UNARY_OP(Struct, expr)               \
  struct Struct : NoParams {                            \
    static constexpr sdk::TypeSet kTypes = kFloatTypes; \
    template <typename T>                               \
    static T Apply(T x, const UnaryParams&) {           \
      return expr;                                      \
    }                                                   \
  }

KILN_FLOAT_UNARY_OP(ExpOp, std::exp(x));
KILN_FLOAT_UNARY_OP(LogOp, std::log(x));
KILN_FLOAT_UNARY_OP(SqrtOp, std::sqrt(x));
KILN_FLOAT_UNARY_OP(RsqrtOp, T(1) / std::sqrt(x));
KILN_FLOAT_UNARY_OP(SquareOp, x* x);
KILN_FLOAT_UNARY_OP(SinOp, std::sin(x));
KILN_FLOAT_UNARY_OP(CosOp, std::cos(x));
KILN_FLOAT_UNARY_OP(FloorOp, std::floor(x));
KILN_FLOAT_UNARY_OP(CeilOp, std::ceil(x));
KILN_FLOAT_UNARY_OP(TanhOp, std::tanh(x));
// Clamps let NaN through, as TFLite's reference kernels do.
KILN_FLOAT_UNARY_OP(ReluOp, x < T(0) ? T(0) : x);
KILN_FLOAT_UNARY_OP(Relu6Op, x < T(0) ? T(0) : (x > T(6) ? T(6) : x));
KILN_FLOAT_UNARY_OP(ReluN1To1Op, x < T(-1) ? T(-1) : (x > T(1) ? T(1) : x));
KILN_FLOAT_UNARY_OP(Relu0To1Op, x < T(0) ? T(0) : (x > T(1) ? T(1) : x));
KILN_FLOAT_UNARY_OP(EluOp, x < T(0) ? std::expm1(x) : x);
// x * relu6(x + 3) / 6
KILN_FLOAT_UNARY_OP(HardSwishOp,
                    x* std::fmin(std::fmax(x + T(3), T(0)), T(6)) / T(6));
#undef KILN_FLOAT_UNARY_OP

// Round half to even (banker's rounding), as TFLite's ROUND.
struct RoundOp : NoParams {
  static constexpr sdk::TypeSet kTypes = kFloatTypes;
  template <typename T>
  static T Apply(T x, const UnaryParams&) {
    const T floor = std::floor(x);
    const T diff = x - floor;
    if (diff < T(0.5)) return floor;
    if (diff > T(0.5)) return floor + T(1);
    return std::fmod(floor, T(2)) == T(0) ? floor : floor + T(1);
  }
};

// -1, 0 or 1 (NaN gives 0, as TFLite's (0 < x) - (x < 0)).
struct SignOp : NoParams {
  static constexpr sdk::TypeSet kTypes = kFloatInt32Types;
  template <typename T>
  static T Apply(T x, const UnaryParams&) {
    return static_cast<T>((T(0) < x) - (x < T(0)));
  }
};

// 1 / (1 + exp(-x)), evaluated without overflow for large |x|.
struct LogisticOp : NoParams {
  static constexpr sdk::TypeSet kTypes = kFloatTypes;
  template <typename T>
  static T Apply(T x, const UnaryParams&) {
    if (x >= T(0)) return T(1) / (T(1) + std::exp(-x));
    const T e = std::exp(x);
    return e / (T(1) + e);
  }
};

// x > 0 ? x : alpha * x (option ALPHA, default 0).
struct LeakyReluOp {
  static constexpr sdk::TypeSet kTypes = kFloatTypes;
  static UnaryParams Read(const KernelContext& k) {
    UnaryParams p;
    p.alpha = k.OptionFloat(KILN_OPTION_ALPHA, 0.f);
    return p;
  }
  template <typename T>
  static T Apply(T x, const UnaryParams& p) {
    return x > T(0) ? x : static_cast<T>(p.alpha) * x;
  }
};

// Exact: 0.5x(1 + erf(x/sqrt(2))). Option APPROXIMATE (default false):
// 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3))).
struct GeluOp {
  static constexpr sdk::TypeSet kTypes = kFloatTypes;
  static UnaryParams Read(const KernelContext& k) {
    UnaryParams p;
    p.approximate = k.OptionInt(KILN_OPTION_APPROXIMATE, 0) != 0;
    return p;
  }
  template <typename T>
  static T Apply(T x, const UnaryParams& p) {
    if (p.approximate) {
      constexpr T kSqrt2OverPi = T(0.7978845608028654);
      return T(0.5) * x *
             (T(1) + std::tanh(kSqrt2OverPi * (x + T(0.044715) * x * x * x)));
    }
    constexpr T kInvSqrt2 = T(0.7071067811865476);
    return T(0.5) * x * (T(1) + std::erf(x * kInvSqrt2));
  }
};

template <typename Op>
KilnStatus UnaryPrepare(KernelContext& k) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectArity(k, 1, 1));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectType(k, sdk::Input(0), Op::kTypes));
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectSameType(k, sdk::Output(0), sdk::Input(0)));
  std::vector<int32_t> shape;
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectKnownShape(k, sdk::Input(0), &shape));
  return k.Resize(k.output(0), shape);
}

template <typename Op, typename T>
KilnStatus RunUnary(KernelContext& k) {
  const T* pi = nullptr;
  T* po = nullptr;
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, sdk::Input(0), &pi));
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, sdk::Output(0), &po));
  const UnaryParams params = Op::Read(k);
  const int64_t n = k.output(0).num_elements();
  if constexpr (std::is_same_v<Op, GeluOp> && std::is_same_v<T, float>) {
    // Blocks of 512 values (each value on its own, so any split gives the
    // same results) across the thread pool; about 40 flops a value.
    constexpr int64_t kBlock = 512;
    const auto gelu = nn::GetVecMathKernels().gelu;
    return nn::ParallelRows(k, (n + kBlock - 1) / kBlock, kBlock * 40,
                            [&](int64_t begin, int64_t end, int32_t) {
                              const int64_t from = begin * kBlock;
                              gelu(pi + from, po + from,
                                   std::min(n, end * kBlock) - from,
                                   params.approximate);
                            });
  }
  for (int64_t i = 0; i < n; ++i) po[i] = Op::template Apply<T>(pi[i], params);
  return KILN_STATUS_OK;
}

template <typename Op>
KilnStatus UnaryInvoke(KernelContext& k) {
  return elementwise::InvokeForType<Op>(k, k.input(0).type(), [&](auto zero) {
    return RunUnary<Op, decltype(zero)>(k);
  });
}

template <typename Op>
void Register(sdk::PluginDefinition& def, int32_t code,
              std::initializer_list<elementwise::VersionRange> ranges) {
  elementwise::AddKernelForVersions<UnaryPrepare<Op>, UnaryInvoke<Op>>(
      def, code, ranges);
}

// Ops with quantized kernels too (kernels/elementwise/quantized_unary.h):
// UINT8 / INT8 / INT16 inputs go there, the others to the float kernels.
bool TakesQuantizedPath(KernelContext& k) {
  return k.num_inputs() == 1 && k.input(0).present() &&
         elementwise::IsQuantizedUnaryType(k.input(0).type());
}

template <typename Op>
KilnStatus QuantizableUnaryPrepare(KernelContext& k,
                                   elementwise::QuantizedUnaryState& state) {
  if (!TakesQuantizedPath(k)) return UnaryPrepare<Op>(k);
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectArity(k, 1, 1));
  return elementwise::PrepareQuantizedUnary(k, &state);
}

template <typename Op>
KilnStatus QuantizableUnaryInvoke(KernelContext& k,
                                  elementwise::QuantizedUnaryState& state) {
  if (!TakesQuantizedPath(k)) return UnaryInvoke<Op>(k);
  return elementwise::InvokeQuantizedUnary(k, state);
}

template <typename Op>
void RegisterQuantizable(
    sdk::PluginDefinition& def, int32_t code,
    std::initializer_list<elementwise::VersionRange> ranges) {
  elementwise::AddStatefulKernelForVersions<elementwise::QuantizedUnaryState,
                                            QuantizableUnaryPrepare<Op>,
                                            QuantizableUnaryInvoke<Op>>(
      def, code, ranges);
}

}  // namespace

void RegisterUnary(sdk::PluginDefinition& def) {
  // Version meanings per TFLite's op_version.cc; each range covers exactly
  // the versions whose types these kernels implement (quantized ones in
  // quantized_unary.cc, bit-exact with LiteRT's reference kernels).
  // ABS: v1 float32, v2 int8 (LiteRT refuses uint8), v3 quantized int16,
  // v4 plain int16, v5 int32.
  RegisterQuantizable<AbsOp>(def, KILN_OP_ABS, {{1, 5}});
  // NEG: only v1 exists (float32, int32, int64; int8 and int16 stored
  // values negated as they are, as LiteRT does).
  Register<NegOp>(def, KILN_OP_NEG, {{1, 1}});
  // EXP, LOG: v1 float32, v2 int8 (LiteRT's float lookup table) and int16
  // (its interpolated 513-entry table).
  RegisterQuantizable<ExpOp>(def, KILN_OP_EXP, {{1, 2}});
  RegisterQuantizable<LogOp>(def, KILN_OP_LOG, {{1, 2}});
  // SQRT: only v1 exists (float32, int8, int16).
  RegisterQuantizable<SqrtOp>(def, KILN_OP_SQRT, {{1, 1}});
  // SQUARE, SIN, COS, FLOOR, CEIL, ROUND: only v1 exists (float32).
  Register<SquareOp>(def, KILN_OP_SQUARE, {{1, 1}});
  Register<SinOp>(def, KILN_OP_SIN, {{1, 1}});
  Register<CosOp>(def, KILN_OP_COS, {{1, 1}});
  Register<FloorOp>(def, KILN_OP_FLOOR, {{1, 1}});
  Register<CeilOp>(def, KILN_OP_CEIL, {{1, 1}});
  Register<RoundOp>(def, KILN_OP_ROUND, {{1, 1}});
  // RSQRT: v1 float32, v2 int8, v3 int16.
  RegisterQuantizable<RsqrtOp>(def, KILN_OP_RSQRT, {{1, 3}});
  // SIGN: v1 float32, v2 int32; the newest version.
  Register<SignOp>(def, KILN_OP_SIGN, {{1, 2}});
  // TANH, LOGISTIC: v1 float32/uint8, v2 int8. Not 3 (int16: LiteRT
  // interpolates a fixed 256-entry sigmoid table Kiln does not carry).
  RegisterQuantizable<TanhOp>(def, KILN_OP_TANH, {{1, 2}});
  RegisterQuantizable<LogisticOp>(def, KILN_OP_LOGISTIC, {{1, 2}});
  // RELU, RELU6: v1 float32/uint8, v2 int8, v3 int16.
  RegisterQuantizable<ReluOp>(def, KILN_OP_RELU, {{1, 3}});
  RegisterQuantizable<Relu6Op>(def, KILN_OP_RELU6, {{1, 3}});
  // RELU_N1_TO_1, RELU_0_TO_1, HARD_SWISH: only v1 exists (float32, uint8,
  // int8). ELU: only v1 (float32, int8).
  RegisterQuantizable<ReluN1To1Op>(def, KILN_OP_RELU_N1_TO_1, {{1, 1}});
  RegisterQuantizable<Relu0To1Op>(def, KILN_OP_RELU_0_TO_1, {{1, 1}});
  RegisterQuantizable<EluOp>(def, KILN_OP_ELU, {{1, 1}});
  RegisterQuantizable<HardSwishOp>(def, KILN_OP_HARD_SWISH, {{1, 1}});
  // LEAKY_RELU: v1 float32/uint8/int8, v2 int16.
  RegisterQuantizable<LeakyReluOp>(def, KILN_OP_LEAKY_RELU, {{1, 2}});
  // GELU: v1 float32 (exact and approximate) and int16 (LiteRT's
  // interpolated table), v2 int8/uint8.
  RegisterQuantizable<GeluOp>(def, KILN_OP_GELU, {{1, 2}});
}

}  // namespace kiln::cpu
