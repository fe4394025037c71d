// The AVX2+FMA instantiation of the GEMM, compiled for that target inside
// this file only and selected at run time when the CPU supports it.
#include <cstdint>
#include <cstring>

#include "kernels/nn/gemm.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("avx2,fma")

namespace kiln::cpu::nn {
namespace {

struct Avx2FmaIsa {
  using V = __m256;
  static constexpr int kLanes = 8;
  static constexpr int kRows = 6;  // 6 x 2 vectors = 12 accumulators
  static V Load(const float* p) { return _mm256_loadu_ps(p); }
  static void Store(float* p, V v) { _mm256_storeu_ps(p, v); }
  // The first n (0 < n < kLanes) lanes; the others read as zero.
  static __m256i Mask(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static V LoadN(const float* p, int n) {
    return _mm256_maskload_ps(p, Mask(n));
  }
  // Plain 4-, 2- and 1-float stores: masked stores are slow on some CPUs.
  static void StoreN(float* p, V v, int n) {
    __m128 x = _mm256_castps256_ps128(v);
    if (n >= 4) {
      _mm_storeu_ps(p, x);
      x = _mm256_extractf128_ps(v, 1);
      p += 4;
      n -= 4;
    }
    if (n >= 2) {
      _mm_storel_pi(reinterpret_cast<__m64*>(p), x);
      x = _mm_movehl_ps(x, x);
      p += 2;
      n -= 2;
    }
    if (n >= 1) _mm_store_ss(p, x);
  }
  static V Splat(float x) { return _mm256_set1_ps(x); }
  static V MulAdd(V a, V b, V acc) { return _mm256_fmadd_ps(a, b, acc); }
  static V Min(V a, V b) { return _mm256_min_ps(a, b); }
  static V Max(V a, V b) { return _mm256_max_ps(a, b); }
};

}  // namespace
}  // namespace kiln::cpu::nn

#include "kernels/nn/gemm_impl.h"

namespace kiln::cpu::nn {
namespace {

void GemmAvx2FmaImpl(const float* a, int64_t lda, int32_t m,
                     const PackedMatrix& w, int32_t panel_begin,
                     int32_t panel_end, float lo, float hi, float* c,
                     int64_t ldc, bool accumulate) {
  GemmDriver<Avx2FmaIsa>(GemmPlainA{a, lda}, m, w, panel_begin, panel_end, lo,
                         hi, c, ldc, accumulate);
}

void GemmSegmentedAvx2FmaImpl(const GemmSegments& a, int32_t m,
                              const PackedMatrix& w, float lo, float hi,
                              float* c, int64_t ldc) {
  GemmDriver<Avx2FmaIsa>(GemmSegmentedA{a.rows, a.depth, 0, 0, a.lda}, m, w, 0,
                         w.num_panels(), lo, hi, c, ldc, false);
}

}  // namespace
}  // namespace kiln::cpu::nn

#pragma GCC pop_options

namespace kiln::cpu::nn {
GemmClampFn GemmAvx2Fma() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    return &GemmAvx2FmaImpl;
  }
  return nullptr;
}
GemmSegmentedClampFn GemmSegmentedAvx2Fma() {
  return GemmAvx2Fma() != nullptr ? &GemmSegmentedAvx2FmaImpl : nullptr;
}
}  // namespace kiln::cpu::nn

#else

namespace kiln::cpu::nn {
GemmClampFn GemmAvx2Fma() { return nullptr; }
GemmSegmentedClampFn GemmSegmentedAvx2Fma() { return nullptr; }
}  // namespace kiln::cpu::nn

#endif
