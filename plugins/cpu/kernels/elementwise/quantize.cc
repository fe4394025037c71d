// QUANTIZE (FLOAT32 -> INT8/UINT8/INT16, per-tensor or per-channel; and
// per-tensor requantization between those integer types) and DEQUANTIZE
// (INT8/UINT8/INT16 per-tensor or per-channel, FLOAT16 -> FLOAT32).
//
// Affine quantization: real = scale * (q - zero_point). The arithmetic is
// that of LiteRT's reference kernels, bit for bit: QUANTIZE computes
// clamp(int32(round_half_away(x / scale)) + zero_point) in float (a value
// outside int32, or NaN, converts to INT32_MIN as on x86, so it clamps to the
// type's minimum); requantization is integer, (q - zp_in) times the Q31
// multiplier of in_scale / out_scale, plus zp_out; DEQUANTIZE computes
// float(double(scale) * (q - zero_point)) per tensor and
// scale * (q - zero_point) in float per channel. Quantization parameters come
// from KernelContext::Quantization (extension API 1.1): on a 1.0 host the
// integer paths fail in prepare with the host's missing-function message, while
// FLOAT16 DEQUANTIZE needs no parameters and still runs.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/elementwise/elementwise_common.h"
#include "kernels/quantization_util.h"
#include "kernels/registry.h"

namespace kiln::cpu {
namespace {

using elementwise::Describe;
using sdk::KernelContext;
using sdk::Tensor;

constexpr KilnTensorType kQuantizedTypes[] = {KILN_TYPE_INT8, KILN_TYPE_UINT8,
                                              KILN_TYPE_INT16};
constexpr KilnTensorType kQuantizeInputTypes[] = {
    KILN_TYPE_FLOAT32, KILN_TYPE_INT8, KILN_TYPE_UINT8, KILN_TYPE_INT16};
constexpr KilnTensorType kDequantizeInputTypes[] = {
    KILN_TYPE_INT8, KILN_TYPE_UINT8, KILN_TYPE_INT16, KILN_TYPE_FLOAT16};
constexpr KilnTensorType kFloatTypes[] = {KILN_TYPE_FLOAT32};

// Validated affine parameters of one tensor. Pointers are owned by the host
// and stay valid as long as the tensor handle (i.e. for the node's life).
struct AffineParams {
  int32_t num_channels = 0;  // 1: per-tensor
  int32_t axis = 0;
  int64_t inner = 1;  // elements per step along `axis`
  const float* scales = nullptr;
  const int64_t* zero_points = nullptr;
};

void TypeRange(KilnTensorType type, int64_t* lo, int64_t* hi) {
  switch (type) {
    case KILN_TYPE_INT8:
      *lo = std::numeric_limits<int8_t>::min();
      *hi = std::numeric_limits<int8_t>::max();
      break;
    case KILN_TYPE_UINT8:
      *lo = 0;
      *hi = std::numeric_limits<uint8_t>::max();
      break;
    default:
      *lo = std::numeric_limits<int16_t>::min();
      *hi = std::numeric_limits<int16_t>::max();
      break;
  }
}

// Reads and validates the quantization of `t`. `per_channel_ok` allows more
// than one channel.
KilnStatus ReadAffine(KernelContext& k, const char* op, const char* role,
                      int32_t index, const Tensor& t, bool per_channel_ok,
                      AffineParams* out) {
  KilnQuantizationParams q;
  KILN_SDK_RETURN_IF_ERROR(k.Quantization(t, &q));
  const std::string who = Describe(role, index, t);
  if (q.num_channels <= 0 || q.scales == nullptr || q.zero_points == nullptr) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, ": ", who, " (",
                  sdk::TypeName(t.type()),
                  ") has no quantization parameters; the model must give it "
                  "a scale and zero point");
  }
  for (int32_t c = 0; c < q.num_channels; ++c) {
    if (!(q.scales[c] > 0.f) || !std::isfinite(q.scales[c])) {
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, ": ", who, " has scale ",
                    q.scales[c], " for channel ", c,
                    "; scales must be positive and finite");
    }
  }
  int64_t lo = 0, hi = 0;
  TypeRange(t.type(), &lo, &hi);
  if (t.type() != KILN_TYPE_FLOAT32) {
    for (int32_t c = 0; c < q.num_channels; ++c) {
      if (q.zero_points[c] < lo || q.zero_points[c] > hi) {
        return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, ": ", who,
                      " has zero point ", q.zero_points[c], " for channel ", c,
                      ", outside the ", sdk::TypeName(t.type()), " range [", lo,
                      ", ", hi, "]");
      }
    }
  }
  out->num_channels = q.num_channels;
  out->axis = 0;
  out->inner = 1;
  out->scales = q.scales;
  out->zero_points = q.zero_points;
  if (q.num_channels == 1) return KILN_STATUS_OK;
  if (!per_channel_ok) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, ": ", who, " has ",
                  q.num_channels,
                  " per-channel scales; only per-tensor quantization is "
                  "supported here");
  }
  const int32_t rank = t.rank();
  if (q.quantized_dimension < 0 || q.quantized_dimension >= rank) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, ": ", who,
                  " has quantized_dimension ", q.quantized_dimension,
                  " outside its rank ", rank);
  }
  if (t.dim(q.quantized_dimension) != q.num_channels) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, ": ", who, " has ",
                  q.num_channels, " per-channel scales but dimension ",
                  q.quantized_dimension, " has extent ",
                  t.dim(q.quantized_dimension));
  }
  out->axis = q.quantized_dimension;
  for (int32_t d = q.quantized_dimension + 1; d < rank; ++d) {
    out->inner *= t.dim(d);
  }
  return KILN_STATUS_OK;
}

int32_t ChannelOf(const AffineParams& p, int64_t i) {
  return p.num_channels == 1
             ? 0
             : static_cast<int32_t>((i / p.inner) % p.num_channels);
}

// ---- QUANTIZE -------------------------------------------------------------

struct QuantizeState {
  AffineParams out_params;
  AffineParams in_params;  // requantization only
  // Requantization: in_scale / out_scale (in double) as a Q31 multiplier.
  QuantizedMultiplier requantize;
};

KilnStatus QuantizePrepare(KernelContext& k, QuantizeState& state) {
  constexpr const char* kOp = "QUANTIZE";
  KILN_SDK_RETURN_IF_ERROR(elementwise::ExpectArity(k, kOp, 1, 1));
  const Tensor in = k.input(0), out = k.output(0);
  KILN_SDK_RETURN_IF_ERROR(
      elementwise::ExpectTypeIn(k, kOp, "input", 0, in, kQuantizeInputTypes));
  KILN_SDK_RETURN_IF_ERROR(
      elementwise::ExpectTypeIn(k, kOp, "output", 0, out, kQuantizedTypes));
  std::vector<int32_t> shape;
  KILN_SDK_RETURN_IF_ERROR(elementwise::KnownShape(k, "input", 0, in, &shape));
  KILN_SDK_RETURN_IF_ERROR(k.Resize(out, shape));
  const bool requantize = in.type() != KILN_TYPE_FLOAT32;
  KILN_SDK_RETURN_IF_ERROR(ReadAffine(k, kOp, "output", 0, out,
                                      /*per_channel_ok=*/!requantize,
                                      &state.out_params));
  if (requantize) {
    KILN_SDK_RETURN_IF_ERROR(ReadAffine(k, kOp, "input", 0, in,
                                        /*per_channel_ok=*/false,
                                        &state.in_params));
    state.requantize =
        QuantizeMultiplier(static_cast<double>(state.in_params.scales[0]) /
                           static_cast<double>(state.out_params.scales[0]));
  }
  return KILN_STATUS_OK;
}

// int32 addition that wraps as LiteRT's x86 build does on overflow.
int32_t WrappingAdd(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) +
                              static_cast<uint32_t>(b));
}

template <typename In, typename Out>
void QuantizeLoop(const In* in, Out* out, int64_t n,
                  const QuantizeState& state) {
  const AffineParams& p = state.out_params;
  const int32_t lo = std::numeric_limits<Out>::lowest();
  const int32_t hi = std::numeric_limits<Out>::max();
  for (int64_t i = 0; i < n; ++i) {
    int32_t q;
    if constexpr (std::is_same_v<In, float>) {
      const int32_t c = ChannelOf(p, i);
      q = WrappingAdd(TruncateToInt32LikeX86(std::round(in[i] / p.scales[c])),
                      static_cast<int32_t>(p.zero_points[c]));
    } else {  // requantization
      q = MultiplyByQuantizedMultiplier(
              static_cast<int32_t>(in[i]) -
                  static_cast<int32_t>(state.in_params.zero_points[0]),
              state.requantize) +
          static_cast<int32_t>(p.zero_points[0]);
    }
    out[i] = static_cast<Out>(q < lo ? lo : (q > hi ? hi : q));
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
  KILN_SDK_RETURN_IF_ERROR(
      elementwise::ExpectData(k, "input", 0, in, in.data<void>()));
  KILN_SDK_RETURN_IF_ERROR(
      elementwise::ExpectData(k, "output", 0, out, out.data<void>()));
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
  constexpr const char* kOp = "DEQUANTIZE";
  KILN_SDK_RETURN_IF_ERROR(elementwise::ExpectArity(k, kOp, 1, 1));
  const Tensor in = k.input(0), out = k.output(0);
  KILN_SDK_RETURN_IF_ERROR(
      elementwise::ExpectTypeIn(k, kOp, "input", 0, in, kDequantizeInputTypes));
  KILN_SDK_RETURN_IF_ERROR(
      elementwise::ExpectTypeIn(k, kOp, "output", 0, out, kFloatTypes));
  std::vector<int32_t> shape;
  KILN_SDK_RETURN_IF_ERROR(elementwise::KnownShape(k, "input", 0, in, &shape));
  KILN_SDK_RETURN_IF_ERROR(k.Resize(out, shape));
  if (in.type() == KILN_TYPE_FLOAT16) return KILN_STATUS_OK;
  return ReadAffine(k, kOp, "input", 0, in, /*per_channel_ok=*/true,
                    &state.params);
}

template <typename In>
void DequantizeLoop(const In* in, float* out, int64_t n,
                    const AffineParams& p) {
  if (p.num_channels == 1) {
    const double scale = p.scales[0];
    const int32_t zero_point = static_cast<int32_t>(p.zero_points[0]);
    for (int64_t i = 0; i < n; ++i) {
      out[i] = static_cast<float>(scale * (int32_t{in[i]} - zero_point));
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    const int32_t c = ChannelOf(p, i);
    out[i] = p.scales[c] *
             static_cast<float>(int32_t{in[i]} -
                                static_cast<int32_t>(p.zero_points[c]));
  }
}

KilnStatus DequantizeInvoke(KernelContext& k, DequantizeState& state) {
  const Tensor in = k.input(0), out = k.output(0);
  float* po = out.data<float>();
  KILN_SDK_RETURN_IF_ERROR(
      elementwise::ExpectData(k, "input", 0, in, in.data<void>()));
  KILN_SDK_RETURN_IF_ERROR(elementwise::ExpectData(k, "output", 0, out, po));
  const int64_t n = out.num_elements();
  switch (in.type()) {
    case KILN_TYPE_FLOAT16: {
      const uint16_t* pi = in.data<uint16_t>();
      for (int64_t i = 0; i < n; ++i) po[i] = elementwise::HalfToFloat(pi[i]);
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
