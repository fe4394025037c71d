// Host-intrinsic ops: control flow (WHILE, IF, CALL_ONCE,
// STABLEHLO_COMPOSITE) and resource variables (VAR_HANDLE, READ_VARIABLE,
// ASSIGN_VARIABLE). See interpreter.h for why the host runs them.
#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "interpreter/interpreter.h"
#include "interpreter/subgraph_state.h"
#include "kiln/kiln_builtin_ops.h"

namespace kiln {
namespace {

// A tensor's value copied out of a subgraph.
struct TensorValue {
  KilnTensorType type = KILN_TYPE_FLOAT32;
  std::vector<int32_t> shape;
  std::vector<uint8_t> bytes;
};

// The model guarantees the control-flow options (model_checks.h).
int32_t SubgraphOption(const NodeDesc& node, uint32_t key) {
  const OptionValue* o = node.FindOption(key);
  return o != nullptr && o->kind == OptionValue::Kind::kInt
             ? static_cast<int32_t>(o->i)
             : -1;
}

std::string StringOption(const NodeDesc& node, uint32_t key) {
  const OptionValue* o = node.FindOption(key);
  return o != nullptr && o->kind == OptionValue::Kind::kString ? o->s : "";
}

size_t ValueBytes(const TensorState& t) {
  if (t.data == nullptr) return 0;
  if (t.ElementType() == KILN_TYPE_STRING) return t.bytes;
  return std::min(t.bytes, t.RequiredBytes());
}

TensorValue ReadValue(const TensorState& t) {
  TensorValue v;
  v.type = t.ElementType();
  v.shape = t.shape;
  const size_t n = ValueBytes(t);
  if (n > 0) {
    const auto* p = static_cast<const uint8_t*>(t.data);
    v.bytes.assign(p, p + n);
  }
  return v;
}

// Copies `v` into `t`, which must have v's type; heap storage when `t` has
// no planned bytes (or holds strings).
absl::Status CopyInto(TensorState& t, const TensorValue& v,
                      const std::string& where) {
  const KilnTensorType type = t.ElementType();
  if (type != v.type) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": tensor '", t.desc->name, "' has type ", TypeName(type),
        " but receives a ", TypeName(v.type), " value"));
  }
  if (type == KILN_TYPE_STRING || t.data == nullptr ||
      t.storage == TensorStorage::kOwned) {
    if (t.storage != TensorStorage::kOwned || t.bytes != v.bytes.size()) {
      t.AllocateOwned(v.bytes.size());
    }
  }
  if (t.bytes < v.bytes.size()) {
    return absl::InternalError(
        absl::StrCat(where, ": tensor '", t.desc->name, "' holds ", t.bytes,
                     " bytes but receives ", v.bytes.size()));
  }
  if (!v.bytes.empty()) std::memcpy(t.data, v.bytes.data(), v.bytes.size());
  return absl::OkStatus();
}

// Gives `t` the shape and value of `v`.
absl::Status StoreValue(TensorState& t, const TensorValue& v,
                        const std::string& where) {
  t.shape = v.shape;
  t.has_rank = true;
  return CopyInto(t, v, where);
}

// The values of `node`'s inputs from `first` on (omitted inputs: empty).
std::vector<TensorValue> ReadInputs(const SubgraphState& s,
                                    const NodeDesc& node, size_t first) {
  std::vector<TensorValue> values;
  for (size_t i = first; i < node.inputs.size(); ++i) {
    const int32_t t = node.inputs[i];
    values.push_back(t < 0 ? TensorValue() : ReadValue(s.tensor(t)));
  }
  return values;
}

std::vector<TensorValue> ReadOutputs(const SubgraphState& s) {
  std::vector<TensorValue> values;
  for (int32_t t : s.model().outputs) values.push_back(ReadValue(s.tensor(t)));
  return values;
}

absl::Status StoreOutputs(SubgraphState& s, const NodeDesc& node,
                          const std::vector<TensorValue>& values,
                          const std::string& where) {
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    KILN_RETURN_IF_ERROR(
        StoreValue(s.tensor(node.outputs[i]), values[i], where));
  }
  return absl::OkStatus();
}

// Copies `values` into the inputs of `callee`, planning it again first when
// it was never planned or an input's shape changed.
absl::Status LoadInputs(Interpreter& interpreter, SubgraphState& callee,
                        const std::vector<TensorValue>& values,
                        const std::string& where) {
  const std::vector<int32_t>& inputs = callee.model().inputs;
  bool replan = !callee.allocated;
  for (size_t i = 0; i < inputs.size(); ++i) {
    TensorRecord& t = callee.tensor(inputs[i]);
    if (!t.has_rank || t.shape != values[i].shape) {
      t.shape = values[i].shape;
      t.has_rank = true;
      replan = true;
    }
  }
  if (replan)
    KILN_RETURN_IF_ERROR(interpreter.AllocateSubgraph(callee.index()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    KILN_RETURN_IF_ERROR(CopyInto(callee.tensor(inputs[i]), values[i], where));
  }
  return absl::OkStatus();
}

absl::StatusOr<int32_t> ResourceId(const TensorState& t, size_t num_variables,
                                   const std::string& where) {
  if (t.data == nullptr || t.bytes < sizeof(int32_t)) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": resource tensor '", t.desc->name,
                     "' holds no variable handle"));
  }
  int32_t id = -1;
  std::memcpy(&id, t.data, sizeof(id));
  if (id < 0 || static_cast<size_t>(id) >= num_variables) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": resource tensor '", t.desc->name, "' holds ", id,
                     ", which is not a handle made by VAR_HANDLE"));
  }
  return id;
}

// One count a host-intrinsic node must match.
struct Arity {
  const char* what;
  size_t got;
  size_t want;
};

absl::Status CheckArity(const std::string& where,
                        std::initializer_list<Arity> checks) {
  for (const Arity& a : checks) {
    if (a.got != a.want) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": ", a.what, " is ", a.got, ", expected ", a.want));
    }
  }
  return absl::OkStatus();
}

// The counts a host-intrinsic node must match: its own inputs and outputs
// against the subgraphs it calls (whose indices the model checks proved).
absl::Status CheckIntrinsicArity(const Model& model, const NodeDesc& node,
                                 const std::string& where) {
  auto ins = [&](uint32_t key) {
    return model.graph(SubgraphOption(node, key)).inputs.size();
  };
  auto outs = [&](uint32_t key) {
    return model.graph(SubgraphOption(node, key)).outputs.size();
  };
  const size_t n_in = node.inputs.size(), n_out = node.outputs.size();
  switch (node.builtin_code) {
    case KILN_OP_WHILE:
      return CheckArity(where, {{"the number of outputs", n_out, n_in},
                                {"the cond subgraph's input count",
                                 ins(kHostOptionCondSubgraph), n_in},
                                {"the cond subgraph's output count",
                                 outs(kHostOptionCondSubgraph), 1},
                                {"the body subgraph's input count",
                                 ins(kHostOptionBodySubgraph), n_in},
                                {"the body subgraph's output count",
                                 outs(kHostOptionBodySubgraph), n_in}});
    case KILN_OP_IF:
      if (n_in == 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": IF needs a condition input"));
      }
      for (uint32_t branch :
           {kHostOptionThenSubgraph, kHostOptionElseSubgraph}) {
        KILN_RETURN_IF_ERROR(CheckArity(
            where,
            {{"a branch subgraph's input count", ins(branch), n_in - 1},
             {"a branch subgraph's output count", outs(branch), n_out}}));
      }
      return absl::OkStatus();
    case KILN_OP_CALL_ONCE:
      return CheckArity(where, {{"the init subgraph's input count",
                                 ins(kHostOptionInitSubgraph), 0}});
    case KILN_OP_STABLEHLO_COMPOSITE:
      return CheckArity(where,
                        {{"the decomposition subgraph's input count",
                          ins(kHostOptionDecompositionSubgraph), n_in},
                         {"the decomposition subgraph's output count",
                          outs(kHostOptionDecompositionSubgraph), n_out}});
    case KILN_OP_VAR_HANDLE:
      return CheckArity(where, {{"the number of outputs", n_out, 1}});
    case KILN_OP_READ_VARIABLE:
      return CheckArity(where, {{"the number of inputs", n_in, 1},
                                {"the number of outputs", n_out, 1}});
    case KILN_OP_ASSIGN_VARIABLE:
      return CheckArity(where, {{"the number of inputs", n_in, 2}});
    default:
      return absl::OkStatus();
  }
}

}  // namespace

absl::Status Interpreter::ValidateIntrinsicNodes() const {
  for (const auto& s : subgraphs_) {
    for (const NodeRecord& node : s->nodes()) {
      if (node.host_intrinsic) {
        KILN_RETURN_IF_ERROR(ValidateIntrinsicNode(*s, node));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status Interpreter::ValidateIntrinsicNode(
    const SubgraphState& s, const NodeRecord& record) const {
  const NodeDesc& node = record.node();
  const std::string where =
      absl::StrCat("model '", model_->source(), "': ", NodeLabel(s, record));
  KILN_RETURN_IF_ERROR(CheckIntrinsicArity(*model_, node, where));
  for (int32_t t : node.inputs) {
    if (t < 0 && node.builtin_code != KILN_OP_STABLEHLO_COMPOSITE) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": an input is omitted (-1)"));
    }
  }
  for (int32_t t : node.outputs) {
    if (t < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": an output is omitted (-1)"));
    }
  }
  return absl::OkStatus();
}

absl::Status Interpreter::PrepareIntrinsic(SubgraphState& s, NodeRecord& node) {
  const NodeDesc& desc = node.node();
  if (desc.builtin_code == KILN_OP_VAR_HANDLE) {
    TensorRecord& out = s.tensor(desc.outputs[0]);
    out.shape.clear();
    out.has_rank = true;
    return absl::OkStatus();
  }
  // Outputs depend on another subgraph or on a stored value: dynamic.
  if (!desc.outputs.empty()) {
    node.deferred = true;
    for (int32_t t : desc.outputs) s.tensor(t).dynamic = true;
  }
  return absl::OkStatus();
}

absl::Status Interpreter::InvokeIntrinsic(SubgraphState& s, NodeRecord& node) {
  switch (node.node().builtin_code) {
    case KILN_OP_WHILE:
      return InvokeWhile(s, node);
    case KILN_OP_IF:
      return InvokeIf(s, node);
    case KILN_OP_CALL_ONCE:
      return InvokeCallOnce(s, node);
    case KILN_OP_STABLEHLO_COMPOSITE:
      return InvokeCallSubgraph(
          s, node,
          SubgraphOption(node.node(), kHostOptionDecompositionSubgraph));
    case KILN_OP_VAR_HANDLE:
      return InvokeVarHandle(s, node);
    case KILN_OP_READ_VARIABLE:
      return InvokeReadVariable(s, node);
    case KILN_OP_ASSIGN_VARIABLE:
      return InvokeAssignVariable(s, node);
    default:
      return absl::InternalError(
          absl::StrCat(NodeLabel(s, node), ": not a host-intrinsic op"));
  }
}

absl::Status Interpreter::InvokeCallSubgraph(SubgraphState& s,
                                             const NodeRecord& node,
                                             int32_t callee) {
  const NodeDesc& desc = node.node();
  const std::string where = NodeLabel(s, node);
  SubgraphState& c = *subgraphs_[static_cast<size_t>(callee)];
  const size_t first_input = desc.builtin_code == KILN_OP_IF ? 1 : 0;
  KILN_RETURN_IF_ERROR(
      LoadInputs(*this, c, ReadInputs(s, desc, first_input), where));
  KILN_RETURN_IF_ERROR(InvokeSubgraph(callee));
  return StoreOutputs(s, desc, ReadOutputs(c), where);
}

absl::Status Interpreter::InvokeIf(SubgraphState& s, const NodeRecord& node) {
  const NodeDesc& desc = node.node();
  const TensorRecord& cond = s.tensor(desc.inputs[0]);
  const KilnTensorType type = cond.ElementType();
  if (cond.data == nullptr || cond.NumElements() < 1 ||
      (type != KILN_TYPE_BOOL && type != KILN_TYPE_INT32)) {
    return absl::InvalidArgumentError(absl::StrCat(
        NodeLabel(s, node), ": the condition must be a non-empty BOOL tensor"));
  }
  const bool take_then = type == KILN_TYPE_BOOL
                             ? *static_cast<const uint8_t*>(cond.data) != 0
                             : *static_cast<const int32_t*>(cond.data) != 0;
  return InvokeCallSubgraph(
      s, node,
      SubgraphOption(
          desc, take_then ? kHostOptionThenSubgraph : kHostOptionElseSubgraph));
}

absl::Status Interpreter::InvokeWhile(SubgraphState& s,
                                      const NodeRecord& node) {
  const NodeDesc& desc = node.node();
  const int32_t cond_index = SubgraphOption(desc, kHostOptionCondSubgraph);
  const int32_t body_index = SubgraphOption(desc, kHostOptionBodySubgraph);
  SubgraphState& cond = *subgraphs_[static_cast<size_t>(cond_index)];
  SubgraphState& body = *subgraphs_[static_cast<size_t>(body_index)];
  const std::string where = NodeLabel(s, node);
  std::vector<TensorValue> values = ReadInputs(s, desc, 0);
  for (uint64_t iteration = 0;; ++iteration) {
    KILN_RETURN_IF_ERROR(CheckInterrupted([&] {
      return absl::StrCat("in ", where, " after ", iteration, " iterations");
    }));
    KILN_RETURN_IF_ERROR(LoadInputs(*this, cond, values, where));
    KILN_RETURN_IF_ERROR(InvokeSubgraph(cond_index));
    const TensorRecord& c = cond.tensor(cond.model().outputs[0]);
    if (c.ElementType() != KILN_TYPE_BOOL || c.data == nullptr ||
        c.NumElements() < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": the cond subgraph ", cond_index,
                       " must produce a non-empty BOOL tensor, got ",
                       TypeName(c.ElementType()), " ",
                       c.has_rank ? absl::StrCat(c.NumElements(), " elements")
                                  : "unknown shape"));
    }
    if (*static_cast<const uint8_t*>(c.data) == 0) break;
    if (max_while_iterations_ > 0 && iteration >= max_while_iterations_) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "model '", model_->source(), "': ", where, " would run more than ",
          max_while_iterations_,
          " iterations, the limit (InterpreterOptions.max_while_iterations, "
          "KilnInterpreterOptionsSetMaxWhileIterations, "
          "--max-while-iterations); raise it if the model is trusted and "
          "loops that long"));
    }
    KILN_RETURN_IF_ERROR(LoadInputs(*this, body, values, where));
    KILN_RETURN_IF_ERROR(InvokeSubgraph(body_index));
    values = ReadOutputs(body);
  }
  return StoreOutputs(s, desc, values, where);
}

absl::Status Interpreter::InvokeCallOnce(SubgraphState& s,
                                         const NodeRecord& node) {
  const int32_t init = SubgraphOption(node.node(), kHostOptionInitSubgraph);
  if (call_once_done_[static_cast<size_t>(init)]) return absl::OkStatus();
  KILN_RETURN_IF_ERROR(InvokeCallSubgraph(s, node, init));
  call_once_done_[static_cast<size_t>(init)] = true;
  return absl::OkStatus();
}

absl::Status Interpreter::InvokeVarHandle(SubgraphState& s,
                                          const NodeRecord& node) {
  const NodeDesc& desc = node.node();
  const std::string container = StringOption(desc, kHostOptionContainer);
  const std::string shared_name = StringOption(desc, kHostOptionSharedName);
  std::string key = container;
  key.push_back('\0');
  key += shared_name;
  auto [it, added] =
      variable_ids_.emplace(key, static_cast<int32_t>(variables_.size()));
  if (added) {
    variables_.emplace_back();
    variables_.back().name =
        container.empty() ? shared_name : container + "/" + shared_name;
  }
  const int32_t id = it->second;
  TensorRecord& out = s.tensor(desc.outputs[0]);
  if (out.data == nullptr || out.bytes < sizeof(int32_t)) {
    out.AllocateOwned(sizeof(int32_t));
  }
  std::memcpy(out.data, &id, sizeof(id));
  return absl::OkStatus();
}

absl::Status Interpreter::InvokeReadVariable(SubgraphState& s,
                                             const NodeRecord& node) {
  const NodeDesc& desc = node.node();
  const std::string where = NodeLabel(s, node);
  KILN_ASSIGN_OR_RETURN(const int32_t id, ResourceId(s.tensor(desc.inputs[0]),
                                                     variables_.size(), where));
  const Variable& var = variables_[static_cast<size_t>(id)];
  if (!var.assigned) {
    return absl::FailedPreconditionError(
        absl::StrCat(where, ": resource variable '", var.name,
                     "' is read before any ASSIGN_VARIABLE gave it a value"));
  }
  TensorValue v;
  v.type = var.type;
  v.shape = var.shape;
  v.bytes = var.bytes;
  return StoreValue(s.tensor(desc.outputs[0]), v, where);
}

absl::Status Interpreter::InvokeAssignVariable(SubgraphState& s,
                                               const NodeRecord& node) {
  const NodeDesc& desc = node.node();
  const std::string where = NodeLabel(s, node);
  KILN_ASSIGN_OR_RETURN(const int32_t id, ResourceId(s.tensor(desc.inputs[0]),
                                                     variables_.size(), where));
  const TensorRecord& value = s.tensor(desc.inputs[1]);
  if (value.data == nullptr && value.RequiredBytes() > 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": the value tensor '", value.desc->name, "' holds no data"));
  }
  Variable& var = variables_[static_cast<size_t>(id)];
  if (var.assigned && var.type != value.ElementType()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": resource variable '", var.name, "' holds ",
                     TypeName(var.type), " values; cannot assign a ",
                     TypeName(value.ElementType()), " tensor"));
  }
  TensorValue v = ReadValue(value);
  var.type = v.type;
  var.shape = std::move(v.shape);
  var.bytes = std::move(v.bytes);
  var.assigned = true;
  return absl::OkStatus();
}

}  // namespace kiln
