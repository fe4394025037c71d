// Test harness for the OpenCL delegate: loads the built plugin and drives
// its KilnDelegateInterface callbacks over a hand-built kiln::Graph the way
// the interpreter does (partition -> partition nodes -> init/prepare/
// invoke), through the real host API table.
#ifndef KILN_PLUGINS_OPENCL_TESTS_DELEGATE_HARNESS_H_
#define KILN_PLUGINS_OPENCL_TESTS_DELEGATE_HARNESS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "delegate_settings.pb.h"
#include "kiln/opencl/opencl_delegate.h"
#include "plugin/plugin_loader.h"
#include "runtime/graph.h"

namespace kiln::opencl_test {

// Path of the built plugin.
std::string OpenClPluginPath();
std::string CpuPluginPath();

// A copy of `graph` whose owned tensor data points at the copy's buffers.
Graph CloneGraph(const Graph& graph);

// Settings with a disk cache under `cache_dir` ("none" = off).
std::string SerializeSettings(const kiln::DelegateSettings& settings);

class DelegateHarness {
 public:
  DelegateHarness();
  ~DelegateHarness();
  DelegateHarness(const DelegateHarness&) = delete;
  DelegateHarness& operator=(const DelegateHarness&) = delete;

  // Loads the plugin (once per harness). Errors name the path.
  absl::Status Load();
  // KilnDelegateInterface.create with serialized kiln.DelegateSettings.
  // The status carries the code and the message the plugin reported.
  absl::Status Create(const std::string& settings = "");
  // KilnDelegateInterface.partition; returns the claimed node indices.
  absl::StatusOr<std::vector<int32_t>> Partition(Graph& graph);
  // Replaces each connected set of claimed nodes by a partition node (its
  // inputs: tensors it reads but does not produce; outputs: tensors it
  // produces that a remaining node or the graph output reads), then calls
  // partition_init and partition_prepare and allocates tensors. Every node
  // of the plan must have been claimed.
  absl::Status Prepare(Graph& graph);
  absl::Status Invoke(Graph& graph);

  void* delegate() const { return delegate_; }
  const KilnDelegateDeclineReasonsExtension* decline_reasons() const;
  const KilnOpenClStatsExtension* stats_extension() const;
  KilnOpenClStats Stats() const;
  // Partition nodes made by Prepare, as node indices in the graph.
  const std::vector<int32_t>& partition_nodes() const { return partitions_; }

 private:
  const KilnDelegateInterface* iface() const;
  void FreePartitions();

  std::shared_ptr<LoadedPlugin> plugin_;
  void* delegate_ = nullptr;
  std::vector<int32_t> claimed_;
  std::vector<int32_t> partitions_;
  std::vector<void*> states_;
};

}  // namespace kiln::opencl_test

#endif  // KILN_PLUGINS_OPENCL_TESTS_DELEGATE_HARNESS_H_
