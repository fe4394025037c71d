// Graph algorithms behind delegation: split the nodes a delegate claimed into
// partitions, and order a subgraph with each partition contracted to a node.
//
// A partition is a maximal set of claimed nodes, connected through tensors,
// that can run as one step: no path leaves the set through an unclaimed node
// and comes back into it (contracting it would create a cycle).
//
// Thread-safety: pure functions.
#ifndef KILN_HOST_INTERPRETER_PARTITIONER_H_
#define KILN_HOST_INTERPRETER_PARTITIONER_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/graph.h"

namespace kiln {

// Data dependencies between the nodes of `plan` (node indices of `graph` in
// execution order), plus ordering edges between consecutive nodes listed in
// `sequenced` (nodes with side effects the tensors do not show, e.g.
// resource-variable ops), which keep their relative order.
class DependencyGraph {
 public:
  DependencyGraph(const GraphView& graph, const std::vector<int32_t>& plan,
                  const std::vector<int32_t>& sequenced = {});

  const std::vector<int32_t>& plan() const { return plan_; }
  // Position of `node` in the plan, -1 if absent.
  int32_t position(int32_t node) const;
  // Direct predecessors / successors of the node at plan position p, as plan
  // positions.
  const std::vector<int32_t>& preds(int32_t p) const { return preds_[p]; }
  const std::vector<int32_t>& succs(int32_t p) const { return succs_[p]; }

 private:
  std::vector<int32_t> plan_;
  std::vector<int32_t> position_;  // by node index
  std::vector<std::vector<int32_t>> preds_, succs_;
};

// Splits `claimed` (node indices; duplicates and nodes outside the plan are
// ignored) into partitions. Each partition lists node indices in plan order;
// partitions are ordered by their first node.
std::vector<std::vector<int32_t>> PartitionClaimedNodes(
    const DependencyGraph& deps, const std::vector<int32_t>& claimed);

// One step of a contracted execution order.
struct PlanStep {
  bool is_partition = false;
  int32_t index = -1;  // node index, or index into `partitions`
};

// Orders the plan with every partition as one step; the relative order of
// the other nodes is kept where dependencies allow. Fails (INTERNAL) if the
// partitions are not contractible.
absl::StatusOr<std::vector<PlanStep>> ContractedOrder(
    const DependencyGraph& deps,
    const std::vector<std::vector<int32_t>>& partitions);

}  // namespace kiln

#endif  // KILN_HOST_INTERPRETER_PARTITIONER_H_
