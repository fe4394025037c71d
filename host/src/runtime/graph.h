// Host-side graph objects behind the extension API's opaque handles.
// Internal to libkiln: plugins see these only as KilnOpaque* handles through
// the table built in host_api.cc. docs/host-structure.md shows how they fit.
//
// Two kinds of fact, kept apart:
//   - Descriptions (TensorDesc, NodeDesc): what a model says about a tensor
//     or a node. A loaded Model owns them; they never change while it runs.
//   - Run state (TensorState): a tensor's current shape and where its bytes
//     are. Each interpreter owns its own.
// The handles point at run-state records that point at their description:
//   KilnOpaqueTensor -> TensorState (-> TensorDesc)
//   KilnOpaqueNode   -> NodeRef     (-> NodeDesc)
// so that every interpreter of a model has handles of its own while the
// descriptions stay shared.
//
// Tensor, Node and Graph are self-describing: a Tensor is a description plus
// one state of it (a Node is a description plus a handle to itself). A Model
// holds its subgraphs as Graphs, the state being the tensors as loaded
// (declared shapes; constants pointing into the model bytes); tests and
// SingleNodeRunner build standalone Graphs and run plugins on them directly.
#ifndef KILN_HOST_RUNTIME_GRAPH_H_
#define KILN_HOST_RUNTIME_GRAPH_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kiln/kiln_extension.h"

namespace kiln {

class LoadedPlugin;
class GraphView;
class Profiler;
class ThreadPool;
struct DelegateRef;

// Where a tensor's bytes live.
enum class TensorStorage {
  kNone,      // not allocated yet
  kConstant,  // model weights, read-only, borrowed from the model mapping
  kArena,     // planned activation memory, owned by the subgraph arena
  kOwned,     // heap memory owned by the state (dynamic / variable / string)
};

struct Quantization {
  // Per-tensor or per-channel; empty: not quantized that way.
  std::vector<float> scales;
  std::vector<int64_t> zero_points;
  int32_t quantized_dimension = 0;
  // Blockwise (a model's BlockwiseQuantization details, checked by
  // model_checks.cc): block_size > 0 on a rank-2 tensor [rows, cols], one
  // scale (converted to float32 at load) and zero point (0 when the model
  // gives none) per block, row-major over [rows, cols / block_size], as
  // KilnQuantizationParams describes. `scales` above is then empty.
  int32_t block_size = 0;
  std::vector<float> block_scales;
  std::vector<int64_t> block_zero_points;
  bool quantized() const { return !scales.empty(); }
  bool blockwise() const { return block_size > 0; }
};

// What a model says about a tensor besides its shape and bytes.
struct TensorDesc {
  std::string name;
  KilnTensorType type = KILN_TYPE_FLOAT32;
  std::vector<int32_t> shape_signature;  // -1 marks a dynamic dim
  Quantization quantization;
  bool is_variable = false;
};

// A delegate buffer handle bound to a tensor (extension API 1.2): set and
// kept by runtime/buffer_handles.h only. Interpreter tensors only.
struct BufferBinding {
  KilnBufferHandle handle = KILN_INVALID_BUFFER_HANDLE;
  const DelegateRef* owner = nullptr;  // null: no handle bound
  GraphView* graph = nullptr;          // the tensor's graph, for copy calls
  bool host_stale = false;      // the handle holds a newer value than `data`
  bool device_stale = false;    // `data` holds a newer value than the handle
  bool by_application = false;  // bound through the application API
  size_t bytes = 0;             // the tensor's bytes when it was bound

  bool bound() const { return owner != nullptr; }
};

// One tensor as it is now: what a KilnOpaqueTensor points to.
struct TensorState {
  const TensorDesc* desc = nullptr;  // never null once in a graph
  bool has_rank = true;              // false: rank unknown until resized
  std::vector<int32_t> shape;
  TensorStorage storage = TensorStorage::kNone;
  void* data = nullptr;        // valid per `storage`
  size_t bytes = 0;            // bytes at `data`
  std::vector<uint8_t> owned;  // backing store for kOwned
  // The element type a kernel's prepare set (KilnHostApi.tensor_set_type);
  // unset: the description's. Cleared with the shape whenever the tensor's
  // writer is prepared again.
  std::optional<KilnTensorType> type_override;
  BufferBinding buffer;

  bool is_constant() const { return storage == TensorStorage::kConstant; }
  // The element type now: type_override, else desc->type.
  KilnTensorType ElementType() const {
    return type_override.has_value() ? *type_override : desc->type;
  }
  // The number of elements of `shape`; INT64_MAX when it overflows (the
  // host refuses such shapes: model checks, ResizeInput, tensor_resize).
  int64_t NumElements() const;
  // Bytes needed for `shape` and ElementType(); 0 for strings (variable
  // length); SIZE_MAX when the size overflows, so that no allocation of a
  // wrapped-around size can happen.
  size_t RequiredBytes() const;
  // Gives the tensor heap storage of exactly `n` bytes (zeroed).
  void AllocateOwned(size_t n);
};

// A self-describing tensor: its description and one state, desc == this.
// Copies describe themselves (desc points at the copy); a copied kOwned
// state's data still points at the original's bytes.
struct Tensor : TensorState, TensorDesc {
  Tensor() { desc = this; }
  Tensor(const Tensor& other) : TensorState(other), TensorDesc(other) {
    desc = this;
  }
  Tensor(Tensor&& other) noexcept
      : TensorState(std::move(other)), TensorDesc(std::move(other)) {
    desc = this;
  }
  Tensor& operator=(const Tensor& other) {
    TensorState::operator=(other);
    TensorDesc::operator=(other);
    desc = this;
    return *this;
  }
  Tensor& operator=(Tensor&& other) noexcept {
    TensorState::operator=(std::move(other));
    TensorDesc::operator=(std::move(other));
    desc = this;
    return *this;
  }
};

// Size of one element of `type`, 0 for types without a fixed size.
size_t ElementSize(KilnTensorType type);

// Overflow-checked sizes of a shape (dims must be >= 0): the element count,
// and the bytes of that many elements of `type` (INT4 packed two per byte;
// strings and types without a fixed size: 0 bytes). nullopt when a dim is
// negative or the count or byte size does not fit in int64_t.
std::optional<uint64_t> CheckedElementCount(const int32_t* dims, size_t rank);
std::optional<uint64_t> CheckedElementCount(const std::vector<int32_t>& shape);
std::optional<uint64_t> CheckedByteSize(KilnTensorType type,
                                        const std::vector<int32_t>& shape);

// One option value read by KilnHostApi.node_option_*.
struct OptionValue {
  // kString is host-private (keys >= kHostOptionBase); plugins cannot read it.
  enum class Kind { kInt, kFloat, kIntArray, kString } kind = Kind::kInt;
  int64_t i = 0;
  float f = 0.f;
  std::vector<int32_t> array;
  std::string s;
};

// Option keys the host uses for itself (control flow, resources). Never part
// of the extension API; plugins asking for them get what they get.
inline constexpr uint32_t kHostOptionBase = 0x10000;
inline constexpr uint32_t kHostOptionCondSubgraph =
    kHostOptionBase + 1;  // WHILE
inline constexpr uint32_t kHostOptionBodySubgraph =
    kHostOptionBase + 2;  // WHILE
inline constexpr uint32_t kHostOptionThenSubgraph = kHostOptionBase + 3;  // IF
inline constexpr uint32_t kHostOptionElseSubgraph = kHostOptionBase + 4;  // IF
inline constexpr uint32_t kHostOptionInitSubgraph =
    kHostOptionBase + 5;  // CALL_ONCE
inline constexpr uint32_t kHostOptionDecompositionSubgraph =
    kHostOptionBase + 6;  // STABLEHLO_COMPOSITE
inline constexpr uint32_t kHostOptionContainer =
    kHostOptionBase + 7;  // VAR_HANDLE (string)
inline constexpr uint32_t kHostOptionSharedName =
    kHostOptionBase + 8;  // VAR_HANDLE (string)
inline constexpr uint32_t kHostOptionCompositeName =
    kHostOptionBase + 9;  // STABLEHLO_COMPOSITE (string)
inline constexpr uint32_t kHostOptionCompositeVersion = kHostOptionBase + 10;

// What a model says about a node, or, for a partition node, what a delegate
// took over.
struct NodeDesc {
  int32_t index = -1;
  int32_t builtin_code = 0;
  std::string custom_name;  // set only for KILN_OP_CUSTOM
  int32_t version = 1;
  std::vector<int32_t> inputs;  // tensor indices, -1 = omitted
  std::vector<int32_t> outputs;
  // The operator's intermediate tensors (KilnHostApi.node_intermediate),
  // -1 = omitted; the host neither plans nor fills them.
  std::vector<int32_t> intermediates;
  std::vector<std::pair<uint32_t, OptionValue>> options;  // few; linear scan
  const uint8_t* custom_options = nullptr;
  uint64_t custom_options_size = 0;
  // Partition nodes made by a delegate: the node indices they replaced.
  std::vector<int32_t> delegated_nodes;

  const OptionValue* FindOption(uint32_t key) const;
  void SetOption(uint32_t key, OptionValue value);
  void SetInt(uint32_t key, int64_t v);
  void SetFloat(uint32_t key, float v);
  void SetIntArray(uint32_t key, std::vector<int32_t> v);
  void SetString(uint32_t key, std::string v);
  // "CUSTOM 'Sinh'" or "CONV_2D".
  std::string OpName() const;
};

// What a KilnOpaqueNode points to. A plugin may keep the handle from init to
// free, so a NodeRef never moves while the node's kernel or partition lives.
struct NodeRef {
  const NodeDesc* desc = nullptr;  // never null once in a graph
};

// A self-describing node: its description and a handle to it, desc == this.
struct Node : NodeRef, NodeDesc {
  Node() { desc = this; }
  Node(const Node& other) : NodeRef(), NodeDesc(other) { desc = this; }
  Node(Node&& other) noexcept : NodeRef(), NodeDesc(std::move(other)) {
    desc = this;
  }
  Node& operator=(const Node& other) {
    NodeDesc::operator=(other);
    return *this;
  }
  Node& operator=(Node&& other) noexcept {
    NodeDesc::operator=(std::move(other));
    return *this;
  }
};

// The graph a KilnOpaqueContext shows a plugin: tensors and nodes by index
// and the execution plan. Indices passed in are in range (callers check).
class GraphView {
 public:
  virtual int32_t NumTensors() const = 0;
  virtual TensorState& TensorAt(int32_t index) = 0;
  virtual int32_t NumNodes() const = 0;
  virtual NodeRef& NodeAt(int32_t index) = 0;
  virtual const NodeDesc& NodeDescAt(int32_t index) const = 0;
  virtual const std::vector<int32_t>& Plan() const = 0;
  // Tensor indices of the subgraph's inputs.
  virtual const std::vector<int32_t>& Inputs() const = 0;
  // Most bytes one tensor may take (an interpreter's max_arena_bytes); 0:
  // no limit. KilnHostApi.tensor_resize refuses larger shapes, so a kernel
  // learns at once that the output it sizes from model data cannot exist.
  virtual uint64_t MaxTensorBytes() const { return 0; }

 protected:
  GraphView() = default;
  GraphView(const GraphView&) = default;
  GraphView& operator=(const GraphView&) = default;
  ~GraphView() = default;
};

// A self-contained graph: the tensors and nodes of one subgraph plus the
// execution plan. A Model's subgraphs (as loaded), and standalone graphs.
struct Graph : GraphView {
  std::string name;
  std::vector<Tensor> tensors;
  std::vector<Node> nodes;
  std::vector<int32_t> execution_plan;  // node indices in order
  std::vector<int32_t> inputs;
  std::vector<int32_t> outputs;

  int32_t NumTensors() const override {
    return static_cast<int32_t>(tensors.size());
  }
  TensorState& TensorAt(int32_t index) override {
    return tensors[static_cast<size_t>(index)];
  }
  int32_t NumNodes() const override {
    return static_cast<int32_t>(nodes.size());
  }
  NodeRef& NodeAt(int32_t index) override {
    return nodes[static_cast<size_t>(index)];
  }
  const NodeDesc& NodeDescAt(int32_t index) const override {
    return nodes[static_cast<size_t>(index)];
  }
  const std::vector<int32_t>& Plan() const override { return execution_plan; }
  const std::vector<int32_t>& Inputs() const override { return inputs; }
};

// Error collected from a plugin callback through report_error.
struct CallError {
  KilnStatus code = KILN_STATUS_OK;
  std::string message;
};

// What KilnOpaqueContext points to: the graph being worked on plus the
// per-callback error sink. Lives on the host's stack for one callback; set
// up by CallPlugin (plugin_call.h).
struct CallContext {
  GraphView* graph = nullptr;
  const NodeDesc* node = nullptr;  // node being called, if any
  const LoadedPlugin* plugin = nullptr;
  CallError error;
  // Set only during KilnDelegateInterface.partition.
  std::vector<int32_t>* claimed_nodes = nullptr;
  // Resizes are allowed only on outputs during prepare.
  bool allow_resize = false;
  // KilnHostApi.tensor_set_type is allowed (KilnKernel.prepare only).
  bool allow_set_type = false;
  // Subgraph index of `graph` in an interpreter (-1 for standalone graphs),
  // for profile events.
  int32_t subgraph = -1;
  // Receives the host's and the plugin's events (kiln.profiler/1); null
  // when profiling is off.
  Profiler* profiler = nullptr;
  // The delegate instance being called (delegate callbacks only): who owns
  // the buffer handles tensor_buffer_handle returns.
  const DelegateRef* delegate = nullptr;
  // tensor_set_buffer_handle is allowed (partition_prepare and
  // partition_invoke).
  bool allow_bind_buffer = false;
  // The interpreter's pool behind kiln.parallel_for/1; null: tasks run on
  // the calling thread.
  ThreadPool* thread_pool = nullptr;
};

inline KilnOpaqueContext* ToOpaque(CallContext* c) {
  return reinterpret_cast<KilnOpaqueContext*>(c);
}
inline CallContext* FromOpaque(KilnOpaqueContext* c) {
  return reinterpret_cast<CallContext*>(c);
}
inline KilnOpaqueNode* ToOpaque(NodeRef* n) {
  return reinterpret_cast<KilnOpaqueNode*>(n);
}
inline const NodeDesc* FromOpaque(const KilnOpaqueNode* n) {
  return reinterpret_cast<const NodeRef*>(n)->desc;
}
inline KilnOpaqueTensor* ToOpaque(TensorState* t) {
  return reinterpret_cast<KilnOpaqueTensor*>(t);
}
inline TensorState* FromOpaque(const KilnOpaqueTensor* t) {
  return reinterpret_cast<TensorState*>(const_cast<KilnOpaqueTensor*>(t));
}

// Human-readable names for messages.
const char* TypeName(KilnTensorType type);
const char* BuiltinOpName(int32_t builtin_code);  // "UNKNOWN" if unknown

}  // namespace kiln

#endif  // KILN_HOST_RUNTIME_GRAPH_H_
