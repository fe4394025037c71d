// Quantized (UINT8 / INT8 / INT16) binary ops of the elementwise group with
// the integer arithmetic of LiteRT's reference kernels: ADD, SUB (general
// rescaling, and int16 power-of-two scales), MUL (and int16 x int16 ->
// int8/uint8), DIV, SQUARED_DIFFERENCE, MAXIMUM, MINIMUM, PRELU and the
// comparisons LESS, LESS_EQUAL, GREATER, GREATER_EQUAL, EQUAL, NOT_EQUAL.
// Prepare derives the integer parameters from the tensors' scales and zero
// points exactly as LiteRT's Prepare functions do (including which of their
// intermediate products are float and which double); invoke applies them
// over a broadcast plan. Internal to kernels/elementwise.
#ifndef KILN_PLUGINS_CPU_KERNELS_ELEMENTWISE_QUANTIZED_BINARY_H_
#define KILN_PLUGINS_CPU_KERNELS_ELEMENTWISE_QUANTIZED_BINARY_H_

#include <cstdint>

#include "kernels/broadcast.h"
#include "kernels/quantization_util.h"
#include "kiln/sdk/plugin.h"

namespace kiln::cpu::elementwise {

struct QuantizedBinaryState {
  enum class Kind {
    kAddSub,             // (x + o0) << s, (y + o1) << s, rescale, +/-
    kAddSubPot16,        // int16, power-of-two scales: shift one input
    kMul,                // (x + o0) * (y + o1), rescale
    kMulInt16ToNarrow,   // int16 x int16 Q0.15 product -> int8 / uint8
    kSquaredDifference,  // as kAddSub with s = 7, then squared
    kRaw,                // MAXIMUM / MINIMUM on the stored codes
    kPrelu,              // x >= 0 ? x : x * alpha, two multipliers
    kCompare,            // both inputs rescaled to a common scale
    kDiv,                // (x + o0) / (y + o1) by a fixed-point reciprocal
  };
  Kind kind = Kind::kAddSub;
  KilnTensorType input_type = KILN_TYPE_INT8;
  KilnTensorType input1_type = KILN_TYPE_INT8;  // PRELU: INT8 alpha of INT16
  KilnTensorType output_type = KILN_TYPE_INT8;
  int32_t offset0 = 0, offset1 = 0, output_offset = 0;
  int32_t left_shift = 0;
  QuantizedMultiplier multiplier0, multiplier1, output_multiplier;
  int32_t act_min = 0, act_max = 0;
  bool subtract = false;  // SUB
  bool maximum = false;   // MAXIMUM (else MINIMUM)
  // kAddSubPot16: right shifts of the two inputs (one of them 0).
  int32_t pot_shift0 = 0, pot_shift1 = 0;
};

// True for the storage types the quantized kernels take.
bool IsQuantizedBinaryType(KilnTensorType type);

// Validates the node's types and quantization for its op (from
// k.builtin_code()) as LiteRT's Prepare does and fills *state. The caller
// checks arity and plans the broadcast (output shape). On failure *state is
// unspecified and the message names the op, the tensor and the fix.
KilnStatus PrepareQuantizedBinary(sdk::KernelContext& k,
                                  QuantizedBinaryState* state);

// Computes output 0 from inputs 0 and 1 over `plan`.
KilnStatus InvokeQuantizedBinary(sdk::KernelContext& k,
                                 const QuantizedBinaryState& state,
                                 const BroadcastPlan& plan);

// One broadcast row of an 8-bit ADD, SUB, MUL or SQUARED_DIFFERENCE (input
// and output of one type): out[i] = op(a[i * sa], b[i * sb]) for i below
// the returned count, a multiple of 8 at most n (0 when sa and sb are both
// 0); the caller computes the rest. Each output is bit-identical to the
// scalar kernel's. quantized_binary.cc calls them only for kinds and shifts
// they take (every shift in [0, 31]).
using QuantizedBinaryRowFn = int64_t (*)(const QuantizedBinaryState& s,
                                         const void* a, int64_t sa,
                                         const void* b, int64_t sb, void* out,
                                         int64_t n);
struct QuantizedBinaryRowKernels {
  QuantizedBinaryRowFn int8 = nullptr;
  QuantizedBinaryRowFn uint8 = nullptr;
};
// The AVX2 kernels, or all null when the CPU or the build lacks AVX2.
QuantizedBinaryRowKernels QuantizedBinaryRowKernelsAvx2();

}  // namespace kiln::cpu::elementwise

#endif  // KILN_PLUGINS_CPU_KERNELS_ELEMENTWISE_QUANTIZED_BINARY_H_
