// FULLY_CONNECTED and BATCH_MATMUL on float32 through the packed GEMM;
// FULLY_CONNECTED also on int8 (per-tensor weights, int32 bias) with TFLite's
// integer requantization.
#include <algorithm>
#include <vector>

#include "kernels/broadcast.h"
#include "kernels/nn/gemm.h"
#include "kernels/nn/nn_common.h"
#include "kernels/quantization_util.h"
#include "kernels/registry.h"

namespace kiln::cpu::nn {
namespace {

constexpr const char* kQuantNote =
    "quantized and hybrid variants are not implemented";
constexpr sdk::Operand kWeights = sdk::Input(1, "weights");
constexpr sdk::Operand kBias = sdk::Input(2, "bias");

bool IsStatic(const Tensor& t) {
  return !t.present() || (t.is_constant() && t.data<float>() != nullptr);
}

// ---- FULLY_CONNECTED -----------------------------------------------------

// Integer parameters of an int8 FULLY_CONNECTED, as TFLite's reference
// integer kernel: acc = sum((w + weights_offset) * (x + input_offset)) + bias,
// out = clamp(MultiplyByQuantizedMultiplier(acc) + output_offset).
struct QuantizedFullyConnectedParams {
  int32_t input_offset = 0, weights_offset = 0, output_offset = 0;
  QuantizedMultiplier output_multiplier;
  int32_t activation_min = -128, activation_max = 127;
};

struct FullyConnectedState {
  int64_t activation = KILN_ACTIVATION_NONE;
  int32_t rows = 0;
  bool pack_in_invoke = false;
  PackedMatrix weights;
  bool quantized = false;  // int8 path; `weights` is then unused
  int32_t units = 0, depth = 0;
  QuantizedFullyConnectedParams q;
};

// Prepare of the int8 path once the input is known to be INT8: checks the
// other tensors' types and derives the requantization parameters.
KilnStatus QuantizedFullyConnectedPrepare(KernelContext& k,
                                          FullyConnectedState& s) {
  constexpr const char* kInt8Note =
      "int8 FULLY_CONNECTED needs INT8 input, weights and output and an "
      "INT32 bias";
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectType(k, kWeights, {KILN_TYPE_INT8}, kInt8Note));
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectType(k, sdk::Output(0), {KILN_TYPE_INT8}, kInt8Note));
  if (k.num_inputs() > 2 && k.input(2).present()) {
    KILN_SDK_RETURN_IF_ERROR(
        sdk::ExpectType(k, kBias, {KILN_TYPE_INT32}, kInt8Note));
  }
  sdk::TensorQuantization qin, qw, qout;
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ReadQuantization(k, sdk::Input(0), sdk::kPerTensor, &qin));
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ReadQuantization(k, kWeights, sdk::kPerTensor, &qw));
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ReadQuantization(k, sdk::Output(0), sdk::kPerTensor, &qout));
  s.q.input_offset = -qin.zero_points[0];
  s.q.weights_offset = -qw.zero_points[0];
  s.q.output_offset = qout.zero_points[0];
  const double real_multiplier = static_cast<double>(qin.scales[0]) *
                                 static_cast<double>(qw.scales[0]) /
                                 static_cast<double>(qout.scales[0]);
  s.q.output_multiplier = QuantizeMultiplier(real_multiplier);
  if (!QuantizedActivationRange(s.activation, qout.scales[0],
                                qout.zero_points[0], -128, 127,
                                &s.q.activation_min, &s.q.activation_max)) {
    return k.Fail(KILN_STATUS_INTERNAL, sdk::OpName(k),
                  ": no quantized range for fused activation ",
                  sdk::ActivationName(s.activation));
  }
  return KILN_STATUS_OK;
}

KilnStatus QuantizedFullyConnectedInvoke(KernelContext& k,
                                         const FullyConnectedState& s) {
  Int8Buffers buffers;
  KILN_SDK_RETURN_IF_ERROR(ReadInt8Buffers(k, kWeights, &buffers));
  const auto [x, w, b, o] = buffers;
  const QuantizedFullyConnectedParams& q = s.q;
  for (int32_t r = 0; r < s.rows; ++r) {
    const int8_t* row = x + static_cast<int64_t>(r) * s.depth;
    for (int32_t u = 0; u < s.units; ++u) {
      const int8_t* wu = w + static_cast<int64_t>(u) * s.depth;
      int32_t acc = 0;
      for (int32_t d = 0; d < s.depth; ++d) {
        acc += (wu[d] + q.weights_offset) * (row[d] + q.input_offset);
      }
      if (b != nullptr) acc += b[u];
      acc = MultiplyByQuantizedMultiplier(acc, q.output_multiplier) +
            q.output_offset;
      acc = std::min(q.activation_max, std::max(q.activation_min, acc));
      o[static_cast<int64_t>(r) * s.units + u] = static_cast<int8_t>(acc);
    }
  }
  return KILN_STATUS_OK;
}

KilnStatus FullyConnectedPrepare(KernelContext& k, FullyConnectedState& s) {
  const char* op = sdk::OpName(k);
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectInputCount(k, 2, 3));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectOutputCount(k, 1));
  const Tensor input = k.input(0), weights = k.input(1), out = k.output(0);
  const Tensor bias = k.num_inputs() > 2 ? k.input(2) : Tensor();
  s.quantized = input.present() && input.type() == KILN_TYPE_INT8;
  if (!s.quantized) {
    KILN_SDK_RETURN_IF_ERROR(
        sdk::ExpectType(k, sdk::Input(0), {KILN_TYPE_FLOAT32}, kQuantNote));
    KILN_SDK_RETURN_IF_ERROR(
        sdk::ExpectType(k, kWeights, {KILN_TYPE_FLOAT32}, kQuantNote));
    KILN_SDK_RETURN_IF_ERROR(
        sdk::ExpectType(k, sdk::Output(0), {KILN_TYPE_FLOAT32}, kQuantNote));
  }
  const int64_t format = k.OptionInt(KILN_OPTION_WEIGHTS_FORMAT, 0);
  if (format != 0) {
    return k.Fail(KILN_STATUS_UNIMPLEMENTED, op, ": weights_format ", format,
                  " (shuffled int8 weights) is not supported; this CPU "
                  "kernel supports the DEFAULT (0) weights format only");
  }
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ReadFusedActivation(k, k.output(0).type(), &s.activation));
  if (s.quantized) {
    KILN_SDK_RETURN_IF_ERROR(QuantizedFullyConnectedPrepare(k, s));
  }
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectKnownShape(k, sdk::Input(0)));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectRank(k, kWeights, 2));
  const int32_t units = weights.dim(0), depth = weights.dim(1);
  if (bias.present()) {
    if (!s.quantized) {
      KILN_SDK_RETURN_IF_ERROR(
          sdk::ExpectType(k, kBias, {KILN_TYPE_FLOAT32}, kQuantNote));
    }
    KILN_SDK_RETURN_IF_ERROR(sdk::ExpectKnownShape(k, kBias));
    if (bias.num_elements() != units) {
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, ": bias '", bias.name(),
                    "' has shape ", ShapeString(bias.shape()), ", expected [",
                    units, "] (one value per output unit)");
    }
  }
  const std::vector<int32_t> in_shape = input.shape();
  const int64_t elements = DimProduct(in_shape, 0, in_shape.size());
  if (depth <= 0 || elements % depth != 0) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, ": input '", input.name(),
                  "' with shape ", ShapeString(in_shape),
                  " cannot be viewed as rows of ", depth, " values (weights '",
                  weights.name(), "' are ", ShapeString(weights.shape()), ")");
  }
  s.rows = static_cast<int32_t>(elements / depth);
  s.units = units;
  s.depth = depth;
  std::vector<int32_t> out_shape;
  if (k.OptionInt(KILN_OPTION_KEEP_NUM_DIMS, 0) != 0) {
    if (in_shape.empty() || in_shape.back() != depth) {
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op,
                    ": keep_num_dims needs the input's last dimension to "
                    "equal the weights' depth ",
                    depth, "; input '", input.name(), "' is ",
                    ShapeString(in_shape));
    }
    out_shape = in_shape;
    out_shape.back() = units;
  } else {
    out_shape = {s.rows, units};
  }
  if (s.quantized) return k.Resize(out, out_shape);
  s.weights.Resize(units, depth);
  s.pack_in_invoke = !(IsStatic(weights) && IsStatic(bias));
  if (!s.pack_in_invoke) {
    s.weights.Pack(weights.data<float>(), depth, 1,
                   bias.present() ? bias.data<float>() : nullptr);
  }
  return k.Resize(out, out_shape);
}

KilnStatus FullyConnectedInvoke(KernelContext& k, FullyConnectedState& s) {
  if (s.quantized) return QuantizedFullyConnectedInvoke(k, s);
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
  const char* op = sdk::OpName(k);
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectInputCount(k, 2, 2));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectOutputCount(k, 1));
  const Tensor lhs = k.input(0), rhs = k.input(1), out = k.output(0);
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectType(k, sdk::Input(0), {KILN_TYPE_FLOAT32}, kQuantNote));
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectType(k, sdk::Input(1), {KILN_TYPE_FLOAT32}, kQuantNote));
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectType(k, sdk::Output(0), {KILN_TYPE_FLOAT32}, kQuantNote));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectKnownShape(k, sdk::Input(0)));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectKnownShape(k, sdk::Input(1)));
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
  // FULLY_CONNECTED v1: float32, DEFAULT weights (uint8 refused by type);
  // v2: shuffled int8 weights (refused in prepare); v3: hybrid (float input,
  // int8 weights; refused by type); v4: int8 with per-tensor weights and
  // int32 bias; v5: keep_num_dims; v6: bias omitted. v7+ are
  // int16/sparse/int4 variants. Kernels dispatch on the input type.
  def.AddKernel(
      sdk::MakeStatefulKernel<FullyConnectedState, FullyConnectedPrepare,
                              FullyConnectedInvoke>(KILN_OP_FULLY_CONNECTED, 1,
                                                    6));
  // BATCH_MATMUL v1: float32 with adj_x/adj_y and broadcast batch dims.
  // v2-v4 are int8/int16/hybrid variants.
  def.AddKernel(
      sdk::MakeStatefulKernel<BatchMatMulState, BatchMatMulPrepare,
                              BatchMatMulInvoke>(KILN_OP_BATCH_MATMUL, 1, 1));
}

}  // namespace kiln::cpu::nn
