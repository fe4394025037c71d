#include "interpreter/interpreter.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "interpreter/arena_planner.h"
#include "interpreter/op_resolution.h"
#include "interpreter/subgraph_runtime.h"
#include "kiln/kiln_builtin_ops.h"

namespace kiln {
namespace {

const std::string& EmptyString() {
  static const auto* empty = new std::string();
  return *empty;
}

}  // namespace

// ---------------------------------------------------------------------------
// SignatureRunner

const std::string& SignatureRunner::input_name(int index) const {
  if (index < 0 || index >= num_inputs()) return EmptyString();
  return signature_->inputs[static_cast<size_t>(index)].name;
}

const std::string& SignatureRunner::output_name(int index) const {
  if (index < 0 || index >= num_outputs()) return EmptyString();
  return signature_->outputs[static_cast<size_t>(index)].name;
}

Tensor* SignatureRunner::input(const std::string& name) {
  for (const SignatureTensor& t : signature_->inputs) {
    if (t.name == name) {
      return interpreter_->tensor(signature_->subgraph_index, t.tensor_index);
    }
  }
  return nullptr;
}

const Tensor* SignatureRunner::output(const std::string& name) const {
  for (const SignatureTensor& t : signature_->outputs) {
    if (t.name == name) {
      return interpreter_->tensor(signature_->subgraph_index, t.tensor_index);
    }
  }
  return nullptr;
}

absl::Status SignatureRunner::ResizeInput(const std::string& name,
                                          const std::vector<int32_t>& dims) {
  const Graph& g = interpreter_->graph(signature_->subgraph_index);
  for (const SignatureTensor& t : signature_->inputs) {
    if (t.name != name) continue;
    for (size_t i = 0; i < g.inputs.size(); ++i) {
      if (g.inputs[i] == t.tensor_index) {
        return interpreter_->ResizeSubgraphInput(signature_->subgraph_index,
                                                 static_cast<int>(i), dims);
      }
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "signature '", key(), "': input '", name, "' (tensor ", t.tensor_index,
        ") is not an input of subgraph ", signature_->subgraph_index));
  }
  std::vector<std::string> names;
  for (const SignatureTensor& t : signature_->inputs) names.push_back(t.name);
  return absl::NotFoundError(
      absl::StrCat("signature '", key(), "' has no input named '", name,
                   "'; its inputs are: ", absl::StrJoin(names, ", ")));
}

absl::Status SignatureRunner::AllocateTensors() {
  return interpreter_->AllocateSubgraph(signature_->subgraph_index);
}

absl::Status SignatureRunner::Invoke() {
  return interpreter_->InvokeSubgraph(signature_->subgraph_index);
}

// ---------------------------------------------------------------------------
// Creation

Interpreter::Interpreter() = default;

Interpreter::~Interpreter() {
  // Partition states, then kernel states, then delegates, then plugins.
  for (auto& s : subgraphs_) {
    for (PartitionRuntime& p : s->partitions) {
      if (p.initialized && p.delegate->iface->partition_free != nullptr) {
        p.delegate->iface->partition_free(p.delegate->instance, p.state);
      }
      p.initialized = false;
    }
    for (Node& n : s->graph.nodes) {
      if (n.initialized && n.kernel != nullptr && n.kernel->free != nullptr) {
        n.kernel->free(n.kernel->user_data, n.state);
      }
      n.initialized = false;
    }
  }
  for (auto& d : delegates_) {
    if (d->instance != nullptr)
      d->iface->destroy(d->iface->user_data, d->instance);
    d->instance = nullptr;
  }
  runners_.clear();
  subgraphs_.clear();
  delegates_.clear();
  plugins_.clear();
}

absl::StatusOr<std::unique_ptr<Interpreter>> Interpreter::Create(
    std::shared_ptr<const Model> model, const InterpreterOptions& options) {
  if (model == nullptr) {
    return absl::InvalidArgumentError("Interpreter::Create: model is null");
  }
  std::unique_ptr<Interpreter> interpreter(new Interpreter());
  interpreter->model_ = std::move(model);
  KILN_RETURN_IF_ERROR(interpreter->Initialize(options));
  return interpreter;
}

absl::Status Interpreter::Initialize(const InterpreterOptions& options) {
  if (model_->num_subgraphs() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model '", model_->source(), "' has no subgraphs: nothing to run"));
  }
  KILN_RETURN_IF_ERROR(CheckMinRuntimeVersion(*model_));

  plugin_records_ = PluginLoader::LoadAll(options.plugins);
  for (const PluginLoadRecord& r : plugin_records_) {
    if (r.plugin != nullptr) plugins_.push_back(r.plugin);
  }
  num_delegate_requests_ = options.delegates.size();
  KILN_RETURN_IF_ERROR(CopyGraphs());
  KILN_RETURN_IF_ERROR(ResolveNodes());
  KILN_RETURN_IF_ERROR(ValidateIntrinsicNodes());
  KILN_RETURN_IF_ERROR(InitKernels());
  for (const DelegateRequest& request : options.delegates) {
    KILN_RETURN_IF_ERROR(ApplyDelegate(request));
  }
  call_once_done_.assign(subgraphs_.size(), false);
  for (const Signature& sig : model_->signatures()) {
    if (sig.subgraph_index < 0 || sig.subgraph_index >= num_subgraphs()) {
      return absl::InvalidArgumentError(
          absl::StrCat("model '", model_->source(), "': signature '", sig.key,
                       "' names subgraph ", sig.subgraph_index,
                       ", but the model has ", num_subgraphs()));
    }
    runners_.emplace(sig.key, std::unique_ptr<SignatureRunner>(
                                  new SignatureRunner(this, &sig)));
  }
  return absl::OkStatus();
}

absl::Status Interpreter::CopyGraphs() {
  for (int i = 0; i < model_->num_subgraphs(); ++i) {
    auto s = std::make_unique<SubgraphRuntime>();
    s->index = i;
    s->graph = model_->graph(i);
    Graph& g = s->graph;
    for (Tensor& t : g.tensors) {
      // A copied owned buffer must point at the copy, not the model's.
      if (t.storage == TensorStorage::kOwned) t.data = t.owned.data();
      if (!t.is_constant() && t.storage != TensorStorage::kOwned) {
        t.data = nullptr;
        t.bytes = 0;
        t.storage = TensorStorage::kNone;
      }
    }
    const int32_t num_tensors = static_cast<int32_t>(g.tensors.size());
    for (size_t n = 0; n < g.nodes.size(); ++n) {
      Node& node = g.nodes[n];
      node.index = static_cast<int32_t>(n);
      node.kernel = nullptr;
      node.plugin = nullptr;
      node.state = nullptr;
      node.initialized = false;
      for (const auto* list : {&node.inputs, &node.outputs}) {
        for (int32_t t : *list) {
          if (t < -1 || t >= num_tensors) {
            return absl::InvalidArgumentError(absl::StrCat(
                "model '", model_->source(), "': subgraph ", i, " node ", n,
                " (", node.OpName(), ") refers to tensor ", t,
                ", but the subgraph has ", num_tensors, " tensors"));
          }
        }
      }
    }
    for (const auto* list : {&g.inputs, &g.outputs}) {
      for (int32_t t : *list) {
        if (t < 0 || t >= num_tensors) {
          return absl::InvalidArgumentError(absl::StrCat(
              "model '", model_->source(), "': subgraph ", i, " lists tensor ",
              t, " as an input or output, but it has ", num_tensors,
              " tensors"));
        }
      }
    }
    for (int32_t n : g.execution_plan) {
      if (n < 0 || static_cast<size_t>(n) >= g.nodes.size()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "model '", model_->source(), "': subgraph ", i,
            " execution plan names node ", n, " of ", g.nodes.size()));
      }
    }
    s->num_model_nodes = static_cast<int32_t>(g.nodes.size());
    // Kernels may keep their KilnOpaqueNode from init to free, so the node
    // storage never moves: room for every partition node delegates can add.
    g.nodes.reserve(g.nodes.size() * (1 + num_delegate_requests_) + 1);
    s->host_intrinsic.assign(g.nodes.size(), 0);
    s->partition_of_node.assign(g.nodes.size(), -1);
    s->delegated_by.assign(g.nodes.size(), -1);
    s->tensor_dynamic.assign(g.tensors.size(), 0);
    s->node_deferred.assign(g.nodes.size(), 0);
    subgraphs_.push_back(std::move(s));
  }
  return absl::OkStatus();
}

absl::Status Interpreter::ResolveNodes() {
  std::vector<Graph*> graphs;
  for (auto& s : subgraphs_) graphs.push_back(&s->graph);
  KILN_RETURN_IF_ERROR(
      kiln::ResolveNodes(model_->source(), graphs, plugins_, plugin_records_));
  for (auto& s : subgraphs_) {
    for (const Node& n : s->graph.nodes) {
      s->host_intrinsic[static_cast<size_t>(n.index)] =
          IsHostIntrinsicOp(n.builtin_code) ? 1 : 0;
    }
  }
  return absl::OkStatus();
}

absl::Status Interpreter::InitKernels() {
  for (auto& s : subgraphs_) {
    for (Node& node : s->graph.nodes) {
      if (node.kernel == nullptr || node.kernel->init == nullptr) continue;
      KILN_RETURN_IF_ERROR(CallKernel(*s, node, PluginStage::kInit));
      node.initialized = true;
    }
  }
  return absl::OkStatus();
}

std::string Interpreter::NodeLabel(const SubgraphRuntime& s,
                                   const Node& node) const {
  std::string label = absl::StrCat("subgraph ", s.index);
  if (!s.graph.name.empty()) absl::StrAppend(&label, " ('", s.graph.name, "')");
  absl::StrAppend(&label, " node ", node.index, " (", node.OpName());
  if (!node.delegated_nodes.empty()) {
    absl::StrAppend(&label, " partition of nodes ",
                    absl::StrJoin(node.delegated_nodes, ", "));
  } else {
    absl::StrAppend(&label, " version ", node.version);
  }
  if (node.plugin != nullptr) {
    absl::StrAppend(&label, ", plugin ", node.plugin->path());
  } else if (s.host_intrinsic[static_cast<size_t>(node.index)]) {
    absl::StrAppend(&label, ", host-intrinsic");
  }
  absl::StrAppend(&label, ")");
  return label;
}

// ---------------------------------------------------------------------------
// Accessors

int Interpreter::num_inputs() const {
  return static_cast<int>(subgraphs_[0]->graph.inputs.size());
}
int Interpreter::num_outputs() const {
  return static_cast<int>(subgraphs_[0]->graph.outputs.size());
}
Tensor* Interpreter::input(int index) {
  if (index < 0 || index >= num_inputs()) return nullptr;
  Graph& g = subgraphs_[0]->graph;
  return &g.tensors[static_cast<size_t>(g.inputs[static_cast<size_t>(index)])];
}
const Tensor* Interpreter::output(int index) const {
  if (index < 0 || index >= num_outputs()) return nullptr;
  const Graph& g = subgraphs_[0]->graph;
  return &g.tensors[static_cast<size_t>(g.outputs[static_cast<size_t>(index)])];
}
uint64_t Interpreter::arena_bytes() const {
  uint64_t total = 0;
  for (const auto& s : subgraphs_) total += s->arena_bytes;
  return total;
}
const Graph& Interpreter::graph(int subgraph) const {
  return subgraphs_[static_cast<size_t>(subgraph)]->graph;
}
Tensor* Interpreter::tensor(int subgraph, int tensor_index) {
  if (subgraph < 0 || subgraph >= num_subgraphs()) return nullptr;
  Graph& g = subgraphs_[static_cast<size_t>(subgraph)]->graph;
  if (tensor_index < 0 ||
      static_cast<size_t>(tensor_index) >= g.tensors.size()) {
    return nullptr;
  }
  return &g.tensors[static_cast<size_t>(tensor_index)];
}
uint64_t Interpreter::subgraph_arena_bytes(int subgraph) const {
  if (subgraph < 0 || subgraph >= num_subgraphs()) return 0;
  return subgraphs_[static_cast<size_t>(subgraph)]->arena_bytes;
}

const std::string& Interpreter::signature_key(int index) const {
  if (index < 0 || index >= num_signatures()) return EmptyString();
  return model_->signatures()[static_cast<size_t>(index)].key;
}

absl::StatusOr<SignatureRunner*> Interpreter::GetSignatureRunner(
    const std::string& key) {
  auto it = runners_.find(key);
  if (it != runners_.end()) return it->second.get();
  std::vector<std::string> keys;
  for (const Signature& s : model_->signatures())
    keys.push_back("'" + s.key + "'");
  return absl::NotFoundError(absl::StrCat(
      "model '", model_->source(), "' has no signature '", key, "'; ",
      keys.empty() ? "it has no signatures (use the interpreter's inputs and "
                     "outputs instead)"
                   : absl::StrCat("available: ", absl::StrJoin(keys, ", "))));
}

std::vector<NodeInfo> Interpreter::DescribeNodes(int subgraph) const {
  std::vector<NodeInfo> out;
  if (subgraph < 0 || subgraph >= num_subgraphs()) return out;
  const SubgraphRuntime& s = *subgraphs_[static_cast<size_t>(subgraph)];
  for (int32_t i = 0; i < s.num_model_nodes; ++i) {
    const Node& n = s.graph.nodes[static_cast<size_t>(i)];
    NodeInfo info;
    info.index = i;
    info.op = n.OpName();
    info.version = n.version;
    info.host_intrinsic = s.host_intrinsic[static_cast<size_t>(i)] != 0;
    if (n.plugin != nullptr) info.plugin_path = n.plugin->path();
    const int32_t p = s.delegated_by[static_cast<size_t>(i)];
    if (p >= 0 && !s.partitions[static_cast<size_t>(p)].fell_back) {
      const PartitionRuntime& pr = s.partitions[static_cast<size_t>(p)];
      info.delegated = true;
      info.delegate_name = pr.delegate->name;
      info.partition_node = pr.node_index;
    }
    out.push_back(std::move(info));
  }
  return out;
}

bool Interpreter::IsNodeDelegated(int subgraph, int node_index) const {
  if (subgraph < 0 || subgraph >= num_subgraphs()) return false;
  const SubgraphRuntime& s = *subgraphs_[static_cast<size_t>(subgraph)];
  if (node_index < 0 || node_index >= s.num_model_nodes) return false;
  const int32_t p = s.delegated_by[static_cast<size_t>(node_index)];
  return p >= 0 && !s.partitions[static_cast<size_t>(p)].fell_back;
}

std::vector<PartitionInfo> Interpreter::Partitions(int subgraph) const {
  std::vector<PartitionInfo> out;
  if (subgraph < 0 || subgraph >= num_subgraphs()) return out;
  const SubgraphRuntime& s = *subgraphs_[static_cast<size_t>(subgraph)];
  for (const PartitionRuntime& p : s.partitions) {
    const Node& n = s.graph.nodes[static_cast<size_t>(p.node_index)];
    PartitionInfo info;
    info.node_index = p.node_index;
    info.delegate_name = p.delegate->name;
    info.plugin_path = p.delegate->plugin->path();
    info.delegated_nodes = n.delegated_nodes;
    info.inputs = n.inputs;
    info.outputs = n.outputs;
    info.fell_back = p.fell_back;
    info.fallback_reason = p.fallback_reason;
    out.push_back(std::move(info));
  }
  return out;
}

// ---------------------------------------------------------------------------
// Allocation

absl::Status Interpreter::ResizeSubgraphInput(
    int subgraph, int input_index, const std::vector<int32_t>& dims) {
  if (subgraph < 0 || subgraph >= num_subgraphs()) {
    return absl::OutOfRangeError(absl::StrCat("subgraph ", subgraph,
                                              " does not exist (the model has ",
                                              num_subgraphs(), ")"));
  }
  SubgraphRuntime& s = *subgraphs_[static_cast<size_t>(subgraph)];
  if (s.running) {
    return absl::FailedPreconditionError(absl::StrCat(
        "subgraph ", subgraph, " cannot be resized while it runs"));
  }
  if (input_index < 0 ||
      static_cast<size_t>(input_index) >= s.graph.inputs.size()) {
    return absl::OutOfRangeError(
        absl::StrCat("input index ", input_index, " is out of range: subgraph ",
                     subgraph, " has ", s.graph.inputs.size(), " inputs"));
  }
  Tensor& t = s.graph.tensors[static_cast<size_t>(
      s.graph.inputs[static_cast<size_t>(input_index)])];
  int64_t elements = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot resize input ", input_index, " '", t.name, "' to [",
          absl::StrJoin(dims, ", "), "]: dimension ", i, " is negative"));
    }
    elements *= dims[i];
    if (elements > (int64_t{1} << 40)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot resize input ", input_index, " '", t.name, "' to [",
          absl::StrJoin(dims, ", "), "]: too many elements"));
    }
  }
  if (t.has_rank && t.shape == dims) return absl::OkStatus();
  t.shape = dims;
  t.has_rank = true;
  s.allocated = false;
  return absl::OkStatus();
}

absl::Status Interpreter::AllocateSubgraph(int subgraph) {
  if (subgraph < 0 || subgraph >= num_subgraphs()) {
    return absl::OutOfRangeError(absl::StrCat("subgraph ", subgraph,
                                              " does not exist (the model has ",
                                              num_subgraphs(), ")"));
  }
  SubgraphRuntime& s = *subgraphs_[static_cast<size_t>(subgraph)];
  if (s.running) {
    return absl::FailedPreconditionError(absl::StrCat(
        "subgraph ", subgraph, " cannot be allocated while it runs"));
  }
  s.allocated = false;
  Graph& g = s.graph;
  std::vector<char> is_input(g.tensors.size(), 0);
  for (int32_t t : g.inputs) is_input[static_cast<size_t>(t)] = 1;

  // A node must not write a subgraph input.
  for (int32_t n = 0; n < s.num_model_nodes; ++n) {
    const Node& node = g.nodes[static_cast<size_t>(n)];
    for (int32_t t : node.outputs) {
      if (t >= 0 && is_input[static_cast<size_t>(t)]) {
        const Tensor& x = g.tensors[static_cast<size_t>(t)];
        return absl::InvalidArgumentError(absl::StrCat(
            "model '", model_->source(), "': ", NodeLabel(s, node),
            " writes tensor ", t, " '", x.name,
            "', which is an input of subgraph ", s.index,
            ": an output may not alias a subgraph input (the model is "
            "malformed; reconvert it)"));
      }
    }
  }
  // Converters write scalars as shape [] without has_rank: an input of
  // unknown rank is a scalar until ResizeInput gives it a shape (as in
  // TFLite).
  for (int32_t i : g.inputs) {
    Tensor& t = g.tensors[static_cast<size_t>(i)];
    if (!t.has_rank) {
      t.shape.clear();
      t.has_rank = true;
    }
  }
  // Reset: written tensors get unknown shapes; no activation has data.
  std::vector<char> written(g.tensors.size(), 0);
  for (int32_t n = 0; n < s.num_model_nodes; ++n) {
    for (int32_t t : g.nodes[static_cast<size_t>(n)].outputs) {
      if (t >= 0) written[static_cast<size_t>(t)] = 1;
    }
  }
  for (size_t i = 0; i < g.tensors.size(); ++i) {
    Tensor& t = g.tensors[i];
    if (t.is_constant() || t.is_variable) continue;
    if (written[i]) {
      t.has_rank = false;
      t.shape.clear();
    }
    t.data = nullptr;
    t.bytes = 0;
    t.storage = TensorStorage::kNone;
    t.owned.clear();
    t.owned.shrink_to_fit();
  }
  // Variables keep their values; they get memory once their shape is known.
  for (Tensor& t : g.tensors) {
    if (!t.is_variable || t.is_constant()) continue;
    const size_t need = t.RequiredBytes();
    if (t.storage != TensorStorage::kOwned || t.bytes != need) {
      t.AllocateOwned(need);
    }
  }
  std::fill(s.tensor_dynamic.begin(), s.tensor_dynamic.end(), 0);
  std::fill(s.node_deferred.begin(), s.node_deferred.end(), 0);

  KILN_RETURN_IF_ERROR(PrepareAll(s));
  KILN_RETURN_IF_ERROR(PlanMemory(s));
  s.allocated = true;
  return absl::OkStatus();
}

absl::Status Interpreter::CallKernel(SubgraphRuntime& s, Node& node,
                                     PluginStage stage) {
  PluginCall call;
  call.stage = stage;
  call.graph = &s.graph;
  call.node = &node;
  call.plugin = node.plugin;
  return kiln::CallKernel(*node.kernel, call, &node.state,
                          [&] { return NodeLabel(s, node); });
}

absl::Status Interpreter::CallPartition(SubgraphRuntime& s, PartitionRuntime& p,
                                        PluginStage stage) {
  Node& node = s.graph.nodes[static_cast<size_t>(p.node_index)];
  PluginCall call;
  call.stage = stage;
  call.graph = &s.graph;
  call.node = &node;
  call.plugin = p.delegate->plugin.get();
  absl::Status status =
      CallDelegate(*p.delegate->iface, p.delegate->instance, call, &p.state,
                   [&] { return NodeLabel(s, node); });
  if (status.ok()) return status;
  p.fell_back = true;
  p.fallback_reason = std::string(status.message());
  WarnDelegateFailure(*p.delegate, p.fallback_reason);
  return status;
}

absl::Status Interpreter::PrepareKernelNode(SubgraphRuntime& s, Node& node,
                                            bool at_invoke) {
  Graph& g = s.graph;
  const size_t n = static_cast<size_t>(node.index);
  if (!at_invoke) {
    bool dynamic_input = false;
    for (int32_t t : node.inputs) {
      if (t >= 0 && s.tensor_dynamic[static_cast<size_t>(t)])
        dynamic_input = true;
    }
    if (dynamic_input) {
      s.node_deferred[n] = 1;
      for (int32_t t : node.outputs) {
        if (t >= 0) s.tensor_dynamic[static_cast<size_t>(t)] = 1;
      }
      return absl::OkStatus();
    }
  } else {
    for (int32_t t : node.outputs) {
      if (t < 0) continue;
      Tensor& x = g.tensors[static_cast<size_t>(t)];
      if (x.is_constant() || x.is_variable) continue;
      x.has_rank = false;
      x.shape.clear();
    }
  }
  KILN_RETURN_IF_ERROR(CallKernel(s, node, PluginStage::kPrepare));
  if (!at_invoke) {
    bool unresized = false;
    for (int32_t t : node.outputs) {
      if (t >= 0 && !g.tensors[static_cast<size_t>(t)].has_rank)
        unresized = true;
    }
    if (unresized) {
      s.node_deferred[n] = 1;
      for (int32_t t : node.outputs) {
        if (t >= 0) s.tensor_dynamic[static_cast<size_t>(t)] = 1;
      }
    }
    return absl::OkStatus();
  }
  return AllocateDynamicOutputs(s, node);
}

absl::Status Interpreter::AllocateDynamicOutputs(SubgraphRuntime& s,
                                                 const Node& node) {
  for (int32_t t : node.outputs) {
    if (t < 0 || !s.tensor_dynamic[static_cast<size_t>(t)]) continue;
    Tensor& x = s.graph.tensors[static_cast<size_t>(t)];
    if (!x.has_rank) {
      return absl::InternalError(absl::StrCat(
          NodeLabel(s, node), ": prepare left output tensor ", t, " '", x.name,
          "' without a shape although every input holds data; the kernel "
          "must size its outputs (report this to the plugin's author)"));
    }
    if (x.type == KILN_TYPE_STRING) continue;  // sized by whoever writes it
    const size_t need = x.RequiredBytes();
    if (x.storage != TensorStorage::kOwned || x.bytes != need) {
      x.AllocateOwned(need);
    }
  }
  return absl::OkStatus();
}

absl::Status Interpreter::PrepareAll(SubgraphRuntime& s) {
  Graph& g = s.graph;
  for (int32_t index : g.execution_plan) {
    Node& node = g.nodes[static_cast<size_t>(index)];
    absl::Status status;
    if (s.IsPartition(index)) {
      PartitionRuntime& p = s.partitions[static_cast<size_t>(
          s.partition_of_node[static_cast<size_t>(index)])];
      bool deferred = false;
      for (int32_t original : node.delegated_nodes) {
        Node& o = g.nodes[static_cast<size_t>(original)];
        KILN_RETURN_IF_ERROR(PrepareKernelNode(s, o, /*at_invoke=*/false));
        if (s.node_deferred[static_cast<size_t>(original)]) deferred = true;
      }
      if (deferred) {
        s.node_deferred[static_cast<size_t>(index)] = 1;
        continue;
      }
      if (p.fell_back || !p.initialized) continue;
      // A failure falls back to the kernels (CallPartition warns).
      CallPartition(s, p, PluginStage::kPartitionPrepare).IgnoreError();
      continue;
    }
    if (s.host_intrinsic[static_cast<size_t>(index)]) {
      status = PrepareIntrinsic(s, node);
    } else {
      status = PrepareKernelNode(s, node, /*at_invoke=*/false);
    }
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

absl::Status Interpreter::PlanMemory(SubgraphRuntime& s) {
  Graph& g = s.graph;
  const int32_t steps = static_cast<int32_t>(g.execution_plan.size());
  std::vector<int32_t> first(g.tensors.size(), -1), last(g.tensors.size(), -1);
  auto touch = [&](int32_t t, int32_t step) {
    if (t < 0) return;
    const size_t i = static_cast<size_t>(t);
    if (first[i] < 0 || step < first[i]) first[i] = step;
    last[i] = std::max(last[i], step);
  };
  for (int32_t step = 0; step < steps; ++step) {
    const int32_t index = g.execution_plan[static_cast<size_t>(step)];
    const Node& node = g.nodes[static_cast<size_t>(index)];
    for (int32_t t : node.inputs) touch(t, step);
    for (int32_t t : node.outputs) touch(t, step);
    // A partition may fall back to its nodes: all their tensors live at
    // the partition's step.
    for (int32_t original : node.delegated_nodes) {
      const Node& o = g.nodes[static_cast<size_t>(original)];
      for (int32_t t : o.inputs) touch(t, step);
      for (int32_t t : o.outputs) touch(t, step);
    }
  }
  const int32_t end = std::max(steps - 1, 0);
  for (const auto* list : {&g.inputs, &g.outputs}) {
    for (int32_t t : *list) {
      first[static_cast<size_t>(t)] = 0;
      last[static_cast<size_t>(t)] = end;
    }
  }
  std::vector<ArenaRequest> requests;
  std::vector<int32_t> request_tensor;
  for (size_t i = 0; i < g.tensors.size(); ++i) {
    const Tensor& t = g.tensors[i];
    if (t.is_constant() || t.is_variable || s.tensor_dynamic[i] ||
        first[i] < 0 || !t.has_rank || t.type == KILN_TYPE_STRING) {
      continue;
    }
    requests.push_back({t.RequiredBytes(), first[i], last[i]});
    request_tensor.push_back(static_cast<int32_t>(i));
  }
  const ArenaPlan plan = PlanArena(requests);
  const size_t capacity = plan.arena_bytes + kArenaAlignment;
  if (s.arena_storage.size() < capacity) {
    s.arena_storage.assign(capacity, 0);
  }
  uint8_t* raw = s.arena_storage.data();
  const uintptr_t misalign = reinterpret_cast<uintptr_t>(raw) % kArenaAlignment;
  uint8_t* base = raw + (misalign == 0 ? 0 : kArenaAlignment - misalign);
  for (size_t r = 0; r < requests.size(); ++r) {
    Tensor& t = g.tensors[static_cast<size_t>(request_tensor[r])];
    t.storage = TensorStorage::kArena;
    t.data = base + plan.offsets[r];
    t.bytes = requests[r].bytes;
  }
  s.arena_bytes = plan.arena_bytes;
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Execution

absl::Status Interpreter::InvokeSubgraph(int subgraph) {
  if (subgraph < 0 || subgraph >= num_subgraphs()) {
    return absl::OutOfRangeError(absl::StrCat("subgraph ", subgraph,
                                              " does not exist (the model has ",
                                              num_subgraphs(), ")"));
  }
  SubgraphRuntime& s = *subgraphs_[static_cast<size_t>(subgraph)];
  if (s.running) {
    return absl::FailedPreconditionError(absl::StrCat(
        "model '", model_->source(), "': subgraph ", subgraph,
        " is invoked while it is already running (a control-flow op calls "
        "it recursively); Kiln does not run recursive subgraphs"));
  }
  if (!s.allocated) {
    return absl::FailedPreconditionError(absl::StrCat(
        "subgraph ", subgraph,
        " has no memory planned: call AllocateTensors (again after resizing "
        "an input) before Invoke"));
  }
  for (size_t i = 0; i < s.graph.inputs.size(); ++i) {
    const Tensor& t = s.graph.tensors[static_cast<size_t>(s.graph.inputs[i])];
    if (t.data == nullptr && !t.is_constant() && t.type == KILN_TYPE_STRING) {
      return absl::FailedPreconditionError(
          absl::StrCat("subgraph ", subgraph, " string input ", i, " '", t.name,
                       "' has no value: copy data into it before Invoke"));
    }
  }
  s.running = true;
  absl::Status status = absl::OkStatus();
  for (int32_t index : s.graph.execution_plan) {
    status = RunNode(s, index);
    if (!status.ok()) break;
  }
  s.running = false;
  return status;
}

absl::Status Interpreter::RunNode(SubgraphRuntime& s, int32_t index) {
  Node& node = s.graph.nodes[static_cast<size_t>(index)];
  if (s.IsPartition(index)) return RunPartition(s, index);
  if (s.host_intrinsic[static_cast<size_t>(index)]) {
    return InvokeIntrinsic(s, node);
  }
  if (s.node_deferred[static_cast<size_t>(index)]) {
    KILN_RETURN_IF_ERROR(PrepareKernelNode(s, node, /*at_invoke=*/true));
  }
  return CallKernel(s, node, PluginStage::kInvoke);
}

absl::Status Interpreter::RunPartition(SubgraphRuntime& s, int32_t index) {
  Graph& g = s.graph;
  Node& node = g.nodes[static_cast<size_t>(index)];
  PartitionRuntime& p = s.partitions[static_cast<size_t>(
      s.partition_of_node[static_cast<size_t>(index)])];
  auto run_on_kernels = [&]() -> absl::Status {
    for (int32_t original : node.delegated_nodes) {
      Node& o = g.nodes[static_cast<size_t>(original)];
      if (s.node_deferred[static_cast<size_t>(original)]) {
        KILN_RETURN_IF_ERROR(PrepareKernelNode(s, o, /*at_invoke=*/true));
      }
      KILN_RETURN_IF_ERROR(CallKernel(s, o, PluginStage::kInvoke));
    }
    return absl::OkStatus();
  };
  if (p.fell_back || !p.initialized) return run_on_kernels();
  if (s.node_deferred[static_cast<size_t>(index)]) {
    // Shapes depend on values: size every tensor with the kernels first.
    for (int32_t original : node.delegated_nodes) {
      Node& o = g.nodes[static_cast<size_t>(original)];
      if (!s.node_deferred[static_cast<size_t>(original)]) continue;
      if (!PrepareKernelNode(s, o, /*at_invoke=*/true).ok()) {
        return run_on_kernels();
      }
    }
    if (!CallPartition(s, p, PluginStage::kPartitionPrepare).ok()) {
      return run_on_kernels();
    }
  }
  if (CallPartition(s, p, PluginStage::kPartitionInvoke).ok()) {
    return absl::OkStatus();
  }
  // Tensors of the original nodes were sized by their kernels at
  // AllocateTensors (or just above), so they can run right away.
  return run_on_kernels();
}

void Interpreter::WarnDelegateFailure(DelegateInstance& delegate,
                                      const std::string& message) {
  const std::string text =
      absl::StrCat("delegate '", delegate.name, "' (", delegate.plugin->path(),
                   ") failed: ", message,
                   ". Running the partition's nodes on kernel plugins instead");
  warnings_.push_back(text);
  if (delegate.warned) return;
  delegate.warned = true;
  std::fprintf(stderr,
               "kiln: warning: %s (further failures of this delegate are not "
               "printed)\n",
               text.c_str());
}

}  // namespace kiln
