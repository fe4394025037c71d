// Host-side graph objects behind the extension API's opaque handles.
// Internal to libkiln: plugins see these only as KilnOpaque* handles through
// the table built in host_api.cc.
#ifndef KILN_HOST_RUNTIME_GRAPH_H_
#define KILN_HOST_RUNTIME_GRAPH_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kiln/kiln_extension.h"

namespace kiln {

class LoadedPlugin;

// Where a tensor's bytes live.
enum class TensorStorage {
  kNone,      // not allocated yet
  kConstant,  // model weights, read-only, borrowed from the model mapping
  kArena,     // planned activation memory, owned by the subgraph arena
  kOwned,     // heap memory owned by the tensor (dynamic / variable / string)
};

struct Quantization {
  std::vector<float> scales;       // empty: not quantized
  std::vector<int64_t> zero_points;
  int32_t quantized_dimension = 0;
  bool quantized() const { return !scales.empty(); }
};

struct Tensor {
  std::string name;
  KilnTensorType type = KILN_TYPE_FLOAT32;
  bool has_rank = true;            // false: rank unknown until resized
  std::vector<int32_t> shape;
  std::vector<int32_t> shape_signature;  // -1 marks a dynamic dim
  Quantization quantization;
  bool is_variable = false;

  TensorStorage storage = TensorStorage::kNone;
  void* data = nullptr;            // valid per `storage`
  size_t bytes = 0;                // bytes at `data`
  std::vector<uint8_t> owned;      // backing store for kOwned

  bool is_constant() const { return storage == TensorStorage::kConstant; }
  int64_t NumElements() const;
  // Bytes needed for `shape` and `type`; 0 for strings (variable length).
  size_t RequiredBytes() const;
  // Gives the tensor heap storage of exactly `n` bytes (zeroed).
  void AllocateOwned(size_t n);
};

// Size of one element of `type`, 0 for types without a fixed size.
size_t ElementSize(KilnTensorType type);

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
inline constexpr uint32_t kHostOptionCondSubgraph = kHostOptionBase + 1;  // WHILE
inline constexpr uint32_t kHostOptionBodySubgraph = kHostOptionBase + 2;  // WHILE
inline constexpr uint32_t kHostOptionThenSubgraph = kHostOptionBase + 3;  // IF
inline constexpr uint32_t kHostOptionElseSubgraph = kHostOptionBase + 4;  // IF
inline constexpr uint32_t kHostOptionInitSubgraph = kHostOptionBase + 5;  // CALL_ONCE
inline constexpr uint32_t kHostOptionDecompositionSubgraph =
    kHostOptionBase + 6;                                        // STABLEHLO_COMPOSITE
inline constexpr uint32_t kHostOptionContainer = kHostOptionBase + 7;    // VAR_HANDLE (string)
inline constexpr uint32_t kHostOptionSharedName = kHostOptionBase + 8;   // VAR_HANDLE (string)
inline constexpr uint32_t kHostOptionCompositeName = kHostOptionBase + 9;  // STABLEHLO_COMPOSITE (string)
inline constexpr uint32_t kHostOptionCompositeVersion = kHostOptionBase + 10;

struct Node {
  int32_t index = -1;
  int32_t builtin_code = 0;
  std::string custom_name;  // set only for KILN_OP_CUSTOM
  int32_t version = 1;
  std::vector<int32_t> inputs;   // tensor indices, -1 = omitted
  std::vector<int32_t> outputs;
  std::vector<std::pair<uint32_t, OptionValue>> options;  // few; linear scan
  const uint8_t* custom_options = nullptr;
  uint64_t custom_options_size = 0;
  // Partition nodes made by a delegate: the node indices they replaced.
  std::vector<int32_t> delegated_nodes;

  // Resolution (set by the interpreter).
  const KilnKernel* kernel = nullptr;
  const LoadedPlugin* plugin = nullptr;
  void* state = nullptr;  // from KilnKernel.init
  bool initialized = false;

  const OptionValue* FindOption(uint32_t key) const;
  void SetOption(uint32_t key, OptionValue value);
  void SetInt(uint32_t key, int64_t v);
  void SetFloat(uint32_t key, float v);
  void SetIntArray(uint32_t key, std::vector<int32_t> v);
  void SetString(uint32_t key, std::string v);
  // "CUSTOM 'Sinh'" or "CONV_2D".
  std::string OpName() const;
};

// The tensors and nodes of one subgraph plus the execution plan.
struct Graph {
  std::string name;
  std::vector<Tensor> tensors;
  std::vector<Node> nodes;
  std::vector<int32_t> execution_plan;  // node indices in order
  std::vector<int32_t> inputs;
  std::vector<int32_t> outputs;
};

// Error collected from a plugin callback through report_error.
struct CallError {
  KilnStatus code = KILN_STATUS_OK;
  std::string message;
};

// What KilnOpaqueContext points to: the graph being worked on plus the
// per-callback error sink. Lives on the host's stack for one callback.
struct CallContext {
  Graph* graph = nullptr;
  const Node* node = nullptr;         // node being called, if any
  const LoadedPlugin* plugin = nullptr;
  CallError error;
  // Set only during KilnDelegateInterface.partition.
  std::vector<int32_t>* claimed_nodes = nullptr;
  // Resizes are allowed only on outputs during prepare.
  bool allow_resize = false;
};

inline KilnOpaqueContext* ToOpaque(CallContext* c) {
  return reinterpret_cast<KilnOpaqueContext*>(c);
}
inline CallContext* FromOpaque(KilnOpaqueContext* c) {
  return reinterpret_cast<CallContext*>(c);
}
inline KilnOpaqueNode* ToOpaque(Node* n) {
  return reinterpret_cast<KilnOpaqueNode*>(n);
}
inline const Node* FromOpaque(const KilnOpaqueNode* n) {
  return reinterpret_cast<const Node*>(n);
}
inline KilnOpaqueTensor* ToOpaque(Tensor* t) {
  return reinterpret_cast<KilnOpaqueTensor*>(t);
}
inline Tensor* FromOpaque(const KilnOpaqueTensor* t) {
  return reinterpret_cast<Tensor*>(const_cast<KilnOpaqueTensor*>(t));
}

// Human-readable names for messages.
const char* TypeName(KilnTensorType type);
const char* BuiltinOpName(int32_t builtin_code);  // "UNKNOWN" if unknown

}  // namespace kiln

#endif  // KILN_HOST_RUNTIME_GRAPH_H_
