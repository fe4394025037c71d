#include "kernels/nn/fully_connected_quantized.h"

#include <algorithm>

#include "kernels/nn/parallel.h"

namespace kiln::cpu::nn {
namespace {

constexpr const char* kOp = "FULLY_CONNECTED";
constexpr ConvOperands kFullyConnectedOperands{
    sdk::Input(0), sdk::Input(1, "weights"), sdk::Input(2, "bias"),
    sdk::Output(0)};
// Target size of one converted-input chunk, in int16 values.
constexpr int64_t kScratchValues = 64 * 1024;

RequantRules FullyConnectedRules(int32_t units, int64_t activation) {
  RequantRules r;
  r.op = kOp;
  r.channels = units;
  r.filter_axis = 0;
  r.activation = activation;
  // Per-tensor weights keep their zero point (TFLite applies it for
  // backward compatibility); per-channel weights are taken as symmetric.
  r.int8_filter_zero_point_allowed = true;
  r.use_filter_offset = true;
  r.per_tensor_float_product = true;  // for its bias-scale check
  r.requant_in_double = true;
  r.refuse_non_clamp_activation = true;
  return r;
}

void PackWeights(QuantizedFullyConnectedState& s, const Tensor& weights) {
  if (weights.type() == KILN_TYPE_UINT8) {
    s.weights.Pack(weights.data<uint8_t>(), s.depth, 1, s.q.filter_offset);
  } else {
    s.weights.Pack(weights.data<int8_t>(), s.depth, 1, s.q.filter_offset);
  }
}

// Chunks of rows on the host's pool, each through the running thread's
// converted-input and accumulator scratch.
template <typename T>
void Run(KernelContext& k, QuantizedFullyConnectedState& s, const T* in,
         const BiasView& bias, T* out) {
  const int32_t kp = s.weights.k_padded();
  const int64_t chunk_values = int64_t{s.chunk_rows} * kp;
  EnsureThreadScratch(k, chunk_values, &s.threads, &s.lhs);
  if (static_cast<int32_t>(s.scratch.size()) < s.threads) {
    s.scratch.resize(static_cast<size_t>(s.threads));
    for (IntGemmScratch& sc : s.scratch) {
      sc.Reserve(s.chunk_rows, s.units, s.q.wide_accumulator);
    }
  }
  const int64_t chunks = (s.rows + s.chunk_rows - 1) / s.chunk_rows;
  ParallelRows(
      k, chunks, int64_t{s.chunk_rows} * kp * s.units,
      [&](int64_t begin, int64_t end, int32_t thread) {
        int16_t* lhs = s.lhs.data() + thread * chunk_values;
        for (int64_t c = begin; c < end; ++c) {
          const int32_t r0 = static_cast<int32_t>(c) * s.chunk_rows;
          const int32_t n = std::min(s.chunk_rows, s.rows - r0);
          for (int32_t r = 0; r < n; ++r) {
            ToInt16WithOffset(in + static_cast<int64_t>(r0 + r) * s.depth,
                              s.depth, s.q.input_offset, lhs + int64_t{r} * kp);
          }
          RequantizedGemm(lhs, n, s.weights, bias, s.q, s.q.wide_accumulator,
                          s.scratch[static_cast<size_t>(thread)],
                          out + static_cast<int64_t>(r0) * s.units, s.units);
        }
      });
}

}  // namespace

KilnStatus ReadFullyConnectedNode(KernelContext& k, FullyConnectedNode* node) {
  const Tensor input = k.input(0), weights = k.input(1);
  int32_t* rows = &node->rows;
  std::vector<int32_t>* out_shape = &node->out_shape;
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ReadFusedActivation(k, k.output(0).type(), &node->activation));
  const int64_t format = k.OptionInt(KILN_OPTION_WEIGHTS_FORMAT, 0);
  if (format != 0) {
    return k.Fail(KILN_STATUS_UNIMPLEMENTED, kOp, ": weights_format ", format,
                  " (shuffled uint8 weights, version 2) is not supported; "
                  "this CPU kernel supports the DEFAULT (0) weights format "
                  "only");
  }
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectKnownShape(k, sdk::Input(0)));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectRank(k, sdk::Input(1, "weights"), 2));
  const int32_t units = weights.dim(0), depth = weights.dim(1);
  node->units = units;
  node->depth = depth;
  const std::vector<int32_t> in_shape = input.shape();
  const int64_t elements = DimProduct(in_shape, 0, in_shape.size());
  if (depth <= 0 || elements % depth != 0) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, kOp, ": input '", input.name(),
                  "' with shape ", ShapeString(in_shape),
                  " cannot be viewed as rows of ", depth, " values (weights '",
                  weights.name(), "' are ", ShapeString(weights.shape()), ")");
  }
  *rows = static_cast<int32_t>(elements / depth);
  if (k.OptionInt(KILN_OPTION_KEEP_NUM_DIMS, 0) == 0) {
    *out_shape = {*rows, units};
    return KILN_STATUS_OK;
  }
  if (in_shape.empty() || in_shape.back() != depth) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, kOp,
                  ": keep_num_dims needs the input's last dimension to "
                  "equal the weights' depth ",
                  depth, "; input '", input.name(), "' is ",
                  ShapeString(in_shape));
  }
  *out_shape = in_shape;
  out_shape->back() = units;
  return KILN_STATUS_OK;
}

KilnStatus QuantizedFullyConnectedPrepare(KernelContext& k, IntScheme scheme,
                                          QuantizedFullyConnectedState& s) {
  const Tensor weights = k.input(1);
  FullyConnectedNode node;
  KILN_SDK_RETURN_IF_ERROR(ReadFullyConnectedNode(k, &node));
  s.rows = node.rows;
  s.units = node.units;
  s.depth = node.depth;
  KILN_SDK_RETURN_IF_ERROR(
      PrepareChannelRequant(k, FullyConnectedRules(s.units, node.activation),
                            scheme, kFullyConnectedOperands, &s.q));
  s.pack_in_invoke =
      !(weights.is_constant() && weights.data<void>() != nullptr);
  const bool packed = !s.pack_in_invoke &&
                      s.packed_from == weights.data<void>() &&
                      s.packed_offset == s.q.filter_offset &&
                      s.weights.n() == s.units && s.weights.k() == s.depth;
  if (!packed) {
    s.weights.Resize(s.units, s.depth);
    s.packed_from = nullptr;
    if (!s.pack_in_invoke) {
      PackWeights(s, weights);
      s.packed_from = weights.data<void>();
      s.packed_offset = s.q.filter_offset;
    }
  }
  const int64_t per_row = std::max<int64_t>(1, s.weights.k_padded());
  s.threads = sdk::ParallelThreads(k.host(), k.raw_context());
  s.chunk_rows = ParallelChunkRows(
      static_cast<int32_t>(std::min<int64_t>(
          std::max<int64_t>(kScratchValues / per_row, 4), std::max(s.rows, 1))),
      1, s.rows, s.threads, 4);
  s.lhs.assign(static_cast<size_t>(s.threads) * s.chunk_rows * per_row, 0);
  s.scratch.assign(static_cast<size_t>(s.threads), IntGemmScratch());
  for (IntGemmScratch& sc : s.scratch) {
    sc.Reserve(s.chunk_rows, s.units, s.q.wide_accumulator);
  }
  return k.Resize(k.output(0), node.out_shape);
}

KilnStatus QuantizedFullyConnectedInvoke(KernelContext& k,
                                         QuantizedFullyConnectedState& s) {
  ConvLikeBuffers b;
  KILN_SDK_RETURN_IF_ERROR(ReadConvLikeBuffers(k, kFullyConnectedOperands, &b));
  if (s.pack_in_invoke) PackWeights(s, b.filter);
  ForScheme(s.q.scheme, [&](auto tag) {
    using T = decltype(tag);
    Run(k, s, b.input.data<T>(), b.bias, b.output.data<T>());
  });
  return KILN_STATUS_OK;
}

}  // namespace kiln::cpu::nn
