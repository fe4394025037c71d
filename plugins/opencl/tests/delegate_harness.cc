#include "delegate_harness.h"

#include <stdlib.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "runtime/single_node_runner.h"

namespace kiln::opencl_test {
namespace {

// Gives this process its own PoCL kernel cache directory (processes sharing
// one have crashed, pocl#1480) and XDG cache directory before any OpenCL
// call, and removes them at exit. A POCL_CACHE_DIR set by the caller is
// kept.
struct PoclCacheDir {
  PoclCacheDir() {
    char pattern[] = "/tmp/kiln-opencl-test-XXXXXX";
    if (mkdtemp(pattern) == nullptr) return;
    dir = pattern;
    if (getenv("POCL_CACHE_DIR") == nullptr) {
      setenv("POCL_CACHE_DIR", (dir + "/pocl").c_str(), 1);
    }
    // The delegate's default program cache ($XDG_CACHE_HOME/kiln/opencl)
    // stays out of the user's home directory.
    setenv("XDG_CACHE_HOME", (dir + "/xdg").c_str(), 1);
  }
  ~PoclCacheDir() {
    std::error_code ignored;
    if (!dir.empty()) std::filesystem::remove_all(dir, ignored);
  }
  std::string dir;
};
PoclCacheDir pocl_cache_dir;

absl::Status CallStatus(KilnStatus code, const CallContext& c,
                        const char* stage) {
  if (code == KILN_STATUS_OK) return absl::OkStatus();
  return absl::Status(
      static_cast<absl::StatusCode>(code),
      absl::StrCat(stage, " failed: ",
                   c.error.message.empty() ? "(no message)" : c.error.message));
}

const KilnExtensionBase* FindExtension(const KilnPluginDescriptor* d,
                                       const char* id) {
  for (const KilnExtensionBase* e = d->extensions; e != nullptr; e = e->next) {
    if (std::strcmp(e->id, id) == 0) return e;
  }
  return nullptr;
}

}  // namespace

std::string OpenClPluginPath() {
  return std::string(KILN_TEST_PLUGIN_DIR) + "/libkiln_opencl.so";
}
std::string CpuPluginPath() {
  return std::string(KILN_TEST_PLUGIN_DIR) + "/libkiln_cpu.so";
}

Graph CloneGraph(const Graph& graph) {
  Graph copy = graph;
  for (size_t i = 0; i < copy.tensors.size(); ++i) {
    Tensor& t = copy.tensors[i];
    if (!t.owned.empty() &&
        graph.tensors[i].data == graph.tensors[i].owned.data()) {
      t.data = t.owned.data();
    }
  }
  return copy;
}

std::string SerializeSettings(const kiln::DelegateSettings& settings) {
  std::string bytes;
  settings.SerializeToString(&bytes);
  return bytes;
}

DelegateHarness::DelegateHarness() = default;

DelegateHarness::~DelegateHarness() {
  FreePartitions();
  if (delegate_ != nullptr) iface()->destroy(iface()->user_data, delegate_);
}

const KilnDelegateInterface* DelegateHarness::iface() const {
  return plugin_->delegate();
}

void DelegateHarness::FreePartitions() {
  for (void* s : states_) {
    if (iface()->partition_free != nullptr) {
      iface()->partition_free(delegate_, s);
    }
  }
  states_.clear();
}

absl::Status DelegateHarness::Load() {
  if (plugin_ != nullptr) return absl::OkStatus();
  absl::StatusOr<std::shared_ptr<LoadedPlugin>> p =
      // The harness reads outputs straight from host memory and never syncs
      // buffer handles, so it serves the plugin as a 1.1 host would (no
      // buffer handles); the interpreter's tests cover buffer handles.
      LoadPluginForTest(OpenClPluginPath(), KILN_MAKE_VERSION(1, 1, 0));
  if (!p.ok()) return p.status();
  if ((*p)->delegate() == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat(OpenClPluginPath(), " declares no delegate"));
  }
  plugin_ = *p;
  return absl::OkStatus();
}

absl::Status DelegateHarness::Create(const std::string& settings) {
  absl::Status s = Load();
  if (!s.ok()) return s;
  Graph empty;
  CallContext c;
  c.graph = &empty;
  c.plugin = plugin_.get();
  return CallStatus(
      iface()->create(iface()->user_data, ToOpaque(&c),
                      reinterpret_cast<const uint8_t*>(settings.data()),
                      settings.size(), &delegate_),
      c, "create");
}

absl::StatusOr<std::vector<int32_t>> DelegateHarness::Partition(Graph& graph) {
  std::vector<int32_t> claimed;
  CallContext c;
  c.graph = &graph;
  c.plugin = plugin_.get();
  c.claimed_nodes = &claimed;
  absl::Status s =
      CallStatus(iface()->partition(delegate_, ToOpaque(&c)), c, "partition");
  if (!s.ok()) return s;
  claimed_ = claimed;
  return claimed;
}

absl::Status DelegateHarness::Prepare(Graph& graph) {
  FreePartitions();
  partitions_.clear();
  const std::set<int32_t> claimed(claimed_.begin(), claimed_.end());
  for (int32_t n : graph.execution_plan) {
    if (claimed.count(n) == 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "node ", n, " (", graph.nodes[n].OpName(),
          ") was not claimed; the harness runs fully delegated graphs only"));
    }
  }
  // Connected groups of claimed nodes (union-find over tensors).
  std::map<int32_t, int32_t> parent;
  for (int32_t n : graph.execution_plan) parent[n] = n;
  std::function<int32_t(int32_t)> find = [&](int32_t n) {
    return parent[n] == n ? n : parent[n] = find(parent[n]);
  };
  std::map<int32_t, int32_t> producer;
  for (int32_t n : graph.execution_plan) {
    for (int32_t t : graph.nodes[n].outputs) producer[t] = n;
  }
  for (int32_t n : graph.execution_plan) {
    for (int32_t t : graph.nodes[n].inputs) {
      auto p = producer.find(t);
      if (p != producer.end()) parent[find(n)] = find(p->second);
    }
  }
  std::vector<int32_t> roots;
  std::map<int32_t, std::vector<int32_t>> groups;
  for (int32_t n : graph.execution_plan) {
    const int32_t r = find(n);
    if (groups[r].empty()) roots.push_back(r);
    groups[r].push_back(n);
  }
  std::set<int32_t> graph_outputs(graph.outputs.begin(), graph.outputs.end());
  std::vector<int32_t> plan;
  for (int32_t r : roots) {
    const std::vector<int32_t>& members = groups[r];
    std::set<int32_t> produced, consumed_inside;
    for (int32_t n : members) {
      for (int32_t t : graph.nodes[n].outputs) produced.insert(t);
    }
    Node partition;
    partition.index = static_cast<int32_t>(graph.nodes.size());
    partition.builtin_code = KILN_OP_DELEGATE;
    partition.delegated_nodes = members;
    std::set<int32_t> inputs;
    for (int32_t n : members) {
      for (int32_t t : graph.nodes[n].inputs) {
        if (t >= 0 && produced.count(t) == 0 && inputs.insert(t).second) {
          partition.inputs.push_back(t);
        }
        consumed_inside.insert(t);
      }
    }
    for (int32_t t : produced) {
      if (graph_outputs.count(t) != 0 || consumed_inside.count(t) == 0) {
        partition.outputs.push_back(t);
      }
    }
    graph.nodes.push_back(partition);
    partitions_.push_back(partition.index);
    plan.push_back(partition.index);
  }
  graph.execution_plan = plan;
  for (int32_t p : partitions_) {
    Node& node = graph.nodes[static_cast<size_t>(p)];
    CallContext c;
    c.graph = &graph;
    c.node = &node;
    c.plugin = plugin_.get();
    void* state = nullptr;
    absl::Status s =
        CallStatus(iface()->partition_init(delegate_, ToOpaque(&c),
                                           ToOpaque(&node), &state),
                   c, "partition_init");
    if (!s.ok()) return s;
    states_.push_back(state);
    c.allow_resize = true;
    s = CallStatus(iface()->partition_prepare(delegate_, state, ToOpaque(&c),
                                              ToOpaque(&graph.nodes[p])),
                   c, "partition_prepare");
    if (!s.ok()) return s;
  }
  for (Tensor& t : graph.tensors) {
    if (t.storage == TensorStorage::kNone) t.AllocateOwned(t.RequiredBytes());
  }
  return absl::OkStatus();
}

absl::Status DelegateHarness::Invoke(Graph& graph) {
  for (size_t i = 0; i < partitions_.size(); ++i) {
    Node& node = graph.nodes[static_cast<size_t>(partitions_[i])];
    CallContext c;
    c.graph = &graph;
    c.node = &node;
    c.plugin = plugin_.get();
    absl::Status s =
        CallStatus(iface()->partition_invoke(delegate_, states_[i],
                                             ToOpaque(&c), ToOpaque(&node)),
                   c, "partition_invoke");
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

const KilnDelegateDeclineReasonsExtension* DelegateHarness::decline_reasons()
    const {
  return reinterpret_cast<const KilnDelegateDeclineReasonsExtension*>(
      FindExtension(plugin_->descriptor(),
                    KILN_DELEGATE_DECLINE_REASONS_EXTENSION_ID));
}

const KilnOpenClStatsExtension* DelegateHarness::stats_extension() const {
  return reinterpret_cast<const KilnOpenClStatsExtension*>(
      FindExtension(plugin_->descriptor(), KILN_OPENCL_STATS_EXTENSION_ID));
}

KilnOpenClStats DelegateHarness::Stats() const {
  KilnOpenClStats stats;
  std::memset(&stats, 0, sizeof(stats));
  stats.struct_size = KILN_OPENCL_STATS_STRUCT_SIZE;
  const KilnOpenClStatsExtension* ext = stats_extension();
  if (ext != nullptr && delegate_ != nullptr) ext->get_stats(delegate_, &stats);
  return stats;
}

}  // namespace kiln::opencl_test
