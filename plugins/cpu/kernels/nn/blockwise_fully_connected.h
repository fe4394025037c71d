// FULLY_CONNECTED with blockwise-quantized INT4 weights and a float32 input,
// as ai-edge-quantizer writes them (dynamic_wi4b32_afp32): weights [units,
// depth] packed two a byte (low nibble first), one float scale per block of
// block_size consecutive values of a weight row (KilnQuantizationParams
// 1.3), symmetric. The arithmetic is LiteRT's optimized EvalBlockwise4Bit:
// each input row is quantized to int8 asymmetrically (scale s, zero point
// z, as the hybrid kernels do), then for each unit u
//   acc = sum over blocks b, in order, of float(int32 sum of q * w) * scale
//   out = (acc - z * kfsum[u]) * s + bias[u]
// with kfsum[u] = sum over blocks, in order, of scale * float(sum of w),
// each step rounded to float as LiteRT's loop does. No fused activation:
// LiteRT's kernel ignores it, so a node that has one is refused rather than
// disagree either with LiteRT or with the model.
#ifndef KILN_PLUGINS_CPU_KERNELS_NN_BLOCKWISE_FULLY_CONNECTED_H_
#define KILN_PLUGINS_CPU_KERNELS_NN_BLOCKWISE_FULLY_CONNECTED_H_

#include <cstdint>
#include <vector>

#include "kernels/nn/nn_common.h"

namespace kiln::cpu::nn {

struct BlockwiseFullyConnectedState {
  int32_t rows = 0, depth = 0, units = 0, block = 0;
  std::vector<int8_t> weights;          // units x depth, unpacked
  std::vector<float> scales;            // units x (depth / block)
  std::vector<float> kfsum;             // per unit
  std::vector<int8_t> quantized;        // rows x depth
  std::vector<float> row_scale;         // per input row
  std::vector<int32_t> row_zero_point;  // per input row
};

// True when FULLY_CONNECTED's input and weights take this kernel: a float32
// input and INT4 weights.
bool IsBlockwiseFullyConnected(const KernelContext& k);

KilnStatus BlockwiseFullyConnectedPrepare(KernelContext& k,
                                          BlockwiseFullyConnectedState& s);
KilnStatus BlockwiseFullyConnectedInvoke(KernelContext& k,
                                         BlockwiseFullyConnectedState& s);

}  // namespace kiln::cpu::nn

#endif  // KILN_PLUGINS_CPU_KERNELS_NN_BLOCKWISE_FULLY_CONNECTED_H_
