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
#include "interpreter/interpreter.h"
#include "interpreter/partitioner.h"
#include "interpreter/subgraph_state.h"
#include "kiln/delegate_settings.pb.h"
#include "kiln/kiln_builtin_ops.h"
#include "plugin/delegate_declaration.h"
#include "plugin/settings_schema.h"

namespace kiln {
namespace {

// A request's kiln.DelegateSettings: serialized for the plugin, and the
// fields the host reads.
struct DecodedSettings {
  std::string bytes;
  int32_t min_partition_size = 1;
};

// Applies the request's settings file: the delegate's own message goes to
// vendor_settings, kiln.DelegateSettings is merged over `settings`.
absl::Status ApplySettingsFile(const DelegateRequest& request,
                               const DelegateDeclaration& declared,
                               kiln::DelegateSettings* settings) {
  const std::string where =
      absl::StrCat("settings of delegate '", request.name, "' (",
                   request.settings_file_name, ")");
  const bool vendor = !declared.settings_type.empty() &&
                      declared.settings_type != kDelegateSettingsType;
  if (declared.settings == nullptr) {
    if (!vendor) {
      return absl::InvalidArgumentError(absl::StrCat(
          where,
          ": the delegate declares no settings message "
          "(settings_type is NULL), so it takes no settings file"));
    }
    // No descriptor set: the bytes go to the delegate unread (binary only).
    settings->set_vendor_settings(request.settings_file);
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> bytes = declared.settings->ParseFile(
      request.settings_file_name, request.settings_file);
  if (!bytes.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "delegate '", request.name, "': ", bytes.status().message()));
  }
  if (vendor) {
    settings->set_vendor_settings(*bytes);
    return absl::OkStatus();
  }
  kiln::DelegateSettings from_file;
  from_file.ParseFromString(*bytes);
  settings->MergeFrom(from_file);
  return absl::OkStatus();
}

absl::StatusOr<DecodedSettings> DecodeSettings(
    const DelegateRequest& request, const DelegateDeclaration& declared) {
  kiln::DelegateSettings settings;
  DecodedSettings decoded;
  if (request.is_text) {
    absl::StatusOr<std::string> bytes =
        SettingsSchema::DelegateSettings()->ParseText(request.text_settings);
    if (!bytes.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("settings of delegate '",
                                                     request.name, "' are ",
                                                     bytes.status().message()));
    }
    decoded.bytes = *std::move(bytes);
  } else {
    decoded.bytes = request.settings;
  }
  if (!decoded.bytes.empty() && !settings.ParseFromString(decoded.bytes)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "settings of delegate '", request.name, "' (", decoded.bytes.size(),
        " bytes) are not a serialized kiln.DelegateSettings message"));
  }
  if (!request.settings_file_name.empty()) {
    KILN_RETURN_IF_ERROR(ApplySettingsFile(request, declared, &settings));
    decoded.bytes = settings.SerializeAsString();
  }
  if (settings.min_partition_size() < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "settings of delegate '", request.name, "': min_partition_size is ",
        settings.min_partition_size(), "; it must be 0 (default) or more"));
  }
  if (settings.min_partition_size() > 0) {
    decoded.min_partition_size = settings.min_partition_size();
  }
  return decoded;
}

// The claimed nodes split into partitions (partitioner.h) of at least
// `min_size` nodes each.
std::vector<std::vector<int32_t>> GroupClaimedNodes(
    const DependencyGraph& deps, const std::vector<int32_t>& claimed,
    int32_t min_size) {
  std::vector<std::vector<int32_t>> groups;
  for (auto& group : PartitionClaimedNodes(deps, claimed)) {
    if (static_cast<int32_t>(group.size()) >= min_size) {
      groups.push_back(std::move(group));
    }
  }
  return groups;
}

// The partition node standing for `group`: its inputs are the tensors the
// group reads from outside, its outputs the tensors it writes that a node
// outside or the subgraph's outputs read.
NodeDesc PartitionNode(const SubgraphState& s,
                       const std::vector<int32_t>& group) {
  const std::set<int32_t> members(group.begin(), group.end());
  std::set<int32_t> produced;
  for (int32_t n : group) {
    for (int32_t t : s.node(n).node().outputs) {
      if (t >= 0) produced.insert(t);
    }
  }
  std::set<int32_t> used_outside(s.model().outputs.begin(),
                                 s.model().outputs.end());
  for (int32_t n : s.execution_plan) {
    if (members.count(n)) continue;
    for (int32_t t : s.node(n).node().inputs) {
      if (t >= 0) used_outside.insert(t);
    }
  }
  NodeDesc p;
  p.builtin_code = KILN_OP_DELEGATE;
  p.version = 1;
  p.delegated_nodes = group;
  std::set<int32_t> seen_in, seen_out;
  for (int32_t n : group) {
    const NodeDesc& node = s.node(n).node();
    for (int32_t t : node.inputs) {
      if (t >= 0 && !produced.count(t) && seen_in.insert(t).second) {
        p.inputs.push_back(t);
      }
    }
    for (int32_t t : node.outputs) {
      if (t >= 0 && used_outside.count(t) && seen_out.insert(t).second) {
        p.outputs.push_back(t);
      }
    }
  }
  return p;
}

// Refuses the claims `delegate`'s declared supported_ops do not cover
// (nothing when it declares none).
absl::Status CheckClaimsDeclared(const DelegateInstance& delegate,
                                 const SubgraphState& s,
                                 const std::vector<int32_t>& claimed) {
  const DelegateDeclaration& declared = delegate.plugin->delegate_declaration();
  if (!declared.ops_declared) return absl::OkStatus();
  for (int32_t n : claimed) {
    const NodeDesc& node = s.node(n).node();
    ClaimedNode c{node.builtin_code, node.custom_name, node.version, {}};
    for (const std::vector<int32_t>* list : {&node.inputs, &node.outputs}) {
      for (int32_t t : *list) {
        if (t >= 0) c.tensor_types.push_back(s.tensor(t).ElementType());
      }
    }
    const std::string why = UncoveredClaim(declared, c);
    if (why.empty()) continue;
    return absl::FailedPreconditionError(absl::StrCat(
        delegate.Label(), " claimed subgraph ", s.index(), " node ", n, " (",
        node.OpName(), " version ", node.version,
        "), which its declared supported_ops do not cover: ", why,
        ". The host refuses the claim: the delegate must claim only what it "
        "declares (`kiln plugin inspect ",
        delegate.plugin->path(), "` lists it); report this to its author"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::shared_ptr<LoadedPlugin>> Interpreter::FindDelegatePlugin(
    const std::string& name) const {
  std::vector<std::string> available;
  for (const auto& p : plugins_) {
    const KilnDelegateInterface* d = p->delegate();
    if (d == nullptr || d->name == nullptr) continue;
    if (name == d->name) return p;
    available.push_back(
        absl::StrCat("'", d->name, "' (plugin ", p->Describe(), ")"));
  }
  return absl::NotFoundError(absl::StrCat(
      "no loaded plugin provides a delegate named '", name, "'; ",
      available.empty()
          ? "no loaded plugin has a delegate (check the plugin search path)"
          : absl::StrCat("available delegates: ",
                         absl::StrJoin(available, ", "))));
}

std::vector<std::string> Interpreter::ActiveDelegates() const {
  std::vector<std::string> names;
  for (const auto& d : delegates_) names.push_back(d->name);
  return names;
}

absl::Status Interpreter::ApplyDelegate(const DelegateRequest& request) {
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<LoadedPlugin> plugin,
                        FindDelegatePlugin(request.name));
  KILN_ASSIGN_OR_RETURN(
      const DecodedSettings settings,
      DecodeSettings(request, plugin->delegate_declaration()));
  auto delegate = std::make_unique<DelegateInstance>();
  delegate->name = request.name;
  delegate->plugin = plugin;
  delegate->iface = plugin->delegate();
  delegate->min_partition_size = settings.min_partition_size;
  PluginCall call;
  call.stage = PluginStage::kCreate;
  call.plugin = plugin.get();
  call.delegate = delegate.get();
  call.profiler = profiler_;
  call.thread_pool = thread_pool_.get();
  const KilnDelegateInterface& iface = *delegate->iface;
  const std::string& bytes = settings.bytes;
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
      [&] { return delegate->Label(); });
  if (created.code() == absl::StatusCode::kUnavailable) {
    const std::string text =
        absl::StrCat(created.message(), ". Running on kernel plugins instead");
    warnings_.push_back(text);
    std::fprintf(stderr, "kiln: warning: %s\n", text.c_str());
    return absl::OkStatus();
  }
  KILN_RETURN_IF_ERROR(created);
  delegate->instance = instance;
  delegate->buffer_handles =
      ServesBufferHandles(iface, plugin->negotiated_version());
  delegate->profiler = &profiler_;
  buffer_handles_ = buffer_handles_ || delegate->buffer_handles;
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
  const SubgraphState& s = *subgraphs_[static_cast<size_t>(subgraph)];
  const std::set<int32_t> taken(claimed.begin(), claimed.end());
  for (int32_t n = 0; n < s.num_model_nodes(); ++n) {
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

absl::StatusOr<std::vector<int32_t>> Interpreter::ClaimNodes(
    DelegateInstance& delegate, SubgraphState& s) {
  std::vector<int32_t> claimed;
  PluginCall call;
  call.stage = PluginStage::kPartition;
  call.graph = &s;
  call.plugin = delegate.plugin.get();
  call.claimed_nodes = &claimed;
  call.subgraph = s.index();
  call.delegate = &delegate;
  call.profiler = profiler_;
  call.thread_pool = thread_pool_.get();
  KILN_RETURN_IF_ERROR(
      CallDelegate(*delegate.iface, delegate.instance, call, nullptr, [&] {
        return absl::StrCat(delegate.Label(), ", subgraph ", s.index());
      }));
  RecordDeclineReasons(delegate, s.index(), claimed);
  // Only kernel nodes of the model that no earlier delegate took.
  std::vector<int32_t> eligible;
  for (int32_t n : claimed) {
    if (n < 0 || n >= s.num_model_nodes()) continue;
    const NodeRecord& node = s.node(n);
    if (node.host_intrinsic || node.delegated_to >= 0) continue;
    eligible.push_back(n);
  }
  KILN_RETURN_IF_ERROR(CheckClaimsDeclared(delegate, s, eligible));
  return eligible;
}

absl::Status Interpreter::DelegateSubgraph(DelegateInstance& delegate,
                                           int subgraph) {
  SubgraphState& s = *subgraphs_[static_cast<size_t>(subgraph)];
  KILN_ASSIGN_OR_RETURN(const std::vector<int32_t> eligible,
                        ClaimNodes(delegate, s));
  if (eligible.empty()) return absl::OkStatus();
  // Host-intrinsic nodes keep their relative order (side effects).
  std::vector<int32_t> sequenced;
  for (int32_t n : s.execution_plan) {
    if (s.node(n).host_intrinsic) sequenced.push_back(n);
  }
  const DependencyGraph deps(s, s.execution_plan, sequenced);
  const std::vector<std::vector<int32_t>> groups =
      GroupClaimedNodes(deps, eligible, delegate.min_partition_size);
  if (groups.empty()) return absl::OkStatus();
  KILN_ASSIGN_OR_RETURN(const std::vector<PlanStep> order,
                        ContractedOrder(deps, groups));
  std::vector<int32_t> partition_nodes;
  for (const std::vector<int32_t>& group : groups) {
    partition_nodes.push_back(
        s.AddPartition(PartitionNode(s, group), &delegate));
  }
  std::vector<int32_t> plan;
  for (const PlanStep& step : order) {
    plan.push_back(step.is_partition
                       ? partition_nodes[static_cast<size_t>(step.index)]
                       : step.index);
  }
  s.execution_plan = std::move(plan);
  InitPartitions(s, partition_nodes);
  return absl::OkStatus();
}

void Interpreter::InitPartitions(SubgraphState& s,
                                 const std::vector<int32_t>& nodes) {
  for (int32_t index : nodes) {
    NodeRecord& node = s.node(index);
    // A failure falls back to the kernels (CallPartition warns).
    s.partition_of(node).initialized =
        CallPartition(s, node, PluginStage::kPartitionInit).ok();
  }
}

}  // namespace kiln
