// Google Benchmark cases for the CPU plugin's float GEMM core
// (kernels/nn/gemm.h), single-threaded:
//
//   BM_Gemm/<M>/<K>/<N>  C (M x N) = A (M x K) * W^T + bias with W packed
//                        once; the shapes of MobileNetV2's 1x1 convolutions,
//                        the transformer block's FULLY_CONNECTED nodes and a
//                        GEMV (M = 1). Counter GFLOPS (2 * M * K * N per
//                        iteration).
//   BM_GemmPortable/...  the same through the portable kernel.
//   BM_Depthwise3x3/<kernel>/<H>/<C>/<stride>
//                        A 3x3 SAME depthwise convolution of an H x H x C
//                        image (MobileNetV2's shapes): kernel 0 the AVX2
//                        row kernel, 1 the AVX2 pixel kernel, 2 the AVX2
//                        wide row kernel. Counter GMACS.
//
// Speed is checked here and by tools/bench/models_vs_litert.py, never by
// unit tests.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/nn/depthwise.h"
#include "kernels/nn/gemm.h"

namespace kiln::cpu::nn {
namespace {

struct GemmCase {
  std::vector<float> a, w, bias, c;
  PackedMatrix packed;
  GemmCase(int32_t m, int32_t k, int32_t n)
      : a(static_cast<size_t>(m) * k),
        w(static_cast<size_t>(n) * k),
        bias(static_cast<size_t>(n)),
        c(static_cast<size_t>(m) * n) {
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    for (float& v : a) v = u(rng);
    for (float& v : w) v = u(rng);
    for (float& v : bias) v = u(rng);
    packed.PackConstant(n, k, w.data(), k, 1, bias.data());
  }
};

// `portable`: GemmPortable instead of Gemm (the kernel chosen at load).
void RunGemm(benchmark::State& state, bool portable) {
  const int32_t m = static_cast<int32_t>(state.range(0));
  const int32_t k = static_cast<int32_t>(state.range(1));
  const int32_t n = static_cast<int32_t>(state.range(2));
  GemmCase g(m, k, n);
  for (auto _ : state) {
    if (portable) {
      GemmPortable(g.a.data(), k, m, g.packed, 0, g.packed.num_panels(), 0.f,
                   6.f, g.c.data(), n, false);
    } else {
      Gemm(g.a.data(), k, m, g.packed, KILN_ACTIVATION_RELU6, g.c.data(), n);
    }
    benchmark::DoNotOptimize(g.c.data());
    benchmark::ClobberMemory();
  }
  state.counters["GFLOPS"] = benchmark::Counter(
      2.0 * m * k * n * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}

void BM_Gemm(benchmark::State& state) { RunGemm(state, false); }
void BM_GemmPortable(benchmark::State& state) { RunGemm(state, true); }

void GemmShapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"M", "K", "N"});
  b->Args({12544, 27, 32});  // MobileNetV2 first 3x3 conv (im2col, K=27)
  b->Args({12544, 16, 96});  // MobileNetV2 112x112 expansion
  b->Args({3136, 144, 24});  // MobileNetV2 56x56 projection
  b->Args({3136, 96, 24});   // MobileNetV2 56x56 projection from 96
  b->Args({3136, 24, 144});  // MobileNetV2 56x56 expansion
  b->Args({784, 192, 32});   // 28x28 projection
  b->Args({196, 384, 64});   // 14x14 projection
  b->Args({49, 960, 160});   // 7x7 projection
  b->Args({49, 320, 1280});  // last 1x1
  b->Args({128, 144, 16});   // U-Net 3x3 48->16 row-tap (one filter row)
  b->Args({16384, 16, 2});   // U-Net final 1x1 16->2
  b->Args({64, 128, 128});   // transformer attention projections
  b->Args({64, 128, 512});   // transformer MLP up
  b->Args({64, 512, 128});   // transformer MLP down
  b->Args({1, 1280, 1000});  // classifier (GEMV)
}

void BM_Depthwise3x3(benchmark::State& state) {
  const bool row_kernel = state.range(0) != 1;
  const int32_t h = static_cast<int32_t>(state.range(1));
  const int32_t c = static_cast<int32_t>(state.range(2));
  const int32_t stride = static_cast<int32_t>(state.range(3));
  const DepthwiseRow3x3Fn row = state.range(0) == 2
                                    ? DepthwiseRow3x3WideAvx2Fma()
                                    : DepthwiseRow3x3Avx2Fma();
  const DepthwisePixelFn pixel = DepthwisePixelAvx2Fma();
  if (row == nullptr || pixel == nullptr) {
    state.SkipWithError("no AVX2+FMA");
    return;
  }
  const int32_t out_h = (h + stride - 1) / stride;
  const int32_t pad = std::max(0, ((out_h - 1) * stride + 3 - h) / 2);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> in(static_cast<size_t>(h) * h * c), w(9 * c), bias(c);
  std::vector<float> out(static_cast<size_t>(out_h) * out_h * c);
  for (float& v : in) v = u(rng);
  for (float& v : w) v = u(rng);
  for (float& v : bias) v = u(rng);
  for (auto _ : state) {
    for (int32_t oy = 0; oy < out_h; ++oy) {
      const int32_t y0 = oy * stride - pad;
      if (row_kernel) {
        DepthwiseRow3x3 r;
        for (int32_t fy = 0; fy < 3; ++fy) {
          const int32_t iy = y0 + fy;
          r.rows[fy] = iy < 0 || iy >= h ? nullptr : in.data() + iy * h * c;
        }
        r.weights = w.data();
        r.bias = bias.data();
        r.out = out.data() + static_cast<int64_t>(oy) * out_h * c;
        r.channels = c;
        r.in_w = h;
        r.out_w = out_h;
        r.stride_w = stride;
        r.dilation_w = 1;
        r.pad_w = pad;
        r.lo = 0.f;
        r.hi = 6.f;
        r.ox_begin = 0;
        r.ox_end = out_h;
        row(r);
        continue;
      }
      for (int32_t ox = 0; ox < out_h; ++ox) {
        const float* xs[9];
        const float* ws[9];
        int32_t taps = 0;
        for (int32_t fy = 0; fy < 3; ++fy) {
          const int32_t iy = y0 + fy;
          if (iy < 0 || iy >= h) continue;
          for (int32_t fx = 0; fx < 3; ++fx) {
            const int32_t ix = ox * stride - pad + fx;
            if (ix < 0 || ix >= h) continue;
            xs[taps] = in.data() + (static_cast<int64_t>(iy) * h + ix) * c;
            ws[taps++] = w.data() + (fy * 3 + fx) * c;
          }
        }
        pixel(out.data() + (static_cast<int64_t>(oy) * out_h + ox) * c,
              bias.data(), xs, ws, taps, c, 0.f, 6.f);
      }
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.counters["GMACS"] =
      benchmark::Counter(9.0 * out_h * out_h * c * state.iterations() / 1e9,
                         benchmark::Counter::kIsRate);
}

BENCHMARK(BM_Depthwise3x3)
    ->ArgNames({"kernel", "H", "C", "stride"})
    ->ArgsProduct({{0, 1, 2}, {112}, {32}, {1}})
    ->ArgsProduct({{0, 1, 2}, {112}, {96}, {2}})
    ->ArgsProduct({{0, 1, 2}, {56}, {144}, {1, 2}})
    ->ArgsProduct({{0, 1, 2}, {14}, {576}, {1}});
BENCHMARK(BM_Gemm)->Apply(GemmShapes);
BENCHMARK(BM_GemmPortable)->Apply(GemmShapes);

}  // namespace
}  // namespace kiln::cpu::nn

BENCHMARK_MAIN();
