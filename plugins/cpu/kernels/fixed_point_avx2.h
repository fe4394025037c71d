// AVX2 lanes of the fixed-point steps in quantization_util.h, shared by the
// *_avx2.cc kernels. Include only inside a `#pragma GCC target("avx2")`
// region (or a translation unit built for AVX2).
#ifndef KILN_PLUGINS_CPU_KERNELS_FIXED_POINT_AVX2_H_
#define KILN_PLUGINS_CPU_KERNELS_FIXED_POINT_AVX2_H_

#include <immintrin.h>

#include <cstdint>

namespace kiln::cpu::avx2 {

// SaturatingRoundingDoublingHighMul per int32 lane: bits 31..62 of each
// 64-bit x * m + 2^30. The reference's nudge (2^30, or 1 - 2^30 for a
// negative product) followed by its division truncating toward zero is
// that floor shift; it never saturates while m is not INT32_MIN.
inline __m256i DoublingHighMul(__m256i x, __m256i m) {
  const __m256i half = _mm256_set1_epi64x(int64_t{1} << 30);
  const __m256i even = _mm256_add_epi64(_mm256_mul_epi32(x, m), half);
  const __m256i odd = _mm256_add_epi64(
      _mm256_mul_epi32(_mm256_srli_epi64(x, 32), _mm256_srli_epi64(m, 32)),
      half);
  // Even results in the low halves, odd ones in the high halves.
  return _mm256_blend_epi32(_mm256_srli_epi64(even, 31),
                            _mm256_slli_epi64(odd, 1), 0xAA);
}

// RoundingDivideByPOT per int32 lane, one exponent in [0, 31] for all: the
// arithmetic shift plus one where the remainder exceeds half (half plus
// one for a negative lane).
inline __m256i RoundingDivideByPOT(__m256i v, int32_t exponent) {
  const __m256i mask =
      _mm256_set1_epi32(static_cast<int32_t>((int64_t{1} << exponent) - 1));
  const __m256i remainder = _mm256_and_si256(v, mask);
  const __m256i negative = _mm256_cmpgt_epi32(_mm256_setzero_si256(), v);
  const __m256i threshold =
      _mm256_sub_epi32(_mm256_srai_epi32(mask, 1), negative);
  const __m256i round_up = _mm256_cmpgt_epi32(remainder, threshold);
  return _mm256_sub_epi32(_mm256_sra_epi32(v, _mm_cvtsi32_si128(exponent)),
                          round_up);
}

// The eight int32 lanes (already inside int16's range) as int16 in the low
// 128 bits, in order.
inline __m128i ToInt16(__m256i v) {
  const __m256i packed = _mm256_packs_epi32(v, v);
  return _mm256_castsi256_si128(_mm256_permute4x64_epi64(packed, 0x08));
}

}  // namespace kiln::cpu::avx2

#endif  // KILN_PLUGINS_CPU_KERNELS_FIXED_POINT_AVX2_H_
