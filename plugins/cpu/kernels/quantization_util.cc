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

}  // namespace kiln::cpu
