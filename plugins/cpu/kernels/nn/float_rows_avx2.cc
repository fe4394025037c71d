// The AVX2+FMA kernels of float_rows.h, compiled for that target inside
// this file only and selected at run time.
#include <algorithm>
#include <limits>

#include "kernels/nn/float_rows.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("avx2,fma")

namespace kiln::cpu::nn {
namespace {

#define KILN_FR_INLINE inline __attribute__((always_inline))

// Lanes [0, n) set, n in [0, 8].
KILN_FR_INLINE __m256i TailMask(int32_t n) {
  alignas(32) static const int32_t kBits[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                                0,  0,  0,  0,  0,  0,  0,  0};
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kBits + 8 - n));
}

// Eight channels of one pooled pixel (the `mask` lanes of them when
// kTail; masked loads and stores are slow, so full blocks use plain ones).
template <bool kMax, bool kTail>
KILN_FR_INLINE void PoolBlock(const PoolRowArgs& a, int32_t xs, int32_t xe,
                              __m256 scale, const float* src, float* dst,
                              __m256i mask) {
  const int64_t row = static_cast<int64_t>(a.in_w) * a.channels;
  __m256 acc = kMax ? _mm256_set1_ps(-std::numeric_limits<float>::infinity())
                    : _mm256_setzero_ps();
  for (int32_t iy = a.ys; iy < a.ye; ++iy) {
    const float* p = src + iy * row + static_cast<int64_t>(xs) * a.channels;
    for (int32_t ix = xs; ix < xe; ++ix, p += a.channels) {
      const __m256 v = kTail ? _mm256_maskload_ps(p, mask) : _mm256_loadu_ps(p);
      acc = kMax ? _mm256_max_ps(acc, v) : _mm256_add_ps(acc, v);
    }
  }
  if (!kMax) acc = _mm256_mul_ps(acc, scale);
  if (a.clamp) {
    acc = _mm256_max_ps(acc, _mm256_set1_ps(a.lo));
    acc = _mm256_min_ps(acc, _mm256_set1_ps(a.hi));
  }
  if (kTail) {
    _mm256_maskstore_ps(dst, mask, acc);
  } else {
    _mm256_storeu_ps(dst, acc);
  }
}

template <bool kMax>
void PoolRow(const PoolRowArgs& a) {
  const __m256i tail = TailMask(a.channels % 8);
  for (int32_t ox = 0; ox < a.out_w; ++ox) {
    const int32_t x0 = ox * a.stride_w - a.pad_w;
    const int32_t xs = std::max(0, x0), xe = std::min(a.in_w, x0 + a.filter_w);
    const __m256 scale = _mm256_set1_ps(
        1.f / static_cast<float>(std::max(1, (a.ye - a.ys) * (xe - xs))));
    float* dst = a.out + static_cast<int64_t>(ox) * a.channels;
    int32_t ch = 0;
    for (; ch + 8 <= a.channels; ch += 8) {
      PoolBlock<kMax, false>(a, xs, xe, scale, a.image + ch, dst + ch, tail);
    }
    if (ch < a.channels) {
      PoolBlock<kMax, true>(a, xs, xe, scale, a.image + ch, dst + ch, tail);
    }
  }
}

// The weighted corners added to 0 in the portable kernel's order.
template <bool kTail>
KILN_FR_INLINE __m256 Load(const float* p, __m256i mask) {
  return kTail ? _mm256_maskload_ps(p, mask) : _mm256_loadu_ps(p);
}

template <bool kTail>
KILN_FR_INLINE __m256 Blend(const float* tl, const float* bl, const float* tr,
                            const float* br, const __m256 w[4], __m256i mask) {
  __m256 acc = _mm256_mul_ps(w[0], Load<kTail>(tl, mask));
  acc = _mm256_fmadd_ps(w[1], Load<kTail>(bl, mask), acc);
  acc = _mm256_fmadd_ps(w[2], Load<kTail>(tr, mask), acc);
  return _mm256_fmadd_ps(w[3], Load<kTail>(br, mask), acc);
}

void BilinearRow(const BilinearRowArgs& a) {
  const __m256i tail = TailMask(a.channels % 8);
  for (int32_t x = 0; x < a.out_w; ++x) {
    const float wx = a.wx[x];
    const __m256 w[4] = {
        _mm256_set1_ps((1 - a.wy) * (1 - wx)), _mm256_set1_ps(a.wy * (1 - wx)),
        _mm256_set1_ps((1 - a.wy) * wx), _mm256_set1_ps(a.wy * wx)};
    const float* tl = a.top + a.x_lo[x];
    const float* tr = a.top + a.x_hi[x];
    const float* bl = a.bottom + a.x_lo[x];
    const float* br = a.bottom + a.x_hi[x];
    float* dst = a.out + static_cast<int64_t>(x) * a.channels;
    int32_t i = 0;
    for (; i + 8 <= a.channels; i += 8) {
      _mm256_storeu_ps(dst + i,
                       Blend<false>(tl + i, bl + i, tr + i, br + i, w, tail));
    }
    if (i < a.channels) {
      _mm256_maskstore_ps(dst + i, tail,
                          Blend<true>(tl + i, bl + i, tr + i, br + i, w, tail));
    }
  }
}

// Columns 0..3 of rows 0..7 (row stride ld) added to acc in column order,
// lane j taking row j: each 128-bit half loaded from rows j and j + 4, then
// a 4x4 transpose inside the 128-bit lanes (no cross-lane shuffles), so
// column k of the eight rows is one vector. Written without arrays so that
// GCC keeps everything in registers.
KILN_FR_INLINE __m256 AddColumns4(__m256 acc, const float* x, int64_t ld) {
  const __m256 a0 = _mm256_insertf128_ps(
      _mm256_castps128_ps256(_mm_loadu_ps(x)), _mm_loadu_ps(x + 4 * ld), 1);
  const __m256 a1 =
      _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(x + ld)),
                           _mm_loadu_ps(x + 5 * ld), 1);
  const __m256 a2 =
      _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(x + 2 * ld)),
                           _mm_loadu_ps(x + 6 * ld), 1);
  const __m256 a3 =
      _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(x + 3 * ld)),
                           _mm_loadu_ps(x + 7 * ld), 1);
  const __m256 u0 = _mm256_unpacklo_ps(a0, a1);
  const __m256 u1 = _mm256_unpackhi_ps(a0, a1);
  const __m256 u2 = _mm256_unpacklo_ps(a2, a3);
  const __m256 u3 = _mm256_unpackhi_ps(a2, a3);
  acc = _mm256_add_ps(acc, _mm256_shuffle_ps(u0, u2, 0x44));
  acc = _mm256_add_ps(acc, _mm256_shuffle_ps(u0, u2, 0xEE));
  acc = _mm256_add_ps(acc, _mm256_shuffle_ps(u1, u3, 0x44));
  return _mm256_add_ps(acc, _mm256_shuffle_ps(u1, u3, 0xEE));
}

// Column i of rows 0..7 added to acc (the tail past a multiple of 4).
KILN_FR_INLINE __m256 AddColumn(__m256 acc, const float* x, int64_t ld) {
  return _mm256_add_ps(
      acc, _mm256_setr_ps(x[0], x[ld], x[2 * ld], x[3 * ld], x[4 * ld],
                          x[5 * ld], x[6 * ld], x[7 * ld]));
}

// Eight rows at a time, one row a lane: the columns added in order, so each
// lane sums its row exactly as the scalar loop. Four 8-row groups run side
// by side so that four independent addition chains hide the add latency.
void SumRows(const float* x, int64_t rows, int64_t n, float* out) {
  int64_t r = 0;
  const int64_t group = 8 * n;
  for (; r + 32 <= rows; r += 32) {
    const float* b = x + r * n;
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    __m256 acc2 = _mm256_setzero_ps(), acc3 = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
      acc0 = AddColumns4(acc0, b + i, n);
      acc1 = AddColumns4(acc1, b + group + i, n);
      acc2 = AddColumns4(acc2, b + 2 * group + i, n);
      acc3 = AddColumns4(acc3, b + 3 * group + i, n);
    }
    for (; i < n; ++i) {
      acc0 = AddColumn(acc0, b + i, n);
      acc1 = AddColumn(acc1, b + group + i, n);
      acc2 = AddColumn(acc2, b + 2 * group + i, n);
      acc3 = AddColumn(acc3, b + 3 * group + i, n);
    }
    _mm256_storeu_ps(out + r, acc0);
    _mm256_storeu_ps(out + r + 8, acc1);
    _mm256_storeu_ps(out + r + 16, acc2);
    _mm256_storeu_ps(out + r + 24, acc3);
  }
  for (; r + 8 <= rows; r += 8) {
    const float* b = x + r * n;
    __m256 acc = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) acc = AddColumns4(acc, b + i, n);
    for (; i < n; ++i) acc = AddColumn(acc, b + i, n);
    _mm256_storeu_ps(out + r, acc);
  }
  for (; r < rows; ++r) {
    float acc = 0.f;
    for (int64_t i = 0; i < n; ++i) acc += x[r * n + i];
    out[r] = acc;
  }
}

}  // namespace
}  // namespace kiln::cpu::nn

#pragma GCC pop_options

namespace kiln::cpu::nn {
FloatRowKernels FloatRowKernelsAvx2Fma() {
  FloatRowKernels k;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    k.max_pool_row = &PoolRow<true>;
    k.avg_pool_row = &PoolRow<false>;
    k.bilinear_row = &BilinearRow;
    k.sum_rows = &SumRows;
  }
  return k;
}
}  // namespace kiln::cpu::nn

#else

namespace kiln::cpu::nn {
FloatRowKernels FloatRowKernelsAvx2Fma() { return {}; }
}  // namespace kiln::cpu::nn

#endif
