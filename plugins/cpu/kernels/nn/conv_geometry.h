// Shape arithmetic of CONV_2D and DEPTHWISE_CONV_2D (NHWC input, TFLite
// padding rules), shared by their float, integer and hybrid kernels.
#ifndef KILN_PLUGINS_CPU_KERNELS_NN_CONV_GEOMETRY_H_
#define KILN_PLUGINS_CPU_KERNELS_NN_CONV_GEOMETRY_H_

#include <cstdint>

#include "kernels/nn/nn_common.h"

namespace kiln::cpu::nn {

struct ConvGeometry {
  WindowParams window;
  int64_t activation = KILN_ACTIVATION_NONE;
  int32_t batches = 0, in_h = 0, in_w = 0, in_c = 0;
  int32_t filter_h = 0, filter_w = 0, out_h = 0, out_w = 0, out_c = 0;
  int32_t pad_h = 0, pad_w = 0;
  int32_t depth_multiplier = 1;  // DEPTHWISE_CONV_2D: out_c / in_c

  int64_t in_image() const { return int64_t{in_h} * in_w * in_c; }
  int32_t out_pixels() const { return out_h * out_w; }
  int32_t taps() const { return filter_h * filter_w; }
};

// CONV_2D: rank-4 input and OHWI filter, window options, fused activation,
// output extent. Grouped convolution (filter depth != input depth) is
// refused.
KilnStatus ReadConv2DGeometry(KernelContext& k, const char* op,
                              const Tensor& input, const Tensor& filter,
                              ConvGeometry* g);

// DEPTHWISE_CONV_2D: rank-4 input and [1, H, W, C * multiplier] filter.
KilnStatus ReadDepthwiseGeometry(KernelContext& k, const char* op,
                                 const Tensor& input, const Tensor& filter,
                                 ConvGeometry* g);

}  // namespace kiln::cpu::nn

#endif  // KILN_PLUGINS_CPU_KERNELS_NN_CONV_GEOMETRY_H_
