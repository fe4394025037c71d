// Integer DEPTHWISE_CONV_2D (declared in conv_quantized.h).
#include <algorithm>

#include "kernels/nn/conv_quantized.h"
#include "kernels/nn/int_vec.h"
#include "kernels/nn/parallel.h"
#include "kernels/nn/requantize.h"

namespace kiln::cpu::nn {
namespace {

constexpr const char* kOp = "DEPTHWISE_CONV_2D";

void PackFilter(QuantizedDepthwiseState& s, const Tensor& filter) {
  const int64_t n = int64_t{s.g.taps()} * s.g.out_c;
  if (filter.type() == KILN_TYPE_UINT8) {
    ToInt16WithOffset(filter.data<uint8_t>(), n, s.q.filter_offset,
                      s.filter.data());
  } else {
    ToInt16WithOffset(filter.data<int8_t>(), n, s.q.filter_offset,
                      s.filter.data());
  }
}

}  // namespace

template <typename Acc>
void DepthwiseAccumulatePixel(const ConvGeometry& g, const int16_t* filter,
                              const int16_t* image, int32_t oy, int32_t ox,
                              Acc* acc) {
  const int32_t c = g.in_c, m = g.depth_multiplier;
  const int32_t y0 = oy * g.window.stride_h - g.pad_h;
  const int32_t x0 = ox * g.window.stride_w - g.pad_w;
  ForEachDepthwiseTap(
      g, image, filter, y0, x0, [&](const int16_t* x, const int16_t* w) {
        if constexpr (sizeof(Acc) == 4) {
          if (m == 1) {
            MulAccInt16(acc, x, w, c);
            return;
          }
        }
        for (int32_t ic = 0; ic < c; ++ic) {
          const int32_t v = x[ic];
          for (int32_t j = 0; j < m; ++j) {
            acc[ic * m + j] = static_cast<Acc>(
                acc[ic * m + j] + static_cast<Acc>(v * w[ic * m + j]));
          }
        }
      });
}

template void DepthwiseAccumulatePixel<int32_t>(const ConvGeometry&,
                                                const int16_t*, const int16_t*,
                                                int32_t, int32_t, int32_t*);
template void DepthwiseAccumulatePixel<int64_t>(const ConvGeometry&,
                                                const int16_t*, const int16_t*,
                                                int32_t, int32_t, int64_t*);

namespace {

// Output rows of each image on the host's pool, one accumulator row per
// thread; a pixel's sums do not depend on the thread that computes them.
template <typename T, typename Acc>
void DepthwiseRun(KernelContext& k, QuantizedDepthwiseState& s, const T* in,
                  const BiasView& bias, T* out) {
  const ConvGeometry& g = s.g;
  std::vector<Acc>* accs = nullptr;
  if constexpr (sizeof(Acc) == 4) {
    accs = &s.acc;
  } else {
    accs = &s.acc64;
  }
  EnsureThreadScratch(k, g.out_c, &s.threads, accs);
  const int64_t row_macs = int64_t{g.out_w} * g.out_c * g.taps();
  for (int32_t b = 0; b < g.batches; ++b) {
    ToInt16WithOffset(in + b * g.in_image(), g.in_image(), s.q.input_offset,
                      s.row.data());
    ParallelRows(
        k, g.out_h, row_macs, [&](int64_t begin, int64_t end, int32_t thread) {
          Acc* acc = accs->data() + int64_t{thread} * g.out_c;
          for (int32_t oy = static_cast<int32_t>(begin); oy < end; ++oy) {
            for (int32_t ox = 0; ox < g.out_w; ++ox) {
              std::fill(acc, acc + g.out_c, Acc{0});
              DepthwiseAccumulatePixel(g, s.filter.data(), s.row.data(), oy, ox,
                                       acc);
              T* dst =
                  out +
                  ((static_cast<int64_t>(b) * g.out_h + oy) * g.out_w + ox) *
                      g.out_c;
              if constexpr (sizeof(T) == 1 && sizeof(Acc) == 4) {
                RequantizeRows(acc, 1, g.out_c, bias.i32, s.q, dst, g.out_c);
              } else {
                for (int32_t c = 0; c < g.out_c; ++c) {
                  dst[c] = static_cast<T>(RequantizeChannel(
                      static_cast<int64_t>(acc[c]) + bias.at(c), c, s.q));
                }
              }
            }
          }
        });
  }
}

}  // namespace

KilnStatus QuantizedDepthwisePrepare(KernelContext& k, IntScheme scheme,
                                     QuantizedDepthwiseState& s) {
  const Tensor input = k.input(0), filter = k.input(1), out = k.output(0);
  KILN_SDK_RETURN_IF_ERROR(ReadDepthwiseGeometry(k, kOp, input, filter, &s.g));
  // TFLite's per-channel depthwise kernel ignores an int8 filter zero
  // point (true); CONV_2D refuses one.
  KILN_SDK_RETURN_IF_ERROR(PrepareChannelRequant(
      k, ConvolutionRules(kOp, scheme, s.g.out_c, 3, s.g.activation, true),
      scheme, kConvOperands, &s.q));
  s.filter.assign(static_cast<size_t>(s.g.taps()) * s.g.out_c, 0);
  s.pack_in_invoke = !(filter.is_constant() && filter.data<void>() != nullptr);
  if (!s.pack_in_invoke) PackFilter(s, filter);
  s.row.assign(static_cast<size_t>(s.g.in_image()), 0);
  // int16x8 products reach 2^15 * 2^7: sums of up to 511 taps fit int32.
  s.acc_fits_int32 = scheme != IntScheme::kInt16 || s.g.taps() < 512;
  s.acc.assign(static_cast<size_t>(s.g.out_c), 0);
  s.acc64.assign(s.acc_fits_int32 ? 0 : static_cast<size_t>(s.g.out_c), 0);
  return k.Resize(out, {s.g.batches, s.g.out_h, s.g.out_w, s.g.out_c});
}

KilnStatus QuantizedDepthwiseInvoke(KernelContext& k,
                                    QuantizedDepthwiseState& s) {
  ConvLikeBuffers b;
  KILN_SDK_RETURN_IF_ERROR(ReadConvLikeBuffers(k, kConvOperands, &b));
  if (s.pack_in_invoke) PackFilter(s, b.filter);
  ForScheme(s.q.scheme, [&](auto tag) {
    using T = decltype(tag);
    if (s.acc_fits_int32) {
      DepthwiseRun<T, int32_t>(k, s, b.input.data<T>(), b.bias,
                               b.output.data<T>());
    } else {
      DepthwiseRun<T, int64_t>(k, s, b.input.data<T>(), b.bias,
                               b.output.data<T>());
    }
  });
  return KILN_STATUS_OK;
}

}  // namespace kiln::cpu::nn
