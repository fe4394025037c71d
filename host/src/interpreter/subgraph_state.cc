#include "interpreter/subgraph_state.h"

#include <utility>

#include "interpreter/op_resolution.h"

namespace kiln {

SubgraphState::SubgraphState(int32_t index, const Graph& graph)
    : execution_plan(graph.execution_plan),
      index_(index),
      model_(graph),
      tensors_(graph.tensors.size()) {
  for (size_t i = 0; i < graph.tensors.size(); ++i) {
    const Tensor& loaded = graph.tensors[i];
    TensorRecord& t = tensors_[i];
    t.desc = &loaded;
    t.has_rank = loaded.has_rank;
    t.shape = loaded.shape;
    if (loaded.is_constant()) {
      t.storage = TensorStorage::kConstant;
      t.data = loaded.data;
      t.bytes = loaded.bytes;
    }
  }
  for (const Node& loaded : graph.nodes) {
    NodeRecord& n = nodes_.emplace_back();
    n.desc = &loaded;
    n.host_intrinsic = IsHostIntrinsicOp(loaded.builtin_code);
  }
}

int32_t SubgraphState::AddPartition(NodeDesc desc, DelegateInstance* delegate) {
  const int32_t p = static_cast<int32_t>(partitions_.size());
  const int32_t index = static_cast<int32_t>(nodes_.size());
  desc.index = index;
  for (int32_t n : desc.delegated_nodes) node(n).delegated_to = p;
  PartitionRecord& partition = partitions_.emplace_back();
  partition.node = std::move(desc);
  partition.delegate = delegate;
  partition.state_per_signature =
      DelegateStatePerSignature(*delegate->iface, *delegate->plugin);
  NodeRecord& record = nodes_.emplace_back();
  record.desc = &partition.node;
  record.plugin = delegate->plugin.get();
  record.partition = p;
  return index;
}

}  // namespace kiln
