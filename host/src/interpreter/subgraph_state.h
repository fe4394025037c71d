// The interpreter's run state: what one interpreter owns per subgraph, per
// node and per tensor, beside the model's immutable Graph it points into.
// Internal to the interpreter; see docs/host-structure.md.
//
// Thread-safety: as the Interpreter (one thread at a time).
#ifndef KILN_HOST_INTERPRETER_SUBGRAPH_STATE_H_
#define KILN_HOST_INTERPRETER_SUBGRAPH_STATE_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "interpreter/plan_cache.h"
#include "kiln/kiln_capabilities.h"
#include "kiln/kiln_plugin.h"
#include "plugin/plugin_loader.h"
#include "runtime/buffer_handles.h"
#include "runtime/graph.h"

namespace kiln {

// One created delegate (name, plugin, interface, instance and whether it
// serves buffer handles in DelegateRef). Destroyed after every partition
// state it made and every buffer handle bound to it was released.
struct DelegateInstance : DelegateRef {
  int32_t min_partition_size = 1;
  bool warned = false;  // the one fallback warning was printed
  // The plugin's kiln.delegate_decline_reasons/1 capability, if offered.
  const KilnDelegateDeclineReasonsExtension* decline_reasons = nullptr;
  // Reasons collected right after each partition call: [subgraph][node].
  std::vector<std::map<int32_t, std::string>> declined;
};

// Run state of one tensor; its handle is the TensorState.
struct TensorRecord : TensorState {
  // Shape known only at invoke: an output a kernel left unresized at
  // AllocateTensors, or any output of a node with a dynamic input.
  bool dynamic = false;
  // Holds a prepare-time value (prepare_values.cc): its writer was evaluated
  // at AllocateTensors from constants and input shapes, the value lives in
  // `owned` (kOwned) until the next AllocateTensors, and nothing writes the
  // tensor at invoke.
  bool prepared_value = false;
};

// Run state of one node: a node of the model, or a partition node a
// delegate made. Its handle is the NodeRef; records never move.
struct NodeRecord : NodeRef {
  const NodeDesc& node() const { return *desc; }

  bool host_intrinsic = false;  // run by the interpreter (intrinsic_ops.cc)
  // The kernel resolved for a model node (null for host-intrinsic and
  // partition nodes), its plugin (a partition node's: the delegate's) and
  // the node state from KilnKernel.init.
  const KilnKernel* kernel = nullptr;
  const LoadedPlugin* plugin = nullptr;
  void* kernel_state = nullptr;
  bool initialized = false;  // KilnKernel.init succeeded; free at the end
  // This node is partition node `partition` of SubgraphState::partitions.
  int32_t partition = -1;
  // A model node a partition took over: that partition's index.
  int32_t delegated_to = -1;
  bool deferred = false;  // prepared again at invoke (see interpreter.h)
  // Evaluated at AllocateTensors (prepare_values.cc): its outputs are
  // prepare-time values and the node does not run at invoke.
  bool evaluated_at_prepare = false;
  // Evaluated once at creation (constant_folding.cc): its outputs are
  // constants and the node is not in the execution plan.
  bool folded = false;
  // The kernel lets the host keep one node state per input signature
  // (KILN_KERNEL_FLAG_STATE_PER_SHAPE_SIGNATURE, honoured from extension API
  // 1.2): on a plan-cache hit it is not prepared again.
  bool state_per_signature = false;
  // Id of the cached plan that owns kernel_state (PreparedPlan::id; the
  // plan frees it); 0: the node owns it.
  uint64_t state_plan = 0;

  bool is_partition() const { return partition >= 0; }
};

// One partition a delegate took over.
struct PartitionRecord {
  NodeDesc node;  // the partition node: KILN_OP_DELEGATE, delegated_nodes
  DelegateInstance* delegate = nullptr;
  void* state = nullptr;     // from partition_init
  bool initialized = false;  // partition_init succeeded
  bool fell_back = false;    // runs the original nodes on kernels
  std::string fallback_reason;
  // As NodeRecord's, for KILN_DELEGATE_FLAG_STATE_PER_SHAPE_SIGNATURE.
  bool state_per_signature = false;
  uint64_t state_plan = 0;
};

// Run state of one subgraph. The GraphView plugins see through
// KilnOpaqueContext: the model's tensors with this state, the model's nodes
// then the partition nodes, and the execution plan after delegation.
class SubgraphState final : public GraphView {
 public:
  // State for subgraph `index` of a model (`graph` must outlive it): every
  // tensor as loaded (declared shape; constants borrowed from the model),
  // one record per node, the model's execution plan.
  SubgraphState(int32_t index, const Graph& graph);
  SubgraphState(const SubgraphState&) = delete;
  SubgraphState& operator=(const SubgraphState&) = delete;
  ~SubgraphState() = default;

  int32_t index() const { return index_; }
  const Graph& model() const { return model_; }
  int32_t num_model_nodes() const {
    return static_cast<int32_t>(model_.nodes.size());
  }

  TensorRecord& tensor(int32_t i) { return tensors_[static_cast<size_t>(i)]; }
  const TensorRecord& tensor(int32_t i) const {
    return tensors_[static_cast<size_t>(i)];
  }
  std::vector<TensorRecord>& tensors() { return tensors_; }
  const std::vector<TensorRecord>& tensors() const { return tensors_; }
  NodeRecord& node(int32_t i) { return nodes_[static_cast<size_t>(i)]; }
  const NodeRecord& node(int32_t i) const {
    return nodes_[static_cast<size_t>(i)];
  }
  std::deque<NodeRecord>& nodes() { return nodes_; }
  const std::deque<NodeRecord>& nodes() const { return nodes_; }
  PartitionRecord& partition(int32_t p) {
    return partitions_[static_cast<size_t>(p)];
  }
  const std::deque<PartitionRecord>& partitions() const { return partitions_; }
  std::deque<PartitionRecord>& partitions() { return partitions_; }
  // The partition that runs node record `n` (which must be a partition).
  PartitionRecord& partition_of(const NodeRecord& n) {
    return partition(n.partition);
  }

  // Adds a partition node for `desc` (desc.index is set here), run by
  // `delegate`; marks the nodes it took over. Returns its node index.
  int32_t AddPartition(NodeDesc desc, DelegateInstance* delegate);

  std::vector<int32_t> execution_plan;

  // Allocation state.
  bool allocated = false;
  bool running = false;
  std::vector<uint8_t> arena_storage;
  size_t arena_bytes = 0;
  // Prepared plans of this subgraph by input signature.
  PlanCache plan_cache;
  // Values of the outputs of folded nodes (constant_folding.cc); the
  // tensors point into them. Never moved: a deque of buffers.
  std::deque<std::vector<uint8_t>> folded_constants;

  // GraphView.
  int32_t NumTensors() const override {
    return static_cast<int32_t>(tensors_.size());
  }
  TensorState& TensorAt(int32_t i) override { return tensor(i); }
  int32_t NumNodes() const override {
    return static_cast<int32_t>(nodes_.size());
  }
  NodeRef& NodeAt(int32_t i) override { return node(i); }
  const NodeDesc& NodeDescAt(int32_t i) const override {
    return node(i).node();
  }
  const std::vector<int32_t>& Plan() const override { return execution_plan; }
  const std::vector<int32_t>& Inputs() const override { return model_.inputs; }
  uint64_t MaxTensorBytes() const override { return max_tensor_bytes; }

  // The interpreter's max_arena_bytes (0: no limit).
  uint64_t max_tensor_bytes = 0;

 private:
  int32_t index_;
  const Graph& model_;
  std::vector<TensorRecord> tensors_;  // one per model tensor; never resized
  std::deque<NodeRecord> nodes_;       // model nodes, then partition nodes
  std::deque<PartitionRecord> partitions_;
};

}  // namespace kiln

#endif  // KILN_HOST_INTERPRETER_SUBGRAPH_STATE_H_
