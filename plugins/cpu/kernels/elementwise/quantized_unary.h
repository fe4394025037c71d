// Quantized (UINT8 / INT8 / INT16) unary activations and math of the
// elementwise group, with the integer arithmetic of LiteRT's reference
// kernels: RELU, RELU6, RELU_N1_TO_1, RELU_0_TO_1, LEAKY_RELU, ABS,
// HARD_SWISH, LOGISTIC, TANH, ELU, EXP, LOG, GELU, RSQRT and SQRT.
//
// 8-bit inputs: prepare evaluates the op's exact integer (or, where LiteRT
// uses a float lookup table, float) function once per input code into a
// 256-entry table; invoke looks each element up. INT16 inputs: a
// piecewise-affine requantization per element (RELU, RELU6, LEAKY_RELU,
// ABS), LiteRT's interpolated 513-entry table (EXP, LOG, RSQRT, GELU) or
// LiteRT's float SQRT.
// Internal to kernels/elementwise.
#ifndef KILN_PLUGINS_CPU_KERNELS_ELEMENTWISE_QUANTIZED_UNARY_H_
#define KILN_PLUGINS_CPU_KERNELS_ELEMENTWISE_QUANTIZED_UNARY_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/quantization_util.h"
#include "kiln/sdk/plugin.h"

namespace kiln::cpu::elementwise {

// out = clamp(output_offset + M(v), lo, hi) with v = x - input_offset (|v|
// when `absolute`), M the multiplier for v >= 0 (`positive`) or v < 0
// (`negative`), or the identity when !`rescale`.
struct PiecewiseAffine {
  int32_t input_offset = 0;
  int32_t output_offset = 0;
  bool absolute = false;
  bool rescale = true;
  QuantizedMultiplier positive, negative;
  int32_t lo = std::numeric_limits<int32_t>::min();
  int32_t hi = std::numeric_limits<int32_t>::max();

  int32_t operator()(int32_t x) const {
    int32_t v = x - input_offset;
    if (absolute && v < 0) v = -v;
    const int32_t scaled = !rescale ? v
                                    : MultiplyByQuantizedMultiplier(
                                          v, v >= 0 ? positive : negative);
    const int32_t out = output_offset + scaled;
    return std::min(hi, std::max(lo, out));  // LiteRT's order (lo > hi: hi)
  }
};

// How an INT16 node computes each element.
enum class Int16Kind {
  kAffine,  // PiecewiseAffine: RELU, RELU6, LEAKY_RELU, quantized ABS
  kRawAbs,  // ABS v4 (no quantization parameters): the integer |x|
  kLut,     // LiteRT's interpolated 513-entry table: EXP, LOG, RSQRT, GELU
  kSqrt,    // SQRT: sqrtf of the dequantized value, truncated
};

// Per-node state, filled by PrepareQuantizedUnary.
// The node parameters a QuantizedUnaryState was derived from: a prepare
// again with the same ones (a dynamic shape upstream) keeps the tables.
struct QuantizedUnaryKey {
  int32_t code = -1;  // none
  KilnTensorType type = KILN_TYPE_INT8;
  float in_scale = 0.f, out_scale = 0.f;
  int32_t in_zero_point = 0, out_zero_point = 0;
  float alpha = 0.f;        // LEAKY_RELU
  int64_t approximate = 0;  // GELU
  bool operator==(const QuantizedUnaryKey& o) const {
    return code == o.code && type == o.type && in_scale == o.in_scale &&
           out_scale == o.out_scale && in_zero_point == o.in_zero_point &&
           out_zero_point == o.out_zero_point && alpha == o.alpha &&
           approximate == o.approximate;
  }
};

struct QuantizedUnaryState {
  QuantizedUnaryKey key;
  KilnTensorType type = KILN_TYPE_INT8;
  // 8-bit types: the output code of every input code, indexed by the input
  // code's byte value.
  std::array<uint8_t, 256> table{};
  // INT16 types.
  Int16Kind int16_kind = Int16Kind::kAffine;
  PiecewiseAffine int16;
  std::vector<int16_t> int16_lut;  // kLut: 513 entries
  float sqrt_input_scale = 1.f;    // kSqrt
  float sqrt_output_scale = 1.f;   // kSqrt
  // RSQRT, SQRT: input codes below this fail the invoke, as in LiteRT.
  int32_t min_valid_code = std::numeric_limits<int32_t>::min();
};

// True when the op (`builtin_code`) has a quantized kernel for `type`
// (UINT8, INT8 or INT16 input). Other quantized combinations are refused by
// PrepareQuantizedUnary with a message.
bool IsQuantizedUnaryType(KilnTensorType type);

// Validates the node (one input, one output of the same type, per-tensor
// quantization LiteRT accepts for the op) and fills *state; sizes the
// output to the input's shape. On failure *state is unspecified and the
// message names the op, the tensor and what to change.
KilnStatus PrepareQuantizedUnary(sdk::KernelContext& k,
                                 QuantizedUnaryState* state);

// Computes the output from the input with the state of prepare.
KilnStatus InvokeQuantizedUnary(sdk::KernelContext& k,
                                const QuantizedUnaryState& state);

}  // namespace kiln::cpu::elementwise

#endif  // KILN_PLUGINS_CPU_KERNELS_ELEMENTWISE_QUANTIZED_UNARY_H_
