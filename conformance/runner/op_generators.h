// Deterministic, seeded single-node test cases per builtin op family, valid
// under version 1 semantics of the op (so valid for every later version
// too: TFLite op versions only add types and options with defaults).
#ifndef KILN_CONFORMANCE_RUNNER_OP_GENERATORS_H_
#define KILN_CONFORMANCE_RUNNER_OP_GENERATORS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/graph.h"
#include "runtime/single_node_runner.h"

namespace kiln::conformance {

struct GeneratedTensor {
  KilnTensorType type = KILN_TYPE_FLOAT32;
  std::vector<int32_t> shape;
  std::vector<uint8_t> bytes;  // empty: an output, sized by prepare
  bool constant = false;
};

struct GeneratedCase {
  std::string family;  // "elementwise binary", "conv", ...
  std::vector<GeneratedTensor> tensors;
  std::vector<int32_t> inputs;  // indices into tensors
  std::vector<int32_t> outputs;
  std::vector<std::pair<uint32_t, OptionValue>> options;
};

// The case for `builtin_code`, or NotFound saying there is none ("no input
// generator for op X"). Same (op, seed) always gives the same case.
absl::StatusOr<GeneratedCase> GenerateCase(int32_t builtin_code, uint64_t seed);

// Adds the case's tensors and node (op `builtin_code`, `version`) to a fresh
// runner. Returns the runner tensor indices of the outputs.
std::vector<int> BuildNode(const GeneratedCase& c, int32_t builtin_code,
                           int32_t version, const std::string& custom_name,
                           SingleNodeRunner* runner);

// Compares two output tensors: same type and shape; floats within
// |a - b| <= kAbsTolerance + kRelTolerance * |b| (NaN matches NaN), every
// other type exactly. Returns "" when equal, else what differs.
inline constexpr double kAbsTolerance = 1e-5;
inline constexpr double kRelTolerance = 1e-4;
std::string CompareTensors(const Tensor& got, const Tensor& want);

}  // namespace kiln::conformance

#endif  // KILN_CONFORMANCE_RUNNER_OP_GENERATORS_H_
