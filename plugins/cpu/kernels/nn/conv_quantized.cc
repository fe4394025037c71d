#include "kernels/nn/conv_quantized.h"

#include <algorithm>

#include "kernels/nn/parallel.h"

namespace kiln::cpu::nn {
namespace {

// Target size of one im2col chunk, in int16 values.
constexpr int64_t kScratchValues = 64 * 1024;

// ---- CONV_2D ---------------------------------------------------------------

template <typename T>
void PackConvFilter(QuantizedConvState& s, const Tensor& filter) {
  const int32_t depth = s.g.taps() * s.g.in_c;
  s.weights.Pack(filter.data<T>(), depth, 1, s.q.filter_offset);
}

void PackFilter(QuantizedConvState& s, const Tensor& filter) {
  if (filter.type() == KILN_TYPE_UINT8) {
    PackConvFilter<uint8_t>(s, filter);
  } else {
    PackConvFilter<int8_t>(s, filter);
  }
}

// Chunks of output rows on the host's pool, each through the running
// thread's im2col and accumulator scratch; a row's value does not depend on
// the chunk it falls in.
template <typename T>
void ConvRun(KernelContext& k, QuantizedConvState& s, const T* in,
             const BiasView& bias, T* out) {
  const ConvGeometry& g = s.g;
  const int32_t kp = s.weights.k_padded();
  const int32_t rows = g.out_pixels();
  const bool wide = s.q.wide_accumulator;
  const int64_t chunk_values = int64_t{s.chunk_rows} * kp;
  EnsureThreadScratch(k, chunk_values, &s.threads, &s.im2col);
  if (static_cast<int32_t>(s.scratch.size()) < s.threads) {
    s.scratch.resize(static_cast<size_t>(s.threads));
    for (IntGemmScratch& sc : s.scratch)
      sc.Reserve(s.chunk_rows, g.out_c, wide);
  }
  const int64_t per_image = (rows + s.chunk_rows - 1) / s.chunk_rows;
  const int64_t row_macs = int64_t{kp} * g.out_c;
  ParallelRows(
      k, per_image * g.batches, row_macs * s.chunk_rows,
      [&](int64_t begin, int64_t end, int32_t thread) {
        int16_t* col = s.im2col.data() + thread * chunk_values;
        for (int64_t t = begin; t < end; ++t) {
          const int32_t b = static_cast<int32_t>(t / per_image);
          const int32_t r0 = static_cast<int32_t>(t % per_image) * s.chunk_rows;
          const int32_t n = std::min(s.chunk_rows, rows - r0);
          Im2ColInt16(g, in + b * g.in_image(), s.q.input_offset, r0, n, kp,
                      col);
          RequantizedGemm(col, n, s.weights, bias, s.q, wide,
                          s.scratch[static_cast<size_t>(thread)],
                          out + (static_cast<int64_t>(b) * rows + r0) * g.out_c,
                          g.out_c);
        }
      });
}

bool IsStaticTensor(const Tensor& t) {
  return t.is_constant() && t.data<void>() != nullptr;
}

}  // namespace

KilnStatus QuantizedConvPrepare(KernelContext& k, IntScheme scheme,
                                QuantizedConvState& s) {
  constexpr const char* op = "CONV_2D";
  const Tensor input = k.input(0), filter = k.input(1), out = k.output(0);
  const Tensor bias = k.num_inputs() > 2 ? k.input(2) : Tensor();
  KILN_SDK_RETURN_IF_ERROR(ReadConv2DGeometry(k, op, input, filter, &s.g));
  if (!bias.present()) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op,
                  ": quantized CONV_2D needs a bias input (TFLite refuses "
                  "it without one too); re-export the model with a zero "
                  "bias");
  }
  // TFLite refuses an int8 filter zero point on CONV_2D (false).
  KILN_SDK_RETURN_IF_ERROR(PrepareChannelRequant(
      k,
      ConvolutionRules("CONV_2D", scheme, s.g.out_c, 0, s.g.activation, false),
      scheme, kConvOperands, &s.q));
  const int32_t depth = s.g.taps() * s.g.in_c;
  s.weights.Resize(s.g.out_c, depth);
  s.pack_in_invoke = !IsStaticTensor(filter);
  if (!s.pack_in_invoke) PackFilter(s, filter);
  const int64_t per_row = std::max<int64_t>(1, s.weights.k_padded());
  s.threads = sdk::ParallelThreads(k.host(), k.raw_context());
  s.chunk_rows =
      ParallelChunkRows(static_cast<int32_t>(std::min<int64_t>(
                            std::max<int64_t>(kScratchValues / per_row, 8),
                            std::max(s.g.out_pixels(), 1))),
                        s.g.batches, s.g.out_pixels(), s.threads);
  s.im2col.assign(static_cast<size_t>(s.threads) * s.chunk_rows * per_row, 0);
  s.scratch.assign(static_cast<size_t>(s.threads), IntGemmScratch());
  for (IntGemmScratch& sc : s.scratch) {
    sc.Reserve(s.chunk_rows, s.g.out_c, s.q.wide_accumulator);
  }
  return k.Resize(out, {s.g.batches, s.g.out_h, s.g.out_w, s.g.out_c});
}

KilnStatus QuantizedConvInvoke(KernelContext& k, QuantizedConvState& s) {
  ConvLikeBuffers b;
  KILN_SDK_RETURN_IF_ERROR(ReadConvLikeBuffers(k, kConvOperands, &b));
  if (s.pack_in_invoke) PackFilter(s, b.filter);
  ForScheme(s.q.scheme, [&](auto tag) {
    using T = decltype(tag);
    ConvRun(k, s, b.input.data<T>(), b.bias, b.output.data<T>());
  });
  return KILN_STATUS_OK;
}

}  // namespace kiln::cpu::nn
