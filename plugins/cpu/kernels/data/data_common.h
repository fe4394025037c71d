// Shared machinery of the data-movement kernels (kernels/data).
//
// These kernels move elements without looking at their values, so they are
// generic over the element size. Supported element types: FLOAT32, INT32,
// INT64, BOOL, INT8, UINT8, INT16. Everything else (STRING, INT4, FLOAT16,
// ...) is refused in prepare with a message naming the tensor and its type.
//
// Prepare/invoke contract (shared by every kernel here, see PlannedKernel):
//   - A kernel's Plan function validates the node and computes the output
//     shapes. When the output shape depends on an input's values and that
//     input has no data yet (non-constant and not computed), or an input's
//     shape is not known yet, it reports "not ready" and prepare returns OK
//     leaving the outputs unresized: the host prepares the node again right
//     before invoke, when the data is present.
//   - Invoke re-runs the Plan (cheap), fails cleanly if it is still not
//     ready, checks that the outputs have the shapes the plan expects (so a
//     host that skipped the second prepare gets an error, not a buffer
//     overrun), then moves the data.
#ifndef KILN_PLUGINS_CPU_KERNELS_DATA_DATA_COMMON_H_
#define KILN_PLUGINS_CPU_KERNELS_DATA_DATA_COMMON_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/sdk/plugin.h"

namespace kiln::cpu::data {

using Shape = std::vector<int32_t>;

// Highest tensor rank the data kernels accept.
inline constexpr int kMaxRank = 6;

// Bytes per element for the supported element types, 0 for any other type.
size_t ElementBytes(KilnTensorType type);

// "FLOAT32, INT32, INT64, BOOL, INT8, UINT8, INT16": for messages.
const char* SupportedTypeList();

int64_t NumElements(const Shape& shape);
// Row-major element strides of `shape`.
std::vector<int64_t> Strides(const Shape& shape);
std::string ShapeString(const Shape& shape);

// Fails unless `t` is present and has a supported element type.
KilnStatus ExpectMovableType(sdk::KernelContext& k, const char* what,
                             const sdk::Tensor& t);
// Fails unless `t` is present and has type `expected` (named in the message
// as the type of `reference_what`).
KilnStatus ExpectSameType(sdk::KernelContext& k, const char* what,
                          const sdk::Tensor& t, KilnTensorType expected,
                          const char* reference_what);
KilnStatus ExpectRankAtMost(sdk::KernelContext& k, const char* what,
                            const sdk::Tensor& t, int max_rank);

// True when the tensor's rank and all its dims are known (>= 0).
bool ShapeKnown(const sdk::Tensor& t);

// Reads the integer values of an index-like tensor (INT32 or INT64; INT16 too
// when `allow_int16`) into *values. *ready is false, and OK is returned, when
// the values are not available yet (no data and at least one element); an
// empty tensor is always ready. Fails on other types.
KilnStatus ReadIntegers(sdk::KernelContext& k, const char* what,
                        const sdk::Tensor& t, std::vector<int64_t>* values,
                        bool* ready, bool allow_int16 = false);

// At invoke: *data = the input's buffer; fails when a non-empty input has no
// buffer or one smaller than its shape needs. *data may be null for an
// empty tensor.
KilnStatus InputData(sdk::KernelContext& k, const char* what,
                     const sdk::Tensor& t, const void** data);

// Normalizes a possibly negative axis against `rank` (valid range
// [-rank, rank)); fails with a message naming `what`.
KilnStatus NormalizeAxis(sdk::KernelContext& k, const char* what, int64_t axis,
                         int rank, int* normalized);

// Quantization equality of two tensors (scales and zero points), through
// extension API 1.1. Fails (naming both tensors) when they differ.
KilnStatus ExpectSameQuantization(sdk::KernelContext& k, const char* what_a,
                                  const sdk::Tensor& a, const char* what_b,
                                  const sdk::Tensor& b);

// out[o] = in[base + sum_d maps[d][i_d]] for every output multi-index
// (i_0, ..., i_{r-1}), with maps[d].size() the extent of output dim d and
// entries in elements. A negative map entry writes the element at `fill`
// instead (null fill: zero bytes). An empty `maps` copies one element
// (scalar). `in` may be null when no entry reads it.
void CopyWithDimMaps(const std::vector<std::vector<int64_t>>& maps,
                     int64_t base, size_t element_bytes, const void* in,
                     void* out, const void* fill);

// What a kernel's Plan function computes.
struct PlanBase {
  // False when prepare must leave the outputs alone (see file comment).
  bool ready = true;
  // Which input was missing, for the invoke-time message.
  std::string not_ready_reason;
  // One shape per output.
  std::vector<Shape> output_shapes;

  void NotReady(std::string reason) {
    ready = false;
    not_ready_reason = std::move(reason);
  }
};

// Resizes every output to plan.output_shapes.
KilnStatus ResizeOutputs(sdk::KernelContext& k, const PlanBase& plan);
// At invoke: fails unless the plan is ready, every output has the planned
// shape, and every non-empty output has a buffer of the right size.
KilnStatus CheckOutputsForInvoke(sdk::KernelContext& k, const PlanBase& plan);

// Marks the plan not ready when an input's rank or a dim is unknown.
void CheckInputShapesKnown(sdk::KernelContext& k, PlanBase& plan);

template <typename Plan, KilnStatus (*MakePlan)(sdk::KernelContext&, Plan&)>
KilnStatus PlannedPrepare(sdk::KernelContext& k) {
  Plan plan;
  CheckInputShapesKnown(k, plan);
  if (!plan.ready) return KILN_STATUS_OK;
  KILN_SDK_RETURN_IF_ERROR(MakePlan(k, plan));
  if (!plan.ready) return KILN_STATUS_OK;
  return ResizeOutputs(k, plan);
}

template <typename Plan, KilnStatus (*MakePlan)(sdk::KernelContext&, Plan&),
          KilnStatus (*Run)(sdk::KernelContext&, const Plan&)>
KilnStatus PlannedInvoke(sdk::KernelContext& k) {
  Plan plan;
  CheckInputShapesKnown(k, plan);
  if (plan.ready) KILN_SDK_RETURN_IF_ERROR(MakePlan(k, plan));
  KILN_SDK_RETURN_IF_ERROR(CheckOutputsForInvoke(k, plan));
  return Run(k, plan);
}

// A kernel following the contract above for op versions [min, max].
template <typename Plan, KilnStatus (*MakePlan)(sdk::KernelContext&, Plan&),
          KilnStatus (*Run)(sdk::KernelContext&, const Plan&)>
KilnKernel PlannedKernel(int32_t builtin_code, int32_t min_version,
                         int32_t max_version) {
  return sdk::MakeKernel<PlannedPrepare<Plan, MakePlan>,
                         PlannedInvoke<Plan, MakePlan, Run>>(
      builtin_code, min_version, max_version);
}

// Registration of each data-movement source file.
void RegisterReshapeKernels(sdk::PluginDefinition& def);
void RegisterTransposeKernels(sdk::PluginDefinition& def);
void RegisterConcatSplitKernels(sdk::PluginDefinition& def);
void RegisterSliceKernels(sdk::PluginDefinition& def);
void RegisterGatherScatterKernels(sdk::PluginDefinition& def);
void RegisterTilePadKernels(sdk::PluginDefinition& def);

}  // namespace kiln::cpu::data

#endif  // KILN_PLUGINS_CPU_KERNELS_DATA_DATA_COMMON_H_
