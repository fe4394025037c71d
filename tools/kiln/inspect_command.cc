// `kiln inspect MODEL [--json] [plugin and delegate flags]`: subgraphs,
// tensors, ops with versions, custom ops, signatures, metadata, the minimum
// Kiln release the model needs, and for every node the plugin that would run
// it or why none can (and, with --delegate, whether the delegate claims it).
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "cli_common.h"
#include "commands.h"
#include "interpreter/interpreter.h"
#include "interpreter/op_resolution.h"
#include "interpreter/op_support_table.h"
#include "model/model.h"
#include "plugin/negotiation.h"

namespace kiln::cli {
namespace {

struct InspectOptions {
  std::string model_path;
  bool json = false;
  InterpreterOptions interpreter;  // plugins and delegates
};

// ---- The collected facts -------------------------------------------------

struct TensorFacts {
  size_t index = 0;
  std::string name;
  std::string dtype;
  std::optional<std::vector<int32_t>> shape;  // nullopt: rank unknown
  std::vector<int32_t> shape_signature;       // empty when the model has none
  bool constant = false;
  bool variable = false;
  bool quantized = false;
  size_t num_scales = 0;  // when quantized
  int32_t quantized_dimension = 0;
  int32_t block_size = 0;  // blockwise quantization: > 0
  size_t num_blocks = 0;   // scales of a blockwise tensor
};

// Whether the requested delegates claim a node, and why not.
struct DelegateFacts {
  bool claimed = false;
  std::string name;             // when claimed
  int32_t partition_node = -1;  // when claimed
  std::string reason;           // when not claimed
};

struct NodeFacts {
  int32_t index = 0;
  std::string op;
  int32_t version = 1;
  std::vector<int32_t> inputs, outputs;
  std::optional<std::string> runs_on;  // "host" or a plugin path
  // Every loaded plugin with a kernel for this op version, in priority
  // order (plugin_loader.h); the first is runs_on.
  std::vector<std::string> candidates;
  std::string unsupported_reason;         // when nothing runs it
  std::optional<DelegateFacts> delegate;  // only with --delegate
  // Evaluated once at creation (constant folding; only with --delegate).
  bool folded = false;
};

struct SubgraphFacts {
  int index = 0;
  std::string name;
  std::vector<int32_t> inputs, outputs;
  std::vector<TensorFacts> tensors;
  std::vector<NodeFacts> nodes;
};

struct SignatureFacts {
  std::string key;
  int32_t subgraph = 0;
  std::vector<std::pair<std::string, int32_t>> inputs, outputs;  // name, tensor
};

struct MetadataFacts {
  std::string name;
  size_t bytes = 0;
  std::string preview;  // printable prefix of the contents
};

struct InspectReport {
  std::string model_path;
  uint32_t schema_version = 0;
  std::string description;
  size_t bytes = 0;
  std::string min_runtime_version_metadata;
  std::vector<SubgraphFacts> subgraphs;
  std::map<std::string, int> custom_ops;  // custom op name -> node count
  std::vector<SignatureFacts> signatures;
  std::vector<MetadataFacts> metadata;
  // The oldest release whose in-tree plugins run every op; nullopt when no
  // release runs them all.
  std::optional<std::string> min_kiln_release;
  std::vector<PluginFacts> plugins;
};

// ---- Parse ---------------------------------------------------------------

FlagParser InspectFlags(InspectOptions& o) {
  FlagParser flags(
      "kiln inspect",
      "Describes MODEL and, for every node, which plugin would run it (or why\n"
      "none can). With --delegate, also whether the delegate claims it.");
  flags.Positional("MODEL", &o.model_path, "the model file (.tflite)")
      .Bool("--json", &o.json, "machine-readable output");
  AddPluginFlags(flags, &o.interpreter.plugins);
  AddDelegateFlags(flags, &o.interpreter.delegates);
  return flags;
}

// ---- Collect -------------------------------------------------------------

// The plugin that would run `node`, or why none can.
void ResolveNode(const Node& node,
                 const std::vector<std::shared_ptr<LoadedPlugin>>& plugins,
                 NodeFacts* facts) {
  if (IsHostIntrinsicOp(node.builtin_code)) {
    if (node.version <= HostIntrinsicMaxVersion(node.builtin_code)) {
      facts->runs_on = "host";
    } else {
      facts->unsupported_reason =
          absl::StrCat("the host runs ", node.OpName(), " up to v",
                       HostIntrinsicMaxVersion(node.builtin_code));
    }
    return;
  }
  std::vector<std::string> offers;
  for (const auto& p : plugins) {
    for (const KilnKernel* k : p->kernels()) {
      if (k->builtin_code != node.builtin_code) continue;
      if (node.builtin_code == KILN_OP_CUSTOM &&
          node.custom_name != k->custom_name) {
        continue;
      }
      if (node.version >= k->min_version && node.version <= k->max_version) {
        facts->candidates.push_back(p->path());
      } else {
        offers.push_back(absl::StrCat("v", k->min_version, "..v",
                                      k->max_version, " from ", p->name()));
      }
    }
  }
  // `plugins` is in priority order: the first candidate runs the node.
  if (!facts->candidates.empty()) {
    facts->runs_on = facts->candidates.front();
    return;
  }
  if (node.builtin_code == KILN_OP_CUSTOM &&
      node.custom_name.rfind("Flex", 0) == 0) {
    facts->unsupported_reason =
        "TensorFlow fallback (Flex) ops are not supported by Kiln";
    return;
  }
  std::string& reason = facts->unsupported_reason;
  reason = offers.empty()
               ? absl::StrCat("no loaded plugin implements ", node.OpName())
               : absl::StrCat("v", node.version, " is not covered (",
                              absl::StrJoin(offers, ", "), ")");
  std::optional<uint32_t> first =
      FirstReleaseSupporting(node.builtin_code, node.custom_name, node.version);
  if (first.has_value()) {
    absl::StrAppend(&reason, "; Kiln ", ReleaseString(*first),
                    " and later support it with their in-tree plugins");
  }
}

// The delegates' view of the models' nodes: an interpreter created with the
// requested delegates, or why it could not be created.
struct DelegationView {
  std::unique_ptr<Interpreter> interpreter;
  std::string creation_error;
};

DelegateFacts DelegateFactsFor(const Node& node, int subgraph,
                               const std::vector<NodeInfo>& infos,
                               const DelegationView& view) {
  for (const NodeInfo& info : infos) {
    if (info.index == node.index && info.delegated) {
      return {true, info.delegate_name, info.partition_node, ""};
    }
  }
  DelegateFacts d;
  d.reason = view.interpreter
                 ? view.interpreter->DelegateDeclineReason(subgraph, node.index)
                 : view.creation_error;
  if (d.reason.empty()) {
    d.reason = IsHostIntrinsicOp(node.builtin_code)
                   ? "host-intrinsic ops are never delegated"
                   : "not claimed (the delegate gave no reason)";
  }
  return d;
}

TensorFacts CollectTensor(const Tensor& x, size_t index) {
  TensorFacts t;
  t.index = index;
  t.name = x.name;
  t.dtype = DtypeName(x.type);
  if (x.has_rank) t.shape = x.shape;
  t.shape_signature = x.shape_signature;
  t.constant = x.is_constant();
  t.variable = x.is_variable;
  t.quantized = x.quantization.quantized();
  t.num_scales = x.quantization.scales.size();
  t.quantized_dimension = x.quantization.quantized_dimension;
  t.block_size = x.quantization.block_size;
  t.num_blocks = x.quantization.block_scales.size();
  return t;
}

// Tracks the oldest release that runs every op seen.
struct MinimumRelease {
  uint32_t version = 0;
  bool unsupported_anywhere = false;

  void Add(const Node& n) {
    std::optional<uint32_t> first =
        IsHostIntrinsicOp(n.builtin_code)
            ? std::optional<uint32_t>(KILN_MAKE_VERSION(0, 1, 0))
            : FirstReleaseSupporting(n.builtin_code, n.custom_name, n.version);
    if (first.has_value()) {
      version = std::max(version, *first);
    } else if (n.builtin_code != KILN_OP_CUSTOM) {
      unsupported_anywhere = true;
    }
  }
};

struct CollectContext {
  std::vector<std::shared_ptr<LoadedPlugin>> plugins;
  const DelegationView* delegation = nullptr;  // null without --delegate
  MinimumRelease release;
  std::map<std::string, int>* custom_ops = nullptr;
};

SubgraphFacts CollectSubgraph(const Graph& g, int index, CollectContext& ctx) {
  SubgraphFacts sg;
  sg.index = index;
  sg.name = g.name;
  sg.inputs = g.inputs;
  sg.outputs = g.outputs;
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    sg.tensors.push_back(CollectTensor(g.tensors[t], t));
  }
  std::vector<NodeInfo> infos;
  if (ctx.delegation != nullptr && ctx.delegation->interpreter) {
    infos = ctx.delegation->interpreter->DescribeNodes(index);
  }
  for (const Node& n : g.nodes) {
    NodeFacts node;
    node.index = n.index;
    node.op = n.OpName();
    node.version = n.version;
    node.inputs = n.inputs;
    node.outputs = n.outputs;
    if (n.builtin_code == KILN_OP_CUSTOM) ++(*ctx.custom_ops)[n.custom_name];
    ResolveNode(n, ctx.plugins, &node);
    ctx.release.Add(n);
    if (ctx.delegation != nullptr) {
      node.delegate = DelegateFactsFor(n, index, infos, *ctx.delegation);
      for (const NodeInfo& info : infos) {
        if (info.index == n.index) node.folded = info.folded;
      }
    }
    sg.nodes.push_back(std::move(node));
  }
  return sg;
}

std::string MetadataPreview(const MetadataEntry& m) {
  std::string s;
  const size_t n = std::min<size_t>(m.size, 48);
  for (size_t i = 0; i < n; ++i) {
    const char c = static_cast<char>(m.data[i]);
    if (c == '\0') break;
    s += (c >= 32 && c < 127) ? c : '.';
  }
  return s;
}

void CollectModelTables(const Model& model, InspectReport& r) {
  for (const Signature& sig : model.signatures()) {
    SignatureFacts s{sig.key, sig.subgraph_index, {}, {}};
    for (const auto& t : sig.inputs)
      s.inputs.emplace_back(t.name, t.tensor_index);
    for (const auto& t : sig.outputs) {
      s.outputs.emplace_back(t.name, t.tensor_index);
    }
    r.signatures.push_back(std::move(s));
  }
  for (const MetadataEntry& m : model.metadata()) {
    r.metadata.push_back({m.name, m.size, MetadataPreview(m)});
  }
}

// With delegates, a real interpreter tells what they claim.
DelegationView CreateDelegationView(std::shared_ptr<const Model> model,
                                    const InterpreterOptions& options) {
  DelegationView view;
  absl::StatusOr<std::unique_ptr<Interpreter>> created =
      Interpreter::Create(std::move(model), options);
  if (created.ok()) {
    view.interpreter = *std::move(created);
  } else {
    view.creation_error = std::string(created.status().message());
  }
  return view;
}

absl::StatusOr<InspectReport> CollectInspect(const InspectOptions& o) {
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<const Model> loaded,
                        Model::FromFile(o.model_path));
  const Model& model = *loaded;
  const std::vector<PluginLoadRecord> records =
      PluginLoader::LoadAll(o.interpreter.plugins);
  InspectReport r;
  CollectContext ctx;
  ctx.custom_ops = &r.custom_ops;
  for (const PluginLoadRecord& record : records) {
    if (record.plugin) ctx.plugins.push_back(record.plugin);
  }
  DelegationView delegation;
  if (!o.interpreter.delegates.empty()) {
    delegation = CreateDelegationView(loaded, o.interpreter);
    ctx.delegation = &delegation;
  }
  r.model_path = o.model_path;
  r.schema_version = model.schema_version();
  r.description = model.description();
  r.bytes = model.byte_size();
  r.min_runtime_version_metadata = model.min_runtime_version();
  for (int s = 0; s < model.num_subgraphs(); ++s) {
    r.subgraphs.push_back(CollectSubgraph(model.graph(s), s, ctx));
  }
  CollectModelTables(model, r);
  if (!ctx.release.unsupported_anywhere) {
    r.min_kiln_release = ReleaseString(ctx.release.version);
  }
  r.plugins = CollectPluginFacts(records);
  return r;
}

// ---- Render: JSON --------------------------------------------------------

Json TensorToJson(const TensorFacts& t) {
  Json j;
  j["index"] = t.index;
  j["name"] = t.name;
  j["type"] = t.dtype;
  j["shape"] = t.shape.has_value() ? Json(*t.shape) : Json(nullptr);
  if (!t.shape_signature.empty()) j["shape_signature"] = t.shape_signature;
  j["constant"] = t.constant;
  if (t.variable) j["variable"] = true;
  if (t.quantized) {
    j["quantization"] = {{"scales", t.num_scales},
                         {"quantized_dimension", t.quantized_dimension}};
  }
  if (t.block_size > 0) {
    j["quantization"] = {{"scales", t.num_blocks},
                         {"block_size", t.block_size},
                         {"block_dimension", 1}};
  }
  return j;
}

Json NodeToJson(const NodeFacts& n) {
  Json j;
  j["index"] = n.index;
  j["op"] = n.op;
  j["version"] = n.version;
  j["inputs"] = n.inputs;
  j["outputs"] = n.outputs;
  j["runs_on"] = StringOrNull(n.runs_on);
  if (n.candidates.size() > 1) j["candidates"] = n.candidates;
  if (!n.runs_on) j["unsupported_reason"] = n.unsupported_reason;
  if (n.folded) j["folded"] = true;
  if (n.delegate) {
    const DelegateFacts& d = *n.delegate;
    j["delegate"] = d.claimed ? Json{{"claimed", true},
                                     {"name", d.name},
                                     {"partition_node", d.partition_node}}
                              : Json{{"claimed", false}, {"reason", d.reason}};
  }
  return j;
}

Json SubgraphToJson(const SubgraphFacts& s) {
  Json j;
  j["index"] = s.index;
  j["name"] = s.name;
  j["inputs"] = s.inputs;
  j["outputs"] = s.outputs;
  j["tensors"] = Json::array();
  for (const TensorFacts& t : s.tensors)
    j["tensors"].push_back(TensorToJson(t));
  j["nodes"] = Json::array();
  for (const NodeFacts& n : s.nodes) j["nodes"].push_back(NodeToJson(n));
  return j;
}

Json SignatureToJson(const SignatureFacts& s) {
  Json j;
  j["key"] = s.key;
  j["subgraph"] = s.subgraph;
  // "inputs" / "outputs" only when the signature has some.
  for (const auto& [name, tensor] : s.inputs) {
    j["inputs"].push_back({{"name", name}, {"tensor", tensor}});
  }
  for (const auto& [name, tensor] : s.outputs) {
    j["outputs"].push_back({{"name", name}, {"tensor", tensor}});
  }
  return j;
}

Json InspectToJson(const InspectReport& r) {
  Json j;
  j["model"] = r.model_path;
  j["schema_version"] = r.schema_version;
  j["description"] = r.description;
  j["bytes"] = r.bytes;
  j["min_runtime_version_metadata"] = r.min_runtime_version_metadata;
  j["subgraphs"] = Json::array();
  for (const SubgraphFacts& s : r.subgraphs) {
    j["subgraphs"].push_back(SubgraphToJson(s));
  }
  j["custom_ops"] = r.custom_ops;
  j["signatures"] = Json::array();
  for (const SignatureFacts& s : r.signatures) {
    j["signatures"].push_back(SignatureToJson(s));
  }
  j["metadata"] = Json::array();
  for (const MetadataFacts& m : r.metadata) {
    j["metadata"].push_back({{"name", m.name}, {"bytes", m.bytes}});
  }
  j["min_kiln_release"] = StringOrNull(r.min_kiln_release);
  j["plugins"] = Json::array();
  for (const PluginFacts& p : r.plugins) {
    j["plugins"].push_back({{"path", p.path},
                            {"status", p.loaded ? "loaded" : "refused"},
                            {"reason", p.refusal},
                            {"messages", p.messages}});
  }
  return j;
}

// ---- Render: text --------------------------------------------------------

std::string TensorToText(const TensorFacts& t) {
  return absl::StrCat("  t", t.index, " ", t.dtype, " ",
                      t.shape ? CompactList(*t.shape) : "(unknown rank)",
                      t.constant ? " const" : "", t.variable ? " variable" : "",
                      t.quantized ? " quantized" : "",
                      t.block_size > 0
                          ? absl::StrCat(" blockwise-quantized (", t.num_blocks,
                                         " blocks of ", t.block_size, ")")
                          : "",
                      " '", t.name, "'\n");
}

std::string NodeToText(const NodeFacts& n) {
  std::string s =
      absl::StrCat("  #", n.index, " ", n.op, " v", n.version, "  ",
                   CompactList(n.inputs), " -> ", CompactList(n.outputs), "  ");
  absl::StrAppend(&s, n.runs_on ? "runs on " + *n.runs_on
                                : "CANNOT RUN: " + n.unsupported_reason);
  if (n.candidates.size() > 1) {
    absl::StrAppend(
        &s, " (", n.candidates.size(),
        " candidates, won by plugin priority; "
        "also offered by ",
        absl::StrJoin(n.candidates.begin() + 1, n.candidates.end(), ", "), ")");
  }
  if (n.folded) {
    absl::StrAppend(&s, "; folded at creation (constant inputs)");
  } else if (n.delegate) {
    absl::StrAppend(&s, n.delegate->claimed
                            ? "; claimed by " + n.delegate->name
                            : "; not delegated: " + n.delegate->reason);
  }
  return s + "\n";
}

std::string SubgraphToText(const SubgraphFacts& sg) {
  std::string s = absl::StrCat(
      "\nSubgraph ", sg.index, " '", sg.name, "': ", sg.tensors.size(),
      " tensors, ", sg.nodes.size(), " nodes, inputs ", CompactList(sg.inputs),
      ", outputs ", CompactList(sg.outputs), "\n");
  for (const TensorFacts& t : sg.tensors) s += TensorToText(t);
  for (const NodeFacts& n : sg.nodes) s += NodeToText(n);
  return s;
}

std::string TablesToText(const InspectReport& r) {
  std::string s;
  if (!r.custom_ops.empty()) {
    s += "\nCustom ops:";
    for (const auto& [name, count] : r.custom_ops) {
      absl::StrAppend(&s, " ", name, " x", count);
    }
    s += "\n";
  }
  for (const SignatureFacts& sig : r.signatures) {
    absl::StrAppend(&s, "\nSignature '", sig.key, "' (subgraph ", sig.subgraph,
                    ")\n");
    for (const auto& [name, tensor] : sig.inputs) {
      absl::StrAppend(&s, "  inputs '", name, "' -> tensor ", tensor, "\n");
    }
    for (const auto& [name, tensor] : sig.outputs) {
      absl::StrAppend(&s, "  outputs '", name, "' -> tensor ", tensor, "\n");
    }
  }
  if (!r.metadata.empty()) s += "\nMetadata\n";
  for (const MetadataFacts& m : r.metadata) {
    absl::StrAppend(&s, "  ", m.name, " (", m.bytes, " bytes) ", m.preview,
                    "\n");
  }
  return s;
}

std::string InspectToText(const InspectReport& r) {
  std::string s = absl::StrCat("Model       ", r.model_path, " (", r.bytes,
                               " bytes, schema v", r.schema_version, ")\n");
  if (!r.description.empty()) {
    absl::StrAppend(&s, "Description ", r.description, "\n");
  }
  absl::StrAppend(&s, "Needs Kiln  ",
                  r.min_kiln_release ? ">= " + *r.min_kiln_release
                                     : "no Kiln release runs every op",
                  "\n");
  if (!r.min_runtime_version_metadata.empty()) {
    absl::StrAppend(&s, "min_runtime_version metadata: ",
                    r.min_runtime_version_metadata, "\n");
  }
  for (const SubgraphFacts& sg : r.subgraphs) s += SubgraphToText(sg);
  return s + TablesToText(r);
}

}  // namespace

int InspectCommand(std::vector<std::string> args) {
  return ReportCommand(args, InspectFlags, CollectInspect, InspectToJson,
                       InspectToText);
}

}  // namespace kiln::cli
