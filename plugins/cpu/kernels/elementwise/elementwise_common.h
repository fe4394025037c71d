// Shared pieces of the elementwise kernel group: broadcast preparation and
// registration over op-version ranges. Checks and messages come from
// kiln/sdk/checks.h. Internal to kernels/elementwise.
#ifndef KILN_PLUGINS_CPU_KERNELS_ELEMENTWISE_ELEMENTWISE_COMMON_H_
#define KILN_PLUGINS_CPU_KERNELS_ELEMENTWISE_ELEMENTWISE_COMMON_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "kernels/broadcast.h"
#include "kiln/sdk/checks.h"

namespace kiln::cpu::elementwise {

// Validates that inputs 0..num_inputs-1 broadcast together (NumPy rules,
// rank <= kMaxBroadcastRank), fills *plan for them and sizes output 0 to the
// broadcast shape. On failure *plan is unspecified and the output untouched.
inline KilnStatus PrepareBroadcast(sdk::KernelContext& k, int32_t num_inputs,
                                   BroadcastPlan* plan) {
  std::vector<std::vector<int32_t>> shapes(static_cast<size_t>(num_inputs));
  for (int32_t i = 0; i < num_inputs; ++i) {
    KILN_SDK_RETURN_IF_ERROR(sdk::ExpectKnownShape(
        k, sdk::Input(i), &shapes[static_cast<size_t>(i)]));
    KILN_SDK_RETURN_IF_ERROR(
        sdk::ExpectRankAtMost(k, sdk::Input(i), kMaxBroadcastRank));
  }
  std::vector<int32_t> out_shape = shapes[0];
  for (int32_t i = 1; i < num_inputs; ++i) {
    std::vector<int32_t> next;
    if (!BroadcastShapes(out_shape, shapes[static_cast<size_t>(i)], &next)) {
      std::string all;
      for (int32_t j = 0; j < num_inputs; ++j) {
        if (j > 0) all += " and ";
        all += sdk::ShapeString(shapes[static_cast<size_t>(j)]);
      }
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT, sdk::OpName(k),
                    " input shapes ", all,
                    " cannot be broadcast together (NumPy rules: trailing "
                    "dimensions must be equal or 1)");
    }
    out_shape = std::move(next);
  }
  if (!MakeBroadcastPlan(shapes, out_shape, plan)) {
    return k.Fail(KILN_STATUS_INTERNAL, sdk::OpName(k),
                  ": could not plan the broadcast of shapes that do broadcast");
  }
  return k.Resize(k.output(0), out_shape);
}

// An inclusive op-version range.
struct VersionRange {
  int32_t min;
  int32_t max;
};

// Registers one stateless kernel per version range (ranges must not overlap).
template <sdk::KernelFn Prepare, sdk::KernelFn Invoke>
void AddKernelForVersions(sdk::PluginDefinition& def, int32_t builtin_code,
                          std::initializer_list<VersionRange> ranges) {
  for (const VersionRange& r : ranges) {
    def.AddKernel(sdk::MakeKernel<Prepare, Invoke>(builtin_code, r.min, r.max));
  }
}

// Registers one stateful kernel per version range. Every elementwise state
// is what prepare derives from the node and the shapes it was prepared for
// (broadcast plan, types, quantization), so the host may keep one per input
// signature.
template <typename State, KilnStatus (*Prepare)(sdk::KernelContext&, State&),
          KilnStatus (*Invoke)(sdk::KernelContext&, State&)>
void AddStatefulKernelForVersions(sdk::PluginDefinition& def,
                                  int32_t builtin_code,
                                  std::initializer_list<VersionRange> ranges) {
  for (const VersionRange& r : ranges) {
    def.AddKernel(sdk::StatePerShapeSignature(
        sdk::MakeStatefulKernel<State, Prepare, Invoke>(builtin_code, r.min,
                                                        r.max)));
  }
}

// Invoke's type dispatch: returns run(T{}) with T the C++ type that stores
// `type`, for the types Op::kTypes lists among FLOAT32, INT32, INT64, INT8,
// INT16 and BOOL (uint8_t). Any other type is one prepare did not accept:
// an INTERNAL failure.
template <typename Op, typename Run>
KilnStatus InvokeForType(sdk::KernelContext& k, KilnTensorType type,
                         Run&& run) {
  constexpr sdk::TypeSet types = Op::kTypes;
  switch (type) {
    case KILN_TYPE_FLOAT32:
      if constexpr (types.contains(KILN_TYPE_FLOAT32)) return run(float{});
      break;
    case KILN_TYPE_INT32:
      if constexpr (types.contains(KILN_TYPE_INT32)) return run(int32_t{});
      break;
    case KILN_TYPE_INT64:
      if constexpr (types.contains(KILN_TYPE_INT64)) return run(int64_t{});
      break;
    case KILN_TYPE_INT8:
      if constexpr (types.contains(KILN_TYPE_INT8)) return run(int8_t{});
      break;
    case KILN_TYPE_INT16:
      if constexpr (types.contains(KILN_TYPE_INT16)) return run(int16_t{});
      break;
    case KILN_TYPE_BOOL:
      if constexpr (types.contains(KILN_TYPE_BOOL)) return run(uint8_t{});
      break;
    default:
      break;
  }
  return k.Fail(KILN_STATUS_INTERNAL, sdk::OpName(k), ": invoke reached type ",
                sdk::TypeName(type), " that prepare did not accept");
}

}  // namespace kiln::cpu::elementwise

#endif  // KILN_PLUGINS_CPU_KERNELS_ELEMENTWISE_ELEMENTWISE_COMMON_H_
