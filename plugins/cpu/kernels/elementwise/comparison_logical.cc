// Comparisons (LESS LESS_EQUAL GREATER GREATER_EQUAL EQUAL NOT_EQUAL), logical
// ops (LOGICAL_AND LOGICAL_OR LOGICAL_NOT) and SELECT_V2, with NumPy
// broadcasting (rank <= 6). BOOL tensors hold one byte per element; any
// non-zero byte reads as true and outputs are written as 0 or 1.
#include <cstdint>
#include <type_traits>

#include "kernels/broadcast.h"
#include "kernels/elementwise/elementwise_common.h"
#include "kernels/elementwise/quantized_binary.h"
#include "kernels/registry.h"

namespace kiln::cpu {
namespace {

using sdk::KernelContext;

constexpr sdk::TypeSet kOrderedTypes{KILN_TYPE_FLOAT32, KILN_TYPE_INT32,
                                     KILN_TYPE_INT64};
constexpr sdk::TypeSet kEqualityTypes{KILN_TYPE_FLOAT32, KILN_TYPE_INT32,
                                      KILN_TYPE_INT64, KILN_TYPE_BOOL};
constexpr sdk::TypeSet kBoolTypes{KILN_TYPE_BOOL};
constexpr sdk::TypeSet kSelectTypes{
    KILN_TYPE_FLOAT32, KILN_TYPE_INT32, KILN_TYPE_INT64, KILN_TYPE_BOOL,
    KILN_TYPE_UINT8,   KILN_TYPE_INT8,  KILN_TYPE_INT16};

struct LessOp {
  static constexpr sdk::TypeSet kTypes = kOrderedTypes;
  template <typename T>
  static bool Apply(T x, T y) {
    return x < y;
  }
};
struct LessEqualOp {
  static constexpr sdk::TypeSet kTypes = kOrderedTypes;
  template <typename T>
  static bool Apply(T x, T y) {
    return x <= y;
  }
};
struct GreaterOp {
  static constexpr sdk::TypeSet kTypes = kOrderedTypes;
  template <typename T>
  static bool Apply(T x, T y) {
    return x > y;
  }
};
struct GreaterEqualOp {
  static constexpr sdk::TypeSet kTypes = kOrderedTypes;
  template <typename T>
  static bool Apply(T x, T y) {
    return x >= y;
  }
};
struct EqualOp {
  static constexpr sdk::TypeSet kTypes = kEqualityTypes;
  template <typename T>
  static bool Apply(T x, T y) {
    return x == y;
  }
};
struct NotEqualOp {
  static constexpr sdk::TypeSet kTypes = kEqualityTypes;
  template <typename T>
  static bool Apply(T x, T y) {
    return x != y;
  }
};
struct LogicalAndOp {
  static constexpr sdk::TypeSet kTypes = kBoolTypes;
  template <typename T>
  static bool Apply(T x, T y) {
    return x && y;
  }
};
struct LogicalOrOp {
  static constexpr sdk::TypeSet kTypes = kBoolTypes;
  template <typename T>
  static bool Apply(T x, T y) {
    return x || y;
  }
};

struct CompareState {
  BroadcastPlan plan;
  KilnTensorType type = KILN_TYPE_FLOAT32;
  bool is_quantized = false;  // UINT8 / INT8 / INT16 comparisons
  elementwise::QuantizedBinaryState quantized;
};

// Comparisons of quantized inputs (kernels/elementwise/quantized_binary.h).
template <typename Op>
constexpr bool kIsComparison =
    !std::is_same_v<Op, LogicalAndOp> && !std::is_same_v<Op, LogicalOrOp>;

template <typename Op>
KilnStatus ComparePrepare(KernelContext& k, CompareState& state) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectArity(k, 2, 1));
  state.is_quantized = false;
  if constexpr (kIsComparison<Op>) {
    if (elementwise::IsQuantizedBinaryType(k.input(0).type())) {
      state.is_quantized = true;
      KILN_SDK_RETURN_IF_ERROR(
          elementwise::PrepareQuantizedBinary(k, &state.quantized));
      return elementwise::PrepareBroadcast(k, 2, &state.plan);
    }
  }
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectType(k, sdk::Input(0), Op::kTypes));
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectSameType(k, sdk::Input(1), sdk::Input(0)));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectType(k, sdk::Output(0), kBoolTypes));
  state.type = k.input(0).type();
  return elementwise::PrepareBroadcast(k, 2, &state.plan);
}

template <typename Op, typename T>
KilnStatus RunCompare(KernelContext& k, const CompareState& state) {
  const T *pa = nullptr, *pb = nullptr;
  uint8_t* po = nullptr;
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, sdk::Input(0), &pa));
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, sdk::Input(1), &pb));
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, sdk::Output(0), &po));
  if constexpr (std::is_same_v<T, uint8_t>) {  // BOOL: normalise the bytes
    BroadcastBinary(state.plan, pa, pb, po, [](uint8_t x, uint8_t y) {
      return static_cast<uint8_t>(Op::template Apply<bool>(x != 0, y != 0));
    });
  } else {
    BroadcastBinary(state.plan, pa, pb, po, [](T x, T y) {
      return static_cast<uint8_t>(Op::template Apply<T>(x, y));
    });
  }
  return KILN_STATUS_OK;
}

template <typename Op>
KilnStatus CompareInvoke(KernelContext& k, CompareState& state) {
  if (state.is_quantized) {
    return elementwise::InvokeQuantizedBinary(k, state.quantized, state.plan);
  }
  return elementwise::InvokeForType<Op>(k, state.type, [&](auto zero) {
    return RunCompare<Op, decltype(zero)>(k, state);
  });
}

// ---- LOGICAL_NOT ----------------------------------------------------------

KilnStatus LogicalNotPrepare(KernelContext& k) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectArity(k, 1, 1));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectType(k, sdk::Input(0), kBoolTypes));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectType(k, sdk::Output(0), kBoolTypes));
  std::vector<int32_t> shape;
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectKnownShape(k, sdk::Input(0), &shape));
  return k.Resize(k.output(0), shape);
}

KilnStatus LogicalNotInvoke(KernelContext& k) {
  const uint8_t* pi = nullptr;
  uint8_t* po = nullptr;
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, sdk::Input(0), &pi));
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, sdk::Output(0), &po));
  const int64_t n = k.output(0).num_elements();
  for (int64_t i = 0; i < n; ++i) po[i] = pi[i] == 0 ? 1 : 0;
  return KILN_STATUS_OK;
}

// ---- SELECT_V2 --------------------------------------------------------------

struct SelectState {
  BroadcastPlan plan;
  size_t element_size = 0;
};

KilnStatus SelectPrepare(KernelContext& k, SelectState& state) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectArity(k, 3, 1));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectType(k, sdk::Input(0), kBoolTypes));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectType(k, sdk::Input(1), kSelectTypes));
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectSameType(k, sdk::Input(2), sdk::Input(1)));
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectSameType(k, sdk::Output(0), sdk::Input(1)));
  state.element_size = sdk::TypeByteSize(k.input(1).type());
  return elementwise::PrepareBroadcast(k, 3, &state.plan);
}

// Copies elements as raw bits of their size: selection never converts.
template <typename Bits>
void RunSelect(const BroadcastPlan& plan, const uint8_t* cond, const Bits* x,
               const Bits* y, Bits* out) {
  const int64_t sc = plan.inner_stride(0);
  const int64_t sx = plan.inner_stride(1);
  const int64_t sy = plan.inner_stride(2);
  ForEachBroadcastRow(plan, [&](int64_t o, const int64_t* off, int64_t n) {
    const uint8_t* pc = cond + off[0];
    const Bits* px = x + off[1];
    const Bits* py = y + off[2];
    Bits* po = out + o;
    for (int64_t i = 0; i < n; ++i) {
      po[i] = pc[i * sc] != 0 ? px[i * sx] : py[i * sy];
    }
  });
}

KilnStatus SelectInvoke(KernelContext& k, SelectState& state) {
  const uint8_t* pc = nullptr;
  const void *px = nullptr, *py = nullptr;
  void* po = nullptr;
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, sdk::Input(0), &pc));
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, sdk::Input(1), &px));
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, sdk::Input(2), &py));
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, sdk::Output(0), &po));
  switch (state.element_size) {
    case 1:
      RunSelect(state.plan, pc, static_cast<const uint8_t*>(px),
                static_cast<const uint8_t*>(py), static_cast<uint8_t*>(po));
      break;
    case 2:
      RunSelect(state.plan, pc, static_cast<const uint16_t*>(px),
                static_cast<const uint16_t*>(py), static_cast<uint16_t*>(po));
      break;
    case 4:
      RunSelect(state.plan, pc, static_cast<const uint32_t*>(px),
                static_cast<const uint32_t*>(py), static_cast<uint32_t*>(po));
      break;
    default:
      RunSelect(state.plan, pc, static_cast<const uint64_t*>(px),
                static_cast<const uint64_t*>(py), static_cast<uint64_t*>(po));
      break;
  }
  return KILN_STATUS_OK;
}

template <typename Op>
void RegisterCompare(sdk::PluginDefinition& def, int32_t code,
                     std::initializer_list<elementwise::VersionRange> ranges) {
  elementwise::AddStatefulKernelForVersions<CompareState, ComparePrepare<Op>,
                                            CompareInvoke<Op>>(def, code,
                                                               ranges);
}

}  // namespace

void RegisterComparisonAndLogical(sdk::PluginDefinition& def) {
  // Version meanings per TFLite's op_version.cc; v1 is float32/int32/int64
  // and quantized uint8 (rescaled, quantized_binary.cc) for every
  // comparison, v2 int8.
  // LESS, GREATER_EQUAL: v1, v2, v3 (int16).
  RegisterCompare<LessOp>(def, KILN_OP_LESS, {{1, 3}});
  RegisterCompare<GreaterEqualOp>(def, KILN_OP_GREATER_EQUAL, {{1, 3}});
  // LESS_EQUAL, GREATER: v1 (int16 too, its stored codes compared, as
  // LiteRT does), v2 (the newest versions).
  RegisterCompare<LessEqualOp>(def, KILN_OP_LESS_EQUAL, {{1, 2}});
  RegisterCompare<GreaterOp>(def, KILN_OP_GREATER, {{1, 2}});
  // EQUAL: v1 (also bool), v2, v4 (int16). Not 3 (string).
  RegisterCompare<EqualOp>(def, KILN_OP_EQUAL, {{1, 2}, {4, 4}});
  // NOT_EQUAL: v1 (also bool; int16 rescaled), v2. Not 3 (string).
  RegisterCompare<NotEqualOp>(def, KILN_OP_NOT_EQUAL, {{1, 2}});
  // LOGICAL_AND/OR/NOT: only v1 exists (bool).
  RegisterCompare<LogicalAndOp>(def, KILN_OP_LOGICAL_AND, {{1, 1}});
  RegisterCompare<LogicalOrOp>(def, KILN_OP_LOGICAL_OR, {{1, 1}});
  elementwise::AddKernelForVersions<LogicalNotPrepare, LogicalNotInvoke>(
      def, KILN_OP_LOGICAL_NOT, {{1, 1}});
  // SELECT_V2: v1 (every type but uint32); 2 (uint32) not implemented.
  elementwise::AddStatefulKernelForVersions<SelectState, SelectPrepare,
                                            SelectInvoke>(
      def, KILN_OP_SELECT_V2, {{1, 1}});
}

}  // namespace kiln::cpu
