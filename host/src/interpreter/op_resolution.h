// Resolution of nodes to kernels, and model-level compatibility checks.
// Internal to the interpreter.
#ifndef KILN_HOST_INTERPRETER_OP_RESOLUTION_H_
#define KILN_HOST_INTERPRETER_OP_RESOLUTION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "model/model.h"
#include "plugin/plugin_loader.h"
#include "runtime/graph.h"

namespace kiln {

// Ops the interpreter runs itself (see interpreter.h for why).
bool IsHostIntrinsicOp(int32_t builtin_code);
// Highest version of a host-intrinsic op this host runs (all start at 1).
int32_t HostIntrinsicMaxVersion(int32_t builtin_code);

// The kernel that runs a node, and the plugin it comes from.
struct KernelChoice {
  const KilnKernel* kernel = nullptr;
  const LoadedPlugin* plugin = nullptr;
};

// The kernel of every node of `model`, as [subgraph][node], from `plugins`
// in load order, first match wins; host-intrinsic nodes get none. Fails
// with one message listing every node that cannot run; `records` (every
// load attempt) make it say what was searched.
absl::StatusOr<std::vector<std::vector<KernelChoice>>> ResolveKernels(
    const Model& model,
    const std::vector<std::shared_ptr<LoadedPlugin>>& plugins,
    const std::vector<PluginLoadRecord>& records);

// Refuses a model whose metadata min_runtime_version names a TFLite runtime
// newer than kNewestTfliteRuntimeRead (or is not a version at all).
absl::Status CheckMinRuntimeVersion(const Model& model);

// Compares dotted versions numerically ("1.10.0" > "1.9"): -1, 0 or 1.
// Returns false in *ok when either is not digits separated by dots.
int CompareDottedVersions(const std::string& a, const std::string& b, bool* ok);

}  // namespace kiln

#endif  // KILN_HOST_INTERPRETER_OP_RESOLUTION_H_
