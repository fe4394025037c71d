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

// ---- Row-wise broadcasting for kernels (computed once in prepare) ----------

inline constexpr int kMaxBroadcastOperands = 3;

// How to walk an output and up to kMaxBroadcastOperands operands broadcast to
// it. Output dims of extent 1 are dropped and adjacent dims with the same
// broadcast pattern are merged, so same-shape operands become one row and a
// scalar operand becomes a row with stride 0. Plain data: copy it freely,
// build it in prepare, use it in invoke without allocating.
struct BroadcastPlan {
  int64_t total = 0;  // output elements
  int rank = 1;       // merged dims, 1..kMaxBroadcastRank
  int num_operands = 0;
  std::array<int64_t, kMaxBroadcastRank> extent{};
  // strides[op][d]: element stride of operand `op` along merged dim d; 0 where
  // it is broadcast. The innermost stride is always 0 or 1.
  std::array<std::array<int64_t, kMaxBroadcastRank>, kMaxBroadcastOperands>
      strides{};

  int64_t inner_stride(int op) const { return strides[op][rank - 1]; }
};

// Plan for `operand_shapes` (1..kMaxBroadcastOperands, each of rank <=
// out_shape's) broadcast to `out_shape`. Returns false, leaving *plan
// unspecified, if an operand cannot broadcast to out_shape or a rank exceeds
// kMaxBroadcastRank.
bool MakeBroadcastPlan(const std::vector<std::vector<int32_t>>& operand_shapes,
                       const std::vector<int32_t>& out_shape,
                       BroadcastPlan* plan);

// Calls row(out_offset, operand_offsets, count) for every innermost row of the
// plan, in output order. Within a row, the output advances by 1 and operand i
// by plan.inner_stride(i).
template <typename Fn>
void ForEachBroadcastRow(const BroadcastPlan& plan, Fn&& row) {
  if (plan.total == 0) return;
  const int rank = plan.rank;
  const int64_t inner = plan.extent[rank - 1];
  std::array<int64_t, kMaxBroadcastRank> index{};
  std::array<int64_t, kMaxBroadcastOperands> offsets{};
  int64_t out_offset = 0;
  for (;;) {
    row(out_offset, static_cast<const int64_t*>(offsets.data()), inner);
    out_offset += inner;
    int d = rank - 2;
    for (; d >= 0; --d) {
      for (int op = 0; op < plan.num_operands; ++op) {
        offsets[op] += plan.strides[op][d];
      }
      if (++index[d] < plan.extent[d]) break;
      for (int op = 0; op < plan.num_operands; ++op) {
        offsets[op] -= plan.strides[op][d] * plan.extent[d];
      }
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

// out[i] = op(a[ia], b[ib]) over a two-operand plan, with tight inner loops
// for the same-shape, scalar-a and scalar-b row kinds.
template <typename A, typename B, typename Out, typename Op>
void BroadcastBinary(const BroadcastPlan& plan, const A* a, const B* b,
                     Out* out, Op op) {
  const int64_t sa = plan.inner_stride(0);
  const int64_t sb = plan.inner_stride(1);
  ForEachBroadcastRow(plan, [&](int64_t o, const int64_t* off, int64_t n) {
    const A* pa = a + off[0];
    const B* pb = b + off[1];
    Out* po = out + o;
    if (sa == 1 && sb == 1) {
      for (int64_t i = 0; i < n; ++i) po[i] = op(pa[i], pb[i]);
    } else if (sa == 1) {
      const B y = *pb;
      for (int64_t i = 0; i < n; ++i) po[i] = op(pa[i], y);
    } else if (sb == 1) {
      const A x = *pa;
      for (int64_t i = 0; i < n; ++i) po[i] = op(x, pb[i]);
    } else {
      const Out v = op(*pa, *pb);
      for (int64_t i = 0; i < n; ++i) po[i] = v;
    }
  });
}

}  // namespace kiln::cpu

#endif  // KILN_PLUGINS_CPU_KERNELS_BROADCAST_H_
