// The AVX2+FMA kernels of vec_math.h, compiled for that target inside this
// file only and selected at run time.
#include <cmath>

#include "kernels/nn/vec_math.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("avx2,fma")

namespace kiln::cpu::nn {
namespace {

#define KILN_VM_INLINE inline __attribute__((always_inline))

// exp(x) for x clamped to [-87.3, 88.3] (Cephes expf: Cody-Waite reduction
// by ln 2, a degree-7 polynomial, 2^n built in the exponent bits); about
// 2 ulp. Below the range it gives ~1e-38 instead of underflowing.
KILN_VM_INLINE __m256 Exp(__m256 x) {
  x = _mm256_min_ps(_mm256_set1_ps(88.3f),
                    _mm256_max_ps(_mm256_set1_ps(-87.3f), x));
  const __m256 fx =
      _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(fx, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(fx, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), r);
  p = _mm256_add_ps(p, _mm256_set1_ps(1.f));
  const __m256i e = _mm256_slli_epi32(
      _mm256_add_epi32(_mm256_cvtps_epi32(fx), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

// 0.5x(1 + erf(x / sqrt(2))) with erf(x / sqrt(2)) = x P(x^2) / Q(x^2), a
// rational fit (degree 11 over 10, relative error 1e-8 in double) on
// |x| <= 5.164, and +-1 beyond; the float result is within 1e-6 of the
// exact GELU (absolute), one division and no exponential.
KILN_VM_INLINE __m256 GeluExact(__m256 x) {
  const __m256 cap = _mm256_set1_ps(5.1638283730f);
  const __m256 sign = _mm256_set1_ps(-0.f);
  const __m256 c =
      _mm256_min_ps(cap, _mm256_max_ps(_mm256_xor_ps(cap, sign), x));
  const __m256 u = _mm256_mul_ps(c, c);
  __m256 p = _mm256_set1_ps(5.1250708455e-08f);
  p = _mm256_fmadd_ps(p, u, _mm256_set1_ps(1.2851160328e-05f));
  p = _mm256_fmadd_ps(p, u, _mm256_set1_ps(3.0224487196e-04f));
  p = _mm256_fmadd_ps(p, u, _mm256_set1_ps(9.1516138665e-03f));
  p = _mm256_fmadd_ps(p, u, _mm256_set1_ps(6.3855220887e-02f));
  p = _mm256_fmadd_ps(p, u, _mm256_set1_ps(7.9788455917e-01f));
  __m256 q = _mm256_set1_ps(1.2859130341e-06f);
  q = _mm256_fmadd_ps(q, u, _mm256_set1_ps(6.8932621079e-05f));
  q = _mm256_fmadd_ps(q, u, _mm256_set1_ps(1.7850934734e-03f));
  q = _mm256_fmadd_ps(q, u, _mm256_set1_ps(2.7586215058e-02f));
  q = _mm256_fmadd_ps(q, u, _mm256_set1_ps(2.4669726585e-01f));
  q = _mm256_fmadd_ps(q, u, _mm256_set1_ps(1.f));
  __m256 erf = _mm256_div_ps(_mm256_mul_ps(c, p), q);
  erf = _mm256_min_ps(_mm256_set1_ps(1.f),
                      _mm256_max_ps(_mm256_set1_ps(-1.f), erf));
  // Exactly +-1 at and beyond the cap (and never past it).
  const __m256 saturated =
      _mm256_cmp_ps(_mm256_andnot_ps(sign, x), cap, _CMP_GE_OQ);
  const __m256 one = _mm256_or_ps(_mm256_set1_ps(1.f), _mm256_and_ps(sign, x));
  erf = _mm256_blendv_ps(erf, one, saturated);
  return _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), x),
                       _mm256_add_ps(_mm256_set1_ps(1.f), erf));
}

// 0.5x(1 + tanh(u)) = x / (1 + exp(-2u)), u = sqrt(2 / pi)(x + 0.044715x^3).
KILN_VM_INLINE __m256 GeluTanh(__m256 x) {
  const __m256 x2 = _mm256_mul_ps(x, x);
  const __m256 inner =
      _mm256_fmadd_ps(_mm256_mul_ps(_mm256_set1_ps(0.044715f), x2), x, x);
  const __m256 m2u =
      _mm256_mul_ps(inner, _mm256_set1_ps(-2.f * 0.7978845608028654f));
  return _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.f), Exp(m2u)));
}

template <bool kApproximate>
KILN_VM_INLINE __m256 GeluVec(__m256 v) {
  return kApproximate ? GeluTanh(v) : GeluExact(v);
}

template <bool kApproximate>
void GeluRow(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i, GeluVec<kApproximate>(_mm256_loadu_ps(x + i)));
  if (i < n) {
    float tmp[8] = {};
    for (int64_t j = i; j < n; ++j) tmp[j - i] = x[j];
    _mm256_storeu_ps(tmp, GeluVec<kApproximate>(_mm256_loadu_ps(tmp)));
    for (int64_t j = i; j < n; ++j) y[j] = tmp[j - i];
  }
}

void Gelu(const float* x, float* y, int64_t n, bool approximate) {
  if (approximate) {
    GeluRow<true>(x, y, n);
  } else {
    GeluRow<false>(x, y, n);
  }
}

// The sum in eight lanes, then the lanes and the tail in order.
float ExpSum(const float* x, float offset, float scale, float* y, int64_t n) {
  const __m256 voff = _mm256_set1_ps(offset), vscale = _mm256_set1_ps(scale);
  __m256 acc = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 e =
        Exp(_mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), voff), vscale));
    _mm256_storeu_ps(y + i, e);
    acc = _mm256_add_ps(acc, e);
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, acc);
  float sum = 0.f;
  for (const float l : lanes) sum += l;
  if (i < n) {
    float tmp[8] = {};
    for (int64_t j = i; j < n; ++j) tmp[j - i] = x[j];
    _mm256_storeu_ps(
        tmp,
        Exp(_mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(tmp), voff), vscale)));
    for (int64_t j = i; j < n; ++j) {
      y[j] = tmp[j - i];
      sum += y[j];
    }
  }
  return sum;
}

// The largest of x[0..n), n > 0: two vector accumulators, then the lanes.
KILN_VM_INLINE float RowMax(const float* x, int64_t n) {
  int64_t i = 0;
  float max = x[0];
  if (n >= 8) {
    __m256 m0 = _mm256_loadu_ps(x), m1 = m0;
    for (i = 8; i + 16 <= n; i += 16) {
      m0 = _mm256_max_ps(m0, _mm256_loadu_ps(x + i));
      m1 = _mm256_max_ps(m1, _mm256_loadu_ps(x + i + 8));
    }
    if (i + 8 <= n) {
      m0 = _mm256_max_ps(m0, _mm256_loadu_ps(x + i));
      i += 8;
    }
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(_mm256_max_ps(m0, m1)),
                          _mm256_extractf128_ps(_mm256_max_ps(m0, m1), 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
    max = _mm_cvtss_f32(m);
  }
  for (; i < n; ++i) max = x[i] > max ? x[i] : max;
  return max;
}

// ExpSum, the row's max, and the scaling by 1 / sum in one pass over rows
// that stay in L1.
void SoftmaxRows(const float* x, float beta, float* y, int64_t rows,
                 int64_t depth) {
  for (int64_t r = 0; r < rows; ++r, x += depth, y += depth) {
    const float sum = ExpSum(x, RowMax(x, depth), beta, y, depth);
    const __m256 inverse = _mm256_set1_ps(1.f / sum);
    int64_t i = 0;
    for (; i + 8 <= depth; i += 8) {
      _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_loadu_ps(y + i), inverse));
    }
    for (; i < depth; ++i) y[i] *= 1.f / sum;
  }
}

// Four pairs a vector: each lane's partner by swapping adjacent lanes.
void SoftmaxPairs(const float* x, float beta, float* y, int64_t n) {
  const __m256 vbeta = _mm256_set1_ps(beta), one = _mm256_set1_ps(1.f);
  const auto pairs = [&](__m256 v) {
    const __m256 max = _mm256_max_ps(v, _mm256_permute_ps(v, 0xB1));
    const __m256 e = Exp(_mm256_mul_ps(_mm256_sub_ps(v, max), vbeta));
    const __m256 sum = _mm256_add_ps(e, _mm256_permute_ps(e, 0xB1));
    return _mm256_mul_ps(e, _mm256_div_ps(one, sum));
  };
  int64_t i = 0;
  for (; i + 8 <= 2 * n; i += 8) {
    _mm256_storeu_ps(y + i, pairs(_mm256_loadu_ps(x + i)));
  }
  if (i < 2 * n) {
    float tmp[8] = {};
    for (int64_t j = i; j < 2 * n; ++j) tmp[j - i] = x[j];
    _mm256_storeu_ps(tmp, pairs(_mm256_loadu_ps(tmp)));
    for (int64_t j = i; j < 2 * n; ++j) y[j] = tmp[j - i];
  }
}

}  // namespace
}  // namespace kiln::cpu::nn

#pragma GCC pop_options

namespace kiln::cpu::nn {
VecMathKernels VecMathKernelsAvx2Fma() {
  VecMathKernels k;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    k.gelu = &Gelu;
    k.exp_sum = &ExpSum;
    k.softmax_pairs = &SoftmaxPairs;
    k.softmax_rows = &SoftmaxRows;
  }
  return k;
}
}  // namespace kiln::cpu::nn

#else

namespace kiln::cpu::nn {
VecMathKernels VecMathKernelsAvx2Fma() { return {}; }
}  // namespace kiln::cpu::nn

#endif
