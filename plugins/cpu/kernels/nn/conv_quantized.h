// Integer CONV_2D and DEPTHWISE_CONV_2D (int8, uint8, int16x8), bit-exact
// with TFLite's reference kernels (ConvPerChannel, DepthwiseConvPerChannel
// and their uint8 / 16x8 forms). The float kernels in conv.cc dispatch here
// when the input is an integer type.
#ifndef KILN_PLUGINS_CPU_KERNELS_NN_CONV_QUANTIZED_H_
#define KILN_PLUGINS_CPU_KERNELS_NN_CONV_QUANTIZED_H_

#include <cstdint>
#include <vector>

#include "kernels/nn/conv_geometry.h"
#include "kernels/nn/int_gemm.h"
#include "kernels/nn/quantized_common.h"

namespace kiln::cpu::nn {

// CONV_2D: int16 im2col (zero-point offsets folded in) x packed int16
// filter through IntGemm, then per-channel requantization.
struct QuantizedConvState {
  ConvGeometry g;
  ChannelRequant q;
  PackedInt16Matrix weights;
  bool pack_in_invoke = false;  // filter not constant
  int32_t chunk_rows = 0;
  std::vector<int16_t> im2col;  // chunk_rows x weights.k_padded()
  IntGemmScratch scratch;       // chunk_rows x out_c
};

// Prepare for an input of integer `scheme`; sizes the output.
KilnStatus QuantizedConvPrepare(KernelContext& k, IntScheme scheme,
                                QuantizedConvState& s);
KilnStatus QuantizedConvInvoke(KernelContext& k, QuantizedConvState& s);

// DEPTHWISE_CONV_2D: direct per-pixel accumulation, vectorised over
// channels, on int16 copies of the input image and filter.
struct QuantizedDepthwiseState {
  ConvGeometry g;
  ChannelRequant q;
  std::vector<int16_t> filter;  // taps x out_c, filter offset folded in
  bool pack_in_invoke = false;
  bool acc_fits_int32 = true;  // int16x8: every sum fits int32
  std::vector<int16_t> row;    // one input image, input offset folded in
  std::vector<int32_t> acc;    // out_c
  std::vector<int64_t> acc64;  // out_c, when sums may exceed int32
};

KilnStatus QuantizedDepthwisePrepare(KernelContext& k, IntScheme scheme,
                                     QuantizedDepthwiseState& s);
KilnStatus QuantizedDepthwiseInvoke(KernelContext& k,
                                    QuantizedDepthwiseState& s);

// TRANSPOSE_CONV (int8, uint8, int16x8; TFLite's reference TransposeConv):
// input pixels x packed [taps x out_c] x in_c filter through IntGemm, col2im
// into an int32 (int64 for int16x8) image, then per-channel requantization.
struct QuantizedTransposeConvState {
  ConvGeometry g;
  bool shaped = false;  // output_shape values known
  ChannelRequant q;
  PackedInt16Matrix weights;
  bool pack_in_invoke = false;
  int32_t chunk_rows = 0;
  std::vector<int16_t> lhs;    // chunk_rows x weights.k_padded()
  std::vector<int32_t> col;    // chunk_rows x taps * out_c
  std::vector<int64_t> col64;  // int16x8: the same, summed over depth blocks
  std::vector<int32_t> acc;    // one output image (8-bit schemes)
  std::vector<int64_t> acc64;  // one output image (int16x8)
};

KilnStatus QuantizedTransposeConvPrepare(KernelContext& k, IntScheme scheme,
                                         QuantizedTransposeConvState& s);
KilnStatus QuantizedTransposeConvInvoke(KernelContext& k,
                                        QuantizedTransposeConvState& s);

}  // namespace kiln::cpu::nn

#endif  // KILN_PLUGINS_CPU_KERNELS_NN_CONV_QUANTIZED_H_
