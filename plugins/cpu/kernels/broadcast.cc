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

}  // namespace kiln::cpu
