#include "kernels/nn/quantized_common.h"

#include <algorithm>
#include <cmath>

#include "kernels/nn/requantize.h"

namespace kiln::cpu::nn {
namespace {

const char* SchemeName(IntScheme scheme) {
  switch (scheme) {
    case IntScheme::kInt8:
      return "int8";
    case IntScheme::kUint8:
      return "uint8";
    case IntScheme::kInt16:
      return "int16x8";
  }
  return "integer";
}

void SchemeRange(IntScheme scheme, int32_t* qmin, int32_t* qmax) {
  switch (scheme) {
    case IntScheme::kInt8:
      *qmin = -128;
      *qmax = 127;
      return;
    case IntScheme::kUint8:
      *qmin = 0;
      *qmax = 255;
      return;
    case IntScheme::kInt16:
      *qmin = -32768;
      *qmax = 32767;
      return;
  }
}

KilnStatus CheckTypes(KernelContext& k, const RequantRules& r, IntScheme scheme,
                      const ConvOperands& ops, ChannelRequant* out) {
  const KilnTensorType filter_type =
      scheme == IntScheme::kUint8 ? KILN_TYPE_UINT8 : KILN_TYPE_INT8;
  const char* note = scheme == IntScheme::kInt8
                         ? "int8 kernels take INT8 filters and an INT32 bias"
                     : scheme == IntScheme::kUint8
                         ? "uint8 kernels take UINT8 filters and an INT32 bias"
                         : "int16x8 kernels take INT8 filters and an INT64 "
                           "bias";
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectType(k, ops.filter, {filter_type}, note));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectType(
      k, ops.output, {sdk::TensorOf(k, ops.input).type()}, note));
  out->wide_accumulator = scheme == IntScheme::kInt16;
  if (!OperandPresent(k, ops.bias)) return KILN_STATUS_OK;
  // An int32 bias on int16x8 (version 8 / 11, quantized_bias_type) is not
  // supported: TFLite reads such a bias as int64 unless the option says
  // otherwise, and the option does not reach plugins.
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectType(
      k, ops.bias,
      {scheme == IntScheme::kInt16 ? KILN_TYPE_INT64 : KILN_TYPE_INT32}, note));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectKnownShape(k, ops.bias));
  if (sdk::TensorOf(k, ops.bias).num_elements() != r.channels) {
    return k.Fail(
        KILN_STATUS_INVALID_ARGUMENT, sdk::Describe(k, ops.bias), " has shape ",
        ShapeString(sdk::TensorOf(k, ops.bias).shape()), "; expected ",
        r.channels, " values (one per output channel)");
  }
  return KILN_STATUS_OK;
}

// The scale and zero point TFLite's kernels read from a tensor's legacy
// per-tensor parameters: those of a single-channel quantization, else 0.
struct LegacyParams {
  float scale = 0.f;
  int32_t zero_point = 0;
};
KilnStatus ReadLegacyParams(KernelContext& k, const Tensor& t,
                            LegacyParams* out) {
  *out = LegacyParams{};
  if (!t.present()) return KILN_STATUS_OK;
  KilnQuantizationParams q{};
  KILN_SDK_RETURN_IF_ERROR(k.Quantization(t, &q));
  if (q.num_channels == 1 && q.scales != nullptr && q.zero_points != nullptr) {
    out->scale = q.scales[0];
    out->zero_point = static_cast<int32_t>(q.zero_points[0]);
  }
  return KILN_STATUS_OK;
}

KilnStatus CheckZeroPoints(KernelContext& k, const RequantRules& r,
                           IntScheme scheme, const ConvOperands& ops,
                           const sdk::TensorQuantization& qin,
                           const sdk::TensorQuantization& qf,
                           const sdk::TensorQuantization& qout) {
  if (scheme == IntScheme::kInt16 &&
      (qin.zero_points[0] != 0 || qout.zero_points[0] != 0)) {
    const bool in = qin.zero_points[0] != 0;
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT,
                  sdk::Describe(k, in ? ops.input : ops.output),
                  " has zero point ",
                  in ? qin.zero_points[0] : qout.zero_points[0],
                  "; int16 activations must be symmetric (zero point 0)");
  }
  if (scheme == IntScheme::kUint8 || r.int8_filter_zero_point_allowed) {
    return KILN_STATUS_OK;
  }
  for (size_t c = 0; c < qf.zero_points.size(); ++c) {
    if (qf.zero_points[c] != 0) {
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT, sdk::Describe(k, ops.filter),
                    " has zero point ", qf.zero_points[c], " at channel ", c,
                    "; int8 filters must be symmetric (zero point 0)");
    }
  }
  return KILN_STATUS_OK;
}

// TFLite's GetQuantizedConvolutionMultipler: float product of the input and
// filter scales, checked against the bias scale.
KilnStatus PerTensorFloatMultiplier(KernelContext& k, sdk::Operand bias,
                                    float in_scale, float filter_scale,
                                    float out_scale, double* multiplier) {
  const double product = static_cast<double>(in_scale * filter_scale);
  if (OperandPresent(k, bias)) {
    LegacyParams legacy;
    KILN_SDK_RETURN_IF_ERROR(
        ReadLegacyParams(k, sdk::TensorOf(k, bias), &legacy));
    const double diff = std::abs(product - static_cast<double>(legacy.scale));
    if (!(diff / static_cast<double>(out_scale) <= 0.02)) {
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT, sdk::Describe(k, bias),
                    " has scale ", legacy.scale,
                    " does not match input scale x filter scale ", product,
                    " (TFLite requires |difference| / output scale <= "
                    "0.02); re-quantize the model");
    }
  }
  *multiplier = product / static_cast<double>(out_scale);
  return KILN_STATUS_OK;
}

}  // namespace

RequantRules ConvolutionRules(const char* op, IntScheme scheme,
                              int32_t channels, int32_t filter_axis,
                              int64_t activation,
                              bool int8_filter_zero_point_allowed) {
  RequantRules r;
  r.op = op;
  r.channels = channels;
  r.filter_axis = filter_axis;
  r.activation = activation;
  r.int8_filter_zero_point_allowed = int8_filter_zero_point_allowed;
  r.per_tensor_float_product = scheme == IntScheme::kUint8;
  return r;
}

bool IntSchemeOf(KilnTensorType type, IntScheme* scheme) {
  switch (type) {
    case KILN_TYPE_INT8:
      *scheme = IntScheme::kInt8;
      return true;
    case KILN_TYPE_UINT8:
      *scheme = IntScheme::kUint8;
      return true;
    case KILN_TYPE_INT16:
      *scheme = IntScheme::kInt16;
      return true;
    default:
      return false;
  }
}

KilnStatus PrepareChannelRequant(KernelContext& k, const RequantRules& r,
                                 IntScheme scheme, const ConvOperands& ops,
                                 ChannelRequant* out) {
  out->scheme = scheme;
  KILN_SDK_RETURN_IF_ERROR(CheckTypes(k, r, scheme, ops, out));
  const bool per_channel_ok =
      scheme != IntScheme::kUint8 || r.uint8_per_channel;
  sdk::TensorQuantization qin, qf, qout;
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ReadQuantization(k, ops.input, sdk::kPerTensor, &qin));
  KILN_SDK_RETURN_IF_ERROR(sdk::ReadQuantization(
      k, ops.filter,
      per_channel_ok ? sdk::PerChannel(r.filter_axis) : sdk::kPerTensor, &qf));
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ReadQuantization(k, ops.output, sdk::kPerTensor, &qout));
  KILN_SDK_RETURN_IF_ERROR(CheckZeroPoints(k, r, scheme, ops, qin, qf, qout));
  const bool per_tensor = qf.scales.size() == 1;
  out->input_offset = -qin.zero_points[0];
  out->output_offset = qout.zero_points[0];
  out->filter_offset =
      (per_tensor && (scheme == IntScheme::kUint8 || r.use_filter_offset))
          ? -qf.zero_points[0]
          : 0;
  if (OperandPresent(k, ops.bias)) {
    LegacyParams legacy;
    KILN_SDK_RETURN_IF_ERROR(
        ReadLegacyParams(k, sdk::TensorOf(k, ops.bias), &legacy));
    if (legacy.zero_point != 0) {
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT, sdk::Describe(k, ops.bias),
                    " has zero point ", legacy.zero_point,
                    "; a quantized bias must have zero point 0");
    }
  }
  out->multipliers.assign(static_cast<size_t>(r.channels), {});
  out->real_multipliers.assign(static_cast<size_t>(r.channels), 0.0);
  out->requant_in_double = r.requant_in_double;
  double per_tensor_multiplier = 0;
  if (per_tensor && r.per_tensor_float_product) {
    KILN_SDK_RETURN_IF_ERROR(
        PerTensorFloatMultiplier(k, ops.bias, qin.scales[0], qf.scales[0],
                                 qout.scales[0], &per_tensor_multiplier));
  }
  for (int32_t c = 0; c < r.channels; ++c) {
    const size_t i = static_cast<size_t>(c);
    const float fs = qf.scales[per_tensor ? 0 : i];
    const double real = static_cast<double>(qin.scales[0]) *
                        static_cast<double>(fs) /
                        static_cast<double>(qout.scales[0]);
    out->real_multipliers[i] = real;
    out->multipliers[i] = QuantizeMultiplier(
        per_tensor && r.per_tensor_float_product ? per_tensor_multiplier
                                                 : real);
  }
  FillRequantLanes(*out);
  if (r.refuse_non_clamp_activation &&
      (r.activation == KILN_ACTIVATION_TANH ||
       r.activation == KILN_ACTIVATION_SIGN_BIT)) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, r.op,
                  ": fused activation TANH/SIGN_BIT on a quantized ",
                  SchemeName(scheme),
                  " output is refused (as by TFLite); the op supports "
                  "NONE, RELU, RELU_N1_TO_1 and RELU6");
  }
  int32_t qmin = 0, qmax = 0;
  SchemeRange(scheme, &qmin, &qmax);
  if (!QuantizedActivationBounds(r.activation, qout.scales[0],
                                 qout.zero_points[0], qmin, qmax, &out->act_min,
                                 &out->act_max)) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, r.op,
                  ": the fused activation's bounds overflow int32 at ",
                  sdk::Describe(k, ops.output), " scale ", qout.scales[0],
                  " (TFLite refuses this node too: "
                  "no_integer_overflow_from_quantization); re-quantize the "
                  "model with a larger output scale");
  }
  return KILN_STATUS_OK;
}

void FillRequantLanes(ChannelRequant& q) {
  q.lanes = RequantLanes{};
  for (const QuantizedMultiplier& m : q.multipliers) {
    q.lanes.multiplier.push_back(m.multiplier);
    q.lanes.left_shift.push_back(std::max(m.shift, 0));
    q.lanes.right_shift.push_back(std::max(-m.shift, 0));
  }
}

KilnStatus ReadBias(KernelContext& k, sdk::Operand bias, BiasView* out) {
  *out = BiasView{};
  if (!OperandPresent(k, bias)) return KILN_STATUS_OK;
  if (sdk::TensorOf(k, bias).type() == KILN_TYPE_INT64) {
    return sdk::BufferOf(k, bias, &out->i64);
  }
  return sdk::BufferOf(k, bias, &out->i32);
}

KilnStatus ReadConvLikeBuffers(KernelContext& k, const ConvOperands& ops,
                               ConvLikeBuffers* out) {
  out->input = sdk::TensorOf(k, ops.input);
  out->filter = sdk::TensorOf(k, ops.filter);
  out->output = sdk::TensorOf(k, ops.output);
  void* unused = nullptr;
  for (const sdk::Operand o : {ops.input, ops.filter, ops.output}) {
    KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, o, &unused));
  }
  return ReadBias(k, ops.bias, &out->bias);
}

namespace {

// Depth per int32 partial sum of the 64-bit path: 128 products of at most
// 2^15 * 2^8 each (int16 activations times int8 weights with an offset)
// stay below 2^31.
constexpr int32_t kWideDepthBlock = 128;

}  // namespace

template <typename T>
void RequantizedGemm(const int16_t* a, int32_t rows, const PackedInt16Matrix& w,
                     const BiasView& bias, const ChannelRequant& q, bool wide,
                     IntGemmScratch& scratch, T* out, int64_t ldo) {
  const int32_t n = w.n(), kp = w.k_padded();
  int32_t* acc = scratch.acc.data();
  if (!wide) {
    IntGemm(a, kp, rows, w, 0, kp, acc, n);
    if constexpr (sizeof(T) == 1) {
      if (RowRequantApplies(q) && bias.i64 == nullptr) {
        RequantizeRows(acc, rows, n, bias.i32, q, out, ldo);
        return;
      }
    }
    for (int32_t r = 0; r < rows; ++r) {
      for (int32_t c = 0; c < n; ++c) {
        const int32_t v = WrappingAdd(acc[int64_t{r} * n + c],
                                      static_cast<int32_t>(bias.at(c)));
        out[r * ldo + c] = static_cast<T>(RequantizeChannel(v, c, q));
      }
    }
    return;
  }
  int64_t* acc64 = scratch.acc64.data();
  const int64_t count = int64_t{rows} * n;
  std::fill(acc64, acc64 + count, int64_t{0});
  for (int32_t k0 = 0; k0 < kp; k0 += kWideDepthBlock) {
    IntGemm(a, kp, rows, w, k0, std::min(kp, k0 + kWideDepthBlock), acc, n);
    for (int64_t i = 0; i < count; ++i) acc64[i] += acc[i];
  }
  for (int32_t r = 0; r < rows; ++r) {
    for (int32_t c = 0; c < n; ++c) {
      out[r * ldo + c] = static_cast<T>(
          RequantizeChannel(acc64[int64_t{r} * n + c] + bias.at(c), c, q));
    }
  }
}

template void RequantizedGemm<int8_t>(const int16_t*, int32_t,
                                      const PackedInt16Matrix&, const BiasView&,
                                      const ChannelRequant&, bool,
                                      IntGemmScratch&, int8_t*, int64_t);
template void RequantizedGemm<uint8_t>(const int16_t*, int32_t,
                                       const PackedInt16Matrix&,
                                       const BiasView&, const ChannelRequant&,
                                       bool, IntGemmScratch&, uint8_t*,
                                       int64_t);
template void RequantizedGemm<int16_t>(const int16_t*, int32_t,
                                       const PackedInt16Matrix&,
                                       const BiasView&, const ChannelRequant&,
                                       bool, IntGemmScratch&, int16_t*,
                                       int64_t);

}  // namespace kiln::cpu::nn
