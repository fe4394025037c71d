#include "fake_host.h"

namespace kiln::sdk_test {
namespace {

FakeContext* Ctx(KilnOpaqueContext* c) {
  return reinterpret_cast<FakeContext*>(c);
}
const FakeNode* Node(const KilnOpaqueNode* n) {
  return reinterpret_cast<const FakeNode*>(n);
}
FakeTensor* Tensor(const KilnOpaqueTensor* t) {
  return reinterpret_cast<FakeTensor*>(const_cast<KilnOpaqueTensor*>(t));
}
KilnOpaqueTensor* TensorAt(KilnOpaqueContext* c, int32_t index) {
  FakeGraph* g = Ctx(c)->graph;
  if (index < 0 || static_cast<size_t>(index) >= g->tensors.size()) {
    return nullptr;
  }
  return reinterpret_cast<KilnOpaqueTensor*>(&g->tensors[index]);
}
int32_t IndexIn(const std::vector<int32_t>& list, int32_t i) {
  return i < 0 || static_cast<size_t>(i) >= list.size() ? -1 : list[i];
}

void ReportError(KilnOpaqueContext* c, KilnStatus code, const char* message) {
  FakeContext* ctx = Ctx(c);
  if (ctx->error_code == KILN_STATUS_OK) {
    ctx->error_code = code;
    ctx->error = message;
  } else {
    ctx->error += std::string("; ") + message;
  }
}
void Log(KilnOpaqueContext*, int32_t, const char*) {}

KilnTensorType TensorType(const KilnOpaqueTensor* t) { return Tensor(t)->type; }
int32_t TensorRank(const KilnOpaqueTensor* t) {
  return static_cast<int32_t>(Tensor(t)->shape.size());
}
int32_t TensorDim(const KilnOpaqueTensor* t, int32_t axis) {
  return IndexIn(Tensor(t)->shape, axis);
}
uint64_t TensorByteSize(const KilnOpaqueTensor* t) {
  return Tensor(t)->data.size() * sizeof(float);
}
void* TensorData(const KilnOpaqueTensor* t) {
  return Tensor(t)->data.empty() ? nullptr : Tensor(t)->data.data();
}
const char* TensorName(const KilnOpaqueTensor* t) {
  return Tensor(t)->name.c_str();
}
int32_t TensorIsConstant(const KilnOpaqueTensor*) { return 0; }
KilnStatus TensorResize(KilnOpaqueContext*, KilnOpaqueTensor* t, int32_t rank,
                        const int32_t* dims) {
  Tensor(t)->shape.assign(dims, dims + rank);
  size_t n = 1;
  for (int32_t d : Tensor(t)->shape) n *= static_cast<size_t>(d);
  Tensor(t)->data.assign(n, 0.f);
  return KILN_STATUS_OK;
}

int32_t NodeBuiltinCode(const KilnOpaqueNode* n) {
  return Node(n)->builtin_code;
}
const char* NodeCustomName(const KilnOpaqueNode*) { return nullptr; }
int32_t NodeOpVersion(const KilnOpaqueNode* n) { return Node(n)->version; }
int32_t NodeNumInputs(const KilnOpaqueNode* n) {
  return static_cast<int32_t>(Node(n)->inputs.size());
}
int32_t NodeNumOutputs(const KilnOpaqueNode* n) {
  return static_cast<int32_t>(Node(n)->outputs.size());
}
KilnOpaqueTensor* NodeInput(KilnOpaqueContext* c, const KilnOpaqueNode* n,
                            int32_t i) {
  return TensorAt(c, IndexIn(Node(n)->inputs, i));
}
KilnOpaqueTensor* NodeOutput(KilnOpaqueContext* c, const KilnOpaqueNode* n,
                             int32_t i) {
  return TensorAt(c, IndexIn(Node(n)->outputs, i));
}
KilnStatus NodeOptionInt(const KilnOpaqueNode* n, uint32_t key,
                         int64_t* value) {
  if (key != KILN_OPTION_FUSED_ACTIVATION || Node(n)->fused_activation < 0) {
    return KILN_STATUS_NOT_FOUND;
  }
  *value = Node(n)->fused_activation;
  return KILN_STATUS_OK;
}

KilnStatus ContextExecutionPlan(KilnOpaqueContext* c, const int32_t** nodes,
                                int32_t* count) {
  *nodes = Ctx(c)->graph->execution_plan.data();
  *count = static_cast<int32_t>(Ctx(c)->graph->execution_plan.size());
  return KILN_STATUS_OK;
}
KilnOpaqueNode* ContextNode(KilnOpaqueContext* c, int32_t index) {
  FakeGraph* g = Ctx(c)->graph;
  if (index < 0 || static_cast<size_t>(index) >= g->nodes.size()) {
    return nullptr;
  }
  return Opaque(&g->nodes[index]);
}
int32_t ContextNumTensors(KilnOpaqueContext* c) {
  return static_cast<int32_t>(Ctx(c)->graph->tensors.size());
}
KilnStatus ContextDelegateNodes(KilnOpaqueContext* c, const int32_t* nodes,
                                int32_t count) {
  Ctx(c)->claimed.assign(nodes, nodes + count);
  return KILN_STATUS_OK;
}
KilnStatus NodeDelegatedNodes(const KilnOpaqueNode* n, const int32_t** nodes,
                              int32_t* count) {
  *nodes = Node(n)->delegated_nodes.data();
  *count = static_cast<int32_t>(Node(n)->delegated_nodes.size());
  return KILN_STATUS_OK;
}
int32_t NodeInputIndex(const KilnOpaqueNode* n, int32_t i) {
  return IndexIn(Node(n)->inputs, i);
}
int32_t NodeOutputIndex(const KilnOpaqueNode* n, int32_t i) {
  return IndexIn(Node(n)->outputs, i);
}

// In the field order of KilnHostApi (append-only, so positions are
// stable); null where the fake serves nothing.
const KilnHostApi kTable = {
    KILN_HOST_API_STRUCT_SIZE, KILN_EXT_API_VERSION,
    // 1.0: errors, tensors
    ReportError, Log, TensorType, TensorRank, TensorDim, TensorByteSize,
    TensorData, TensorName, TensorIsConstant, TensorResize,
    // 1.0: nodes
    NodeBuiltinCode, NodeCustomName, NodeOpVersion, NodeNumInputs, NodeInput,
    NodeNumOutputs, NodeOutput, NodeOptionInt, /*node_option_float=*/nullptr,
    /*node_option_int_array=*/nullptr, /*node_custom_options=*/nullptr,
    // 1.0: subgraph view
    ContextExecutionPlan, ContextNode, ContextNumTensors, TensorAt,
    ContextDelegateNodes, NodeDelegatedNodes, NodeInputIndex, NodeOutputIndex,
    /*get_host_extension=*/nullptr,
    // 1.1
    /*tensor_quantization=*/nullptr,
    // 1.2
    /*tensor_set_buffer_handle=*/nullptr, /*tensor_buffer_handle=*/nullptr,
    /*tensor_set_type=*/nullptr,
    // 1.3
    /*node_num_intermediates=*/nullptr, /*node_intermediate=*/nullptr};

}  // namespace

const KilnHostApi* FakeHostApi() { return &kTable; }

}  // namespace kiln::sdk_test
