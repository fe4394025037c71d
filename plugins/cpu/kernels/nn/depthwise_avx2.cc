// The AVX2+FMA depthwise pixel kernel of depthwise.h, compiled for that
// target inside this file only and selected at run time.
#include "kernels/nn/depthwise.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("avx2,fma")

namespace kiln::cpu::nn {
namespace {

// Channels [i, i + 8 * NV) of one pixel, the sums in registers across taps.
template <int NV>
inline __attribute__((always_inline)) void Block(float* out, const float* bias,
                                                 const float* const* xs,
                                                 const float* const* ws,
                                                 int32_t taps, int32_t i,
                                                 __m256 lo, __m256 hi) {
  __m256 acc[NV];
#pragma GCC unroll 4
  for (int j = 0; j < NV; ++j) acc[j] = _mm256_loadu_ps(bias + i + 8 * j);
  for (int32_t t = 0; t < taps; ++t) {
    const float* x = xs[t] + i;
    const float* w = ws[t] + i;
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) {
      acc[j] = _mm256_fmadd_ps(_mm256_loadu_ps(x + 8 * j),
                               _mm256_loadu_ps(w + 8 * j), acc[j]);
    }
  }
  // max_ps / min_ps return their second operand for a NaN: NaN sums stay.
#pragma GCC unroll 4
  for (int j = 0; j < NV; ++j) {
    _mm256_storeu_ps(out + i + 8 * j,
                     _mm256_min_ps(hi, _mm256_max_ps(lo, acc[j])));
  }
}

void DepthwisePixelImpl(float* out, const float* bias, const float* const* xs,
                        const float* const* ws, int32_t taps, int32_t channels,
                        float lo, float hi) {
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  int32_t i = 0;
  for (; i + 32 <= channels; i += 32)
    Block<4>(out, bias, xs, ws, taps, i, vlo, vhi);
  if (i + 16 <= channels) {
    Block<2>(out, bias, xs, ws, taps, i, vlo, vhi);
    i += 16;
  }
  if (i + 8 <= channels) {
    Block<1>(out, bias, xs, ws, taps, i, vlo, vhi);
    i += 8;
  }
  const int32_t rest = channels - i;
  if (rest > 0) {
    // The last 1-7 channels through masked loads and stores: the same
    // arithmetic per lane.
    const __m256i mask = _mm256_cmpgt_epi32(
        _mm256_set1_epi32(rest), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    __m256 acc = _mm256_maskload_ps(bias + i, mask);
    for (int32_t t = 0; t < taps; ++t) {
      acc = _mm256_fmadd_ps(_mm256_maskload_ps(xs[t] + i, mask),
                            _mm256_maskload_ps(ws[t] + i, mask), acc);
    }
    _mm256_maskstore_ps(out + i, mask,
                        _mm256_min_ps(vhi, _mm256_max_ps(vlo, acc)));
  }
}

// One pixel's channels [cb, cb + 8) with the weights in registers; kCheck:
// skip the taps whose column lies outside the image.
template <bool kCheck, bool kMasked>
inline __attribute__((always_inline)) void Pixel3x3(const DepthwiseRow3x3& r,
                                                    const __m256 (&w)[3][3],
                                                    __m256 b, __m256 lo,
                                                    __m256 hi, __m256i mask,
                                                    int32_t cb, int32_t ox) {
  const int32_t x0 = ox * r.stride_w - r.pad_w;
  __m256 acc = b;
#pragma GCC unroll 3
  for (int fy = 0; fy < 3; ++fy) {
    if (r.rows[fy] == nullptr) continue;
    const float* p = r.rows[fy] + cb;
#pragma GCC unroll 3
    for (int fx = 0; fx < 3; ++fx) {
      const int32_t ix = x0 + fx * r.dilation_w;
      if (kCheck && (ix < 0 || ix >= r.in_w)) continue;
      const float* q = p + static_cast<int64_t>(ix) * r.channels;
      const __m256 x =
          kMasked ? _mm256_maskload_ps(q, mask) : _mm256_loadu_ps(q);
      acc = _mm256_fmadd_ps(x, w[fy][fx], acc);
    }
  }
  acc = _mm256_min_ps(hi, _mm256_max_ps(lo, acc));
  float* o = r.out + static_cast<int64_t>(ox) * r.channels + cb;
  if (kMasked) {
    _mm256_maskstore_ps(o, mask, acc);
  } else {
    _mm256_storeu_ps(o, acc);
  }
}

// Four adjacent interior pixels (input columns p + j * step, output
// o + j * c) of one channel block: four independent sums, each adding its
// taps in (fy, fx) order like the one-pixel loop, so the FMA latency is
// hidden and the values are the same.
inline __attribute__((always_inline)) void Quad3x3(
    const float* p0, const float* p1, const float* p2, int64_t step, int64_t dx,
    const __m256 (&w)[3][3], __m256 b, __m256 lo, __m256 hi, float* o,
    int64_t c) {
  const float* rows[3] = {p0, p1, p2};
  __m256 acc[4] = {b, b, b, b};
#pragma GCC unroll 3
  for (int fy = 0; fy < 3; ++fy) {
#pragma GCC unroll 3
    for (int fx = 0; fx < 3; ++fx) {
      const float* p = rows[fy] + fx * dx;
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) {
        acc[j] =
            _mm256_fmadd_ps(_mm256_loadu_ps(p + j * step), w[fy][fx], acc[j]);
      }
    }
  }
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {
    _mm256_storeu_ps(o + j * c, _mm256_min_ps(hi, _mm256_max_ps(lo, acc[j])));
  }
}

template <bool kMasked>
void Row3x3Block(const DepthwiseRow3x3& r, int32_t cb, __m256i mask,
                 int32_t ox_begin, int32_t ox_end, int32_t ox_lo,
                 int32_t ox_hi) {
  __m256 w[3][3];
  for (int fy = 0; fy < 3; ++fy) {
    for (int fx = 0; fx < 3; ++fx) {
      const float* p = r.weights + (fy * 3 + fx) * r.channels + cb;
      w[fy][fx] = kMasked ? _mm256_maskload_ps(p, mask) : _mm256_loadu_ps(p);
    }
  }
  const __m256 b = kMasked ? _mm256_maskload_ps(r.bias + cb, mask)
                           : _mm256_loadu_ps(r.bias + cb);
  const __m256 lo = _mm256_set1_ps(r.lo), hi = _mm256_set1_ps(r.hi);
  int32_t ox = ox_begin;
  ox_lo = ox_lo > ox_begin ? (ox_lo < ox_end ? ox_lo : ox_end) : ox_begin;
  ox_hi = ox_hi < ox_end ? (ox_hi > ox_lo ? ox_hi : ox_lo) : ox_end;
  if (!kMasked && r.rows[0] != nullptr && r.rows[1] != nullptr &&
      r.rows[2] != nullptr) {
    // All nine taps of pixels [ox_lo, ox_hi) are inside: pointers step
    // along the row, nothing is checked.
    for (; ox < ox_lo; ++ox) {
      Pixel3x3<true, false>(r, w, b, lo, hi, mask, cb, ox);
    }
    const int64_t c = r.channels;
    const int64_t step = static_cast<int64_t>(r.stride_w) * c;
    const int64_t dx = static_cast<int64_t>(r.dilation_w) * c;
    const int64_t x0 = static_cast<int64_t>(ox) * r.stride_w - r.pad_w;
    const float* p0 = r.rows[0] + cb + x0 * c;
    const float* p1 = r.rows[1] + cb + x0 * c;
    const float* p2 = r.rows[2] + cb + x0 * c;
    float* o = r.out + static_cast<int64_t>(ox) * c + cb;
    for (; ox + 4 <= ox_hi; ox += 4) {
      Quad3x3(p0, p1, p2, step, dx, w, b, lo, hi, o, c);
      p0 += 4 * step;
      p1 += 4 * step;
      p2 += 4 * step;
      o += 4 * c;
    }
    for (; ox < ox_hi; ++ox, p0 += step, p1 += step, p2 += step, o += c) {
      __m256 acc = _mm256_fmadd_ps(_mm256_loadu_ps(p0), w[0][0], b);
      acc = _mm256_fmadd_ps(_mm256_loadu_ps(p0 + dx), w[0][1], acc);
      acc = _mm256_fmadd_ps(_mm256_loadu_ps(p0 + 2 * dx), w[0][2], acc);
      acc = _mm256_fmadd_ps(_mm256_loadu_ps(p1), w[1][0], acc);
      acc = _mm256_fmadd_ps(_mm256_loadu_ps(p1 + dx), w[1][1], acc);
      acc = _mm256_fmadd_ps(_mm256_loadu_ps(p1 + 2 * dx), w[1][2], acc);
      acc = _mm256_fmadd_ps(_mm256_loadu_ps(p2), w[2][0], acc);
      acc = _mm256_fmadd_ps(_mm256_loadu_ps(p2 + dx), w[2][1], acc);
      acc = _mm256_fmadd_ps(_mm256_loadu_ps(p2 + 2 * dx), w[2][2], acc);
      _mm256_storeu_ps(o, _mm256_min_ps(hi, _mm256_max_ps(lo, acc)));
    }
  }
  for (; ox < ox_end; ++ox) {
    Pixel3x3<true, kMasked>(r, w, b, lo, hi, mask, cb, ox);
  }
}

// Pixels [*ox_lo, *ox_hi) of row r have all three columns inside the image.
void InteriorColumns(const DepthwiseRow3x3& r, int32_t* ox_lo, int32_t* ox_hi) {
  const int32_t sw = r.stride_w;
  const int32_t lo = (r.pad_w + sw - 1) / sw;
  const int32_t last = r.in_w - 1 - 2 * r.dilation_w + r.pad_w;  // >= ox*sw
  int32_t hi = last < 0 ? 0 : last / sw + 1;
  *ox_lo = lo < r.out_w ? lo : r.out_w;
  hi = hi < r.out_w ? hi : r.out_w;
  *ox_hi = hi < *ox_lo ? *ox_lo : hi;
}

void DepthwiseRow3x3Impl(const DepthwiseRow3x3& r) {
  int32_t ox_lo, ox_hi;
  InteriorColumns(r, &ox_lo, &ox_hi);
  // Tiles of kTile pixels, all channel blocks of one tile before the next:
  // the tile's input columns stay in L1 across the blocks.
  constexpr int32_t kTile = 8;
  const __m256i all = _mm256_set1_epi32(-1);
  const int32_t full = r.channels / 8 * 8;
  __m256i mask = all;
  if (full < r.channels) {
    mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(r.channels - full),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  for (int32_t t0 = r.ox_begin; t0 < r.ox_end; t0 += kTile) {
    const int32_t t1 = t0 + kTile < r.ox_end ? t0 + kTile : r.ox_end;
    for (int32_t cb = 0; cb < full; cb += 8) {
      Row3x3Block<false>(r, cb, all, t0, t1, ox_lo, ox_hi);
    }
    if (full < r.channels) {
      Row3x3Block<true>(r, full, mask, t0, t1, ox_lo, ox_hi);
    }
  }
}

// The wide kernel's stride-1 groups: pixels, and 8-channel vectors per
// channel block.
constexpr int kWidePixels = 4;
constexpr int kWideVectors = 2;

// Where a wide group's taps are: filter row fy's first tap column inside
// the image of pixel 0 at p[fy] (null: the row is outside), tap fx at
// p[fy] + (fx - fx_lo) * dx for fx in [fx_lo, fx_hi) (the others are
// outside), pixel j's at j * step further.
struct WideTaps {
  const float* p[3];
  int64_t step, dx;
  int fx_lo, fx_hi;
};

// NP pixels of a row (tap columns as in `t`), channels [i, i + 8 * NV):
// the weights of each tap loaded once for all NP pixels, each sum bias +
// the taps inside the image in (fy, fx) order as DepthwisePixelImpl adds
// them, so the values are the same.
// kAdjacent (stride 1, dilation 1, all three columns inside): tap fx of
// pixel j is column j + fx, so each of the NP + 2 columns is loaded once
// per filter row and added into every pixel that reads it, fx ascending
// for each pixel.
template <int NP, int NV, bool kMasked, bool kAdjacent>
inline __attribute__((always_inline)) void WideGroup(const DepthwiseRow3x3& r,
                                                     const WideTaps& t,
                                                     float* o, int32_t i,
                                                     __m256i mask, __m256 lo,
                                                     __m256 hi) {
  const int64_t c = r.channels;
  const auto load = [&](const float* q) {
    return kMasked ? _mm256_maskload_ps(q, mask) : _mm256_loadu_ps(q);
  };
  __m256 acc[NP][NV];
#pragma GCC unroll 2
  for (int v = 0; v < NV; ++v) {
    const __m256 b = load(r.bias + i + 8 * v);
#pragma GCC unroll 4
    for (int j = 0; j < NP; ++j) acc[j][v] = b;
  }
#pragma GCC unroll 3
  for (int fy = 0; fy < 3; ++fy) {
    if (t.p[fy] == nullptr) continue;
    if constexpr (kAdjacent) {
      __m256 w[3][NV];
#pragma GCC unroll 3
      for (int fx = 0; fx < 3; ++fx) {
#pragma GCC unroll 2
        for (int v = 0; v < NV; ++v) {
          w[fx][v] = load(r.weights + (fy * 3 + fx) * c + i + 8 * v);
        }
      }
#pragma GCC unroll 10
      for (int q = 0; q < NP + 2; ++q) {
#pragma GCC unroll 2
        for (int v = 0; v < NV; ++v) {
          const __m256 x = load(t.p[fy] + q * c + i + 8 * v);
#pragma GCC unroll 3
          for (int fx = 0; fx < 3; ++fx) {
            const int j = q - fx;
            if (j >= 0 && j < NP) {
              acc[j][v] = _mm256_fmadd_ps(x, w[fx][v], acc[j][v]);
            }
          }
        }
      }
      continue;
    }
#pragma GCC unroll 3
    for (int fx = 0; fx < 3; ++fx) {
      if (fx < t.fx_lo || fx >= t.fx_hi) continue;
      const float* wp = r.weights + (fy * 3 + fx) * c + i;
      const float* xp = t.p[fy] + (fx - t.fx_lo) * t.dx + i;
      __m256 w[NV];
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) w[v] = load(wp + 8 * v);
#pragma GCC unroll 4
      for (int j = 0; j < NP; ++j) {
#pragma GCC unroll 2
        for (int v = 0; v < NV; ++v) {
          acc[j][v] =
              _mm256_fmadd_ps(load(xp + j * t.step + 8 * v), w[v], acc[j][v]);
        }
      }
    }
  }
#pragma GCC unroll 4
  for (int j = 0; j < NP; ++j) {
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) {
      const __m256 y = _mm256_min_ps(hi, _mm256_max_ps(lo, acc[j][v]));
      float* q = o + j * c + i + 8 * v;
      if (kMasked) {
        _mm256_maskstore_ps(q, mask, y);
      } else {
        _mm256_storeu_ps(q, y);
      }
    }
  }
}

// NP pixels from output column ox, all channels. Unless `inner` (all three
// columns of every pixel inside the image), NP is 1.
template <int NP, bool kAdjacent>
inline __attribute__((always_inline)) void WidePixels(const DepthwiseRow3x3& r,
                                                      int32_t ox, bool inner,
                                                      __m256i tail, __m256 lo,
                                                      __m256 hi) {
  const int64_t c = r.channels;
  const int32_t x0 = ox * r.stride_w - r.pad_w;
  WideTaps t;
  t.fx_lo = 0;
  t.fx_hi = 3;
  if (!inner) {
    while (t.fx_lo < 3 && x0 + t.fx_lo * r.dilation_w < 0) ++t.fx_lo;
    while (t.fx_hi > t.fx_lo && x0 + (t.fx_hi - 1) * r.dilation_w >= r.in_w) {
      --t.fx_hi;
    }
  }
  const int64_t first = x0 + static_cast<int64_t>(t.fx_lo) * r.dilation_w;
  for (int fy = 0; fy < 3; ++fy) {
    t.p[fy] = r.rows[fy] == nullptr || t.fx_lo == t.fx_hi
                  ? nullptr
                  : r.rows[fy] + first * c;
  }
  t.step = static_cast<int64_t>(r.stride_w) * c;
  t.dx = static_cast<int64_t>(r.dilation_w) * c;
  float* o = r.out + static_cast<int64_t>(ox) * c;
  const __m256i all = _mm256_set1_epi32(-1);
  int32_t i = 0;
  for (; i + 8 * kWideVectors <= r.channels; i += 8 * kWideVectors) {
    WideGroup<NP, kWideVectors, false, kAdjacent>(r, t, o, i, all, lo, hi);
  }
  for (; i + 8 <= r.channels; i += 8) {
    WideGroup<NP, 1, false, kAdjacent>(r, t, o, i, all, lo, hi);
  }
  if (i < r.channels) {
    WideGroup<NP, 1, true, kAdjacent>(r, t, o, i, tail, lo, hi);
  }
}

// The row kernel for many channels: groups of four inner pixels, all
// channels of a group before the next (the input read in contiguous runs
// of the group's columns), the weights loaded once per group; the pixels
// with a column outside the image one at a time, their outside taps (and
// filter rows outside the image) left out.
void DepthwiseRow3x3WideImpl(const DepthwiseRow3x3& r) {
  int32_t ox_lo, ox_hi;
  InteriorColumns(r, &ox_lo, &ox_hi);
  const int32_t rest = r.channels % 8;
  const __m256i tail = _mm256_cmpgt_epi32(
      _mm256_set1_epi32(rest), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  const __m256 lo = _mm256_set1_ps(r.lo), hi = _mm256_set1_ps(r.hi);
  // Inner pixels within [ox_begin, ox_end).
  ox_lo =
      ox_lo > r.ox_begin ? (ox_lo < r.ox_end ? ox_lo : r.ox_end) : r.ox_begin;
  ox_hi = ox_hi < r.ox_end ? (ox_hi > ox_lo ? ox_hi : ox_lo) : r.ox_end;
  int32_t ox = r.ox_begin;
  for (; ox < ox_lo; ++ox) WidePixels<1, false>(r, ox, false, tail, lo, hi);
  if (r.stride_w == 1 && r.dilation_w == 1) {
    for (; ox + kWidePixels <= ox_hi; ox += kWidePixels) {
      WidePixels<kWidePixels, true>(r, ox, true, tail, lo, hi);
    }
  }
  for (; ox + 4 <= ox_hi; ox += 4) {
    WidePixels<4, false>(r, ox, true, tail, lo, hi);
  }
  for (; ox < ox_hi; ++ox) WidePixels<1, false>(r, ox, true, tail, lo, hi);
  for (; ox < r.ox_end; ++ox) WidePixels<1, false>(r, ox, false, tail, lo, hi);
}

}  // namespace
}  // namespace kiln::cpu::nn

#pragma GCC pop_options

namespace kiln::cpu::nn {
DepthwisePixelFn DepthwisePixelAvx2Fma() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    return &DepthwisePixelImpl;
  }
  return nullptr;
}
DepthwiseRow3x3Fn DepthwiseRow3x3Avx2Fma() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    return &DepthwiseRow3x3Impl;
  }
  return nullptr;
}
DepthwiseRow3x3Fn DepthwiseRow3x3WideAvx2Fma() {
  return DepthwiseRow3x3Avx2Fma() != nullptr ? &DepthwiseRow3x3WideImpl
                                             : nullptr;
}
}  // namespace kiln::cpu::nn

#else

namespace kiln::cpu::nn {
DepthwisePixelFn DepthwisePixelAvx2Fma() { return nullptr; }
DepthwiseRow3x3Fn DepthwiseRow3x3Avx2Fma() { return nullptr; }
DepthwiseRow3x3Fn DepthwiseRow3x3WideAvx2Fma() { return nullptr; }
}  // namespace kiln::cpu::nn

#endif
