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

// Rows [row0, row0 + rows) of the int16 im2col matrix of one image (row
// stride `stride`, at least taps * in_c; an extra pad column is zeroed):
// every tap holds x + input_offset, taps outside the image 0 (TFLite skips
// them).
template <typename T>
void Im2ColInt16(const ConvGeometry& g, const T* image, int32_t input_offset,
                 int32_t row0, int32_t rows, int32_t stride, int16_t* col) {
  const int32_t c = g.in_c;
  for (int32_t r = 0; r < rows; ++r) {
    const int32_t oy = (row0 + r) / g.out_w, ox = (row0 + r) % g.out_w;
    int16_t* dst = col + static_cast<int64_t>(r) * stride;
    const int32_t y0 = oy * g.window.stride_h - g.pad_h;
    const int32_t x0 = ox * g.window.stride_w - g.pad_w;
    for (int32_t fy = 0; fy < g.filter_h; ++fy) {
      const int32_t iy = y0 + fy * g.window.dilation_h;
      for (int32_t fx = 0; fx < g.filter_w; ++fx, dst += c) {
        const int32_t ix = x0 + fx * g.window.dilation_w;
        if (iy < 0 || iy >= g.in_h || ix < 0 || ix >= g.in_w) {
          std::fill(dst, dst + c, int16_t{0});
        } else {
          ToInt16WithOffset(
              image + (static_cast<int64_t>(iy) * g.in_w + ix) * c, c,
              input_offset, dst);
        }
      }
    }
    // The pad column of an odd depth.
    const int32_t depth = g.taps() * c;
    if (stride > depth) dst[0] = 0;
  }
}

// Adds the taps of depthwise output pixel (oy, ox) of one int16 image into
// acc (out_c sums of type Acc); `filter` is taps x out_c int16 values.
template <typename Acc>
void DepthwiseAccumulatePixel(const ConvGeometry& g, const int16_t* filter,
                              const int16_t* image, int32_t oy, int32_t ox,
                              Acc* acc);

// CONV_2D: int16 im2col (zero-point offsets folded in) x packed int16
// filter through IntGemm, then per-channel requantization.
struct QuantizedConvState {
  ConvGeometry g;
  ChannelRequant q;
  PackedInt16Matrix weights;
  bool pack_in_invoke = false;  // filter not constant
  int32_t chunk_rows = 0;
  int32_t threads = 1;          // the host pool's threads: one chunk each
  std::vector<int16_t> im2col;  // threads x chunk_rows x k_padded
  std::vector<IntGemmScratch> scratch;  // threads x (chunk_rows x out_c)
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
  int32_t threads = 1;         // per-thread accumulator rows below
  std::vector<int16_t> row;    // one input image, input offset folded in
  std::vector<int32_t> acc;    // threads x out_c
  std::vector<int64_t> acc64;  // threads x out_c, when sums exceed int32
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
  // Per pool thread (threads of them): each computes a band of output rows.
  int32_t threads = 1;
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
