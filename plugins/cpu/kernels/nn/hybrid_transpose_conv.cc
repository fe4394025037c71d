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

// Adds the terms of input value `qz` (q - z) of channel ic through tap t
// into the output pixel `dst`.
void ScatterTerm(const HybridTransposeConvState& s, int32_t t, int32_t ic,
                 int32_t qz, float scale, float* dst) {
  const int32_t oc = s.g.out_c;
  const int16_t* w = s.filter.data() + (int64_t{t} * s.g.in_c + ic) * oc;
  const float* ws = s.weights.scales.data();
  const float x = static_cast<float>(qz);
  for (int32_t c = 0; c < oc; ++c) {
    // x * w is an exact integer; then the two scale products, in order.
    dst[c] += x * static_cast<float>(w[c]) * ws[c] * scale;
  }
}

void TransposeImage(HybridTransposeConvState& s, const float* in,
                    const float* bias, float* out) {
  const ConvGeometry& g = s.g;
  float scale = 0.f;
  int32_t zero_point = 0;
  QuantizeHybridRow(in, static_cast<int32_t>(g.in_image()), true,
                    s.quantized.data(), &scale, &zero_point);
  const int64_t out_image = int64_t{g.out_h} * g.out_w * g.out_c;
  std::fill(out, out + out_image, 0.f);
  for (int32_t iy = 0; iy < g.in_h; ++iy) {
    for (int32_t ix = 0; ix < g.in_w; ++ix) {
      const int8_t* q =
          s.quantized.data() + (int64_t{iy} * g.in_w + ix) * g.in_c;
      for (int32_t ic = 0; ic < g.in_c; ++ic) {
        const int32_t qz = q[ic] - zero_point;
        for (int32_t fy = 0; fy < g.filter_h; ++fy) {
          const int32_t oy = iy * g.window.stride_h - g.pad_h + fy;
          if (oy < 0 || oy >= g.out_h) continue;
          for (int32_t fx = 0; fx < g.filter_w; ++fx) {
            const int32_t ox = ix * g.window.stride_w - g.pad_w + fx;
            if (ox < 0 || ox >= g.out_w) continue;
            ScatterTerm(s, fy * g.filter_w + fx, ic, qz, scale,
                        out + (int64_t{oy} * g.out_w + ox) * g.out_c);
          }
        }
      }
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
