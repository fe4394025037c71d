// The AVX2 micro-kernel of IntGemm (vpmaddwd on k pairs), compiled for that
// target inside this file only and selected at run time.
#include <cstdint>

#include "kernels/nn/int_gemm.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("avx2")

namespace kiln::cpu::nn {
namespace {

template <int kRows>
inline __attribute__((always_inline)) void MicroKernel(
    int pairs, const int16_t* a, int64_t lda, const int16_t* panel, int32_t* c,
    int64_t ldc, int n_valid, bool accumulate) {
  // The row loops are unrolled so that the accumulators stay in registers
  // (GCC's -O2 keeps a rolled loop's array on the stack).
  __m256i acc[kRows][2];
#pragma GCC unroll 4
  for (int i = 0; i < kRows; ++i) {
    acc[i][0] = _mm256_setzero_si256();
    acc[i][1] = _mm256_setzero_si256();
  }
  for (int p = 0; p < pairs; ++p) {
    const __m256i w0 = _mm256_loadu_si256(
        reinterpret_cast<const __m256i*>(panel + p * 2 * kIntGemmPanelWidth));
    const __m256i w1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(
        panel + p * 2 * kIntGemmPanelWidth + 16));
#pragma GCC unroll 4
    for (int i = 0; i < kRows; ++i) {
      int32_t pair;
      __builtin_memcpy(&pair, a + i * lda + 2 * p, sizeof(pair));
      const __m256i av = _mm256_set1_epi32(pair);
      acc[i][0] = _mm256_add_epi32(acc[i][0], _mm256_madd_epi16(av, w0));
      acc[i][1] = _mm256_add_epi32(acc[i][1], _mm256_madd_epi16(av, w1));
    }
  }
#pragma GCC unroll 4
  for (int i = 0; i < kRows; ++i) {
    int32_t* dst = c + i * ldc;
    if (n_valid == kIntGemmPanelWidth) {
      __m256i* d0 = reinterpret_cast<__m256i*>(dst);
      __m256i* d1 = reinterpret_cast<__m256i*>(dst + 8);
      if (accumulate) {
        acc[i][0] = _mm256_add_epi32(acc[i][0], _mm256_loadu_si256(d0));
        acc[i][1] = _mm256_add_epi32(acc[i][1], _mm256_loadu_si256(d1));
      }
      _mm256_storeu_si256(d0, acc[i][0]);
      _mm256_storeu_si256(d1, acc[i][1]);
    } else {
      int32_t tmp[kIntGemmPanelWidth];
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(tmp), acc[i][0]);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(tmp + 8), acc[i][1]);
      for (int j = 0; j < n_valid; ++j) {
        dst[j] = accumulate
                     ? static_cast<int32_t>(static_cast<uint32_t>(dst[j]) +
                                            static_cast<uint32_t>(tmp[j]))
                     : tmp[j];
      }
    }
  }
}

void MicroKernelAvx2(int rows, int pairs, const int16_t* a, int64_t lda,
                     const int16_t* panel, int32_t* c, int64_t ldc, int n_valid,
                     bool accumulate) {
  switch (rows) {
    case 4:
      MicroKernel<4>(pairs, a, lda, panel, c, ldc, n_valid, accumulate);
      break;
    case 3:
      MicroKernel<3>(pairs, a, lda, panel, c, ldc, n_valid, accumulate);
      break;
    case 2:
      MicroKernel<2>(pairs, a, lda, panel, c, ldc, n_valid, accumulate);
      break;
    default:
      MicroKernel<1>(pairs, a, lda, panel, c, ldc, n_valid, accumulate);
      break;
  }
}

}  // namespace
}  // namespace kiln::cpu::nn

#pragma GCC pop_options

namespace kiln::cpu::nn {
IntGemmMicroKernel IntGemmMicroKernelAvx2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") ? &MicroKernelAvx2 : nullptr;
}
}  // namespace kiln::cpu::nn

#else

namespace kiln::cpu::nn {
IntGemmMicroKernel IntGemmMicroKernelAvx2() { return nullptr; }
}  // namespace kiln::cpu::nn

#endif
