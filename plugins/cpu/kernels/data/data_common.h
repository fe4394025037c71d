// Shared machinery of the data-movement kernels (kernels/data).
//
// These kernels move elements without looking at their values, so they are
// generic over the element size. Supported element types: kMovableTypes.
// Everything else (STRING, INT4, FLOAT16, ...) is refused in prepare with
// the kiln/sdk/checks.h message naming the tensor and its type.
//
// Prepare/invoke contract (shared by every kernel here, see PlannedKernel):
//   - A kernel's Plan function validates the node and computes the output
//     shapes. When the output shape depends on an input's values and that
//     input has no data yet (non-constant and not computed), or an input's
//     shape is not known yet, it reports "not ready" and prepare returns OK
//     leaving the outputs unresized: the host prepares the node again right
//     before invoke, when the data is present.
//   - Invoke re-runs the Plan (cheap; KeptPlanKernel reuses prepare's plan
//     when nothing it depends on can have changed), fails cleanly if it is
//     still not ready, checks that the outputs have the shapes the plan expects
//     (so a host that skipped the second prepare gets an error, not a buffer
//     overrun), then moves the data.
#ifndef KILN_PLUGINS_CPU_KERNELS_DATA_DATA_COMMON_H_
#define KILN_PLUGINS_CPU_KERNELS_DATA_DATA_COMMON_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/sdk/checks.h"

namespace kiln::cpu::data {

using Shape = std::vector<int32_t>;

// Highest tensor rank the data kernels accept.
inline constexpr int kMaxRank = 6;

// The element types these kernels move.
inline constexpr sdk::TypeSet kMovableTypes{
    KILN_TYPE_FLOAT32, KILN_TYPE_INT32, KILN_TYPE_INT64, KILN_TYPE_BOOL,
    KILN_TYPE_INT8,    KILN_TYPE_UINT8, KILN_TYPE_INT16};

using sdk::ShapeString;

int64_t NumElements(const Shape& shape);
// Product of dims [begin, end) of `shape`.
int64_t DimProduct(const Shape& shape, size_t begin, size_t end);
// {0, step, 2 * step, ...}: `count` offsets, a dim map that reads a whole
// dimension whose elements lie `step` apart.
std::vector<int64_t> Arithmetic(int64_t count, int64_t step);
// Row-major element strides of `shape`.
std::vector<int64_t> Strides(const Shape& shape);

// Operand `in` has a movable type and output 0 has the same type.
KilnStatus ExpectMovableInOut(sdk::KernelContext& k,
                              sdk::Operand in = sdk::Input(0));

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

// Reads the values of index-like operand `o` (sdk::ReadIntegers) and marks
// the plan not ready when they are not known yet. *values is empty then.
KilnStatus ReadIndexValues(sdk::KernelContext& k, sdk::Operand o,
                           PlanBase& plan, std::vector<int64_t>* values,
                           sdk::TypeSet allowed = sdk::kIndexTypes);

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

// A planned kernel whose plan depends only on its inputs' shapes and on the
// values of inputs 1.. (never input 0's values): the plan prepare made is
// kept (per input shape signature) and reused at invoke while every input
// from 1 on is constant or absent and the inputs keep the shapes prepare
// saw; otherwise invoke plans again as PlannedInvoke does. Either way the
// outputs are checked against the plan before Run.
template <typename Plan>
struct KeptPlanState {
  Plan plan;
  bool reusable = false;
  std::vector<Shape>
      input_shapes;  // present inputs at prepare; -1 rank: absent
};

// Whether every input from 1 on is constant or absent.
bool ParametersConstant(sdk::KernelContext& k);
// Whether the inputs have the shapes in `shapes` (as InputShapes saved them).
bool InputShapesAre(sdk::KernelContext& k, const std::vector<Shape>& shapes);
std::vector<Shape> InputShapes(sdk::KernelContext& k);

template <typename Plan, KilnStatus (*MakePlan)(sdk::KernelContext&, Plan&)>
KilnStatus KeptPlanPrepare(sdk::KernelContext& k, KeptPlanState<Plan>& s) {
  s.plan = Plan();
  s.reusable = false;
  CheckInputShapesKnown(k, s.plan);
  if (!s.plan.ready) return KILN_STATUS_OK;
  KILN_SDK_RETURN_IF_ERROR(MakePlan(k, s.plan));
  if (!s.plan.ready) return KILN_STATUS_OK;
  s.reusable = ParametersConstant(k);
  if (s.reusable) s.input_shapes = InputShapes(k);
  return ResizeOutputs(k, s.plan);
}

template <typename Plan, KilnStatus (*MakePlan)(sdk::KernelContext&, Plan&),
          KilnStatus (*Run)(sdk::KernelContext&, const Plan&)>
KilnStatus KeptPlanInvoke(sdk::KernelContext& k, KeptPlanState<Plan>& s) {
  if (!s.reusable || !InputShapesAre(k, s.input_shapes)) {
    return PlannedInvoke<Plan, MakePlan, Run>(k);
  }
  KILN_SDK_RETURN_IF_ERROR(CheckOutputsForInvoke(k, s.plan));
  return Run(k, s.plan);
}

template <typename Plan, KilnStatus (*MakePlan)(sdk::KernelContext&, Plan&),
          KilnStatus (*Run)(sdk::KernelContext&, const Plan&)>
KilnKernel KeptPlanKernel(int32_t builtin_code, int32_t min_version,
                          int32_t max_version) {
  return sdk::StatePerShapeSignature(
      sdk::MakeStatefulKernel<KeptPlanState<Plan>,
                              KeptPlanPrepare<Plan, MakePlan>,
                              KeptPlanInvoke<Plan, MakePlan, Run>>(
          builtin_code, min_version, max_version));
}

// Registration of each data-movement source file.
void RegisterReshapeKernels(sdk::PluginDefinition& def);
void RegisterTransposeKernels(sdk::PluginDefinition& def);
void RegisterConcatSplitKernels(sdk::PluginDefinition& def);
void RegisterSliceKernels(sdk::PluginDefinition& def);
void RegisterGatherScatterKernels(sdk::PluginDefinition& def);
void RegisterTilePadKernels(sdk::PluginDefinition& def);
void RegisterWhereKernels(sdk::PluginDefinition& def);

}  // namespace kiln::cpu::data

#endif  // KILN_PLUGINS_CPU_KERNELS_DATA_DATA_COMMON_H_
