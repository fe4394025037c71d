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

// The fused activation of every reader below is ReadClampActivation's: a
// clamp, TANH and SIGN_BIT ignored (as TFLite's convolutions do).
//
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

// TRANSPOSE_CONV: inputs [output_shape (int32[4]), filter OHWI, input NHWC,
// optional bias]. Reads everything but the output extent; when the
// output_shape values exist (*known), also out_h / out_w and the padding
// (TFLite pads the equivalent forward convolution of the output).
KilnStatus ReadTransposeConvGeometry(KernelContext& k, const char* op,
                                     ConvGeometry* g, bool* known);

// TRANSPOSE_CONV's col2im: adds rows [row0, row0 + rows) of `col` (one row
// per input pixel of one image: taps x out_c values, row stride ldcol) into
// the output image `image` (out_h x out_w x out_c) at the pixels each tap
// reaches, skipping taps outside the image. add(dst, src, n) adds n values.
// Col2ImAddBand adds only into output rows [oy_begin, oy_end).
template <typename T, typename Add>
void Col2ImAddBand(const ConvGeometry& g, int32_t row0, int32_t rows,
                   const T* col, int64_t ldcol, T* image, int32_t oy_begin,
                   int32_t oy_end, Add&& add) {
  for (int32_t r = 0; r < rows; ++r) {
    const int32_t iy = (row0 + r) / g.in_w, ix = (row0 + r) % g.in_w;
    const T* src = col + static_cast<int64_t>(r) * ldcol;
    for (int32_t fy = 0; fy < g.filter_h; ++fy) {
      const int32_t oy = iy * g.window.stride_h - g.pad_h + fy;
      if (oy < oy_begin || oy >= oy_end) continue;
      for (int32_t fx = 0; fx < g.filter_w; ++fx) {
        const int32_t ox = ix * g.window.stride_w - g.pad_w + fx;
        if (ox < 0 || ox >= g.out_w) continue;
        add(image + (static_cast<int64_t>(oy) * g.out_w + ox) * g.out_c,
            src + static_cast<int64_t>(fy * g.filter_w + fx) * g.out_c,
            g.out_c);
      }
    }
  }
}

template <typename T, typename Add>
void Col2ImAdd(const ConvGeometry& g, int32_t row0, int32_t rows, const T* col,
               int64_t ldcol, T* image, Add&& add) {
  Col2ImAddBand(g, row0, rows, col, ldcol, image, 0, g.out_h, add);
}

// DEPTHWISE_CONV_2D: fn(x, w) for each tap of the output pixel whose
// window starts at input (y0, x0) that falls inside `image` (in_h x in_w x
// in_c), in (fy, fx) order; x is the tap's input pixel, w its filter row
// (out_c values of `filter`, [filter_h][filter_w][out_c]).
template <typename T, typename Fn>
void ForEachDepthwiseTap(const ConvGeometry& g, const T* image, const T* filter,
                         int32_t y0, int32_t x0, Fn&& fn) {
  for (int32_t fy = 0; fy < g.filter_h; ++fy) {
    const int32_t iy = y0 + fy * g.window.dilation_h;
    if (iy < 0 || iy >= g.in_h) continue;
    for (int32_t fx = 0; fx < g.filter_w; ++fx) {
      const int32_t ix = x0 + fx * g.window.dilation_w;
      if (ix < 0 || ix >= g.in_w) continue;
      fn(image + (static_cast<int64_t>(iy) * g.in_w + ix) * g.in_c,
         filter + (static_cast<int64_t>(fy) * g.filter_w + fx) * g.out_c);
    }
  }
}

}  // namespace kiln::cpu::nn

#endif  // KILN_PLUGINS_CPU_KERNELS_NN_CONV_GEOMETRY_H_
