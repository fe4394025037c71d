// Batched transposes of matrices of blocks, the shape most TRANSPOSE nodes
// take once size-1 dims are dropped and dims that stay adjacent are merged:
// out[b][c][r][l] = in[b][r][c][l] for b < batches, r < rows, c < cols and
// l < block. A transformer's head split [1, 64, 4, 32] -> [1, 4, 64, 32] is
// 1 x 64 x 4 blocks of 32; its K^T [1, 64, 4, 32] -> [1, 4, 32, 64] is 1 x
// 64 x 128 blocks of 1; NHWC <-> NCHW are batches of HW x C / C x HW.
#ifndef KILN_PLUGINS_CPU_KERNELS_DATA_BLOCK_TRANSPOSE_H_
#define KILN_PLUGINS_CPU_KERNELS_DATA_BLOCK_TRANSPOSE_H_

#include <cstddef>
#include <cstdint>

namespace kiln::cpu::data {

struct BlockTranspose {
  int64_t batches = 1, rows = 1, cols = 1, block = 1;
};

// The block transpose that permutes the `rank` dims of `shape` by `perm` (a
// valid permutation of 0..rank-1), or false when the permutation is not of
// that form (or rank > 8).
bool MakeBlockTranspose(const int32_t* shape, const int64_t* perm, size_t rank,
                        BlockTranspose* bt);

// Moves the elements of `in` (element_bytes each: 1, 2, 4 or 8) to `out`
// as `bt` says. in and out must not overlap.
void RunBlockTranspose(const BlockTranspose& bt, size_t element_bytes,
                       const void* in, void* out);

// out[c][r] = in[r][c] for an r x c matrix of 32-bit values in 8x8 AVX2
// tiles (the edges in scalar code); false, doing nothing, when the CPU or
// the build lacks AVX2.
bool Transpose32Avx2(const uint32_t* in, int64_t rows, int64_t cols,
                     uint32_t* out);

}  // namespace kiln::cpu::data

#endif  // KILN_PLUGINS_CPU_KERNELS_DATA_BLOCK_TRANSPOSE_H_
