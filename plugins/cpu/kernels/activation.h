// Fused activation functions (KILN_ACTIVATION_*).
#ifndef KILN_PLUGINS_CPU_KERNELS_ACTIVATION_H_
#define KILN_PLUGINS_CPU_KERNELS_ACTIVATION_H_

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kiln/kiln_extension.h"

namespace kiln::cpu {

inline bool IsSupportedActivation(int64_t a) {
  return a == KILN_ACTIVATION_NONE || a == KILN_ACTIVATION_RELU ||
         a == KILN_ACTIVATION_RELU_N1_TO_1 || a == KILN_ACTIVATION_RELU6 ||
         a == KILN_ACTIVATION_TANH || a == KILN_ACTIVATION_SIGN_BIT;
}

inline float ApplyActivation(int64_t activation, float x) {
  switch (activation) {
    case KILN_ACTIVATION_RELU: return std::max(0.f, x);
    case KILN_ACTIVATION_RELU_N1_TO_1: return std::min(1.f, std::max(-1.f, x));
    case KILN_ACTIVATION_RELU6: return std::min(6.f, std::max(0.f, x));
    case KILN_ACTIVATION_TANH: return std::tanh(x);
    case KILN_ACTIVATION_SIGN_BIT: return std::signbit(x) ? 1.f : 0.f;
    default: return x;
  }
}

}  // namespace kiln::cpu

#endif  // KILN_PLUGINS_CPU_KERNELS_ACTIVATION_H_
