// Hybrid FULLY_CONNECTED as LiteRT's EvalHybridDense: each input row is
// quantized on its own (symmetric, or asymmetric with
// asymmetric_quantize_inputs), and
//   out[r][u] = bias[u] + float(sum_d q[r][d] * w[u][d] - zp[r] * rowsum[u])
//                         * (scale[r] * weight_scale[u])
// then the fused activation (all of TFLite's, TANH and SIGN_BIT included).
#include <algorithm>

#include "kernels/nn/fully_connected_quantized.h"
#include "kernels/nn/hybrid.h"

namespace kiln::cpu::nn {
namespace {

constexpr ConvOperands kOperands{sdk::Input(0), sdk::Input(1, "weights"),
                                 sdk::Input(2, "bias"), sdk::Output(0)};
// int16 values of the quantized input rows held at once.
constexpr int64_t kScratchValues = 1 << 16;

void PackWeights(HybridFullyConnectedState& s, const int8_t* w) {
  s.packed.Pack(w, s.depth, 1, 0);
  if (s.asymmetric) WeightRowSums(w, s.units, s.depth, &s.row_sums);
}

// Quantizes rows [r0, r0 + n) of the input into the chunk buffers.
void QuantizeChunk(HybridFullyConnectedState& s, const float* input, int32_t r0,
                   int32_t n) {
  const int32_t kp = s.packed.k_padded();
  const bool per_tensor = !s.weights.per_channel;
  for (int32_t i = 0; i < n; ++i) {
    float scale = 0.f;
    int32_t zp = 0;
    QuantizeHybridRow(input + static_cast<int64_t>(r0 + i) * s.depth, s.depth,
                      s.asymmetric, s.quantized.data(), &scale, &zp);
    // Per-tensor weights: LiteRT folds the weight scale into the row's.
    s.row_scale[static_cast<size_t>(i)] =
        per_tensor ? scale * s.weights.scales[0] : scale;
    s.row_zero_point[static_cast<size_t>(i)] = zp;
    int16_t* row = s.lhs.data() + static_cast<int64_t>(i) * kp;
    for (int32_t d = 0; d < s.depth; ++d) row[d] = s.quantized[d];
  }
}

void ScaleChunk(const HybridFullyConnectedState& s, const float* bias,
                int32_t n, float* out) {
  const int32_t* acc = s.scratch.acc.data();
  for (int32_t i = 0; i < n; ++i) {
    const float row_scale = s.row_scale[static_cast<size_t>(i)];
    const int32_t zp = s.row_zero_point[static_cast<size_t>(i)];
    for (int32_t u = 0; u < s.units; ++u) {
      int32_t sum = acc[static_cast<int64_t>(i) * s.units + u];
      if (zp != 0) {  // wraps as LiteRT's int32 arithmetic does
        sum = static_cast<int32_t>(
            static_cast<uint32_t>(sum) -
            static_cast<uint32_t>(zp) *
                static_cast<uint32_t>(s.row_sums[static_cast<size_t>(u)]));
      }
      const float scale =
          s.weights.per_channel
              ? s.weights.scales[static_cast<size_t>(u)] * row_scale
              : row_scale;
      const float b = bias != nullptr ? bias[u] : 0.f;
      out[static_cast<int64_t>(i) * s.units + u] =
          b + static_cast<float>(sum) * scale;
    }
  }
}

}  // namespace

KilnStatus HybridFullyConnectedPrepare(KernelContext& k,
                                       HybridFullyConnectedState& s) {
  const Tensor weights = k.input(1);
  FullyConnectedNode node;
  KILN_SDK_RETURN_IF_ERROR(ReadFullyConnectedNode(k, &node));
  s.activation = node.activation;
  s.rows = node.rows;
  s.units = node.units;
  s.depth = node.depth;
  KILN_SDK_RETURN_IF_ERROR(
      ExpectHybridFloatTensors(k, kOperands.bias, s.units));
  KILN_SDK_RETURN_IF_ERROR(
      ReadHybridWeights(k, kOperands.filter, s.units, 0, &s.weights));
  s.asymmetric = k.OptionInt(KILN_OPTION_ASYMMETRIC_QUANTIZE_INPUTS, 0) != 0;
  s.packed.Resize(s.units, s.depth);
  s.pack_in_invoke =
      !(weights.is_constant() && weights.data<int8_t>() != nullptr);
  if (!s.pack_in_invoke) PackWeights(s, weights.data<int8_t>());
  const int64_t per_row = std::max<int64_t>(1, s.packed.k_padded());
  s.chunk_rows = static_cast<int32_t>(std::min<int64_t>(
      std::max<int64_t>(kScratchValues / per_row, 4), std::max(s.rows, 1)));
  s.quantized.assign(static_cast<size_t>(s.depth), 0);
  s.lhs.assign(static_cast<size_t>(s.chunk_rows * per_row), 0);
  s.row_scale.assign(static_cast<size_t>(s.chunk_rows), 0.f);
  s.row_zero_point.assign(static_cast<size_t>(s.chunk_rows), 0);
  s.scratch.Reserve(s.chunk_rows, s.units, false);
  return k.Resize(k.output(0), node.out_shape);
}

KilnStatus HybridFullyConnectedInvoke(KernelContext& k,
                                      HybridFullyConnectedState& s) {
  HybridBuffers buf;
  KILN_SDK_RETURN_IF_ERROR(ReadHybridBuffers(k, kOperands, &buf));
  const float* x = buf.input;
  const float* b = buf.bias;
  float* y = buf.output;
  if (s.pack_in_invoke) PackWeights(s, buf.weights);
  const int64_t total = static_cast<int64_t>(s.rows) * s.units;
  if (AllZero(x, static_cast<int64_t>(s.rows) * s.depth)) {
    for (int64_t i = 0; i < total; ++i)
      y[i] = b != nullptr ? b[i % s.units] : 0.f;
  } else {
    const int32_t kp = s.packed.k_padded();
    for (int32_t r0 = 0; r0 < s.rows; r0 += s.chunk_rows) {
      const int32_t n = std::min(s.chunk_rows, s.rows - r0);
      QuantizeChunk(s, x, r0, n);
      IntGemm(s.lhs.data(), kp, n, s.packed, 0, kp, s.scratch.acc.data(),
              s.units);
      ScaleChunk(s, b, n, y + static_cast<int64_t>(r0) * s.units);
    }
  }
  ApplyActivationInPlace(s.activation, y, total);
  return KILN_STATUS_OK;
}

}  // namespace kiln::cpu::nn
