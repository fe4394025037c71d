// CAST between FLOAT32, FLOAT16, FLOAT64, INT8, INT16, INT32, INT64, UINT8,
// UINT16, UINT32 and BOOL. The tensor types decide the conversion (the
// options' in/out data types are informational, as in TFLite).
//
// Semantics: to BOOL is x != 0; from BOOL gives 0 or 1. Integer to integer
// wraps (two's complement). Float to integer truncates toward zero and, where
// TFLite's static_cast is undefined, saturates (NaN gives 0). To FLOAT16
// rounds to nearest even.
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernels/elementwise/elementwise_common.h"
#include "kernels/registry.h"
#include "kiln/sdk/float16.h"

namespace kiln::cpu {
namespace {

using sdk::KernelContext;
using sdk::Tensor;

constexpr sdk::TypeSet kCastTypes{
    KILN_TYPE_FLOAT32, KILN_TYPE_FLOAT16, KILN_TYPE_FLOAT64, KILN_TYPE_INT8,
    KILN_TYPE_INT16,   KILN_TYPE_INT32,   KILN_TYPE_INT64,   KILN_TYPE_UINT8,
    KILN_TYPE_UINT16,  KILN_TYPE_UINT32,  KILN_TYPE_BOOL};

// Storage wrappers so that FLOAT16 and BOOL get their own conversions.
struct Half {
  uint16_t bits;
};
struct Bool {
  uint8_t byte;
};

// Every source value is first read as double (exact for all source types
// except INT64/UINT64 magnitudes above 2^53, which never reach a float
// destination more precisely anyway) or kept as integer.
template <typename To>
To FromDouble(double d) {
  if constexpr (std::is_same_v<To, Bool>) {
    return Bool{static_cast<uint8_t>(d != 0.0)};
  } else if constexpr (std::is_same_v<To, Half>) {
    return Half{sdk::FloatToHalf(static_cast<float>(d))};
  } else if constexpr (std::is_floating_point_v<To>) {
    return static_cast<To>(d);
  } else {
    constexpr double kLow =
        static_cast<double>(std::numeric_limits<To>::lowest());
    constexpr double kHighExclusive =
        static_cast<double>(std::numeric_limits<To>::max()) + 1.0;
    if (std::isnan(d)) return To(0);
    if (d >= kHighExclusive) return std::numeric_limits<To>::max();
    if (d <= kLow - 1.0) return std::numeric_limits<To>::lowest();
    return static_cast<To>(d);
  }
}

template <typename To, typename From>
To Convert(From x) {
  if constexpr (std::is_same_v<From, Half>) {
    return FromDouble<To>(sdk::HalfToFloat(x.bits));
  } else if constexpr (std::is_same_v<From, Bool>) {
    return Convert<To>(static_cast<uint8_t>(x.byte != 0 ? 1 : 0));
  } else if constexpr (std::is_floating_point_v<From>) {
    if constexpr (std::is_same_v<To, float>) return static_cast<float>(x);
    return FromDouble<To>(static_cast<double>(x));
  } else {  // integer source
    if constexpr (std::is_same_v<To, Bool>) {
      return Bool{static_cast<uint8_t>(x != 0)};
    } else if constexpr (std::is_same_v<To, Half>) {
      return Half{sdk::FloatToHalf(static_cast<float>(x))};
    } else {
      return static_cast<To>(x);  // int->int wraps; int->float rounds
    }
  }
}

template <typename From, typename To>
void CastLoop(const void* in, void* out, int64_t n) {
  const From* pi = static_cast<const From*>(in);
  To* po = static_cast<To*>(out);
  for (int64_t i = 0; i < n; ++i) po[i] = Convert<To>(pi[i]);
}

using CastFn = void (*)(const void*, void*, int64_t);

template <typename From>
CastFn CastTo(KilnTensorType to) {
  switch (to) {
    case KILN_TYPE_FLOAT32:
      return &CastLoop<From, float>;
    case KILN_TYPE_FLOAT16:
      return &CastLoop<From, Half>;
    case KILN_TYPE_FLOAT64:
      return &CastLoop<From, double>;
    case KILN_TYPE_INT8:
      return &CastLoop<From, int8_t>;
    case KILN_TYPE_INT16:
      return &CastLoop<From, int16_t>;
    case KILN_TYPE_INT32:
      return &CastLoop<From, int32_t>;
    case KILN_TYPE_INT64:
      return &CastLoop<From, int64_t>;
    case KILN_TYPE_UINT8:
      return &CastLoop<From, uint8_t>;
    case KILN_TYPE_UINT16:
      return &CastLoop<From, uint16_t>;
    case KILN_TYPE_UINT32:
      return &CastLoop<From, uint32_t>;
    case KILN_TYPE_BOOL:
      return &CastLoop<From, Bool>;
    default:
      return nullptr;
  }
}

// The conversion loop for (from, to), or null for an unsupported pair.
CastFn FindCast(KilnTensorType from, KilnTensorType to) {
  switch (from) {
    case KILN_TYPE_FLOAT32:
      return CastTo<float>(to);
    case KILN_TYPE_FLOAT16:
      return CastTo<Half>(to);
    case KILN_TYPE_FLOAT64:
      return CastTo<double>(to);
    case KILN_TYPE_INT8:
      return CastTo<int8_t>(to);
    case KILN_TYPE_INT16:
      return CastTo<int16_t>(to);
    case KILN_TYPE_INT32:
      return CastTo<int32_t>(to);
    case KILN_TYPE_INT64:
      return CastTo<int64_t>(to);
    case KILN_TYPE_UINT8:
      return CastTo<uint8_t>(to);
    case KILN_TYPE_UINT16:
      return CastTo<uint16_t>(to);
    case KILN_TYPE_UINT32:
      return CastTo<uint32_t>(to);
    case KILN_TYPE_BOOL:
      return CastTo<Bool>(to);
    default:
      return nullptr;
  }
}

KilnStatus CastPrepare(KernelContext& k) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectArity(k, 1, 1));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectType(k, sdk::Input(0), kCastTypes));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectType(k, sdk::Output(0), kCastTypes));
  std::vector<int32_t> shape;
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectKnownShape(k, sdk::Input(0), &shape));
  return k.Resize(k.output(0), shape);
}

KilnStatus CastInvoke(KernelContext& k) {
  const Tensor in = k.input(0), out = k.output(0);
  const CastFn cast = FindCast(in.type(), out.type());
  if (cast == nullptr) {
    return k.Fail(KILN_STATUS_INTERNAL, sdk::OpName(k), ": invoke reached ",
                  sdk::TypeName(in.type()), " -> ", sdk::TypeName(out.type()),
                  " that prepare did not accept");
  }
  const void* pi = in.data<void>();
  void* po = out.data<void>();
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, sdk::Input(0), &pi));
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, sdk::Output(0), &po));
  cast(pi, po, out.num_elements());
  return KILN_STATUS_OK;
}

}  // namespace

void RegisterCast(sdk::PluginDefinition& def) {
  // CAST: v1 float32/int32/int64/bool/uint8/int16 (complex64 refused),
  // v2 uint32, v3 int8, v4 uint16, v5 float16/float64; ends before 6
  // (int4 -> float32) and 7 (bfloat16).
  elementwise::AddKernelForVersions<CastPrepare, CastInvoke>(def, KILN_OP_CAST,
                                                             {{1, 5}});
}

}  // namespace kiln::cpu
