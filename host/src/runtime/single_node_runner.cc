#include "runtime/single_node_runner.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "runtime/host_api.h"
#include "runtime/plugin_call.h"

namespace kiln {
SingleNodeRunner::SingleNodeRunner() {
  graph_.nodes.resize(1);
  graph_.nodes[0].index = 0;
  graph_.execution_plan = {0};
}

int SingleNodeRunner::AddTensor(KilnTensorType type, std::vector<int32_t> shape,
                                const void* data, size_t bytes, bool constant) {
  Tensor t;
  t.name = absl::StrCat("t", graph_.tensors.size());
  t.type = type;
  t.shape = std::move(shape);
  if (data != nullptr) {
    t.AllocateOwned(bytes);
    std::memcpy(t.owned.data(), data, bytes);
    if (constant) t.storage = TensorStorage::kConstant;
  }
  graph_.tensors.push_back(std::move(t));
  return static_cast<int>(graph_.tensors.size() - 1);
}

void SingleNodeRunner::SetOp(int32_t builtin_code, int32_t version,
                             std::vector<int32_t> inputs,
                             std::vector<int32_t> outputs,
                             std::string custom_name) {
  Node& n = node();
  n.builtin_code = builtin_code;
  n.version = version;
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  n.custom_name = std::move(custom_name);
}

absl::Status SingleNodeRunner::Run(const KilnKernel& kernel) {
  return RunRepeated(kernel, 1);
}

absl::Status SingleNodeRunner::RunRepeated(const KilnKernel& kernel,
                                           int invocations) {
  const auto no_label = [] { return std::string(); };
  PluginCall call;
  call.graph = &graph_;
  call.node = &node();
  void* state = nullptr;
  call.stage = PluginStage::kInit;
  KILN_RETURN_IF_ERROR(CallKernel(kernel, call, &state, no_label));
  call.stage = PluginStage::kPrepare;
  absl::Status result = CallKernel(kernel, call, &state, no_label);
  if (result.ok()) {
    for (Tensor& t : graph_.tensors) {
      if (t.storage == TensorStorage::kNone) t.AllocateOwned(t.RequiredBytes());
    }
    call.stage = PluginStage::kInvoke;
    for (int i = 0; i < invocations && result.ok(); ++i) {
      result = CallKernel(kernel, call, &state, no_label);
    }
  }
  if (kernel.free != nullptr && kernel.init != nullptr) {
    kernel.free(kernel.user_data, state);
  }
  return result;
}

const KilnKernel* FindKernel(const LoadedPlugin& plugin, int32_t builtin_code,
                             int32_t version, const std::string& custom) {
  for (const KilnKernel* k : plugin.kernels()) {
    if (k->builtin_code != builtin_code) continue;
    if (builtin_code == KILN_OP_CUSTOM && custom != k->custom_name) continue;
    if (version >= k->min_version && version <= k->max_version) return k;
  }
  return nullptr;
}

absl::StatusOr<std::shared_ptr<LoadedPlugin>> LoadPluginForTest(
    const std::string& path) {
  return LoadPluginForTest(path, 0);
}

absl::StatusOr<std::shared_ptr<LoadedPlugin>> LoadPluginForTest(
    const std::string& path, uint32_t max_abi_version) {
  KILN_ASSIGN_OR_RETURN(const HostOffer offer,
                        PluginLoader::MakeOffer(max_abi_version));
  return PluginLoader::Load(path, offer);
}

}  // namespace kiln
