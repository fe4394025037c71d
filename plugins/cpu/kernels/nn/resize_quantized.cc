#include "kernels/nn/resize_quantized.h"

#include <algorithm>
#include <cmath>

namespace kiln::cpu::nn {
namespace {

// TFLite's ComputeInterpolationValues (float).
struct FloatSource {
  float value;
  int32_t lo, hi;
};
FloatSource FloatCoordinate(int32_t i, float scale, bool half_pixel,
                            int32_t in) {
  FloatSource s;
  s.value = half_pixel ? (static_cast<float>(i) + 0.5f) * scale - 0.5f
                       : static_cast<float>(i) * scale;
  s.lo = std::max(static_cast<int32_t>(std::floor(s.value)), 0);
  s.hi = std::min(static_cast<int32_t>(std::ceil(s.value)), in - 1);
  return s;
}

float FloatScale(bool align_corners, int32_t in, int32_t out) {
  return align_corners && out > 1
             ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
             : static_cast<float>(in) / static_cast<float>(out);
}

// TFLite's ComputeInterpolationValuesInteger: coordinates in 1/1024.
struct IntSource {
  int32_t value, lo, hi;
};
IntSource IntCoordinate(int32_t i, int32_t scale_10, bool half_pixel,
                        int32_t in) {
  IntSource s;
  s.value = half_pixel ? i * scale_10 + scale_10 / 2 - (1 << 9) : i * scale_10;
  s.lo = std::max(s.value / (1 << 10), 0);
  s.hi = std::min((s.value + (1 << 10) - 1) / (1 << 10), in - 1);
  return s;
}

int32_t IntScale(bool align_corners, int32_t in, int32_t out) {
  return align_corners && out > 1
             ? ((1 << 10) * (in - 1) + (out - 1) / 2) / (out - 1)
             : ((1 << 10) * in + out / 2) / out;
}

// The four neighbours of one output pixel: rows lo/hi x columns lo/hi.
template <typename T>
struct Corners {
  const T *p00, *p10, *p01, *p11;
};
template <typename T>
Corners<T> CornersOf(const T* image, int32_t in_w, int32_t c, int32_t y_lo,
                     int32_t y_hi, int32_t x_lo, int32_t x_hi) {
  const auto at = [&](int32_t y, int32_t x) {
    return image + (static_cast<int64_t>(y) * in_w + x) * c;
  };
  return {at(y_lo, x_lo), at(y_hi, x_lo), at(y_lo, x_hi), at(y_hi, x_hi)};
}

template <typename T>
void ResizeBilinearInteger(const ResizeShape& s, const T* in, T* out) {
  const int32_t sy = IntScale(s.align_corners, s.in_h, s.out_h);
  const int32_t sx = IntScale(s.align_corners, s.in_w, s.out_w);
  const int32_t c = s.channels;
  for (int32_t b = 0; b < s.batches; ++b) {
    const T* image = in + static_cast<int64_t>(b) * s.in_h * s.in_w * c;
    for (int32_t y = 0; y < s.out_h; ++y) {
      const IntSource ys = IntCoordinate(y, sy, s.half_pixel_centers, s.in_h);
      const int64_t wy1 = ys.value - (1 << 10) * ys.lo, wy0 = (1 << 10) - wy1;
      for (int32_t x = 0; x < s.out_w; ++x) {
        const IntSource xs = IntCoordinate(x, sx, s.half_pixel_centers, s.in_w);
        const int64_t wx1 = xs.value - (1 << 10) * xs.lo, wx0 = (1 << 10) - wx1;
        const Corners<T> p =
            CornersOf(image, s.in_w, c, ys.lo, ys.hi, xs.lo, xs.hi);
        T* dst =
            out + ((static_cast<int64_t>(b) * s.out_h + y) * s.out_w + x) * c;
        for (int32_t i = 0; i < c; ++i) {
          const int64_t v20 = p.p00[i] * wy0 * wx0 + p.p10[i] * wy1 * wx0 +
                              p.p01[i] * wy0 * wx1 + p.p11[i] * wy1 * wx1;
          const int64_t round = v20 > 0 ? (1 << 19) : -(1 << 19);
          dst[i] = static_cast<T>((v20 + round) / (1 << 20));
        }
      }
    }
  }
}

}  // namespace

void ResizeBilinearUint8(const ResizeShape& s, const uint8_t* in,
                         uint8_t* out) {
  const float sy = FloatScale(s.align_corners, s.in_h, s.out_h);
  const float sx = FloatScale(s.align_corners, s.in_w, s.out_w);
  const int32_t c = s.channels;
  for (int32_t b = 0; b < s.batches; ++b) {
    const uint8_t* image = in + static_cast<int64_t>(b) * s.in_h * s.in_w * c;
    for (int32_t y = 0; y < s.out_h; ++y) {
      const FloatSource ys =
          FloatCoordinate(y, sy, s.half_pixel_centers, s.in_h);
      const float dy = ys.value - static_cast<float>(ys.lo);
      for (int32_t x = 0; x < s.out_w; ++x) {
        const FloatSource xs =
            FloatCoordinate(x, sx, s.half_pixel_centers, s.in_w);
        const float dx = xs.value - static_cast<float>(xs.lo);
        const Corners<uint8_t> p =
            CornersOf(image, s.in_w, c, ys.lo, ys.hi, xs.lo, xs.hi);
        uint8_t* dst =
            out + ((static_cast<int64_t>(b) * s.out_h + y) * s.out_w + x) * c;
        for (int32_t i = 0; i < c; ++i) {
          // TFLite's evaluation order, left to right.
          const float v = p.p00[i] * (1 - dy) * (1 - dx) +
                          p.p10[i] * dy * (1 - dx) + p.p01[i] * (1 - dy) * dx +
                          p.p11[i] * dy * dx + 0.5f;
          dst[i] = static_cast<uint8_t>(v);
        }
      }
    }
  }
}

void ResizeBilinearInt8(const ResizeShape& s, const int8_t* in, int8_t* out) {
  ResizeBilinearInteger(s, in, out);
}

void ResizeBilinearInt16(const ResizeShape& s, const int16_t* in,
                         int16_t* out) {
  ResizeBilinearInteger(s, in, out);
}

}  // namespace kiln::cpu::nn
