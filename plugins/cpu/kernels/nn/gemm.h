// Single-threaded float GEMM for the conv / fully-connected kernels:
//   C[m][n] = act(bias[n] + sum_k A[m][k] * W[n][k])
// W (N x K, the TFLite filter layout: OHWI conv filters and FC weights are
// already N x K row-major) is packed once into 16-column panels; A is read in
// place with a row stride, so im2col rows or NHWC activations work directly.
#ifndef KILN_PLUGINS_CPU_KERNELS_NN_GEMM_H_
#define KILN_PLUGINS_CPU_KERNELS_NN_GEMM_H_

#include <cstdint>
#include <vector>

#include "kernels/nn/parallel.h"
#include "kiln/sdk/plugin.h"

namespace kiln::cpu::nn {

inline constexpr int kGemmPanelWidth = 16;  // columns of W per packed panel
// Rows of one ParallelGemm tile.
inline constexpr int32_t kParallelGemmRows = 48;

// A weight matrix packed for Gemm. Resize allocates; Pack does not, so
// kernels Resize in prepare and may Pack in invoke (non-constant weights).
class PackedMatrix {
 public:
  // Allocates storage for an n x k matrix (zeroed). n, k >= 0.
  void Resize(int32_t n, int32_t k);
  // Packs W where element (n, k) is w[n * stride_n + k * stride_k], and the
  // optional bias (n values; null = zeros). Requires a prior Resize.
  void Pack(const float* w, int64_t stride_n, int64_t stride_k,
            const float* bias);
  // Resize(n, k) and Pack of constant weights and bias (tensors whose values
  // never change while their pointers live), skipped when this matrix
  // already holds that packing: a node prepared again (dynamic shapes
  // elsewhere in the graph) does not pack its weights again.
  void PackConstant(int32_t n, int32_t k, const float* w, int64_t stride_n,
                    int64_t stride_k, const float* bias);

  int32_t n() const { return n_; }
  int32_t k() const { return k_; }
  int32_t num_panels() const {
    return (n_ + kGemmPanelWidth - 1) / kGemmPanelWidth;
  }
  // Panel p: k rows of kGemmPanelWidth floats (columns past n are zero).
  const float* panel(int32_t p) const {
    return data_.data() + static_cast<int64_t>(p) * k_ * kGemmPanelWidth;
  }
  // Bias padded to num_panels() * kGemmPanelWidth.
  const float* bias() const { return bias_.data(); }

 private:
  int32_t n_ = 0, k_ = 0;
  // What PackConstant packed last (null after Resize or Pack).
  const float* constant_w_ = nullptr;
  const float* constant_bias_ = nullptr;
  int64_t constant_stride_n_ = 0, constant_stride_k_ = 0;
  std::vector<float> data_;
  std::vector<float> bias_;
};

// C (m x w.n(), row stride ldc) = act(A (m x w.k(), row stride lda) * W^T +
// bias). `act` is a KILN_ACTIVATION_* value. A and C must not overlap.
void Gemm(const float* a, int64_t lda, int32_t m, const PackedMatrix& w,
          int64_t act, float* c, int64_t ldc);
// The same, restricted to output columns of panels [panel_begin, panel_end)
// (columns panel_begin * kGemmPanelWidth up to min(n, panel_end *
// kGemmPanelWidth)); c still points at column 0. Every output value is
// computed the same way whatever the rows and panels of the call, so a
// GEMM split into such tiles (ParallelGemm) is bit-identical to one call.
void GemmTile(const float* a, int64_t lda, int32_t m, const PackedMatrix& w,
              int32_t panel_begin, int32_t panel_end, int64_t act, float* c,
              int64_t ldc);

// C += A * W^T (no bias), then act: Gemm whose sums start from C's values,
// for a product split over several packed matrices (the filter rows of
// a convolution's direct path).
void GemmAccumulate(const float* a, int64_t lda, int32_t m,
                    const PackedMatrix& w, int64_t act, float* c, int64_t ldc);

// Gemm on the interpreter's thread pool (kiln.parallel_for/1 through the
// SDK; serial on hosts without it or for small products), split into tiles
// of rows x panels: bit-identical to Gemm for any thread count. Call from a
// kernel callback with its context.
void ParallelGemm(sdk::KernelContext& k, const float* a, int64_t lda, int32_t m,
                  const PackedMatrix& w, int64_t act, float* c, int64_t ldc);

// A in segments, read in place: row i, depth k of A is
// rows[k / depth][i * lda + k % depth]. A null segment reads as zeros and
// is skipped. A convolution's output row with every tap inside the image
// is such an A (one segment per filter row, lda = stride_w * in_c), so no
// im2col copy is needed.
struct GemmSegments {
  const float* const* rows;  // the segments' row 0 (w.k() / depth of them)
  int32_t depth;             // depths per segment (> 0)
  int64_t lda;               // row stride, the same in every segment
};

// Gemm of a segmented A: C (m x w.n()) = act(A * W^T + bias), each sum one
// FMA chain over k in order (a null segment's depths left out).
void GemmSegmented(const GemmSegments& a, int32_t m, const PackedMatrix& w,
                   int64_t act, float* c, int64_t ldc);

// Implementations selected by Gemm (exposed for tests): portable vector code,
// and AVX2+FMA on x86-64 CPUs that have it.
// With `accumulate`, C's values replace the bias as the sums' start.
using GemmClampFn = void (*)(const float* a, int64_t lda, int32_t m,
                             const PackedMatrix& w, int32_t panel_begin,
                             int32_t panel_end, float lo, float hi, float* c,
                             int64_t ldc, bool accumulate);
void GemmPortable(const float* a, int64_t lda, int32_t m, const PackedMatrix& w,
                  int32_t panel_begin, int32_t panel_end, float lo, float hi,
                  float* c, int64_t ldc, bool accumulate);
// Null when the CPU or the build has no AVX2+FMA path.
GemmClampFn GemmAvx2Fma();
using GemmSegmentedClampFn = void (*)(const GemmSegments& a, int32_t m,
                                      const PackedMatrix& w, float lo, float hi,
                                      float* c, int64_t ldc);
void GemmSegmentedPortable(const GemmSegments& a, int32_t m,
                           const PackedMatrix& w, float lo, float hi, float* c,
                           int64_t ldc);
GemmSegmentedClampFn GemmSegmentedAvx2Fma();

}  // namespace kiln::cpu::nn

#endif  // KILN_PLUGINS_CPU_KERNELS_NN_GEMM_H_
