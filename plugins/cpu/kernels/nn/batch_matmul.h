// BATCH_MATMUL shape planning (adj_x / adj_y, broadcast batch dimensions),
// shared by its float kernel (fully_connected.cc) and its integer kernel
// (int8, int16x8; bit-exact with TFLite's reference BatchMatMul).
#ifndef KILN_PLUGINS_CPU_KERNELS_NN_BATCH_MATMUL_H_
#define KILN_PLUGINS_CPU_KERNELS_NN_BATCH_MATMUL_H_

#include <cstdint>
#include <vector>

#include "kernels/nn/int_gemm.h"
#include "kernels/nn/quantized_common.h"

namespace kiln::cpu::nn {

// out[b] (m x n) = lhs[b] (m x depth) * rhs[b] (depth x n), batches
// broadcast.
struct BatchMatMulPlan {
  bool adj_x = false, adj_y = false;
  int32_t m = 0, n = 0, depth = 0;
  std::vector<int32_t> lhs_batch, rhs_batch, out_batch;
  std::vector<int32_t> out_shape;
  int64_t rhs_batches() const {
    return DimProduct(rhs_batch, 0, rhs_batch.size());
  }
};

// Reads input 0 (lhs), input 1 (rhs) and the adj options into *plan; fails
// on ranks below 2, mismatched contracted dimensions or batch dimensions
// that do not broadcast.
KilnStatus PlanBatchMatMul(KernelContext& k, BatchMatMulPlan* plan);

// Packs every rhs batch matrix (offset added to each value) into *packed
// (already sized: one depth x n matrix per rhs batch).
template <typename T>
void PackRhsMatrices(const BatchMatMulPlan& p, const T* rhs, int32_t offset,
                     std::vector<PackedInt16Matrix>* packed);

// The batch indices of one output matrix and of the lhs and rhs matrices
// broadcast to it.
struct BatchTriple {
  int64_t out = 0, lhs = 0, rhs = 0;
};

// int8 runs through IntGemm (int32 sums wrap as TFLite's do); int16 x int16
// products need TFLite's int64 accumulator, so int16 keeps plain rows and
// sums in int64.
struct QuantizedBatchMatMulState {
  BatchMatMulPlan plan;
  ChannelRequant q;
  int32_t rhs_offset = 0;  // -rhs zero point, folded into the packing
  std::vector<PackedInt16Matrix> rhs_packed;  // int8: one per rhs batch
  std::vector<int16_t> rhs_rows;              // int16: per rhs batch, n x depth
  bool pack_in_invoke = false;                // rhs not constant
  std::vector<BatchTriple> batches;           // the broadcast batches
  // int8: every lhs matrix, int16: one; each m x k_padded.
  std::vector<int16_t> lhs;
  int32_t chunk_rows = 1;               // int8: rows of lhs per pool task
  std::vector<IntGemmScratch> scratch;  // int8: one per pool thread
};

// Prepare for integer lhs of `scheme` (int8 x int8, int16 x int16 or
// int16 x int8); sizes the output.
KilnStatus QuantizedBatchMatMulPrepare(KernelContext& k, IntScheme scheme,
                                       QuantizedBatchMatMulState& s);
KilnStatus QuantizedBatchMatMulInvoke(KernelContext& k,
                                      QuantizedBatchMatMulState& s);

// Hybrid BATCH_MATMUL (float lhs, int8 rhs; versions 1 and 4) as LiteRT's
// reference hybrid BatchMatMul: each lhs row quantized (asymmetrically with
// asymmetric_quantize_inputs), int32 sums, the zero point removed through
// the rhs column sums in float (as LiteRT does, total rounded through
// float), then out = (row scale * column scale) * total.
struct HybridBatchMatMulState {
  BatchMatMulPlan plan;
  bool asymmetric = false;
  std::vector<float> column_scales;  // per n; per-tensor: 1
  bool per_channel = false;
  float rhs_scale = 1.f;  // per-tensor scale, folded into the row scales
  std::vector<PackedInt16Matrix> rhs_packed;  // one per rhs batch
  std::vector<int32_t> column_sums;           // rhs batches x n
  bool pack_in_invoke = false;
  std::vector<float> row;               // one lhs row (adj_x gathered)
  std::vector<int8_t> quantized;        // one quantized row
  std::vector<int16_t> lhs;             // m x k_padded
  std::vector<float> row_scale;         // m
  std::vector<int32_t> row_zero_point;  // m
  IntGemmScratch scratch;
};

KilnStatus HybridBatchMatMulPrepare(KernelContext& k,
                                    HybridBatchMatMulState& s);
KilnStatus HybridBatchMatMulInvoke(KernelContext& k, HybridBatchMatMulState& s);

}  // namespace kiln::cpu::nn

#endif  // KILN_PLUGINS_CPU_KERNELS_NN_BATCH_MATMUL_H_
