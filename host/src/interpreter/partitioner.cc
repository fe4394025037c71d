#include "interpreter/partitioner.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <set>
#include <unordered_map>
#include <utility>

#include "absl/status/status.h"

namespace kiln {

DependencyGraph::DependencyGraph(const GraphView& graph,
                                 const std::vector<int32_t>& plan,
                                 const std::vector<int32_t>& sequenced)
    : plan_(plan) {
  const size_t n = plan_.size();
  position_.assign(static_cast<size_t>(graph.NumNodes()), -1);
  for (size_t p = 0; p < n; ++p) {
    const int32_t node = plan_[p];
    if (node >= 0 && static_cast<size_t>(node) < position_.size()) {
      position_[static_cast<size_t>(node)] = static_cast<int32_t>(p);
    }
  }
  preds_.assign(n, {});
  succs_.assign(n, {});
  // Last producer (by plan position) of each tensor seen so far.
  std::unordered_map<int32_t, int32_t> producer;
  std::vector<std::set<int32_t>> pred_sets(n);
  for (size_t p = 0; p < n; ++p) {
    const NodeDesc& node = graph.NodeDescAt(plan_[p]);
    for (int32_t t : node.inputs) {
      if (t < 0) continue;
      auto it = producer.find(t);
      if (it != producer.end() && it->second != static_cast<int32_t>(p)) {
        pred_sets[p].insert(it->second);
      }
    }
    for (int32_t t : node.outputs) {
      if (t >= 0) producer[t] = static_cast<int32_t>(p);
    }
  }
  int32_t previous = -1;
  for (int32_t node : sequenced) {
    const int32_t p = position(node);
    if (p < 0) continue;
    if (previous >= 0 && previous < p)
      pred_sets[static_cast<size_t>(p)].insert(previous);
    previous = p;
  }
  for (size_t p = 0; p < n; ++p) {
    for (int32_t q : pred_sets[p]) {
      preds_[p].push_back(q);
      succs_[static_cast<size_t>(q)].push_back(static_cast<int32_t>(p));
    }
  }
}

int32_t DependencyGraph::position(int32_t node) const {
  if (node < 0 || static_cast<size_t>(node) >= position_.size()) return -1;
  return position_[static_cast<size_t>(node)];
}

namespace {

// True when no path leaves `members` (plan positions, flagged in in_set)
// through another node and re-enters it. All members precede `limit`.
bool IsContractible(const DependencyGraph& deps,
                    const std::vector<int32_t>& members,
                    const std::vector<char>& in_set, int32_t limit) {
  std::vector<char> seen(deps.plan().size(), 0);
  std::vector<int32_t> stack;
  for (int32_t m : members) {
    for (int32_t s : deps.succs(m)) {
      if (!in_set[static_cast<size_t>(s)] && s < limit &&
          !seen[static_cast<size_t>(s)]) {
        seen[static_cast<size_t>(s)] = 1;
        stack.push_back(s);
      }
    }
  }
  while (!stack.empty()) {
    const int32_t x = stack.back();
    stack.pop_back();
    for (int32_t s : deps.succs(x)) {
      if (in_set[static_cast<size_t>(s)]) return false;
      if (s < limit && !seen[static_cast<size_t>(s)]) {
        seen[static_cast<size_t>(s)] = 1;
        stack.push_back(s);
      }
    }
  }
  return true;
}

}  // namespace

std::vector<std::vector<int32_t>> PartitionClaimedNodes(
    const DependencyGraph& deps, const std::vector<int32_t>& claimed) {
  const size_t n = deps.plan().size();
  std::vector<char> is_claimed(n, 0);
  for (int32_t node : claimed) {
    const int32_t p = deps.position(node);
    if (p >= 0) is_claimed[static_cast<size_t>(p)] = 1;
  }
  // Groups of plan positions; group_of[p] = group index or -1.
  std::vector<std::vector<int32_t>> groups;
  std::vector<int32_t> group_of(n, -1);
  std::vector<char> in_set(n, 0);
  auto contractible_with = [&](const std::vector<int32_t>& members,
                               int32_t limit) {
    for (int32_t m : members) in_set[static_cast<size_t>(m)] = 1;
    const bool ok = IsContractible(deps, members, in_set, limit);
    for (int32_t m : members) in_set[static_cast<size_t>(m)] = 0;
    return ok;
  };
  for (size_t p = 0; p < n; ++p) {
    if (!is_claimed[p]) continue;
    const int32_t pos = static_cast<int32_t>(p);
    std::vector<int32_t> candidates;
    for (int32_t q : deps.preds(pos)) {
      const int32_t g = group_of[static_cast<size_t>(q)];
      if (g >= 0 && std::find(candidates.begin(), candidates.end(), g) ==
                        candidates.end()) {
        candidates.push_back(g);
      }
    }
    std::sort(candidates.begin(), candidates.end());
    std::vector<int32_t> merged = {pos};
    std::vector<int32_t> taken;
    // First try every neighbouring group at once, then one by one.
    std::vector<int32_t> all = merged;
    for (int32_t g : candidates) {
      all.insert(all.end(), groups[static_cast<size_t>(g)].begin(),
                 groups[static_cast<size_t>(g)].end());
    }
    if (!candidates.empty() && contractible_with(all, pos)) {
      merged = std::move(all);
      taken = candidates;
    } else {
      for (int32_t g : candidates) {
        std::vector<int32_t> trial = merged;
        trial.insert(trial.end(), groups[static_cast<size_t>(g)].begin(),
                     groups[static_cast<size_t>(g)].end());
        if (contractible_with(trial, pos)) {
          merged = std::move(trial);
          taken.push_back(g);
        }
      }
    }
    for (int32_t g : taken) groups[static_cast<size_t>(g)].clear();
    const int32_t id = static_cast<int32_t>(groups.size());
    for (int32_t m : merged) group_of[static_cast<size_t>(m)] = id;
    groups.push_back(std::move(merged));
  }
  std::vector<std::vector<int32_t>> result;
  for (std::vector<int32_t>& g : groups) {
    if (g.empty()) continue;
    std::sort(g.begin(), g.end());
    std::vector<int32_t> nodes;
    for (int32_t p : g) nodes.push_back(deps.plan()[static_cast<size_t>(p)]);
    result.push_back(std::move(nodes));
  }
  std::sort(result.begin(), result.end(),
            [&](const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
              return deps.position(a.front()) < deps.position(b.front());
            });
  return result;
}

absl::StatusOr<std::vector<PlanStep>> ContractedOrder(
    const DependencyGraph& deps,
    const std::vector<std::vector<int32_t>>& partitions) {
  const size_t n = deps.plan().size();
  // Unit of each plan position: partitions first, then single nodes.
  std::vector<int32_t> unit_of(n, -1);
  std::vector<PlanStep> units;
  std::vector<int32_t> key;  // smallest plan position in the unit
  for (size_t i = 0; i < partitions.size(); ++i) {
    int32_t min_pos = static_cast<int32_t>(n);
    for (int32_t node : partitions[i]) {
      const int32_t p = deps.position(node);
      if (p < 0) return absl::InternalError("partition node not in the plan");
      unit_of[static_cast<size_t>(p)] = static_cast<int32_t>(units.size());
      min_pos = std::min(min_pos, p);
    }
    units.push_back({true, static_cast<int32_t>(i)});
    key.push_back(min_pos);
  }
  for (size_t p = 0; p < n; ++p) {
    if (unit_of[p] >= 0) continue;
    unit_of[p] = static_cast<int32_t>(units.size());
    units.push_back({false, deps.plan()[p]});
    key.push_back(static_cast<int32_t>(p));
  }
  std::vector<std::set<int32_t>> unit_succs(units.size());
  std::vector<int32_t> indegree(units.size(), 0);
  for (size_t p = 0; p < n; ++p) {
    const int32_t u = unit_of[p];
    for (int32_t s : deps.succs(static_cast<int32_t>(p))) {
      const int32_t v = unit_of[static_cast<size_t>(s)];
      if (v != u && unit_succs[static_cast<size_t>(u)].insert(v).second) {
        ++indegree[static_cast<size_t>(v)];
      }
    }
  }
  using Entry = std::pair<int32_t, int32_t>;  // (key, unit)
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> ready;
  for (size_t u = 0; u < units.size(); ++u) {
    if (indegree[u] == 0) ready.push({key[u], static_cast<int32_t>(u)});
  }
  std::vector<PlanStep> order;
  order.reserve(units.size());
  while (!ready.empty()) {
    const int32_t u = ready.top().second;
    ready.pop();
    order.push_back(units[static_cast<size_t>(u)]);
    for (int32_t v : unit_succs[static_cast<size_t>(u)]) {
      if (--indegree[static_cast<size_t>(v)] == 0) {
        ready.push({key[static_cast<size_t>(v)], v});
      }
    }
  }
  if (order.size() != units.size()) {
    return absl::InternalError(
        "delegate partitions form a cycle with the remaining nodes");
  }
  return order;
}

}  // namespace kiln
