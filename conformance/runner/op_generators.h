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
  Quantization quantization;  // per-tensor; empty: not quantized
  // A rank-2 constant the case models store as TFLite sparse weights (rows
  // DENSE, columns SPARSE_CSR over the non-zero elements); `bytes` stay the
  // dense tensor, which is what Kiln's model loader hands a kernel.
  bool sparse_csr = false;
};

struct GeneratedCase {
  std::string family;  // "elementwise binary", "conv", ...
  std::vector<GeneratedTensor> tensors;
  std::vector<int32_t> inputs;  // indices into tensors
  std::vector<int32_t> outputs;
  std::vector<std::pair<uint32_t, OptionValue>> options;
  // The op version whose inputs this case exercises (what that version
  // introduced per TFLite's op versioning: a type, quantization); the case
  // is valid at every later version with the same meaning.
  int32_t exercises_version = 1;
  // A custom op's custom options (custom cases only).
  std::vector<uint8_t> custom_options;
};

// The case for `builtin_code`, or NotFound saying there is none ("no input
// generator for op X"). Same (op, seed) always gives the same case. With
// `version`, version-true inputs: the version-1 case converted to what the
// newest version <= `version` introduced (VersionInputs), e.g. ABS v2 int8
// quantized, v3 int16 quantized, v4 int16, v5 int32; so a kernel that
// claims a version but implements only the float path fails.
absl::StatusOr<GeneratedCase> GenerateCase(int32_t builtin_code, uint64_t seed,
                                           int32_t version = 1);

// The newest version <= `version` of the op whose inputs the generator
// changes (1 when none): the version a case for `version` exercises.
int32_t InputVersion(int32_t builtin_code, int32_t version);
// Every version of the op the generator has version-true inputs for,
// including 1.
std::vector<int32_t> InputVersions(int32_t builtin_code);

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
