// Integer GEMM for the quantized kernels:
//   C[m][n] = sum_k A[m][k] * W[n][k]
// over int16 operands with int32 accumulation. Quantized kernels fold their
// zero-point offsets into the operands first (A = x - input_zero_point,
// W = w - filter_zero_point), so C is exactly TFLite's reference
// accumulator; int32 sums wrap exactly as TFLite's int32 accumulators do.
// W (N x K) is packed once into panels of kIntGemmPanelWidth columns holding
// pairs of consecutive k, the layout of the x86 pmaddwd / Arm smlal idiom.
#ifndef KILN_PLUGINS_CPU_KERNELS_NN_INT_GEMM_H_
#define KILN_PLUGINS_CPU_KERNELS_NN_INT_GEMM_H_

#include <algorithm>
#include <cstdint>
#include <vector>

namespace kiln::cpu::nn {

inline constexpr int kIntGemmPanelWidth = 16;

// A weight matrix packed for IntGemm. Resize allocates; Pack does not.
class PackedInt16Matrix {
 public:
  // Allocates an n x k matrix (zeroed); k is padded to even internally.
  void Resize(int32_t n, int32_t k);
  // Packs element (n, k) = w[n * stride_n + k * stride_k] + offset. T is an
  // integer type whose values plus `offset` fit int16.
  template <typename T>
  void Pack(const T* w, int64_t stride_n, int64_t stride_k, int32_t offset) {
    for (int32_t p = 0; p < num_panels(); ++p) {
      int16_t* dst = data_.data() +
                     static_cast<int64_t>(p) * k_padded_ * kIntGemmPanelWidth;
      const int32_t n0 = p * kIntGemmPanelWidth;
      const int32_t width = std::min(kIntGemmPanelWidth, n_ - n0);
      if (stride_n == 1) {  // columns adjacent: read along them
        for (int32_t kk = 0; kk < k_; ++kk) {
          const T* col = w + kk * stride_k + n0;
          for (int32_t j = 0; j < width; ++j) {
            dst[PackedIndex(kk, j)] = static_cast<int16_t>(col[j] + offset);
          }
        }
        continue;
      }
      for (int32_t j = 0; j < width; ++j) {
        const T* row = w + static_cast<int64_t>(n0 + j) * stride_n;
        for (int32_t kk = 0; kk < k_; ++kk) {
          dst[PackedIndex(kk, j)] =
              static_cast<int16_t>(row[kk * stride_k] + offset);
        }
      }
    }
  }

  int32_t n() const { return n_; }
  int32_t k() const { return k_; }
  // k rounded up to even: the row length IntGemm reads from A.
  int32_t k_padded() const { return k_padded_; }
  int32_t num_panels() const {
    return (n_ + kIntGemmPanelWidth - 1) / kIntGemmPanelWidth;
  }
  // Panel p: k_padded / 2 groups of kIntGemmPanelWidth (k, k + 1) pairs.
  const int16_t* panel(int32_t p) const {
    return data_.data() +
           static_cast<int64_t>(p) * k_padded_ * kIntGemmPanelWidth;
  }

 private:
  static int64_t PackedIndex(int32_t kk, int32_t j) {
    return (static_cast<int64_t>(kk / 2) * kIntGemmPanelWidth + j) * 2 + kk % 2;
  }
  int32_t n_ = 0, k_ = 0, k_padded_ = 0;
  std::vector<int16_t> data_;
};

// C (m x w.n(), row stride ldc) = A (m x w.k_padded(), row stride lda; the
// pad column, if any, must be zero) * W^T restricted to depth [k_begin,
// k_end); both bounds even (k_end may be k_padded). A and C must not
// overlap. Each sum wraps in int32.
void IntGemm(const int16_t* a, int64_t lda, int32_t m,
             const PackedInt16Matrix& w, int32_t k_begin, int32_t k_end,
             int32_t* c, int64_t ldc);

// Micro-kernel: rows (1..kIntGemmMaxRows) x one panel over `pairs` k pairs.
// c[i][j] = sum (accumulate: c[i][j] += sum) for j < n_valid.
inline constexpr int kIntGemmMaxRows = 4;
using IntGemmMicroKernel = void (*)(int rows, int pairs, const int16_t* a,
                                    int64_t lda, const int16_t* panel,
                                    int32_t* c, int64_t ldc, int n_valid,
                                    bool accumulate);
void IntGemmMicroKernelPortable(int rows, int pairs, const int16_t* a,
                                int64_t lda, const int16_t* panel, int32_t* c,
                                int64_t ldc, int n_valid, bool accumulate);
// Null when the CPU or the build has no AVX2 path.
IntGemmMicroKernel IntGemmMicroKernelAvx2();

}  // namespace kiln::cpu::nn

#endif  // KILN_PLUGINS_CPU_KERNELS_NN_INT_GEMM_H_
