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
// or, for requant_in_double (FULLY_CONNECTED), round(x * m) in double.
#include "kernels/nn/requantize.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("avx2")

#include "kernels/fixed_point_avx2.h"

namespace kiln::cpu::nn {
namespace {

using avx2::DoublingHighMul;
using avx2::ToInt16;

inline __m256i Load(const int32_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
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

// RoundToInt32LikeTflite(double(x) * m) for four lanes: the product in
// double, rounded half away from zero (the truncation plus one where the
// dropped fraction is at least a half; both steps are exact), converted
// with x86's truncation, which gives INT32_MIN outside int32 as TFLite's
// reference conversion does.
inline __m128i RoundScaled4(__m128i x, const double* m) {
  const __m256d p = _mm256_mul_pd(_mm256_cvtepi32_pd(x), _mm256_loadu_pd(m));
  const __m256d t = _mm256_round_pd(p, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  const __m256d fraction = _mm256_sub_pd(p, t);
  const __m256d one = _mm256_set1_pd(1.0);
  const __m256d up = _mm256_and_pd(
      _mm256_cmp_pd(fraction, _mm256_set1_pd(0.5), _CMP_GE_OQ), one);
  const __m256d down = _mm256_and_pd(
      _mm256_cmp_pd(fraction, _mm256_set1_pd(-0.5), _CMP_LE_OQ), one);
  return _mm256_cvttpd_epi32(_mm256_sub_pd(_mm256_add_pd(t, up), down));
}

// Eight requantized channels starting at c, clamped, as int32 lanes.
inline __m256i Requantize8(const RequantRowArgs& a, int32_t c) {
  __m256i x = Load(a.acc + c);
  if (a.bias != nullptr) x = _mm256_add_epi32(x, Load(a.bias + c));
  if (a.real_multipliers != nullptr) {
    const __m128i lo =
        RoundScaled4(_mm256_castsi256_si128(x), a.real_multipliers + c);
    const __m128i hi = RoundScaled4(_mm256_extracti128_si256(x, 1),
                                    a.real_multipliers + c + 4);
    x = _mm256_set_m128i(hi, lo);
  } else {
    x = _mm256_sllv_epi32(x, Load(a.lanes->left_shift.data() + c));
    x = DoublingHighMul(x, Load(a.lanes->multiplier.data() + c));
    x = RoundingShiftRight(x, Load(a.lanes->right_shift.data() + c));
  }
  x = _mm256_add_epi32(x, _mm256_set1_epi32(a.offset));
  x = _mm256_max_epi32(x, _mm256_set1_epi32(a.act_min));
  return _mm256_min_epi32(x, _mm256_set1_epi32(a.act_max));
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
