// Integer SOFTMAX, bit-exact with TFLite's reference kernels: int8 / uint8
// inputs through gemmlowp fixed-point exp and reciprocal (Softmax<In, Out>,
// outputs int8, uint8 or int16), int16 through the exp and 1/(1+x) lookup
// tables (SoftmaxInt16).
//
// One exception: when beta * input_scale is below 2^-26, TFLite's
// reference kernel aborts the process (QuantizeMultiplierGreaterThanOne's
// check), while its optimized kernel runs a float lookup table
// (optimized_ops::Softmax with PopulateSoftmaxLookupTable). Kiln then
// computes what that optimized kernel computes on x86-64 builds, so such
// models (converter output whose logits have a tiny scale) still run.
#ifndef KILN_PLUGINS_CPU_KERNELS_NN_SOFTMAX_QUANTIZED_H_
#define KILN_PLUGINS_CPU_KERNELS_NN_SOFTMAX_QUANTIZED_H_

#include <cstdint>
#include <vector>

#include "kernels/nn/nn_common.h"
#include "kernels/nn/softmax_exp_table.h"
#include "kernels/quantization_util.h"

namespace kiln::cpu::nn {

struct QuantizedSoftmaxState {
  KilnTensorType input_type = KILN_TYPE_INT8;
  KilnTensorType output_type = KILN_TYPE_INT8;
  // 8-bit inputs: beta * input_scale in Q5.26, the smallest input
  // difference that still contributes, and the fixed-point exp of every
  // difference in Q0.31 and Q12.19 (FillSoftmaxExpTables).
  QuantizedMultiplier input_multiplier;
  int32_t diff_min = 0;
  std::vector<int32_t> exp_table, exp_accum_table;
  // int16 inputs: input difference to [-65535, 0] ~ [-10, 0], and the
  // tables of exp and 1 / (1 + x).
  std::vector<int16_t> exp_lut, reciprocal_lut;
  // 8-bit inputs with beta * input_scale too small for the fixed point:
  // exp(-beta * input_scale * (255 - i)) for i in [0, 255], and the output
  // quantization.
  std::vector<float> float_table;
  float output_scale = 0.f;
  int32_t output_zero_point = 0;
  // 8-bit inputs with a last axis of 2: a row's outputs depend only on
  // x[1] - x[0], so both are looked up, as 2 * output-size bytes at
  // (x[1] - x[0] + 255), from this table filled by the kernel above.
  std::vector<uint8_t> pair_table;
};

// Rows of the fixed-point 8-bit SOFTMAX (exp tables filled, no float table)
// whose output has the input's type, in AVX2, bit-identical to the scalar
// kernel; all null when the CPU or the build lacks AVX2.
struct Softmax8RowKernels {
  void (*int8)(const QuantizedSoftmaxState&, const int8_t*, int8_t*, int64_t,
               int32_t) = nullptr;
  void (*uint8)(const QuantizedSoftmaxState&, const uint8_t*, uint8_t*, int64_t,
                int32_t) = nullptr;
};
Softmax8RowKernels Softmax8RowKernelsAvx2();

// Checks the types and output quantization TFLite requires (int8 output:
// zero point -128, scale 1/256; int16: zero point 0, scale 1/32768; int16
// input: zero point 0) and derives the parameters; sizes the output.
KilnStatus QuantizedSoftmaxPrepare(KernelContext& k, QuantizedSoftmaxState& s);
KilnStatus QuantizedSoftmaxInvoke(KernelContext& k,
                                  const QuantizedSoftmaxState& s);

// LOG_SOFTMAX on int8 (v2) / uint8 (v1), bit-exact with TFLite's reference
// LogSoftmax: fixed-point exp sums, log via
// log_x_for_x_greater_than_or_equal_to_1, output scale 16/256 with zero
// point 127 (int8) / 255 (uint8).
struct QuantizedLogSoftmaxState {
  QuantizedMultiplier input_multiplier;    // beta * input scale, Q5.26
  QuantizedMultiplier reverse_multiplier;  // its inverse (shift <= 0)
  int32_t diff_min = 0;
  // Every difference scaled to Q5.26 and its exp in Q12.19
  // (FillLogSoftmaxTables).
  std::vector<int32_t> scaled_table, exp_accum_table;
};
KilnStatus QuantizedLogSoftmaxPrepare(KernelContext& k,
                                      QuantizedLogSoftmaxState& s);
KilnStatus QuantizedLogSoftmaxInvoke(KernelContext& k,
                                     const QuantizedLogSoftmaxState& s);

// L2_NORMALIZATION on int8 (v2) / uint8 (v1), bit-exact with TFLite's
// reference kernels: 1/sqrt of the integer sum of squares
// (GetInvSqrtQuantizedMultiplierExp), output scale 1/128 with zero point 0
// (int8) / 128 (uint8).
KilnStatus QuantizedL2NormPrepare(KernelContext& k, int32_t* input_zero_point);
KilnStatus QuantizedL2NormInvoke(KernelContext& k, int32_t input_zero_point);

}  // namespace kiln::cpu::nn

#endif  // KILN_PLUGINS_CPU_KERNELS_NN_SOFTMAX_QUANTIZED_H_
