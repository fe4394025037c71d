// The float DEPTHWISE_CONV_2D pixel kernel (depth multiplier 1) and its
// AVX2+FMA implementation, selected at run time by conv.cc.
#ifndef KILN_PLUGINS_CPU_KERNELS_NN_DEPTHWISE_H_
#define KILN_PLUGINS_CPU_KERNELS_NN_DEPTHWISE_H_

#include <cstdint>

namespace kiln::cpu::nn {

// One output pixel: out[i] = clamp(bias[i] + sum over t < taps of
// xs[t][i] * ws[t][i], lo, hi) for i < channels, the taps added in order.
// `out` must not overlap the inputs.
using DepthwisePixelFn = void (*)(float* out, const float* bias,
                                  const float* const* xs,
                                  const float* const* ws, int32_t taps,
                                  int32_t channels, float lo, float hi);

// The AVX2+FMA kernel (each product fused into its sum), or null when the
// CPU or the build lacks AVX2 and FMA.
DepthwisePixelFn DepthwisePixelAvx2Fma();

// One output row of a 3x3 depthwise convolution (depth multiplier 1), the
// taps of each pixel added in (fy, fx) order skipping those outside the
// image, as DepthwisePixelFn does, so both give the same values.
struct DepthwiseRow3x3 {
  const float* rows[3];  // input row of each fy (image row), null outside
  const float* weights;  // [3][3][channels]
  const float* bias;     // [channels]
  float* out;            // out_w x channels
  int32_t channels, in_w, out_w, stride_w, dilation_w, pad_w;
  float lo, hi;  // the clamp of the fused activation
  // The output pixels computed: [ox_begin, ox_end) of [0, out_w), each
  // the same way whatever the range.
  int32_t ox_begin, ox_end;
};
using DepthwiseRow3x3Fn = void (*)(const DepthwiseRow3x3& row);

// The AVX2+FMA row kernel (weights held in registers), or null.
DepthwiseRow3x3Fn DepthwiseRow3x3Avx2Fma();
// The AVX2+FMA row kernel for many channels (groups of four pixels, all
// channels of a group in turn, each weight vector loaded once per group;
// the same values as DepthwisePixelFn), or null.
DepthwiseRow3x3Fn DepthwiseRow3x3WideAvx2Fma();

}  // namespace kiln::cpu::nn

#endif  // KILN_PLUGINS_CPU_KERNELS_NN_DEPTHWISE_H_
