// Fused activation functions (KILN_ACTIVATION_*) applied to values. Reading
// and validating the option: kiln::sdk::ReadFusedActivation (checks.h).
#ifndef KILN_PLUGINS_CPU_KERNELS_ACTIVATION_H_
#define KILN_PLUGINS_CPU_KERNELS_ACTIVATION_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kiln/kiln_extension.h"

namespace kiln::cpu {

inline float ApplyActivation(int64_t activation, float x) {
  switch (activation) {
    case KILN_ACTIVATION_RELU:
      return std::max(0.f, x);
    case KILN_ACTIVATION_RELU_N1_TO_1:
      return std::min(1.f, std::max(-1.f, x));
    case KILN_ACTIVATION_RELU6:
      return std::min(6.f, std::max(0.f, x));
    case KILN_ACTIVATION_TANH:
      return std::tanh(x);
    case KILN_ACTIVATION_SIGN_BIT:
      return std::signbit(x) ? 1.f : 0.f;
    default:
      return x;
  }
}

// True when `activation` is a clamp (NONE, RELU, RELU_N1_TO_1, RELU6), the
// only fused activations defined for integer outputs. Sets [*lo, *hi] to the
// clamp bounds in T (NONE: T's full range). False, leaving the bounds
// untouched, for TANH, SIGN_BIT and unknown values.
template <typename T>
bool ActivationClampRange(int64_t activation, T* lo, T* hi) {
  switch (activation) {
    case KILN_ACTIVATION_NONE:
      *lo = std::numeric_limits<T>::lowest();
      *hi = std::numeric_limits<T>::max();
      return true;
    case KILN_ACTIVATION_RELU:
      *lo = T(0);
      *hi = std::numeric_limits<T>::max();
      return true;
    case KILN_ACTIVATION_RELU_N1_TO_1:
      *lo = T(-1);
      *hi = T(1);
      return true;
    case KILN_ACTIVATION_RELU6:
      *lo = T(0);
      *hi = T(6);
      return true;
    default:
      return false;
  }
}

// Applies a fused activation to `n` values in place; one switch per call, a
// tight loop per activation. NaN passes through the clamps unchanged.
template <typename T>
void ApplyActivationInPlace(int64_t activation, T* data, int64_t n) {
  if (activation == KILN_ACTIVATION_NONE) return;
  T lo, hi;
  if (ActivationClampRange<T>(activation, &lo, &hi)) {
    for (int64_t i = 0; i < n; ++i) {
      const T v = data[i];
      data[i] = v < lo ? lo : (v > hi ? hi : v);
    }
    return;
  }
  if constexpr (std::is_floating_point_v<T>) {
    if (activation == KILN_ACTIVATION_TANH) {
      for (int64_t i = 0; i < n; ++i) data[i] = std::tanh(data[i]);
    } else if (activation == KILN_ACTIVATION_SIGN_BIT) {
      for (int64_t i = 0; i < n; ++i) data[i] = std::signbit(data[i]) ? 1 : 0;
    }
  }
}

}  // namespace kiln::cpu

#endif  // KILN_PLUGINS_CPU_KERNELS_ACTIVATION_H_
