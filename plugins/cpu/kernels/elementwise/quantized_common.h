// Per-tensor quantization reading shared by the quantized elementwise
// kernels (quantized_unary.cc, quantized_binary.cc). Internal to
// kernels/elementwise.
#ifndef KILN_PLUGINS_CPU_KERNELS_ELEMENTWISE_QUANTIZED_COMMON_H_
#define KILN_PLUGINS_CPU_KERNELS_ELEMENTWISE_QUANTIZED_COMMON_H_

#include <cstdint>

#include "kiln/sdk/checks.h"
#include "kiln/sdk/plugin.h"

namespace kiln::cpu::elementwise {

// A per-tensor affine quantization: real = scale * (q - zero_point).
struct Affine {
  float scale = 1.f;
  int32_t zero_point = 0;
};

// [*lo, *hi]: the codes of UINT8, INT8 or (any other type) INT16.
inline void QuantizedTypeRange(KilnTensorType type, int32_t* lo, int32_t* hi) {
  switch (type) {
    case KILN_TYPE_UINT8:
      *lo = 0, *hi = 255;
      return;
    case KILN_TYPE_INT8:
      *lo = -128, *hi = 127;
      return;
    default:
      *lo = -32768, *hi = 32767;
      return;
  }
}

// Reads operand `o`'s per-tensor quantization. Fails, naming the op and the
// tensor, when it has none, several channels or a scale that is not finite
// and positive.
inline KilnStatus ReadAffine(sdk::KernelContext& k, sdk::Operand o,
                             Affine* out) {
  sdk::TensorQuantization q;
  KILN_SDK_RETURN_IF_ERROR(sdk::ReadQuantization(k, o, sdk::kPerTensor, &q));
  out->scale = q.scales[0];
  out->zero_point = q.zero_points[0];
  return KILN_STATUS_OK;
}

}  // namespace kiln::cpu::elementwise

#endif  // KILN_PLUGINS_CPU_KERNELS_ELEMENTWISE_QUANTIZED_COMMON_H_
