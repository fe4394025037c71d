// The AVX2 kernels of hybrid_quantize.h, compiled for that target inside
// this file only and selected at run time.
#include <algorithm>

#include "kernels/nn/hybrid_quantize.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("avx2")

namespace kiln::cpu::nn {
namespace {

float ReduceLanes(__m256 v, bool take_max) {
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, v);
  float r = lanes[0];
  for (int i = 1; i < 8; ++i) {
    r = take_max ? std::max(r, lanes[i]) : std::min(r, lanes[i]);
  }
  return r;
}

void MinMax(const float* x, int32_t n, float* lo, float* hi) {
  const int32_t blocks = n / 8 * 8;
  if (blocks > 0) {
    // min_ps(a, b) / max_ps(a, b) return b when a is NaN: the running
    // value stays, as std::min(running, a) does.
    __m256 vlo = _mm256_set1_ps(*lo), vhi = _mm256_set1_ps(*hi);
    for (int32_t i = 0; i < blocks; i += 8) {
      const __m256 v = _mm256_loadu_ps(x + i);
      vlo = _mm256_min_ps(v, vlo);
      vhi = _mm256_max_ps(v, vhi);
    }
    *lo = ReduceLanes(vlo, false);
    *hi = ReduceLanes(vhi, true);
  }
  for (int32_t i = blocks; i < n; ++i) {
    *lo = std::min(*lo, x[i]);
    *hi = std::max(*hi, x[i]);
  }
}

void RoundBlocks(const float* x, int32_t n, float inv, int32_t zero_point,
                 int32_t qmin, int8_t* q) {
  const __m256 vinv = _mm256_set1_ps(inv);
  const __m256 half = _mm256_set1_ps(0.5f), minus_half = _mm256_set1_ps(-0.5f);
  const __m256i zp = _mm256_set1_epi32(zero_point);
  const __m256i lo = _mm256_set1_epi32(qmin), hi = _mm256_set1_epi32(127);
  for (int32_t i = 0; i < n; i += 8) {
    const __m256 v = _mm256_mul_ps(vinv, _mm256_loadu_ps(x + i));
    const __m256 negative = _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_LT_OQ);
    const __m256 nudged =
        _mm256_add_ps(v, _mm256_blendv_ps(half, minus_half, negative));
    __m256i r = _mm256_add_epi32(_mm256_cvttps_epi32(nudged), zp);
    r = _mm256_min_epi32(_mm256_max_epi32(r, lo), hi);
    // In range already: the saturating packs only reorder.
    const __m256i packed16 = _mm256_packs_epi32(r, r);
    const __m128i ordered =
        _mm256_castsi256_si128(_mm256_permute4x64_epi64(packed16, 0x08));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(q + i),
                     _mm_packs_epi16(ordered, ordered));
  }
}

}  // namespace
}  // namespace kiln::cpu::nn

#pragma GCC pop_options

namespace kiln::cpu::nn {
HybridQuantizeKernels HybridQuantizeKernelsAvx2() {
  __builtin_cpu_init();
  HybridQuantizeKernels k;
  if (__builtin_cpu_supports("avx2")) {
    k.min_max = &MinMax;
    k.round_blocks = &RoundBlocks;
  }
  return k;
}
}  // namespace kiln::cpu::nn

#else

namespace kiln::cpu::nn {
HybridQuantizeKernels HybridQuantizeKernelsAvx2() { return {}; }
}  // namespace kiln::cpu::nn

#endif
