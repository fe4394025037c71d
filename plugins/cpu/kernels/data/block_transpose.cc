#include "kernels/data/block_transpose.h"

#include <algorithm>
#include <cstring>

namespace kiln::cpu::data {

bool MakeBlockTranspose(const int32_t* shape, const int64_t* perm, size_t rank,
                        BlockTranspose* bt) {
  if (rank > 8) return false;
  // Input dims of extent > 1 renumbered 0.., in output order.
  int32_t renumber[8];
  int32_t kept = 0;
  for (size_t d = 0; d < rank; ++d) {
    renumber[d] = shape[d] == 1 ? -1 : kept++;
  }
  int32_t order[8];  // output dim -> kept input dim
  int32_t n = 0;
  for (size_t i = 0; i < rank; ++i) {
    const int32_t d = renumber[perm[i]];
    if (d >= 0) order[n++] = d;
  }
  // Runs of output dims that read consecutive input dims merge into one;
  // group g covers kept input dims [start[g], start[g] + len[g]).
  int32_t start[8], len[8];
  int32_t groups = 0;
  for (int32_t i = 0; i < n; ++i) {
    if (groups > 0 && order[i] == start[groups - 1] + len[groups - 1]) {
      ++len[groups - 1];
    } else {
      start[groups] = order[i];
      len[groups] = 1;
      ++groups;
    }
  }
  // Extent of each group, and its rank among the groups in input order.
  int64_t kept_extent[8];
  for (size_t d = 0; d < rank; ++d) {
    if (renumber[d] >= 0) kept_extent[renumber[d]] = shape[d];
  }
  int64_t extent[8];
  int32_t in_rank[8];
  for (int32_t g = 0; g < groups; ++g) {
    extent[g] = 1;
    for (int32_t j = 0; j < len[g]; ++j) extent[g] *= kept_extent[start[g] + j];
    in_rank[g] = 0;
    for (int32_t h = 0; h < groups; ++h) in_rank[g] += start[h] < start[g];
  }
  // Output groups in input-rank terms: [0 ..] p leading identity groups
  // (merged: p <= 1), the swapped pair, an optional kept last group.
  *bt = BlockTranspose{};
  if (groups <= 1) {
    bt->block = groups == 1 ? extent[0] : 1;
    return true;
  }
  int32_t p = in_rank[0] == 0 ? 1 : 0;
  if (p == 1) bt->batches = extent[0];
  if (groups - p != 2 && groups - p != 3) return false;
  if (in_rank[p] != p + 1 || in_rank[p + 1] != p) return false;
  if (groups - p == 3 && in_rank[p + 2] != p + 2) return false;
  bt->cols = extent[p];  // output-major: the input's inner of the pair
  bt->rows = extent[p + 1];
  bt->block = groups - p == 3 ? extent[p + 2] : 1;
  return true;
}

namespace {

template <typename T>
void TransposeScalar(const T* in, int64_t rows, int64_t cols, T* out) {
  constexpr int64_t kTile = 16;
  for (int64_t r0 = 0; r0 < rows; r0 += kTile) {
    const int64_t r1 = std::min(rows, r0 + kTile);
    for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
      const int64_t c1 = std::min(cols, c0 + kTile);
      for (int64_t c = c0; c < c1; ++c) {
        for (int64_t r = r0; r < r1; ++r) out[c * rows + r] = in[r * cols + c];
      }
    }
  }
}

template <typename T>
void TransposeBatches(const BlockTranspose& bt, const T* in, T* out) {
  const int64_t matrix = bt.rows * bt.cols;
  for (int64_t b = 0; b < bt.batches; ++b) {
    const T* src = in + b * matrix;
    T* dst = out + b * matrix;
    if constexpr (sizeof(T) == 4) {
      if (Transpose32Avx2(reinterpret_cast<const uint32_t*>(src), bt.rows,
                          bt.cols, reinterpret_cast<uint32_t*>(dst))) {
        continue;
      }
    }
    TransposeScalar(src, bt.rows, bt.cols, dst);
  }
}

// Blocks of `bytes` (a multiple of 16) copied 16 bytes at a time inline:
// rows of a head split are 128 bytes, too short for a memcpy call.
void CopyBlocks16(const BlockTranspose& bt, int64_t bytes,
                  const unsigned char* in, unsigned char* out) {
  // In input order: consecutive loads stream, the stores go to bt.cols
  // output rows at once.
  const int64_t matrix = bt.rows * bt.cols * bytes;
  for (int64_t b = 0; b < bt.batches; ++b, in += matrix, out += matrix) {
    const unsigned char* s = in;
    for (int64_t r = 0; r < bt.rows; ++r) {
      for (int64_t c = 0; c < bt.cols; ++c, s += bytes) {
        unsigned char* d = out + (c * bt.rows + r) * bytes;
        for (int64_t i = 0; i < bytes; i += 16) std::memcpy(d + i, s + i, 16);
      }
    }
  }
}

}  // namespace

void RunBlockTranspose(const BlockTranspose& bt, size_t element_bytes,
                       const void* in, void* out) {
  const auto* src = static_cast<const unsigned char*>(in);
  auto* dst = static_cast<unsigned char*>(out);
  const int64_t bytes = bt.block * static_cast<int64_t>(element_bytes);
  if (bt.rows == 1 || bt.cols == 1) {  // nothing moves: one copy
    std::memcpy(dst, src,
                static_cast<size_t>(bt.batches * bt.rows * bt.cols * bytes));
    return;
  }
  if (bt.block > 1) {
    if (bytes % 16 == 0 && bytes <= 512) {
      CopyBlocks16(bt, bytes, src, dst);
      return;
    }
    for (int64_t b = 0; b < bt.batches; ++b) {
      const unsigned char* s = src + b * bt.rows * bt.cols * bytes;
      for (int64_t c = 0; c < bt.cols; ++c) {
        for (int64_t r = 0; r < bt.rows; ++r) {
          std::memcpy(dst, s + (r * bt.cols + c) * bytes,
                      static_cast<size_t>(bytes));
          dst += bytes;
        }
      }
    }
    return;
  }
  switch (element_bytes) {
    case 1:
      return TransposeBatches(bt, src, dst);
    case 2:
      return TransposeBatches(bt, reinterpret_cast<const uint16_t*>(src),
                              reinterpret_cast<uint16_t*>(dst));
    case 4:
      return TransposeBatches(bt, reinterpret_cast<const uint32_t*>(src),
                              reinterpret_cast<uint32_t*>(dst));
    case 8:
      return TransposeBatches(bt, reinterpret_cast<const uint64_t*>(src),
                              reinterpret_cast<uint64_t*>(dst));
    default:
      return;
  }
}

}  // namespace kiln::cpu::data
