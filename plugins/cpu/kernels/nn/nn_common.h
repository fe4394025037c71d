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

// The buffers of an int8 node with inputs (input, weights, optional int32
// bias) and one int8 output, at invoke. bias is null when omitted.
struct Int8Buffers {
  const int8_t* input = nullptr;
  const int8_t* weights = nullptr;
  const int32_t* bias = nullptr;
  int8_t* output = nullptr;
};
// Fills *b, checking each buffer's size; `weights` names input 1.
KilnStatus ReadInt8Buffers(KernelContext& k, sdk::Operand weights,
                           Int8Buffers* b);

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
