// The AVX2 row kernels of the 8-bit ADD / SUB, MUL and SQUARED_DIFFERENCE
// (quantized_binary.cc), compiled for that target inside this file only and
// selected at run time. Eight lanes of int32 carry the very integer steps of
// the scalar functions:
//   SaturatingRoundingDoublingHighMul(x, m) = (x * m + 2^30) >> 31 (the
//     reference's sign-dependent nudge and truncating division are that
//     floor shift; m is never INT32_MIN, so it never saturates);
//   RoundingDivideByPOT(v, e): the arithmetic shift plus one when the
//     remainder exceeds half (half plus one for a negative v).
#include "kernels/elementwise/quantized_binary.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#include <cstdint>
#include <type_traits>

#pragma GCC push_options
#pragma GCC target("avx2")

#include "kernels/fixed_point_avx2.h"

namespace kiln::cpu::elementwise {
namespace {

using Kind = QuantizedBinaryState::Kind;
using avx2::DoublingHighMul;
using avx2::ToInt16;

// A fixed-point multiplier with its shifts, broadcast to the lanes.
struct VecMultiplier {
  __m256i multiplier;
  __m128i left;
  int32_t right;

  explicit VecMultiplier(const QuantizedMultiplier& q)
      : multiplier(_mm256_set1_epi32(q.multiplier)),
        left(_mm_cvtsi32_si128(q.shift > 0 ? q.shift : 0)),
        right(q.shift > 0 ? 0 : -q.shift) {}
  // MultiplyByQuantizedMultiplier (the left shift is 0 for multipliers
  // below one, so this is also the SmallerThanOne form).
  __m256i Apply(__m256i x) const {
    return avx2::RoundingDivideByPOT(
        DoublingHighMul(_mm256_sll_epi32(x, left), multiplier), right);
  }
};

struct VecParams {
  Kind kind;
  bool subtract;
  __m256i offset0, offset1, output_offset, act_min, act_max;
  __m128i left_shift;
  VecMultiplier m0, m1, out;

  explicit VecParams(const QuantizedBinaryState& s)
      : kind(s.kind),
        subtract(s.subtract),
        offset0(_mm256_set1_epi32(s.offset0)),
        offset1(_mm256_set1_epi32(s.offset1)),
        output_offset(_mm256_set1_epi32(s.output_offset)),
        act_min(_mm256_set1_epi32(s.act_min)),
        act_max(_mm256_set1_epi32(s.act_max)),
        left_shift(_mm_cvtsi32_si128(s.left_shift)),
        m0(s.multiplier0),
        m1(s.multiplier1),
        out(s.output_multiplier) {}

  // One lane's result before the output offset and clamp.
  __m256i Raw(__m256i x, __m256i y) const {
    if (kind == Kind::kMul) {
      return out.Apply(_mm256_mullo_epi32(_mm256_add_epi32(x, offset0),
                                          _mm256_add_epi32(y, offset1)));
    }
    const __m256i sx =
        m0.Apply(_mm256_sll_epi32(_mm256_add_epi32(x, offset0), left_shift));
    const __m256i sy =
        m1.Apply(_mm256_sll_epi32(_mm256_add_epi32(y, offset1), left_shift));
    if (kind == Kind::kSquaredDifference) {
      const __m256i diff = _mm256_sub_epi32(sx, sy);
      return out.Apply(_mm256_mullo_epi32(diff, diff));
    }
    return out.Apply(subtract ? _mm256_sub_epi32(sx, sy)
                              : _mm256_add_epi32(sx, sy));
  }

  __m256i Result(__m256i x, __m256i y) const {
    const __m256i v = _mm256_add_epi32(Raw(x, y), output_offset);
    return _mm256_min_epi32(act_max, _mm256_max_epi32(act_min, v));
  }
};

template <typename T>
inline __m256i Load8(const T* p) {
  const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  if constexpr (std::is_same_v<T, int8_t>) {
    return _mm256_cvtepi8_epi32(bytes);
  } else {
    return _mm256_cvtepu8_epi32(bytes);
  }
}

// Eight lanes already inside T's range, stored as T.
template <typename T>
inline void Store8(__m256i v, T* p) {
  const __m128i words = ToInt16(v);
  const __m128i bytes = std::is_same_v<T, int8_t>
                            ? _mm_packs_epi16(words, words)
                            : _mm_packus_epi16(words, words);
  _mm_storel_epi64(reinterpret_cast<__m128i*>(p), bytes);
}

template <typename T>
int64_t Row(const QuantizedBinaryState& s, const void* a, int64_t sa,
            const void* b, int64_t sb, void* out, int64_t n) {
  const T* pa = static_cast<const T*>(a);
  const T* pb = static_cast<const T*>(b);
  T* po = static_cast<T*>(out);
  const VecParams p(s);
  const int64_t count = n / 8 * 8;
  if (sa == 1 && sb == 1) {
    for (int64_t i = 0; i < count; i += 8) {
      Store8(p.Result(Load8(pa + i), Load8(pb + i)), po + i);
    }
  } else if (sa == 1) {
    const __m256i y = _mm256_set1_epi32(*pb);
    for (int64_t i = 0; i < count; i += 8) {
      Store8(p.Result(Load8(pa + i), y), po + i);
    }
  } else if (sb == 1) {
    const __m256i x = _mm256_set1_epi32(*pa);
    for (int64_t i = 0; i < count; i += 8) {
      Store8(p.Result(x, Load8(pb + i)), po + i);
    }
  } else {
    return 0;
  }
  return count;
}

}  // namespace
}  // namespace kiln::cpu::elementwise

#pragma GCC pop_options

namespace kiln::cpu::elementwise {
QuantizedBinaryRowKernels QuantizedBinaryRowKernelsAvx2() {
  __builtin_cpu_init();
  QuantizedBinaryRowKernels k;
  if (__builtin_cpu_supports("avx2")) {
    k.int8 = &Row<int8_t>;
    k.uint8 = &Row<uint8_t>;
  }
  return k;
}
}  // namespace kiln::cpu::elementwise

#else

namespace kiln::cpu::elementwise {
QuantizedBinaryRowKernels QuantizedBinaryRowKernelsAvx2() { return {}; }
}  // namespace kiln::cpu::elementwise

#endif
