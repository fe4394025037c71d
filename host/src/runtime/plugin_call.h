// The one way the host calls into a plugin, and the one place a plugin's
// failure becomes an absl::Status.
//
// Every callback of the extension API (KilnKernel init/prepare/invoke,
// KilnDelegateInterface create/partition/partition_init/partition_prepare/
// partition_invoke and the buffer-handle copies) goes through CallPlugin: it
// sets up the CallContext the plugin sees as KilnOpaqueContext for that
// stage, calls, records a profile event when the call carries a Profiler
// (profiler.h), and converts a failure with PluginFailure. Internal to
// libkiln.
//
// Thread-safety: reentrant; a call touches only what `call` points to.
#ifndef KILN_HOST_RUNTIME_PLUGIN_CALL_H_
#define KILN_HOST_RUNTIME_PLUGIN_CALL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "kiln/kiln_extension.h"
#include "kiln/kiln_plugin.h"
#include "runtime/graph.h"

namespace kiln {

// The callback being called, named in messages as the ABI names it.
enum class PluginStage {
  kInit,                  // KilnKernel.init
  kPrepare,               // KilnKernel.prepare
  kInvoke,                // KilnKernel.invoke
  kCreate,                // KilnDelegateInterface.create
  kPartition,             // KilnDelegateInterface.partition
  kPartitionInit,         // KilnDelegateInterface.partition_init
  kPartitionPrepare,      // KilnDelegateInterface.partition_prepare
  kPartitionInvoke,       // KilnDelegateInterface.partition_invoke
  kCopyFromBufferHandle,  // KilnDelegateInterface.copy_from_buffer_handle
  kCopyToBufferHandle,    // KilnDelegateInterface.copy_to_buffer_handle
};

// "init", "prepare", ..., "partition_invoke".
const char* PluginStageName(PluginStage stage);

// Converts a plugin's failure: the plugin's code (UNKNOWN when it is not a
// valid failure code) and the message "<where>: <stage> failed: <what the
// plugin reported through report_error, or '(no message)'>". An empty
// `where` leaves the prefix out. `where` names the node, op, version and
// plugin path (or the delegate and its plugin path).
absl::Status PluginFailure(KilnStatus code, const CallError& error,
                           PluginStage stage, absl::string_view where);

// What a call into a plugin is about: the CallContext it gets.
struct PluginCall {
  PluginStage stage = PluginStage::kInvoke;
  GraphView* graph = nullptr;            // null for create
  NodeRef* node = nullptr;               // the node handle passed, if any
  const LoadedPlugin* plugin = nullptr;  // for messages
  // Receives context_delegate_nodes; set for kPartition only.
  std::vector<int32_t>* claimed_nodes = nullptr;
  // Subgraph index of `graph` in an interpreter, -1 when none.
  int32_t subgraph = -1;
  // The delegate instance called (delegate stages): its name labels profile
  // events, and it owns the buffer handles the callback binds and reads.
  const DelegateRef* delegate = nullptr;
  // The tensor copied (buffer-handle copy stages), for the profile event.
  const TensorState* tensor = nullptr;
  // Records one event around the call (and receives the plugin's own);
  // null: profiling is off.
  Profiler* profiler = nullptr;
  // The interpreter's pool lent through kiln.parallel_for/1; null: none.
  ThreadPool* thread_pool = nullptr;
};

// Calls `fn(context, node)` (node: call.node as a handle, or null) with a
// CallContext for call.stage: graph, node, plugin, delegate and profiler
// from `call`, tensor resizes allowed at kPrepare and kPartitionPrepare
// only, buffer-handle binding at kPartitionPrepare and kPartitionInvoke of a
// delegate that serves buffer handles. With call.profiler set, one event
// (category PluginStageName(stage)) spans the call. `fn` returns the
// plugin's KilnStatus. A failure is converted by PluginFailure, labelled by
// `where()`, which runs only on failure.
absl::Status CallPlugin(
    const PluginCall& call,
    absl::FunctionRef<KilnStatus(KilnOpaqueContext*, KilnOpaqueNode*)> fn,
    absl::FunctionRef<std::string()> where);

// KilnKernel.init, prepare or invoke (per call.stage) on call.node. init
// stores the node state in *state (untouched on failure); prepare and invoke
// pass *state. A kernel without init or prepare succeeds at that stage.
absl::Status CallKernel(const KilnKernel& kernel, const PluginCall& call,
                        void** state, absl::FunctionRef<std::string()> where);

// KilnDelegateInterface.partition, partition_init, partition_prepare or
// partition_invoke (per call.stage) of delegate `instance`. partition_init
// stores the partition state in *state (untouched on failure); prepare and
// invoke pass *state; partition ignores it. A delegate without
// partition_prepare succeeds at that stage.
absl::Status CallDelegate(const KilnDelegateInterface& iface, void* instance,
                          const PluginCall& call, void** state,
                          absl::FunctionRef<std::string()> where);

}  // namespace kiln

#endif  // KILN_HOST_RUNTIME_PLUGIN_CALL_H_
