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
//     calls, or a kernel's init or a delegate's create/partition fails;
//   - when a subgraph or signature input is a constant
//     (CheckNoConstantInputs, model_checks.h), or a declared shape exceeds
//     max_arena_bytes (see "Limits").
//
// AllocateTensors (per subgraph):
//   - Before prepare, every non-constant, non-variable tensor a node writes
//     has an unknown shape (has_rank = false); subgraph inputs keep theirs
//     (from the model or ResizeInput). An input of unknown rank (converters
//     write scalars as shape [] without has_rank) is a scalar, as in TFLite.
//   - Nodes are prepared in execution order. No non-constant tensor has data
//     then (KilnHostApi.tensor_data returns NULL), except prepare-time
//     values. A kernel whose output shape depends on input VALUES it cannot
//     read leaves that output unresized and returns OK.
//   - Such outputs, and every output of a node with one of them as input,
//     are dynamic: their nodes are prepared again during Invoke right before
//     they run, with data, and the outputs get heap storage
//     (TensorStorage::kOwned) of the prepared size.
//   - Prepare-time values (prepare_values.cc; LiteRT's persistent
//     read-only tensors): right after a successful prepare that sized every
//     output, a kernel node that no delegate took over is evaluated when
//     (a) it is SHAPE and its input has a known, non-dynamic shape (the
//     host writes the shape), or it is GATHER, REDUCE_PROD, PACK, UNPACK,
//     CONCATENATION, STRIDED_SLICE, SLICE, CAST, SQUEEZE, EXPAND_DIMS,
//     RESHAPE, ADD, SUB, MUL, FLOOR_DIV, MAXIMUM or MINIMUM and every input
//     is a constant or a prepare-time value (its kernel's invoke runs), and
//     (b) every output is an INT32/INT64 tensor of at most 1 KiB that is
//     not a subgraph output or variable. Its outputs get heap storage
//     holding the values until the next AllocateTensors, later prepares
//     read them through tensor_data, and the node does not run at Invoke.
//     The values depend only on the input signature's shapes and the
//     constants. If the evaluation fails, the node runs at Invoke as usual.
//   - Every other activation gets arena memory (arena_planner.h); constants
//     stay in the model mapping; variables (TensorDesc::is_variable) keep
//     persistent heap storage; strings always use the heap.
//   - Zero copy: the output of a RESHAPE, SQUEEZE or EXPAND_DIMS node run
//     by its kernel shares its input's arena bytes when the input dies at
//     that node and neither is a subgraph input or output (the kernel's
//     input and output data pointers are then equal; its copy is a no-op).
//   - A node that writes a subgraph input (the output aliases an input, as
//     in add_shared_tensors.bin) fails AllocateTensors.
// ResizeInput changes an input's shape (any rank; dims >= 0; a
// shape_signature -1 marks the dims meant to vary) and requires
// AllocateTensors again before Invoke. Invoke before AllocateTensors is
// FAILED_PRECONDITION.
//
// Plan cache (plan_cache.h; InterpreterOptions.plan_cache): AllocateTensors
// keeps what it prepared per input signature (input shapes and types) of
// each subgraph, up to max_plans per subgraph (LRU). Returning to a cached
// signature restores every tensor's shape, the prepare-time values (which
// belong to their signature) and the arena layout and switches the kernels
// and partitions that allow one state per signature
// (KILN_KERNEL_FLAG_STATE_PER_SHAPE_SIGNATURE,
// KILN_DELEGATE_FLAG_STATE_PER_SHAPE_SIGNATURE) to the state prepared for
// it, without calling their prepare; all other kernels and partitions are
// prepared again as without the cache. Input data does not survive
// AllocateTensors either way. A failed AllocateTensors leaves every cached
// plan intact. When many different signatures are prepared within a few
// application calls, a retracing warning names the inputs whose shapes keep
// changing (once per subgraph; warnings() and stderr).
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
// Profiling (runtime/profiler.h): with InterpreterOptions.profile or
// SetProfiling(true) the interpreter records one event per plugin callback
// (init, prepare, invoke of every kernel node; create, partition,
// partition_init/prepare/invoke of delegates; buffer-handle copies), per
// host-intrinsic node, per AllocateTensors and per Invoke, and plugins add
// theirs through kiln.profiler/1. Per Invoke, the events of category
// "invoke" and "partition_invoke" are exactly one per node the plan runs
// (plus one per original node of a partition that falls back; nodes
// evaluated at prepare do not run, their invoke events belong to
// AllocateTensors). Off, the
// interpreter tests one pointer per call and records nothing.
//
// Buffer handles (extension API 1.2; runtime/buffer_handles.h): a tensor
// may carry a handle of a delegate instance (bound by a partition of that
// delegate, or by the application through SetTensorBufferHandle) and two
// flags saying whether the handle or the host data is the newer copy. The
// interpreter copies only at these points:
//   - before a reader that is not a partition of the owning instance reads
//     a tensor whose handle is newer (a kernel or host-intrinsic node, a
//     partition of another delegate, a partition running on kernels after
//     a fallback, the application through output(), tensor(),
//     SyncTensorToHost, or the C API's data accessors):
//     copy_from_buffer_handle;
//   - before a partition of the owning instance reads a tensor whose host
//     data is newer (written by a kernel, another delegate or the
//     application's KilnTensorCopyFromBuffer): copy_to_buffer_handle;
//   - at the end of Invoke, outputs bound by the application whose host data
//     is newer (their partition fell back to kernels) get
//     copy_to_buffer_handle, so the application's buffer holds the result;
//     a subgraph run by control flow has its outputs copied to the host.
// So consecutive partitions of one delegate instance pass tensors in device
// memory, and application-bound buffers need no host copy at all. Before a
// partition of the owner runs, its bound outputs count as host-written
// unless the delegate marks them with tensor_set_buffer_handle(...,
// host_data_stale=1) during the call. AllocateTensors releases the handles
// partitions bound (free_buffer_handle), and application-bound ones whose
// tensor changed size (with a warning); destruction releases the rest
// before the delegates are destroyed.
//
// Limits (InterpreterOptions; docs/security.md): a model is untrusted data.
//   - Sizes: every shape is overflow-checked (model checks, ResizeInput,
//     tensor_resize). A tensor larger than max_arena_bytes is refused at
//     creation (declared shapes), ResizeInput, AllocateTensors and, for
//     tensors sized at invoke, Invoke; so is an AllocateTensors whose
//     arenas (all subgraphs together) would exceed it. The messages name
//     the tensor and the limit. Memory that cannot be allocated is a
//     RESOURCE_EXHAUSTED error of AllocateTensors or Invoke, never an abort.
//   - Time: Cancel() (from any thread) stops the Invoke in progress before
//     its next node or WHILE iteration with CANCELLED; invoke_timeout stops
//     it the same way with DEADLINE_EXCEEDED; a WHILE node that would run
//     more than max_while_iterations iterations fails with
//     RESOURCE_EXHAUSTED. The messages name the node. The interpreter stays
//     usable: inputs keep their data and the next Invoke runs from the
//     start (outputs of the stopped one are undefined).
//
// Thread-safety: a Model is immutable and may be shared by any number of
// interpreters on any threads. An Interpreter (with its signature runners
// and tensors) must be used by one thread at a time; use one interpreter per
// thread to run a model concurrently.
#ifndef KILN_HOST_INTERPRETER_INTERPRETER_H_
#define KILN_HOST_INTERPRETER_INTERPRETER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "interpreter/plan_cache.h"
#include "model/model.h"
#include "plugin/plugin_loader.h"
#include "runtime/graph.h"
#include "runtime/plugin_call.h"
#include "runtime/profiler.h"
#include "runtime/thread_pool.h"

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

// The default InterpreterOptions.max_arena_bytes: 4 GiB.
inline constexpr uint64_t kDefaultMaxArenaBytes = uint64_t{4} << 30;

struct InterpreterOptions {
  // Where to find plugins; plugins.max_abi_version caps the extension API
  // version served (0 = newest).
  PluginSearchConfig plugins;
  std::vector<DelegateRequest> delegates;
  // Record profile events from creation on (see the file comment).
  bool profile = false;
  // Prepared plans kept per input signature (see the file comment).
  PlanCacheOptions plan_cache;
  // Limits for models from untrusted sources (docs/security.md; see "Limits"
  // in the file comment). Bytes of activation memory: any one tensor, and
  // the arenas of all subgraphs together. 0: kDefaultMaxArenaBytes.
  uint64_t max_arena_bytes = kDefaultMaxArenaBytes;
  // Iterations one WHILE node may run in one Invoke; 0: no limit.
  uint64_t max_while_iterations = 0;
  // Wall-clock time one Invoke may take; zero or negative: no limit.
  std::chrono::nanoseconds invoke_timeout{0};
  // Default delegates, as LiteRT applies XNNPACK by default: when no
  // delegate is requested and a loaded plugin provides the delegate named
  // kDefaultDelegate ("xnnpack"), it is applied with default settings (and
  // num_threads). When the plugin that should provide it was found but
  // could not load (e.g. libXNNPACK missing), a warning says why and the
  // model runs on kernel plugins. false: only the requested delegates.
  bool use_default_delegates = true;
  // Threads a delegate may use (0: its default, one thread). Passed to the
  // default delegate, and to a requested "xnnpack" delegate that sets no
  // num_threads itself, as DelegateSettings.options["num_threads"]. Also
  // the size of the interpreter's thread pool that plugins share through
  // the host extension kiln.parallel_for/1 (extension API 1.3; 0 counts as
  // 1; threads start on first use).
  int32_t num_threads = 0;
};

// The delegate applied by default (InterpreterOptions::use_default_delegates).
inline constexpr const char* kDefaultDelegate = "xnnpack";
// A DelegateRequest of this name applies nothing and turns the default
// delegates off (`--delegate none`).
inline constexpr const char* kNoDelegate = "none";

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
  // Evaluated once at creation (all inputs constant): its outputs are
  // constants and it never runs.
  bool folded = false;
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
struct DelegateRef;
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
  // output() makes the host data current first, as Interpreter::output.
  TensorState* input(const std::string& name);
  const TensorState* output(const std::string& name) const;
  // The output without synchronising its host data (for the C API, whose
  // data accessors synchronise).
  const TensorState* raw_output(const std::string& name) const;
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
  // Names of the delegates applied (requested or default), in order; a
  // delegate skipped at creation (UNAVAILABLE) is not among them.
  std::vector<std::string> ActiveDelegates() const;
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
  // Stops the Invoke in progress (of any subgraph or signature) before its
  // next node or WHILE iteration: it returns CANCELLED. The only method that
  // may be called from another thread while the interpreter runs. Does not
  // affect Invokes started after it returns: a call while nothing runs has
  // no effect.
  void Cancel() { cancel_requested_.store(true, std::memory_order_relaxed); }
  int num_inputs() const;
  int num_outputs() const;
  // nullptr when out of range. Stable for the interpreter's lifetime; data
  // is valid after AllocateTensors (inputs) / Invoke (outputs). The tensor's
  // name, type and quantization are in ->desc. output() first makes the
  // host data current when a delegate's buffer handle holds the newer value
  // (a failing copy is a warning, printed and in warnings(), and leaves the
  // data stale; SyncTensorToHost returns the error instead).
  TensorState* input(int index);
  const TensorState* output(int index) const;
  // Bytes of the activation arenas of every subgraph allocated so far.
  uint64_t arena_bytes() const;
  // Hits, misses, evictions and holdings of the plan caches of every
  // subgraph. `bytes` counts what the host holds (shapes, arena layouts);
  // the plugin states the plans keep are opaque and only counted.
  PlanCacheStats plan_cache_stats() const;

  // ---- Any subgraph ----
  int num_subgraphs() const { return static_cast<int>(subgraphs_.size()); }
  // The subgraph's tensors (as the model's, with this interpreter's state);
  // 0 when out of range.
  int num_tensors(int subgraph) const;
  // nullptr when out of range. Makes the host data current, as output().
  TensorState* tensor(int subgraph, int tensor_index);
  // The same tensor without synchronising its host data.
  TensorState* raw_tensor(int subgraph, int tensor_index);
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

  // Worker threads the interpreter's pool (kiln.parallel_for/1) has started
  // so far: 0 until a plugin's parallel_for needed them, then
  // InterpreterOptions::num_threads - 1.
  int32_t pool_threads_started() const {
    return thread_pool_ != nullptr ? thread_pool_->started_threads() : 0;
  }

  // ---- Profiling (see the file comment) ----
  // Starts or stops recording. Events recorded so far are kept.
  void SetProfiling(bool enabled);
  bool profiling() const { return profiler_ != nullptr; }
  // The events so far in begin order (none when profiling was never on).
  std::vector<ProfileEvent> ProfileEvents() const;
  void ClearProfile();
  // Chrome trace-event JSON of ProfileEvents() (runtime/profiler.h) into
  // `path`; errors name the path.
  absl::Status WriteProfileTrace(const std::string& path) const;

  // ---- Buffer handles (see the file comment) ----
  // Binds `handle`, a buffer handle of the delegate this interpreter applied
  // as `delegate` (what a handle is, the delegate documents), to `tensor`,
  // an input or output of one of this interpreter's subgraphs: for an input
  // the handle holds the value; an output is written into it.
  // KILN_INVALID_BUFFER_HANDLE unbinds. The application keeps the memory
  // alive while bound. FAILED_PRECONDITION when no such delegate is active
  // or it does not serve buffer handles; INVALID_ARGUMENT for another
  // tensor.
  absl::Status SetTensorBufferHandle(TensorState* tensor,
                                     const std::string& delegate,
                                     KilnBufferHandle handle);
  // Explicit synchronisation point: makes `tensor`'s host data current.
  absl::Status SyncTensorToHost(TensorState* tensor);
  // The instance of the active delegate `delegate` and the capability `id`
  // its plugin offers (KilnPluginDescriptor.extensions), e.g. to reach the
  // device behind its buffer handles. NOT_FOUND names what exists.
  absl::StatusOr<std::pair<void*, const KilnExtensionBase*>> DelegateExtension(
      const std::string& delegate, const std::string& id) const;

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
  // Constant folding (constant_folding.cc): runs every pure node whose
  // inputs are all constants once, makes its outputs constants and drops it
  // from the plan. FoldNode returns false (state unchanged) when it cannot.
  absl::Status FoldConstants(SubgraphState& s);
  bool FoldNode(SubgraphState& s, NodeRecord& node);
  // Prepare-time values (prepare_values.cc). EvaluateNode runs a prepared
  // node on heap outputs of its prepared sizes (SHAPE on the host, others
  // on their kernel); on failure the outputs have no storage.
  absl::Status EvaluateNode(SubgraphState& s, NodeRecord& node);
  absl::Status WriteShapeValue(SubgraphState& s, const NodeDesc& desc);
  // Right after a node's prepare at AllocateTensors: evaluates it when it
  // computes a small integer value from constants and known shapes (see
  // the file comment, AllocateTensors), else leaves it to run at invoke.
  void EvaluateAtPrepare(SubgraphState& s, NodeRecord& node);
  // The requested delegates, or the default one (see InterpreterOptions),
  // with num_threads passed on.
  std::vector<DelegateRequest> DelegatesToApply(
      const InterpreterOptions& options);
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
  // AllocateSubgraph without the catch of allocation failures.
  absl::Status AllocateSubgraphUnguarded(int subgraph);
  absl::Status CheckNoNodeWritesAnInput(const SubgraphState& s) const;
  // Prepares every node in plan order. With a cached plan, the kernels and
  // partitions that keep one state per signature get the plan's instead.
  absl::Status PrepareAll(SubgraphState& s, const PreparedPlan* cached);
  absl::Status PrepareModelNode(SubgraphState& s, NodeRecord& node,
                                const PreparedPlan* cached);
  absl::Status PreparePartition(SubgraphState& s, NodeRecord& node,
                                const PreparedPlan* cached);
  // Prepares a kernel node; `at_invoke` allocates its dynamic outputs.
  absl::Status PrepareKernelNode(SubgraphState& s, NodeRecord& node,
                                 bool at_invoke);
  absl::Status AllocateDynamicOutputs(SubgraphState& s, const NodeRecord& node);

  // Plan cache (plan_cache_allocation.cc): preparation and memory
  // planning of an AllocateTensors after ResetTensors.
  absl::Status PrepareThroughPlanCache(SubgraphState& s);
  absl::Status PrepareNewPlan(SubgraphState& s,
                              const InputSignature& signature);
  // False when the plan turned out stale and a new one was prepared.
  absl::StatusOr<bool> RestoreCachedPlan(SubgraphState& s, PreparedPlan& plan,
                                         const InputSignature& signature);
  void RestoreKernelNode(SubgraphState& s, NodeRecord& node,
                         const PreparedPlan& plan);
  // False when the partition is prepared as without the cache.
  bool RestorePartitionState(SubgraphState& s, NodeRecord& node,
                             const PreparedPlan& plan);
  // A new state (init) for every per-signature node and partition whose
  // state belongs to a cached plan.
  absl::Status UseUncachedStates(SubgraphState& s);
  // Frees the plan's states, except the ones the nodes use now, which the
  // nodes keep.
  void ReleasePlanStates(SubgraphState& s, PreparedPlan& plan);
  void ReleasePlanCaches();
  void WarnRetracing(const SubgraphState& s);

  // Execution (interpreter.cc).
  // InvokeSubgraph without the catch of allocation failures.
  absl::Status RunSubgraph(SubgraphState& s);
  // CANCELLED after Cancel(), DEADLINE_EXCEEDED past the invoke timeout;
  // `where()` says where ("before <node label>"), called only then.
  absl::Status CheckInterrupted(absl::FunctionRef<std::string()> where) const;
  // Allocation failures (std::bad_alloc, std::length_error) of
  // AllocateTensors or Invoke as RESOURCE_EXHAUSTED; clears the running
  // marks the failed call left.
  absl::Status AllocationFailure(const std::string& stage,
                                 const std::exception& e);
  // A tensor of `bytes` bytes within max_arena_bytes_, else an error naming
  // the tensor and the limit. `what`: "tensor 3 'x' of subgraph 0".
  absl::Status CheckTensorBytes(const std::string& what,
                                const TensorState& t) const;
  absl::Status CheckDeclaredShapes() const;
  absl::Status CheckMemoryPlan(const SubgraphState& s,
                               const MemoryPlan& plan) const;
  absl::Status RunNode(SubgraphState& s, NodeRecord& node);
  // A model node on its kernel or, host-intrinsic, on the host.
  absl::Status RunOnHost(SubgraphState& s, NodeRecord& node);
  absl::Status RunPartition(SubgraphState& s, NodeRecord& node);
  absl::Status RunOnKernels(SubgraphState& s, const NodeRecord& partition);

  // Profiling (profiling.cc). Each Begin* returns the token for
  // profiler_->End; call them only with profiling on.
  uint64_t BeginInvokeEvent(const SubgraphState& s, bool top_level);
  void EndInvokeEvent(uint64_t token, bool top_level);
  uint64_t BeginHostEvent(const SubgraphState& s, const char* name,
                          const char* category, const NodeRecord* node);
  absl::Status InvokeIntrinsicProfiled(SubgraphState& s, NodeRecord& node);

  // Buffer handles (buffer_sync.cc); call only when buffer_handles_.
  // Before a host reader (kernel, host-intrinsic node) runs `node`.
  absl::Status SyncInputsToHost(SubgraphState& s, const NodeDesc& node);
  // After a host writer ran `node`.
  void MarkOutputsHostWritten(SubgraphState& s, const NodeDesc& node);
  // Before and after partition `node` of `delegate` runs.
  absl::Status SyncForPartition(SubgraphState& s, const NodeRecord& node,
                                const DelegateRef& delegate);
  void MarkPartitionOutputs(SubgraphState& s, const NodeRecord& node,
                            const DelegateRef& delegate);
  // At the start and end of InvokeSubgraph; `nested`: run by control flow.
  void BeginSubgraphBuffers(SubgraphState& s, bool nested);
  absl::Status EndSubgraphBuffers(SubgraphState& s, bool nested);
  // At AllocateSubgraph: before preparation, releases the handles
  // partitions bound; after memory planning, releases application handles
  // of resized tensors and marks the others newer than the new host memory.
  void ReleasePartitionBuffers(SubgraphState& s);
  void KeepApplicationBuffers(SubgraphState& s);
  void ReleaseAllBuffers();
  // The lazy synchronisation of the accessors: a failure is a warning.
  void SyncForAccessor(TensorState& t) const;
  // The subgraph and index of `tensor`; {-1, -1} when not this
  // interpreter's.
  std::pair<int32_t, int32_t> Locate(const TensorState* tensor) const;

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

  // The pool lent to plugins through kiln.parallel_for/1 (num_threads
  // threads, started on first use). Declared first: destroyed last, after
  // every kernel and delegate state.
  std::unique_ptr<ThreadPool> thread_pool_;
  std::shared_ptr<const Model> model_;
  std::vector<PluginLoadRecord> plugin_records_;
  std::vector<std::shared_ptr<LoadedPlugin>> plugins_;
  std::vector<std::unique_ptr<SubgraphState>> subgraphs_;
  std::vector<std::unique_ptr<DelegateInstance>> delegates_;
  std::map<std::string, std::unique_ptr<SignatureRunner>> runners_;
  // Mutable: the accessors' lazy synchronisation may warn.
  mutable std::vector<std::string> warnings_;

  // Profiling: profiler_ is the active profiler, null when off.
  std::unique_ptr<Profiler> profile_;
  Profiler* profiler_ = nullptr;
  int32_t profile_runs_ = 0;  // Invokes recorded so far
  // Some active delegate serves buffer handles: the run loop checks them.
  bool buffer_handles_ = false;
  int32_t invoke_depth_ = 0;  // InvokeSubgraph calls in progress

  // Limits (see the file comment).
  uint64_t max_arena_bytes_ = kDefaultMaxArenaBytes;
  uint64_t max_while_iterations_ = 0;  // 0: none
  std::chrono::nanoseconds invoke_timeout_{0};
  std::chrono::steady_clock::time_point deadline_;  // of the Invoke running
  std::atomic<bool> cancel_requested_{false};

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
