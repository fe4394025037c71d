#include "kernels/nn/requantize.h"

namespace kiln::cpu::nn {
namespace {

const RequantRowKernels& RowKernels() {
  static const RequantRowKernels kernels = RequantRowKernelsAvx2();
  return kernels;
}

template <typename T>
auto RowKernelFor(const RequantRowKernels& k) {
  if constexpr (std::is_same_v<T, int8_t>) {
    return k.int8;
  } else {
    return k.uint8;
  }
}

}  // namespace

template <typename T>
void RequantizeRows(const int32_t* acc, int32_t rows, int32_t n,
                    const int32_t* bias, const ChannelRequant& q, T* out,
                    int64_t ldo) {
  const auto vector_row = RowKernelFor<T>(RowKernels());
  const bool lanes_filled =
      q.requant_in_double ? q.real_multipliers.size() >= static_cast<size_t>(n)
                          : q.lanes.multiplier.size() >= static_cast<size_t>(n);
  const double* real_multipliers =
      q.requant_in_double ? q.real_multipliers.data() : nullptr;
  const int32_t vector_count =
      vector_row != nullptr && lanes_filled ? n / 8 * 8 : 0;
  for (int32_t r = 0; r < rows; ++r) {
    const int32_t* row = acc + int64_t{r} * n;
    T* dst = out + r * ldo;
    if (vector_count > 0) {
      vector_row(
          RequantRowArgs{row, bias, vector_count, &q.lanes, q.output_offset,
                         q.act_min, q.act_max, real_multipliers},
          dst);
    }
    for (int32_t c = vector_count; c < n; ++c) {
      const int32_t v = bias != nullptr ? WrappingAdd(row[c], bias[c]) : row[c];
      dst[c] = static_cast<T>(RequantizeChannel(v, c, q));
    }
  }
}

template void RequantizeRows<int8_t>(const int32_t*, int32_t, int32_t,
                                     const int32_t*, const ChannelRequant&,
                                     int8_t*, int64_t);
template void RequantizeRows<uint8_t>(const int32_t*, int32_t, int32_t,
                                      const int32_t*, const ChannelRequant&,
                                      uint8_t*, int64_t);

}  // namespace kiln::cpu::nn
