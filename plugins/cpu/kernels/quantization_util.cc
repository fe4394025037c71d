#include "kernels/quantization_util.h"

#include <algorithm>
#include <cmath>

namespace kiln::cpu {

QuantizedMultiplier QuantizeMultiplier(double real_multiplier) {
  QuantizedMultiplier q;
  if (real_multiplier == 0.0) return q;
  int exponent = 0;
  const double significand = std::frexp(real_multiplier, &exponent);
  int64_t fixed = static_cast<int64_t>(
      std::round(significand * static_cast<double>(int64_t{1} << 31)));
  if (fixed == (int64_t{1} << 31)) {
    fixed /= 2;
    ++exponent;
  }
  if (exponent < -31) {
    exponent = 0;
    fixed = 0;
  }
  if (exponent > 30) {
    exponent = 30;
    fixed = (int64_t{1} << 31) - 1;
  }
  q.multiplier = static_cast<int32_t>(fixed);
  q.shift = exponent;
  return q;
}

bool QuantizedActivationRange(int64_t activation, float scale,
                              int32_t zero_point, int32_t qmin, int32_t qmax,
                              int32_t* lo, int32_t* hi) {
  const auto quantize = [scale, zero_point](float real) {
    return zero_point + static_cast<int32_t>(std::round(real / scale));
  };
  switch (activation) {
    case KILN_ACTIVATION_NONE:
      *lo = qmin;
      *hi = qmax;
      return true;
    case KILN_ACTIVATION_RELU:
      *lo = std::max(qmin, quantize(0.f));
      *hi = qmax;
      return true;
    case KILN_ACTIVATION_RELU6:
      *lo = std::max(qmin, quantize(0.f));
      *hi = std::min(qmax, quantize(6.f));
      return true;
    case KILN_ACTIVATION_RELU_N1_TO_1:
      *lo = std::max(qmin, quantize(-1.f));
      *hi = std::min(qmax, quantize(1.f));
      return true;
    default:
      return false;
  }
}

KilnStatus ReadTensorQuantization(sdk::KernelContext& k, const char* op,
                                  const char* what, const sdk::Tensor& t,
                                  int32_t channels, int32_t axis,
                                  TensorQuantization* out) {
  KilnQuantizationParams q{};
  KILN_SDK_RETURN_IF_ERROR(k.Quantization(t, &q));
  if (q.num_channels <= 0 || q.scales == nullptr || q.zero_points == nullptr) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, " ", what, " '", t.name(),
                  "' has type ", sdk::TypeName(t.type()),
                  " but no quantization parameters; quantized ", op,
                  " needs a scale and zero point (re-export the model with "
                  "quantization parameters)");
  }
  const bool per_tensor = q.num_channels == 1;
  const bool per_channel = channels > 0 && q.num_channels == channels &&
                           q.quantized_dimension == axis;
  if (!per_tensor && !per_channel) {
    if (channels > 0) {
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, " ", what, " '", t.name(),
                    "' has ", q.num_channels,
                    " quantization channels along dimension ",
                    q.quantized_dimension, "; expected 1 (per-tensor) or ",
                    channels, " along dimension ", axis, " (per-channel)");
    }
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, " ", what, " '", t.name(),
                  "' has ", q.num_channels,
                  " quantization channels; this kernel needs per-tensor "
                  "quantization (one scale and zero point)");
  }
  out->scales.assign(q.scales, q.scales + q.num_channels);
  out->zero_points.resize(static_cast<size_t>(q.num_channels));
  for (int32_t i = 0; i < q.num_channels; ++i) {
    const float scale = q.scales[i];
    if (!(scale > 0.f) || !std::isfinite(scale)) {
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, " ", what, " '", t.name(),
                    "' has scale ", scale, " at channel ", i,
                    "; quantization scales must be finite and positive");
    }
    out->zero_points[static_cast<size_t>(i)] =
        static_cast<int32_t>(q.zero_points[i]);
  }
  out->quantized_dimension = q.quantized_dimension;
  return KILN_STATUS_OK;
}

}  // namespace kiln::cpu
