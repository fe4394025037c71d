// AllocateTensors: shapes, preparation and memory planning of one subgraph.
// See interpreter.h for the contract and docs/host-structure.md for how the
// pieces fit.
#include "interpreter/allocation.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>
#include <stdexcept>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "interpreter/arena_planner.h"
#include "interpreter/interpreter.h"
#include "interpreter/subgraph_state.h"
#include "kiln/kiln_builtin_ops.h"

namespace kiln {
namespace {

// Marks `node` to be prepared again at invoke, and its outputs dynamic.
void Defer(SubgraphState& s, NodeRecord& node) {
  node.deferred = true;
  for (int32_t t : node.node().outputs) {
    if (t >= 0) s.tensor(t).dynamic = true;
  }
}

// Inclusive ranges of execution steps during which each tensor is used (-1
// when never): a partition may fall back to its nodes, so their tensors
// live at the partition's step; subgraph inputs and outputs live
// throughout.
struct Lifetimes {
  std::vector<int32_t> first, last;
};

Lifetimes TensorLifetimes(const SubgraphState& s) {
  Lifetimes life;
  life.first.assign(s.tensors().size(), -1);
  life.last.assign(s.tensors().size(), -1);
  auto touch = [&](const std::vector<int32_t>& tensors, int32_t step) {
    for (int32_t t : tensors) {
      if (t < 0) continue;
      const size_t i = static_cast<size_t>(t);
      if (life.first[i] < 0 || step < life.first[i]) life.first[i] = step;
      life.last[i] = std::max(life.last[i], step);
    }
  };
  const int32_t steps = static_cast<int32_t>(s.execution_plan.size());
  for (int32_t step = 0; step < steps; ++step) {
    const NodeDesc& node =
        s.node(s.execution_plan[static_cast<size_t>(step)]).node();
    touch(node.inputs, step);
    touch(node.outputs, step);
    for (int32_t original : node.delegated_nodes) {
      touch(s.node(original).node().inputs, step);
      touch(s.node(original).node().outputs, step);
    }
  }
  const int32_t end = std::max(steps - 1, 0);
  for (const auto* list : {&s.model().inputs, &s.model().outputs}) {
    for (int32_t t : *list) {
      life.first[static_cast<size_t>(t)] = 0;
      life.last[static_cast<size_t>(t)] = end;
    }
  }
  return life;
}

// RESHAPE, SQUEEZE and EXPAND_DIMS only relabel their input's bytes.
bool RelabelsBytes(int32_t code) {
  return code == KILN_OP_RESHAPE || code == KILN_OP_SQUEEZE ||
         code == KILN_OP_EXPAND_DIMS;
}

// Zero-copy relabels: the output of a RESHAPE, SQUEEZE or EXPAND_DIMS that
// runs on its kernel shares its input's arena bytes (the kernel's copy
// sees equal pointers) when the input dies at that node, both get arena
// memory of the same size and neither is a subgraph input or output.
// Returns, per tensor, the tensor whose arena bytes it uses (itself when
// none); `last` of that tensor grows to cover the tensors sharing it.
std::vector<int32_t> SharedArenaBytes(const SubgraphState& s,
                                      const std::vector<char>& planned,
                                      const Lifetimes& life,
                                      std::vector<int32_t>& last) {
  std::vector<int32_t> share(s.tensors().size());
  for (size_t i = 0; i < share.size(); ++i) {
    share[i] = static_cast<int32_t>(i);
  }
  std::vector<char> io(s.tensors().size(), 0);
  for (const auto* list : {&s.model().inputs, &s.model().outputs}) {
    for (int32_t t : *list) io[static_cast<size_t>(t)] = 1;
  }
  const int32_t steps = static_cast<int32_t>(s.execution_plan.size());
  for (int32_t step = 0; step < steps; ++step) {
    const NodeRecord& node =
        s.node(s.execution_plan[static_cast<size_t>(step)]);
    const NodeDesc& desc = node.node();
    if (node.is_partition() || node.host_intrinsic ||
        node.evaluated_at_prepare || !RelabelsBytes(desc.builtin_code) ||
        desc.inputs.empty() || desc.outputs.size() != 1) {
      continue;
    }
    const int32_t in = desc.inputs[0], out = desc.outputs[0];
    if (in < 0 || out < 0) continue;
    const size_t i = static_cast<size_t>(in), o = static_cast<size_t>(out);
    if (!planned[i] || !planned[o] || io[i] || io[o] || life.last[i] != step ||
        s.tensor(in).RequiredBytes() != s.tensor(out).RequiredBytes()) {
      continue;
    }
    const size_t root = static_cast<size_t>(share[i]);
    share[o] = share[i];
    last[root] = std::max(last[root], life.last[o]);
  }
  return share;
}

}  // namespace

void ResetTensors(SubgraphState& s) {
  for (int32_t i : s.model().inputs) {
    TensorRecord& t = s.tensor(i);
    if (!t.has_rank) {
      t.shape.clear();
      t.has_rank = true;
    }
  }
  std::vector<char> written(s.tensors().size(), 0);
  for (const Node& node : s.model().nodes) {
    for (int32_t t : node.outputs) {
      if (t >= 0) written[static_cast<size_t>(t)] = 1;
    }
  }
  for (size_t i = 0; i < s.tensors().size(); ++i) {
    TensorRecord& t = s.tensors()[i];
    t.dynamic = false;
    t.prepared_value = false;
    if (t.is_constant()) continue;
    if (t.desc->is_variable) {
      const size_t need = t.RequiredBytes();
      if (t.storage != TensorStorage::kOwned || t.bytes != need) {
        t.AllocateOwned(need);
        // As TFLite's ResetVariableTensor: an int8 variable starts at its
        // zero point (real 0), any other type at 0 (a quantized LSTM's
        // output state is such a variable).
        const Quantization& q = t.desc->quantization;
        if (t.desc->type == KILN_TYPE_INT8 && q.zero_points.size() == 1) {
          std::memset(t.owned.data(), static_cast<int>(q.zero_points[0]), need);
        }
      }
      continue;
    }
    if (written[i]) {
      t.has_rank = false;
      t.shape.clear();
      t.type_override.reset();
    }
    t.data = nullptr;
    t.bytes = 0;
    t.storage = TensorStorage::kNone;
    // A dynamic tensor keeps its heap buffer, out of reach until invoke
    // gives the tensor storage again (AllocateDynamicOutputs reuses it when
    // the size matches; ApplyMemoryPlan frees it when the tensor is no
    // longer dynamic). Strings are sized by their writers.
    if (t.desc->type == KILN_TYPE_STRING) {
      t.owned.clear();
      t.owned.shrink_to_fit();
    }
  }
  for (NodeRecord& n : s.nodes()) {
    n.deferred = false;
    n.evaluated_at_prepare = false;
  }
}

void AllocateValue(TensorRecord& t, size_t n) {
  t.AllocateOwned(n);
  if (t.data == nullptr) {
    t.owned.resize(1);
    t.data = t.owned.data();
  }
}

MemoryPlan PlanMemory(const SubgraphState& s) {
  const Lifetimes life = TensorLifetimes(s);
  const size_t n = s.tensors().size();
  std::vector<char> planned(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const TensorRecord& t = s.tensors()[i];
    planned[i] = !(t.is_constant() || t.desc->is_variable || t.dynamic ||
                   t.prepared_value || life.first[i] < 0 || !t.has_rank ||
                   t.ElementType() == KILN_TYPE_STRING);
  }
  std::vector<int32_t> last = life.last;
  const std::vector<int32_t> share = SharedArenaBytes(s, planned, life, last);
  std::vector<ArenaRequest> requests;
  std::vector<size_t> request_of(n, 0);
  MemoryPlan memory;
  for (size_t i = 0; i < n; ++i) {
    if (!planned[i] || share[i] != static_cast<int32_t>(i)) continue;
    request_of[i] = requests.size();
    requests.push_back(
        {s.tensors()[i].RequiredBytes(), life.first[i], last[i]});
  }
  const ArenaPlan plan = PlanArena(requests);
  for (size_t i = 0; i < n; ++i) {
    if (!planned[i]) continue;
    const size_t r = request_of[static_cast<size_t>(share[i])];
    memory.placements.push_back(
        {static_cast<int32_t>(i), plan.offsets[r], requests[r].bytes});
  }
  memory.arena_bytes = plan.arena_bytes;
  return memory;
}

absl::Status Interpreter::CheckMemoryPlan(const SubgraphState& s,
                                          const MemoryPlan& plan) const {
  for (const TensorPlacement& p : plan.placements) {
    KILN_RETURN_IF_ERROR(CheckTensorBytes(
        absl::StrCat("subgraph ", s.index(), " tensor ", p.tensor),
        s.tensor(p.tensor)));
  }
  uint64_t total = plan.arena_bytes;
  for (const auto& other : subgraphs_) {
    if (other.get() == &s) continue;
    if (__builtin_add_overflow(total, uint64_t{other->arena_bytes}, &total)) {
      total = UINT64_MAX;
    }
  }
  if (plan.arena_bytes <= max_arena_bytes_ && total <= max_arena_bytes_) {
    return absl::OkStatus();
  }
  return absl::ResourceExhaustedError(absl::StrCat(
      "model '", model_->source(), "': AllocateTensors of subgraph ", s.index(),
      " needs an arena of ",
      plan.arena_bytes == SIZE_MAX ? std::string("more than 2^64")
                                   : absl::StrCat(plan.arena_bytes),
      " bytes (", total,
      " bytes with the other subgraphs' arenas), more than the limit of ",
      max_arena_bytes_,
      " bytes of tensor memory (max_arena_bytes). If the model is trusted and "
      "needs it, raise the limit (InterpreterOptions.max_arena_bytes, "
      "KilnInterpreterOptionsSetMaxArenaBytes, kiln --max-arena-bytes)"));
}

void ApplyMemoryPlan(SubgraphState& s, const MemoryPlan& plan) {
  const size_t capacity = plan.arena_bytes + kArenaAlignment;
  if (s.arena_storage.size() < capacity) s.arena_storage.assign(capacity, 0);
  uint8_t* raw = s.arena_storage.data();
  const uintptr_t misalign = reinterpret_cast<uintptr_t>(raw) % kArenaAlignment;
  uint8_t* base = raw + (misalign == 0 ? 0 : kArenaAlignment - misalign);
  for (const TensorPlacement& p : plan.placements) {
    TensorRecord& t = s.tensor(p.tensor);
    t.storage = TensorStorage::kArena;
    t.data = base + p.offset;
    t.bytes = p.bytes;
  }
  s.arena_bytes = plan.arena_bytes;
  // Heap buffers kept by ResetTensors for tensors that are not dynamic now.
  for (TensorRecord& t : s.tensors()) {
    if (!t.dynamic && t.storage != TensorStorage::kOwned && !t.owned.empty()) {
      t.owned.clear();
      t.owned.shrink_to_fit();
    }
  }
}

absl::StatusOr<SubgraphState*> Interpreter::FindSubgraph(int subgraph) {
  if (subgraph < 0 || subgraph >= num_subgraphs()) {
    return absl::OutOfRangeError(absl::StrCat("subgraph ", subgraph,
                                              " does not exist (the model has ",
                                              num_subgraphs(), ")"));
  }
  return subgraphs_[static_cast<size_t>(subgraph)].get();
}

absl::Status Interpreter::ResizeSubgraphInput(
    int subgraph, int input_index, const std::vector<int32_t>& dims) {
  KILN_ASSIGN_OR_RETURN(SubgraphState * s, FindSubgraph(subgraph));
  if (s->running) {
    return absl::FailedPreconditionError(absl::StrCat(
        "subgraph ", subgraph, " cannot be resized while it runs"));
  }
  const std::vector<int32_t>& inputs = s->model().inputs;
  if (input_index < 0 || static_cast<size_t>(input_index) >= inputs.size()) {
    return absl::OutOfRangeError(
        absl::StrCat("input index ", input_index, " is out of range: subgraph ",
                     subgraph, " has ", inputs.size(), " inputs"));
  }
  TensorRecord& t = s->tensor(inputs[static_cast<size_t>(input_index)]);
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot resize input ", input_index, " '", t.desc->name, "' to [",
          absl::StrJoin(dims, ", "), "]: dimension ", i, " is negative"));
    }
  }
  if (t.has_rank && t.shape == dims) return absl::OkStatus();
  TensorState resized;
  resized.desc = t.desc;
  resized.type_override = t.type_override;
  resized.shape = dims;
  KILN_RETURN_IF_ERROR(
      CheckTensorBytes(absl::StrCat("ResizeInput: input ", input_index,
                                    " of subgraph ", subgraph),
                       resized));
  t.shape = dims;
  t.has_rank = true;
  s->allocated = false;
  return absl::OkStatus();
}

absl::Status Interpreter::CheckNoNodeWritesAnInput(
    const SubgraphState& s) const {
  std::vector<char> is_input(s.model().tensors.size(), 0);
  for (int32_t t : s.model().inputs) is_input[static_cast<size_t>(t)] = 1;
  for (int32_t n = 0; n < s.num_model_nodes(); ++n) {
    for (int32_t t : s.node(n).node().outputs) {
      if (t < 0 || !is_input[static_cast<size_t>(t)]) continue;
      return absl::InvalidArgumentError(absl::StrCat(
          "model '", model_->source(), "': ", NodeLabel(s, s.node(n)),
          " writes tensor ", t, " '", s.tensor(t).desc->name,
          "', which is an input of subgraph ", s.index(),
          ": an output may not alias a subgraph input (the model is "
          "malformed; reconvert it)"));
    }
  }
  return absl::OkStatus();
}

absl::Status Interpreter::AllocateSubgraph(int subgraph) {
  if (invoke_depth_ > 0) return AllocateSubgraphUnguarded(subgraph);
  try {
    return AllocateSubgraphUnguarded(subgraph);
  } catch (const std::bad_alloc& e) {
    return AllocationFailure("AllocateTensors", e);
  } catch (const std::length_error& e) {
    return AllocationFailure("AllocateTensors", e);
  }
}

absl::Status Interpreter::AllocateSubgraphUnguarded(int subgraph) {
  KILN_ASSIGN_OR_RETURN(SubgraphState * s, FindSubgraph(subgraph));
  if (s->running) {
    return absl::FailedPreconditionError(absl::StrCat(
        "subgraph ", subgraph, " cannot be allocated while it runs"));
  }
  s->allocated = false;
  KILN_RETURN_IF_ERROR(CheckNoNodeWritesAnInput(*s));
  const uint64_t event =
      profiler_ != nullptr
          ? BeginHostEvent(*s, "AllocateTensors", "allocate", nullptr)
          : 0;
  if (buffer_handles_) ReleasePartitionBuffers(*s);
  ResetTensors(*s);
  // Prepares and plans memory, or restores a cached plan (plan_cache.h).
  absl::Status status = PrepareThroughPlanCache(*s);
  if (status.ok()) {
    if (buffer_handles_) KeepApplicationBuffers(*s);
    s->allocated = true;
  }
  if (profiler_ != nullptr) profiler_->End(event);
  return status;
}

absl::Status Interpreter::PrepareAll(SubgraphState& s,
                                     const PreparedPlan* cached) {
  for (int32_t index : s.execution_plan) {
    NodeRecord& node = s.node(index);
    if (node.is_partition()) {
      KILN_RETURN_IF_ERROR(PreparePartition(s, node, cached));
    } else if (node.host_intrinsic) {
      KILN_RETURN_IF_ERROR(PrepareIntrinsic(s, node));
    } else {
      KILN_RETURN_IF_ERROR(PrepareModelNode(s, node, cached));
    }
  }
  return absl::OkStatus();
}

absl::Status Interpreter::PrepareModelNode(SubgraphState& s, NodeRecord& node,
                                           const PreparedPlan* cached) {
  if (cached != nullptr && node.state_per_signature) {
    RestoreKernelNode(s, node, *cached);
    return absl::OkStatus();
  }
  return PrepareKernelNode(s, node, /*at_invoke=*/false);
}

absl::Status Interpreter::PreparePartition(SubgraphState& s, NodeRecord& node,
                                           const PreparedPlan* cached) {
  // The original nodes are prepared with their kernels first: that gives
  // every tensor its shape, and the fallback its preparation.
  bool deferred = false;
  for (int32_t original : node.node().delegated_nodes) {
    NodeRecord& o = s.node(original);
    KILN_RETURN_IF_ERROR(PrepareModelNode(s, o, cached));
    deferred = deferred || o.deferred;
  }
  // The cached plan's partition state, already prepared for these shapes
  // (or to be prepared at invoke when they depend on values).
  const bool restored =
      cached != nullptr && RestorePartitionState(s, node, *cached);
  if (deferred) {
    node.deferred = true;
    return absl::OkStatus();
  }
  const PartitionRecord& p = s.partition_of(node);
  if (p.fell_back || !p.initialized || restored) return absl::OkStatus();
  // A failure falls back to the kernels (CallPartition warns).
  CallPartition(s, node, PluginStage::kPartitionPrepare).IgnoreError();
  return absl::OkStatus();
}

absl::Status Interpreter::PrepareKernelNode(SubgraphState& s, NodeRecord& node,
                                            bool at_invoke) {
  const NodeDesc& desc = node.node();
  if (at_invoke) {
    for (int32_t t : desc.outputs) {
      if (t < 0) continue;
      TensorRecord& x = s.tensor(t);
      if (x.is_constant() || x.desc->is_variable) continue;
      x.has_rank = false;
      x.shape.clear();
      x.type_override.reset();
    }
    KILN_RETURN_IF_ERROR(CallKernel(s, node, PluginStage::kPrepare));
    return AllocateDynamicOutputs(s, node);
  }
  for (int32_t t : desc.inputs) {
    if (t >= 0 && s.tensor(t).dynamic) {
      Defer(s, node);
      return absl::OkStatus();
    }
  }
  KILN_RETURN_IF_ERROR(CallKernel(s, node, PluginStage::kPrepare));
  for (int32_t t : desc.outputs) {
    if (t >= 0 && !s.tensor(t).has_rank) {
      Defer(s, node);
      return absl::OkStatus();
    }
  }
  EvaluateAtPrepare(s, node);
  return absl::OkStatus();
}

absl::Status Interpreter::AllocateDynamicOutputs(SubgraphState& s,
                                                 const NodeRecord& node) {
  for (int32_t t : node.node().outputs) {
    if (t < 0 || !s.tensor(t).dynamic) continue;
    TensorRecord& x = s.tensor(t);
    if (!x.has_rank) {
      return absl::InternalError(absl::StrCat(
          NodeLabel(s, node), ": prepare left output tensor ", t, " '",
          x.desc->name,
          "' without a shape although every input holds data; the kernel "
          "must size its outputs (report this to the plugin's author)"));
    }
    if (x.ElementType() == KILN_TYPE_STRING) continue;  // sized by its writer
    KILN_RETURN_IF_ERROR(CheckTensorBytes(
        absl::StrCat(NodeLabel(s, node), ": output tensor ", t), x));
    const size_t need = x.RequiredBytes();
    if (x.storage == TensorStorage::kOwned && x.bytes == need) continue;
    if (x.owned.size() == need) {
      // The buffer of an earlier invoke, kept across AllocateTensors: its
      // stale values are overwritten by the node, as on every invoke.
      x.storage = TensorStorage::kOwned;
      x.data = x.owned.data();
      x.bytes = need;
    } else {
      x.AllocateOwned(need);
    }
  }
  return absl::OkStatus();
}

}  // namespace kiln
