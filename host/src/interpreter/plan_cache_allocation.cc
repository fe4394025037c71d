// AllocateTensors through the plan cache (plan_cache.h): restoring a cached
// plan on a hit, preparing and caching a new one on a miss, the plugin
// states each plan owns, and the retracing warning.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "interpreter/allocation.h"
#include "interpreter/interpreter.h"
#include "interpreter/plan_cache.h"
#include "interpreter/subgraph_state.h"

namespace kiln {
namespace {

InputSignature InputSignatureOf(const SubgraphState& s) {
  InputSignature signature;
  for (int32_t i : s.model().inputs) {
    const TensorRecord& t = s.tensor(i);
    signature.types.push_back(t.ElementType());
    signature.shapes.push_back(t.shape);
  }
  return signature;
}

// The bytes of a prepare-time value; empty for any other tensor.
std::vector<uint8_t> ValueOf(const TensorRecord& t) {
  if (!t.prepared_value) return {};
  const auto* bytes = static_cast<const uint8_t*>(t.data);
  return std::vector<uint8_t>(bytes, bytes + t.bytes);
}

// Records what AllocateTensors just prepared as plan `id`, which takes over
// the per-signature states of the nodes and partitions.
PreparedPlan CapturePlan(SubgraphState& s, uint64_t id,
                         InputSignature signature, MemoryPlan memory) {
  PreparedPlan plan;
  plan.id = id;
  plan.signature = std::move(signature);
  plan.memory = std::move(memory);
  plan.tensors.reserve(s.tensors().size());
  for (const TensorRecord& t : s.tensors()) {
    plan.tensors.push_back({t.has_rank, t.dynamic, t.shape, t.type_override,
                            t.prepared_value, ValueOf(t)});
  }
  plan.nodes.resize(s.nodes().size());
  for (size_t i = 0; i < s.nodes().size(); ++i) {
    NodeRecord& n = s.nodes()[i];
    NodePlan& p = plan.nodes[i];
    p.deferred = n.deferred;
    p.evaluated_at_prepare = n.evaluated_at_prepare;
    if (n.state_per_signature && n.initialized) {
      p.holds_state = true;
      p.state = n.kernel_state;
      n.state_plan = id;
    }
  }
  plan.partitions.resize(s.partitions().size());
  for (size_t i = 0; i < s.partitions().size(); ++i) {
    PartitionRecord& r = s.partitions()[i];
    if (r.state_per_signature && r.initialized && !r.fell_back) {
      plan.partitions[i].holds_state = true;
      plan.partitions[i].state = r.state;
      r.state_plan = id;
    }
  }
  return plan;
}

// True when every tensor has the shape (dynamic mark, prepare-time value) the
// plan recorded.
bool TensorsMatch(const SubgraphState& s, const PreparedPlan& plan) {
  for (size_t i = 0; i < s.tensors().size(); ++i) {
    const TensorRecord& t = s.tensors()[i];
    const TensorPlan& p = plan.tensors[i];
    if (t.has_rank != p.has_rank || t.dynamic != p.dynamic ||
        t.shape != p.shape || t.type_override != p.type_override ||
        t.prepared_value != p.prepared_value || ValueOf(t) != p.value) {
      return false;
    }
  }
  return true;
}

void FreeKernelState(const KilnKernel& kernel, void* state) {
  if (kernel.free != nullptr) kernel.free(kernel.user_data, state);
}

void FreePartitionState(const PartitionRecord& p, void* state) {
  const KilnDelegateInterface& iface = *p.delegate->iface;
  if (iface.partition_free != nullptr) {
    iface.partition_free(p.delegate->instance, state);
  }
}

// "input 1 'y': [1,90,1024], [1,30,1024] (dimension 1 varies)" for every
// input whose shape differs among `signatures`.
std::vector<std::string> ChangingInputs(
    const SubgraphState& s, const std::vector<InputSignature>& signatures) {
  std::vector<std::string> lines;
  const std::vector<int32_t>& inputs = s.model().inputs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::vector<std::vector<int32_t>> shapes;
    for (const InputSignature& sig : signatures) {
      if (std::find(shapes.begin(), shapes.end(), sig.shapes[i]) ==
          shapes.end()) {
        shapes.push_back(sig.shapes[i]);
      }
    }
    if (shapes.size() < 2) continue;
    std::set<size_t> dims;
    bool rank_changes = false;
    for (const std::vector<int32_t>& shape : shapes) {
      rank_changes = rank_changes || shape.size() != shapes[0].size();
      for (size_t d = 0; d < std::min(shape.size(), shapes[0].size()); ++d) {
        if (shape[d] != shapes[0][d]) dims.insert(d);
      }
    }
    std::vector<std::string> listed;
    for (const std::vector<int32_t>& shape : shapes) {
      listed.push_back(absl::StrCat("[", absl::StrJoin(shape, ","), "]"));
    }
    lines.push_back(absl::StrCat(
        "input ", i, " '", s.tensor(inputs[i]).desc->name,
        "': ", absl::StrJoin(listed, ", "), " (",
        rank_changes
            ? "the rank changes"
            : absl::StrCat(dims.size() == 1 ? "dimension " : "dimensions ",
                           absl::StrJoin(dims, ", "),
                           dims.size() == 1 ? " varies" : " vary"),
        ")"));
  }
  return lines;
}

}  // namespace

absl::Status Interpreter::PrepareThroughPlanCache(SubgraphState& s) {
  PlanCache& cache = s.plan_cache;
  const InputSignature signature = InputSignatureOf(s);
  PreparedPlan* plan = cache.enabled() ? cache.Find(signature) : nullptr;
  bool restored = false;
  if (plan != nullptr) {
    KILN_ASSIGN_OR_RETURN(restored, RestoreCachedPlan(s, *plan, signature));
  } else {
    KILN_RETURN_IF_ERROR(PrepareNewPlan(s, signature));
  }
  cache.CountAllocation(restored);
  const bool from_application =
      std::none_of(subgraphs_.begin(), subgraphs_.end(),
                   [](const auto& other) { return other->running; });
  if (from_application &&
      cache.retrace_detector().Record(signature, !restored, cache.options())) {
    WarnRetracing(s);
  }
  return absl::OkStatus();
}

absl::Status Interpreter::PrepareNewPlan(SubgraphState& s,
                                         const InputSignature& signature) {
  PlanCache& cache = s.plan_cache;
  if (cache.enabled()) KILN_RETURN_IF_ERROR(UseUncachedStates(s));
  KILN_RETURN_IF_ERROR(PrepareAll(s, /*cached=*/nullptr));
  MemoryPlan memory = PlanMemory(s);
  KILN_RETURN_IF_ERROR(CheckMemoryPlan(s, memory));
  ApplyMemoryPlan(s, memory);
  if (!cache.enabled()) return absl::OkStatus();
  std::vector<PreparedPlan> evicted = cache.Insert(
      CapturePlan(s, cache.NewPlanId(), signature, std::move(memory)));
  for (PreparedPlan& plan : evicted) ReleasePlanStates(s, plan);
  return absl::OkStatus();
}

absl::StatusOr<bool> Interpreter::RestoreCachedPlan(
    SubgraphState& s, PreparedPlan& plan, const InputSignature& signature) {
  KILN_RETURN_IF_ERROR(PrepareAll(s, &plan));
  if (TensorsMatch(s, plan)) {
    KILN_RETURN_IF_ERROR(CheckMemoryPlan(s, plan.memory));
    ApplyMemoryPlan(s, plan.memory);
    return true;
  }
  // A kernel or partition prepared again (one without per-signature state)
  // sized a tensor unlike when the plan was made, so the restored states
  // may not fit their inputs: drop the plan and prepare afresh.
  PreparedPlan dropped = s.plan_cache.Remove(&plan);
  ReleasePlanStates(s, dropped);
  ResetTensors(s);
  KILN_RETURN_IF_ERROR(PrepareNewPlan(s, signature));
  return false;
}

void Interpreter::RestoreKernelNode(SubgraphState& s, NodeRecord& node,
                                    const PreparedPlan& plan) {
  for (int32_t t : node.node().outputs) {
    if (t < 0) continue;
    TensorRecord& x = s.tensor(t);
    if (x.is_constant() || x.desc->is_variable) continue;
    const TensorPlan& p = plan.tensors[static_cast<size_t>(t)];
    x.has_rank = p.has_rank;
    x.shape = p.shape;
    x.dynamic = p.dynamic;
    x.type_override = p.type_override;
    x.prepared_value = p.prepared_value;
    if (p.prepared_value) {
      AllocateValue(x, p.value.size());
      if (!p.value.empty()) std::memcpy(x.data, p.value.data(), p.value.size());
    }
  }
  const NodePlan& p = plan.nodes[static_cast<size_t>(node.node().index)];
  node.deferred = p.deferred;
  node.evaluated_at_prepare = p.evaluated_at_prepare;
  if (!p.holds_state || node.state_plan == plan.id) return;
  if (node.initialized && node.state_plan == 0) {
    FreeKernelState(*node.kernel, node.kernel_state);
  }
  node.kernel_state = p.state;
  node.initialized = true;
  node.state_plan = plan.id;
}

bool Interpreter::RestorePartitionState(SubgraphState& s, NodeRecord& node,
                                        const PreparedPlan& plan) {
  PartitionRecord& r = s.partition_of(node);
  const NodePlan& p = plan.partitions[static_cast<size_t>(node.partition)];
  if (!r.state_per_signature || r.fell_back || !r.initialized ||
      !p.holds_state) {
    return false;
  }
  if (r.state_plan == plan.id) return true;
  if (r.state_plan == 0) FreePartitionState(r, r.state);
  r.state = p.state;
  r.state_plan = plan.id;
  return true;
}

absl::Status Interpreter::UseUncachedStates(SubgraphState& s) {
  for (NodeRecord& node : s.nodes()) {
    if (!node.state_per_signature || !node.initialized ||
        node.state_plan == 0) {
      continue;
    }
    // On failure the node keeps the cached plan's state (not prepared).
    KILN_RETURN_IF_ERROR(CallKernel(s, node, PluginStage::kInit));
    node.state_plan = 0;
  }
  for (PartitionRecord& p : s.partitions()) {
    if (!p.state_per_signature || !p.initialized || p.fell_back ||
        p.state_plan == 0) {
      continue;
    }
    // A failure falls back to the kernels (CallPartition warns); the cached
    // plan keeps its state.
    if (CallPartition(s, s.node(p.node.index), PluginStage::kPartitionInit)
            .ok()) {
      p.state_plan = 0;
    }
  }
  return absl::OkStatus();
}

void Interpreter::ReleasePlanStates(SubgraphState& s, PreparedPlan& plan) {
  for (size_t i = 0; i < plan.nodes.size(); ++i) {
    const NodePlan& p = plan.nodes[i];
    if (!p.holds_state) continue;
    NodeRecord& node = s.nodes()[i];
    if (node.state_plan == plan.id) {
      node.state_plan = 0;  // the node's current state: the node keeps it
    } else {
      FreeKernelState(*node.kernel, p.state);
    }
  }
  for (size_t i = 0; i < plan.partitions.size(); ++i) {
    const NodePlan& p = plan.partitions[i];
    if (!p.holds_state) continue;
    PartitionRecord& r = s.partitions()[i];
    if (r.state_plan == plan.id) {
      r.state_plan = 0;
    } else {
      FreePartitionState(r, p.state);
    }
  }
}

void Interpreter::ReleasePlanCaches() {
  for (auto& s : subgraphs_) {
    for (PreparedPlan& plan : s->plan_cache.TakeAll()) {
      ReleasePlanStates(*s, plan);
    }
  }
}

void Interpreter::WarnRetracing(const SubgraphState& s) {
  const RetraceDetector& detector = s.plan_cache.retrace_detector();
  const PlanCacheOptions& options = s.plan_cache.options();
  std::string where = absl::StrCat("subgraph ", s.index());
  if (!s.model().name.empty())
    absl::StrAppend(&where, " ('", s.model().name, "')");
  for (const Signature& sig : model_->signatures()) {
    if (sig.subgraph_index == s.index()) {
      absl::StrAppend(&where, " (signature '", sig.key, "')");
      break;
    }
  }
  const std::string cache =
      options.max_plans > 0
          ? absl::StrCat("the plan cache keeps ", options.max_plans,
                         options.max_plans == 1 ? " plan" : " plans",
                         " per subgraph")
          : std::string("the plan cache is off");
  const std::vector<std::string> changing =
      ChangingInputs(s, detector.DistinctSignatures());
  const std::string text = absl::StrCat(
      "model '", model_->source(), "': ", detector.counted(), " of the last ",
      detector.window_size(), " AllocateTensors calls on ", where,
      " prepared a plan for new input shapes (", cache,
      "). Preparing is expensive: every kernel's and delegate's prepare and "
      "the memory planning run again. Input shapes that keep changing: ",
      changing.empty() ? std::string("(none: the same shapes were prepared "
                                     "again because the cache is off)")
                       : absl::StrJoin(changing, "; "),
      ". Use fewer distinct shapes (pad the varying dimensions to a few "
      "sizes), or keep more plans (InterpreterOptions.plan_cache.max_plans, "
      "KilnInterpreterOptionsSetPlanCacheSize, kiln --plan-cache-size N). "
      "This warning is printed once per subgraph");
  warnings_.push_back(text);
  std::fprintf(stderr, "kiln: warning: %s\n", text.c_str());
}

PlanCacheStats Interpreter::plan_cache_stats() const {
  PlanCacheStats stats;
  for (const auto& s : subgraphs_) s->plan_cache.AddTo(&stats);
  return stats;
}

}  // namespace kiln
