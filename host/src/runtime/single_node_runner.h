// Runs one plugin kernel on one node outside any model, through the real
// extension API: for kernel unit tests and the conformance runner.
//
//   SingleNodeRunner r;
//   int a = r.AddTensor(KILN_TYPE_FLOAT32, {2, 3}, std::vector<float>{...});
//   int b = r.AddTensor(KILN_TYPE_FLOAT32, {3}, std::vector<float>{...});
//   int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
//   r.SetOp(KILN_OP_ADD, 1, {a, b}, {out});
//   r.node().SetInt(KILN_OPTION_FUSED_ACTIVATION, KILN_ACTIVATION_RELU);
//   ASSERT_OK(r.Run(*kernel));
//   std::vector<float> y = r.Values<float>(out);
#ifndef KILN_HOST_RUNTIME_SINGLE_NODE_RUNNER_H_
#define KILN_HOST_RUNTIME_SINGLE_NODE_RUNNER_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kiln/kiln_extension.h"
#include "plugin/plugin_loader.h"
#include "runtime/graph.h"

namespace kiln {

class SingleNodeRunner {
 public:
  SingleNodeRunner();

  // Adds a tensor with the given values (copied; empty = uninitialised,
  // allocated by Run after prepare). Returns its index.
  int AddTensor(KilnTensorType type, std::vector<int32_t> shape,
                const void* data = nullptr, size_t bytes = 0,
                bool constant = false);
  template <typename T>
  int AddTensor(KilnTensorType type, std::vector<int32_t> shape,
                const std::vector<T>& values, bool constant = false) {
    return AddTensor(type, std::move(shape), values.data(),
                     values.size() * sizeof(T), constant);
  }
  // Sets the node's op; input index -1 is an omitted optional input.
  void SetOp(int32_t builtin_code, int32_t version, std::vector<int32_t> inputs,
             std::vector<int32_t> outputs, std::string custom_name = "");
  Node& node() { return graph_.nodes[0]; }
  Tensor& tensor(int index) { return graph_.tensors[static_cast<size_t>(index)]; }
  Graph& graph() { return graph_; }

  // init -> prepare -> allocate non-constant tensors -> invoke -> free.
  // Errors carry the message the kernel reported.
  absl::Status Run(const KilnKernel& kernel);
  // Like Run, but invokes `invocations` times with one prepare.
  absl::Status RunRepeated(const KilnKernel& kernel, int invocations);

  template <typename T>
  std::vector<T> Values(int index) {
    const Tensor& t = tensor(index);
    std::vector<T> out(t.bytes / sizeof(T));
    if (!out.empty()) std::memcpy(out.data(), t.data, out.size() * sizeof(T));
    return out;
  }

 private:
  Graph graph_;
};

// The kernel of `plugin` covering (code, version[, custom name]), or null.
const KilnKernel* FindKernel(const LoadedPlugin& plugin, int32_t builtin_code,
                             int32_t version, const std::string& custom = "");

// Loads a plugin at the newest host version, for tests.
absl::StatusOr<std::shared_ptr<LoadedPlugin>> LoadPluginForTest(
    const std::string& path);
// Loads a plugin with the host capped at extension API `max_abi_version`
// (KILN_MAKE_VERSION; 0 = newest), as an older host would serve it: the
// plugin sees a KilnHostApi of that version's size. Fails if the cap is not
// a version this host serves, or with the loader's refusal.
absl::StatusOr<std::shared_ptr<LoadedPlugin>> LoadPluginForTest(
    const std::string& path, uint32_t max_abi_version);

}  // namespace kiln

#endif  // KILN_HOST_RUNTIME_SINGLE_NODE_RUNNER_H_
