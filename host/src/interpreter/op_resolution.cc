#include "interpreter/op_resolution.h"

#include <cctype>
#include <map>
#include <optional>
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

absl::Status ResolveNodes(
    const std::string& model_source, const std::vector<Graph*>& graphs,
    const std::vector<std::shared_ptr<LoadedPlugin>>& plugins,
    const std::vector<PluginLoadRecord>& records) {
  std::vector<std::string> problems;
  // Identical (op, version) problems are explained once, then referenced.
  std::map<std::tuple<int32_t, std::string, int32_t>, size_t> explained;
  for (size_t sg = 0; sg < graphs.size(); ++sg) {
    Graph& graph = *graphs[sg];
    for (Node& node : graph.nodes) {
      node.kernel = nullptr;
      node.plugin = nullptr;
      const std::string where =
          absl::StrCat("subgraph ", sg, " node ", node.index);
      const int32_t code = node.builtin_code;
      if (code < 0 || code > kNewestKnownBuiltinCode ||
          (code != KILN_OP_CUSTOM &&
           std::string(BuiltinOpName(code)) == "UNKNOWN")) {
        problems.push_back(absl::StrCat(
            where, ": builtin op code ", code, " (version ", node.version,
            ") is unknown to Kiln ", KILN_RUNTIME_VERSION_STRING,
            ", which knows codes 0-", kNewestKnownBuiltinCode,
            ": the model was written by a newer converter; upgrade Kiln or "
            "reconvert the model with an older converter"));
        continue;
      }
      if (code == KILN_OP_CUSTOM && node.custom_name.rfind("Flex", 0) == 0) {
        problems.push_back(absl::StrCat(
            where, ": custom op '", node.custom_name,
            "' is a TensorFlow fallback op (SELECT_TF_OPS), which Kiln does "
            "not run: reconvert the model without SELECT_TF_OPS so that it "
            "uses only TFLite builtin ops"));
        continue;
      }
      if (IsHostIntrinsicOp(code)) {
        const int32_t max = HostIntrinsicMaxVersion(code);
        if (node.version < 1 || node.version > max) {
          problems.push_back(absl::StrCat(
              where, ": no kernel for ", OpLabel(code, ""), " version ",
              node.version, "; the Kiln host runs this op itself, versions 1-",
              max, ". ", Explain(code, node.custom_name, node.version, {})));
        }
        continue;
      }
      for (const auto& plugin : plugins) {
        for (const KilnKernel* k : plugin->kernels()) {
          if (Covers(*k, code, node.custom_name, node.version)) {
            node.kernel = k;
            node.plugin = plugin.get();
            break;
          }
        }
        if (node.kernel != nullptr) break;
      }
      if (node.kernel != nullptr) continue;
      const auto key = std::make_tuple(code, node.custom_name, node.version);
      auto it = explained.find(key);
      if (it != explained.end()) {
        problems.push_back(
            absl::StrCat(where, ": ", OpLabel(code, node.custom_name),
                         " version ", node.version, " (same as above)"));
        continue;
      }
      explained.emplace(key, problems.size());
      problems.push_back(absl::StrCat(
          where, ": no kernel for ", OpLabel(code, node.custom_name),
          " version ", node.version, "; ",
          Explain(code, node.custom_name, node.version, plugins)));
    }
  }
  if (problems.empty()) return absl::OkStatus();
  std::string message =
      absl::StrCat("cannot run model '", model_source, "': ", problems.size(),
                   problems.size() == 1 ? " node has" : " nodes have",
                   " no implementation in this Kiln (",
                   KILN_RUNTIME_VERSION_STRING, ") and its loaded plugins:");
  for (const std::string& p : problems) absl::StrAppend(&message, "\n  - ", p);
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
  return absl::NotFoundError(message);
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
