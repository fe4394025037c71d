#include "kernels/nn/batch_matmul.h"

#include <algorithm>

#include "kernels/broadcast.h"
#include "kernels/nn/parallel.h"

namespace kiln::cpu::nn {
namespace {

constexpr const char* kOp = "BATCH_MATMUL";
constexpr sdk::Operand kLhs = sdk::Input(0, "lhs");
constexpr sdk::Operand kRhs = sdk::Input(1, "rhs");

// int16: rhs_rows[b][j][d] = rhs[b] (j, d); zero points are 0.
void CopyRhsRows(QuantizedBatchMatMulState& s, const int16_t* rhs) {
  const BatchMatMulPlan& p = s.plan;
  const int64_t matrix = static_cast<int64_t>(p.depth) * p.n;
  for (int64_t b = 0; b < p.rhs_batches(); ++b) {
    const int16_t* src = rhs + b * matrix;
    int16_t* dst = s.rhs_rows.data() + b * matrix;
    for (int32_t j = 0; j < p.n; ++j) {
      for (int32_t d = 0; d < p.depth; ++d) {
        dst[static_cast<int64_t>(j) * p.depth + d] =
            p.adj_y ? src[static_cast<int64_t>(j) * p.depth + d]
                    : src[static_cast<int64_t>(d) * p.n + j];
      }
    }
  }
}

void PackRhs(QuantizedBatchMatMulState& s, const Tensor& rhs) {
  if (s.q.scheme == IntScheme::kInt16) {
    CopyRhsRows(s, rhs.data<int16_t>());
  } else {
    PackRhsMatrices(s.plan, rhs.data<int8_t>(), s.rhs_offset, &s.rhs_packed);
  }
}

// out (m x n) = lhs (m x kp rows) * rhs_rows^T in int64, requantized.
void Int16MatMul(const QuantizedBatchMatMulState& s, const int16_t* rhs_rows,
                 int32_t kp, int16_t* out) {
  const BatchMatMulPlan& p = s.plan;
  for (int32_t i = 0; i < p.m; ++i) {
    const int16_t* a = s.lhs.data() + static_cast<int64_t>(i) * kp;
    for (int32_t j = 0; j < p.n; ++j) {
      const int16_t* b = rhs_rows + static_cast<int64_t>(j) * p.depth;
      int64_t acc = 0;
      for (int32_t d = 0; d < p.depth; ++d) {
        acc += int64_t{a[d]} * b[d];
      }
      out[static_cast<int64_t>(i) * p.n + j] =
          static_cast<int16_t>(RequantizeChannel(acc, j, s.q));
    }
  }
}

// One lhs matrix as int16 rows of k_padded values at dst, offset folded in.
template <typename T>
void LoadLhs(const QuantizedBatchMatMulState& s, const T* a, int32_t kp,
             int16_t* dst) {
  const BatchMatMulPlan& p = s.plan;
  for (int32_t i = 0; i < p.m; ++i) {
    int16_t* row = dst + static_cast<int64_t>(i) * kp;
    for (int32_t d = 0; d < p.depth; ++d) {
      const T v = p.adj_x ? a[static_cast<int64_t>(d) * p.m + i]
                          : a[static_cast<int64_t>(i) * p.depth + d];
      row[d] = static_cast<int16_t>(v + s.q.input_offset);
    }
  }
}

// int8: every lhs batch loaded as int16 rows, then (output batch, chunk of
// rows) tasks on the host's pool, each requantized through the running
// thread's accumulator scratch.
void Int8BatchMatMul(KernelContext& k, QuantizedBatchMatMulState& s,
                     const int8_t* lhs, int8_t* out) {
  const BatchMatMulPlan& p = s.plan;
  const int32_t kp = p.depth + p.depth % 2;
  const int64_t lhs_batches = DimProduct(p.lhs_batch, 0, p.lhs_batch.size());
  for (int64_t b = 0; b < lhs_batches; ++b) {
    LoadLhs(s, lhs + b * p.m * p.depth, kp, s.lhs.data() + b * p.m * kp);
  }
  const int32_t threads = sdk::ParallelThreads(k.host(), k.raw_context());
  if (static_cast<int32_t>(s.scratch.size()) < threads) {
    s.scratch.resize(static_cast<size_t>(threads));
    for (IntGemmScratch& sc : s.scratch) sc.Reserve(s.chunk_rows, p.n, false);
  }
  const int64_t chunks = (p.m + s.chunk_rows - 1) / s.chunk_rows;
  const int64_t tasks = static_cast<int64_t>(s.batches.size()) * chunks;
  ParallelRows(
      k, tasks, int64_t{s.chunk_rows} * kp * p.n,
      [&](int64_t begin, int64_t end, int32_t thread) {
        for (int64_t t = begin; t < end; ++t) {
          const BatchTriple& b = s.batches[static_cast<size_t>(t / chunks)];
          const int32_t r0 = static_cast<int32_t>(t % chunks) * s.chunk_rows;
          const int32_t rows = std::min(s.chunk_rows, p.m - r0);
          RequantizedGemm(s.lhs.data() + (b.lhs * p.m + r0) * kp, rows,
                          s.rhs_packed[static_cast<size_t>(b.rhs)], BiasView{},
                          s.q, false, s.scratch[static_cast<size_t>(thread)],
                          out + (b.out * p.m + r0) * p.n, p.n);
        }
      });
}

KilnStatus CheckTypes(KernelContext& k, IntScheme scheme, const Tensor& lhs,
                      const Tensor& rhs, const Tensor& out) {
  // TFLite: both operands of one type (int8 or int16); an int32 output of
  // int8 operands (raw accumulators) is not implemented.
  if (scheme == IntScheme::kUint8 || rhs.type() != lhs.type() ||
      out.type() != lhs.type()) {
    return k.Fail(KILN_STATUS_UNIMPLEMENTED, kOp, ": lhs '", lhs.name(), "' (",
                  sdk::TypeName(lhs.type()), "), rhs '", rhs.name(), "' (",
                  sdk::TypeName(rhs.type()), ") and output '", out.name(),
                  "' (", sdk::TypeName(out.type()),
                  ") are not a supported combination (INT8 x INT8 -> INT8 or "
                  "INT16 x INT16 -> INT16)");
  }
  return KILN_STATUS_OK;
}

}  // namespace

template <typename T>
void PackRhsMatrices(const BatchMatMulPlan& p, const T* rhs, int32_t offset,
                     std::vector<PackedInt16Matrix>* packed) {
  const int64_t matrix = static_cast<int64_t>(p.depth) * p.n;
  for (size_t b = 0; b < packed->size(); ++b) {
    const T* src = rhs + static_cast<int64_t>(b) * matrix;
    if (p.adj_y) {
      (*packed)[b].Pack(src, p.depth, 1, offset);  // [n][depth]
    } else {
      (*packed)[b].Pack(src, 1, p.n, offset);  // [depth][n]
    }
  }
}
template void PackRhsMatrices<int8_t>(const BatchMatMulPlan&, const int8_t*,
                                      int32_t, std::vector<PackedInt16Matrix>*);

KilnStatus PlanBatchMatMul(KernelContext& k, BatchMatMulPlan* plan) {
  const Tensor lhs = k.input(0), rhs = k.input(1);
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectKnownShape(k, kLhs));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectKnownShape(k, kRhs));
  const std::vector<int32_t> ls = lhs.shape(), rs = rhs.shape();
  if (ls.size() < 2 || rs.size() < 2) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, kOp,
                  ": lhs and rhs need rank >= 2, got ", ShapeString(ls),
                  " and ", ShapeString(rs));
  }
  BatchMatMulPlan& p = *plan;
  p.adj_x = k.OptionInt(KILN_OPTION_ADJ_X, 0) != 0;
  p.adj_y = k.OptionInt(KILN_OPTION_ADJ_Y, 0) != 0;
  const size_t lr = ls.size(), rr = rs.size();
  p.m = p.adj_x ? ls[lr - 1] : ls[lr - 2];
  p.depth = p.adj_x ? ls[lr - 2] : ls[lr - 1];
  const int32_t rhs_depth = p.adj_y ? rs[rr - 1] : rs[rr - 2];
  p.n = p.adj_y ? rs[rr - 2] : rs[rr - 1];
  if (rhs_depth != p.depth) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, kOp,
                  ": contracted dimensions differ: lhs ", ShapeString(ls),
                  (p.adj_x ? " (adj_x)" : ""), " has ", p.depth, ", rhs ",
                  ShapeString(rs), (p.adj_y ? " (adj_y)" : ""), " has ",
                  rhs_depth);
  }
  p.lhs_batch.assign(ls.begin(), ls.end() - 2);
  p.rhs_batch.assign(rs.begin(), rs.end() - 2);
  if (!BroadcastShapes(p.lhs_batch, p.rhs_batch, &p.out_batch)) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, kOp, ": batch dimensions of ",
                  ShapeString(ls), " and ", ShapeString(rs),
                  " cannot be broadcast together (or have rank > ",
                  kMaxBroadcastRank, ")");
  }
  p.out_shape = p.out_batch;
  p.out_shape.push_back(p.m);
  p.out_shape.push_back(p.n);
  return KILN_STATUS_OK;
}

KilnStatus QuantizedBatchMatMulPrepare(KernelContext& k, IntScheme scheme,
                                       QuantizedBatchMatMulState& s) {
  const Tensor lhs = k.input(0), rhs = k.input(1), out = k.output(0);
  KILN_SDK_RETURN_IF_ERROR(CheckTypes(k, scheme, lhs, rhs, out));
  KILN_SDK_RETURN_IF_ERROR(PlanBatchMatMul(k, &s.plan));
  const BatchMatMulPlan& p = s.plan;
  sdk::TensorQuantization qlhs, qrhs, qout;
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ReadQuantization(k, kLhs, sdk::kPerTensor, &qlhs));
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ReadQuantization(k, kRhs, sdk::kPerTensor, &qrhs));
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ReadQuantization(k, sdk::Output(0), sdk::kPerTensor, &qout));
  if (scheme == IntScheme::kInt16 &&
      (qlhs.zero_points[0] != 0 || qrhs.zero_points[0] != 0 ||
       qout.zero_points[0] != 0)) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, kOp,
                  ": int16 lhs, rhs and output must have zero point 0");
  }
  s.q.scheme = scheme;
  s.q.input_offset = -qlhs.zero_points[0];
  s.rhs_offset = -qrhs.zero_points[0];
  s.q.output_offset = qout.zero_points[0];
  s.q.act_min = scheme == IntScheme::kInt8 ? -128 : -32768;
  s.q.act_max = scheme == IntScheme::kInt8 ? 127 : 32767;
  s.q.wide_accumulator = false;  // the int16 path sums in int64 itself
  // TFLite's GetQuantizedConvolutionMultipler: float product of the scales.
  const double real = static_cast<double>(qlhs.scales[0] * qrhs.scales[0]) /
                      static_cast<double>(qout.scales[0]);
  s.q.multipliers.assign(static_cast<size_t>(p.n), QuantizeMultiplier(real));
  FillRequantLanes(s.q);
  if (scheme == IntScheme::kInt16) {
    s.rhs_rows.assign(static_cast<size_t>(p.rhs_batches() * p.n * p.depth), 0);
  } else {
    s.rhs_packed.resize(static_cast<size_t>(p.rhs_batches()));
    for (PackedInt16Matrix& m : s.rhs_packed) m.Resize(p.n, p.depth);
  }
  s.pack_in_invoke = !(rhs.is_constant() && rhs.data<void>() != nullptr);
  if (!s.pack_in_invoke) PackRhs(s, rhs);
  const int32_t kp = p.depth + p.depth % 2;
  s.batches.clear();
  ForEachBroadcast(p.lhs_batch, p.rhs_batch, p.out_batch,
                   [&](int64_t ob, int64_t lb, int64_t rb) {
                     s.batches.push_back(BatchTriple{ob, lb, rb});
                   });
  const int64_t lhs_matrices =
      scheme == IntScheme::kInt16
          ? 1
          : DimProduct(p.lhs_batch, 0, p.lhs_batch.size());
  s.lhs.assign(static_cast<size_t>(lhs_matrices * p.m * kp), 0);
  const int32_t threads = sdk::ParallelThreads(k.host(), k.raw_context());
  s.chunk_rows = ParallelChunkRows(std::max(p.m, 1),
                                   static_cast<int32_t>(s.batches.size()), p.m,
                                   threads, 4);
  s.scratch.assign(static_cast<size_t>(threads), IntGemmScratch());
  for (IntGemmScratch& sc : s.scratch) sc.Reserve(s.chunk_rows, p.n, false);
  return k.Resize(out, p.out_shape);
}

KilnStatus QuantizedBatchMatMulInvoke(KernelContext& k,
                                      QuantizedBatchMatMulState& s) {
  const Tensor lhs = k.input(0), rhs = k.input(1), out = k.output(0);
  if (lhs.data<void>() == nullptr || rhs.data<void>() == nullptr ||
      out.data<void>() == nullptr) {
    return k.Fail(KILN_STATUS_FAILED_PRECONDITION, kOp,
                  ": lhs, rhs or output has no data at invoke");
  }
  if (s.pack_in_invoke) PackRhs(s, rhs);
  const BatchMatMulPlan& p = s.plan;
  if (s.q.scheme != IntScheme::kInt16) {
    Int8BatchMatMul(k, s, lhs.data<int8_t>(), out.data<int8_t>());
    return KILN_STATUS_OK;
  }
  const int32_t kp = p.depth + p.depth % 2;
  const int64_t lhs_matrix = static_cast<int64_t>(p.m) * p.depth;
  const int64_t out_matrix = static_cast<int64_t>(p.m) * p.n;
  const int64_t rhs_matrix = static_cast<int64_t>(p.depth) * p.n;
  for (const BatchTriple& b : s.batches) {
    LoadLhs(s, lhs.data<int16_t>() + b.lhs * lhs_matrix, kp, s.lhs.data());
    Int16MatMul(s, s.rhs_rows.data() + b.rhs * rhs_matrix, kp,
                out.data<int16_t>() + b.out * out_matrix);
  }
  return KILN_STATUS_OK;
}

}  // namespace kiln::cpu::nn
