#include "kernels/nn/blockwise_fully_connected.h"

#include "kernels/nn/fully_connected_quantized.h"
#include "kernels/nn/hybrid.h"
#include "kernels/nn/parallel.h"

namespace kiln::cpu::nn {
namespace {

constexpr const char* kOp = "FULLY_CONNECTED";
constexpr const char* kFloatNote =
    "with INT4 weights and a float32 input, the output and bias are float32";

// Sign-extends a 4-bit value.
int8_t SignExtend4(int v) { return static_cast<int8_t>((v ^ 0x8) - 0x8); }

// Reads the weights' blockwise quantization into s (block, scales) after
// checking what this kernel implements.
KilnStatus ReadBlockwiseWeights(KernelContext& k, const Tensor& weights,
                                BlockwiseFullyConnectedState& s) {
  KilnQuantizationParams q{};
  KILN_SDK_RETURN_IF_ERROR(
      k.Quantization(weights, &q, KernelContext::Blockwise::kAccept));
  if (q.block_size <= 0) {
    return k.Fail(KILN_STATUS_UNIMPLEMENTED, kOp, ": INT4 weights '",
                  weights.name(), "' are ",
                  q.num_channels > 0 ? "quantized per tensor or per channel"
                                     : "not quantized (a host older than "
                                       "extension API 1.3 does not read "
                                       "blockwise quantization)",
                  "; with a float32 input this kernel supports blockwise-"
                  "quantized INT4 weights only (as ai-edge-quantizer's "
                  "dynamic_wi4b32_afp32 recipe writes them)");
  }
  const int32_t blocks_per_row = s.depth / q.block_size;
  if (q.block_dimension != 1 || s.depth % q.block_size != 0 ||
      q.num_channels != s.units * blocks_per_row) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, kOp, ": INT4 weights '",
                  weights.name(), "' ", ShapeString(weights.shape()), " have ",
                  q.num_channels, " blocks of ", q.block_size,
                  " along dimension ", q.block_dimension, "; expected ",
                  s.units, " x ", s.depth, " / ", q.block_size,
                  " blocks along dimension 1");
  }
  if (s.depth % 2 != 0) {
    return k.Fail(KILN_STATUS_UNIMPLEMENTED, kOp, ": INT4 weights '",
                  weights.name(), "' have an odd depth ", s.depth,
                  "; this kernel supports rows of whole bytes only");
  }
  for (int32_t i = 0; i < q.num_channels; ++i) {
    if (q.zero_points[i] != 0) {
      return k.Fail(KILN_STATUS_UNIMPLEMENTED, kOp, ": INT4 weights '",
                    weights.name(), "' have zero point ", q.zero_points[i],
                    " in block ", i,
                    "; blockwise weights must be symmetric (zero point 0), "
                    "as LiteRT's blockwise kernel assumes");
    }
  }
  s.block = q.block_size;
  s.scales.assign(q.scales, q.scales + q.num_channels);
  return KILN_STATUS_OK;
}

// Unpacks the weights and sums each row's blocks into kfsum as LiteRT does:
// in block order, kfsum += scale * float(block sum).
void UnpackWeights(BlockwiseFullyConnectedState& s, const uint8_t* packed) {
  // Two values a byte, low nibble first (depth is even: rows start on a
  // byte).
  const int64_t n = static_cast<int64_t>(s.units) * s.depth;
  s.weights.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n / 2; ++i) {
    s.weights[static_cast<size_t>(2 * i)] = SignExtend4(packed[i] & 0xF);
    s.weights[static_cast<size_t>(2 * i + 1)] = SignExtend4(packed[i] >> 4);
  }
  const int32_t blocks = s.depth / s.block;
  s.kfsum.assign(static_cast<size_t>(s.units), 0.f);
  for (int32_t u = 0; u < s.units; ++u) {
    const int8_t* w = s.weights.data() + static_cast<int64_t>(u) * s.depth;
    float kfsum = 0.f;
    for (int32_t b = 0; b < blocks; ++b) {
      int32_t sum = 0;
      for (int32_t i = 0; i < s.block; ++i) sum += w[b * s.block + i];
      const float scale = s.scales[static_cast<size_t>(u) * blocks + b];
      kfsum += scale * static_cast<float>(sum);
    }
    s.kfsum[static_cast<size_t>(u)] = kfsum;
  }
}

int32_t BlockDot(const int8_t* q, const int8_t* w, int32_t n) {
  int32_t sum = 0;
  for (int32_t i = 0; i < n; ++i) {
    sum += static_cast<int32_t>(q[i]) * static_cast<int32_t>(w[i]);
  }
  return sum;
}

// Units [u0, u1) of every input row.
void ComputeUnits(const BlockwiseFullyConnectedState& s, const float* bias,
                  int64_t u0, int64_t u1, float* out) {
  const int32_t blocks = s.depth / s.block;
  for (int32_t r = 0; r < s.rows; ++r) {
    const int8_t* q = s.quantized.data() + static_cast<int64_t>(r) * s.depth;
    const float row_scale = s.row_scale[static_cast<size_t>(r)];
    const int32_t zp = s.row_zero_point[static_cast<size_t>(r)];
    for (int64_t u = u0; u < u1; ++u) {
      const int8_t* w = s.weights.data() + u * s.depth;
      const float* scale = s.scales.data() + u * blocks;
      float acc = 0.f;
      for (int32_t b = 0; b < blocks; ++b) {
        const int64_t at = static_cast<int64_t>(b) * s.block;
        const float block_sum =
            static_cast<float>(BlockDot(q + at, w + at, s.block)) * scale[b];
        acc += block_sum;
      }
      const float offset =
          static_cast<float>(zp) * s.kfsum[static_cast<size_t>(u)];
      acc -= offset;
      acc *= row_scale;
      if (bias != nullptr) acc += bias[u];
      out[static_cast<int64_t>(r) * s.units + u] = acc;
    }
  }
}

}  // namespace

bool IsBlockwiseFullyConnected(const KernelContext& k) {
  const Tensor input = k.input(0), weights = k.input(1);
  return input.present() && input.type() == KILN_TYPE_FLOAT32 &&
         weights.present() && weights.type() == KILN_TYPE_INT4;
}

KilnStatus BlockwiseFullyConnectedPrepare(KernelContext& k,
                                          BlockwiseFullyConnectedState& s) {
  const Tensor weights = k.input(1);
  FullyConnectedNode node;
  KILN_SDK_RETURN_IF_ERROR(ReadFullyConnectedNode(k, &node));
  if (node.activation != KILN_ACTIVATION_NONE) {
    return k.Fail(KILN_STATUS_UNIMPLEMENTED, kOp, ": fused activation ",
                  sdk::ActivationName(node.activation),
                  " with blockwise INT4 weights is refused: LiteRT's "
                  "blockwise kernel ignores it, so no result would agree "
                  "with both LiteRT and the model; apply the activation as "
                  "a separate op");
  }
  s.rows = node.rows;
  s.units = node.units;
  s.depth = node.depth;
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectType(k, sdk::Output(0), {KILN_TYPE_FLOAT32}, kFloatNote));
  const sdk::Operand bias = sdk::Input(2, "bias");
  if (k.num_inputs() > 2 && k.input(2).present()) {
    KILN_SDK_RETURN_IF_ERROR(
        sdk::ExpectType(k, bias, {KILN_TYPE_FLOAT32}, kFloatNote));
    KILN_SDK_RETURN_IF_ERROR(
        sdk::ExpectShape(k, bias, {s.units}, "one value per output unit"));
  }
  if (!weights.is_constant() || weights.data<uint8_t>() == nullptr) {
    return k.Fail(KILN_STATUS_UNIMPLEMENTED, kOp, ": INT4 weights '",
                  weights.name(),
                  "' are not a constant; blockwise weights must be model "
                  "constants");
  }
  KILN_SDK_RETURN_IF_ERROR(ReadBlockwiseWeights(k, weights, s));
  UnpackWeights(s, weights.data<uint8_t>());
  s.quantized.assign(static_cast<size_t>(s.rows) * s.depth, 0);
  s.row_scale.assign(static_cast<size_t>(s.rows), 0.f);
  s.row_zero_point.assign(static_cast<size_t>(s.rows), 0);
  return k.Resize(k.output(0), node.out_shape);
}

KilnStatus BlockwiseFullyConnectedInvoke(KernelContext& k,
                                         BlockwiseFullyConnectedState& s) {
  const float* x = nullptr;
  float* y = nullptr;
  const float* bias = nullptr;
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, sdk::Input(0), &x));
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, sdk::Output(0), &y));
  if (k.num_inputs() > 2 && k.input(2).present()) {
    KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, sdk::Input(2, "bias"), &bias));
  }
  for (int32_t r = 0; r < s.rows; ++r) {
    QuantizeHybridRow(x + static_cast<int64_t>(r) * s.depth, s.depth,
                      /*asymmetric=*/true,
                      s.quantized.data() + static_cast<int64_t>(r) * s.depth,
                      &s.row_scale[static_cast<size_t>(r)],
                      &s.row_zero_point[static_cast<size_t>(r)]);
  }
  return ParallelRows(k, s.units, static_cast<int64_t>(s.rows) * s.depth,
                      [&](int64_t u0, int64_t u1, int32_t) {
                        ComputeUnits(s, bias, u0, u1, y);
                      });
}

}  // namespace kiln::cpu::nn
