#include "kernels/nn/float_rows.h"

#include <algorithm>
#include <limits>

namespace kiln::cpu::nn {
namespace {

template <bool kMax>
void PoolRowPortable(const PoolRowArgs& a) {
  const int64_t row = static_cast<int64_t>(a.in_w) * a.channels;
  for (int32_t ox = 0; ox < a.out_w; ++ox) {
    const int32_t x0 = ox * a.stride_w - a.pad_w;
    const int32_t xs = std::max(0, x0), xe = std::min(a.in_w, x0 + a.filter_w);
    const float scale =
        1.f / static_cast<float>(std::max(1, (a.ye - a.ys) * (xe - xs)));
    float* dst = a.out + static_cast<int64_t>(ox) * a.channels;
    for (int32_t ch = 0; ch < a.channels; ++ch) {
      float acc = kMax ? -std::numeric_limits<float>::infinity() : 0.f;
      for (int32_t iy = a.ys; iy < a.ye; ++iy) {
        const float* src = a.image + iy * row + ch;
        for (int32_t ix = xs; ix < xe; ++ix) {
          const float v = src[static_cast<int64_t>(ix) * a.channels];
          acc = kMax ? (acc > v ? acc : v) : acc + v;
        }
      }
      if (!kMax) acc *= scale;
      if (a.clamp) {
        acc = acc > a.lo ? acc : a.lo;
        acc = acc < a.hi ? acc : a.hi;
      }
      dst[ch] = acc;
    }
  }
}

void BilinearRowPortable(const BilinearRowArgs& a) {
  for (int32_t x = 0; x < a.out_w; ++x) {
    const float wx = a.wx[x];
    const float w_tl = (1 - a.wy) * (1 - wx), w_bl = a.wy * (1 - wx);
    const float w_tr = (1 - a.wy) * wx, w_br = a.wy * wx;
    const float* tl = a.top + a.x_lo[x];
    const float* tr = a.top + a.x_hi[x];
    const float* bl = a.bottom + a.x_lo[x];
    const float* br = a.bottom + a.x_hi[x];
    float* dst = a.out + static_cast<int64_t>(x) * a.channels;
    for (int32_t i = 0; i < a.channels; ++i) {
      dst[i] = 0.f + w_tl * tl[i] + w_bl * bl[i] + w_tr * tr[i] + w_br * br[i];
    }
  }
}

void SumRowsPortable(const float* x, int64_t rows, int64_t n, float* out) {
  for (int64_t r = 0; r < rows; ++r) {
    float acc = 0.f;
    for (int64_t i = 0; i < n; ++i) acc += x[r * n + i];
    out[r] = acc;
  }
}

}  // namespace

FloatRowKernels FloatRowKernelsPortable() {
  FloatRowKernels k;
  k.max_pool_row = &PoolRowPortable<true>;
  k.avg_pool_row = &PoolRowPortable<false>;
  k.bilinear_row = &BilinearRowPortable;
  k.sum_rows = &SumRowsPortable;
  return k;
}

const FloatRowKernels& GetFloatRowKernels() {
  static const FloatRowKernels kKernels = [] {
    FloatRowKernels k = FloatRowKernelsAvx2Fma();
    return k.max_pool_row != nullptr ? k : FloatRowKernelsPortable();
  }();
  return kKernels;
}

}  // namespace kiln::cpu::nn
