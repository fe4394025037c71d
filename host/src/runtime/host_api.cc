#include "runtime/host_api.h"

#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "runtime/buffer_handles.h"
#include "runtime/graph.h"
#include "runtime/host_extensions.h"
#include "runtime/host_log.h"

namespace kiln {
namespace {

void ReportError(KilnOpaqueContext* context, KilnStatus code,
                 const char* message) {
  if (context == nullptr) return;
  CallError& e = FromOpaque(context)->error;
  const std::string text = message != nullptr ? message : "(no message)";
  if (e.code == KILN_STATUS_OK) {
    e.code = code == KILN_STATUS_OK ? KILN_STATUS_UNKNOWN : code;
    e.message = text;
  } else {
    e.message += "; " + text;
  }
}

void Log(KilnOpaqueContext*, int32_t severity, const char* message) {
  LogPluginMessage(severity, message);
}

KilnTensorType TensorType(const KilnOpaqueTensor* t) {
  return FromOpaque(t)->ElementType();
}
int32_t TensorRank(const KilnOpaqueTensor* t) {
  const TensorState* x = FromOpaque(t);
  return x->has_rank ? static_cast<int32_t>(x->shape.size()) : -1;
}
int32_t TensorDim(const KilnOpaqueTensor* t, int32_t axis) {
  const TensorState* x = FromOpaque(t);
  if (axis < 0 || static_cast<size_t>(axis) >= x->shape.size()) return -1;
  return x->shape[static_cast<size_t>(axis)];
}
uint64_t TensorByteSize(const KilnOpaqueTensor* t) {
  const TensorState* x = FromOpaque(t);
  return x->data != nullptr ? x->bytes : x->RequiredBytes();
}
void* TensorData(const KilnOpaqueTensor* t) { return FromOpaque(t)->data; }
const char* TensorName(const KilnOpaqueTensor* t) {
  return FromOpaque(t)->desc->name.c_str();
}
int32_t TensorIsConstant(const KilnOpaqueTensor* t) {
  return FromOpaque(t)->is_constant() ? 1 : 0;
}
KilnStatus TensorResize(KilnOpaqueContext* context, KilnOpaqueTensor* t,
                        int32_t rank, const int32_t* dims) {
  CallContext* c = FromOpaque(context);
  TensorState* x = FromOpaque(t);
  if (x == nullptr || rank < 0 || (rank > 0 && dims == nullptr)) {
    ReportError(context, KILN_STATUS_INVALID_ARGUMENT,
                "tensor_resize: null tensor or dims, or negative rank");
    return KILN_STATUS_INVALID_ARGUMENT;
  }
  if (x->is_constant()) {
    ReportError(
        context, KILN_STATUS_FAILED_PRECONDITION,
        ("tensor_resize: tensor '" + x->desc->name + "' is constant").c_str());
    return KILN_STATUS_FAILED_PRECONDITION;
  }
  if (c != nullptr && !c->allow_resize) {
    ReportError(context, KILN_STATUS_FAILED_PRECONDITION,
                "tensor_resize is allowed only during prepare");
    return KILN_STATUS_FAILED_PRECONDITION;
  }
  for (int32_t i = 0; i < rank; ++i) {
    if (dims[i] < 0) {
      ReportError(
          context, KILN_STATUS_INVALID_ARGUMENT,
          ("tensor_resize: negative dimension " + std::to_string(dims[i]) +
           " for tensor '" + x->desc->name + "'")
              .c_str());
      return KILN_STATUS_INVALID_ARGUMENT;
    }
  }
  // Shapes come from model data: one whose size wraps around would make
  // every later size computation (the kernel's too) lie.
  const auto bytes = CheckedByteSize(x->ElementType(),
                                     std::vector<int32_t>(dims, dims + rank));
  const uint64_t limit =
      c != nullptr && c->graph != nullptr ? c->graph->MaxTensorBytes() : 0;
  if (!bytes || (limit != 0 && *bytes > limit)) {
    std::string shape;
    for (int32_t i = 0; i < rank; ++i) {
      shape += (i > 0 ? "," : "") + std::to_string(dims[i]);
    }
    const std::string why =
        !bytes ? "has more bytes than fit in 64 bits"
               : "needs " + std::to_string(*bytes) +
                     " bytes, more than the limit of " + std::to_string(limit) +
                     " bytes of tensor memory (max_arena_bytes; raise it "
                     "with --max-arena-bytes or "
                     "KilnInterpreterOptionsSetMaxArenaBytes if the model is "
                     "trusted)";
    ReportError(context, KILN_STATUS_RESOURCE_EXHAUSTED,
                ("tensor_resize: shape [" + shape + "] for tensor '" +
                 x->desc->name + "' " + why)
                    .c_str());
    return KILN_STATUS_RESOURCE_EXHAUSTED;
  }
  x->shape.assign(dims, dims + rank);
  x->has_rank = true;
  return KILN_STATUS_OK;
}

int32_t NodeBuiltinCode(const KilnOpaqueNode* n) {
  return FromOpaque(n)->builtin_code;
}
const char* NodeCustomName(const KilnOpaqueNode* n) {
  const NodeDesc* x = FromOpaque(n);
  return x->builtin_code == KILN_OP_CUSTOM ? x->custom_name.c_str() : nullptr;
}
int32_t NodeOpVersion(const KilnOpaqueNode* n) {
  return FromOpaque(n)->version;
}
int32_t NodeNumInputs(const KilnOpaqueNode* n) {
  return static_cast<int32_t>(FromOpaque(n)->inputs.size());
}
int32_t NodeNumOutputs(const KilnOpaqueNode* n) {
  return static_cast<int32_t>(FromOpaque(n)->outputs.size());
}
// The graph of a callback's context; null without one.
GraphView* GraphOf(KilnOpaqueContext* context) {
  CallContext* c = FromOpaque(context);
  return c != nullptr ? c->graph : nullptr;
}
KilnOpaqueTensor* ContextTensor(KilnOpaqueContext* context, int32_t index) {
  GraphView* g = GraphOf(context);
  if (g == nullptr || index < 0 || index >= g->NumTensors()) return nullptr;
  return ToOpaque(&g->TensorAt(index));
}
KilnOpaqueTensor* TensorAt(KilnOpaqueContext* context,
                           const std::vector<int32_t>& list, int32_t index) {
  if (index < 0 || static_cast<size_t>(index) >= list.size()) return nullptr;
  return ContextTensor(context, list[static_cast<size_t>(index)]);
}
KilnOpaqueTensor* NodeInput(KilnOpaqueContext* context, const KilnOpaqueNode* n,
                            int32_t index) {
  return TensorAt(context, FromOpaque(n)->inputs, index);
}
KilnOpaqueTensor* NodeOutput(KilnOpaqueContext* context,
                             const KilnOpaqueNode* n, int32_t index) {
  return TensorAt(context, FromOpaque(n)->outputs, index);
}
int32_t NodeNumIntermediates(const KilnOpaqueNode* n) {
  if (n == nullptr) return -1;
  return static_cast<int32_t>(FromOpaque(n)->intermediates.size());
}
KilnOpaqueTensor* NodeIntermediate(KilnOpaqueContext* context,
                                   const KilnOpaqueNode* n, int32_t index) {
  if (n == nullptr) return nullptr;
  return TensorAt(context, FromOpaque(n)->intermediates, index);
}
KilnStatus NodeOptionInt(const KilnOpaqueNode* n, uint32_t key,
                         int64_t* value) {
  const OptionValue* o = FromOpaque(n)->FindOption(key);
  if (o == nullptr || value == nullptr) return KILN_STATUS_NOT_FOUND;
  if (o->kind != OptionValue::Kind::kInt) return KILN_STATUS_INVALID_ARGUMENT;
  *value = o->i;
  return KILN_STATUS_OK;
}
KilnStatus NodeOptionFloat(const KilnOpaqueNode* n, uint32_t key,
                           float* value) {
  const OptionValue* o = FromOpaque(n)->FindOption(key);
  if (o == nullptr || value == nullptr) return KILN_STATUS_NOT_FOUND;
  if (o->kind != OptionValue::Kind::kFloat) {
    return KILN_STATUS_INVALID_ARGUMENT;
  }
  *value = o->f;
  return KILN_STATUS_OK;
}
KilnStatus NodeOptionIntArray(const KilnOpaqueNode* n, uint32_t key,
                              const int32_t** values, int32_t* count) {
  const OptionValue* o = FromOpaque(n)->FindOption(key);
  if (o == nullptr || values == nullptr || count == nullptr) {
    return KILN_STATUS_NOT_FOUND;
  }
  if (o->kind != OptionValue::Kind::kIntArray) {
    return KILN_STATUS_INVALID_ARGUMENT;
  }
  *values = o->array.data();
  *count = static_cast<int32_t>(o->array.size());
  return KILN_STATUS_OK;
}
KilnStatus NodeCustomOptions(const KilnOpaqueNode* n, const uint8_t** data,
                             uint64_t* size) {
  if (data == nullptr || size == nullptr) return KILN_STATUS_INVALID_ARGUMENT;
  const NodeDesc* x = FromOpaque(n);
  *data = x->custom_options;
  *size = x->custom_options != nullptr ? x->custom_options_size : 0;
  return KILN_STATUS_OK;
}

KilnStatus ContextExecutionPlan(KilnOpaqueContext* context,
                                const int32_t** nodes, int32_t* count) {
  CallContext* c = FromOpaque(context);
  if (c == nullptr || c->graph == nullptr || nodes == nullptr ||
      count == nullptr) {
    return KILN_STATUS_INVALID_ARGUMENT;
  }
  const std::vector<int32_t>& plan = c->graph->Plan();
  *nodes = plan.data();
  *count = static_cast<int32_t>(plan.size());
  return KILN_STATUS_OK;
}
KilnOpaqueNode* ContextNode(KilnOpaqueContext* context, int32_t index) {
  GraphView* g = GraphOf(context);
  if (g == nullptr || index < 0 || index >= g->NumNodes()) return nullptr;
  return ToOpaque(&g->NodeAt(index));
}
int32_t ContextNumTensors(KilnOpaqueContext* context) {
  GraphView* g = GraphOf(context);
  return g == nullptr ? 0 : g->NumTensors();
}
KilnStatus ContextDelegateNodes(KilnOpaqueContext* context,
                                const int32_t* nodes, int32_t count) {
  CallContext* c = FromOpaque(context);
  if (c == nullptr || c->claimed_nodes == nullptr) {
    ReportError(context, KILN_STATUS_FAILED_PRECONDITION,
                "context_delegate_nodes may be called only from "
                "KilnDelegateInterface.partition");
    return KILN_STATUS_FAILED_PRECONDITION;
  }
  if (count < 0 || (count > 0 && nodes == nullptr)) {
    ReportError(context, KILN_STATUS_INVALID_ARGUMENT,
                "context_delegate_nodes: null node list or negative count");
    return KILN_STATUS_INVALID_ARGUMENT;
  }
  for (int32_t i = 0; i < count; ++i) {
    if (nodes[i] < 0 || nodes[i] >= c->graph->NumNodes()) {
      ReportError(context, KILN_STATUS_OUT_OF_RANGE,
                  ("context_delegate_nodes: node index " +
                   std::to_string(nodes[i]) + " is out of range")
                      .c_str());
      return KILN_STATUS_OUT_OF_RANGE;
    }
    c->claimed_nodes->push_back(nodes[i]);
  }
  return KILN_STATUS_OK;
}
KilnStatus NodeDelegatedNodes(const KilnOpaqueNode* n, const int32_t** nodes,
                              int32_t* count) {
  const NodeDesc* x = FromOpaque(n);
  if (nodes == nullptr || count == nullptr) return KILN_STATUS_INVALID_ARGUMENT;
  if (x->delegated_nodes.empty()) return KILN_STATUS_NOT_FOUND;
  *nodes = x->delegated_nodes.data();
  *count = static_cast<int32_t>(x->delegated_nodes.size());
  return KILN_STATUS_OK;
}
int32_t IndexAt(const std::vector<int32_t>& list, int32_t index) {
  if (index < 0 || static_cast<size_t>(index) >= list.size()) return -1;
  return list[static_cast<size_t>(index)];
}
int32_t NodeInputIndex(const KilnOpaqueNode* n, int32_t index) {
  return IndexAt(FromOpaque(n)->inputs, index);
}
int32_t NodeOutputIndex(const KilnOpaqueNode* n, int32_t index) {
  return IndexAt(FromOpaque(n)->outputs, index);
}
// get_host_extension of the table for extension API 1.kMinor: only what a
// host of that version serves.
template <uint32_t kMinor>
const void* GetHostExtension(const char* id) {
  return FindHostExtension(HostExtensions(), id,
                           KILN_MAKE_VERSION(1, kMinor, 0));
}

// Extension API 1.1
KilnStatus TensorQuantization(const KilnOpaqueTensor* t,
                              KilnQuantizationParams* params) {
  if (t == nullptr || params == nullptr ||
      params->struct_size < KILN_QUANTIZATION_PARAMS_STRUCT_SIZE_1_1) {
    return KILN_STATUS_INVALID_ARGUMENT;
  }
  const Quantization& q = FromOpaque(t)->desc->quantization;
  const bool holds_blocks = KILN_STRUCT_HAS_FIELD(
      KilnQuantizationParams, params->struct_size, block_dimension);
  if (q.blockwise()) {
    // A 1.1/1.2 caller would read the block scales as channel scales.
    if (!holds_blocks) return KILN_STATUS_UNIMPLEMENTED;
    params->num_channels = static_cast<int32_t>(q.block_scales.size());
    params->quantized_dimension = 0;
    params->scales = q.block_scales.data();
    params->zero_points = q.block_zero_points.data();
    params->block_size = q.block_size;
    params->block_dimension = 1;
    return KILN_STATUS_OK;
  }
  params->num_channels = static_cast<int32_t>(q.scales.size());
  params->quantized_dimension = q.quantized_dimension;
  params->scales = q.scales.empty() ? nullptr : q.scales.data();
  params->zero_points = q.zero_points.empty() ? nullptr : q.zero_points.data();
  if (holds_blocks) {
    params->block_size = 0;
    params->block_dimension = 0;
  }
  return KILN_STATUS_OK;
}

// Extension API 1.2

// Element types a kernel may give an output: every fixed-size numeric type.
bool IsSettableType(KilnTensorType type) {
  return type >= KILN_TYPE_FLOAT32 && type <= KILN_TYPE_BFLOAT16 &&
         type != KILN_TYPE_STRING && type != KILN_TYPE_RESOURCE &&
         type != KILN_TYPE_VARIANT;
}

bool ListHasTensor(GraphView& g, const std::vector<int32_t>& indices,
                   const TensorState* tensor) {
  for (int32_t i : indices) {
    if (i >= 0 && i < g.NumTensors() && &g.TensorAt(i) == tensor) return true;
  }
  return false;
}

KilnStatus TensorSetBufferHandle(KilnOpaqueContext* context,
                                 KilnOpaqueTensor* tensor,
                                 KilnBufferHandle handle,
                                 int32_t host_data_stale) {
  CallContext* c = FromOpaque(context);
  if (c == nullptr || !c->allow_bind_buffer) {
    ReportError(context, KILN_STATUS_FAILED_PRECONDITION,
                "tensor_set_buffer_handle may be called only from "
                "partition_prepare or partition_invoke of a delegate that "
                "implements copy_from_buffer_handle, copy_to_buffer_handle "
                "and free_buffer_handle");
    return KILN_STATUS_FAILED_PRECONDITION;
  }
  TensorState* x = tensor != nullptr ? FromOpaque(tensor) : nullptr;
  if (x == nullptr || c->node == nullptr || c->graph == nullptr ||
      !(ListHasTensor(*c->graph, c->node->inputs, x) ||
        ListHasTensor(*c->graph, c->node->outputs, x)) ||
      x->is_constant()) {
    ReportError(context, KILN_STATUS_INVALID_ARGUMENT,
                ("tensor_set_buffer_handle: tensor '" +
                 (x != nullptr ? x->desc->name : std::string("(null)")) +
                 "' is not a non-constant input or output of the partition")
                    .c_str());
    return KILN_STATUS_INVALID_ARGUMENT;
  }
  BindBufferHandle(*x, c->delegate, c->graph, handle, host_data_stale != 0,
                   /*by_application=*/false);
  return KILN_STATUS_OK;
}

KilnBufferHandle TensorBufferHandle(KilnOpaqueContext* context,
                                    const KilnOpaqueTensor* tensor) {
  CallContext* c = FromOpaque(context);
  if (c == nullptr || c->delegate == nullptr || tensor == nullptr) {
    return KILN_INVALID_BUFFER_HANDLE;
  }
  const BufferBinding& b = FromOpaque(tensor)->buffer;
  return b.owner == c->delegate ? b.handle : KILN_INVALID_BUFFER_HANDLE;
}

// Why `x` may not get a new type in context `c`; "" when it may.
std::string SetTypeRefusal(CallContext& c, const TensorState& x) {
  if (!c.allow_set_type || c.node == nullptr || c.graph == nullptr) {
    return "allowed only during KilnKernel.prepare";
  }
  const std::string name = "tensor '" + x.desc->name + "'";
  if (!ListHasTensor(*c.graph, c.node->outputs, &x)) {
    return name + " is not an output of the node being prepared";
  }
  if (x.is_constant()) return name + " is constant";
  if (x.desc->is_variable) return name + " is a variable";
  if (ListHasTensor(*c.graph, c.graph->Inputs(), &x)) {
    return name + " is an input of the subgraph";
  }
  if (x.desc->type == KILN_TYPE_STRING) return name + " holds strings";
  return "";
}

KilnStatus TensorSetType(KilnOpaqueContext* context, KilnOpaqueTensor* t,
                         KilnTensorType type) {
  CallContext* c = FromOpaque(context);
  TensorState* x = FromOpaque(t);
  if (c == nullptr || x == nullptr) return KILN_STATUS_INVALID_ARGUMENT;
  if (!IsSettableType(type)) {
    ReportError(context, KILN_STATUS_INVALID_ARGUMENT,
                ("tensor_set_type: " + std::to_string(type) +
                 " is not a fixed-size KILN_TYPE_* value")
                    .c_str());
    return KILN_STATUS_INVALID_ARGUMENT;
  }
  const std::string refusal = SetTypeRefusal(*c, *x);
  if (!refusal.empty()) {
    ReportError(context, KILN_STATUS_FAILED_PRECONDITION,
                ("tensor_set_type: " + refusal).c_str());
    return KILN_STATUS_FAILED_PRECONDITION;
  }
  if (type == x->desc->type) {
    x->type_override.reset();
  } else {
    x->type_override = type;
  }
  return KILN_STATUS_OK;
}

KilnHostApi MakeFullTable() {
  KilnHostApi api;
  std::memset(&api, 0, sizeof(api));
  api.struct_size = KILN_HOST_API_STRUCT_SIZE;
  api.abi_version = KILN_EXT_API_VERSION;
  // Extension API 1.0
  api.report_error = ReportError;
  api.log = Log;
  api.tensor_type = TensorType;
  api.tensor_rank = TensorRank;
  api.tensor_dim = TensorDim;
  api.tensor_byte_size = TensorByteSize;
  api.tensor_data = TensorData;
  api.tensor_name = TensorName;
  api.tensor_is_constant = TensorIsConstant;
  api.tensor_resize = TensorResize;
  api.node_builtin_code = NodeBuiltinCode;
  api.node_custom_name = NodeCustomName;
  api.node_op_version = NodeOpVersion;
  api.node_num_inputs = NodeNumInputs;
  api.node_input = NodeInput;
  api.node_num_outputs = NodeNumOutputs;
  api.node_output = NodeOutput;
  api.node_option_int = NodeOptionInt;
  api.node_option_float = NodeOptionFloat;
  api.node_option_int_array = NodeOptionIntArray;
  api.node_custom_options = NodeCustomOptions;
  api.context_execution_plan = ContextExecutionPlan;
  api.context_node = ContextNode;
  api.context_num_tensors = ContextNumTensors;
  api.context_tensor = ContextTensor;
  api.context_delegate_nodes = ContextDelegateNodes;
  api.node_delegated_nodes = NodeDelegatedNodes;
  api.node_input_index = NodeInputIndex;
  api.node_output_index = NodeOutputIndex;
  // Extension API 1.1
  api.tensor_quantization = TensorQuantization;
  // Extension API 1.2
  api.tensor_set_buffer_handle = TensorSetBufferHandle;
  api.tensor_buffer_handle = TensorBufferHandle;
  api.tensor_set_type = TensorSetType;
  // Extension API 1.3
  api.node_num_intermediates = NodeNumIntermediates;
  api.node_intermediate = NodeIntermediate;
  return api;
}

struct VersionedTable {
  uint32_t minor;
  uint32_t size;
  const void* (*get_host_extension)(const char* id);
};

// Every served minor version of major 1: its KilnHostApi size and what its
// get_host_extension serves. Append a row when a minor version adds host
// functions or host extensions.
constexpr VersionedTable kTableSizes[] = {
    {0, KILN_HOST_API_STRUCT_SIZE_1_0, GetHostExtension<0>},
    {1, KILN_HOST_API_STRUCT_SIZE_1_1, GetHostExtension<1>},
    {2, KILN_HOST_API_STRUCT_SIZE_1_2, GetHostExtension<2>},
    {3, KILN_HOST_API_STRUCT_SIZE_1_3, GetHostExtension<3>},
};

}  // namespace

uint32_t HostApiSizeForVersion(uint32_t abi_version) {
  if (abi_version < kMinPluginAbiVersion ||
      abi_version > kMaxPluginAbiVersion) {
    return 0;
  }
  uint32_t size = 0;
  for (const VersionedTable& row : kTableSizes) {
    if (row.minor <= KILN_VERSION_MINOR(abi_version)) size = row.size;
  }
  return size;
}

const KilnHostApi* HostApiForVersion(uint32_t abi_version) {
  const uint32_t size = HostApiSizeForVersion(abi_version);
  if (size == 0) return nullptr;
  // One table per served minor version; the function pointers are the same,
  // only struct_size and abi_version differ.
  static const auto* tables = [] {
    auto* t = new std::vector<KilnHostApi>();
    for (const VersionedTable& row : kTableSizes) {
      KilnHostApi api = MakeFullTable();
      // An older minor's table: entries past its size are zeroed, as an
      // older host would not have them at all.
      std::memset(reinterpret_cast<char*>(&api) + row.size, 0,
                  sizeof(api) - row.size);
      api.struct_size = row.size;
      api.abi_version = KILN_MAKE_VERSION(1, row.minor, 0);
      api.get_host_extension = row.get_host_extension;
      t->push_back(api);
    }
    return t;
  }();
  // By minor version, not by size: a minor that adds only host extensions
  // has the size of the one before it but serves more.
  const KilnHostApi* table = nullptr;
  for (size_t i = 0; i < std::size(kTableSizes); ++i) {
    if (kTableSizes[i].minor <= KILN_VERSION_MINOR(abi_version)) {
      table = &(*tables)[i];
    }
  }
  return table;
}

}  // namespace kiln
