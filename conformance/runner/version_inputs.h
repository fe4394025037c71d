// Version-true inputs: what each TFLite op version introduced (per
// tensorflow/lite/tools/versioning/op_version.cc), applied to the version-1
// case of the op: element types (bool, int8/int16/int32/int64, uint16/uint32
// and float64 outputs, quantized or not, int16 indices), per-channel
// quantization, hybrid (float activations, int8 weights) and integer kernels
// (int8/int16 activations, int8 weights, int32/int64 bias), sparse weights,
// rank 5 and 6, and options (dilation, keep_num_dims, no bias,
// asymmetric_quantize_inputs, pot_scale_int16, STRIDED_SLICE masks and
// offset, batch_dims, a bias and fused activation). Versions the generators
// cannot make inputs for are listed with the reason (VersionInputsGap).
#ifndef KILN_CONFORMANCE_RUNNER_VERSION_INPUTS_H_
#define KILN_CONFORMANCE_RUNNER_VERSION_INPUTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "op_generators.h"

namespace kiln::conformance {

// Converts `c` (the op's version-1 float case) to what the newest listed
// version <= `version` of `builtin_code` introduced, and sets
// `c->exercises_version` to that version. No change (exercises_version 1)
// when the op has no listed version <= `version`.
void ApplyVersionInputs(int32_t builtin_code, int32_t version,
                        GeneratedCase* c);

// Whether `version` of the op has inputs of its own (what exactly that
// version introduced), not an older version's.
bool HasVersionInputs(int32_t builtin_code, int32_t version);
// Why the generators have no version-true inputs for `version` of the op
// (a listed gap), or null.
const char* VersionInputsGap(int32_t builtin_code, int32_t version);

// One line per listed op version ("CONV_2D v3: int8 activations, int8
// per-channel weights, int32 bias"), for the documentation and reports.
std::vector<std::string> DescribeVersionInputs();

}  // namespace kiln::conformance

#endif  // KILN_CONFORMANCE_RUNNER_VERSION_INPUTS_H_
