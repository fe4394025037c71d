// Helpers for running the nn kernels on the interpreter's thread pool
// (kiln.parallel_for/1 through kiln/sdk/parallel.h; serial on hosts before
// extension API 1.3). Every kernel splits over output rows or channels and
// computes each output the same way whatever range it falls in, so outputs
// are bit-identical for any thread count.
#ifndef KILN_PLUGINS_CPU_KERNELS_NN_PARALLEL_H_
#define KILN_PLUGINS_CPU_KERNELS_NN_PARALLEL_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kiln/sdk/parallel.h"
#include "kiln/sdk/plugin.h"

namespace kiln::cpu::nn {

// Work (multiply-adds) below which a kernel runs serially: waking the pool
// costs more than it saves.
inline constexpr int64_t kMinParallelMacs = int64_t{1} << 17;

// The rows of a chunk of a chunked kernel (im2col + GEMM) on `threads`
// threads: at most chunk_rows, and small enough that batches images of
// `rows` output rows make two chunks per thread, but not below min_rows.
inline int32_t ParallelChunkRows(int32_t chunk_rows, int32_t batches,
                                 int32_t rows, int32_t threads,
                                 int32_t min_rows = 16) {
  if (threads <= 1 || batches <= 0 || rows <= 0) return chunk_rows;
  const int64_t per_image =
      std::max<int64_t>(1, (int64_t{2} * threads + batches - 1) / batches);
  const int64_t want = (rows + per_image - 1) / per_image;
  return static_cast<int32_t>(
      std::min<int64_t>(chunk_rows, std::max<int64_t>(want, min_rows)));
}

// Grows per-thread scratch (threads x per_thread values) when the pool has
// more threads than prepare saw (it normally has the same).
template <typename T>
void EnsureThreadScratch(sdk::KernelContext& k, int64_t per_thread,
                         int32_t* threads, std::vector<T>* scratch) {
  const int32_t t = sdk::ParallelThreads(k.host(), k.raw_context());
  if (t > *threads ||
      static_cast<int64_t>(scratch->size()) < int64_t{*threads} * per_thread) {
    *threads = std::max(t, *threads);
    scratch->resize(static_cast<size_t>(int64_t{*threads} * per_thread));
  }
}

// fn(begin, end, thread_index) over `rows` independent output rows of
// row_macs multiply-adds each, on the pool when there is enough work.
template <typename Fn>
KilnStatus ParallelRows(sdk::KernelContext& k, int64_t rows, int64_t row_macs,
                        Fn&& fn) {
  row_macs = std::max<int64_t>(1, row_macs);
  if (rows <= 0) return KILN_STATUS_OK;
  if (rows * row_macs < kMinParallelMacs) {
    fn(int64_t{0}, rows, int32_t{0});
    return KILN_STATUS_OK;
  }
  const int64_t min_rows =
      std::max<int64_t>(1, kMinParallelMacs / 4 / row_macs);
  return sdk::ParallelFor(k.host(), k.raw_context(), rows, min_rows, fn);
}

}  // namespace kiln::cpu::nn

#endif  // KILN_PLUGINS_CPU_KERNELS_NN_PARALLEL_H_
