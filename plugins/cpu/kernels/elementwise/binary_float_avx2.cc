// The AVX2 row kernels of binary_float.h, compiled for that target inside
// this file only (no FMA: GCC must not contract a product and a sum) and
// selected at run time.
#include "kernels/elementwise/binary_float.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("avx2")

namespace kiln::cpu::elementwise {
namespace {

#define KILN_BF_INLINE inline __attribute__((always_inline))

// maxps / minps return the second operand unless the comparison holds,
// as x > y ? x : y and x < y ? x : y do (NaNs included).
template <FloatBinaryOp kOp>
KILN_BF_INLINE __m256 Apply(__m256 x, __m256 y) {
  if constexpr (kOp == FloatBinaryOp::kAdd) return _mm256_add_ps(x, y);
  if constexpr (kOp == FloatBinaryOp::kSub) return _mm256_sub_ps(x, y);
  if constexpr (kOp == FloatBinaryOp::kMul) return _mm256_mul_ps(x, y);
  if constexpr (kOp == FloatBinaryOp::kDiv) return _mm256_div_ps(x, y);
  if constexpr (kOp == FloatBinaryOp::kSquaredDifference) {
    const __m256 d = _mm256_sub_ps(x, y);
    return _mm256_mul_ps(d, d);
  }
  if constexpr (kOp == FloatBinaryOp::kMaximum) return _mm256_max_ps(x, y);
  if constexpr (kOp == FloatBinaryOp::kMinimum) return _mm256_min_ps(x, y);
}

// Lanes [0, n) set, n in [0, 8].
KILN_BF_INLINE __m256i TailMask(int64_t n) {
  alignas(32) static const int32_t kBits[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                                0,  0,  0,  0,  0,  0,  0,  0};
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kBits + 8 - n));
}

// kA / kB: whether a / b is a row (else one broadcast value). Two vectors
// an iteration, then one, then a masked tail.
template <FloatBinaryOp kOp, bool kA, bool kB>
KILN_BF_INLINE void RowLoop(const float* a, const float* b, float* out,
                            int64_t n) {
  const __m256 va = kA ? _mm256_setzero_ps() : _mm256_broadcast_ss(a);
  const __m256 vb = kB ? _mm256_setzero_ps() : _mm256_broadcast_ss(b);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 x0 = kA ? _mm256_loadu_ps(a + i) : va;
    const __m256 x1 = kA ? _mm256_loadu_ps(a + i + 8) : va;
    const __m256 y0 = kB ? _mm256_loadu_ps(b + i) : vb;
    const __m256 y1 = kB ? _mm256_loadu_ps(b + i + 8) : vb;
    _mm256_storeu_ps(out + i, Apply<kOp>(x0, y0));
    _mm256_storeu_ps(out + i + 8, Apply<kOp>(x1, y1));
  }
  for (; i + 8 <= n; i += 8) {
    const __m256 x = kA ? _mm256_loadu_ps(a + i) : va;
    const __m256 y = kB ? _mm256_loadu_ps(b + i) : vb;
    _mm256_storeu_ps(out + i, Apply<kOp>(x, y));
  }
  if (i < n) {
    const __m256i mask = TailMask(n - i);
    const __m256 x = kA ? _mm256_maskload_ps(a + i, mask) : va;
    const __m256 y = kB ? _mm256_maskload_ps(b + i, mask) : vb;
    _mm256_maskstore_ps(out + i, mask, Apply<kOp>(x, y));
  }
}

template <FloatBinaryOp kOp>
void Row(const float* a, int64_t sa, const float* b, int64_t sb, float* out,
         int64_t n) {
  if (sa != 0 && sb != 0) {
    RowLoop<kOp, true, true>(a, b, out, n);
  } else if (sa != 0) {
    RowLoop<kOp, true, false>(a, b, out, n);
  } else if (sb != 0) {
    RowLoop<kOp, false, true>(a, b, out, n);
  } else {
    RowLoop<kOp, false, false>(a, b, out, n);
  }
}

}  // namespace
}  // namespace kiln::cpu::elementwise

#pragma GCC pop_options

namespace kiln::cpu::elementwise {
FloatBinaryRow FloatBinaryRowAvx2(FloatBinaryOp op) {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2")) return nullptr;
  switch (op) {
    case FloatBinaryOp::kAdd:
      return &Row<FloatBinaryOp::kAdd>;
    case FloatBinaryOp::kSub:
      return &Row<FloatBinaryOp::kSub>;
    case FloatBinaryOp::kMul:
      return &Row<FloatBinaryOp::kMul>;
    case FloatBinaryOp::kDiv:
      return &Row<FloatBinaryOp::kDiv>;
    case FloatBinaryOp::kSquaredDifference:
      return &Row<FloatBinaryOp::kSquaredDifference>;
    case FloatBinaryOp::kMaximum:
      return &Row<FloatBinaryOp::kMaximum>;
    case FloatBinaryOp::kMinimum:
      return &Row<FloatBinaryOp::kMinimum>;
  }
  return nullptr;
}
}  // namespace kiln::cpu::elementwise

#else

namespace kiln::cpu::elementwise {
FloatBinaryRow FloatBinaryRowAvx2(FloatBinaryOp) { return nullptr; }
}  // namespace kiln::cpu::elementwise

#endif
