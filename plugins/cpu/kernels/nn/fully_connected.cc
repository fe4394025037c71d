// FULLY_CONNECTED and BATCH_MATMUL on float32 through the packed GEMM.
// Integer FULLY_CONNECTED inputs dispatch to fully_connected_quantized.h.
#include <algorithm>
#include <utility>
#include <vector>

#include "kernels/broadcast.h"
#include "kernels/nn/batch_matmul.h"
#include "kernels/nn/blockwise_fully_connected.h"
#include "kernels/nn/fully_connected_quantized.h"
#include "kernels/nn/gemm.h"
#include "kernels/nn/hybrid.h"
#include "kernels/nn/nn_common.h"
#include "kernels/nn/type_dispatch.h"
#include "kernels/registry.h"

namespace kiln::cpu::nn {
namespace {

constexpr const char* kQuantNote =
    "integer inputs take the integer kernel, int8 weights with a float "
    "input the hybrid one, blockwise INT4 weights with a float input the "
    "blockwise one";

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
  const Tensor weights = k.input(1), out = k.output(0);
  const Tensor bias = k.num_inputs() > 2 ? k.input(2) : Tensor();
  for (const sdk::Operand o :
       {sdk::Input(0), sdk::Input(1, "weights"), sdk::Output(0)}) {
    KILN_SDK_RETURN_IF_ERROR(
        sdk::ExpectType(k, o, {KILN_TYPE_FLOAT32}, kQuantNote));
  }
  FullyConnectedNode node;
  KILN_SDK_RETURN_IF_ERROR(ReadFullyConnectedNode(k, &node));
  s.activation = node.activation;
  s.rows = node.rows;
  if (!sdk::IsClampActivation(s.activation)) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, sdk::OpName(k),
                  ": fused activation ", sdk::ActivationName(s.activation),
                  " is refused (as by TFLite); FULLY_CONNECTED supports "
                  "NONE, RELU, RELU_N1_TO_1 and RELU6 (TANH and SIGN_BIT "
                  "only with int8 weights)");
  }
  const int32_t units = node.units, depth = node.depth;
  if (bias.present()) {
    const sdk::Operand b = sdk::Input(2, "bias");
    KILN_SDK_RETURN_IF_ERROR(
        sdk::ExpectType(k, b, {KILN_TYPE_FLOAT32}, kQuantNote));
    KILN_SDK_RETURN_IF_ERROR(
        sdk::ExpectShape(k, b, {units}, "one value per output unit"));
  }
  s.pack_in_invoke = !(IsStatic(weights) && IsStatic(bias));
  if (s.pack_in_invoke) {
    s.weights.Resize(units, depth);
  } else {
    s.weights.PackConstant(units, depth, weights.data<float>(), depth, 1,
                           bias.present() ? bias.data<float>() : nullptr);
  }
  return k.Resize(out, node.out_shape);
}

KilnStatus FullyConnectedInvoke(KernelContext& k, FullyConnectedState& s) {
  const Tensor input = k.input(0), weights = k.input(1), out = k.output(0);
  if (s.pack_in_invoke) {
    const Tensor bias = k.num_inputs() > 2 ? k.input(2) : Tensor();
    s.weights.Pack(weights.data<float>(), s.weights.k(), 1,
                   bias.present() ? bias.data<float>() : nullptr);
  }
  ParallelGemm(k, input.data<float>(), s.weights.k(), s.rows, s.weights,
               s.activation, out.data<float>(), s.weights.n());
  return KILN_STATUS_OK;
}

// The float slot of FULLY_CONNECTED's variants also takes INT4 weights with
// a float32 input (VariantOf gives the hybrid variant for int8 weights
// only): the blockwise kernel.
struct FloatOrBlockwiseState {
  bool blockwise = false;
  FullyConnectedState f;
  BlockwiseFullyConnectedState b;
};

KilnStatus FloatOrBlockwisePrepare(KernelContext& k, FloatOrBlockwiseState& s) {
  s.blockwise = IsBlockwiseFullyConnected(k);
  return s.blockwise ? BlockwiseFullyConnectedPrepare(k, s.b)
                     : FullyConnectedPrepare(k, s.f);
}

KilnStatus FloatOrBlockwiseInvoke(KernelContext& k, FloatOrBlockwiseState& s) {
  return s.blockwise ? BlockwiseFullyConnectedInvoke(k, s.b)
                     : FullyConnectedInvoke(k, s.f);
}

using FullyConnectedOps =
    OpVariants<FloatOrBlockwiseState, QuantizedFullyConnectedState,
               HybridFullyConnectedState, FloatOrBlockwisePrepare,
               FloatOrBlockwiseInvoke, QuantizedFullyConnectedPrepare,
               QuantizedFullyConnectedInvoke, HybridFullyConnectedPrepare,
               HybridFullyConnectedInvoke, 2, 3, 0, 1>;

// ---- BATCH_MATMUL --------------------------------------------------------

struct BatchMatMulState {
  std::vector<BatchTriple> batches;  // the broadcast batches
  BatchMatMulPlan plan;
  bool pack_in_invoke = false;
  std::vector<PackedMatrix> rhs_packed;  // one per rhs batch
  std::vector<float> lhs_transposed;     // m x depth, for adj_x
};

void PackRhs(BatchMatMulState& s, const float* rhs) {
  const BatchMatMulPlan& p = s.plan;
  const int64_t matrix = static_cast<int64_t>(p.depth) * p.n;
  for (size_t b = 0; b < s.rhs_packed.size(); ++b) {
    const float* src = rhs + static_cast<int64_t>(b) * matrix;
    if (p.adj_y) {
      s.rhs_packed[b].Pack(src, p.depth, 1, nullptr);  // [n][depth]
    } else {
      s.rhs_packed[b].Pack(src, 1, p.n, nullptr);  // [depth][n]
    }
  }
}

KilnStatus BatchMatMulPrepare(KernelContext& k, BatchMatMulState& s) {
  const Tensor rhs = k.input(1), out = k.output(0);
  for (const sdk::Operand o :
       {sdk::Input(0, "lhs"), sdk::Input(1, "rhs"), sdk::Output(0)}) {
    KILN_SDK_RETURN_IF_ERROR(
        sdk::ExpectType(k, o, {KILN_TYPE_FLOAT32}, kQuantNote));
  }
  KILN_SDK_RETURN_IF_ERROR(PlanBatchMatMul(k, &s.plan));
  const BatchMatMulPlan& p = s.plan;
  s.rhs_packed.resize(static_cast<size_t>(p.rhs_batches()));
  s.pack_in_invoke = !IsStatic(rhs);
  if (s.pack_in_invoke) {
    for (PackedMatrix& m : s.rhs_packed) m.Resize(p.n, p.depth);
  } else {
    const int64_t matrix = static_cast<int64_t>(p.depth) * p.n;
    for (size_t b = 0; b < s.rhs_packed.size(); ++b) {
      const float* src = rhs.data<float>() + static_cast<int64_t>(b) * matrix;
      // [n][depth] with adj_y, else [depth][n].
      s.rhs_packed[b].PackConstant(p.n, p.depth, src, p.adj_y ? p.depth : 1,
                                   p.adj_y ? 1 : p.n, nullptr);
    }
  }
  s.lhs_transposed.assign(p.adj_x ? static_cast<size_t>(p.m) * p.depth : 0,
                          0.f);
  s.batches.clear();
  ForEachBroadcast(p.lhs_batch, p.rhs_batch, p.out_batch,
                   [&](int64_t ob, int64_t lb, int64_t rb) {
                     s.batches.push_back(BatchTriple{ob, lb, rb});
                   });
  return k.Resize(out, p.out_shape);
}

KilnStatus BatchMatMulInvoke(KernelContext& k, BatchMatMulState& s) {
  const Tensor lhs = k.input(0), rhs = k.input(1), out = k.output(0);
  if (s.pack_in_invoke) PackRhs(s, rhs.data<float>());
  const BatchMatMulPlan& p = s.plan;
  const float* l = lhs.data<float>();
  float* o = out.data<float>();
  const int64_t lhs_matrix = static_cast<int64_t>(p.m) * p.depth;
  const int64_t out_matrix = static_cast<int64_t>(p.m) * p.n;
  if (!p.adj_x && s.batches.size() > 1) {
    // Several small products (attention heads): one product a task, so the
    // pool is entered once per node instead of once per product.
    return ParallelRows(
        k, static_cast<int64_t>(s.batches.size()),
        static_cast<int64_t>(p.m) * p.n * p.depth,
        [&](int64_t begin, int64_t end, int32_t) {
          for (int64_t i = begin; i < end; ++i) {
            const BatchTriple& b = s.batches[static_cast<size_t>(i)];
            Gemm(l + b.lhs * lhs_matrix, p.depth, p.m,
                 s.rhs_packed[static_cast<size_t>(b.rhs)], KILN_ACTIVATION_NONE,
                 o + b.out * out_matrix, p.n);
          }
        });
  }
  ForEachBroadcast(
      p.lhs_batch, p.rhs_batch, p.out_batch,
      [&](int64_t ob, int64_t lb, int64_t rb) {
        const float* a = l + lb * lhs_matrix;
        if (p.adj_x) {
          // lhs is [depth][m]; make it [m][depth].
          float* t = s.lhs_transposed.data();
          for (int32_t kk = 0; kk < p.depth; ++kk) {
            for (int32_t i = 0; i < p.m; ++i) {
              t[static_cast<int64_t>(i) * p.depth + kk] =
                  a[static_cast<int64_t>(kk) * p.m + i];
            }
          }
          a = t;
        }
        ParallelGemm(k, a, p.depth, p.m, s.rhs_packed[static_cast<size_t>(rb)],
                     KILN_ACTIVATION_NONE, o + ob * out_matrix, p.n);
      });
  return KILN_STATUS_OK;
}

using BatchMatMulOps =
    OpVariants<BatchMatMulState, QuantizedBatchMatMulState,
               HybridBatchMatMulState, BatchMatMulPrepare, BatchMatMulInvoke,
               QuantizedBatchMatMulPrepare, QuantizedBatchMatMulInvoke,
               HybridBatchMatMulPrepare, HybridBatchMatMulInvoke, 2, 2, 0, 1>;

}  // namespace

void RegisterFullyConnectedKernels(sdk::PluginDefinition& def) {
  // FULLY_CONNECTED v1: float32 and uint8, DEFAULT weights; v3: hybrid
  // (float input, int8 weights); v4: int8 (per-tensor or per-channel
  // weights); v5: keep_num_dims; v6: bias omitted; v7: int16x8; v9: hybrid
  // with asymmetric_quantize_inputs; v8: sparse weights (the model loader
  // densifies them); v12: hybrid with per-channel weights. The kernel
  // dispatches on the input and weight types. Version 1 also runs INT4
  // weights with blockwise quantization and a float32 input, which
  // ai-edge-quantizer leaves at v1 (blockwise_fully_connected.h). Not
  // declared: v2 (shuffled uint8 weights), v10 (int4 weights), v11 (int16x8
  // with an int32 bias).
  for (const auto& [min_version, max_version] :
       {std::pair{1, 1}, {3, 9}, {12, 12}}) {
    def.AddKernel(sdk::StatePerShapeSignature(VariantKernel<FullyConnectedOps>(
        KILN_OP_FULLY_CONNECTED, min_version, max_version)));
  }
  // BATCH_MATMUL v1: float32 with adj_x/adj_y and broadcast batch dims,
  // and hybrid (float lhs, int8 rhs); v2: int8; v3: int16x8; v4: hybrid
  // with asymmetric_quantize_inputs.
  def.AddKernel(sdk::StatePerShapeSignature(
      VariantKernel<BatchMatMulOps>(KILN_OP_BATCH_MATMUL, 1, 4)));
}

}  // namespace kiln::cpu::nn
