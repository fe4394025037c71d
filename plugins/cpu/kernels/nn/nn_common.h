// Helpers shared by the neural-net kernel group: padding arithmetic, window
// options, fused-activation clamps and axis-tensor reading. Node and tensor
// checks come from kiln/sdk/checks.h.
#ifndef KILN_PLUGINS_CPU_KERNELS_NN_NN_COMMON_H_
#define KILN_PLUGINS_CPU_KERNELS_NN_NN_COMMON_H_

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernels/activation.h"
#include "kiln/sdk/checks.h"

namespace kiln::cpu::nn {

using sdk::KernelContext;
using sdk::ShapeString;
using sdk::Tensor;
using sdk::TensorQuantization;

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
KilnStatus ReadWindowParams(KernelContext& k, bool dilation, WindowParams* p);

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

// Reads the fused activation as TFLite's convolutions and pools apply it:
// every KILN_ACTIVATION_* is accepted whatever the output type, and TANH
// and SIGN_BIT become NONE, since the output range those kernels take from
// CalculateActivationRange(Quantized) ignores them.
inline KilnStatus ReadClampActivation(KernelContext& k, int64_t* act) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ReadFusedActivation(k, KILN_TYPE_FLOAT32, act));
  *act = ClampOnlyActivation(*act);
  return KILN_STATUS_OK;
}

// Applies fused activation `act` to n floats in place.
void ApplyActivationInPlace(int64_t act, float* data, int64_t n);

// Axis values read from an int32 or int64 axis tensor. `known` is false when
// the tensor has no data yet (non-constant input before it is computed).
struct AxisList {
  bool known = false;
  std::vector<int32_t> axes;  // normalised to [0, rank), in tensor order
};
// Reads operand `axis` (int32 or int64, any known shape) and normalises each
// value against `rank`; fails for values outside [-rank, rank).
KilnStatus ReadAxes(KernelContext& k, sdk::Operand axis, int32_t rank,
                    AxisList* out);

// Product of dims [begin, end).
inline int64_t DimProduct(const std::vector<int32_t>& shape, size_t begin,
                          size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end && i < shape.size(); ++i) n *= shape[i];
  return n;
}

}  // namespace kiln::cpu::nn

#endif  // KILN_PLUGINS_CPU_KERNELS_NN_NN_COMMON_H_
