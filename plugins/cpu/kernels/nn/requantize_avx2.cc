// The AVX2 row kernels of RequantizeRows, compiled for that target inside
// this file only and selected at run time.
//
// Per lane, TFLite's MultiplyByQuantizedMultiplier on x = acc + bias:
//   x <<= left_shift;
//   SaturatingRoundingDoublingHighMul(x, m) = (x * m + 2^30) >> 31: the
//     reference's nudge (2^30, or 1 - 2^30 for a negative product) followed
//     by its division truncating toward zero is that floor shift, and it
//     never saturates since the multiplier is not INT32_MIN;
//   RoundingDivideByPOT(v, right_shift): the arithmetic shift plus one
//     when the remainder exceeds half (half plus one for negative v).
#include "kernels/nn/requantize.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("avx2")

namespace kiln::cpu::nn {
namespace {

inline __m256i Load(const int32_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

// Bits 31..62 of each 64-bit x * m + 2^30 for the lanes of x and m.
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

inline __m256i RoundingShiftRight(__m256i v, __m256i shift) {
  const __m256i one = _mm256_set1_epi32(1);
  const __m256i mask = _mm256_sub_epi32(_mm256_sllv_epi32(one, shift), one);
  const __m256i remainder = _mm256_and_si256(v, mask);
  const __m256i negative = _mm256_cmpgt_epi32(_mm256_setzero_si256(), v);
  const __m256i threshold =
      _mm256_sub_epi32(_mm256_srai_epi32(mask, 1), negative);
  const __m256i round_up = _mm256_cmpgt_epi32(remainder, threshold);
  return _mm256_sub_epi32(_mm256_srav_epi32(v, shift), round_up);
}

// Eight requantized channels starting at c, clamped, as int32 lanes.
inline __m256i Requantize8(const RequantRowArgs& a, int32_t c) {
  __m256i x = Load(a.acc + c);
  if (a.bias != nullptr) x = _mm256_add_epi32(x, Load(a.bias + c));
  x = _mm256_sllv_epi32(x, Load(a.lanes->left_shift.data() + c));
  x = DoublingHighMul(x, Load(a.lanes->multiplier.data() + c));
  x = RoundingShiftRight(x, Load(a.lanes->right_shift.data() + c));
  x = _mm256_add_epi32(x, _mm256_set1_epi32(a.offset));
  x = _mm256_max_epi32(x, _mm256_set1_epi32(a.act_min));
  return _mm256_min_epi32(x, _mm256_set1_epi32(a.act_max));
}

// The eight lanes (already inside the output type's range) as int16 in
// the low 128 bits, in order.
inline __m128i ToInt16(__m256i v) {
  const __m256i packed = _mm256_packs_epi32(v, v);
  return _mm256_castsi256_si128(_mm256_permute4x64_epi64(packed, 0x08));
}

void RowInt8(const RequantRowArgs& a, int8_t* out) {
  for (int32_t c = 0; c < a.count; c += 8) {
    const __m128i v = ToInt16(Requantize8(a, c));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out + c),
                     _mm_packs_epi16(v, v));
  }
}

void RowUint8(const RequantRowArgs& a, uint8_t* out) {
  for (int32_t c = 0; c < a.count; c += 8) {
    const __m128i v = ToInt16(Requantize8(a, c));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out + c),
                     _mm_packus_epi16(v, v));
  }
}

}  // namespace
}  // namespace kiln::cpu::nn

#pragma GCC pop_options

namespace kiln::cpu::nn {
RequantRowKernels RequantRowKernelsAvx2() {
  __builtin_cpu_init();
  RequantRowKernels k;
  if (__builtin_cpu_supports("avx2")) {
    k.int8 = &RowInt8;
    k.uint8 = &RowUint8;
  }
  return k;
}
}  // namespace kiln::cpu::nn

#else

namespace kiln::cpu::nn {
RequantRowKernels RequantRowKernelsAvx2() { return {}; }
}  // namespace kiln::cpu::nn

#endif
