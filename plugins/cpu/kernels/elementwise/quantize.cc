// QUANTIZE (FLOAT32 -> INT8/UINT8/INT16, per-tensor or per-channel; and
// per-tensor requantization between those integer types) and DEQUANTIZE
// (INT8/UINT8/INT16 per-tensor or per-channel, FLOAT16 -> FLOAT32).
//
// Affine quantization: real = scale * (q - zero_point). QUANTIZE computes
// q = clamp(round_half_away(x / scale) + zero_point) like TFLite's reference
// kernel; NaN quantizes to the zero point. Quantization parameters come from
// KernelContext::Quantization (extension API 1.1): on a 1.0 host the integer
// paths fail in prepare with the host's missing-function message, while
// FLOAT16 DEQUANTIZE needs no parameters and still runs.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/elementwise/elementwise_common.h"
#include "kernels/registry.h"
#include "kiln/sdk/float16.h"

namespace kiln::cpu {
namespace {

using sdk::KernelContext;
using sdk::Tensor;

constexpr sdk::TypeSet kQuantizedTypes{KILN_TYPE_INT8, KILN_TYPE_UINT8,
                                       KILN_TYPE_INT16};
constexpr sdk::TypeSet kQuantizeInputTypes{KILN_TYPE_FLOAT32, KILN_TYPE_INT8,
                                           KILN_TYPE_UINT8, KILN_TYPE_INT16};
constexpr sdk::TypeSet kDequantizeInputTypes{
    KILN_TYPE_INT8, KILN_TYPE_UINT8, KILN_TYPE_INT16, KILN_TYPE_FLOAT16};
constexpr sdk::TypeSet kFloatTypes{KILN_TYPE_FLOAT32};

// Validated affine parameters of one tensor, with the number of elements
// per step along the quantized dimension.
struct AffineParams : sdk::TensorQuantization {
  int64_t inner = 1;
};

// Reads and validates the quantization of operand `o`. `per_channel_ok`
// allows one channel per element of any dimension.
KilnStatus ReadAffine(KernelContext& k, sdk::Operand o, bool per_channel_ok,
                      AffineParams* out) {
  const sdk::QuantizationRule rule =
      per_channel_ok ? sdk::PerChannel(sdk::QuantizationRule::kAnyChannelAxis)
                     : sdk::kPerTensor;
  KILN_SDK_RETURN_IF_ERROR(sdk::ReadQuantization(k, o, rule, out));
  const Tensor t = sdk::TensorOf(k, o);
  out->inner = 1;
  if (out->per_tensor()) return KILN_STATUS_OK;
  for (int32_t d = out->axis + 1; d < t.rank(); ++d) out->inner *= t.dim(d);
  return KILN_STATUS_OK;
}

int32_t ChannelOf(const AffineParams& p, int64_t i) {
  return p.per_tensor() ? 0
                        : static_cast<int32_t>((i / p.inner) % p.channels());
}

// ---- QUANTIZE -------------------------------------------------------------

struct QuantizeState {
  AffineParams out_params;
  AffineParams in_params;  // requantization only
};

KilnStatus QuantizePrepare(KernelContext& k, QuantizeState& state) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectArity(k, 1, 1));
  const Tensor in = k.input(0), out = k.output(0);
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectType(k, sdk::Input(0), kQuantizeInputTypes));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectType(k, sdk::Output(0), kQuantizedTypes));
  std::vector<int32_t> shape;
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectKnownShape(k, sdk::Input(0), &shape));
  KILN_SDK_RETURN_IF_ERROR(k.Resize(out, shape));
  const bool requantize = in.type() != KILN_TYPE_FLOAT32;
  KILN_SDK_RETURN_IF_ERROR(ReadAffine(k, sdk::Output(0),
                                      /*per_channel_ok=*/!requantize,
                                      &state.out_params));
  if (requantize) {
    KILN_SDK_RETURN_IF_ERROR(ReadAffine(k, sdk::Input(0),
                                        /*per_channel_ok=*/false,
                                        &state.in_params));
  }
  return KILN_STATUS_OK;
}

template <typename In>
float RealValue(In x, const QuantizeState& state) {
  if constexpr (std::is_same_v<In, float>) {
    (void)state;
    return x;
  } else {
    return state.in_params.scales[0] *
           static_cast<float>(static_cast<int64_t>(x) -
                              state.in_params.zero_points[0]);
  }
}

template <typename In, typename Out>
void QuantizeLoop(const In* in, Out* out, int64_t n,
                  const QuantizeState& state) {
  const AffineParams& p = state.out_params;
  const float lo = static_cast<float>(std::numeric_limits<Out>::lowest());
  const float hi = static_cast<float>(std::numeric_limits<Out>::max());
  for (int64_t i = 0; i < n; ++i) {
    const int32_t c = ChannelOf(p, i);
    const float real = RealValue(in[i], state);
    if (std::isnan(real)) {
      out[i] = static_cast<Out>(p.zero_points[c]);
      continue;
    }
    float q =
        std::round(real / p.scales[c]) + static_cast<float>(p.zero_points[c]);
    q = q < lo ? lo : (q > hi ? hi : q);
    out[i] = static_cast<Out>(q);
  }
}

template <typename In>
void QuantizeFrom(const Tensor& in, const Tensor& out, int64_t n,
                  const QuantizeState& state) {
  const In* pi = in.data<In>();
  switch (out.type()) {
    case KILN_TYPE_INT8:
      QuantizeLoop(pi, out.data<int8_t>(), n, state);
      break;
    case KILN_TYPE_UINT8:
      QuantizeLoop(pi, out.data<uint8_t>(), n, state);
      break;
    default:
      QuantizeLoop(pi, out.data<int16_t>(), n, state);
      break;
  }
}

KilnStatus QuantizeInvoke(KernelContext& k, QuantizeState& state) {
  const Tensor in = k.input(0), out = k.output(0);
  const void* pi = nullptr;
  void* po = nullptr;
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, sdk::Input(0), &pi));
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, sdk::Output(0), &po));
  const int64_t n = out.num_elements();
  switch (in.type()) {
    case KILN_TYPE_FLOAT32:
      QuantizeFrom<float>(in, out, n, state);
      break;
    case KILN_TYPE_INT8:
      QuantizeFrom<int8_t>(in, out, n, state);
      break;
    case KILN_TYPE_UINT8:
      QuantizeFrom<uint8_t>(in, out, n, state);
      break;
    default:
      QuantizeFrom<int16_t>(in, out, n, state);
      break;
  }
  return KILN_STATUS_OK;
}

// ---- DEQUANTIZE -----------------------------------------------------------

struct DequantizeState {
  AffineParams params;  // unused for FLOAT16 input
};

KilnStatus DequantizePrepare(KernelContext& k, DequantizeState& state) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectArity(k, 1, 1));
  const Tensor in = k.input(0), out = k.output(0);
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectType(k, sdk::Input(0), kDequantizeInputTypes));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectType(k, sdk::Output(0), kFloatTypes));
  std::vector<int32_t> shape;
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectKnownShape(k, sdk::Input(0), &shape));
  KILN_SDK_RETURN_IF_ERROR(k.Resize(out, shape));
  if (in.type() == KILN_TYPE_FLOAT16) return KILN_STATUS_OK;
  return ReadAffine(k, sdk::Input(0), /*per_channel_ok=*/true, &state.params);
}

template <typename In>
void DequantizeLoop(const In* in, float* out, int64_t n,
                    const AffineParams& p) {
  if (p.per_tensor()) {
    const float scale = p.scales[0];
    const int64_t zero_point = p.zero_points[0];
    for (int64_t i = 0; i < n; ++i) {
      out[i] =
          scale * static_cast<float>(static_cast<int64_t>(in[i]) - zero_point);
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    const int32_t c = ChannelOf(p, i);
    out[i] = p.scales[c] *
             static_cast<float>(static_cast<int64_t>(in[i]) - p.zero_points[c]);
  }
}

KilnStatus DequantizeInvoke(KernelContext& k, DequantizeState& state) {
  const Tensor in = k.input(0), out = k.output(0);
  float* po = out.data<float>();
  const void* pi = nullptr;
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, sdk::Input(0), &pi));
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, sdk::Output(0), &po));
  const int64_t n = out.num_elements();
  switch (in.type()) {
    case KILN_TYPE_FLOAT16: {
      const uint16_t* half = in.data<uint16_t>();
      for (int64_t i = 0; i < n; ++i) po[i] = sdk::HalfToFloat(half[i]);
      break;
    }
    case KILN_TYPE_INT8:
      DequantizeLoop(in.data<int8_t>(), po, n, state.params);
      break;
    case KILN_TYPE_UINT8:
      DequantizeLoop(in.data<uint8_t>(), po, n, state.params);
      break;
    default:
      DequantizeLoop(in.data<int16_t>(), po, n, state.params);
      break;
  }
  return KILN_STATUS_OK;
}

}  // namespace

void RegisterQuantization(sdk::PluginDefinition& def) {
  // QUANTIZE: v1 float32 -> uint8/int8 (and requantize), v2 int16 output,
  // v3 per-channel; ends before 4 (int4).
  elementwise::AddStatefulKernelForVersions<QuantizeState, QuantizePrepare,
                                            QuantizeInvoke>(
      def, KILN_OP_QUANTIZE, {{1, 3}});
  // DEQUANTIZE: v1 uint8, v2 int8, v3 int16/float16, v5 per-channel int8.
  // Not 4 (added in TFLite 2.2, no longer produced by op_version.cc; its
  // semantics are not established here) nor 6 (int4).
  elementwise::AddStatefulKernelForVersions<DequantizeState, DequantizePrepare,
                                            DequantizeInvoke>(
      def, KILN_OP_DEQUANTIZE, {{1, 3}, {5, 5}});
}

}  // namespace kiln::cpu
