// Integer TRANSPOSE_CONV (declared in conv_quantized.h).
#include <algorithm>

#include "kernels/nn/conv_quantized.h"

namespace kiln::cpu::nn {
namespace {

constexpr const char* kOp = "TRANSPOSE_CONV";
constexpr int64_t kScratchValues = 64 * 1024;
// Depth per int32 partial sum of the int16x8 path (as RequantizedGemm).
constexpr int32_t kWideDepthBlock = 128;

// Packs the OHWI filter as rows [fy][fx][oc] of in_c values.
template <typename T>
void PackFilterAs(QuantizedTransposeConvState& s, const T* filter) {
  const ConvGeometry& g = s.g;
  const int32_t taps = g.taps();
  std::vector<T> reordered(static_cast<size_t>(taps) * g.out_c * g.in_c);
  for (int32_t oc = 0; oc < g.out_c; ++oc) {
    for (int32_t t = 0; t < taps; ++t) {
      const T* src = filter + (static_cast<int64_t>(oc) * taps + t) * g.in_c;
      std::copy(
          src, src + g.in_c,
          reordered.data() + (static_cast<int64_t>(t) * g.out_c + oc) * g.in_c);
    }
  }
  s.weights.Pack(reordered.data(), g.in_c, 1, s.q.filter_offset);
}

void PackFilter(QuantizedTransposeConvState& s, const Tensor& filter) {
  if (filter.type() == KILN_TYPE_UINT8) {
    PackFilterAs(s, filter.data<uint8_t>());
  } else {
    PackFilterAs(s, filter.data<int8_t>());
  }
}

// col = lhs x weights for `rows` input pixels, summed in Acc.
template <typename Acc>
const Acc* GemmColumns(QuantizedTransposeConvState& s, int32_t rows);

template <>
const int32_t* GemmColumns<int32_t>(QuantizedTransposeConvState& s,
                                    int32_t rows) {
  const int32_t kp = s.weights.k_padded();
  IntGemm(s.lhs.data(), kp, rows, s.weights, 0, kp, s.col.data(),
          s.weights.n());
  return s.col.data();
}

template <>
const int64_t* GemmColumns<int64_t>(QuantizedTransposeConvState& s,
                                    int32_t rows) {
  const int32_t kp = s.weights.k_padded();
  const int64_t count = int64_t{rows} * s.weights.n();
  std::fill(s.col64.begin(), s.col64.begin() + count, int64_t{0});
  for (int32_t k0 = 0; k0 < kp; k0 += kWideDepthBlock) {
    IntGemm(s.lhs.data(), kp, rows, s.weights, k0,
            std::min(kp, k0 + kWideDepthBlock), s.col.data(), s.weights.n());
    for (int64_t i = 0; i < count; ++i) s.col64[i] += s.col[i];
  }
  return s.col64.data();
}

template <typename T, typename Acc>
void Run(QuantizedTransposeConvState& s, const T* in, const BiasView& bias,
         T* out, std::vector<Acc>& acc) {
  const ConvGeometry& g = s.g;
  const int32_t kp = s.weights.k_padded();
  const int32_t rows = g.in_h * g.in_w;
  const int64_t out_pixels = int64_t{g.out_h} * g.out_w;
  for (int32_t b = 0; b < g.batches; ++b) {
    std::fill(acc.begin(), acc.end(), Acc{0});
    for (int32_t r0 = 0; r0 < rows; r0 += s.chunk_rows) {
      const int32_t n = std::min(s.chunk_rows, rows - r0);
      for (int32_t r = 0; r < n; ++r) {
        ToInt16WithOffset(in + (int64_t{b} * rows + r0 + r) * g.in_c, g.in_c,
                          s.q.input_offset, s.lhs.data() + int64_t{r} * kp);
      }
      Col2ImAdd(g, r0, n, GemmColumns<Acc>(s, n), s.weights.n(), acc.data(),
                [](Acc* dst, const Acc* src, int32_t c) {
                  for (int32_t i = 0; i < c; ++i) {
                    dst[i] = static_cast<Acc>(
                        static_cast<std::make_unsigned_t<Acc>>(dst[i]) +
                        static_cast<std::make_unsigned_t<Acc>>(src[i]));
                  }
                });
    }
    T* dst = out + b * out_pixels * g.out_c;
    for (int64_t p = 0; p < out_pixels; ++p) {
      for (int32_t c = 0; c < g.out_c; ++c) {
        Acc v = acc[p * g.out_c + c];
        if constexpr (sizeof(Acc) == 4) {
          v = WrappingAdd(v, static_cast<int32_t>(bias.at(c)));
        } else {
          v += bias.at(c);
        }
        dst[p * g.out_c + c] = static_cast<T>(RequantizeChannel(v, c, s.q));
      }
    }
  }
}

}  // namespace

KilnStatus QuantizedTransposeConvPrepare(KernelContext& k, IntScheme scheme,
                                         QuantizedTransposeConvState& s) {
  const Tensor filter = k.input(1), out = k.output(0);
  KILN_SDK_RETURN_IF_ERROR(ReadTransposeConvGeometry(k, kOp, &s.g, &s.shaped));
  // TFLite's per-channel transpose kernel ignores an int8 filter zero
  // point (true).
  KILN_SDK_RETURN_IF_ERROR(PrepareChannelRequant(
      k, ConvolutionRules(kOp, scheme, s.g.out_c, 0, s.g.activation, true),
      scheme, kTransposeConvOperands, &s.q));
  if (!s.shaped) return KILN_STATUS_OK;  // sized once the values exist
  const ConvGeometry& g = s.g;
  const int32_t taps_out = g.taps() * g.out_c;
  s.weights.Resize(taps_out, g.in_c);
  s.pack_in_invoke = !(filter.is_constant() && filter.data<void>() != nullptr);
  if (!s.pack_in_invoke) PackFilter(s, filter);
  const int64_t per_row =
      std::max<int64_t>(1, std::max<int64_t>(s.weights.k_padded(), taps_out));
  s.chunk_rows = static_cast<int32_t>(
      std::min<int64_t>(std::max<int64_t>(kScratchValues / per_row, 4),
                        std::max(g.in_h * g.in_w, 1)));
  s.lhs.assign(static_cast<size_t>(s.chunk_rows) * s.weights.k_padded(), 0);
  s.col.assign(static_cast<size_t>(s.chunk_rows) * taps_out, 0);
  const size_t image = static_cast<size_t>(g.out_h) * g.out_w * g.out_c;
  const bool wide = s.q.wide_accumulator;
  s.col64.assign(wide ? s.col.size() : 0, 0);
  s.acc.assign(wide ? 0 : image, 0);
  s.acc64.assign(wide ? image : 0, 0);
  return k.Resize(out, {g.batches, g.out_h, g.out_w, g.out_c});
}

KilnStatus QuantizedTransposeConvInvoke(KernelContext& k,
                                        QuantizedTransposeConvState& s) {
  const Tensor shape = k.input(0);
  const int32_t* dims = shape.data<int32_t>();
  if (!s.shaped || dims == nullptr) {
    return k.Fail(KILN_STATUS_FAILED_PRECONDITION, kOp,
                  ": output shape unknown; the host must prepare the node "
                  "again once output_shape input '",
                  shape.name(), "' is computed");
  }
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectOutputShape(
      k, sdk::Output(0), {dims[0], dims[1], dims[2], dims[3]}));
  ConvLikeBuffers b;
  KILN_SDK_RETURN_IF_ERROR(ReadConvLikeBuffers(k, kTransposeConvOperands, &b));
  if (s.pack_in_invoke) PackFilter(s, b.filter);
  ForScheme(s.q.scheme, [&](auto tag) {
    using T = decltype(tag);
    if (s.q.wide_accumulator) {
      Run(s, b.input.data<T>(), b.bias, b.output.data<T>(), s.acc64);
    } else {
      Run(s, b.input.data<T>(), b.bias, b.output.data<T>(), s.acc);
    }
  });
  return KILN_STATUS_OK;
}

}  // namespace kiln::cpu::nn
