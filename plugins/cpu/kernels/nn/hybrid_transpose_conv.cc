// Hybrid TRANSPOSE_CONV (float input, int8 filter; declared in hybrid.h).
#include <algorithm>

#include "kernels/nn/hybrid.h"

namespace kiln::cpu::nn {
namespace {

constexpr const char* kOp = "TRANSPOSE_CONV";

// OHWI filter to [tap][in_c][out_c], so that one input value meets a
// contiguous row of output channels.
void ReorderFilter(HybridTransposeConvState& s, const int8_t* filter) {
  const ConvGeometry& g = s.g;
  const int32_t taps = g.taps();
  for (int32_t oc = 0; oc < g.out_c; ++oc) {
    for (int32_t t = 0; t < taps; ++t) {
      const int8_t* src = filter + (int64_t{oc} * taps + t) * g.in_c;
      for (int32_t ic = 0; ic < g.in_c; ++ic) {
        s.filter[(int64_t{t} * g.in_c + ic) * g.out_c + oc] = src[ic];
      }
    }
  }
}

// The float terms of input value `qz` (q - z) of channel ic: for each tap
// and output channel, float(qz * w) * filter_scale * scale (the product of
// two integers is exact; then the two scale products, in order).
void ChannelTerms(const HybridTransposeConvState& s, int32_t ic, int32_t qz,
                  float scale, float* terms) {
  const ConvGeometry& g = s.g;
  const float* ws = s.weights.scales.data();
  const float x = static_cast<float>(qz);
  for (int32_t t = 0; t < g.taps(); ++t) {
    const int16_t* w = s.filter.data() + (int64_t{t} * g.in_c + ic) * g.out_c;
    float* dst = terms + int64_t{t} * g.out_c;
    for (int32_t c = 0; c < g.out_c; ++c) {
      dst[c] = x * static_cast<float>(w[c]) * ws[c] * scale;
    }
  }
}

// Scatters one input image into `out` term by term in LiteRT's order
// (input pixel, input channel, tap), then adds the bias and clamps.
void TransposeImage(HybridTransposeConvState& s, const float* in,
                    const float* bias, float* out) {
  const ConvGeometry& g = s.g;
  float scale = 0.f;
  int32_t zero_point = 0;
  QuantizeHybridRow(in, static_cast<int32_t>(g.in_image()), true,
                    s.quantized.data(), &scale, &zero_point);
  const int64_t out_image = int64_t{g.out_h} * g.out_w * g.out_c;
  std::fill(out, out + out_image, 0.f);
  const int32_t pixels = g.in_h * g.in_w;
  for (int32_t p = 0; p < pixels; ++p) {
    const int8_t* q = s.quantized.data() + int64_t{p} * g.in_c;
    for (int32_t ic = 0; ic < g.in_c; ++ic) {
      ChannelTerms(s, ic, q[ic] - zero_point, scale, s.terms.data());
      Col2ImAdd(g, p, 1, s.terms.data(), 0, out,
                [](float* dst, const float* src, int32_t c) {
                  for (int32_t i = 0; i < c; ++i) dst[i] += src[i];
                });
    }
  }
  for (int64_t i = 0; i < out_image; ++i) {
    const float v = out[i] + (bias != nullptr ? bias[i % g.out_c] : 0.f);
    out[i] = std::min(std::max(v, s.clamp_lo), s.clamp_hi);
  }
}

}  // namespace

KilnStatus HybridTransposeConvPrepare(KernelContext& k,
                                      HybridTransposeConvState& s) {
  KILN_SDK_RETURN_IF_ERROR(ReadTransposeConvGeometry(k, kOp, &s.g, &s.shaped));
  KILN_SDK_RETURN_IF_ERROR(
      ExpectHybridFloatTensors(k, kTransposeConvOperands.bias, s.g.out_c));
  KILN_SDK_RETURN_IF_ERROR(ReadHybridWeights(k, kTransposeConvOperands.filter,
                                             s.g.out_c, 0, &s.weights));
  ActivationClamp(s.g.activation, &s.clamp_lo, &s.clamp_hi);
  const Tensor filter = k.input(1);
  s.filter.assign(static_cast<size_t>(s.g.taps()) * s.g.in_c * s.g.out_c, 0);
  s.pack_in_invoke = !(filter.is_constant() && filter.data<int8_t>());
  if (!s.pack_in_invoke) ReorderFilter(s, filter.data<int8_t>());
  s.quantized.assign(static_cast<size_t>(s.g.in_image()), 0);
  s.terms.assign(static_cast<size_t>(s.g.taps()) * s.g.out_c, 0.f);
  if (!s.shaped) return KILN_STATUS_OK;  // sized once the values exist
  return k.Resize(k.output(0), {s.g.batches, s.g.out_h, s.g.out_w, s.g.out_c});
}

KilnStatus HybridTransposeConvInvoke(KernelContext& k,
                                     HybridTransposeConvState& s) {
  if (!s.shaped) {
    return k.Fail(KILN_STATUS_FAILED_PRECONDITION, kOp,
                  ": output shape unknown; the host must prepare the node "
                  "again once its output_shape input is computed");
  }
  const ConvGeometry& g = s.g;
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectOutputShape(
      k, sdk::Output(0), {g.batches, g.out_h, g.out_w, g.out_c}));
  HybridBuffers b;
  KILN_SDK_RETURN_IF_ERROR(ReadHybridBuffers(k, kTransposeConvOperands, &b));
  if (s.pack_in_invoke) ReorderFilter(s, b.weights);
  const int64_t out_image = int64_t{g.out_h} * g.out_w * g.out_c;
  for (int32_t n = 0; n < g.batches; ++n) {
    TransposeImage(s, b.input + n * g.in_image(), b.bias,
                   b.output + n * out_image);
  }
  return KILN_STATUS_OK;
}

}  // namespace kiln::cpu::nn
