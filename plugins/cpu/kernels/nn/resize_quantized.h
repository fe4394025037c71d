// RESIZE_BILINEAR on integer images, bit-exact with TFLite's reference
// kernels: uint8 through its float interpolation (rounded by +0.5 and
// truncation), int8 / int16 through ResizeBilinearInteger (10-bit fixed-point
// coordinates, 20-bit weights, rounding half away from zero). The values are
// resized raw, without requantization, as TFLite does.
#ifndef KILN_PLUGINS_CPU_KERNELS_NN_RESIZE_QUANTIZED_H_
#define KILN_PLUGINS_CPU_KERNELS_NN_RESIZE_QUANTIZED_H_

#include <cstdint>

namespace kiln::cpu::nn {

// An NHWC resize: input [batches, in_h, in_w, channels] to output
// [batches, out_h, out_w, channels].
struct ResizeShape {
  int32_t batches = 0, in_h = 0, in_w = 0, channels = 0;
  int32_t out_h = 0, out_w = 0;
  bool align_corners = false, half_pixel_centers = false;
};

void ResizeBilinearUint8(const ResizeShape& s, const uint8_t* in, uint8_t* out);
void ResizeBilinearInt8(const ResizeShape& s, const int8_t* in, int8_t* out);
void ResizeBilinearInt16(const ResizeShape& s, const int16_t* in, int16_t* out);

}  // namespace kiln::cpu::nn

#endif  // KILN_PLUGINS_CPU_KERNELS_NN_RESIZE_QUANTIZED_H_
