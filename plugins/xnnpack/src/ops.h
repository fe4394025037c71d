// What the XNNPACK delegate claims (Supports) and how it defines each claimed
// node in an XNNPACK subgraph (DefineNode). Both read the same TFLite
// semantics: an op is claimed only when the node can be defined exactly.
#ifndef KILN_PLUGINS_XNNPACK_SRC_OPS_H_
#define KILN_PLUGINS_XNNPACK_SRC_OPS_H_

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "kiln/sdk/checks.h"
#include "kiln/sdk/delegate.h"
#include "xnn_api.h"

namespace kiln::xnnpack {

// One row of the delegate's manifest: an op, the versions whose semantics
// the delegate implements and the element types its operands may have.
struct OpSupport {
  int32_t builtin_code;
  int32_t min_version;
  int32_t max_version;
  sdk::TypeSet types;
};

// Every op the delegate may claim (the manifest, `kiln plugin inspect`).
const std::vector<OpSupport>& SupportedOps();

// Whether the delegate defines `node` exactly; if not, why not.
sdk::NodeSupport Supports(const sdk::GraphNode& node);

// Defines the nodes of one partition in one XNNPACK subgraph. Values are
// made on first use: partition inputs and outputs as external values (ids
// 0..n-1, see external_ids), constants as static values over copies this
// builder owns (which must outlive the runtime), everything else internal.
class SubgraphBuilder {
 public:
  // An external value: its id and XNN_VALUE_FLAG_EXTERNAL_* flags.
  struct External {
    uint32_t id;
    uint32_t flags;
  };
  // `external`: tensor index -> external value, for every partition input
  // and output that is not a constant.
  SubgraphBuilder(xnn_subgraph_t subgraph, std::map<int32_t, External> external,
                  std::deque<std::vector<uint8_t>>* static_data)
      : subgraph_(subgraph),
        external_(std::move(external)),
        static_data_(static_data) {}

  // Adds `node` (a node Supports accepted) to the subgraph; on failure
  // reports through `reporter` and returns its code.
  KilnStatus DefineNode(const sdk::GraphNode& node,
                        const sdk::PartitionContext& reporter);
  // Whether tensor `index` got a value (externals the nodes never use must
  // not be bound at setup).
  bool Defined(int32_t index) const { return values_.count(index) > 0; }

 private:
  // The value of tensor `index` of `node`'s subgraph, defined on first use
  // with the tensor's current shape. *id is XNN_INVALID_VALUE_ID on failure
  // (reported).
  // `weights`: the value is the filter or bias of a convolution or fully
  // connected node, which XNNPACK packs while creating the runtime and
  // never reads again, so a constant's host data is lent, not copied.
  // `dims` (weights only): define the constant with these dimensions (the
  // same elements) instead of its own, as a value of its own.
  KilnStatus Value(const sdk::NodeView& node, int32_t index, uint32_t* id,
                   bool weights = false,
                   const std::vector<size_t>* dims = nullptr);
  // The bias of a convolution or fully connected node (input 0: data, 1:
  // filter): input `bias_index` when present or the node is float32 (none:
  // XNN_INVALID_VALUE_ID), else static zeros of the int32 type and scales
  // (input scale x filter scale, per channel) quantized XNNPACK nodes need.
  KilnStatus Bias(const sdk::GraphNode& node, int32_t bias_index,
                  size_t channels, uint32_t* id);
  // A new internal value of `like`'s type and quantization with `dims`.
  KilnStatus InternalValue(const sdk::NodeView& node, int32_t like,
                           const std::vector<size_t>& dims, uint32_t* id);
  KilnStatus DefineValue(const sdk::NodeView& node, const sdk::Tensor& t,
                         const std::vector<size_t>& dims, const void* data,
                         uint32_t external_id, uint32_t flags, uint32_t* id);
  KilnStatus Check(const sdk::NodeView& node, xnn_status status,
                   const char* what);

  // What every op family's definition needs: the fused activation range
  // and the output value.
  struct NodeOut {
    float lo = 0, hi = 0;
    uint32_t out = 0;
  };
  // The value of input `i` of `node` (XNN_INVALID_VALUE_ID when omitted).
  KilnStatus Input(const sdk::GraphNode& node, int32_t i, uint32_t* id,
                   bool weights = false);
  // One op family each; *s is XNNPACK's status for the node definition.
  KilnStatus DefineConv(const sdk::GraphNode& node, const NodeOut& o,
                        xnn_status* s);
  KilnStatus DefineFullyConnected(const sdk::GraphNode& node, const NodeOut& o,
                                  xnn_status* s);
  // A per-channel int8 FULLY_CONNECTED as the 1x1 convolution it is.
  KilnStatus DefineChannelwiseFullyConnected(const sdk::GraphNode& node,
                                             const NodeOut& o, uint32_t input,
                                             size_t rows, xnn_status* s);
  KilnStatus DefineTransposeConv(const sdk::GraphNode& node, const NodeOut& o,
                                 xnn_status* s);
  KilnStatus DefinePool(const sdk::GraphNode& node, const NodeOut& o,
                        xnn_status* s);
  KilnStatus DefineBinary(const sdk::GraphNode& node, const NodeOut& o,
                          xnn_status* s);
  KilnStatus DefineMean(const sdk::GraphNode& node, const NodeOut& o,
                        xnn_status* s);
  KilnStatus DefinePad(const sdk::GraphNode& node, const NodeOut& o,
                       xnn_status* s);
  KilnStatus DefineResizeBilinear(const sdk::GraphNode& node, const NodeOut& o,
                                  xnn_status* s);
  KilnStatus DefineUnary(const sdk::GraphNode& node, const NodeOut& o,
                         xnn_status* s);

  xnn_subgraph_t subgraph_;
  std::map<int32_t, External> external_;
  std::deque<std::vector<uint8_t>>* static_data_;
  std::map<int32_t, uint32_t> values_;  // tensor index -> value id
  std::map<int32_t, bool> lent_;        // constants defined over host data
  // Per-channel scales handed to XNNPACK (it may keep the pointer).
  std::deque<std::vector<float>> scales_;
};

}  // namespace kiln::xnnpack

#endif  // KILN_PLUGINS_XNNPACK_SRC_OPS_H_
