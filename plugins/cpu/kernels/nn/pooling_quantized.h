// Window geometry of AVERAGE_POOL_2D / MAX_POOL_2D and their integer
// kernels (int8, uint8, int16), bit-exact with TFLite's reference
// AveragePool / MaxPool: raw values pooled without requantization (TFLite
// requires the input and output quantization to match), averages rounded
// half away from zero, then the fused activation's clamp.
#ifndef KILN_PLUGINS_CPU_KERNELS_NN_POOLING_QUANTIZED_H_
#define KILN_PLUGINS_CPU_KERNELS_NN_POOLING_QUANTIZED_H_

#include <cstdint>

#include "kernels/nn/nn_common.h"

namespace kiln::cpu::nn {

struct PoolGeometry {
  WindowParams window;
  int64_t activation = KILN_ACTIVATION_NONE;
  int32_t filter_h = 0, filter_w = 0;
  int32_t batches = 0, in_h = 0, in_w = 0, channels = 0;
  int32_t out_h = 0, out_w = 0, pad_h = 0, pad_w = 0;
};

// The integer output range of a pool over input 0 of an integer type:
// the fused activation's clamp on output 0's quantization, within the
// type's range. Fails when the output has no quantization or a bound
// overflows int32 (as TFLite).
KilnStatus QuantizedPoolBounds(KernelContext& k, const char* op,
                               const PoolGeometry& g, int32_t* lo, int32_t* hi);

// Pools input 0 of an integer type into output 0. Fails as
// QuantizedPoolBounds, and when an average window holds no input element
// (TFLite fails such nodes too).
KilnStatus QuantizedPoolInvoke(KernelContext& k, const char* op, bool max,
                               const PoolGeometry& g);

}  // namespace kiln::cpu::nn

#endif  // KILN_PLUGINS_CPU_KERNELS_NN_POOLING_QUANTIZED_H_
