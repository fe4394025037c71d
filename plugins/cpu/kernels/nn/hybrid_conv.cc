// Hybrid CONV_2D and DEPTHWISE_CONV_2D (float input, int8 filter), as
// LiteRT's reference resolver computes them:
//   CONV_2D, one filter scale (or all equal; optimized_ops::HybridConv):
//     the image quantized symmetrically with scale s, then
//     out = float(acc) * (s * filter_scale) + bias;
//   CONV_2D, per-channel scales (reference_ops::HybridConvPerChannel): the
//     image quantized asymmetrically (scale s, zero point z), then
//     out = (float(acc) * filter_scale[c]) * s + bias;
//   DEPTHWISE_CONV_2D (reference DepthwiseConvHybridPerChannel): asymmetric,
//     out = float(acc) * (filter_scale[c] * s) + bias;
// acc = sum over the taps inside the image of w * (q - z), then the fused
// activation as a clamp (TANH and SIGN_BIT are ignored, as LiteRT's
// CalculateActivationRange does).
#include <algorithm>

#include "kernels/nn/conv_quantized.h"
#include "kernels/nn/hybrid.h"
#include "kernels/nn/int_vec.h"

namespace kiln::cpu::nn {
namespace {

// Target size of one im2col chunk, in int16 values.
constexpr int64_t kScratchValues = 64 * 1024;

using GeometryReader = KilnStatus (*)(KernelContext&, const char*,
                                      const Tensor&, const Tensor&,
                                      ConvGeometry*);

// What CONV_2D and DEPTHWISE_CONV_2D prepare alike: the geometry, the
// float tensors, the filter scales (per channel along `filter_axis`) and
// the activation clamp.
KilnStatus PrepareConvLike(KernelContext& k, const char* op,
                           GeometryReader read_geometry, int32_t filter_axis,
                           ConvGeometry* g, HybridWeights* weights,
                           float* clamp_lo, float* clamp_hi) {
  KILN_SDK_RETURN_IF_ERROR(read_geometry(k, op, k.input(0), k.input(1), g));
  KILN_SDK_RETURN_IF_ERROR(
      ExpectHybridFloatTensors(k, kConvOperands.bias, g->out_c));
  KILN_SDK_RETURN_IF_ERROR(ReadHybridWeights(k, kConvOperands.filter, g->out_c,
                                             filter_axis, weights));
  ActivationClamp(g->activation, clamp_lo, clamp_hi);
  return KILN_STATUS_OK;
}

// Runs image(input, output) on each batch image.
template <typename Fn>
void ForEachImage(const ConvGeometry& g, const HybridBuffers& b, Fn&& image) {
  for (int32_t n = 0; n < g.batches; ++n) {
    image(b.input + n * g.in_image(),
          b.output + int64_t{n} * g.out_pixels() * g.out_c);
  }
}

bool ScalesDiffer(const std::vector<float>& scales) {
  return std::any_of(scales.begin(), scales.end(),
                     [&](float v) { return v != scales[0]; });
}

inline float Clamp(float v, float lo, float hi) {
  return std::min(std::max(v, lo), hi);
}

// ---- CONV_2D ----------------------------------------------------------------

void ScaleConvChunk(const HybridConvState& s, const float* bias, float scale,
                    int32_t rows, float* out) {
  const int32_t c_out = s.g.out_c;
  const int32_t* acc = s.scratch.acc.data();
  for (int32_t r = 0; r < rows; ++r) {
    for (int32_t c = 0; c < c_out; ++c) {
      const float a = static_cast<float>(acc[int64_t{r} * c_out + c]);
      const float v = s.per_channel
                          ? a * s.weights.scales[static_cast<size_t>(c)] * scale
                          : a * scale;
      const float b = bias != nullptr ? bias[c] : 0.f;
      out[int64_t{r} * c_out + c] = Clamp(v + b, s.clamp_lo, s.clamp_hi);
    }
  }
}

void ConvImage(HybridConvState& s, const float* in, const float* bias,
               float* out) {
  const ConvGeometry& g = s.g;
  float scale = 0.f;
  int32_t zero_point = 0;
  QuantizeHybridRow(in, static_cast<int32_t>(g.in_image()), s.per_channel,
                    s.image.data(), &scale, &zero_point);
  // One scale: LiteRT folds the filter's into the image's.
  if (!s.per_channel) scale *= s.weights.scales[0];
  const int32_t kp = s.packed.k_padded();
  const int32_t rows = g.out_pixels();
  for (int32_t r0 = 0; r0 < rows; r0 += s.chunk_rows) {
    const int32_t n = std::min(s.chunk_rows, rows - r0);
    Im2ColInt16(g, s.image.data(), -zero_point, r0, n, kp, s.im2col.data());
    IntGemm(s.im2col.data(), kp, n, s.packed, 0, kp, s.scratch.acc.data(),
            g.out_c);
    ScaleConvChunk(s, bias, scale, n, out + int64_t{r0} * g.out_c);
  }
}

// ---- DEPTHWISE_CONV_2D
// --------------------------------------------------------

void DepthwiseImage(HybridDepthwiseState& s, const float* in, const float* bias,
                    float* out) {
  const ConvGeometry& g = s.g;
  float scale = 0.f;
  int32_t zero_point = 0;
  QuantizeHybridRow(in, static_cast<int32_t>(g.in_image()), true,
                    s.quantized.data(), &scale, &zero_point);
  ToInt16WithOffset(s.quantized.data(), g.in_image(), -zero_point,
                    s.image.data());
  for (int32_t oy = 0; oy < g.out_h; ++oy) {
    for (int32_t ox = 0; ox < g.out_w; ++ox) {
      std::fill(s.acc.begin(), s.acc.end(), 0);
      DepthwiseAccumulatePixel(g, s.filter.data(), s.image.data(), oy, ox,
                               s.acc.data());
      float* dst = out + (int64_t{oy} * g.out_w + ox) * g.out_c;
      for (int32_t c = 0; c < g.out_c; ++c) {
        const float v = static_cast<float>(s.acc[static_cast<size_t>(c)]) *
                        (s.weights.scales[static_cast<size_t>(c)] * scale);
        const float b = bias != nullptr ? bias[c] : 0.f;
        dst[c] = Clamp(v + b, s.clamp_lo, s.clamp_hi);
      }
    }
  }
}

}  // namespace

KilnStatus HybridConvPrepare(KernelContext& k, HybridConvState& s) {
  constexpr const char* op = "CONV_2D";
  const Tensor filter = k.input(1), out = k.output(0);
  if (k.num_inputs() < 3 || !k.input(2).present()) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op,
                  ": hybrid CONV_2D needs a bias input (LiteRT refuses it "
                  "without one too)");
  }
  KILN_SDK_RETURN_IF_ERROR(PrepareConvLike(k, op, ReadConv2DGeometry, 0, &s.g,
                                           &s.weights, &s.clamp_lo,
                                           &s.clamp_hi));
  s.per_channel = ScalesDiffer(s.weights.scales);
  const int32_t depth = s.g.taps() * s.g.in_c;
  s.packed.Resize(s.g.out_c, depth);
  s.pack_in_invoke = !(filter.is_constant() && filter.data<int8_t>());
  if (!s.pack_in_invoke) s.packed.Pack(filter.data<int8_t>(), depth, 1, 0);
  const int64_t per_row = std::max<int64_t>(1, s.packed.k_padded());
  s.chunk_rows = static_cast<int32_t>(
      std::min<int64_t>(std::max<int64_t>(kScratchValues / per_row, 8),
                        std::max(s.g.out_pixels(), 1)));
  s.image.assign(static_cast<size_t>(s.g.in_image()), 0);
  s.im2col.assign(static_cast<size_t>(s.chunk_rows * per_row), 0);
  s.scratch.Reserve(s.chunk_rows, s.g.out_c, false);
  return k.Resize(out, {s.g.batches, s.g.out_h, s.g.out_w, s.g.out_c});
}

KilnStatus HybridConvInvoke(KernelContext& k, HybridConvState& s) {
  HybridBuffers b;
  KILN_SDK_RETURN_IF_ERROR(ReadHybridBuffers(k, kConvOperands, &b));
  if (s.pack_in_invoke) {
    s.packed.Pack(b.weights, s.g.taps() * s.g.in_c, 1, 0);
  }
  ForEachImage(s.g, b, [&](const float* in, float* out) {
    ConvImage(s, in, b.bias, out);
  });
  return KILN_STATUS_OK;
}

KilnStatus HybridDepthwisePrepare(KernelContext& k, HybridDepthwiseState& s) {
  constexpr const char* op = "DEPTHWISE_CONV_2D";
  const Tensor filter = k.input(1), out = k.output(0);
  // A single filter scale serves every channel (LiteRT reads past it).
  KILN_SDK_RETURN_IF_ERROR(PrepareConvLike(k, op, ReadDepthwiseGeometry, 3,
                                           &s.g, &s.weights, &s.clamp_lo,
                                           &s.clamp_hi));
  s.filter.assign(static_cast<size_t>(s.g.taps()) * s.g.out_c, 0);
  s.pack_in_invoke = !(filter.is_constant() && filter.data<int8_t>());
  if (!s.pack_in_invoke) {
    ToInt16WithOffset(filter.data<int8_t>(), s.filter.size(), 0,
                      s.filter.data());
  }
  s.quantized.assign(static_cast<size_t>(s.g.in_image()), 0);
  s.image.assign(static_cast<size_t>(s.g.in_image()), 0);
  s.acc.assign(static_cast<size_t>(s.g.out_c), 0);
  return k.Resize(out, {s.g.batches, s.g.out_h, s.g.out_w, s.g.out_c});
}

KilnStatus HybridDepthwiseInvoke(KernelContext& k, HybridDepthwiseState& s) {
  HybridBuffers b;
  KILN_SDK_RETURN_IF_ERROR(ReadHybridBuffers(k, kConvOperands, &b));
  if (s.pack_in_invoke) {
    ToInt16WithOffset(b.weights, s.filter.size(), 0, s.filter.data());
  }
  ForEachImage(s.g, b, [&](const float* in, float* out) {
    DepthwiseImage(s, in, b.bias, out);
  });
  return KILN_STATUS_OK;
}

}  // namespace kiln::cpu::nn
