#include "interpreter/interpreter.h"

#include <cstdio>
#include <new>
#include <stdexcept>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "interpreter/op_resolution.h"
#include "interpreter/subgraph_state.h"
#include "model/model_checks.h"

namespace kiln {
namespace {

const std::string& EmptyString() {
  static const auto* empty = new std::string();
  return *empty;
}

const std::vector<int32_t>& EmptyPlan() {
  static const auto* empty = new std::vector<int32_t>();
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

TensorState* SignatureRunner::input(const std::string& name) {
  for (const SignatureTensor& t : signature_->inputs) {
    if (t.name == name) {
      return interpreter_->tensor(signature_->subgraph_index, t.tensor_index);
    }
  }
  return nullptr;
}

const TensorState* SignatureRunner::output(const std::string& name) const {
  for (const SignatureTensor& t : signature_->outputs) {
    if (t.name == name) {
      return interpreter_->tensor(signature_->subgraph_index, t.tensor_index);
    }
  }
  return nullptr;
}

const TensorState* SignatureRunner::raw_output(const std::string& name) const {
  for (const SignatureTensor& t : signature_->outputs) {
    if (t.name == name) {
      return interpreter_->raw_tensor(signature_->subgraph_index,
                                      t.tensor_index);
    }
  }
  return nullptr;
}

absl::Status SignatureRunner::ResizeInput(const std::string& name,
                                          const std::vector<int32_t>& dims) {
  const Graph& g = interpreter_->model().graph(signature_->subgraph_index);
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
  // Buffer handles, states of cached plans, then partition states, then
  // kernel states, then delegates, then plugins.
  ReleaseAllBuffers();
  ReleasePlanCaches();
  for (auto& s : subgraphs_) {
    for (PartitionRecord& p : s->partitions()) {
      if (p.initialized && p.delegate->iface->partition_free != nullptr) {
        p.delegate->iface->partition_free(p.delegate->instance, p.state);
      }
      p.initialized = false;
    }
    for (NodeRecord& n : s->nodes()) {
      if (n.initialized && n.kernel->free != nullptr) {
        n.kernel->free(n.kernel->user_data, n.kernel_state);
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
  absl::Status status;
  try {
    status = interpreter->Initialize(options);
  } catch (const std::bad_alloc& e) {
    status = interpreter->AllocationFailure("creation", e);
  } catch (const std::length_error& e) {
    status = interpreter->AllocationFailure("creation", e);
  }
  KILN_RETURN_IF_ERROR(status);
  return interpreter;
}

absl::Status Interpreter::Initialize(const InterpreterOptions& options) {
  if (model_->num_subgraphs() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model '", model_->source(), "' has no subgraphs: nothing to run"));
  }
  KILN_RETURN_IF_ERROR(CheckMinRuntimeVersion(*model_));
  if (options.profile) SetProfiling(true);
  thread_pool_ = std::make_unique<ThreadPool>(options.num_threads);
  max_arena_bytes_ = options.max_arena_bytes == 0 ? kDefaultMaxArenaBytes
                                                  : options.max_arena_bytes;
  max_while_iterations_ = options.max_while_iterations;
  invoke_timeout_ = options.invoke_timeout;

  plugin_records_ = PluginLoader::LoadAll(options.plugins);
  for (const PluginLoadRecord& r : plugin_records_) {
    if (r.plugin != nullptr) plugins_.push_back(r.plugin);
  }
  // The model's checks (model_checks.h) proved every index the state and
  // the plan below rely on.
  if (options.plan_cache.max_plans < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("plan cache size ", options.plan_cache.max_plans,
                     " is negative; use 0 to turn the plan cache off"));
  }
  for (int i = 0; i < model_->num_subgraphs(); ++i) {
    subgraphs_.push_back(std::make_unique<SubgraphState>(i, model_->graph(i)));
    subgraphs_.back()->plan_cache.Configure(options.plan_cache);
    subgraphs_.back()->max_tensor_bytes = max_arena_bytes_;
  }
  KILN_RETURN_IF_ERROR(CheckDeclaredShapes());
  KILN_RETURN_IF_ERROR(ResolveKernels());
  // After resolution, so that a model with an op no plugin runs is refused
  // for that (the TFLite fixtures with constant inputs have custom ops).
  KILN_RETURN_IF_ERROR(CheckNoConstantInputs(*model_));
  KILN_RETURN_IF_ERROR(ValidateIntrinsicNodes());
  KILN_RETURN_IF_ERROR(InitKernels());
  for (auto& s : subgraphs_) KILN_RETURN_IF_ERROR(FoldConstants(*s));
  for (const DelegateRequest& request : DelegatesToApply(options)) {
    KILN_RETURN_IF_ERROR(ApplyDelegate(request));
  }
  call_once_done_.assign(subgraphs_.size(), false);
  for (const Signature& sig : model_->signatures()) {
    runners_.emplace(sig.key, std::unique_ptr<SignatureRunner>(
                                  new SignatureRunner(this, &sig)));
  }
  return absl::OkStatus();
}

absl::Status Interpreter::ResolveKernels() {
  KILN_ASSIGN_OR_RETURN(
      const std::vector<std::vector<KernelChoice>> choices,
      kiln::ResolveKernels(*model_, plugins_, plugin_records_));
  for (auto& s : subgraphs_) {
    const std::vector<KernelChoice>& of_subgraph =
        choices[static_cast<size_t>(s->index())];
    for (int32_t n = 0; n < s->num_model_nodes(); ++n) {
      NodeRecord& node = s->node(n);
      node.kernel = of_subgraph[static_cast<size_t>(n)].kernel;
      node.plugin = of_subgraph[static_cast<size_t>(n)].plugin;
      node.state_per_signature =
          node.kernel != nullptr &&
          KernelStatePerSignature(*node.kernel, *node.plugin);
    }
  }
  return absl::OkStatus();
}

std::vector<DelegateRequest> Interpreter::DelegatesToApply(
    const InterpreterOptions& options) {
  // "none" (`--delegate none`) turns the default delegates off.
  std::vector<DelegateRequest> requests;
  bool use_default = options.use_default_delegates;
  for (const DelegateRequest& request : options.delegates) {
    if (request.name == kNoDelegate) {
      use_default = false;
    } else {
      requests.push_back(request);
    }
  }
  if (requests.empty() && use_default) {
    if (FindDelegatePlugin(kDefaultDelegate).ok()) {
      DelegateRequest request;
      request.name = kDefaultDelegate;
      request.is_text = true;
      requests.push_back(std::move(request));
    } else {
      for (const PluginLoadRecord& r : plugin_records_) {
        const std::string base = r.path.substr(r.path.rfind('/') + 1);
        if (r.plugin != nullptr ||
            base.find(std::string("kiln_") + kDefaultDelegate) ==
                std::string::npos) {
          continue;
        }
        const std::string text = absl::StrCat(
            "the default delegate '", kDefaultDelegate,
            "' is unavailable: ", r.refusal,
            ". Running on kernel plugins instead (install the missing "
            "library, e.g. libxnnpack0, or pass --delegate none to silence "
            "this)");
        warnings_.push_back(text);
        std::fprintf(stderr, "kiln: warning: %s\n", text.c_str());
      }
    }
  }
  if (options.num_threads > 0) {
    for (DelegateRequest& request : requests) {
      if (request.name != kDefaultDelegate || !request.is_text ||
          request.text_settings.find("num_threads") != std::string::npos) {
        continue;
      }
      absl::StrAppend(&request.text_settings,
                      "\noptions { key: \"num_threads\" value: \"",
                      options.num_threads, "\" }\n");
    }
  }
  return requests;
}

absl::Status Interpreter::InitKernels() {
  for (auto& s : subgraphs_) {
    for (NodeRecord& node : s->nodes()) {
      if (node.kernel == nullptr || node.kernel->init == nullptr) continue;
      KILN_RETURN_IF_ERROR(CallKernel(*s, node, PluginStage::kInit));
      node.initialized = true;
    }
  }
  return absl::OkStatus();
}

std::string Interpreter::NodeLabel(const SubgraphState& s,
                                   const NodeRecord& record) const {
  const NodeDesc& node = record.node();
  std::string label = absl::StrCat("subgraph ", s.index());
  if (!s.model().name.empty()) {
    absl::StrAppend(&label, " ('", s.model().name, "')");
  }
  absl::StrAppend(&label, " node ", node.index, " (", node.OpName());
  if (record.is_partition()) {
    absl::StrAppend(&label, " partition of nodes ",
                    absl::StrJoin(node.delegated_nodes, ", "));
  } else {
    absl::StrAppend(&label, " version ", node.version);
  }
  if (record.plugin != nullptr) {
    absl::StrAppend(&label, ", plugin ", record.plugin->path());
  } else if (record.host_intrinsic) {
    absl::StrAppend(&label, ", host-intrinsic");
  }
  absl::StrAppend(&label, ")");
  return label;
}

absl::Status Interpreter::CallKernel(SubgraphState& s, NodeRecord& node,
                                     PluginStage stage) {
  PluginCall call;
  call.stage = stage;
  call.graph = &s;
  call.node = &node;
  call.plugin = node.plugin;
  call.subgraph = s.index();
  call.profiler = profiler_;
  call.thread_pool = thread_pool_.get();
  return kiln::CallKernel(*node.kernel, call, &node.kernel_state,
                          [&] { return NodeLabel(s, node); });
}

absl::Status Interpreter::CallPartition(SubgraphState& s, NodeRecord& node,
                                        PluginStage stage) {
  PartitionRecord& p = s.partition_of(node);
  PluginCall call;
  call.stage = stage;
  call.graph = &s;
  call.node = &node;
  call.plugin = node.plugin;
  call.subgraph = s.index();
  call.delegate = p.delegate;
  call.profiler = profiler_;
  call.thread_pool = thread_pool_.get();
  absl::Status status =
      CallDelegate(*p.delegate->iface, p.delegate->instance, call, &p.state,
                   [&] { return NodeLabel(s, node); });
  if (status.ok()) return status;
  p.fell_back = true;
  p.fallback_reason = std::string(status.message());
  WarnDelegateFailure(*p.delegate, p.fallback_reason);
  return status;
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

// ---------------------------------------------------------------------------
// Accessors

int Interpreter::num_inputs() const {
  return static_cast<int>(model_->graph(0).inputs.size());
}
int Interpreter::num_outputs() const {
  return static_cast<int>(model_->graph(0).outputs.size());
}
TensorState* Interpreter::input(int index) {
  if (index < 0 || index >= num_inputs()) return nullptr;
  return &subgraphs_[0]->tensor(
      model_->graph(0).inputs[static_cast<size_t>(index)]);
}
const TensorState* Interpreter::output(int index) const {
  if (index < 0 || index >= num_outputs()) return nullptr;
  TensorRecord& t = subgraphs_[0]->tensor(
      model_->graph(0).outputs[static_cast<size_t>(index)]);
  if (t.buffer.host_stale) SyncForAccessor(t);
  return &t;
}
uint64_t Interpreter::arena_bytes() const {
  uint64_t total = 0;
  for (const auto& s : subgraphs_) total += s->arena_bytes;
  return total;
}
int Interpreter::num_tensors(int subgraph) const {
  if (subgraph < 0 || subgraph >= num_subgraphs()) return 0;
  return subgraphs_[static_cast<size_t>(subgraph)]->NumTensors();
}
TensorState* Interpreter::tensor(int subgraph, int tensor_index) {
  TensorState* t = raw_tensor(subgraph, tensor_index);
  if (t != nullptr && t->buffer.host_stale) SyncForAccessor(*t);
  return t;
}
TensorState* Interpreter::raw_tensor(int subgraph, int tensor_index) {
  if (tensor_index < 0 || tensor_index >= num_tensors(subgraph)) {
    return nullptr;
  }
  return &subgraphs_[static_cast<size_t>(subgraph)]->tensor(tensor_index);
}
const NodeDesc* Interpreter::node(int subgraph, int node_index) const {
  if (subgraph < 0 || subgraph >= num_subgraphs()) return nullptr;
  const SubgraphState& s = *subgraphs_[static_cast<size_t>(subgraph)];
  if (node_index < 0 || node_index >= s.NumNodes()) return nullptr;
  return &s.node(node_index).node();
}
const std::vector<int32_t>& Interpreter::execution_plan(int subgraph) const {
  if (subgraph < 0 || subgraph >= num_subgraphs()) return EmptyPlan();
  return subgraphs_[static_cast<size_t>(subgraph)]->execution_plan;
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

// ---------------------------------------------------------------------------
// Inspection

std::vector<NodeInfo> Interpreter::DescribeNodes(int subgraph) const {
  std::vector<NodeInfo> out;
  if (subgraph < 0 || subgraph >= num_subgraphs()) return out;
  const SubgraphState& s = *subgraphs_[static_cast<size_t>(subgraph)];
  for (int32_t i = 0; i < s.num_model_nodes(); ++i) {
    const NodeRecord& n = s.node(i);
    NodeInfo info;
    info.index = i;
    info.op = n.node().OpName();
    info.version = n.node().version;
    info.host_intrinsic = n.host_intrinsic;
    info.folded = n.folded;
    if (n.plugin != nullptr) info.plugin_path = n.plugin->path();
    if (IsNodeDelegated(subgraph, i)) {
      const PartitionRecord& p =
          s.partitions()[static_cast<size_t>(n.delegated_to)];
      info.delegated = true;
      info.delegate_name = p.delegate->name;
      info.partition_node = p.node.index;
    }
    out.push_back(std::move(info));
  }
  return out;
}

bool Interpreter::IsNodeDelegated(int subgraph, int node_index) const {
  if (subgraph < 0 || subgraph >= num_subgraphs()) return false;
  const SubgraphState& s = *subgraphs_[static_cast<size_t>(subgraph)];
  if (node_index < 0 || node_index >= s.num_model_nodes()) return false;
  const int32_t p = s.node(node_index).delegated_to;
  return p >= 0 && !s.partitions()[static_cast<size_t>(p)].fell_back;
}

std::vector<PartitionInfo> Interpreter::Partitions(int subgraph) const {
  std::vector<PartitionInfo> out;
  if (subgraph < 0 || subgraph >= num_subgraphs()) return out;
  const SubgraphState& s = *subgraphs_[static_cast<size_t>(subgraph)];
  for (const PartitionRecord& p : s.partitions()) {
    PartitionInfo info;
    info.node_index = p.node.index;
    info.delegate_name = p.delegate->name;
    info.plugin_path = p.delegate->plugin->path();
    info.delegated_nodes = p.node.delegated_nodes;
    info.inputs = p.node.inputs;
    info.outputs = p.node.outputs;
    info.fell_back = p.fell_back;
    info.fallback_reason = p.fallback_reason;
    out.push_back(std::move(info));
  }
  return out;
}

// ---------------------------------------------------------------------------
// Execution

absl::Status Interpreter::InvokeSubgraph(int subgraph) {
  KILN_ASSIGN_OR_RETURN(SubgraphState * found, FindSubgraph(subgraph));
  if (invoke_depth_ > 0) return RunSubgraph(*found);
  // The application's Invoke: a Cancel() from before it does not count.
  cancel_requested_.store(false, std::memory_order_relaxed);
  if (invoke_timeout_.count() > 0) {
    deadline_ = std::chrono::steady_clock::now() + invoke_timeout_;
  }
  try {
    return RunSubgraph(*found);
  } catch (const std::bad_alloc& e) {
    return AllocationFailure("Invoke", e);
  } catch (const std::length_error& e) {
    return AllocationFailure("Invoke", e);
  }
}

absl::Status Interpreter::AllocationFailure(const std::string& stage,
                                            const std::exception& e) {
  for (auto& s : subgraphs_) {
    if (s->running) s->allocated = false;  // its tensors may be half-sized
    s->running = false;
  }
  invoke_depth_ = 0;
  return absl::ResourceExhaustedError(absl::StrCat(
      "model '", model_->source(), "': ", stage, " ran out of memory (",
      e.what(),
      "); the model needs more memory than the system gives this process. "
      "Lower max_arena_bytes (KilnInterpreterOptionsSetMaxArenaBytes, "
      "--max-arena-bytes) to have such models refused up front, or give the "
      "process more memory"));
}

absl::Status Interpreter::CheckInterrupted(
    absl::FunctionRef<std::string()> where) const {
  const bool cancelled = cancel_requested_.load(std::memory_order_relaxed);
  const bool late = invoke_timeout_.count() > 0 &&
                    std::chrono::steady_clock::now() > deadline_;
  if (!cancelled && !late) return absl::OkStatus();
  const std::string what = where();
  if (cancelled) {
    return absl::CancelledError(absl::StrCat("model '", model_->source(),
                                             "': Invoke cancelled (Cancel, "
                                             "KilnInterpreterCancel) ",
                                             what));
  }
  return absl::DeadlineExceededError(absl::StrCat(
      "model '", model_->source(), "': Invoke exceeded its timeout of ",
      std::chrono::duration<double>(invoke_timeout_).count(),
      " s (InterpreterOptions.invoke_timeout, "
      "KilnInterpreterOptionsSetInvokeTimeout, --timeout) and was stopped ",
      what));
}

absl::Status Interpreter::CheckTensorBytes(const std::string& what,
                                           const TensorState& t) const {
  // Old converters write -1 for dynamic dimensions of declared shapes.
  std::vector<int32_t> dims = t.shape;
  for (int32_t& d : dims) d = d < 0 ? 1 : d;
  const std::optional<uint64_t> count = CheckedElementCount(dims);
  const std::optional<uint64_t> bytes = CheckedByteSize(t.ElementType(), dims);
  if (count && bytes && *count <= max_arena_bytes_ &&
      *bytes <= max_arena_bytes_) {
    return absl::OkStatus();
  }
  return absl::ResourceExhaustedError(absl::StrCat(
      "model '", model_->source(), "': ", what, " '", t.desc->name,
      "' with shape [", absl::StrJoin(t.shape, ","), "] of ",
      TypeName(t.ElementType()), " needs ",
      bytes ? absl::StrCat(*bytes, " bytes") : "more bytes than fit in 64 bits",
      ", more than the limit of ", max_arena_bytes_,
      " bytes of tensor memory (max_arena_bytes). If the model is trusted and "
      "needs it, raise the limit (InterpreterOptions.max_arena_bytes, "
      "KilnInterpreterOptionsSetMaxArenaBytes, kiln --max-arena-bytes)"));
}

// Declared shapes of the tensors the interpreter allocates (constants are
// in the file already).
absl::Status Interpreter::CheckDeclaredShapes() const {
  for (const auto& s : subgraphs_) {
    for (size_t i = 0; i < s->tensors().size(); ++i) {
      const TensorRecord& t = s->tensors()[i];
      if (t.is_constant() || !t.has_rank) continue;
      KILN_RETURN_IF_ERROR(CheckTensorBytes(
          absl::StrCat("subgraph ", s->index(), " tensor ", i), t));
    }
  }
  return absl::OkStatus();
}

absl::Status Interpreter::RunSubgraph(SubgraphState& s) {
  const int subgraph = s.index();
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
  const std::vector<int32_t>& inputs = s.model().inputs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorRecord& t = s.tensor(inputs[i]);
    if (t.data == nullptr && !t.is_constant() &&
        t.ElementType() == KILN_TYPE_STRING) {
      return absl::FailedPreconditionError(absl::StrCat(
          "subgraph ", subgraph, " string input ", i, " '", t.desc->name,
          "' has no value: copy data into it before Invoke"));
    }
  }
  const bool nested = invoke_depth_ > 0;
  const uint64_t event =
      profiler_ != nullptr ? BeginInvokeEvent(s, !nested) : 0;
  s.running = true;
  ++invoke_depth_;
  if (buffer_handles_) BeginSubgraphBuffers(s, nested);
  absl::Status status = absl::OkStatus();
  for (int32_t index : s.execution_plan) {
    NodeRecord& node = s.node(index);
    status = CheckInterrupted([&] { return "before " + NodeLabel(s, node); });
    if (!status.ok()) break;
    status = RunNode(s, node);
    if (!status.ok()) break;
  }
  if (buffer_handles_ && status.ok()) status = EndSubgraphBuffers(s, nested);
  --invoke_depth_;
  s.running = false;
  if (profiler_ != nullptr) EndInvokeEvent(event, !nested);
  return status;
}

absl::Status Interpreter::RunNode(SubgraphState& s, NodeRecord& node) {
  if (node.is_partition()) return RunPartition(s, node);
  return RunOnHost(s, node);
}

absl::Status Interpreter::RunOnHost(SubgraphState& s, NodeRecord& node) {
  // Its outputs hold their values since AllocateTensors.
  if (node.evaluated_at_prepare) return absl::OkStatus();
  if (buffer_handles_) KILN_RETURN_IF_ERROR(SyncInputsToHost(s, node.node()));
  absl::Status status;
  if (node.host_intrinsic) {
    status = profiler_ != nullptr ? InvokeIntrinsicProfiled(s, node)
                                  : InvokeIntrinsic(s, node);
  } else {
    status = node.deferred ? PrepareKernelNode(s, node, /*at_invoke=*/true)
                           : absl::OkStatus();
    if (status.ok()) status = CallKernel(s, node, PluginStage::kInvoke);
  }
  if (buffer_handles_) MarkOutputsHostWritten(s, node.node());
  return status;
}

absl::Status Interpreter::RunOnKernels(SubgraphState& s,
                                       const NodeRecord& partition) {
  for (int32_t original : partition.node().delegated_nodes) {
    KILN_RETURN_IF_ERROR(RunOnHost(s, s.node(original)));
  }
  return absl::OkStatus();
}

absl::Status Interpreter::RunPartition(SubgraphState& s, NodeRecord& node) {
  const PartitionRecord& p = s.partition_of(node);
  if (p.fell_back || !p.initialized) return RunOnKernels(s, node);
  if (buffer_handles_) {
    KILN_RETURN_IF_ERROR(SyncForPartition(s, node, *p.delegate));
  }
  if (node.deferred) {
    // Shapes depend on values: size every tensor with the kernels first.
    for (int32_t original : node.node().delegated_nodes) {
      NodeRecord& o = s.node(original);
      if (!o.deferred) continue;
      if (!PrepareKernelNode(s, o, /*at_invoke=*/true).ok()) {
        return RunOnKernels(s, node);
      }
    }
    if (!CallPartition(s, node, PluginStage::kPartitionPrepare).ok()) {
      return RunOnKernels(s, node);
    }
  }
  if (CallPartition(s, node, PluginStage::kPartitionInvoke).ok()) {
    if (buffer_handles_) MarkPartitionOutputs(s, node, *p.delegate);
    return absl::OkStatus();
  }
  // Tensors of the original nodes were sized by their kernels at
  // AllocateTensors (or just above), so they can run right away.
  return RunOnKernels(s, node);
}

}  // namespace kiln
