// Transpose32Avx2 of block_transpose.h, compiled for AVX2 inside this file
// only and selected at run time. The shuffles move bits, so any 32-bit
// value (a float NaN's payload too) arrives unchanged.
#include "kernels/data/block_transpose.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("avx2")

namespace kiln::cpu::data {
namespace {

#define KILN_BT_INLINE inline __attribute__((always_inline))

KILN_BT_INLINE __m256 Load(const uint32_t* p) {
  return _mm256_loadu_ps(reinterpret_cast<const float*>(p));
}

// The 8x8 tile at in (row stride ld_in) transposed to out (row stride
// ld_out): half rows r and r + 4 loaded into one register, then a 4x4
// transpose inside each 128-bit lane for columns 0..3 and 4..7.
KILN_BT_INLINE void Tile8x8(const uint32_t* in, int64_t ld_in, uint32_t* out,
                            int64_t ld_out) {
  for (int half = 0; half < 2; ++half) {
    const uint32_t* s = in + 4 * half;
    const auto pair = [&](int r) {
      return _mm256_insertf128_ps(
          _mm256_castps128_ps256(
              _mm_loadu_ps(reinterpret_cast<const float*>(s + r * ld_in))),
          _mm_loadu_ps(reinterpret_cast<const float*>(s + (r + 4) * ld_in)), 1);
    };
    const __m256 a0 = pair(0), a1 = pair(1), a2 = pair(2), a3 = pair(3);
    const __m256 u0 = _mm256_unpacklo_ps(a0, a1);
    const __m256 u1 = _mm256_unpackhi_ps(a0, a1);
    const __m256 u2 = _mm256_unpacklo_ps(a2, a3);
    const __m256 u3 = _mm256_unpackhi_ps(a2, a3);
    float* d = reinterpret_cast<float*>(out + 4 * half * ld_out);
    _mm256_storeu_ps(d, _mm256_shuffle_ps(u0, u2, 0x44));
    _mm256_storeu_ps(d + ld_out, _mm256_shuffle_ps(u0, u2, 0xEE));
    _mm256_storeu_ps(d + 2 * ld_out, _mm256_shuffle_ps(u1, u3, 0x44));
    _mm256_storeu_ps(d + 3 * ld_out, _mm256_shuffle_ps(u1, u3, 0xEE));
  }
}

void Transpose(const uint32_t* in, int64_t rows, int64_t cols, uint32_t* out) {
  const int64_t r8 = rows - rows % 8, c8 = cols - cols % 8;
  for (int64_t r = 0; r < r8; r += 8) {
    for (int64_t c = 0; c < c8; c += 8) {
      Tile8x8(in + r * cols + c, cols, out + c * rows + r, rows);
    }
  }
  // Right edge (columns c8..), then bottom edge (rows r8..).
  for (int64_t c = c8; c < cols; ++c) {
    for (int64_t r = 0; r < rows; ++r) out[c * rows + r] = in[r * cols + c];
  }
  for (int64_t c = 0; c < c8; ++c) {
    for (int64_t r = r8; r < rows; ++r) out[c * rows + r] = in[r * cols + c];
  }
}

}  // namespace
}  // namespace kiln::cpu::data

#pragma GCC pop_options

namespace kiln::cpu::data {
bool Transpose32Avx2(const uint32_t* in, int64_t rows, int64_t cols,
                     uint32_t* out) {
  static const bool kHasAvx2 = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  if (!kHasAvx2) return false;
  Transpose(in, rows, cols, out);
  return true;
}
}  // namespace kiln::cpu::data

#else

namespace kiln::cpu::data {
bool Transpose32Avx2(const uint32_t*, int64_t, int64_t, uint32_t*) {
  return false;
}
}  // namespace kiln::cpu::data

#endif
