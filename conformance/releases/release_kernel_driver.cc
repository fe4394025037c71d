// Runs single-op conformance cases through the kernels of one plugin on the
// host of an old Kiln release, for a release whose CLI has no `kiln
// conformance` and whose C API cannot run a model yet (0.1.0-ext1.0, the
// extension API 1.0 host at 09f8af6: libkiln exports only the version and
// plugin-probe functions; model loading came later). Compiled by
// release_host_test.py against that release's own internal host headers
// (host/src: runtime/graph.h, plugin/plugin_loader.h as they were at the
// commit) and linked with its libkiln_core.a, so the loader, the
// negotiation and every KilnHostApi function the plugin calls are the old
// host's code; this file only fills the old host's Graph with the case and
// calls the kernel the way that host's runtime would (init, prepare with
// resizing allowed, outputs allocated, invoke, free).
//
//   release_kernel_driver PLUGIN.so OUT.json CASE.json...
//
// CASE.json: what `kiln conformance --internal-write-cases` writes next to
// each model; its "graph" (types as KILN_TYPE_* codes, which the freeze
// keeps equal across releases). OUT.json: {"host", "plugin": {negotiation},
// "cases": [{"key", "status": "ok" | "no-kernel" | "failed", "message",
// "outputs": [{"type", "shape", "bytes"}]}]}; the test compares outputs
// with the LiteRT golden references.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "plugin/plugin_loader.h"
#include "runtime/graph.h"

namespace {

using Json = nlohmann::json;

std::string Version(uint32_t v) {
  return std::to_string(KILN_VERSION_MAJOR(v)) + "." +
         std::to_string(KILN_VERSION_MINOR(v));
}

// Constant bytes stay alive as long as the graph (storage kConstant
// borrows them).
struct CaseGraph {
  kiln::Graph graph;
  std::vector<std::vector<uint8_t>> constants;
};

void FillGraph(const Json& g, CaseGraph* out) {
  kiln::Graph& graph = out->graph;
  out->constants.reserve(g["tensors"].size());
  for (const Json& t : g["tensors"]) {
    kiln::Tensor x;
    x.name = "t" + std::to_string(graph.tensors.size());
    x.type = static_cast<KilnTensorType>(t["type"].get<int32_t>());
    x.shape = t["shape"].get<std::vector<int32_t>>();
    x.shape_signature = x.shape;
    x.quantization.scales = t["scales"].get<std::vector<float>>();
    x.quantization.zero_points = t["zero_points"].get<std::vector<int64_t>>();
    x.quantization.quantized_dimension =
        t["quantized_dimension"].get<int32_t>();
    std::vector<uint8_t> bytes = t["bytes"].get<std::vector<uint8_t>>();
    if (t["constant"].get<bool>()) {
      out->constants.push_back(std::move(bytes));
      x.storage = kiln::TensorStorage::kConstant;
      x.data = out->constants.back().data();
      x.bytes = out->constants.back().size();
    } else if (!bytes.empty()) {
      x.AllocateOwned(bytes.size());
      std::copy(bytes.begin(), bytes.end(), x.owned.begin());
    }
    graph.tensors.push_back(std::move(x));
  }
  for (const Json& n : g["nodes"]) {
    kiln::Node node;
    node.index = static_cast<int32_t>(graph.nodes.size());
    node.builtin_code = n["op"].get<int32_t>();
    node.version = n["version"].get<int32_t>();
    node.inputs = n["inputs"].get<std::vector<int32_t>>();
    node.outputs = n["outputs"].get<std::vector<int32_t>>();
    for (const Json& o : n["options"]) {
      const uint32_t key = o["key"].get<uint32_t>();
      const std::string kind = o["kind"].get<std::string>();
      if (kind == "int") {
        node.SetInt(key, o["value"].get<int64_t>());
      } else if (kind == "float") {
        node.SetFloat(key, o["value"].get<float>());
      } else {
        node.SetIntArray(key, o["value"].get<std::vector<int32_t>>());
      }
    }
    graph.execution_plan.push_back(node.index);
    graph.nodes.push_back(std::move(node));
  }
  graph.inputs = g["inputs"].get<std::vector<int32_t>>();
  graph.outputs = g["outputs"].get<std::vector<int32_t>>();
}

const KilnKernel* FindKernel(const kiln::LoadedPlugin& plugin,
                             const kiln::Node& node) {
  for (const KilnKernel* k : plugin.kernels()) {
    if (k->builtin_code == node.builtin_code &&
        k->min_version <= node.version && node.version <= k->max_version) {
      return k;
    }
  }
  return nullptr;
}

// Runs the case's one node as the old runtime would; "" or what failed.
std::string RunNode(const kiln::LoadedPlugin& plugin, CaseGraph* c,
                    Json* result) {
  kiln::Graph& graph = c->graph;
  kiln::Node& node = graph.nodes.at(0);
  const KilnKernel* kernel = FindKernel(plugin, node);
  if (kernel == nullptr) {
    (*result)["status"] = "no-kernel";
    return std::string(kiln::BuiltinOpName(node.builtin_code)) + " v" +
           std::to_string(node.version) + " is not declared by the plugin";
  }
  kiln::CallContext ctx;
  ctx.graph = &graph;
  ctx.node = &node;
  ctx.plugin = &plugin;
  const auto failed = [&](const char* stage, KilnStatus s) {
    (*result)["status"] = "failed";
    return std::string(stage) + " failed (status " + std::to_string(s) +
           "): " + ctx.error.message;
  };
  void* state = nullptr;
  if (kernel->init != nullptr) {
    const KilnStatus s = kernel->init(kernel->user_data, kiln::ToOpaque(&ctx),
                                      kiln::ToOpaque(&node), &state);
    if (s != KILN_STATUS_OK) return failed("init", s);
  }
  std::string why;
  ctx.allow_resize = true;
  KilnStatus s =
      kernel->prepare == nullptr
          ? KILN_STATUS_OK
          : kernel->prepare(kernel->user_data, state, kiln::ToOpaque(&ctx),
                            kiln::ToOpaque(&node));
  ctx.allow_resize = false;
  if (s != KILN_STATUS_OK) why = failed("prepare", s);
  if (why.empty()) {
    for (int32_t o : node.outputs) {
      kiln::Tensor& t = graph.tensors.at(static_cast<size_t>(o));
      t.AllocateOwned(t.RequiredBytes());
    }
    s = kernel->invoke(kernel->user_data, state, kiln::ToOpaque(&ctx),
                       kiln::ToOpaque(&node));
    if (s != KILN_STATUS_OK) why = failed("invoke", s);
  }
  if (kernel->free != nullptr) kernel->free(kernel->user_data, state);
  if (!why.empty()) return why;
  (*result)["status"] = "ok";
  Json outputs = Json::array();
  for (int32_t o : graph.outputs) {
    const kiln::Tensor& t = graph.tensors.at(static_cast<size_t>(o));
    const auto* p = static_cast<const uint8_t*>(t.data);
    outputs.push_back({{"type", static_cast<int32_t>(t.type)},
                       {"shape", t.shape},
                       {"bytes", std::vector<uint8_t>(p, p + t.bytes)}});
  }
  (*result)["outputs"] = outputs;
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s PLUGIN.so OUT.json CASE.json...\n",
                 argv[0]);
    return 2;
  }
  Json report;
  report["host"] = {{"runtime", KILN_RUNTIME_VERSION_STRING},
                    {"extension_api", Version(KILN_EXT_API_VERSION)}};
  absl::StatusOr<kiln::HostOffer> offer = kiln::PluginLoader::MakeOffer(0);
  if (!offer.ok()) {
    std::fprintf(stderr, "%s\n", std::string(offer.status().message()).c_str());
    return 1;
  }
  kiln::PluginLoadRecord record;
  absl::StatusOr<std::shared_ptr<kiln::LoadedPlugin>> plugin =
      kiln::PluginLoader::Load(argv[1], *offer, &record);
  report["plugin"] = {{"path", argv[1]},
                      {"name", record.name},
                      {"built_for", Version(record.abi_version)},
                      {"loaded", plugin.ok()}};
  if (!plugin.ok()) {
    report["plugin"]["refusal"] = std::string(plugin.status().message());
  } else {
    report["plugin"]["negotiated"] = Version((*plugin)->negotiated_version());
    Json cases = Json::array();
    for (int i = 3; i < argc; ++i) {
      std::ifstream in(argv[i]);
      const Json meta = Json::parse(in, nullptr, false);
      Json result = {{"case", argv[i]}};
      if (meta.is_discarded() || !meta.contains("graph")) {
        result["status"] = "failed";
        result["message"] = "unreadable case file";
      } else {
        result["key"] = meta["key"];
        CaseGraph c;
        FillGraph(meta["graph"], &c);
        result["message"] = RunNode(**plugin, &c, &result);
      }
      cases.push_back(result);
    }
    report["cases"] = cases;
  }
  std::ofstream(argv[2]) << report.dump();
  return 0;
}
