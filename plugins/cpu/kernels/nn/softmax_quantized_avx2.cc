// The AVX2 rows of the 8-bit fixed-point SOFTMAX (softmax_quantized.cc's
// Softmax8 with an output of the input's type), compiled for that target
// inside this file only and selected at run time. Per row: the maximum, the
// wrapping int32 sum of the Q12.19 exp table over the row (gathered eight at
// a time), its fixed-point reciprocal (GetReciprocal, scalar), then per
// element the reference's SaturatingRoundingDoublingHighMul and
// RoundingDivideByPOT on eight lanes (fixed_point_avx2.h). Outputs are
// bit-identical to Softmax8's.
#include "kernels/nn/softmax_quantized.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>

#pragma GCC push_options
#pragma GCC target("avx2")

#include "kernels/fixed_point_avx2.h"

namespace kiln::cpu::nn {
namespace {

template <typename T>
inline __m128i MaxBytes(__m128i a, __m128i b) {
  if constexpr (std::is_same_v<T, int8_t>) {
    return _mm_max_epi8(a, b);
  } else {
    return _mm_max_epu8(a, b);
  }
}

template <typename T>
int32_t RowMax(const T* x, int32_t depth) {
  int32_t c = 0;
  int32_t best = std::numeric_limits<T>::min();
  if (depth >= 32) {
    __m256i m = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x));
    for (c = 32; c + 32 <= depth; c += 32) {
      const __m256i v =
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + c));
      m = std::is_same_v<T, int8_t> ? _mm256_max_epi8(m, v)
                                    : _mm256_max_epu8(m, v);
    }
    // Halve the lanes five times: the maximum ends in byte 0.
    __m128i h =
        MaxBytes<T>(_mm256_castsi256_si128(m), _mm256_extracti128_si256(m, 1));
    h = MaxBytes<T>(h, _mm_srli_si128(h, 8));
    h = MaxBytes<T>(h, _mm_srli_si128(h, 4));
    h = MaxBytes<T>(h, _mm_srli_si128(h, 2));
    h = MaxBytes<T>(h, _mm_srli_si128(h, 1));
    best = static_cast<T>(_mm_cvtsi128_si32(h) & 0xFF);
  }
  for (; c < depth; ++c) best = std::max<int32_t>(best, x[c]);
  return best;
}

// The wrapping sum of table[x[c]] over the row (table already offset by
// the row's maximum; x[c] may index it negatively).
template <typename T>
int32_t RowSum(const T* x, int32_t depth, const int32_t* table) {
  __m256i sum = _mm256_setzero_si256();
  int32_t c = 0;
  for (; c + 8 <= depth; c += 8) {
    sum = _mm256_add_epi32(
        sum, _mm256_i32gather_epi32(table, avx2::LoadBytes8(x + c), 4));
  }
  alignas(32) uint32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), sum);
  uint32_t total = 0;
  for (const uint32_t v : lanes) total += v;
  for (; c < depth; ++c) total += static_cast<uint32_t>(table[x[c]]);
  return static_cast<int32_t>(total);
}

template <typename T>
void Rows(const QuantizedSoftmaxState& s, const T* in, T* out, int64_t rows,
          int32_t depth) {
  constexpr int32_t kMin = std::numeric_limits<T>::min();
  constexpr int32_t kMax = std::numeric_limits<T>::max();
  for (int64_t r = 0; r < rows; ++r) {
    const T* x = in + r * depth;
    T* y = out + r * depth;
    // Indexing the tables at x[c] + offset, as Softmax8 does.
    const int32_t offset = kSoftmaxMaxDiff - RowMax(x, depth);
    const int32_t sum = RowSum(x, depth, s.exp_accum_table.data() + offset);
    int num_bits_over_unit = 0;
    const int32_t shifted_scale = GetReciprocal(
        sum, kSoftmaxAccumulationIntegerBits, &num_bits_over_unit);
    const int exponent = std::min(31, std::max(0, num_bits_over_unit + 23));
    const int32_t* exp = s.exp_table.data() + offset;
    const __m256i scale = _mm256_set1_epi32(shifted_scale);
    const __m256i lo = _mm256_set1_epi32(kMin);
    const __m256i hi = _mm256_set1_epi32(kMax);
    int32_t c = 0;
    for (; c + 8 <= depth; c += 8) {
      const __m256i e = _mm256_i32gather_epi32(exp, avx2::LoadBytes8(x + c), 4);
      const __m256i v = _mm256_add_epi32(
          avx2::RoundingDivideByPOT(avx2::DoublingHighMul(scale, e), exponent),
          lo);
      avx2::StoreBytes8(_mm256_min_epi32(hi, _mm256_max_epi32(lo, v)), y + c);
    }
    for (; c < depth; ++c) {
      const int32_t unsat = RoundingDivideByPOT(
          SaturatingRoundingDoublingHighMul(shifted_scale, exp[x[c]]),
          exponent);
      y[c] = static_cast<T>(std::max(kMin, std::min(kMax, unsat + kMin)));
    }
  }
}

}  // namespace
}  // namespace kiln::cpu::nn

#pragma GCC pop_options

namespace kiln::cpu::nn {
Softmax8RowKernels Softmax8RowKernelsAvx2() {
  __builtin_cpu_init();
  Softmax8RowKernels k;
  if (__builtin_cpu_supports("avx2")) {
    k.int8 = &Rows<int8_t>;
    k.uint8 = &Rows<uint8_t>;
  }
  return k;
}
}  // namespace kiln::cpu::nn

#else

namespace kiln::cpu::nn {
Softmax8RowKernels Softmax8RowKernelsAvx2() { return {}; }
}  // namespace kiln::cpu::nn

#endif
