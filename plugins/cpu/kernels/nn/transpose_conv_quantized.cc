// Integer TRANSPOSE_CONV (declared in conv_quantized.h).
#include <algorithm>

#include "kernels/nn/conv_quantized.h"
#include "kernels/nn/parallel.h"
#include "kernels/nn/requantize.h"

namespace kiln::cpu::nn {
namespace {

constexpr const char* kOp = "TRANSPOSE_CONV";
constexpr int64_t kScratchValues = 64 * 1024;
// Depth per int32 partial sum of the int16x8 path (as RequantizedGemm).
constexpr int32_t kWideDepthBlock = 128;

// Packs the OHWI filter as rows [fy][fx][oc] of in_c values.
template <typename T>
void PackFilterAs(QuantizedTransposeConvState& s, const T* filter) {
  const ConvGeometry& g = s.g;
  const int32_t taps = g.taps();
  std::vector<T> reordered(static_cast<size_t>(taps) * g.out_c * g.in_c);
  for (int32_t oc = 0; oc < g.out_c; ++oc) {
    for (int32_t t = 0; t < taps; ++t) {
      const T* src = filter + (static_cast<int64_t>(oc) * taps + t) * g.in_c;
      std::copy(
          src, src + g.in_c,
          reordered.data() + (static_cast<int64_t>(t) * g.out_c + oc) * g.in_c);
    }
  }
  s.weights.Pack(reordered.data(), g.in_c, 1, s.q.filter_offset);
}

void PackFilter(QuantizedTransposeConvState& s, const Tensor& filter) {
  if (filter.type() == KILN_TYPE_UINT8) {
    PackFilterAs(s, filter.data<uint8_t>());
  } else {
    PackFilterAs(s, filter.data<int8_t>());
  }
}

// One pool thread's scratch (QuantizedTransposeConvState::lhs / col /
// col64 at its index).
struct Scratch {
  int16_t* lhs;
  int32_t* col;
  int64_t* col64;
};

Scratch ScratchOf(QuantizedTransposeConvState& s, int32_t thread) {
  const int64_t rows = s.chunk_rows, n = s.weights.n();
  const int64_t col_size = rows * n;
  return {s.lhs.data() + thread * rows * s.weights.k_padded(),
          s.col.data() + thread * col_size,
          s.col64.empty() ? nullptr : s.col64.data() + thread * col_size};
}

// col = lhs x weights for `rows` input pixels, summed in Acc.
template <typename Acc>
const Acc* GemmColumns(const QuantizedTransposeConvState& s, const Scratch& t,
                       int32_t rows);

template <>
const int32_t* GemmColumns<int32_t>(const QuantizedTransposeConvState& s,
                                    const Scratch& t, int32_t rows) {
  const int32_t kp = s.weights.k_padded();
  IntGemm(t.lhs, kp, rows, s.weights, 0, kp, t.col, s.weights.n());
  return t.col;
}

template <>
const int64_t* GemmColumns<int64_t>(const QuantizedTransposeConvState& s,
                                    const Scratch& t, int32_t rows) {
  const int32_t kp = s.weights.k_padded();
  const int64_t count = int64_t{rows} * s.weights.n();
  std::fill(t.col64, t.col64 + count, int64_t{0});
  for (int32_t k0 = 0; k0 < kp; k0 += kWideDepthBlock) {
    IntGemm(t.lhs, kp, rows, s.weights, k0, std::min(kp, k0 + kWideDepthBlock),
            t.col, s.weights.n());
    for (int64_t i = 0; i < count; ++i) t.col64[i] += t.col[i];
  }
  return t.col64;
}

// The input rows whose taps reach output rows [oy0, oy1): [*lo, *hi).
void InputRowsOfBand(const ConvGeometry& g, int32_t oy0, int32_t oy1,
                     int32_t* lo, int32_t* hi) {
  const int32_t sh = g.window.stride_h;
  const int32_t first = oy0 + g.pad_h - (g.filter_h - 1);
  *lo = first <= 0 ? 0 : (first + sh - 1) / sh;
  const int32_t last = oy1 - 1 + g.pad_h;
  *hi = last < 0 ? 0 : std::min(g.in_h, last / sh + 1);
}

// out = the requantized acc + bias of pixels [p0, p1), vectorized for
// 8-bit outputs of int32 sums.
template <typename T, typename Acc>
void RequantizeBand(const ChannelRequant& q, const BiasView& bias,
                    const Acc* acc, int64_t p0, int64_t p1, int32_t out_c,
                    T* out) {
  if constexpr (sizeof(Acc) == 4 && sizeof(T) == 1) {
    if (RowRequantApplies(q) && bias.i64 == nullptr) {
      RequantizeRows(acc + p0 * out_c, static_cast<int32_t>(p1 - p0), out_c,
                     bias.i32, q, out + p0 * out_c, out_c);
      return;
    }
  }
  for (int64_t p = p0; p < p1; ++p) {
    for (int32_t c = 0; c < out_c; ++c) {
      Acc v = acc[p * out_c + c];
      if constexpr (sizeof(Acc) == 4) {
        v = WrappingAdd(v, static_cast<int32_t>(bias.at(c)));
      } else {
        v += bias.at(c);
      }
      out[p * out_c + c] = static_cast<T>(RequantizeChannel(v, c, q));
    }
  }
}

// Windows that tile the output (filter = stride, no padding), 8-bit output
// of int32 sums: rows [row0, row0 + rows) of `col` requantized straight into
// the output pixels of rows [oy0, oy1) their taps reach, one RequantizeRows
// call per input pixel and filter row (filter_w adjacent output pixels).
template <typename T>
void RequantizeTiles(const ConvGeometry& g, const ChannelRequant& q,
                     const int32_t* bias, int32_t row0, int32_t rows,
                     const int32_t* col, int64_t ldcol, T* out, int32_t oy0,
                     int32_t oy1) {
  for (int32_t r = 0; r < rows; ++r) {
    const int32_t iy = (row0 + r) / g.in_w, ix = (row0 + r) % g.in_w;
    for (int32_t fy = 0; fy < g.filter_h; ++fy) {
      const int32_t oy = iy * g.filter_h + fy;
      if (oy < oy0 || oy >= oy1) continue;
      RequantizeRows(
          col + r * ldcol + int64_t{fy} * g.filter_w * g.out_c, g.filter_w,
          g.out_c, bias, q,
          out + (int64_t{oy} * g.out_w + int64_t{ix} * g.filter_w) * g.out_c,
          g.out_c);
    }
  }
}

// Output rows [oy0, oy1) of one image: the GEMM of every input row that
// reaches them, added into those rows only (integer sums: the same in any
// order), then requantized.
template <typename T, typename Acc>
void RunBand(const QuantizedTransposeConvState& s, const Scratch& t,
             const T* in, const BiasView& bias, T* out, Acc* acc, int32_t oy0,
             int32_t oy1) {
  const ConvGeometry& g = s.g;
  const int32_t kp = s.weights.k_padded();
  const int64_t row_values = int64_t{g.out_w} * g.out_c;
  // Windows that do not overlap (filter within the stride) reach each
  // output once: their sums are copied, onto zeros only where some output
  // is reached by none.
  const bool disjoint =
      g.filter_h <= g.window.stride_h && g.filter_w <= g.window.stride_w;
  const bool covered = disjoint && g.filter_h == g.window.stride_h &&
                       g.filter_w == g.window.stride_w && g.pad_h == 0 &&
                       g.pad_w == 0 && g.out_h == g.in_h * g.filter_h &&
                       g.out_w == g.in_w * g.filter_w;
  bool direct = false;  // RequantizeTiles applies
  if constexpr (sizeof(Acc) == 4 && sizeof(T) == 1) {
    direct = covered && RowRequantApplies(s.q) && bias.i64 == nullptr;
  }
  if (!covered) {
    std::fill(acc + oy0 * row_values, acc + oy1 * row_values, Acc{0});
  }
  int32_t iy_lo = 0, iy_hi = 0;
  InputRowsOfBand(g, oy0, oy1, &iy_lo, &iy_hi);
  for (int32_t r0 = iy_lo * g.in_w; r0 < iy_hi * g.in_w; r0 += s.chunk_rows) {
    const int32_t n = std::min(s.chunk_rows, iy_hi * g.in_w - r0);
    for (int32_t r = 0; r < n; ++r) {
      ToInt16WithOffset(in + (int64_t{r0} + r) * g.in_c, g.in_c,
                        s.q.input_offset, t.lhs + int64_t{r} * kp);
    }
    const Acc* col = GemmColumns<Acc>(s, t, n);
    if constexpr (sizeof(Acc) == 4 && sizeof(T) == 1) {
      if (direct) {
        RequantizeTiles(g, s.q, bias.i32, r0, n, col, s.weights.n(), out, oy0,
                        oy1);
        continue;
      }
    }
    if (disjoint) {
      Col2ImAddBand(g, r0, n, col, s.weights.n(), acc, oy0, oy1,
                    [](Acc* dst, const Acc* src, int32_t c) {
                      std::copy(src, src + c, dst);
                    });
      continue;
    }
    Col2ImAddBand(g, r0, n, col, s.weights.n(), acc, oy0, oy1,
                  [](Acc* dst, const Acc* src, int32_t c) {
                    for (int32_t i = 0; i < c; ++i) {
                      dst[i] = static_cast<Acc>(
                          static_cast<std::make_unsigned_t<Acc>>(dst[i]) +
                          static_cast<std::make_unsigned_t<Acc>>(src[i]));
                    }
                  });
  }
  if (direct) return;
  RequantizeBand(s.q, bias, acc, oy0 * int64_t{g.out_w}, oy1 * int64_t{g.out_w},
                 g.out_c, out);
}

// Each image in bands of output rows across the pool when the work is large
// enough (bands recompute the input rows they share).
template <typename T, typename Acc>
KilnStatus Run(KernelContext& k, QuantizedTransposeConvState& s, const T* in,
               const BiasView& bias, T* out, std::vector<Acc>& acc) {
  const ConvGeometry& g = s.g;
  const int64_t macs = g.in_image() * g.taps() * g.out_c;
  // Four bands a thread (a slow thread's band is then short) of at least
  // four input rows each.
  const int32_t bands =
      macs < kMinParallelMacs || s.threads <= 1
          ? 1
          : std::max(1, std::min({4 * s.threads, g.out_h, g.in_h / 4}));
  const int64_t out_image = int64_t{g.out_h} * g.out_w * g.out_c;
  for (int32_t b = 0; b < g.batches; ++b) {
    KILN_SDK_RETURN_IF_ERROR(sdk::ParallelFor(
        k.host(), k.raw_context(), bands, 1,
        [&](int64_t begin, int64_t end, int32_t thread) {
          const Scratch t = ScratchOf(s, thread);
          for (int64_t i = begin; i < end; ++i) {
            RunBand(s, t, in + b * g.in_image(), bias, out + b * out_image,
                    acc.data(), static_cast<int32_t>(i * g.out_h / bands),
                    static_cast<int32_t>((i + 1) * g.out_h / bands));
          }
        }));
  }
  return KILN_STATUS_OK;
}

}  // namespace

KilnStatus QuantizedTransposeConvPrepare(KernelContext& k, IntScheme scheme,
                                         QuantizedTransposeConvState& s) {
  const Tensor filter = k.input(1), out = k.output(0);
  KILN_SDK_RETURN_IF_ERROR(ReadTransposeConvGeometry(k, kOp, &s.g, &s.shaped));
  // TFLite's per-channel transpose kernel ignores an int8 filter zero
  // point (true).
  KILN_SDK_RETURN_IF_ERROR(PrepareChannelRequant(
      k, ConvolutionRules(kOp, scheme, s.g.out_c, 0, s.g.activation, true),
      scheme, kTransposeConvOperands, &s.q));
  if (!s.shaped) return KILN_STATUS_OK;  // sized once the values exist
  const ConvGeometry& g = s.g;
  const int32_t taps_out = g.taps() * g.out_c;
  s.weights.Resize(taps_out, g.in_c);
  s.pack_in_invoke = !(filter.is_constant() && filter.data<void>() != nullptr);
  if (!s.pack_in_invoke) PackFilter(s, filter);
  const int64_t per_row =
      std::max<int64_t>(1, std::max<int64_t>(s.weights.k_padded(), taps_out));
  s.chunk_rows = static_cast<int32_t>(
      std::min<int64_t>(std::max<int64_t>(kScratchValues / per_row, 4),
                        std::max(g.in_h * g.in_w, 1)));
  s.threads = sdk::ParallelThreads(k.host(), k.raw_context());
  const size_t col = static_cast<size_t>(s.chunk_rows) * taps_out;
  s.lhs.assign(
      s.threads * static_cast<size_t>(s.chunk_rows) * s.weights.k_padded(), 0);
  s.col.assign(s.threads * col, 0);
  const size_t image = static_cast<size_t>(g.out_h) * g.out_w * g.out_c;
  const bool wide = s.q.wide_accumulator;
  s.col64.assign(wide ? s.col.size() : 0, 0);
  s.acc.assign(wide ? 0 : image, 0);
  s.acc64.assign(wide ? image : 0, 0);
  return k.Resize(out, {g.batches, g.out_h, g.out_w, g.out_c});
}

KilnStatus QuantizedTransposeConvInvoke(KernelContext& k,
                                        QuantizedTransposeConvState& s) {
  const Tensor shape = k.input(0);
  const int32_t* dims = shape.data<int32_t>();
  if (!s.shaped || dims == nullptr) {
    return k.Fail(KILN_STATUS_FAILED_PRECONDITION, kOp,
                  ": output shape unknown; the host must prepare the node "
                  "again once output_shape input '",
                  shape.name(), "' is computed");
  }
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectOutputShape(
      k, sdk::Output(0), {dims[0], dims[1], dims[2], dims[3]}));
  ConvLikeBuffers b;
  KILN_SDK_RETURN_IF_ERROR(ReadConvLikeBuffers(k, kTransposeConvOperands, &b));
  if (s.pack_in_invoke) PackFilter(s, b.filter);
  const int64_t col = int64_t{s.chunk_rows} * s.weights.n();
  int32_t threads = s.threads;
  EnsureThreadScratch(k, int64_t{s.chunk_rows} * s.weights.k_padded(), &threads,
                      &s.lhs);
  EnsureThreadScratch(k, col, &threads, &s.col);
  if (s.q.wide_accumulator) EnsureThreadScratch(k, col, &threads, &s.col64);
  s.threads = threads;
  KilnStatus status = KILN_STATUS_OK;
  ForScheme(s.q.scheme, [&](auto tag) {
    using T = decltype(tag);
    if (s.q.wide_accumulator) {
      status =
          Run(k, s, b.input.data<T>(), b.bias, b.output.data<T>(), s.acc64);
    } else {
      status = Run(k, s, b.input.data<T>(), b.bias, b.output.data<T>(), s.acc);
    }
  });
  return status;
}

}  // namespace kiln::cpu::nn
