// N-d broadcasting helpers (NumPy rules) for the CPU kernels, rank <= 6.
#ifndef KILN_PLUGINS_CPU_KERNELS_BROADCAST_H_
#define KILN_PLUGINS_CPU_KERNELS_BROADCAST_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace kiln::cpu {

inline constexpr int kMaxBroadcastRank = 6;

// Output shape of broadcasting a and b; false if incompatible.
bool BroadcastShapes(const std::vector<int32_t>& a,
                     const std::vector<int32_t>& b, std::vector<int32_t>* out);

// Element strides of `shape` aligned right to `out_rank` dims, 0 for
// broadcast (size-1 or missing) dims.
std::array<int64_t, kMaxBroadcastRank> BroadcastStrides(
    const std::vector<int32_t>& shape, const std::vector<int32_t>& out_shape);

// Calls fn(out_index, a_index, b_index) for every output element.
template <typename Fn>
void ForEachBroadcast(const std::vector<int32_t>& a_shape,
                      const std::vector<int32_t>& b_shape,
                      const std::vector<int32_t>& out_shape, Fn&& fn) {
  int64_t total = 1;
  for (int32_t d : out_shape) total *= d;
  if (total == 0) return;
  if (a_shape == b_shape) {
    for (int64_t i = 0; i < total; ++i) fn(i, i, i);
    return;
  }
  const int rank = static_cast<int>(out_shape.size());
  const auto sa = BroadcastStrides(a_shape, out_shape);
  const auto sb = BroadcastStrides(b_shape, out_shape);
  std::array<int32_t, kMaxBroadcastRank> idx{};
  int64_t ia = 0, ib = 0;
  for (int64_t i = 0; i < total; ++i) {
    fn(i, ia, ib);
    for (int d = rank - 1; d >= 0; --d) {
      if (++idx[d] < out_shape[d]) {
        ia += sa[d];
        ib += sb[d];
        break;
      }
      ia -= sa[d] * (out_shape[d] - 1);
      ib -= sb[d] * (out_shape[d] - 1);
      idx[d] = 0;
    }
  }
}

}  // namespace kiln::cpu

#endif  // KILN_PLUGINS_CPU_KERNELS_BROADCAST_H_
