// Integer FULLY_CONNECTED (int8 per-tensor / per-channel, uint8, int16x8),
// bit-exact with TFLite's reference FullyConnected / FullyConnectedPerChannel
// kernels. fully_connected.cc dispatches here for integer inputs.
#ifndef KILN_PLUGINS_CPU_KERNELS_NN_FULLY_CONNECTED_QUANTIZED_H_
#define KILN_PLUGINS_CPU_KERNELS_NN_FULLY_CONNECTED_QUANTIZED_H_

#include <cstdint>
#include <vector>

#include "kernels/nn/int_gemm.h"
#include "kernels/nn/quantized_common.h"

namespace kiln::cpu::nn {

struct QuantizedFullyConnectedState {
  ChannelRequant q;
  int32_t rows = 0, depth = 0, units = 0;
  PackedInt16Matrix weights;
  bool pack_in_invoke = false;  // weights not constant
  // The constant weights `weights` holds (packed with filter_offset
  // packed_offset), so that a prepare again (a dynamic input shape) keeps
  // them; null when none are.
  const void* packed_from = nullptr;
  int32_t packed_offset = 0;
  int32_t chunk_rows = 0;
  int32_t threads = 1;       // the host pool's threads: one chunk each
  std::vector<int16_t> lhs;  // threads x chunk_rows x k_padded
  std::vector<IntGemmScratch> scratch;  // one per thread
};

// Prepare for an input of integer `scheme`: checks the node (weights rank 2,
// weights_format DEFAULT, keep_num_dims) and sizes the output.
KilnStatus QuantizedFullyConnectedPrepare(KernelContext& k, IntScheme scheme,
                                          QuantizedFullyConnectedState& s);
KilnStatus QuantizedFullyConnectedInvoke(KernelContext& k,
                                         QuantizedFullyConnectedState& s);

// What every FULLY_CONNECTED kernel reads from its node: the fused
// activation (for the output's type) and the shapes: the input viewed as
// `rows` rows of `depth` values, weights [units, depth], output [rows,
// units] (keep_num_dims: the input shape with its last dimension replaced
// by units). Fails when the input cannot be viewed as such rows, the
// weights are not rank 2, or weights_format is not DEFAULT.
struct FullyConnectedNode {
  int64_t activation = KILN_ACTIVATION_NONE;
  int32_t rows = 0, depth = 0, units = 0;
  std::vector<int32_t> out_shape;
};
KilnStatus ReadFullyConnectedNode(KernelContext& k, FullyConnectedNode* node);

}  // namespace kiln::cpu::nn

#endif  // KILN_PLUGINS_CPU_KERNELS_NN_FULLY_CONNECTED_QUANTIZED_H_
