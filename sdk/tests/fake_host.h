// A scripted host for SDK tests: a KilnHostApi table over a small in-memory
// graph, recording what plugins report and claim. It serves the functions a
// delegate uses (tensors, nodes, fused-activation option, subgraph view,
// claims, delegated nodes) the way kiln_extension.h specifies them; every
// other entry is null. Not thread-safe.
#ifndef KILN_SDK_TESTS_FAKE_HOST_H_
#define KILN_SDK_TESTS_FAKE_HOST_H_

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/kiln_extension.h"

namespace kiln::sdk_test {

struct FakeTensor {
  std::string name;
  KilnTensorType type = KILN_TYPE_FLOAT32;
  std::vector<int32_t> shape;
  std::vector<float> data;  // empty: no data yet
};

struct FakeNode {
  int32_t builtin_code = KILN_OP_ADD;
  int32_t version = 1;
  std::vector<int32_t> inputs, outputs;  // tensor indices
  int64_t fused_activation = -1;         // -1: option absent
  std::vector<int32_t> delegated_nodes;  // partition nodes only
};

struct FakeGraph {
  std::vector<FakeTensor> tensors;
  std::vector<FakeNode> nodes;
  std::vector<int32_t> execution_plan;
};

// What KilnOpaqueContext points to during one callback.
struct FakeContext {
  explicit FakeContext(FakeGraph* g) : graph(g) {}
  FakeGraph* graph;
  KilnStatus error_code = KILN_STATUS_OK;  // first report_error code
  std::string error;                       // messages joined by "; "
  std::vector<int32_t> claimed;            // context_delegate_nodes
  KilnOpaqueContext* opaque() {
    return reinterpret_cast<KilnOpaqueContext*>(this);
  }
};

inline KilnOpaqueNode* Opaque(FakeNode* node) {
  return reinterpret_cast<KilnOpaqueNode*>(node);
}

// The table, with static storage.
const KilnHostApi* FakeHostApi();

}  // namespace kiln::sdk_test

#endif  // KILN_SDK_TESTS_FAKE_HOST_H_
