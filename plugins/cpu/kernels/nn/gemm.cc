#include "kernels/nn/gemm.h"

#include <algorithm>
#include <cstring>

#include "kernels/nn/nn_common.h"

namespace kiln::cpu::nn {
namespace {

// Portable 4-lane vectors (SSE2 on x86-64, NEON on arm64) through the GCC /
// Clang vector extension.
struct PortableIsa {
  typedef float V __attribute__((vector_size(16)));
  static constexpr int kLanes = 4;
  static constexpr int kRows = 3;  // 3 x 4 vectors = 12 accumulators
  static V Load(const float* p) {
    V v;
    std::memcpy(&v, p, sizeof(v));
    return v;
  }
  static void Store(float* p, V v) { std::memcpy(p, &v, sizeof(v)); }
  // The first n (0 < n < kLanes) lanes; the others read as zero. Fixed trip
  // counts: a loop of n copies would compile to a memcpy call.
  static V LoadN(const float* p, int n) {
    float t[kLanes] = {};
#pragma GCC unroll 4
    for (int j = 0; j < kLanes; ++j) t[j] = j < n ? p[j] : 0.f;
    return Load(t);
  }
  static void StoreN(float* p, V v, int n) {
    float t[kLanes];
    Store(t, v);
#pragma GCC unroll 4
    for (int j = 0; j < kLanes; ++j) {
      if (j < n) p[j] = t[j];
    }
  }
  static V Splat(float x) { return V{x, x, x, x}; }
  static V MulAdd(V a, V b, V acc) { return a * b + acc; }
  static V Min(V a, V b) { return a < b ? a : b; }
  static V Max(V a, V b) { return a > b ? a : b; }
};

}  // namespace
}  // namespace kiln::cpu::nn

#include "kernels/nn/gemm_impl.h"

namespace kiln::cpu::nn {

void PackedMatrix::Resize(int32_t n, int32_t k) {
  constant_w_ = nullptr;
  n_ = n;
  k_ = k;
  data_.assign(static_cast<size_t>(num_panels()) * k * kGemmPanelWidth, 0.f);
  bias_.assign(static_cast<size_t>(num_panels()) * kGemmPanelWidth, 0.f);
}

void PackedMatrix::Pack(const float* w, int64_t stride_n, int64_t stride_k,
                        const float* bias) {
  constant_w_ = nullptr;
  constexpr int NR = kGemmPanelWidth;
  for (int32_t p = 0; p < num_panels(); ++p) {
    float* dst = data_.data() + static_cast<int64_t>(p) * k_ * NR;
    const int32_t n0 = p * NR;
    const int32_t valid = std::min(NR, n_ - n0);
    if (stride_n == 1) {
      // [k][n] (a BATCH_MATMUL rhs): each panel row is a contiguous run.
      for (int32_t kk = 0; kk < k_; ++kk) {
        float* row = dst + static_cast<int64_t>(kk) * NR;
        std::memcpy(row, w + n0 + kk * stride_k,
                    static_cast<size_t>(valid) * sizeof(float));
        std::fill(row + valid, row + NR, 0.f);
      }
      continue;
    }
    if (stride_k == 1) {
      // [n][k] (weights, an adj_y rhs): each source row read once, in order.
      for (int32_t j = 0; j < NR; ++j) {
        float* column = dst + j;
        if (j >= valid) {
          for (int32_t kk = 0; kk < k_; ++kk) column[kk * NR] = 0.f;
          continue;
        }
        const float* src = w + (n0 + j) * stride_n;
        for (int32_t kk = 0; kk < k_; ++kk) column[kk * NR] = src[kk];
      }
      continue;
    }
    for (int32_t kk = 0; kk < k_; ++kk) {
      float* row = dst + static_cast<int64_t>(kk) * NR;
      for (int32_t j = 0; j < valid; ++j) {
        row[j] = w[(n0 + j) * stride_n + kk * stride_k];
      }
      for (int32_t j = valid; j < NR; ++j) row[j] = 0.f;
    }
  }
  std::fill(bias_.begin(), bias_.end(), 0.f);
  if (bias != nullptr) std::copy(bias, bias + n_, bias_.begin());
}

void PackedMatrix::PackConstant(int32_t n, int32_t k, const float* w,
                                int64_t stride_n, int64_t stride_k,
                                const float* bias) {
  if (constant_w_ != nullptr && constant_w_ == w && constant_bias_ == bias &&
      constant_stride_n_ == stride_n && constant_stride_k_ == stride_k &&
      n_ == n && k_ == k) {
    return;
  }
  Resize(n, k);
  Pack(w, stride_n, stride_k, bias);
  constant_w_ = w;
  constant_bias_ = bias;
  constant_stride_n_ = stride_n;
  constant_stride_k_ = stride_k;
}

void GemmPortable(const float* a, int64_t lda, int32_t m, const PackedMatrix& w,
                  int32_t panel_begin, int32_t panel_end, float lo, float hi,
                  float* c, int64_t ldc, bool accumulate) {
  GemmDriver<PortableIsa>(GemmPlainA{a, lda}, m, w, panel_begin, panel_end, lo,
                          hi, c, ldc, accumulate);
}

void GemmSegmentedPortable(const GemmSegments& a, int32_t m,
                           const PackedMatrix& w, float lo, float hi, float* c,
                           int64_t ldc) {
  GemmDriver<PortableIsa>(GemmSegmentedA{a.rows, a.depth, 0, 0, a.lda}, m, w, 0,
                          w.num_panels(), lo, hi, c, ldc, false);
}

namespace {

// The activations that are no clamp (TANH, SIGN_BIT), after the GEMM.
void ActivateColumns(int64_t act, int32_t m, const PackedMatrix& w,
                     int32_t panel_begin, int32_t panel_end, float* c,
                     int64_t ldc) {
  const int32_t c0 = panel_begin * kGemmPanelWidth;
  const int32_t c1 = std::min(w.n(), panel_end * kGemmPanelWidth);
  for (int32_t i = 0; i < m && c1 > c0; ++i) {
    ApplyActivationInPlace(act, c + i * ldc + c0, c1 - c0);
  }
}

void GemmTileImpl(const float* a, int64_t lda, int32_t m, const PackedMatrix& w,
                  int32_t panel_begin, int32_t panel_end, int64_t act, float* c,
                  int64_t ldc, bool accumulate) {
  static const GemmClampFn kFastest = [] {
    GemmClampFn f = GemmAvx2Fma();
    return f != nullptr ? f : &GemmPortable;
  }();
  float lo, hi;
  const bool clamp = ActivationClamp(act, &lo, &hi);
  kFastest(a, lda, m, w, panel_begin, panel_end, lo, hi, c, ldc, accumulate);
  if (!clamp) ActivateColumns(act, m, w, panel_begin, panel_end, c, ldc);
}

}  // namespace

void GemmSegmented(const GemmSegments& a, int32_t m, const PackedMatrix& w,
                   int64_t act, float* c, int64_t ldc) {
  static const GemmSegmentedClampFn kFastest = [] {
    GemmSegmentedClampFn f = GemmSegmentedAvx2Fma();
    return f != nullptr ? f : &GemmSegmentedPortable;
  }();
  float lo, hi;
  const bool clamp = ActivationClamp(act, &lo, &hi);
  kFastest(a, m, w, lo, hi, c, ldc);
  if (!clamp) ActivateColumns(act, m, w, 0, w.num_panels(), c, ldc);
}

void GemmTile(const float* a, int64_t lda, int32_t m, const PackedMatrix& w,
              int32_t panel_begin, int32_t panel_end, int64_t act, float* c,
              int64_t ldc) {
  GemmTileImpl(a, lda, m, w, panel_begin, panel_end, act, c, ldc, false);
}

void GemmAccumulate(const float* a, int64_t lda, int32_t m,
                    const PackedMatrix& w, int64_t act, float* c, int64_t ldc) {
  GemmTileImpl(a, lda, m, w, 0, w.num_panels(), act, c, ldc, true);
}

void Gemm(const float* a, int64_t lda, int32_t m, const PackedMatrix& w,
          int64_t act, float* c, int64_t ldc) {
  GemmTile(a, lda, m, w, 0, w.num_panels(), act, c, ldc);
}

void ParallelGemm(sdk::KernelContext& k, const float* a, int64_t lda, int32_t m,
                  const PackedMatrix& w, int64_t act, float* c, int64_t ldc) {
  const int32_t panels = w.num_panels();
  const int64_t depth = std::max<int32_t>(1, w.k());
  const int64_t macs = int64_t{m} * panels * kGemmPanelWidth * depth;
  if (m <= 0 || panels == 0 || macs < kMinParallelMacs ||
      sdk::ParallelThreads(k.host(), k.raw_context()) == 1) {
    Gemm(a, lda, m, w, act, c, ldc);
    return;
  }
  // Tiles of up to kParallelGemmRows rows x one panel, row-block major; a
  // range of tiles runs as few GemmTile calls as its row blocks. The row
  // blocks are of about equal height (49 rows: 24 + 25, not 48 + 1, whose
  // one-row tiles would each cost nearly as much as a full one). Up to
  // two blocks' rows with enough panels make one row block: the threads
  // split the panels, so each packed weight is read by one thread once
  // (with few rows the weights, not the rows, are the traffic).
  const int64_t threads = sdk::ParallelThreads(k.host(), k.raw_context());
  const int64_t row_blocks =
      m <= 2 * kParallelGemmRows && panels >= 2 * threads
          ? 1
          : (m + kParallelGemmRows - 1) / kParallelGemmRows;
  const int32_t block = static_cast<int32_t>((m + row_blocks - 1) / row_blocks);
  const int64_t tile_macs = int64_t{block} * kGemmPanelWidth * depth;
  // One contiguous range of tiles per thread when the GEMM is small (a
  // thread then reuses its rows of `a` across all its panels); at least
  // kMinParallelMacs / 4 multiply-adds a range otherwise.
  const int64_t tiles = row_blocks * panels;
  const int64_t per_thread = (tiles + threads - 1) / threads;
  const int64_t min_tiles =
      std::max<int64_t>({1, kMinParallelMacs / 4 / tile_macs,
                         macs < kMinParallelMacs * 16 ? per_thread : 1});
  sdk::ParallelFor(k.host(), k.raw_context(), tiles, min_tiles,
                   [&](int64_t begin, int64_t end, int32_t) {
                     for (int64_t t = begin; t < end;) {
                       const int32_t r = static_cast<int32_t>(t / panels);
                       const int32_t p0 = static_cast<int32_t>(t % panels);
                       const int32_t p1 = static_cast<int32_t>(
                           std::min<int64_t>(panels, p0 + (end - t)));
                       const int32_t row0 = r * block;
                       const int32_t rows = std::min(block, m - row0);
                       GemmTile(a + row0 * lda, lda, rows, w, p0, p1, act,
                                c + row0 * ldc, ldc);
                       t += p1 - p0;
                     }
                   });
}

}  // namespace kiln::cpu::nn
