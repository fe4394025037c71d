#include "interpreter/op_resolution.h"

#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "interpreter/interpreter.h"
#include "interpreter/op_support_table.h"
#include "kiln/kiln_builtin_ops.h"
#include "kiln/kiln_version.h"

namespace kiln {
namespace {

constexpr int32_t kNewestKnownBuiltinCode = KILN_OP_STABLEHLO_CASE;

bool Covers(const KilnKernel& k, int32_t code, const std::string& custom,
            int32_t version) {
  if (k.builtin_code != code) return false;
  if (code == KILN_OP_CUSTOM &&
      (k.custom_name == nullptr || custom != k.custom_name)) {
    return false;
  }
  return version >= k.min_version && version <= k.max_version;
}

bool SameOp(const KilnKernel& k, int32_t code, const std::string& custom) {
  if (k.builtin_code != code) return false;
  return code != KILN_OP_CUSTOM ||
         (k.custom_name != nullptr && custom == k.custom_name);
}

std::string OpLabel(int32_t code, const std::string& custom) {
  if (code == KILN_OP_CUSTOM) return absl::StrCat("custom op '", custom, "'");
  return absl::StrCat("builtin op '", BuiltinOpName(code), "'");
}

std::string Ranges(const std::vector<std::pair<int32_t, int32_t>>& ranges) {
  std::vector<std::string> parts;
  for (const auto& [lo, hi] : ranges) {
    parts.push_back(lo == hi ? std::to_string(lo) : absl::StrCat(lo, "-", hi));
  }
  return absl::StrJoin(parts, ", ");
}

// Why (code, custom, version) cannot run and what would help.
std::string Explain(int32_t code, const std::string& custom, int32_t version,
                    const std::vector<std::shared_ptr<LoadedPlugin>>& plugins) {
  std::string out;
  // What the loaded plugins offer for this op.
  std::vector<std::string> offers;
  for (const auto& plugin : plugins) {
    std::vector<std::pair<int32_t, int32_t>> ranges;
    for (const KilnKernel* k : plugin->kernels()) {
      if (SameOp(*k, code, custom))
        ranges.emplace_back(k->min_version, k->max_version);
    }
    if (!ranges.empty()) {
      offers.push_back(absl::StrCat("versions ", Ranges(ranges),
                                    " from plugin ", plugin->Describe()));
    }
  }
  if (offers.empty()) {
    absl::StrAppend(&out, "no loaded plugin implements any version of it");
  } else {
    absl::StrAppend(&out, "available: ", absl::StrJoin(offers, "; "));
  }
  const std::optional<uint32_t> release =
      FirstReleaseSupporting(code, custom, version);
  const int32_t newest = NewestSupportedVersion(code, custom);
  if (release && *release > KILN_RUNTIME_VERSION) {
    absl::StrAppend(&out, ". Kiln ", ReleaseString(*release),
                    " and newer run this op version: upgrade Kiln (this is ",
                    KILN_RUNTIME_VERSION_STRING, ")");
  } else if (release) {
    absl::StrAppend(&out, ". Kiln ", KILN_RUNTIME_VERSION_STRING,
                    " runs this op version with its in-tree plugins, which "
                    "were not loaded: check the plugin search path "
                    "(plugin directories, KILN_PLUGIN_PATH, default plugins)");
  } else if (newest > 0) {
    absl::StrAppend(&out, ". No Kiln release runs version ", version,
                    " (the newest supported is version ", newest,
                    "): the model was written for a newer op set; reconvert "
                    "it for an older one or load a plugin that implements it");
  } else {
    absl::StrAppend(&out,
                    ". No Kiln release runs this op: load a plugin that "
                    "implements it");
  }
  return out;
}

// Why `node`'s op cannot run on any kernel of this Kiln, or "" when it
// may: a builtin code unknown to Kiln, a TensorFlow fallback op, or a
// host-intrinsic op of a version the host does not run.
std::string UnrunnableOp(const NodeDesc& node) {
  const int32_t code = node.builtin_code;
  if (code < 0 || code > kNewestKnownBuiltinCode ||
      (code != KILN_OP_CUSTOM &&
       std::string(BuiltinOpName(code)) == "UNKNOWN")) {
    return absl::StrCat(
        "builtin op code ", code, " (version ", node.version,
        ") is unknown to Kiln ", KILN_RUNTIME_VERSION_STRING,
        ", which knows codes 0-", kNewestKnownBuiltinCode,
        ": the model was written by a newer converter; upgrade Kiln or "
        "reconvert the model with an older converter");
  }
  if (code == KILN_OP_CUSTOM && node.custom_name.rfind("Flex", 0) == 0) {
    return absl::StrCat(
        "custom op '", node.custom_name,
        "' is a TensorFlow fallback op (SELECT_TF_OPS), which Kiln does "
        "not run: reconvert the model without SELECT_TF_OPS so that it "
        "uses only TFLite builtin ops");
  }
  const int32_t max = HostIntrinsicMaxVersion(code);
  if (IsHostIntrinsicOp(code) && (node.version < 1 || node.version > max)) {
    return absl::StrCat(
        "no kernel for ", OpLabel(code, ""), " version ", node.version,
        "; the Kiln host runs this op itself, versions 1-", max, ". ",
        Explain(code, node.custom_name, node.version, {}));
  }
  return "";
}

KernelChoice FindKernel(
    const NodeDesc& node,
    const std::vector<std::shared_ptr<LoadedPlugin>>& plugins) {
  for (const auto& plugin : plugins) {
    for (const KilnKernel* k : plugin->kernels()) {
      if (Covers(*k, node.builtin_code, node.custom_name, node.version)) {
        return {k, plugin.get()};
      }
    }
  }
  return {};
}

// The nodes that cannot run, one line each; identical (op, version)
// problems are explained once, then referenced.
class UnresolvedNodes {
 public:
  explicit UnresolvedNodes(
      const std::vector<std::shared_ptr<LoadedPlugin>>& plugins)
      : plugins_(plugins) {}

  bool empty() const { return problems_.empty(); }
  void Add(const std::string& where, const std::string& problem) {
    problems_.push_back(absl::StrCat(where, ": ", problem));
  }
  void AddMissingKernel(const std::string& where, const NodeDesc& node) {
    const int32_t code = node.builtin_code;
    const std::string op = OpLabel(code, node.custom_name);
    if (!explained_.emplace(code, node.custom_name, node.version).second) {
      Add(where,
          absl::StrCat(op, " version ", node.version, " (same as above)"));
      return;
    }
    Add(where,
        absl::StrCat("no kernel for ", op, " version ", node.version, "; ",
                     Explain(code, node.custom_name, node.version, plugins_)));
  }

  std::string Message(const std::string& model_source,
                      const std::vector<PluginLoadRecord>& records) const {
    std::string message = absl::StrCat(
        "cannot run model '", model_source, "': ", problems_.size(),
        problems_.size() == 1 ? " node has" : " nodes have",
        " no implementation in this Kiln (", KILN_RUNTIME_VERSION_STRING,
        ") and its loaded plugins:");
    for (const std::string& p : problems_) {
      absl::StrAppend(&message, "\n  - ", p);
    }
    std::vector<std::string> loaded, refused;
    for (const PluginLoadRecord& r : records) {
      if (r.plugin != nullptr) {
        loaded.push_back(r.plugin->Describe());
      } else {
        refused.push_back(r.refusal);
      }
    }
    absl::StrAppend(&message, "\nLoaded plugins: ",
                    loaded.empty() ? "none" : absl::StrJoin(loaded, ", "), ".");
    for (const std::string& r : refused) {
      absl::StrAppend(&message, "\nRefused plugin: ", r);
    }
    return message;
  }

 private:
  const std::vector<std::shared_ptr<LoadedPlugin>>& plugins_;
  std::vector<std::string> problems_;
  std::set<std::tuple<int32_t, std::string, int32_t>> explained_;
};

// The kernel of one node at `where` ("subgraph 0 node 3"), or none: for a
// host-intrinsic node, or when it cannot run (added to `unresolved`).
KernelChoice ResolveNode(
    const std::string& where, const NodeDesc& node,
    const std::vector<std::shared_ptr<LoadedPlugin>>& plugins,
    UnresolvedNodes& unresolved) {
  if (const std::string refusal = UnrunnableOp(node); !refusal.empty()) {
    unresolved.Add(where, refusal);
    return {};
  }
  if (IsHostIntrinsicOp(node.builtin_code)) return {};
  const KernelChoice choice = FindKernel(node, plugins);
  if (choice.kernel == nullptr) unresolved.AddMissingKernel(where, node);
  return choice;
}

}  // namespace

bool IsHostIntrinsicOp(int32_t builtin_code) {
  switch (builtin_code) {
    case KILN_OP_WHILE:
    case KILN_OP_IF:
    case KILN_OP_CALL_ONCE:
    case KILN_OP_VAR_HANDLE:
    case KILN_OP_READ_VARIABLE:
    case KILN_OP_ASSIGN_VARIABLE:
    case KILN_OP_STABLEHLO_COMPOSITE:
      return true;
    default:
      return false;
  }
}

int32_t HostIntrinsicMaxVersion(int32_t builtin_code) {
  return IsHostIntrinsicOp(builtin_code) ? 1 : 0;
}

absl::StatusOr<std::vector<std::vector<KernelChoice>>> ResolveKernels(
    const Model& model,
    const std::vector<std::shared_ptr<LoadedPlugin>>& plugins,
    const std::vector<PluginLoadRecord>& records) {
  UnresolvedNodes unresolved(plugins);
  std::vector<std::vector<KernelChoice>> choices(
      static_cast<size_t>(model.num_subgraphs()));
  for (int sg = 0; sg < model.num_subgraphs(); ++sg) {
    for (const Node& node : model.graph(sg).nodes) {
      choices[static_cast<size_t>(sg)].push_back(
          ResolveNode(absl::StrCat("subgraph ", sg, " node ", node.index), node,
                      plugins, unresolved));
    }
  }
  if (unresolved.empty()) return choices;
  return absl::NotFoundError(unresolved.Message(model.source(), records));
}

int CompareDottedVersions(const std::string& a, const std::string& b,
                          bool* ok) {
  auto parse = [](const std::string& s, std::vector<long>* parts) {
    if (s.empty()) return false;
    for (absl::string_view piece : absl::StrSplit(s, '.')) {
      if (piece.empty() || piece.size() > 9) return false;
      for (char c : piece) {
        if (!std::isdigit(static_cast<unsigned char>(c))) return false;
      }
      parts->push_back(std::stol(std::string(piece)));
    }
    return true;
  };
  std::vector<long> pa, pb;
  *ok = parse(a, &pa) && parse(b, &pb);
  if (!*ok) return 0;
  const size_t n = std::max(pa.size(), pb.size());
  pa.resize(n, 0);
  pb.resize(n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (pa[i] != pb[i]) return pa[i] < pb[i] ? -1 : 1;
  }
  return 0;
}

absl::Status CheckMinRuntimeVersion(const Model& model) {
  const std::string& wanted = model.min_runtime_version();
  if (wanted.empty()) return absl::OkStatus();
  bool ok = false;
  const int order =
      CompareDottedVersions(wanted, kNewestTfliteRuntimeRead, &ok);
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model '", model.source(), "': metadata 'min_runtime_version' is '",
        wanted,
        "', which is not a version number (expected digits separated by "
        "dots, e.g. 2.6.0): the file is damaged or was not written by a "
        "TFLite converter"));
  }
  if (order > 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "model '", model.source(), "' requires TFLite runtime ", wanted,
        " or newer (metadata 'min_runtime_version'), but Kiln ",
        KILN_RUNTIME_VERSION_STRING, " reads models for TFLite runtimes up to ",
        kNewestTfliteRuntimeRead,
        ": upgrade Kiln, or reconvert the model with an older converter"));
  }
  return absl::OkStatus();
}

}  // namespace kiln
