// Helpers shared by the neural-net kernel group: type refusals, padding
// arithmetic, fused-activation clamps and axis-tensor reading.
#ifndef KILN_PLUGINS_CPU_KERNELS_NN_NN_COMMON_H_
#define KILN_PLUGINS_CPU_KERNELS_NN_NN_COMMON_H_

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernels/activation.h"
#include "kiln/sdk/plugin.h"

namespace kiln::cpu::nn {

using sdk::KernelContext;
using sdk::Tensor;

// Fails unless `t` is present and has type `expected`. The message names the
// op, the tensor and what the kernel supports, e.g. "CONV_2D input 0 'x' has
// type INT8; this kernel supports FLOAT32 only (quantized and hybrid CONV_2D
// are not implemented)".
KilnStatus ExpectTensorType(KernelContext& k, const char* op, const char* what,
                            const Tensor& t, KilnTensorType expected,
                            const char* note = nullptr);

// Fails unless `t` is present and its type is one of `allowed`.
KilnStatus ExpectTensorTypeIn(KernelContext& k, const char* op,
                              const char* what, const Tensor& t,
                              const std::vector<KilnTensorType>& allowed);

// Fails unless `t` is present with rank `rank` and all dims known (>= 0).
KilnStatus ExpectRank(KernelContext& k, const char* op, const char* what,
                      const Tensor& t, int32_t rank);

// Fails unless all dims of `t` are known (>= 0) and its rank is known.
KilnStatus ExpectKnownShape(KernelContext& k, const char* op, const char* what,
                            const Tensor& t);

// Reads and validates KILN_OPTION_FUSED_ACTIVATION.
KilnStatus ReadActivation(KernelContext& k, const char* op, int64_t* act);

// Output extent of a window op along one spatial dim (TFLite semantics).
// Returns -1 when the effective filter is larger than a VALID input or the
// parameters are not positive.
int32_t WindowOutputSize(int64_t padding, int32_t in, int32_t filter,
                         int32_t stride, int32_t dilation);

// Leading padding of a window op (TFLite: half the total, floor).
int32_t WindowPadBefore(int32_t in, int32_t filter, int32_t stride,
                        int32_t dilation, int32_t out);

// Reads stride/dilation/padding options shared by the conv and pool ops and
// validates them (strides and dilations >= 1, padding SAME or VALID).
struct WindowParams {
  int64_t padding = KILN_PADDING_SAME;
  int32_t stride_h = 1, stride_w = 1;
  int32_t dilation_h = 1, dilation_w = 1;
};
KilnStatus ReadWindowParams(KernelContext& k, const char* op, bool dilation,
                            WindowParams* p);

// The clamp range of a fused activation that is a clamp (NONE, RELU,
// RELU_N1_TO_1, RELU6). False for TANH and SIGN_BIT, which need
// ApplyActivation per element.
inline bool ActivationClamp(int64_t act, float* lo, float* hi) {
  // NONE is a no-op clamp (infinities pass through); the others share the
  // elementwise kernels' bounds.
  *lo = -std::numeric_limits<float>::infinity();
  *hi = std::numeric_limits<float>::infinity();
  return act == KILN_ACTIVATION_NONE ||
         ActivationClampRange<float>(act, lo, hi);
}

// The activation a TFLite float kernel applies when it takes its output
// range from CalculateActivationRange (CONV_2D, DEPTHWISE_CONV_2D, the
// pools): the clamps as they are, TANH and SIGN_BIT as NONE, since that
// range ignores them.
inline int64_t ClampOnlyActivation(int64_t act) {
  float lo, hi;
  return ActivationClamp(act, &lo, &hi) ? act : KILN_ACTIVATION_NONE;
}

// Applies fused activation `act` to n floats in place.
void ApplyActivationInPlace(int64_t act, float* data, int64_t n);

// Axis values read from an int32 or int64 axis tensor. `known` is false when
// the tensor has no data yet (non-constant input before it is computed).
struct AxisList {
  bool known = false;
  std::vector<int32_t> axes;  // normalised to [0, rank), in tensor order
};
// Reads `axis_tensor` (int32 or int64, any shape) and normalises each value
// against `rank`; fails for values outside [-rank, rank).
KilnStatus ReadAxes(KernelContext& k, const char* op, const Tensor& axis_tensor,
                    int32_t rank, AxisList* out);

// Product of dims [begin, end).
inline int64_t DimProduct(const std::vector<int32_t>& shape, size_t begin,
                          size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end && i < shape.size(); ++i) n *= shape[i];
  return n;
}

// Fails with a precise message when `out` does not have shape `expected`;
// used by invoke for outputs whose shape depends on input values (the host
// prepares again with the values present before invoking).
KilnStatus ExpectOutputShape(KernelContext& k, const char* op,
                             const Tensor& out,
                             const std::vector<int32_t>& expected);

std::string ShapeString(const std::vector<int32_t>& shape);

}  // namespace kiln::cpu::nn

#endif  // KILN_PLUGINS_CPU_KERNELS_NN_NN_COMMON_H_
