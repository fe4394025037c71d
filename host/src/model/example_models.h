// Ready-made models written with ModelBuilder: a small CNN that the
// README's main command runs, a model with large weights for the
// "open + verify time does not grow with weight bytes" benchmark, and WHILE
// loops for the tests of the interpreter's limits.
// All weights are deterministic (same bytes on every call and machine).
#ifndef KILN_HOST_MODEL_EXAMPLE_MODELS_H_
#define KILN_HOST_MODEL_EXAMPLE_MODELS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"

namespace kiln {

// Example CNN, float32, one subgraph, signature "serving_default":
//   "image" [1,16,16,3]
//   -> CONV_2D v1 (8 filters 3x3, stride 1, SAME, fused RELU)   [1,16,16,8]
//   -> DEPTHWISE_CONV_2D v1 (3x3, multiplier 1, stride 1, SAME)  [1,16,16,8]
//   -> MAX_POOL_2D v1 (2x2, stride 2, VALID)                     [1,8,8,8]
//   -> FULLY_CONNECTED v1 (10 units; flattens its input)         [1,10]
//   -> SOFTMAX v1 (beta 1) "probabilities" [1,10]
absl::StatusOr<std::vector<uint8_t>> BuildExampleCnnModel();

// Shapes of the example CNN's input and output.
inline constexpr int32_t kExampleCnnInputShape[4] = {1, 16, 16, 3};
inline constexpr int32_t kExampleCnnOutputShape[2] = {1, 10};

// A deterministic input image for the example CNN (1*16*16*3 floats in
// [0, 1)).
std::vector<float> ExampleCnnInput();

// The example CNN's output for ExampleCnnInput() as computed by TFLite's
// reference kernels (ai_edge_litert, BUILTIN_REF); compare with a relative
// tolerance of about 1e-5.
inline constexpr float kExampleCnnExpectedOutput[10] = {
    0.1245f,     0.07478528f, 0.07193626f, 0.05477658f, 0.08804329f,
    0.08795319f, 0.1234488f,  0.1119062f,  0.1486914f,  0.1139589f};

// A float32 chain of FULLY_CONNECTED v1 layers over input "x" [1,4096],
// each with a 4096x4096 weight matrix (64 MiB), enough layers to hold at
// least `min_weight_bytes` of weights (at least one layer). With
// `external_data` the weights follow the FlatBuffer (Buffer.offset), as
// converters write models over 2 GB. Weights are a cheap deterministic
// pattern, not meaningful values.
absl::StatusOr<std::vector<uint8_t>> BuildLargeWeightsModel(
    uint64_t min_weight_bytes, bool external_data = false);

// WHILE loops for the limits on untrusted models (max WHILE iterations,
// invoke timeout, cancellation); host-intrinsic only, no plugin needed.
// "b" (bool [1]) -> WHILE -> "b_out"; the body passes b through. With
// `forever` the cond subgraph returns the constant true (the loop never
// ends, whatever b); else it returns b (the loop ends at once for false and
// never for true).
absl::StatusOr<std::vector<uint8_t>> BuildWhileLoopModel(bool forever);

// "i", "n" (int32 [1]) -> WHILE (i < n) { i = i + 1 } -> "i_out", "n_out":
// runs n - i iterations (LESS and ADD from a kernel plugin).
absl::StatusOr<std::vector<uint8_t>> BuildCountingWhileModel();

}  // namespace kiln

#endif  // KILN_HOST_MODEL_EXAMPLE_MODELS_H_
