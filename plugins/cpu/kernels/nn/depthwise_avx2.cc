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
}  // namespace kiln::cpu::nn

#else

namespace kiln::cpu::nn {
DepthwisePixelFn DepthwisePixelAvx2Fma() { return nullptr; }
}  // namespace kiln::cpu::nn

#endif
