// The GEMM driver and micro-kernel, templated on an instruction-set traits
// type. Included by gemm.cc (portable) and gemm_avx2.cc (inside an AVX2
// target region), each in its own anonymous namespace, so no inline function
// is shared between differently-targeted translation units.
//
// Isa must provide: type V; kLanes; kRows (micro-kernel rows); and static
// Load(const float*), Store(float*, V), Splat(float), Zero(),
// MulAdd(a, b, acc) = a * b + acc, Min(V, V), Max(V, V).
#ifndef KILN_PLUGINS_CPU_KERNELS_NN_GEMM_IMPL_H_
#define KILN_PLUGINS_CPU_KERNELS_NN_GEMM_IMPL_H_

#define KILN_GEMM_INLINE inline __attribute__((always_inline))

namespace {

constexpr int kGemmRowBlock = 72;     // rows of A per block (L2)
constexpr int kGemmDepthBlock = 256;  // k per block (a panel slice in L1)

template <class Isa, int MR>
KILN_GEMM_INLINE void GemmMicroKernel(int kc, const float* a, int64_t lda,
                                      const float* bp, float* c, int64_t ldc,
                                      int n_valid, bool first,
                                      const float* bias, bool last, float lo,
                                      float hi) {
  using V = typename Isa::V;
  constexpr int NR = ::kiln::cpu::nn::kGemmPanelWidth;
  constexpr int NV = NR / Isa::kLanes;
  V acc[MR][NV];
  if (first) {
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j) {
      const V b = Isa::Load(bias + j * Isa::kLanes);
#pragma GCC unroll 8
      for (int i = 0; i < MR; ++i) acc[i][j] = b;
    }
  } else if (n_valid == NR) {
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 8
      for (int j = 0; j < NV; ++j) {
        acc[i][j] = Isa::Load(c + i * ldc + j * Isa::kLanes);
      }
    }
  } else {
    float tmp[NR] = {};
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      for (int j = 0; j < n_valid; ++j) tmp[j] = c[i * ldc + j];
#pragma GCC unroll 8
      for (int j = 0; j < NV; ++j) acc[i][j] = Isa::Load(tmp + j * Isa::kLanes);
    }
  }
  for (int k = 0; k < kc; ++k) {
    V b[NV];
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j)
      b[j] = Isa::Load(bp + k * NR + j * Isa::kLanes);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const V av = Isa::Splat(a[i * lda + k]);
#pragma GCC unroll 8
      for (int j = 0; j < NV; ++j) acc[i][j] = Isa::MulAdd(av, b[j], acc[i][j]);
    }
  }
  if (last) {
    const V vlo = Isa::Splat(lo), vhi = Isa::Splat(hi);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 8
      for (int j = 0; j < NV; ++j) {
        acc[i][j] = Isa::Min(vhi, Isa::Max(vlo, acc[i][j]));
      }
    }
  }
  if (n_valid == NR) {
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 8
      for (int j = 0; j < NV; ++j) {
        Isa::Store(c + i * ldc + j * Isa::kLanes, acc[i][j]);
      }
    }
  } else {
    float tmp[NR];
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 8
      for (int j = 0; j < NV; ++j) Isa::Store(tmp + j * Isa::kLanes, acc[i][j]);
      for (int j = 0; j < n_valid; ++j) c[i * ldc + j] = tmp[j];
    }
  }
}

template <class Isa, int MR>
KILN_GEMM_INLINE void GemmRows(int rows, int kc, const float* a, int64_t lda,
                               const float* bp, float* c, int64_t ldc,
                               int n_valid, bool first, const float* bias,
                               bool last, float lo, float hi) {
  int i = 0;
  for (; i + MR <= rows; i += MR) {
    GemmMicroKernel<Isa, MR>(kc, a + i * lda, lda, bp, c + i * ldc, ldc,
                             n_valid, first, bias, last, lo, hi);
  }
  if constexpr (MR > 1) {
    const int rest = rows - i;
    if (rest > 0) {
      if constexpr (MR > 4) {
        if (rest >= 4) {
          GemmMicroKernel<Isa, 4>(kc, a + i * lda, lda, bp, c + i * ldc, ldc,
                                  n_valid, first, bias, last, lo, hi);
          i += 4;
        }
      }
      if constexpr (MR > 2) {
        if (rows - i >= 2) {
          GemmMicroKernel<Isa, 2>(kc, a + i * lda, lda, bp, c + i * ldc, ldc,
                                  n_valid, first, bias, last, lo, hi);
          i += 2;
        }
      }
      if (rows - i >= 1) {
        GemmMicroKernel<Isa, 1>(kc, a + i * lda, lda, bp, c + i * ldc, ldc,
                                n_valid, first, bias, last, lo, hi);
        i += 1;
      }
    }
  }
}

template <class Isa>
KILN_GEMM_INLINE void GemmDriver(const float* a, int64_t lda, int32_t m,
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
        GemmRows<Isa, Isa::kRows>(rows, 0, a, lda, w.panel(p),
                                  c + m0 * ldc + p * NR, ldc, n_valid,
                                  !accumulate, w.bias() + p * NR, true, lo, hi);
      }
      continue;
    }
    for (int32_t k0 = 0; k0 < k; k0 += kGemmDepthBlock) {
      const int kc = k - k0 < kGemmDepthBlock ? k - k0 : kGemmDepthBlock;
      const bool first = k0 == 0 && !accumulate, last = k0 + kc == k;
      for (int32_t p = panel_begin; p < panel_end; ++p) {
        const int n_valid = n - p * NR < NR ? n - p * NR : NR;
        GemmRows<Isa, Isa::kRows>(rows, kc, a + m0 * lda + k0, lda,
                                  w.panel(p) + static_cast<int64_t>(k0) * NR,
                                  c + m0 * ldc + p * NR, ldc, n_valid, first,
                                  w.bias() + p * NR, last, lo, hi);
      }
    }
  }
}

}  // namespace

#endif  // KILN_PLUGINS_CPU_KERNELS_NN_GEMM_IMPL_H_
