#include "kernels/broadcast.h"

namespace kiln::cpu {

bool BroadcastShapes(const std::vector<int32_t>& a,
                     const std::vector<int32_t>& b, std::vector<int32_t>* out) {
  const size_t rank = a.size() > b.size() ? a.size() : b.size();
  if (rank > kMaxBroadcastRank) return false;
  out->assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int32_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int32_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) return false;
    (*out)[i] = da == 1 ? db : da;
  }
  return true;
}

std::array<int64_t, kMaxBroadcastRank> BroadcastStrides(
    const std::vector<int32_t>& shape, const std::vector<int32_t>& out_shape) {
  std::array<int64_t, kMaxBroadcastRank> strides{};
  const size_t rank = out_shape.size();
  const size_t offset = rank - shape.size();
  int64_t stride = 1;
  for (size_t i = rank; i-- > 0;) {
    if (i < offset) {
      strides[i] = 0;
      continue;
    }
    const int32_t d = shape[i - offset];
    strides[i] = d == 1 ? 0 : stride;
    stride *= d;
  }
  return strides;
}

bool MakeBroadcastPlan(const std::vector<std::vector<int32_t>>& operand_shapes,
                       const std::vector<int32_t>& out_shape,
                       BroadcastPlan* plan) {
  const int num_operands = static_cast<int>(operand_shapes.size());
  const size_t out_rank = out_shape.size();
  if (num_operands < 1 || num_operands > kMaxBroadcastOperands ||
      out_rank > static_cast<size_t>(kMaxBroadcastRank)) {
    return false;
  }
  *plan = BroadcastPlan();
  plan->num_operands = num_operands;
  plan->total = 1;
  for (int32_t d : out_shape) plan->total *= d;

  // Per kept output dim: its extent and which operands broadcast along it.
  int merged = 0;
  std::array<unsigned, kMaxBroadcastRank> pattern{};
  for (size_t d = 0; d < out_rank; ++d) {
    const int32_t extent = out_shape[d];
    unsigned broadcast_bits = 0;
    for (int op = 0; op < num_operands; ++op) {
      const std::vector<int32_t>& shape = operand_shapes[op];
      if (shape.size() > out_rank) return false;
      const size_t lead = out_rank - shape.size();
      const int32_t dim = d < lead ? 1 : shape[d - lead];
      if (dim != extent && dim != 1) return false;
      if (dim == 1 && extent != 1) broadcast_bits |= 1u << op;
    }
    if (extent == 1) continue;  // contributes nothing to any offset
    if (merged > 0 && pattern[merged - 1] == broadcast_bits) {
      plan->extent[merged - 1] *= extent;
    } else {
      pattern[merged] = broadcast_bits;
      plan->extent[merged] = extent;
      ++merged;
    }
  }
  if (merged == 0) {  // a single element (or an empty output of rank 0)
    plan->rank = 1;
    plan->extent[0] = plan->total == 0 ? 0 : 1;
    return true;
  }
  plan->rank = merged;
  for (int op = 0; op < num_operands; ++op) {
    int64_t stride = 1;
    for (int d = merged - 1; d >= 0; --d) {
      if (pattern[d] & (1u << op)) {
        plan->strides[op][d] = 0;
      } else {
        plan->strides[op][d] = stride;
        stride *= plan->extent[d];
      }
    }
  }
  return true;
}

}  // namespace kiln::cpu
