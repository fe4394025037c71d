// `kiln inspect MODEL [--json] [plugin and delegate flags]`: subgraphs,
// tensors, ops with versions, custom ops, signatures, metadata, the minimum
// Kiln release the model needs, and for every node the plugin that would run
// it or why none can (and, with --delegate, whether the delegate claims it).
#include <algorithm>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli_common.h"
#include "commands.h"
#include "interpreter/interpreter.h"
#include "interpreter/op_resolution.h"
#include "interpreter/op_support_table.h"
#include "model/model.h"
#include "nlohmann/json.hpp"
#include "plugin/negotiation.h"

namespace kiln::cli {
namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kInspectHelp =
    "usage: kiln inspect MODEL [--json] [options]\n"
    "Describes MODEL and, for every node, which plugin would run it (or why\n"
    "none can). With --delegate, also whether the delegate claims it.\n";

struct Resolution {
  std::string runner;  // "host" | plugin path | ""
  std::string reason;  // why nothing runs it
};

Resolution Resolve(const Node& node,
                   const std::vector<std::shared_ptr<LoadedPlugin>>& plugins) {
  Resolution r;
  if (IsHostIntrinsicOp(node.builtin_code)) {
    if (node.version <= HostIntrinsicMaxVersion(node.builtin_code)) {
      r.runner = "host";
    } else {
      r.reason = absl::StrCat("the host runs ", node.OpName(), " up to v",
                              HostIntrinsicMaxVersion(node.builtin_code));
    }
    return r;
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
        r.runner = p->path();
        return r;
      }
      offers.push_back(absl::StrCat("v", k->min_version, "..v", k->max_version,
                                    " from ", p->name()));
    }
  }
  if (node.builtin_code == KILN_OP_CUSTOM &&
      node.custom_name.rfind("Flex", 0) == 0) {
    r.reason = "TensorFlow fallback (Flex) ops are not supported by Kiln";
    return r;
  }
  r.reason = offers.empty()
                 ? absl::StrCat("no loaded plugin implements ", node.OpName())
                 : absl::StrCat("v", node.version, " is not covered (",
                                absl::StrJoin(offers, ", "), ")");
  std::optional<uint32_t> first =
      FirstReleaseSupporting(node.builtin_code, node.custom_name, node.version);
  if (first.has_value()) {
    absl::StrAppend(&r.reason, "; Kiln ", ReleaseString(*first),
                    " and later support it with their in-tree plugins");
  }
  return r;
}

std::string MetadataText(const MetadataEntry& m) {
  std::string s;
  const size_t n = std::min<size_t>(m.size, 48);
  for (size_t i = 0; i < n; ++i) {
    const char c = static_cast<char>(m.data[i]);
    if (c == '\0') break;
    s += (c >= 32 && c < 127) ? c : '.';
  }
  return s;
}

}  // namespace

int InspectCommand(std::vector<std::string> args) {
  InterpreterOptions options;
  std::string error;
  if (!ParsePluginFlags(args, &options.plugins, &error) ||
      !ParseDelegateFlags(args, &options.delegates, &error)) {
    std::cerr << "kiln inspect: " << error << "\n";
    return 2;
  }
  bool json = false;
  std::string model_path;
  for (const std::string& a : args) {
    if (a == "--json") {
      json = true;
    } else if (a == "--help" || a == "-h") {
      std::cout << kInspectHelp << kPluginFlagsHelp << kDelegateFlagsHelp;
      return 0;
    } else if (!a.empty() && a[0] == '-') {
      std::cerr << "kiln inspect: unknown option '" << a
                << "'; see kiln inspect --help\n";
      return 2;
    } else if (model_path.empty()) {
      model_path = a;
    } else {
      std::cerr << "kiln inspect: unexpected argument '" << a << "'\n";
      return 2;
    }
  }
  if (model_path.empty()) {
    std::cerr << "kiln inspect: missing MODEL\n";
    return 2;
  }
  absl::StatusOr<std::shared_ptr<const Model>> loaded =
      Model::FromFile(model_path);
  if (!loaded.ok()) {
    std::cerr << "kiln inspect: " << loaded.status().message() << "\n";
    return 1;
  }
  const Model& model = **loaded;

  std::vector<PluginLoadRecord> records =
      PluginLoader::LoadAll(options.plugins);
  std::vector<std::shared_ptr<LoadedPlugin>> plugins;
  for (const PluginLoadRecord& r : records) {
    if (r.plugin) plugins.push_back(r.plugin);
  }
  // With delegates, build a real interpreter to learn what they claim.
  std::unique_ptr<Interpreter> interp;
  std::string delegate_error;
  if (!options.delegates.empty()) {
    absl::StatusOr<std::unique_ptr<Interpreter>> created =
        Interpreter::Create(*loaded, options);
    if (created.ok()) {
      interp = *std::move(created);
    } else {
      delegate_error = std::string(created.status().message());
    }
  }

  Json j;
  j["model"] = model_path;
  j["schema_version"] = model.schema_version();
  j["description"] = model.description();
  j["bytes"] = model.byte_size();
  j["min_runtime_version_metadata"] = model.min_runtime_version();
  uint32_t min_kiln = 0;
  bool any_unsupported_anywhere = false;
  std::map<std::string, int> custom_ops;
  j["subgraphs"] = Json::array();
  for (int s = 0; s < model.num_subgraphs(); ++s) {
    const Graph& g = model.graph(s);
    Json sg;
    sg["index"] = s;
    sg["name"] = g.name;
    sg["inputs"] = g.inputs;
    sg["outputs"] = g.outputs;
    sg["tensors"] = Json::array();
    for (size_t t = 0; t < g.tensors.size(); ++t) {
      const Tensor& x = g.tensors[t];
      Json jt;
      jt["index"] = t;
      jt["name"] = x.name;
      jt["type"] = DtypeName(x.type);
      jt["shape"] = x.has_rank ? Json(x.shape) : Json(nullptr);
      if (!x.shape_signature.empty()) jt["shape_signature"] = x.shape_signature;
      jt["constant"] = x.is_constant();
      if (x.is_variable) jt["variable"] = true;
      if (x.quantization.quantized()) {
        jt["quantization"] = {
            {"scales", x.quantization.scales.size()},
            {"quantized_dimension", x.quantization.quantized_dimension}};
      }
      sg["tensors"].push_back(jt);
    }
    sg["nodes"] = Json::array();
    std::vector<NodeInfo> infos;
    if (interp) infos = interp->DescribeNodes(s);
    for (const Node& n : g.nodes) {
      Json jn;
      jn["index"] = n.index;
      jn["op"] = n.OpName();
      jn["version"] = n.version;
      jn["inputs"] = n.inputs;
      jn["outputs"] = n.outputs;
      if (n.builtin_code == KILN_OP_CUSTOM) ++custom_ops[n.custom_name];
      const Resolution r = Resolve(n, plugins);
      if (!r.runner.empty()) {
        jn["runs_on"] = r.runner;
      } else {
        jn["runs_on"] = nullptr;
        jn["unsupported_reason"] = r.reason;
      }
      std::optional<uint32_t> first =
          IsHostIntrinsicOp(n.builtin_code)
              ? std::optional<uint32_t>(KILN_MAKE_VERSION(0, 1, 0))
              : FirstReleaseSupporting(n.builtin_code, n.custom_name,
                                       n.version);
      if (first.has_value()) {
        min_kiln = std::max(min_kiln, *first);
      } else if (n.builtin_code != KILN_OP_CUSTOM) {
        any_unsupported_anywhere = true;
      }
      if (!options.delegates.empty()) {
        const NodeInfo* info = nullptr;
        for (const NodeInfo& i : infos) {
          if (i.index == n.index) info = &i;
        }
        if (info != nullptr && info->delegated) {
          jn["delegate"] = {{"claimed", true},
                            {"name", info->delegate_name},
                            {"partition_node", info->partition_node}};
        } else {
          std::string why = interp ? interp->DelegateDeclineReason(s, n.index)
                                   : delegate_error;
          if (why.empty()) {
            why = IsHostIntrinsicOp(n.builtin_code)
                      ? "host-intrinsic ops are never delegated"
                      : "not claimed (the delegate gave no reason)";
          }
          jn["delegate"] = {{"claimed", false}, {"reason", why}};
        }
      }
      sg["nodes"].push_back(jn);
    }
    j["subgraphs"].push_back(sg);
  }
  j["custom_ops"] = custom_ops;
  j["signatures"] = Json::array();
  for (const Signature& sig : model.signatures()) {
    Json js;
    js["key"] = sig.key;
    js["subgraph"] = sig.subgraph_index;
    for (const auto& t : sig.inputs) {
      js["inputs"].push_back({{"name", t.name}, {"tensor", t.tensor_index}});
    }
    for (const auto& t : sig.outputs) {
      js["outputs"].push_back({{"name", t.name}, {"tensor", t.tensor_index}});
    }
    j["signatures"].push_back(js);
  }
  j["metadata"] = Json::array();
  for (const MetadataEntry& m : model.metadata()) {
    j["metadata"].push_back({{"name", m.name}, {"bytes", m.size}});
  }
  j["min_kiln_release"] =
      any_unsupported_anywhere ? Json(nullptr) : Json(ReleaseString(min_kiln));
  j["plugins"] = Json::array();
  for (const PluginLoadRecord& r : records) {
    j["plugins"].push_back({{"path", r.path},
                            {"status", r.plugin ? "loaded" : "refused"},
                            {"reason", r.refusal}});
  }

  if (json) {
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << "Model       " << model_path << " (" << model.byte_size()
            << " bytes, schema v" << model.schema_version() << ")\n";
  if (!model.description().empty()) {
    std::cout << "Description " << model.description() << "\n";
  }
  std::cout << "Needs Kiln  "
            << (any_unsupported_anywhere
                    ? std::string("no Kiln release runs every op")
                    : ">= " + ReleaseString(min_kiln))
            << "\n";
  if (!model.min_runtime_version().empty()) {
    std::cout << "min_runtime_version metadata: " << model.min_runtime_version()
              << "\n";
  }
  for (const auto& sg : j["subgraphs"]) {
    std::cout << "\nSubgraph " << sg["index"].get<int>() << " '"
              << sg["name"].get<std::string>() << "': " << sg["tensors"].size()
              << " tensors, " << sg["nodes"].size() << " nodes, inputs "
              << sg["inputs"].dump() << ", outputs " << sg["outputs"].dump()
              << "\n";
    for (const auto& t : sg["tensors"]) {
      std::cout << "  t" << t["index"].get<int>() << " "
                << t["type"].get<std::string>() << " "
                << (t["shape"].is_null() ? "(unknown rank)" : t["shape"].dump())
                << (t["constant"].get<bool>() ? " const" : "")
                << (t.contains("variable") ? " variable" : "")
                << (t.contains("quantization") ? " quantized" : "") << " '"
                << t["name"].get<std::string>() << "'\n";
    }
    for (const auto& n : sg["nodes"]) {
      std::cout << "  #" << n["index"].get<int>() << " "
                << n["op"].get<std::string>() << " v" << n["version"].get<int>()
                << "  " << n["inputs"].dump() << " -> " << n["outputs"].dump()
                << "  ";
      if (n["runs_on"].is_null()) {
        std::cout << "CANNOT RUN: "
                  << n["unsupported_reason"].get<std::string>();
      } else {
        std::cout << "runs on " << n["runs_on"].get<std::string>();
      }
      if (n.contains("delegate")) {
        const auto& d = n["delegate"];
        std::cout << (d["claimed"].get<bool>()
                          ? "; claimed by " + d["name"].get<std::string>()
                          : "; not delegated: " +
                                d["reason"].get<std::string>());
      }
      std::cout << "\n";
    }
  }
  if (!custom_ops.empty()) {
    std::cout << "\nCustom ops:";
    for (const auto& [name, count] : custom_ops) {
      std::cout << " " << name << " x" << count;
    }
    std::cout << "\n";
  }
  for (const auto& s : j["signatures"]) {
    std::cout << "\nSignature '" << s["key"].get<std::string>()
              << "' (subgraph " << s["subgraph"].get<int>() << ")\n";
    for (const char* side : {"inputs", "outputs"}) {
      if (!s.contains(side)) continue;
      for (const auto& t : s[side]) {
        std::cout << "  " << side << " '" << t["name"].get<std::string>()
                  << "' -> tensor " << t["tensor"].get<int>() << "\n";
      }
    }
  }
  if (!model.metadata().empty()) {
    std::cout << "\nMetadata\n";
    for (const MetadataEntry& m : model.metadata()) {
      std::cout << "  " << m.name << " (" << m.size << " bytes) "
                << MetadataText(m) << "\n";
    }
  }
  return 0;
}

}  // namespace kiln::cli
