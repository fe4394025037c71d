// Internal state of the interpreter, shared by its implementation files.
// Not part of any API.
#ifndef KILN_HOST_INTERPRETER_SUBGRAPH_RUNTIME_H_
#define KILN_HOST_INTERPRETER_SUBGRAPH_RUNTIME_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kiln/kiln_capabilities.h"
#include "kiln/kiln_plugin.h"
#include "plugin/plugin_loader.h"
#include "runtime/graph.h"

namespace kiln {

// One created delegate. Destroyed after every partition state it made.
struct DelegateInstance {
  std::string name;
  std::shared_ptr<LoadedPlugin> plugin;
  const KilnDelegateInterface* iface = nullptr;
  void* instance = nullptr;
  int32_t min_partition_size = 1;
  bool warned = false;  // the one fallback warning was printed
  // The plugin's kiln.delegate_decline_reasons/1 capability, if offered.
  const KilnDelegateDeclineReasonsExtension* decline_reasons = nullptr;
  // Reasons collected right after each partition call: [subgraph][node].
  std::vector<std::map<int32_t, std::string>> declined;
};

struct PartitionRuntime {
  int32_t node_index = -1;  // the partition node in Graph::nodes
  DelegateInstance* delegate = nullptr;
  void* state = nullptr;     // from partition_init
  bool initialized = false;  // partition_init succeeded
  bool fell_back = false;    // runs the original nodes on kernels
  std::string fallback_reason;
};

struct SubgraphRuntime {
  int32_t index = 0;
  Graph graph;
  // Nodes [0, num_model_nodes) are the model's; partition nodes follow.
  int32_t num_model_nodes = 0;
  std::vector<char> host_intrinsic;        // per node
  std::vector<int32_t> partition_of_node;  // per node: partition index or -1
  std::vector<int32_t> delegated_by;       // per model node: partition or -1
  std::vector<PartitionRuntime> partitions;

  // Allocation state.
  bool allocated = false;
  bool running = false;
  std::vector<char> tensor_dynamic;  // per tensor
  std::vector<char> node_deferred;   // per node: prepare again at invoke
  std::vector<uint8_t> arena_storage;
  size_t arena_bytes = 0;

  bool IsPartition(int32_t node) const {
    return partition_of_node[static_cast<size_t>(node)] >= 0;
  }
};

}  // namespace kiln

#endif  // KILN_HOST_INTERPRETER_SUBGRAPH_RUNTIME_H_
