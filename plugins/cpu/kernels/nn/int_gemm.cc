#include "kernels/nn/int_gemm.h"

#include <algorithm>
#include <cstring>

namespace kiln::cpu::nn {
namespace {

constexpr int32_t kRowBlock = 64;     // rows of A per block
constexpr int32_t kDepthBlock = 512;  // k per block (even)

}  // namespace

void PackedInt16Matrix::Resize(int32_t n, int32_t k) {
  n_ = n;
  k_ = k;
  k_padded_ = k + (k % 2);
  data_.assign(
      static_cast<size_t>(num_panels()) * k_padded_ * kIntGemmPanelWidth, 0);
}

void IntGemmMicroKernelPortable(int rows, int pairs, const int16_t* a,
                                int64_t lda, const int16_t* panel, int32_t* c,
                                int64_t ldc, int n_valid, bool accumulate) {
  constexpr int NR = kIntGemmPanelWidth;
  for (int i = 0; i < rows; ++i) {
    int32_t acc[NR] = {};
    const int16_t* row = a + i * lda;
    for (int p = 0; p < pairs; ++p) {
      const int32_t a0 = row[2 * p], a1 = row[2 * p + 1];
      const int16_t* w = panel + p * 2 * NR;
      for (int j = 0; j < NR; ++j) {
        // Wrapping int32 arithmetic through uint32, like TFLite's int32
        // accumulators on two's-complement hardware.
        acc[j] = static_cast<int32_t>(
            static_cast<uint32_t>(acc[j]) +
            static_cast<uint32_t>(a0 * w[2 * j] + a1 * w[2 * j + 1]));
      }
    }
    int32_t* dst = c + i * ldc;
    for (int j = 0; j < n_valid; ++j) {
      dst[j] = accumulate ? static_cast<int32_t>(static_cast<uint32_t>(dst[j]) +
                                                 static_cast<uint32_t>(acc[j]))
                          : acc[j];
    }
  }
}

void IntGemm(const int16_t* a, int64_t lda, int32_t m,
             const PackedInt16Matrix& w, int32_t k_begin, int32_t k_end,
             int32_t* c, int64_t ldc) {
  static const IntGemmMicroKernel kKernel = [] {
    IntGemmMicroKernel f = IntGemmMicroKernelAvx2();
    return f != nullptr ? f : &IntGemmMicroKernelPortable;
  }();
  constexpr int NR = kIntGemmPanelWidth;
  const int32_t n = w.n();
  if (k_end <= k_begin) {
    for (int32_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, 0);
    return;
  }
  for (int32_t m0 = 0; m0 < m; m0 += kRowBlock) {
    const int32_t rows = std::min(kRowBlock, m - m0);
    for (int32_t k0 = k_begin; k0 < k_end; k0 += kDepthBlock) {
      const int32_t kc = std::min(kDepthBlock, k_end - k0);
      for (int32_t p = 0; p < w.num_panels(); ++p) {
        const int n_valid = std::min(NR, n - p * NR);
        const int16_t* panel =
            w.panel(p) + static_cast<int64_t>(k0 / 2) * 2 * NR;
        for (int32_t i = 0; i < rows; i += kIntGemmMaxRows) {
          const int r = std::min<int32_t>(kIntGemmMaxRows, rows - i);
          kKernel(r, kc / 2, a + (m0 + i) * lda + k0, lda, panel,
                  c + (m0 + i) * ldc + p * NR, ldc, n_valid, k0 != k_begin);
        }
      }
    }
  }
}

}  // namespace kiln::cpu::nn
