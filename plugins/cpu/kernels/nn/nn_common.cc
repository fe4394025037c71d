#include "kernels/nn/nn_common.h"

#include <sstream>

#include "kernels/nn/vec.h"

namespace kiln::cpu::nn {

std::string ShapeString(const std::vector<int32_t>& shape) {
  std::ostringstream s;
  s << "[";
  for (size_t i = 0; i < shape.size(); ++i) s << (i ? ", " : "") << shape[i];
  s << "]";
  return s.str();
}

KilnStatus ExpectTensorType(KernelContext& k, const char* op, const char* what,
                            const Tensor& t, KilnTensorType expected,
                            const char* note) {
  if (!t.present()) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, " ", what,
                  " is missing; the op needs it");
  }
  if (t.type() != expected) {
    return k.Fail(KILN_STATUS_UNIMPLEMENTED, op, " ", what, " '", t.name(),
                  "' has type ", sdk::TypeName(t.type()),
                  "; this CPU kernel supports ", sdk::TypeName(expected),
                  " only", note != nullptr ? " (" : "",
                  note != nullptr ? note : "", note != nullptr ? ")" : "");
  }
  return KILN_STATUS_OK;
}

KilnStatus ExpectTensorTypeIn(KernelContext& k, const char* op,
                              const char* what, const Tensor& t,
                              const std::vector<KilnTensorType>& allowed) {
  if (!t.present()) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, " ", what,
                  " is missing; the op needs it");
  }
  for (KilnTensorType a : allowed) {
    if (t.type() == a) return KILN_STATUS_OK;
  }
  std::string names;
  for (size_t i = 0; i < allowed.size(); ++i) {
    names += (i ? ", " : "");
    names += sdk::TypeName(allowed[i]);
  }
  return k.Fail(KILN_STATUS_UNIMPLEMENTED, op, " ", what, " '", t.name(),
                "' has type ", sdk::TypeName(t.type()),
                "; this CPU kernel supports ", names);
}

KilnStatus ExpectKnownShape(KernelContext& k, const char* op, const char* what,
                            const Tensor& t) {
  const int32_t rank = t.rank();
  if (rank < 0) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, " ", what, " '", t.name(),
                  "' has unknown rank; resize the model inputs first");
  }
  for (int32_t i = 0; i < rank; ++i) {
    if (t.dim(i) < 0) {
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, " ", what, " '", t.name(),
                    "' has unknown dimension ", i,
                    "; resize the model inputs first");
    }
  }
  return KILN_STATUS_OK;
}

KilnStatus ExpectRank(KernelContext& k, const char* op, const char* what,
                      const Tensor& t, int32_t rank) {
  KILN_SDK_RETURN_IF_ERROR(ExpectKnownShape(k, op, what, t));
  if (t.rank() != rank) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, " ", what, " '", t.name(),
                  "' must have rank ", rank, ", got shape ",
                  ShapeString(t.shape()));
  }
  return KILN_STATUS_OK;
}

KilnStatus ReadActivation(KernelContext& k, const char* op, int64_t* act) {
  *act = k.OptionInt(KILN_OPTION_FUSED_ACTIVATION, KILN_ACTIVATION_NONE);
  if (!IsSupportedActivation(*act)) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op,
                  ": unknown fused activation ", *act,
                  " (expected 0..5: NONE, RELU, RELU_N1_TO_1, RELU6, TANH, "
                  "SIGN_BIT)");
  }
  return KILN_STATUS_OK;
}

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

KilnStatus ReadWindowParams(KernelContext& k, const char* op, bool dilation,
                            WindowParams* p) {
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

KilnStatus ReadAxes(KernelContext& k, const char* op, const Tensor& axis_tensor,
                    int32_t rank, AxisList* out) {
  out->known = false;
  out->axes.clear();
  KILN_SDK_RETURN_IF_ERROR(ExpectTensorTypeIn(
      k, op, "axis input", axis_tensor, {KILN_TYPE_INT32, KILN_TYPE_INT64}));
  KILN_SDK_RETURN_IF_ERROR(ExpectKnownShape(k, op, "axis input", axis_tensor));
  const int64_t n = axis_tensor.num_elements();
  if (axis_tensor.type() == KILN_TYPE_INT32
          ? axis_tensor.data<int32_t>() == nullptr
          : axis_tensor.data<int64_t>() == nullptr) {
    return KILN_STATUS_OK;
  }
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = axis_tensor.type() == KILN_TYPE_INT32
                          ? axis_tensor.data<int32_t>()[i]
                          : axis_tensor.data<int64_t>()[i];
    if (v < -static_cast<int64_t>(rank) || v >= rank) {
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, ": axis ", v,
                    " (axis input '", axis_tensor.name(),
                    "') is out of range for an input of rank ", rank,
                    "; expected [", -rank, ", ", rank, ")");
    }
    out->axes.push_back(static_cast<int32_t>(v < 0 ? v + rank : v));
  }
  out->known = true;
  return KILN_STATUS_OK;
}

KilnStatus ExpectOutputShape(KernelContext& k, const char* op,
                             const Tensor& out,
                             const std::vector<int32_t>& expected) {
  if (out.shape() != expected) {
    return k.Fail(KILN_STATUS_FAILED_PRECONDITION, op, ": output '", out.name(),
                  "' has shape ", ShapeString(out.shape()),
                  " but the input values require ", ShapeString(expected),
                  "; the host must prepare the node again once its "
                  "value-dependent inputs are computed");
  }
  return KILN_STATUS_OK;
}

}  // namespace kiln::cpu::nn
