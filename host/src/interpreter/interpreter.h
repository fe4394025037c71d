// The interpreter: runs a Model with kernels and delegates from plugins.
// docs/host-structure.md shows how it is built (model graph, run state,
// resolution, memory planning, delegation); this comment holds the
// contracts.
//
// Creation (Interpreter::Create) loads plugins and keeps every accepted one
// alive as long as the interpreter, sets up its own run state beside the
// model's immutable graph (the Model is never written or copied), resolves
// every node, calls KilnKernel.init once per kernel node and applies the
// requested delegates. It fails:
//   - with ONE message listing every node no loaded plugin covers
//     (subgraph, node index, op, version, the ranges each plugin offers and
//     whether a newer Kiln release runs it); TensorFlow fallback ops (custom
//     "Flex*") and builtin codes unknown to this Kiln are refused by name;
//   - when the model's metadata min_runtime_version is newer than the TFLite
//     release this Kiln reads (kNewestTfliteRuntimeRead);
//   - when a host-intrinsic node's arity does not match the subgraphs it
//     calls, or a kernel's init or a delegate's create/partition fails.
//
// AllocateTensors (per subgraph):
//   - Before prepare, every non-constant, non-variable tensor a node writes
//     has an unknown shape (has_rank = false); subgraph inputs keep theirs
//     (from the model or ResizeInput). An input of unknown rank (converters
//     write scalars as shape [] without has_rank) is a scalar, as in TFLite.
//   - Nodes are prepared in execution order. No non-constant tensor has data
//     then: KilnHostApi.tensor_data returns NULL for them. A kernel whose
//     output shape depends on input VALUES leaves that output unresized and
//     returns OK.
//   - Such outputs, and every output of a node with one of them as input,
//     are dynamic: their nodes are prepared again during Invoke right before
//     they run, with data, and the outputs get heap storage
//     (TensorStorage::kOwned) of the prepared size.
//   - Every other activation gets arena memory (arena_planner.h); constants
//     stay in the model mapping; variables (TensorDesc::is_variable) keep
//     persistent heap storage; strings always use the heap.
//   - A node that writes a subgraph input (the output aliases an input, as
//     in add_shared_tensors.bin) fails AllocateTensors.
// ResizeInput changes an input's shape (any rank; dims >= 0; a
// shape_signature -1 marks the dims meant to vary) and requires
// AllocateTensors again before Invoke. Invoke before AllocateTensors is
// FAILED_PRECONDITION.
//
// Host-intrinsic ops, run by the interpreter itself because they schedule
// other subgraphs or own state that lives across nodes, subgraphs and
// invocations, which no kernel can reach through the extension API:
//   WHILE, IF, STABLEHLO_COMPOSITE  run other subgraphs of the model (indices
//       from the kHostOption* node options of runtime/graph.h). Values are
//       copied into the callee's inputs and out of its outputs, so a body
//       output may forward a body input. Their outputs are dynamic.
//   CALL_ONCE  runs its init subgraph on the first Invoke of this
//       interpreter only.
//   VAR_HANDLE / READ_VARIABLE / ASSIGN_VARIABLE  resource variables, keyed
//       by (container, shared_name), shared by every subgraph of this
//       interpreter and kept across invocations (not across interpreters).
//       READ_VARIABLE's output is dynamic (the stored value's shape).
// A subgraph invoked while it is already running (recursion) is an error.
//
// Delegation (through the extension API only): requested delegates apply in
// order, each found by KilnDelegateInterface.name and created with
// serialized kiln.DelegateSettings (text settings and settings files are
// parsed here, a vendor's own settings message with the descriptor set the
// delegate declares, into DelegateSettings.vendor_settings); create
// returning KILN_STATUS_UNAVAILABLE (no device) skips the delegate with a
// warning. The nodes it claims (never host-intrinsic ones, never ones an
// earlier delegate took) form partitions of at least
// DelegateSettings.min_partition_size (default 1) nodes; each becomes a
// partition node (KILN_OP_DELEGATE; inputs: tensors its nodes read from
// outside; outputs: tensors used outside or subgraph outputs;
// delegated_nodes: the original node indices), appended after the model's
// nodes. The original nodes keep their kernels and are prepared with them
// at AllocateTensors before partition_prepare. If partition_init,
// partition_prepare or partition_invoke fails, the interpreter warns once
// per delegate on stderr and from then on runs that partition's original
// nodes on their kernels, so outputs are the kernels' outputs.
//
// Errors from plugin callbacks read "<where>: <stage> failed: <message
// reported through report_error>", <where> naming the subgraph, node index,
// op, version and plugin path (runtime/plugin_call.h).
//
// Thread-safety: a Model is immutable and may be shared by any number of
// interpreters on any threads. An Interpreter (with its signature runners
// and tensors) must be used by one thread at a time; use one interpreter per
// thread to run a model concurrently.
#ifndef KILN_HOST_INTERPRETER_INTERPRETER_H_
#define KILN_HOST_INTERPRETER_INTERPRETER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "model/model.h"
#include "plugin/plugin_loader.h"
#include "runtime/graph.h"
#include "runtime/plugin_call.h"

namespace kiln {

// The newest TFLite runtime release whose models this Kiln reads. Model
// metadata "min_runtime_version" is written by the TFLite converters in
// TFLite release numbers; a model that requires a newer TFLite runtime is
// refused at creation.
inline constexpr const char* kNewestTfliteRuntimeRead = "2.20.0";

struct DelegateRequest {
  // KilnDelegateInterface.name of a loaded plugin's delegate.
  std::string name;
  // Serialized kiln.DelegateSettings (empty: defaults). Used when !is_text.
  std::string settings;
  // kiln.DelegateSettings in Protocol Buffers text format. Used when is_text.
  std::string text_settings;
  bool is_text = false;
  // A settings file (`--delegate-settings FILE`): a message of the
  // delegate's settings_type, text or binary (plugin/settings_schema.h
  // decides by the name, then the contents). A vendor type travels in
  // kiln.DelegateSettings.vendor_settings; kiln.DelegateSettings itself is
  // merged over the settings above. Empty name: no file.
  std::string settings_file_name;
  std::string settings_file;  // its bytes
};

struct InterpreterOptions {
  // Where to find plugins; plugins.max_abi_version caps the extension API
  // version served (0 = newest).
  PluginSearchConfig plugins;
  std::vector<DelegateRequest> delegates;
};

// What `kiln inspect` shows about one node of the execution.
struct NodeInfo {
  int32_t index = -1;
  std::string op;  // Node::OpName()
  int32_t version = 1;
  bool host_intrinsic = false;
  std::string plugin_path;  // kernel plugin; "" for host-intrinsic ops
  // True when a delegate runs this node (its partition has not fallen back).
  bool delegated = false;
  std::string delegate_name;    // when delegated
  int32_t partition_node = -1;  // index of the partition node, when delegated
};

// One partition a delegate took over.
struct PartitionInfo {
  int32_t node_index = -1;  // the partition node
  std::string delegate_name;
  std::string plugin_path;
  std::vector<int32_t> delegated_nodes;  // original node indices
  std::vector<int32_t> inputs, outputs;  // tensor indices
  bool fell_back = false;  // runs on kernels after a delegate failure
  std::string fallback_reason;
};

class Interpreter;
class SubgraphState;
struct DelegateInstance;
struct NodeRecord;
struct PartitionRecord;

// Runs one signature (SignatureDef) of the model: its own subgraph, inputs
// and outputs by name. Owned by the interpreter; valid until it is
// destroyed. Same threading rules as the interpreter.
class SignatureRunner {
 public:
  const std::string& key() const { return signature_->key; }
  // The model's SignatureDef this runner runs (names and tensor indices).
  const Signature& signature() const { return *signature_; }
  int32_t subgraph_index() const { return signature_->subgraph_index; }
  int num_inputs() const { return static_cast<int>(signature_->inputs.size()); }
  int num_outputs() const {
    return static_cast<int>(signature_->outputs.size());
  }
  // Names in the order of the model's SignatureDef; "" when out of range.
  const std::string& input_name(int index) const;
  const std::string& output_name(int index) const;
  // Tensors by name (mapped through tensor_index); nullptr if no such name.
  TensorState* input(const std::string& name);
  const TensorState* output(const std::string& name) const;
  absl::Status ResizeInput(const std::string& name,
                           const std::vector<int32_t>& dims);
  absl::Status AllocateTensors();
  absl::Status Invoke();

 private:
  friend class Interpreter;
  SignatureRunner(Interpreter* interpreter, const Signature* signature)
      : interpreter_(interpreter), signature_(signature) {}
  Interpreter* interpreter_;
  const Signature* signature_;
};

class Interpreter {
 public:
  // Loads plugins, resolves every node, inits kernels and applies delegates.
  // On failure nothing stays loaded. The interpreter keeps `model` alive.
  static absl::StatusOr<std::unique_ptr<Interpreter>> Create(
      std::shared_ptr<const Model> model, const InterpreterOptions& options);
  ~Interpreter();
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

  const Model& model() const { return *model_; }
  // Every plugin candidate and its outcome, in load order.
  const std::vector<PluginLoadRecord>& plugin_records() const {
    return plugin_records_;
  }
  // Warnings issued so far (delegate skipped or fallen back), also printed.
  const std::vector<std::string>& warnings() const { return warnings_; }

  // ---- The main subgraph (0) ----
  // Plans memory and prepares the main subgraph (see the file comment).
  absl::Status AllocateTensors() { return AllocateSubgraph(0); }
  // Runs the main subgraph. FAILED_PRECONDITION before AllocateTensors.
  absl::Status Invoke() { return InvokeSubgraph(0); }
  absl::Status ResizeInput(int index, const std::vector<int32_t>& dims) {
    return ResizeSubgraphInput(0, index, dims);
  }
  int num_inputs() const;
  int num_outputs() const;
  // nullptr when out of range. Stable for the interpreter's lifetime; data
  // is valid after AllocateTensors (inputs) / Invoke (outputs). The tensor's
  // name, type and quantization are in ->desc.
  TensorState* input(int index);
  const TensorState* output(int index) const;
  // Bytes of the activation arenas of every subgraph allocated so far.
  uint64_t arena_bytes() const;

  // ---- Any subgraph ----
  int num_subgraphs() const { return static_cast<int>(subgraphs_.size()); }
  // The subgraph's tensors (as the model's, with this interpreter's state);
  // 0 when out of range.
  int num_tensors(int subgraph) const;
  // nullptr when out of range.
  TensorState* tensor(int subgraph, int tensor_index);
  // Node `node_index`: the model's nodes, then the partition nodes the
  // delegates made; nullptr when out of range.
  const NodeDesc* node(int subgraph, int node_index) const;
  // Node indices in execution order, after delegation (partition nodes
  // stand for the nodes they took over). Empty when out of range.
  const std::vector<int32_t>& execution_plan(int subgraph) const;
  absl::Status AllocateSubgraph(int subgraph);
  absl::Status InvokeSubgraph(int subgraph);
  absl::Status ResizeSubgraphInput(int subgraph, int input_index,
                                   const std::vector<int32_t>& dims);
  uint64_t subgraph_arena_bytes(int subgraph) const;

  // ---- Inspection ----
  // One entry per node of the model's subgraph (not partition nodes).
  std::vector<NodeInfo> DescribeNodes(int subgraph) const;
  bool IsNodeDelegated(int subgraph, int node_index) const;
  // Why the requested delegates did not claim a node ("NAME: reason", one
  // per delegate that gave a reason through kiln.delegate_decline_reasons/1);
  // "" when no delegate said why.
  std::string DelegateDeclineReason(int subgraph, int node_index) const;
  std::vector<PartitionInfo> Partitions(int subgraph) const;

  // ---- Signatures ----
  int num_signatures() const {
    return static_cast<int>(model_->signatures().size());
  }
  // "" when out of range.
  const std::string& signature_key(int index) const;
  // NOT_FOUND (naming the available keys) when there is no such signature.
  absl::StatusOr<SignatureRunner*> GetSignatureRunner(const std::string& key);

 private:
  friend class SignatureRunner;
  Interpreter();

  // Creation (interpreter.cc, delegation.cc).
  absl::Status Initialize(const InterpreterOptions& options);
  absl::Status ResolveKernels();
  absl::Status ValidateIntrinsicNodes() const;
  absl::Status ValidateIntrinsicNode(const SubgraphState& s,
                                     const NodeRecord& node) const;
  absl::Status InitKernels();
  absl::Status ApplyDelegate(const DelegateRequest& request);
  absl::StatusOr<std::shared_ptr<LoadedPlugin>> FindDelegatePlugin(
      const std::string& name) const;
  absl::Status DelegateSubgraph(DelegateInstance& delegate, int subgraph);
  absl::StatusOr<std::vector<int32_t>> ClaimNodes(DelegateInstance& delegate,
                                                  SubgraphState& s);
  void RecordDeclineReasons(DelegateInstance& delegate, int subgraph,
                            const std::vector<int32_t>& claimed);
  void InitPartitions(SubgraphState& s, const std::vector<int32_t>& nodes);

  // Allocation (allocation.cc).
  absl::StatusOr<SubgraphState*> FindSubgraph(int subgraph);
  absl::Status CheckNoNodeWritesAnInput(const SubgraphState& s) const;
  absl::Status PrepareAll(SubgraphState& s);
  absl::Status PreparePartition(SubgraphState& s, NodeRecord& node);
  // Prepares a kernel node; `at_invoke` allocates its dynamic outputs.
  absl::Status PrepareKernelNode(SubgraphState& s, NodeRecord& node,
                                 bool at_invoke);
  absl::Status AllocateDynamicOutputs(SubgraphState& s, const NodeRecord& node);

  // Execution (interpreter.cc).
  absl::Status RunNode(SubgraphState& s, NodeRecord& node);
  absl::Status RunPartition(SubgraphState& s, NodeRecord& node);
  absl::Status RunOnKernels(SubgraphState& s, const NodeRecord& partition);

  // Calls into plugins, through CallPlugin (runtime/plugin_call.h).
  absl::Status CallKernel(SubgraphState& s, NodeRecord& node,
                          PluginStage stage);
  // Calls the partition's delegate at `stage`; on failure the partition
  // falls back to its nodes' kernels (with the one warning) and the failure
  // is returned.
  absl::Status CallPartition(SubgraphState& s, NodeRecord& node,
                             PluginStage stage);
  void WarnDelegateFailure(DelegateInstance& delegate,
                           const std::string& message);
  // "subgraph 0 ('main') node 3 (ADD version 1, plugin /path)": what every
  // message about a node starts with.
  std::string NodeLabel(const SubgraphState& s, const NodeRecord& node) const;

  // Host-intrinsic ops (intrinsic_ops.cc).
  absl::Status PrepareIntrinsic(SubgraphState& s, NodeRecord& node);
  absl::Status InvokeIntrinsic(SubgraphState& s, NodeRecord& node);
  absl::Status InvokeWhile(SubgraphState& s, const NodeRecord& node);
  absl::Status InvokeIf(SubgraphState& s, const NodeRecord& node);
  absl::Status InvokeCallSubgraph(SubgraphState& s, const NodeRecord& node,
                                  int32_t callee);
  absl::Status InvokeCallOnce(SubgraphState& s, const NodeRecord& node);
  absl::Status InvokeVarHandle(SubgraphState& s, const NodeRecord& node);
  absl::Status InvokeReadVariable(SubgraphState& s, const NodeRecord& node);
  absl::Status InvokeAssignVariable(SubgraphState& s, const NodeRecord& node);

  std::shared_ptr<const Model> model_;
  std::vector<PluginLoadRecord> plugin_records_;
  std::vector<std::shared_ptr<LoadedPlugin>> plugins_;
  std::vector<std::unique_ptr<SubgraphState>> subgraphs_;
  std::vector<std::unique_ptr<DelegateInstance>> delegates_;
  std::map<std::string, std::unique_ptr<SignatureRunner>> runners_;
  std::vector<std::string> warnings_;

  // Resource variables (VAR_HANDLE / READ_VARIABLE / ASSIGN_VARIABLE).
  struct Variable {
    std::string name;  // "container/shared_name", for messages
    bool assigned = false;
    KilnTensorType type = KILN_TYPE_FLOAT32;
    std::vector<int32_t> shape;
    std::vector<uint8_t> bytes;
  };
  std::map<std::string, int32_t> variable_ids_;  // "container\0shared_name"
  std::vector<Variable> variables_;
  // Init subgraphs CALL_ONCE has already run.
  std::vector<bool> call_once_done_;
};

}  // namespace kiln

#endif  // KILN_HOST_INTERPRETER_INTERPRETER_H_
