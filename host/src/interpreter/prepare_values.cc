// Prepare-time values: shape arithmetic evaluated at AllocateTensors.
//
// Converters compute reshape shapes at run time (the Tensordot pattern:
// SHAPE -> GATHER -> REDUCE_PROD -> PACK -> RESHAPE). With no data in any
// activation at prepare, the RESHAPE could not size its output and
// everything downstream would be prepared again on every Invoke. As in
// LiteRT (SHAPE writes its output at prepare; kernels whose inputs are
// constant or persistent evaluate at prepare), the host evaluates such
// nodes right after their prepare: SHAPE of an input of known shape, and
// small integer arithmetic on constants and such values. Their outputs hold
// the values until the next AllocateTensors (interpreter.h, AllocateTensors;
// the plan cache keeps them per input signature) and the nodes do not run
// at invoke.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "interpreter/allocation.h"
#include "interpreter/interpreter.h"
#include "interpreter/subgraph_state.h"
#include "kiln/kiln_builtin_ops.h"

namespace kiln {
namespace {

// The largest prepare-time value, per output: shape vectors and indices,
// not data.
constexpr size_t kMaxPreparedValueBytes = 1024;

// Pure, cheap ops that shape arithmetic uses: their outputs depend only on
// their inputs' values and shapes.
bool IsShapeArithmeticOp(int32_t code) {
  switch (code) {
    case KILN_OP_GATHER:
    case KILN_OP_REDUCE_PROD:
    case KILN_OP_PACK:
    case KILN_OP_UNPACK:
    case KILN_OP_CONCATENATION:
    case KILN_OP_STRIDED_SLICE:
    case KILN_OP_SLICE:
    case KILN_OP_CAST:
    case KILN_OP_SQUEEZE:
    case KILN_OP_EXPAND_DIMS:
    case KILN_OP_RESHAPE:
    case KILN_OP_ADD:
    case KILN_OP_SUB:
    case KILN_OP_MUL:
    case KILN_OP_FLOOR_DIV:
    case KILN_OP_MAXIMUM:
    case KILN_OP_MINIMUM:
      return true;
    default:
      return false;
  }
}

// The inputs the node's value depends on are known now: SHAPE needs its
// input's shape only, every other op its inputs' values (constants or
// prepare-time values).
bool InputsKnown(const SubgraphState& s, const NodeDesc& desc) {
  if (desc.builtin_code == KILN_OP_SHAPE) {
    if (desc.inputs.empty() || desc.inputs[0] < 0) return false;
    const TensorRecord& in = s.tensor(desc.inputs[0]);
    return in.has_rank && !in.dynamic;
  }
  if (!IsShapeArithmeticOp(desc.builtin_code)) return false;
  for (int32_t t : desc.inputs) {
    if (t < 0) continue;
    const TensorRecord& in = s.tensor(t);
    if (!in.is_constant() && !in.prepared_value) return false;
  }
  return true;
}

// Every output is a small int32/int64 activation of known shape that is no
// subgraph output.
bool OutputsSmallIntegers(const SubgraphState& s, const NodeDesc& desc) {
  if (desc.outputs.empty()) return false;
  const std::vector<int32_t>& outputs = s.model().outputs;
  for (int32_t t : desc.outputs) {
    if (t < 0) return false;
    const TensorRecord& x = s.tensor(t);
    const KilnTensorType type = x.ElementType();
    if (!x.has_rank || x.is_constant() || x.desc->is_variable ||
        (type != KILN_TYPE_INT32 && type != KILN_TYPE_INT64) ||
        x.RequiredBytes() > kMaxPreparedValueBytes ||
        std::find(outputs.begin(), outputs.end(), t) != outputs.end()) {
      return false;
    }
  }
  return true;
}

}  // namespace

absl::Status Interpreter::WriteShapeValue(SubgraphState& s,
                                          const NodeDesc& desc) {
  const TensorRecord& in = s.tensor(desc.inputs[0]);
  TensorRecord& out = s.tensor(desc.outputs[0]);
  if (desc.outputs.size() != 1 ||
      out.NumElements() != static_cast<int64_t>(in.shape.size())) {
    return absl::FailedPreconditionError("SHAPE output is not [rank]");
  }
  for (size_t i = 0; i < in.shape.size(); ++i) {
    if (out.ElementType() == KILN_TYPE_INT64) {
      static_cast<int64_t*>(out.data)[i] = in.shape[i];
    } else {
      static_cast<int32_t*>(out.data)[i] = in.shape[i];
    }
  }
  return absl::OkStatus();
}

absl::Status Interpreter::EvaluateNode(SubgraphState& s, NodeRecord& node) {
  const NodeDesc& desc = node.node();
  for (int32_t t : desc.outputs) {
    AllocateValue(s.tensor(t), s.tensor(t).RequiredBytes());
  }
  absl::Status status = desc.builtin_code == KILN_OP_SHAPE
                            ? WriteShapeValue(s, desc)
                            : CallKernel(s, node, PluginStage::kInvoke);
  if (status.ok()) return status;
  for (int32_t t : desc.outputs) {
    TensorRecord& x = s.tensor(t);
    x.owned.clear();
    x.data = nullptr;
    x.bytes = 0;
    x.storage = TensorStorage::kNone;
  }
  return status;
}

void Interpreter::EvaluateAtPrepare(SubgraphState& s, NodeRecord& node) {
  const NodeDesc& desc = node.node();
  if (node.host_intrinsic || node.is_partition() || node.kernel == nullptr ||
      node.delegated_to >= 0 || node.deferred || !InputsKnown(s, desc) ||
      !OutputsSmallIntegers(s, desc)) {
    return;
  }
  // A failure leaves the node to run at invoke, where it fails the same way
  // with its message.
  if (!EvaluateNode(s, node).ok()) return;
  for (int32_t t : desc.outputs) s.tensor(t).prepared_value = true;
  node.evaluated_at_prepare = true;
}

}  // namespace kiln
