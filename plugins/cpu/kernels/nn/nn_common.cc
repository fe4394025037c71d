#include "kernels/nn/nn_common.h"

#include "kernels/nn/vec.h"

namespace kiln::cpu::nn {

int32_t WindowOutputSize(int64_t padding, int32_t in, int32_t filter,
                         int32_t stride, int32_t dilation) {
  if (in < 0 || filter <= 0 || stride <= 0 || dilation <= 0) return -1;
  const int64_t effective = (static_cast<int64_t>(filter) - 1) * dilation + 1;
  if (padding == KILN_PADDING_SAME) {
    return static_cast<int32_t>((static_cast<int64_t>(in) + stride - 1) /
                                stride);
  }
  if (effective > in) return -1;
  return static_cast<int32_t>((in - effective + stride) / stride);
}

int32_t WindowPadBefore(int32_t in, int32_t filter, int32_t stride,
                        int32_t dilation, int32_t out) {
  const int64_t effective = (static_cast<int64_t>(filter) - 1) * dilation + 1;
  const int64_t total =
      (static_cast<int64_t>(out) - 1) * stride + effective - in;
  return total > 0 ? static_cast<int32_t>(total / 2) : 0;
}

KilnStatus ReadWindowParams(KernelContext& k, bool dilation, WindowParams* p) {
  const char* op = sdk::OpName(k);
  p->padding = k.OptionInt(KILN_OPTION_PADDING, KILN_PADDING_SAME);
  if (p->padding != KILN_PADDING_SAME && p->padding != KILN_PADDING_VALID) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, ": unknown padding ",
                  p->padding, " (expected 0 SAME or 1 VALID)");
  }
  const int64_t sh = k.OptionInt(KILN_OPTION_STRIDE_H, 1);
  const int64_t sw = k.OptionInt(KILN_OPTION_STRIDE_W, 1);
  const int64_t dh = dilation ? k.OptionInt(KILN_OPTION_DILATION_H, 1) : 1;
  const int64_t dw = dilation ? k.OptionInt(KILN_OPTION_DILATION_W, 1) : 1;
  constexpr int64_t kMax = 1 << 20;
  if (sh < 1 || sw < 1 || sh > kMax || sw > kMax) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op,
                  ": strides must be >= 1, "
                  "got stride_h ",
                  sh, " stride_w ", sw);
  }
  if (dh < 1 || dw < 1 || dh > kMax || dw > kMax) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op,
                  ": dilations must be >= 1, "
                  "got dilation_h ",
                  dh, " dilation_w ", dw);
  }
  p->stride_h = static_cast<int32_t>(sh);
  p->stride_w = static_cast<int32_t>(sw);
  p->dilation_h = static_cast<int32_t>(dh);
  p->dilation_w = static_cast<int32_t>(dw);
  return KILN_STATUS_OK;
}

void ApplyActivationInPlace(int64_t act, float* data, int64_t n) {
  float lo, hi;
  if (ActivationClamp(act, &lo, &hi)) {
    if (act == KILN_ACTIVATION_NONE) return;
    vec::Clamp(data, lo, hi, n);
    return;
  }
  for (int64_t i = 0; i < n; ++i) data[i] = ApplyActivation(act, data[i]);
}

KilnStatus ReadAxes(KernelContext& k, sdk::Operand axis, int32_t rank,
                    AxisList* out) {
  out->known = false;
  out->axes.clear();
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectKnownShape(k, axis));
  std::vector<int64_t> values;
  KILN_SDK_RETURN_IF_ERROR(sdk::ReadIntegers(k, axis, &values, &out->known));
  for (const int64_t v : values) {
    int32_t normalized = 0;
    KILN_SDK_RETURN_IF_ERROR(
        sdk::NormalizeAxis(k, "axis", v, rank, &normalized));
    out->axes.push_back(normalized);
  }
  return KILN_STATUS_OK;
}

}  // namespace kiln::cpu::nn
