#include "runtime/single_node_runner.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "runtime/host_api.h"

namespace kiln {
namespace {

absl::Status CallStatus(KilnStatus code, const CallContext& c,
                        const char* stage) {
  if (code == KILN_STATUS_OK) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(code),
                      absl::StrCat(stage, " failed: ",
                                   c.error.message.empty() ? "(no message)"
                                                           : c.error.message));
}

}  // namespace

SingleNodeRunner::SingleNodeRunner() {
  graph_.nodes.resize(1);
  graph_.nodes[0].index = 0;
  graph_.execution_plan = {0};
}

int SingleNodeRunner::AddTensor(KilnTensorType type, std::vector<int32_t> shape,
                                const void* data, size_t bytes,
                                bool constant) {
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
  Node& n = node();
  CallContext c;
  c.graph = &graph_;
  c.node = &n;
  void* state = nullptr;
  if (kernel.init != nullptr) {
    absl::Status s = CallStatus(
        kernel.init(kernel.user_data, ToOpaque(&c), ToOpaque(&n), &state), c,
        "init");
    if (!s.ok()) return s;
  }
  absl::Status result = absl::OkStatus();
  if (kernel.prepare != nullptr) {
    c.allow_resize = true;
    result = CallStatus(
        kernel.prepare(kernel.user_data, state, ToOpaque(&c), ToOpaque(&n)), c,
        "prepare");
    c.allow_resize = false;
  }
  if (result.ok()) {
    for (Tensor& t : graph_.tensors) {
      if (t.storage == TensorStorage::kNone) t.AllocateOwned(t.RequiredBytes());
    }
    for (int i = 0; i < invocations && result.ok(); ++i) {
      result = CallStatus(
          kernel.invoke(kernel.user_data, state, ToOpaque(&c), ToOpaque(&n)),
          c, "invoke");
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
  absl::StatusOr<HostOffer> offer = PluginLoader::MakeOffer(max_abi_version);
  if (!offer.ok()) return offer.status();
  return PluginLoader::Load(path, *offer);
}

}  // namespace kiln
