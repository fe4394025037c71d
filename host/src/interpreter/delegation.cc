// Host side of delegation: create delegates, collect the nodes they claim,
// replace each partition with a partition node. See interpreter.h.
#include <cstdio>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"
#include "interpreter/interpreter.h"
#include "interpreter/partitioner.h"
#include "interpreter/subgraph_runtime.h"
#include "kiln/delegate_settings.pb.h"
#include "kiln/kiln_builtin_ops.h"

namespace kiln {
namespace {

class CollectingErrors : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    errors.push_back(absl::StrCat("line ", line + 1, ", column ", column + 1,
                                  ": ", message));
  }
  void AddWarning(int, google::protobuf::io::ColumnNumber,
                  const std::string&) override {}
  std::vector<std::string> errors;
};

std::string DelegateLabel(const DelegateInstance& delegate) {
  return absl::StrCat("delegate '", delegate.name, "' (",
                      delegate.plugin->path(), ")");
}

}  // namespace

absl::Status Interpreter::ApplyDelegate(const DelegateRequest& request) {
  std::shared_ptr<LoadedPlugin> plugin;
  std::vector<std::string> available;
  for (const auto& p : plugins_) {
    const KilnDelegateInterface* d = p->delegate();
    if (d == nullptr || d->name == nullptr) continue;
    available.push_back(
        absl::StrCat("'", d->name, "' (plugin ", p->Describe(), ")"));
    if (plugin == nullptr && request.name == d->name) plugin = p;
  }
  if (plugin == nullptr) {
    return absl::NotFoundError(absl::StrCat(
        "no loaded plugin provides a delegate named '", request.name, "'; ",
        available.empty()
            ? "no loaded plugin has a delegate (check the plugin search path)"
            : absl::StrCat("available delegates: ",
                           absl::StrJoin(available, ", "))));
  }
  kiln::DelegateSettings settings;
  std::string bytes;
  if (request.is_text) {
    google::protobuf::TextFormat::Parser parser;
    CollectingErrors errors;
    parser.RecordErrorsTo(&errors);
    if (!parser.ParseFromString(request.text_settings, &settings)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "settings of delegate '", request.name,
          "' are not valid kiln.DelegateSettings text format: ",
          errors.errors.empty() ? "parse error"
                                : absl::StrJoin(errors.errors, "; ")));
    }
    bytes = settings.SerializeAsString();
  } else {
    bytes = request.settings;
    if (!bytes.empty() && !settings.ParseFromString(bytes)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "settings of delegate '", request.name, "' (", bytes.size(),
          " bytes) are not a serialized kiln.DelegateSettings message"));
    }
  }
  if (settings.min_partition_size() < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "settings of delegate '", request.name, "': min_partition_size is ",
        settings.min_partition_size(), "; it must be 0 (default) or more"));
  }

  auto delegate = std::make_unique<DelegateInstance>();
  delegate->name = request.name;
  delegate->plugin = plugin;
  delegate->iface = plugin->delegate();
  delegate->min_partition_size =
      settings.min_partition_size() > 0 ? settings.min_partition_size() : 1;
  PluginCall call;
  call.stage = PluginStage::kCreate;
  call.plugin = plugin.get();
  const KilnDelegateInterface& iface = *delegate->iface;
  void* instance = nullptr;
  const absl::Status created = CallPlugin(
      call,
      [&](KilnOpaqueContext* c, KilnOpaqueNode*) {
        return iface.create(
            iface.user_data, c,
            bytes.empty() ? nullptr
                          : reinterpret_cast<const uint8_t*>(bytes.data()),
            bytes.size(), &instance);
      },
      [&] { return DelegateLabel(*delegate); });
  if (created.code() == absl::StatusCode::kUnavailable) {
    const std::string text =
        absl::StrCat(created.message(), ". Running on kernel plugins instead");
    warnings_.push_back(text);
    std::fprintf(stderr, "kiln: warning: %s\n", text.c_str());
    return absl::OkStatus();
  }
  KILN_RETURN_IF_ERROR(created);
  delegate->instance = instance;
  delegates_.push_back(std::move(delegate));
  for (int i = 0; i < num_subgraphs(); ++i) {
    KILN_RETURN_IF_ERROR(DelegateSubgraph(*delegates_.back(), i));
  }
  return absl::OkStatus();
}

void Interpreter::RecordDeclineReasons(DelegateInstance& delegate, int subgraph,
                                       const std::vector<int32_t>& claimed) {
  if (delegate.declined.size() < subgraphs_.size()) {
    delegate.declined.resize(subgraphs_.size());
  }
  if (delegate.decline_reasons == nullptr) {
    for (const KilnExtensionBase* e = delegate.plugin->descriptor()->extensions;
         e != nullptr; e = e->next) {
      if (std::string(e->id) == KILN_DELEGATE_DECLINE_REASONS_EXTENSION_ID &&
          KILN_STRUCT_HAS_FIELD(KilnDelegateDeclineReasonsExtension,
                                e->struct_size, decline_reason)) {
        delegate.decline_reasons =
            reinterpret_cast<const KilnDelegateDeclineReasonsExtension*>(e);
        break;
      }
    }
  }
  if (delegate.decline_reasons == nullptr ||
      delegate.decline_reasons->decline_reason == nullptr) {
    return;
  }
  const SubgraphRuntime& s = *subgraphs_[static_cast<size_t>(subgraph)];
  const std::set<int32_t> taken(claimed.begin(), claimed.end());
  for (int32_t n = 0; n < s.num_model_nodes; ++n) {
    if (taken.count(n) > 0) continue;
    const char* why =
        delegate.decline_reasons->decline_reason(delegate.instance, n);
    if (why != nullptr) {
      delegate.declined[static_cast<size_t>(subgraph)][n] = why;
    }
  }
}

std::string Interpreter::DelegateDeclineReason(int subgraph,
                                               int node_index) const {
  std::string out;
  for (const auto& d : delegates_) {
    if (subgraph < 0 || static_cast<size_t>(subgraph) >= d->declined.size()) {
      continue;
    }
    const auto& reasons = d->declined[static_cast<size_t>(subgraph)];
    auto it = reasons.find(node_index);
    if (it == reasons.end()) continue;
    if (!out.empty()) out += "; ";
    out += d->name + ": " + it->second;
  }
  return out;
}

absl::Status Interpreter::DelegateSubgraph(DelegateInstance& delegate,
                                           int subgraph) {
  SubgraphRuntime& s = *subgraphs_[static_cast<size_t>(subgraph)];
  Graph& g = s.graph;
  std::vector<int32_t> claimed;
  PluginCall call;
  call.stage = PluginStage::kPartition;
  call.graph = &g;
  call.plugin = delegate.plugin.get();
  call.claimed_nodes = &claimed;
  KILN_RETURN_IF_ERROR(
      CallDelegate(*delegate.iface, delegate.instance, call, nullptr, [&] {
        return absl::StrCat(DelegateLabel(delegate), ", subgraph ", subgraph);
      }));
  RecordDeclineReasons(delegate, subgraph, claimed);
  // Only kernel nodes of the model that no earlier delegate took.
  std::vector<int32_t> eligible;
  for (int32_t n : claimed) {
    if (n < 0 || n >= s.num_model_nodes) continue;
    if (s.host_intrinsic[static_cast<size_t>(n)]) continue;
    if (s.delegated_by[static_cast<size_t>(n)] >= 0) continue;
    eligible.push_back(n);
  }
  if (eligible.empty()) return absl::OkStatus();
  std::vector<int32_t> sequenced;
  for (int32_t n : g.execution_plan) {
    if (s.host_intrinsic[static_cast<size_t>(n)]) sequenced.push_back(n);
  }
  const DependencyGraph deps(g, g.execution_plan, sequenced);
  std::vector<std::vector<int32_t>> groups;
  for (auto& group : PartitionClaimedNodes(deps, eligible)) {
    if (static_cast<int32_t>(group.size()) >= delegate.min_partition_size) {
      groups.push_back(std::move(group));
    }
  }
  if (groups.empty()) return absl::OkStatus();
  KILN_ASSIGN_OR_RETURN(const std::vector<PlanStep> order,
                        ContractedOrder(deps, groups));

  std::vector<char> is_output(g.tensors.size(), 0);
  for (int32_t t : g.outputs) is_output[static_cast<size_t>(t)] = 1;
  std::vector<int32_t> partition_nodes;
  for (const std::vector<int32_t>& group : groups) {
    std::set<int32_t> members(group.begin(), group.end());
    std::set<int32_t> produced;
    for (int32_t n : group) {
      for (int32_t t : g.nodes[static_cast<size_t>(n)].outputs) {
        if (t >= 0) produced.insert(t);
      }
    }
    std::set<int32_t> used_outside;
    for (int32_t n : g.execution_plan) {
      if (members.count(n)) continue;
      for (int32_t t : g.nodes[static_cast<size_t>(n)].inputs) {
        if (t >= 0) used_outside.insert(t);
      }
    }
    Node p;
    p.index = static_cast<int32_t>(g.nodes.size());
    p.builtin_code = KILN_OP_DELEGATE;
    p.version = 1;
    p.delegated_nodes = group;
    p.plugin = delegate.plugin.get();
    std::set<int32_t> seen_in, seen_out;
    for (int32_t n : group) {
      const Node& node = g.nodes[static_cast<size_t>(n)];
      for (int32_t t : node.inputs) {
        if (t >= 0 && !produced.count(t) && seen_in.insert(t).second) {
          p.inputs.push_back(t);
        }
      }
      for (int32_t t : node.outputs) {
        if (t >= 0 &&
            (used_outside.count(t) || is_output[static_cast<size_t>(t)]) &&
            seen_out.insert(t).second) {
          p.outputs.push_back(t);
        }
      }
    }
    if (g.nodes.size() == g.nodes.capacity()) {
      return absl::InternalError("partition node storage exhausted");
    }
    const int32_t partition_index = static_cast<int32_t>(s.partitions.size());
    for (int32_t n : group)
      s.delegated_by[static_cast<size_t>(n)] = partition_index;
    partition_nodes.push_back(p.index);
    g.nodes.push_back(std::move(p));
    s.host_intrinsic.push_back(0);
    s.partition_of_node.push_back(partition_index);
    s.node_deferred.push_back(0);
    PartitionRuntime pr;
    pr.node_index = partition_nodes.back();
    pr.delegate = &delegate;
    s.partitions.push_back(std::move(pr));
  }
  std::vector<int32_t> plan;
  for (const PlanStep& step : order) {
    plan.push_back(step.is_partition
                       ? partition_nodes[static_cast<size_t>(step.index)]
                       : step.index);
  }
  g.execution_plan = std::move(plan);

  for (int32_t node_index : partition_nodes) {
    PartitionRuntime& pr = s.partitions[static_cast<size_t>(
        s.partition_of_node[static_cast<size_t>(node_index)])];
    // A failure falls back to the kernels (CallPartition warns).
    pr.initialized = CallPartition(s, pr, PluginStage::kPartitionInit).ok();
  }
  return absl::OkStatus();
}

}  // namespace kiln
