// Which nodes the OpenCL delegate runs and how: per-op support checks,
// shape inference and the kernel launches of one node.
#ifndef KILN_PLUGINS_OPENCL_OPS_H_
#define KILN_PLUGINS_OPENCL_OPS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cl_api.h"
#include "kernel_sources.h"
#include "kiln/sdk/delegate.h"

namespace kiln::opencl {

// An op the delegate implements (KilnBuiltinOpName names it), with the
// inclusive op-version range whose float32 semantics its kernels implement
// and the types its operands may have (float32 data, int32 constant shape,
// axes or paddings). The delegate's manifest (what `kiln plugin inspect`
// shows and the host checks claims against) is this table.
struct OpSupport {
  int32_t builtin_code;
  int32_t min_version;
  int32_t max_version;
  sdk::TypeSet types = {KILN_TYPE_FLOAT32};
};
const std::vector<OpSupport>& SupportedOps();
// Null when the delegate does not implement `builtin_code`.
const OpSupport* FindOpSupport(int32_t builtin_code);

// One argument of a kernel launch.
struct KernelArg {
  enum class Kind { kTensor, kInt, kFloat, kInt4 };
  Kind kind = Kind::kInt;
  int32_t tensor = -1;  // kTensor: tensor index; -1 = absent (dummy buffer)
  cl_int i = 0;
  cl_float f = 0.f;
  cl_int4 v = {{0, 0, 0, 0}};
};

// One enqueue: a kernel, or (kernel == nullptr) a buffer copy of
// `copy_elements` elements from tensor copy_from to tensor copy_to.
struct Launch {
  ProgramGroup group = ProgramGroup::kElementwise;
  const char* kernel = nullptr;
  std::vector<KernelArg> args;
  std::vector<size_t> global;
  int32_t copy_from = -1, copy_to = -1;
  size_t copy_elements = 0;
};

struct NodePlan {
  int32_t output_tensor = -1;
  std::vector<int32_t> output_shape;
  std::vector<Launch> launches;
};

// Shape of a tensor as the planner should see it. Returns false when it is
// not known statically (rank unknown or a dynamic dimension).
using ShapeLookup =
    std::function<bool(int32_t tensor_index, std::vector<int32_t>* shape)>;

// The static shape of `tensor`; false when it is absent, its rank is
// unknown or a dimension is dynamic (*shape is then unspecified).
bool StaticShape(const sdk::Tensor& tensor, std::vector<int32_t>* shape);

// Checks that the delegate supports `node` (op, op version, tensor types,
// static shapes of rank <= 4, options) and plans it. Supported with *plan
// filled, else Unsupported with the reason. Reads constant parameter tensors
// (RESHAPE shape, MEAN axes, PAD paddings) when their data is available; a
// supported plan without launches means they were not readable yet.
sdk::NodeSupport PlanNode(const sdk::GraphNode& node,
                          const ShapeLookup& shape_of, NodePlan* plan);

}  // namespace kiln::opencl

#endif  // KILN_PLUGINS_OPENCL_OPS_H_
