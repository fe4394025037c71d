// FULLY_CONNECTED and BATCH_MATMUL on float32 through the packed GEMM.
// Integer FULLY_CONNECTED inputs dispatch to fully_connected_quantized.h.
#include <algorithm>
#include <vector>

#include "kernels/broadcast.h"
#include "kernels/nn/fully_connected_quantized.h"
#include "kernels/nn/gemm.h"
#include "kernels/nn/nn_common.h"
#include "kernels/nn/type_dispatch.h"
#include "kernels/registry.h"

namespace kiln::cpu::nn {
namespace {

constexpr const char* kQuantNote =
    "quantized and hybrid variants are not implemented";

bool IsStatic(const Tensor& t) {
  return !t.present() || (t.is_constant() && t.data<float>() != nullptr);
}

// ---- FULLY_CONNECTED -----------------------------------------------------

struct FullyConnectedState {
  int64_t activation = KILN_ACTIVATION_NONE;
  int32_t rows = 0;
  bool pack_in_invoke = false;
  PackedMatrix weights;
};

KilnStatus FullyConnectedPrepare(KernelContext& k, FullyConnectedState& s) {
  constexpr const char* op = "FULLY_CONNECTED";
  const Tensor input = k.input(0), weights = k.input(1), out = k.output(0);
  const Tensor bias = k.num_inputs() > 2 ? k.input(2) : Tensor();
  KILN_SDK_RETURN_IF_ERROR(
      ExpectTensorType(k, op, "input", input, KILN_TYPE_FLOAT32, kQuantNote));
  KILN_SDK_RETURN_IF_ERROR(ExpectTensorType(k, op, "weights", weights,
                                            KILN_TYPE_FLOAT32, kQuantNote));
  KILN_SDK_RETURN_IF_ERROR(
      ExpectTensorType(k, op, "output", out, KILN_TYPE_FLOAT32, kQuantNote));
  KILN_SDK_RETURN_IF_ERROR(ReadActivation(k, op, &s.activation));
  if (ClampOnlyActivation(s.activation) != s.activation) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op,
                  ": fused activation TANH/SIGN_BIT is refused (as by "
                  "TFLite); FULLY_CONNECTED supports NONE, RELU, "
                  "RELU_N1_TO_1 and RELU6");
  }
  std::vector<int32_t> out_shape;
  KILN_SDK_RETURN_IF_ERROR(
      ReadFullyConnectedShape(k, input, weights, &s.rows, &out_shape));
  const int32_t units = weights.dim(0), depth = weights.dim(1);
  if (bias.present()) {
    KILN_SDK_RETURN_IF_ERROR(
        ExpectTensorType(k, op, "bias", bias, KILN_TYPE_FLOAT32, kQuantNote));
    KILN_SDK_RETURN_IF_ERROR(ExpectKnownShape(k, op, "bias", bias));
    if (bias.num_elements() != units) {
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, ": bias '", bias.name(),
                    "' has shape ", ShapeString(bias.shape()), ", expected [",
                    units, "] (one value per output unit)");
    }
  }
  s.weights.Resize(units, depth);
  s.pack_in_invoke = !(IsStatic(weights) && IsStatic(bias));
  if (!s.pack_in_invoke) {
    s.weights.Pack(weights.data<float>(), depth, 1,
                   bias.present() ? bias.data<float>() : nullptr);
  }
  return k.Resize(out, out_shape);
}

KilnStatus FullyConnectedInvoke(KernelContext& k, FullyConnectedState& s) {
  const Tensor input = k.input(0), weights = k.input(1), out = k.output(0);
  if (s.pack_in_invoke) {
    const Tensor bias = k.num_inputs() > 2 ? k.input(2) : Tensor();
    s.weights.Pack(weights.data<float>(), s.weights.k(), 1,
                   bias.present() ? bias.data<float>() : nullptr);
  }
  Gemm(input.data<float>(), s.weights.k(), s.rows, s.weights, s.activation,
       out.data<float>(), s.weights.n());
  return KILN_STATUS_OK;
}

using FullyConnectedKernelState =
    DispatchState<FullyConnectedState, QuantizedFullyConnectedState>;
KilnStatus FullyConnectedKernelPrepare(KernelContext& k,
                                       FullyConnectedKernelState& s) {
  return DispatchPrepare<FullyConnectedState, QuantizedFullyConnectedState,
                         FullyConnectedPrepare, QuantizedFullyConnectedPrepare>(
      k, s);
}
KilnStatus FullyConnectedKernelInvoke(KernelContext& k,
                                      FullyConnectedKernelState& s) {
  return DispatchInvoke<FullyConnectedState, QuantizedFullyConnectedState,
                        FullyConnectedInvoke, QuantizedFullyConnectedInvoke>(k,
                                                                             s);
}

// ---- BATCH_MATMUL --------------------------------------------------------

struct BatchMatMulState {
  bool adj_x = false, adj_y = false;
  int32_t m = 0, n = 0, depth = 0;
  std::vector<int32_t> lhs_batch, rhs_batch, out_batch;
  bool pack_in_invoke = false;
  std::vector<PackedMatrix> rhs_packed;  // one per rhs batch
  std::vector<float> lhs_transposed;     // m x depth, for adj_x
};

void PackRhs(BatchMatMulState& s, const float* rhs) {
  const int64_t matrix = static_cast<int64_t>(s.depth) * s.n;
  for (size_t b = 0; b < s.rhs_packed.size(); ++b) {
    const float* src = rhs + static_cast<int64_t>(b) * matrix;
    if (s.adj_y) {
      s.rhs_packed[b].Pack(src, s.depth, 1, nullptr);  // [n][depth]
    } else {
      s.rhs_packed[b].Pack(src, 1, s.n, nullptr);  // [depth][n]
    }
  }
}

KilnStatus BatchMatMulPrepare(KernelContext& k, BatchMatMulState& s) {
  constexpr const char* op = "BATCH_MATMUL";
  KILN_SDK_RETURN_IF_ERROR(k.ExpectInputs(2, 2));
  KILN_SDK_RETURN_IF_ERROR(k.ExpectOutputs(1));
  const Tensor lhs = k.input(0), rhs = k.input(1), out = k.output(0);
  KILN_SDK_RETURN_IF_ERROR(
      ExpectTensorType(k, op, "lhs", lhs, KILN_TYPE_FLOAT32, kQuantNote));
  KILN_SDK_RETURN_IF_ERROR(
      ExpectTensorType(k, op, "rhs", rhs, KILN_TYPE_FLOAT32, kQuantNote));
  KILN_SDK_RETURN_IF_ERROR(
      ExpectTensorType(k, op, "output", out, KILN_TYPE_FLOAT32, kQuantNote));
  KILN_SDK_RETURN_IF_ERROR(ExpectKnownShape(k, op, "lhs", lhs));
  KILN_SDK_RETURN_IF_ERROR(ExpectKnownShape(k, op, "rhs", rhs));
  const std::vector<int32_t> ls = lhs.shape(), rs = rhs.shape();
  if (ls.size() < 2 || rs.size() < 2) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op,
                  ": lhs and rhs need rank >= 2, got ", ShapeString(ls),
                  " and ", ShapeString(rs));
  }
  s.adj_x = k.OptionInt(KILN_OPTION_ADJ_X, 0) != 0;
  s.adj_y = k.OptionInt(KILN_OPTION_ADJ_Y, 0) != 0;
  const size_t lr = ls.size(), rr = rs.size();
  s.m = s.adj_x ? ls[lr - 1] : ls[lr - 2];
  s.depth = s.adj_x ? ls[lr - 2] : ls[lr - 1];
  const int32_t rhs_depth = s.adj_y ? rs[rr - 1] : rs[rr - 2];
  s.n = s.adj_y ? rs[rr - 2] : rs[rr - 1];
  if (rhs_depth != s.depth) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op,
                  ": contracted dimensions differ: lhs ", ShapeString(ls),
                  (s.adj_x ? " (adj_x)" : ""), " has ", s.depth, ", rhs ",
                  ShapeString(rs), (s.adj_y ? " (adj_y)" : ""), " has ",
                  rhs_depth);
  }
  s.lhs_batch.assign(ls.begin(), ls.end() - 2);
  s.rhs_batch.assign(rs.begin(), rs.end() - 2);
  if (!BroadcastShapes(s.lhs_batch, s.rhs_batch, &s.out_batch)) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, ": batch dimensions of ",
                  ShapeString(ls), " and ", ShapeString(rs),
                  " cannot be broadcast together (or have rank > ",
                  kMaxBroadcastRank, ")");
  }
  const int64_t rhs_batches = DimProduct(s.rhs_batch, 0, s.rhs_batch.size());
  s.rhs_packed.resize(static_cast<size_t>(rhs_batches));
  for (PackedMatrix& p : s.rhs_packed) p.Resize(s.n, s.depth);
  s.pack_in_invoke = !IsStatic(rhs);
  if (!s.pack_in_invoke) PackRhs(s, rhs.data<float>());
  if (s.adj_x) {
    s.lhs_transposed.assign(static_cast<size_t>(s.m) * s.depth, 0.f);
  } else {
    s.lhs_transposed.clear();
  }
  std::vector<int32_t> out_shape = s.out_batch;
  out_shape.push_back(s.m);
  out_shape.push_back(s.n);
  return k.Resize(out, out_shape);
}

KilnStatus BatchMatMulInvoke(KernelContext& k, BatchMatMulState& s) {
  const Tensor lhs = k.input(0), rhs = k.input(1), out = k.output(0);
  if (s.pack_in_invoke) PackRhs(s, rhs.data<float>());
  const float* l = lhs.data<float>();
  float* o = out.data<float>();
  const int64_t lhs_matrix = static_cast<int64_t>(s.m) * s.depth;
  const int64_t out_matrix = static_cast<int64_t>(s.m) * s.n;
  ForEachBroadcast(s.lhs_batch, s.rhs_batch, s.out_batch,
                   [&](int64_t ob, int64_t lb, int64_t rb) {
                     const float* a = l + lb * lhs_matrix;
                     if (s.adj_x) {
                       // lhs is [depth][m]; make it [m][depth].
                       float* t = s.lhs_transposed.data();
                       for (int32_t kk = 0; kk < s.depth; ++kk) {
                         for (int32_t i = 0; i < s.m; ++i) {
                           t[static_cast<int64_t>(i) * s.depth + kk] =
                               a[static_cast<int64_t>(kk) * s.m + i];
                         }
                       }
                       a = t;
                     }
                     Gemm(a, s.depth, s.m,
                          s.rhs_packed[static_cast<size_t>(rb)],
                          KILN_ACTIVATION_NONE, o + ob * out_matrix, s.n);
                   });
  return KILN_STATUS_OK;
}

}  // namespace

void RegisterFullyConnectedKernels(sdk::PluginDefinition& def) {
  // FULLY_CONNECTED v1: float32 and uint8, DEFAULT weights; v4: int8
  // (per-tensor or per-channel weights); v5: keep_num_dims; v6: bias
  // omitted; v7: int16x8. The kernel dispatches on the input type. v2
  // (shuffled uint8 weights) is not implemented, so it is not declared; v3
  // (hybrid) is not implemented yet.
  def.AddKernel(sdk::MakeStatefulKernel<FullyConnectedKernelState,
                                        FullyConnectedKernelPrepare,
                                        FullyConnectedKernelInvoke>(
      KILN_OP_FULLY_CONNECTED, 1, 1));
  def.AddKernel(sdk::MakeStatefulKernel<FullyConnectedKernelState,
                                        FullyConnectedKernelPrepare,
                                        FullyConnectedKernelInvoke>(
      KILN_OP_FULLY_CONNECTED, 4, 7));
  // BATCH_MATMUL v1: float32 with adj_x/adj_y and broadcast batch dims.
  // v2-v4 are int8/int16/hybrid variants.
  def.AddKernel(
      sdk::MakeStatefulKernel<BatchMatMulState, BatchMatMulPrepare,
                              BatchMatMulInvoke>(KILN_OP_BATCH_MATMUL, 1, 1));
}

}  // namespace kiln::cpu::nn
