// Constant folding at creation: a pure node whose inputs are all constants
// (e.g. the DEQUANTIZE of float16 weights) is run once with its kernel; its
// outputs become constants owned by the subgraph state and the node leaves
// the execution plan, so delegates see float32 constant weights instead of
// a DEQUANTIZE they would have to claim or leave on the CPU.
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "interpreter/interpreter.h"
#include "interpreter/subgraph_state.h"

namespace kiln {
namespace {

// Ops whose output depends on nothing but their inputs' values and shapes.
bool IsPureOp(int32_t code) {
  switch (code) {
    case KILN_OP_DEQUANTIZE:
    case KILN_OP_DENSIFY:
    case KILN_OP_CAST:
    case KILN_OP_RESHAPE:
    case KILN_OP_TRANSPOSE:
    case KILN_OP_EXPAND_DIMS:
    case KILN_OP_SQUEEZE:
      return true;
    default:
      return false;
  }
}

bool Foldable(const SubgraphState& s, const NodeRecord& node) {
  if (node.host_intrinsic || node.is_partition() || node.kernel == nullptr ||
      !node.initialized || !IsPureOp(node.node().builtin_code)) {
    return false;
  }
  const NodeDesc& desc = node.node();
  if (desc.outputs.empty()) return false;
  for (int32_t t : desc.inputs) {
    if (t >= 0 && !s.tensor(t).is_constant()) return false;
  }
  const std::vector<int32_t>& outputs = s.model().outputs;
  for (int32_t t : desc.outputs) {
    if (t < 0 || s.tensor(t).desc->is_variable ||
        s.tensor(t).desc->type == KILN_TYPE_STRING ||
        std::find(outputs.begin(), outputs.end(), t) != outputs.end()) {
      return false;
    }
  }
  return true;
}

}  // namespace

absl::Status Interpreter::FoldConstants(SubgraphState& s) {
  std::vector<int32_t> plan;
  for (int32_t index : s.execution_plan) {
    NodeRecord& node = s.node(index);
    if (!Foldable(s, node) || !FoldNode(s, node)) plan.push_back(index);
  }
  s.execution_plan = std::move(plan);
  return absl::OkStatus();
}

bool Interpreter::FoldNode(SubgraphState& s, NodeRecord& node) {
  const NodeDesc& desc = node.node();
  absl::Status status = CallKernel(s, node, PluginStage::kPrepare);
  for (int32_t t : desc.outputs) {
    TensorRecord& x = s.tensor(t);
    if (!status.ok()) break;
    if (!x.has_rank || x.ElementType() == KILN_TYPE_STRING) {
      status = absl::FailedPreconditionError("output shape unknown");
      break;
    }
    // Sized by the kernel from model data: within max_arena_bytes, or not
    // folded (AllocateTensors then refuses it with the message).
    status = CheckTensorBytes("constant folding", x);
  }
  // Not folded: the node runs as usual; AllocateTensors resets its outputs.
  if (status.ok()) status = EvaluateNode(s, node);
  if (!status.ok()) return false;
  for (int32_t t : desc.outputs) {
    TensorRecord& x = s.tensor(t);
    s.folded_constants.push_back(std::move(x.owned));
    x.owned = std::vector<uint8_t>();
    x.data = s.folded_constants.back().data();
    x.storage = TensorStorage::kConstant;
  }
  node.folded = true;
  return true;
}

}  // namespace kiln
