// The GEMM driver and micro-kernel, templated on an instruction-set traits
// type. Included by gemm.cc (portable) and gemm_avx2.cc (inside an AVX2
// target region), each in its own anonymous namespace, so no inline function
// is shared between differently-targeted translation units.
//
// Isa must provide: type V; kLanes; kRows (micro-kernel rows); and static
// Load(const float*), Store(float*, V), LoadN / StoreN(p, [v,] n) (the
// first 0 < n < kLanes lanes), Splat(float), MulAdd(a, b, acc) =
// a * b + acc, Min(V, V), Max(V, V).
#ifndef KILN_PLUGINS_CPU_KERNELS_NN_GEMM_IMPL_H_
#define KILN_PLUGINS_CPU_KERNELS_NN_GEMM_IMPL_H_

#define KILN_GEMM_INLINE inline __attribute__((always_inline))

namespace {

constexpr int kGemmRowBlock = 72;     // rows of A per block (L2)
constexpr int kGemmDepthBlock = 256;  // k per block (a panel slice in L1)

// The sums' start of a micro-kernel: the bias (first) or C's values.
template <class Isa, int MR, int NV>
KILN_GEMM_INLINE void GemmLoadAcc(typename Isa::V (&acc)[MR][NV], bool first,
                                  const float* bias, const float* c,
                                  int64_t ldc, int n_valid) {
  if (first) {
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j) {
      const typename Isa::V b = Isa::Load(bias + j * Isa::kLanes);
#pragma GCC unroll 16
      for (int i = 0; i < MR; ++i) acc[i][j] = b;
    }
    return;
  }
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j) {
      const int cols = n_valid - j * Isa::kLanes;
      const float* p = c + i * ldc + j * Isa::kLanes;
      acc[i][j] = cols >= Isa::kLanes ? Isa::Load(p)
                  : cols > 0          ? Isa::LoadN(p, cols)
                                      : Isa::Splat(0.f);
    }
  }
}

// Clamps (last) and stores the n_valid leading columns of the sums.
template <class Isa, int MR, int NV>
KILN_GEMM_INLINE void GemmStoreAcc(typename Isa::V (&acc)[MR][NV], bool last,
                                   float lo, float hi, float* c, int64_t ldc,
                                   int n_valid) {
  if (last) {
    const typename Isa::V vlo = Isa::Splat(lo), vhi = Isa::Splat(hi);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 8
      for (int j = 0; j < NV; ++j) {
        acc[i][j] = Isa::Min(vhi, Isa::Max(vlo, acc[i][j]));
      }
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j) {
      const int cols = n_valid - j * Isa::kLanes;
      float* p = c + i * ldc + j * Isa::kLanes;
      if (cols >= Isa::kLanes) {
        Isa::Store(p, acc[i][j]);
      } else if (cols > 0) {
        Isa::StoreN(p, acc[i][j], cols);
      }
    }
  }
}

// A read in place: row i, depth k at p[i * lda + k].
struct GemmPlainA {
  const float* p;
  int64_t lda;
  GemmPlainA Rows(int64_t i) const { return {p + i * lda, lda}; }
  GemmPlainA Depth(int32_t k0) const { return {p + k0, lda}; }
  int DepthBlock() const { return kGemmDepthBlock; }
  // fn(a, lda, len, koff) for each run of depths [koff, koff + len) of
  // [0, kc) stored contiguously in each row, a at that run's row 0.
  template <class Fn>
  KILN_GEMM_INLINE void Runs(int kc, Fn&& fn) const {
    fn(p, lda, kc, 0);
  }
};

// A in segments of seg_k depths (the filter rows of a convolution's
// output row): depth k of row i at seg[k / seg_k][i * lda + k % seg_k];
// a null segment is all zeros and skipped.
struct GemmSegmentedA {
  const float* const* seg;
  int32_t seg_k;
  int32_t k_off;
  int64_t row_off;
  int64_t lda;
  GemmSegmentedA Rows(int64_t i) const {
    return {seg, seg_k, k_off, row_off + i * lda, lda};
  }
  GemmSegmentedA Depth(int32_t k0) const {
    return {seg, seg_k, k_off + k0, row_off, lda};
  }
  // Whole segments per depth block where one fits: a block's runs are
  // whole segments, none split into a short run.
  int DepthBlock() const {
    return seg_k > kGemmDepthBlock ? kGemmDepthBlock
                                   : kGemmDepthBlock / seg_k * seg_k;
  }
  template <class Fn>
  KILN_GEMM_INLINE void Runs(int kc, Fn&& fn) const {
    const int end = k_off + kc;
    for (int k = k_off; k < end;) {
      const int s = k / seg_k;
      const int e = end < (s + 1) * seg_k ? end : (s + 1) * seg_k;
      if (seg[s] != nullptr) {
        fn(seg[s] + row_off + (k - s * seg_k), lda, e - k, k - k_off);
      }
      k = e;
    }
  }
};

// acc += rows [0, MR) of a (depths [0, kc)) x the panel slice bp.
template <class Isa, int MR, int NV>
KILN_GEMM_INLINE void GemmKLoop(typename Isa::V (&acc)[MR][NV], int kc,
                                const float* a, int64_t lda, const float* bp) {
  using V = typename Isa::V;
  constexpr int NR = ::kiln::cpu::nn::kGemmPanelWidth;
  for (int k = 0; k < kc; ++k) {
    V b[NV];
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j)
      b[j] = Isa::Load(bp + k * NR + j * Isa::kLanes);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const V av = Isa::Splat(a[i * lda + k]);
#pragma GCC unroll 8
      for (int j = 0; j < NV; ++j) acc[i][j] = Isa::MulAdd(av, b[j], acc[i][j]);
    }
  }
}

// Rows [0, MR) x columns [0, NV * kLanes) of one panel (row stride NR),
// n_valid of them stored. Each output's sum runs over k in order whatever
// MR and NV are, so every tiling of the rows and panels gives the same
// values.
template <class Isa, int MR, int NV, class A>
KILN_GEMM_INLINE void GemmMicroKernel(int kc, const A& a, const float* bp,
                                      float* c, int64_t ldc, int n_valid,
                                      bool first, const float* bias, bool last,
                                      float lo, float hi) {
  constexpr int NR = ::kiln::cpu::nn::kGemmPanelWidth;
  typename Isa::V acc[MR][NV];
  GemmLoadAcc<Isa, MR, NV>(acc, first, bias, c, ldc, n_valid);
  a.Runs(
      kc, [&](const float* ap, int64_t lda, int len, int koff)
              __attribute__((always_inline)) {
                GemmKLoop<Isa, MR, NV>(acc, len, ap, lda,
                                       bp + static_cast<int64_t>(koff) * NR);
              });
  GemmStoreAcc<Isa, MR, NV>(acc, last, lo, hi, c, ldc, n_valid);
}

// The last `rest` rows (1 <= rest <= R) in one micro-kernel of exactly
// that height: a narrow kernel's few sums would wait on the FMA latency.
template <class Isa, int R, int NV, class A>
KILN_GEMM_INLINE void GemmRowsTail(int rest, int kc, const A& a,
                                   const float* bp, float* c, int64_t ldc,
                                   int n_valid, bool first, const float* bias,
                                   bool last, float lo, float hi) {
  if (rest == R) {
    GemmMicroKernel<Isa, R, NV>(kc, a, bp, c, ldc, n_valid, first, bias, last,
                                lo, hi);
    return;
  }
  if constexpr (R > 1) {
    GemmRowsTail<Isa, R - 1, NV>(rest, kc, a, bp, c, ldc, n_valid, first, bias,
                                 last, lo, hi);
  }
}

// The packed weights the driver reads next (the next panel slice), to be
// prefetched in pieces between the micro-kernels of the current one: with
// few rows a slice is read by few micro-kernels, too few for the hardware
// prefetcher to hide a weight stream from memory.
struct GemmPrefetch {
  const float* p;  // null: nothing
  int lines;       // 64-byte lines from p
};

template <class Isa, int MR, int NV, class A>
KILN_GEMM_INLINE void GemmRows(int rows, int kc, const A& a, const float* bp,
                               float* c, int64_t ldc, int n_valid, bool first,
                               const float* bias, bool last, float lo, float hi,
                               GemmPrefetch pf) {
  // A short tail (at most half a kernel) shares the last full kernel's
  // rows: two kernels of about equal height keep more sums in flight than
  // a full one and a narrow one.
  const int rest = rows % MR;
  const int full_end =
      rows - rest - (rest > 0 && 2 * rest <= MR && rows > MR ? MR : 0);
  // Only when full micro-kernels re-read the slice: one short kernel (a
  // GEMV's single row) streams it once, which the hardware prefetcher
  // follows, and a burst of prefetches ahead of it only slows it.
  if (full_end == 0) pf.p = nullptr;
  const int calls = full_end / MR + 1;
  const int per_call = pf.p != nullptr ? (pf.lines + calls - 1) / calls : 0;
  int line = 0;
  int i = 0;
  for (; i < full_end; i += MR) {
    GemmMicroKernel<Isa, MR, NV>(kc, a.Rows(i), bp, c + i * ldc, ldc, n_valid,
                                 first, bias, last, lo, hi);
    const int end = line + per_call < pf.lines ? line + per_call : pf.lines;
    for (; line < end; ++line) __builtin_prefetch(pf.p + line * 16, 0, 3);
  }
  for (; line < pf.lines && pf.p != nullptr; ++line) {
    __builtin_prefetch(pf.p + line * 16, 0, 3);
  }
  if constexpr (MR > 1) {
    int left = rows - i;  // < 2 * MR
    if (left > MR) {
      const int h = (left + 1) / 2;
      GemmRowsTail<Isa, MR, NV>(h, kc, a.Rows(i), bp, c + i * ldc, ldc, n_valid,
                                first, bias, last, lo, hi);
      i += h;
      left -= h;
    }
    if (left > 0) {
      GemmRowsTail<Isa, MR, NV>(left, kc, a.Rows(i), bp, c + i * ldc, ldc,
                                n_valid, first, bias, last, lo, hi);
    }
  }
}

// One panel's rows: a panel with at most half its columns valid (the last
// panel of a ragged N, or N <= 8) computes only that half, in twice the
// rows (the same number of accumulators).
template <class Isa, class A>
KILN_GEMM_INLINE void GemmPanelRows(int rows, int kc, const A& a,
                                    const float* bp, float* c, int64_t ldc,
                                    int n_valid, bool first, const float* bias,
                                    bool last, float lo, float hi,
                                    GemmPrefetch pf = {nullptr, 0}) {
  constexpr int NV = ::kiln::cpu::nn::kGemmPanelWidth / Isa::kLanes;
  if constexpr (NV % 2 == 0) {
    if (2 * n_valid <= ::kiln::cpu::nn::kGemmPanelWidth) {
      GemmRows<Isa, 2 * Isa::kRows, NV / 2>(rows, kc, a, bp, c, ldc, n_valid,
                                            first, bias, last, lo, hi, pf);
      return;
    }
  }
  GemmRows<Isa, Isa::kRows, NV>(rows, kc, a, bp, c, ldc, n_valid, first, bias,
                                last, lo, hi, pf);
}

template <class Isa, class A>
KILN_GEMM_INLINE void GemmDriver(const A& a, int32_t m,
                                 const ::kiln::cpu::nn::PackedMatrix& w,
                                 int32_t panel_begin, int32_t panel_end,
                                 float lo, float hi, float* c, int64_t ldc,
                                 bool accumulate) {
  constexpr int NR = ::kiln::cpu::nn::kGemmPanelWidth;
  const int32_t n = w.n(), k = w.k();
  for (int32_t m0 = 0; m0 < m; m0 += kGemmRowBlock) {
    const int rows = m - m0 < kGemmRowBlock ? m - m0 : kGemmRowBlock;
    if (k == 0) {
      for (int32_t p = panel_begin; p < panel_end; ++p) {
        const int n_valid = n - p * NR < NR ? n - p * NR : NR;
        GemmPanelRows<Isa>(rows, 0, a, w.panel(p), c + m0 * ldc + p * NR, ldc,
                           n_valid, !accumulate, w.bias() + p * NR, true, lo,
                           hi);
      }
      continue;
    }
    const int block = a.DepthBlock();
    for (int32_t k0 = 0; k0 < k; k0 += block) {
      const int kc = k - k0 < block ? k - k0 : block;
      const bool first = k0 == 0 && !accumulate, last = k0 + kc == k;
      for (int32_t p = panel_begin; p < panel_end; ++p) {
        const int n_valid = n - p * NR < NR ? n - p * NR : NR;
        // The slice after this one: the next panel's, or the next depth
        // block's first panel's.
        GemmPrefetch pf{nullptr, 0};
        if (p + 1 < panel_end) {
          pf = {w.panel(p + 1) + static_cast<int64_t>(k0) * NR, kc};
        } else if (k0 + kc < k) {
          const int next = k - k0 - kc < block ? k - k0 - kc : block;
          pf = {w.panel(panel_begin) + static_cast<int64_t>(k0 + kc) * NR,
                next};
        }
        GemmPanelRows<Isa>(rows, kc, a.Rows(m0).Depth(k0),
                           w.panel(p) + static_cast<int64_t>(k0) * NR,
                           c + m0 * ldc + p * NR, ldc, n_valid, first,
                           w.bias() + p * NR, last, lo, hi, pf);
      }
    }
  }
}

}  // namespace

#endif  // KILN_PLUGINS_CPU_KERNELS_NN_GEMM_IMPL_H_
