// The plan of a reduction over an axis tensor, and the integer reductions
// (int8, uint8, int16) bit-exact with TFLite's reference kernels: MEAN and
// SUM through QuantizedMeanOrSum, REDUCE_PROD through QuantizedReduceProd,
// REDUCE_MAX / REDUCE_MIN on raw values (input and output quantization must
// match, as TFLite requires).
#ifndef KILN_PLUGINS_CPU_KERNELS_NN_REDUCE_QUANTIZED_H_
#define KILN_PLUGINS_CPU_KERNELS_NN_REDUCE_QUANTIZED_H_

#include <cstdint>
#include <vector>

#include "kernels/nn/nn_common.h"

namespace kiln::cpu::nn {

enum class ReduceKind { kMean, kSum, kProd, kMax, kMin, kAny, kAll };

struct ReducePlan {
  bool known = false;
  std::vector<int32_t> in_shape;
  std::vector<bool> reduced;  // per input dim
  std::vector<int32_t> out_shape;
};

// True for the input types of the integer reductions.
bool IsQuantizedReduceType(KilnTensorType type);

// Prepare-time checks of an integer reduction `op` of `kind` on input 0 /
// output 0: quantization present where the kernel needs it, int16 zero
// points 0, matching input and output quantization for MAX / MIN, no uint8
// REDUCE_PROD.
KilnStatus QuantizedReduceCheck(KernelContext& k, const char* op,
                                ReduceKind kind);

// Runs the integer reduction planned by `plan` (its axes known).
KilnStatus QuantizedReduceRun(KernelContext& k, const char* op, ReduceKind kind,
                              const ReducePlan& plan);

}  // namespace kiln::cpu::nn

#endif  // KILN_PLUGINS_CPU_KERNELS_NN_REDUCE_QUANTIZED_H_
