// Host-intrinsic ops: control flow (WHILE, IF, CALL_ONCE,
// STABLEHLO_COMPOSITE) and resource variables (VAR_HANDLE, READ_VARIABLE,
// ASSIGN_VARIABLE). See interpreter.h for why the host runs them.
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "interpreter/interpreter.h"
#include "interpreter/subgraph_runtime.h"
#include "kiln/kiln_builtin_ops.h"

namespace kiln {
namespace {

// A tensor's value copied out of a subgraph.
struct TensorValue {
  KilnTensorType type = KILN_TYPE_FLOAT32;
  std::vector<int32_t> shape;
  std::vector<uint8_t> bytes;
};

int64_t IntOption(const Node& node, uint32_t key, int64_t fallback) {
  const OptionValue* o = node.FindOption(key);
  return o != nullptr && o->kind == OptionValue::Kind::kInt ? o->i : fallback;
}

std::string StringOption(const Node& node, uint32_t key) {
  const OptionValue* o = node.FindOption(key);
  return o != nullptr && o->kind == OptionValue::Kind::kString ? o->s : "";
}

size_t ValueBytes(const Tensor& t) {
  if (t.data == nullptr) return 0;
  if (t.type == KILN_TYPE_STRING) return t.bytes;
  return std::min(t.bytes, t.RequiredBytes());
}

}  // namespace

absl::Status Interpreter::ValidateIntrinsicNodes() {
  for (auto& sp : subgraphs_) {
    SubgraphRuntime& s = *sp;
    for (Node& node : s.graph.nodes) {
      if (!s.host_intrinsic[static_cast<size_t>(node.index)]) continue;
      const std::string where =
          absl::StrCat("model '", model_->source(), "': ", NodeLabel(s, node));
      auto subgraph_option = [&](uint32_t key, const char* what,
                                 int32_t* index) -> absl::Status {
        const int64_t v = IntOption(node, key, -1);
        if (v < 0 || v >= num_subgraphs()) {
          return absl::InvalidArgumentError(
              absl::StrCat(where, ": ", what, " subgraph index ", v,
                           v < 0 ? " is missing" : " is out of range",
                           " (the model has ", num_subgraphs(), " subgraphs)"));
        }
        if (v == s.index) {
          return absl::InvalidArgumentError(absl::StrCat(
              where, ": ", what, " subgraph ", v,
              " is the subgraph that contains the node; recursion is not "
              "supported"));
        }
        *index = static_cast<int32_t>(v);
        return absl::OkStatus();
      };
      auto count_check = [&](const char* what, size_t got,
                             size_t want) -> absl::Status {
        if (got == want) return absl::OkStatus();
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": ", what, " is ", got, ", expected ", want));
      };
      auto graph_of = [&](int32_t i) -> const Graph& {
        return subgraphs_[static_cast<size_t>(i)]->graph;
      };
      absl::Status st;
      switch (node.builtin_code) {
        case KILN_OP_WHILE: {
          int32_t cond = -1, body = -1;
          if (!(st = subgraph_option(kHostOptionCondSubgraph, "cond", &cond))
                   .ok())
            return st;
          if (!(st = subgraph_option(kHostOptionBodySubgraph, "body", &body))
                   .ok())
            return st;
          const size_t n = node.inputs.size();
          if (!(st = count_check("the number of outputs", node.outputs.size(),
                                 n))
                   .ok())
            return st;
          if (!(st = count_check("the cond subgraph's input count",
                                 graph_of(cond).inputs.size(), n))
                   .ok())
            return st;
          if (!(st = count_check("the cond subgraph's output count",
                                 graph_of(cond).outputs.size(), 1))
                   .ok())
            return st;
          if (!(st = count_check("the body subgraph's input count",
                                 graph_of(body).inputs.size(), n))
                   .ok())
            return st;
          if (!(st = count_check("the body subgraph's output count",
                                 graph_of(body).outputs.size(), n))
                   .ok())
            return st;
          break;
        }
        case KILN_OP_IF: {
          int32_t then_index = -1, else_index = -1;
          if (!(st = subgraph_option(kHostOptionThenSubgraph, "then",
                                     &then_index))
                   .ok())
            return st;
          if (!(st = subgraph_option(kHostOptionElseSubgraph, "else",
                                     &else_index))
                   .ok())
            return st;
          if (node.inputs.empty()) {
            return absl::InvalidArgumentError(
                absl::StrCat(where, ": IF needs a condition input"));
          }
          for (int32_t b : {then_index, else_index}) {
            if (!(st = count_check("a branch subgraph's input count",
                                   graph_of(b).inputs.size(),
                                   node.inputs.size() - 1))
                     .ok())
              return st;
            if (!(st = count_check("a branch subgraph's output count",
                                   graph_of(b).outputs.size(),
                                   node.outputs.size()))
                     .ok())
              return st;
          }
          break;
        }
        case KILN_OP_CALL_ONCE: {
          int32_t init = -1;
          if (!(st = subgraph_option(kHostOptionInitSubgraph, "init", &init))
                   .ok())
            return st;
          if (!(st = count_check("the init subgraph's input count",
                                 graph_of(init).inputs.size(), 0))
                   .ok())
            return st;
          break;
        }
        case KILN_OP_STABLEHLO_COMPOSITE: {
          int32_t d = -1;
          if (!(st = subgraph_option(kHostOptionDecompositionSubgraph,
                                     "decomposition", &d))
                   .ok())
            return st;
          if (!(st = count_check("the decomposition subgraph's input count",
                                 graph_of(d).inputs.size(), node.inputs.size()))
                   .ok())
            return st;
          if (!(st = count_check("the decomposition subgraph's output count",
                                 graph_of(d).outputs.size(),
                                 node.outputs.size()))
                   .ok())
            return st;
          break;
        }
        case KILN_OP_VAR_HANDLE:
          if (!(st = count_check("the number of outputs", node.outputs.size(),
                                 1))
                   .ok())
            return st;
          break;
        case KILN_OP_READ_VARIABLE:
          if (!(st = count_check("the number of inputs", node.inputs.size(), 1))
                   .ok())
            return st;
          if (!(st = count_check("the number of outputs", node.outputs.size(),
                                 1))
                   .ok())
            return st;
          break;
        case KILN_OP_ASSIGN_VARIABLE:
          if (!(st = count_check("the number of inputs", node.inputs.size(), 2))
                   .ok())
            return st;
          break;
        default:
          break;
      }
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
    }
  }
  return absl::OkStatus();
}

absl::Status Interpreter::PrepareIntrinsic(SubgraphRuntime& s, Node& node) {
  Graph& g = s.graph;
  if (node.builtin_code == KILN_OP_VAR_HANDLE) {
    Tensor& out = g.tensors[static_cast<size_t>(node.outputs[0])];
    out.shape.clear();
    out.has_rank = true;
    return absl::OkStatus();
  }
  // Outputs depend on another subgraph or on a stored value: dynamic.
  if (!node.outputs.empty()) {
    s.node_deferred[static_cast<size_t>(node.index)] = 1;
    for (int32_t t : node.outputs) s.tensor_dynamic[static_cast<size_t>(t)] = 1;
  }
  return absl::OkStatus();
}

absl::Status Interpreter::InvokeIntrinsic(SubgraphRuntime& s, Node& node) {
  switch (node.builtin_code) {
    case KILN_OP_WHILE:
      return InvokeWhile(s, node);
    case KILN_OP_IF:
      return InvokeIf(s, node);
    case KILN_OP_CALL_ONCE:
      return InvokeCallOnce(s, node);
    case KILN_OP_STABLEHLO_COMPOSITE:
      return InvokeCallSubgraph(
          s, node,
          static_cast<int32_t>(
              IntOption(node, kHostOptionDecompositionSubgraph, -1)));
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

namespace {

TensorValue ReadValue(const Tensor& t) {
  TensorValue v;
  v.type = t.type;
  v.shape = t.shape;
  const size_t n = ValueBytes(t);
  if (n > 0) {
    const auto* p = static_cast<const uint8_t*>(t.data);
    v.bytes.assign(p, p + n);
  }
  return v;
}

}  // namespace

// Copies `values` into subgraph `callee`'s inputs (re-planning it when a
// shape changed), runs it and returns its outputs.
static absl::Status CopyInto(Tensor& t, const TensorValue& v,
                             const std::string& where) {
  if (t.type != v.type) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": tensor '", t.name, "' has type ", TypeName(t.type),
        " but receives a ", TypeName(v.type), " value"));
  }
  if (t.type == KILN_TYPE_STRING || t.data == nullptr ||
      t.storage == TensorStorage::kOwned) {
    if (t.storage != TensorStorage::kOwned || t.bytes != v.bytes.size()) {
      t.AllocateOwned(v.bytes.size());
    }
  }
  if (t.bytes < v.bytes.size()) {
    return absl::InternalError(
        absl::StrCat(where, ": tensor '", t.name, "' holds ", t.bytes,
                     " bytes but receives ", v.bytes.size()));
  }
  if (!v.bytes.empty()) std::memcpy(t.data, v.bytes.data(), v.bytes.size());
  return absl::OkStatus();
}

absl::Status Interpreter::InvokeCallSubgraph(SubgraphRuntime& s, Node& node,
                                             int32_t callee) {
  Graph& g = s.graph;
  std::vector<TensorValue> values;
  size_t first_input = node.builtin_code == KILN_OP_IF ? 1 : 0;
  for (size_t i = first_input; i < node.inputs.size(); ++i) {
    const int32_t t = node.inputs[i];
    if (t < 0) {
      values.emplace_back();
      continue;
    }
    values.push_back(ReadValue(g.tensors[static_cast<size_t>(t)]));
  }
  SubgraphRuntime& c = *subgraphs_[static_cast<size_t>(callee)];
  const std::string where = NodeLabel(s, node);
  bool replan = !c.allocated;
  for (size_t i = 0; i < c.graph.inputs.size(); ++i) {
    Tensor& t = c.graph.tensors[static_cast<size_t>(c.graph.inputs[i])];
    if (!t.has_rank || t.shape != values[i].shape) {
      t.shape = values[i].shape;
      t.has_rank = true;
      replan = true;
    }
  }
  if (replan) KILN_RETURN_IF_ERROR(AllocateSubgraph(callee));
  for (size_t i = 0; i < c.graph.inputs.size(); ++i) {
    Tensor& t = c.graph.tensors[static_cast<size_t>(c.graph.inputs[i])];
    KILN_RETURN_IF_ERROR(CopyInto(t, values[i], where));
  }
  KILN_RETURN_IF_ERROR(InvokeSubgraph(callee));
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    const Tensor& from =
        c.graph.tensors[static_cast<size_t>(c.graph.outputs[i])];
    TensorValue v = ReadValue(from);
    Tensor& to = g.tensors[static_cast<size_t>(node.outputs[i])];
    to.shape = v.shape;
    to.has_rank = true;
    KILN_RETURN_IF_ERROR(CopyInto(to, v, where));
  }
  return absl::OkStatus();
}

absl::Status Interpreter::InvokeIf(SubgraphRuntime& s, Node& node) {
  const Tensor& cond = s.graph.tensors[static_cast<size_t>(node.inputs[0])];
  if (cond.data == nullptr || cond.NumElements() < 1 ||
      (cond.type != KILN_TYPE_BOOL && cond.type != KILN_TYPE_INT32)) {
    return absl::InvalidArgumentError(absl::StrCat(
        NodeLabel(s, node), ": the condition must be a non-empty BOOL tensor"));
  }
  const bool take_then = cond.type == KILN_TYPE_BOOL
                             ? *static_cast<const uint8_t*>(cond.data) != 0
                             : *static_cast<const int32_t*>(cond.data) != 0;
  const int32_t branch = static_cast<int32_t>(IntOption(
      node, take_then ? kHostOptionThenSubgraph : kHostOptionElseSubgraph, -1));
  return InvokeCallSubgraph(s, node, branch);
}

absl::Status Interpreter::InvokeWhile(SubgraphRuntime& s, Node& node) {
  Graph& g = s.graph;
  const int32_t cond_index =
      static_cast<int32_t>(IntOption(node, kHostOptionCondSubgraph, -1));
  const int32_t body_index =
      static_cast<int32_t>(IntOption(node, kHostOptionBodySubgraph, -1));
  const std::string where = NodeLabel(s, node);
  std::vector<TensorValue> values;
  for (int32_t t : node.inputs)
    values.push_back(ReadValue(g.tensors[static_cast<size_t>(t)]));

  auto load_inputs = [&](int32_t callee) -> absl::Status {
    SubgraphRuntime& c = *subgraphs_[static_cast<size_t>(callee)];
    bool replan = !c.allocated;
    for (size_t i = 0; i < c.graph.inputs.size(); ++i) {
      Tensor& t = c.graph.tensors[static_cast<size_t>(c.graph.inputs[i])];
      if (!t.has_rank || t.shape != values[i].shape) {
        t.shape = values[i].shape;
        t.has_rank = true;
        replan = true;
      }
    }
    absl::Status st;
    if (replan) KILN_RETURN_IF_ERROR(AllocateSubgraph(callee));
    for (size_t i = 0; i < c.graph.inputs.size(); ++i) {
      Tensor& t = c.graph.tensors[static_cast<size_t>(c.graph.inputs[i])];
      KILN_RETURN_IF_ERROR(CopyInto(t, values[i], where));
    }
    return absl::OkStatus();
  };

  SubgraphRuntime& cond = *subgraphs_[static_cast<size_t>(cond_index)];
  SubgraphRuntime& body = *subgraphs_[static_cast<size_t>(body_index)];
  while (true) {
    KILN_RETURN_IF_ERROR(load_inputs(cond_index));
    KILN_RETURN_IF_ERROR(InvokeSubgraph(cond_index));
    const Tensor& c =
        cond.graph.tensors[static_cast<size_t>(cond.graph.outputs[0])];
    if (c.type != KILN_TYPE_BOOL || c.data == nullptr || c.NumElements() < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": the cond subgraph ", cond_index,
          " must produce a non-empty BOOL tensor, got ", TypeName(c.type), " ",
          c.has_rank ? absl::StrCat(c.NumElements(), " elements")
                     : "unknown shape"));
    }
    if (*static_cast<const uint8_t*>(c.data) == 0) break;
    KILN_RETURN_IF_ERROR(load_inputs(body_index));
    KILN_RETURN_IF_ERROR(InvokeSubgraph(body_index));
    for (size_t i = 0; i < values.size(); ++i) {
      const Tensor& out =
          body.graph.tensors[static_cast<size_t>(body.graph.outputs[i])];
      values[i] = ReadValue(out);
    }
  }
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    Tensor& to = g.tensors[static_cast<size_t>(node.outputs[i])];
    to.shape = values[i].shape;
    to.has_rank = true;
    KILN_RETURN_IF_ERROR(CopyInto(to, values[i], where));
  }
  return absl::OkStatus();
}

absl::Status Interpreter::InvokeCallOnce(SubgraphRuntime& s, Node& node) {
  const int32_t init =
      static_cast<int32_t>(IntOption(node, kHostOptionInitSubgraph, -1));
  if (call_once_done_[static_cast<size_t>(init)]) return absl::OkStatus();
  absl::Status status = InvokeCallSubgraph(s, node, init);
  if (status.ok()) call_once_done_[static_cast<size_t>(init)] = true;
  return status;
}

absl::Status Interpreter::InvokeVarHandle(SubgraphRuntime& s, Node& node) {
  const std::string container = StringOption(node, kHostOptionContainer);
  const std::string shared_name = StringOption(node, kHostOptionSharedName);
  std::string key = container;
  key.push_back('\0');
  key += shared_name;
  auto it = variable_ids_.find(key);
  int32_t id;
  if (it == variable_ids_.end()) {
    id = static_cast<int32_t>(variables_.size());
    variables_.emplace_back();
    variables_.back().name =
        container.empty() ? shared_name : container + "/" + shared_name;
    variable_ids_.emplace(key, id);
  } else {
    id = it->second;
  }
  Tensor& out = s.graph.tensors[static_cast<size_t>(node.outputs[0])];
  if (out.data == nullptr || out.bytes < sizeof(int32_t)) {
    out.AllocateOwned(sizeof(int32_t));
  }
  std::memcpy(out.data, &id, sizeof(id));
  return absl::OkStatus();
}

namespace {

absl::StatusOr<int32_t> ResourceId(const Tensor& t, size_t num_variables,
                                   const std::string& where) {
  if (t.data == nullptr || t.bytes < sizeof(int32_t)) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": resource tensor '", t.name, "' holds no variable handle"));
  }
  int32_t id = -1;
  std::memcpy(&id, t.data, sizeof(id));
  if (id < 0 || static_cast<size_t>(id) >= num_variables) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": resource tensor '", t.name, "' holds ", id,
                     ", which is not a handle made by VAR_HANDLE"));
  }
  return id;
}

}  // namespace

absl::Status Interpreter::InvokeReadVariable(SubgraphRuntime& s, Node& node) {
  const std::string where = NodeLabel(s, node);
  KILN_ASSIGN_OR_RETURN(
      const int32_t id,
      ResourceId(s.graph.tensors[static_cast<size_t>(node.inputs[0])],
                 variables_.size(), where));
  const Variable& var = variables_[static_cast<size_t>(id)];
  if (!var.assigned) {
    return absl::FailedPreconditionError(
        absl::StrCat(where, ": resource variable '", var.name,
                     "' is read before any ASSIGN_VARIABLE gave it a value"));
  }
  Tensor& out = s.graph.tensors[static_cast<size_t>(node.outputs[0])];
  TensorValue v;
  v.type = var.type;
  v.shape = var.shape;
  v.bytes = var.bytes;
  out.shape = v.shape;
  out.has_rank = true;
  return CopyInto(out, v, where);
}

absl::Status Interpreter::InvokeAssignVariable(SubgraphRuntime& s, Node& node) {
  const std::string where = NodeLabel(s, node);
  KILN_ASSIGN_OR_RETURN(
      const int32_t id,
      ResourceId(s.graph.tensors[static_cast<size_t>(node.inputs[0])],
                 variables_.size(), where));
  const Tensor& value = s.graph.tensors[static_cast<size_t>(node.inputs[1])];
  if (value.data == nullptr && value.RequiredBytes() > 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": the value tensor '", value.name, "' holds no data"));
  }
  Variable& var = variables_[static_cast<size_t>(id)];
  if (var.assigned && var.type != value.type) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": resource variable '", var.name, "' holds ",
                     TypeName(var.type), " values; cannot assign a ",
                     TypeName(value.type), " tensor"));
  }
  TensorValue v = ReadValue(value);
  var.type = v.type;
  var.shape = std::move(v.shape);
  var.bytes = std::move(v.bytes);
  var.assigned = true;
  return absl::OkStatus();
}

}  // namespace kiln
