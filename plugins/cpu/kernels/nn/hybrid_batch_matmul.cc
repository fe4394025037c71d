// Hybrid BATCH_MATMUL (declared in batch_matmul.h).
//
// LiteRT indexes the row scales and zero points of an lhs with more than
// one non-unit batch dimension as if the batch dimensions were summed
// (reference BatchMatMul's ioff/scale extents); Kiln uses each row's own.
// The two agree whenever at most one batch dimension exceeds 1.
#include <algorithm>

#include "kernels/broadcast.h"
#include "kernels/nn/batch_matmul.h"
#include "kernels/nn/hybrid.h"

namespace kiln::cpu::nn {
namespace {

constexpr sdk::Operand kRhs = sdk::Input(1, "rhs");

void PackRhs(HybridBatchMatMulState& s, const int8_t* rhs) {
  const BatchMatMulPlan& p = s.plan;
  PackRhsMatrices(p, rhs, 0, &s.rhs_packed);
  if (!s.asymmetric) return;
  const int64_t matrix = static_cast<int64_t>(p.depth) * p.n;
  s.column_sums.assign(static_cast<size_t>(p.rhs_batches() * p.n), 0);
  for (int64_t b = 0; b < p.rhs_batches(); ++b) {
    for (int32_t j = 0; j < p.n; ++j) {
      int32_t sum = 0;
      for (int32_t d = 0; d < p.depth; ++d) {
        sum += p.adj_y ? rhs[b * matrix + int64_t{j} * p.depth + d]
                       : rhs[b * matrix + int64_t{d} * p.n + j];
      }
      s.column_sums[static_cast<size_t>(b * p.n + j)] = sum;
    }
  }
}

// Quantizes the m rows of one lhs matrix into s.lhs.
void QuantizeLhs(HybridBatchMatMulState& s, const float* a) {
  const BatchMatMulPlan& p = s.plan;
  const int32_t kp = p.depth + p.depth % 2;
  for (int32_t i = 0; i < p.m; ++i) {
    for (int32_t d = 0; d < p.depth; ++d) {
      s.row[static_cast<size_t>(d)] =
          p.adj_x ? a[int64_t{d} * p.m + i] : a[int64_t{i} * p.depth + d];
    }
    float scale = 0.f;
    int32_t zp = 0;
    QuantizeHybridRow(s.row.data(), p.depth, s.asymmetric, s.quantized.data(),
                      &scale, &zp);
    s.row_scale[static_cast<size_t>(i)] =
        s.per_channel ? scale : scale * s.rhs_scale;
    s.row_zero_point[static_cast<size_t>(i)] = zp;
    int16_t* dst = s.lhs.data() + int64_t{i} * kp;
    for (int32_t d = 0; d < p.depth; ++d) dst[d] = s.quantized[d];
  }
}

void ScaleOutput(const HybridBatchMatMulState& s, int64_t rhs_batch,
                 float* out) {
  const BatchMatMulPlan& p = s.plan;
  const int32_t* acc = s.scratch.acc.data();
  for (int32_t i = 0; i < p.m; ++i) {
    const float row_scale = s.row_scale[static_cast<size_t>(i)];
    const float zp =
        static_cast<float>(s.row_zero_point[static_cast<size_t>(i)]);
    for (int32_t j = 0; j < p.n; ++j) {
      const int32_t sum =
          s.asymmetric ? s.column_sums[static_cast<size_t>(rhs_batch * p.n + j)]
                       : 0;
      // LiteRT: total -= row_sum * float(zero point), through float.
      const int32_t total =
          static_cast<int32_t>(static_cast<float>(acc[int64_t{i} * p.n + j]) -
                               static_cast<float>(sum) * zp);
      const float scale =
          s.per_channel ? row_scale * s.column_scales[static_cast<size_t>(j)]
                        : row_scale;
      out[int64_t{i} * p.n + j] = scale * static_cast<float>(total);
    }
  }
}

}  // namespace

KilnStatus HybridBatchMatMulPrepare(KernelContext& k,
                                    HybridBatchMatMulState& s) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectType(
      k, sdk::Output(0), {KILN_TYPE_FLOAT32},
      "a float lhs with an int8 rhs (hybrid) gives a float32 output"));
  KILN_SDK_RETURN_IF_ERROR(PlanBatchMatMul(k, &s.plan));
  const BatchMatMulPlan& p = s.plan;
  const int32_t rank = k.input(1).rank();
  sdk::TensorQuantization q;
  KILN_SDK_RETURN_IF_ERROR(sdk::ReadQuantization(
      k, kRhs, sdk::PerChannel(p.adj_y ? rank - 2 : rank - 1), &q));
  s.per_channel = !q.per_tensor();
  s.column_scales = q.scales;
  s.rhs_scale = q.scales[0];
  s.asymmetric = k.OptionInt(KILN_OPTION_ASYMMETRIC_QUANTIZE_INPUTS, 0) != 0;
  s.rhs_packed.resize(static_cast<size_t>(p.rhs_batches()));
  for (PackedInt16Matrix& m : s.rhs_packed) m.Resize(p.n, p.depth);
  const Tensor rhs = k.input(1);
  s.pack_in_invoke = !(rhs.is_constant() && rhs.data<int8_t>() != nullptr);
  if (!s.pack_in_invoke) PackRhs(s, rhs.data<int8_t>());
  const int32_t kp = p.depth + p.depth % 2;
  s.row.assign(static_cast<size_t>(p.depth), 0.f);
  s.quantized.assign(static_cast<size_t>(p.depth), 0);
  s.lhs.assign(static_cast<size_t>(p.m) * kp, 0);
  s.row_scale.assign(static_cast<size_t>(p.m), 0.f);
  s.row_zero_point.assign(static_cast<size_t>(p.m), 0);
  s.scratch.Reserve(p.m, p.n, false);
  return k.Resize(k.output(0), p.out_shape);
}

KilnStatus HybridBatchMatMulInvoke(KernelContext& k,
                                   HybridBatchMatMulState& s) {
  const float* lhs = nullptr;
  const int8_t* rhs = nullptr;
  float* out = nullptr;
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, sdk::Input(0, "lhs"), &lhs));
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, kRhs, &rhs));
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, sdk::Output(0), &out));
  if (s.pack_in_invoke) PackRhs(s, rhs);
  const BatchMatMulPlan& p = s.plan;
  const int32_t kp = p.depth + p.depth % 2;
  const int64_t lhs_matrix = static_cast<int64_t>(p.m) * p.depth;
  const int64_t out_matrix = static_cast<int64_t>(p.m) * p.n;
  ForEachBroadcast(p.lhs_batch, p.rhs_batch, p.out_batch,
                   [&](int64_t ob, int64_t lb, int64_t rb) {
                     QuantizeLhs(s, lhs + lb * lhs_matrix);
                     IntGemm(s.lhs.data(), kp, p.m,
                             s.rhs_packed[static_cast<size_t>(rb)], 0, kp,
                             s.scratch.acc.data(), p.n);
                     ScaleOutput(s, rb, out + ob * out_matrix);
                   });
  return KILN_STATUS_OK;
}

}  // namespace kiln::cpu::nn
