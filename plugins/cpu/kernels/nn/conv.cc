// CONV_2D (im2col + packed GEMM, direct GEMM for 1x1 stride-1),
// DEPTHWISE_CONV_2D (direct, vectorised over channels) and TRANSPOSE_CONV
// (GEMM + col2im), float32, NHWC activations. Integer inputs (int8, uint8,
// int16x8) dispatch to conv_quantized.h.
#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "kernels/nn/conv_quantized.h"
#include "kernels/nn/depthwise.h"
#include "kernels/nn/gemm.h"
#include "kernels/nn/hybrid.h"
#include "kernels/nn/nn_common.h"
#include "kernels/nn/parallel.h"
#include "kernels/nn/type_dispatch.h"
#include "kernels/nn/vec.h"
#include "kernels/registry.h"

namespace kiln::cpu::nn {
namespace {

constexpr const char* kQuantNote =
    "quantized and hybrid variants are not implemented";
// Target size of one im2col / col2im scratch chunk, in floats.
constexpr int64_t kScratchFloats = 64 * 1024;

int32_t ChunkRows(int64_t row_floats, int32_t total_rows) {
  int64_t rows = kScratchFloats / std::max<int64_t>(1, row_floats);
  rows = std::max<int64_t>(rows, 8);
  return static_cast<int32_t>(std::min<int64_t>(rows, std::max(total_rows, 1)));
}

// Checks the optional float bias `bias`: shape [channels].
KilnStatus CheckBias(KernelContext& k, sdk::Operand bias, int32_t channels) {
  if (!OperandPresent(k, bias)) return KILN_STATUS_OK;
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectType(k, bias, {KILN_TYPE_FLOAT32}, kQuantNote));
  return sdk::ExpectShape(k, bias, {channels}, "one value per output channel");
}

// The float kernels' input, filter and output types.
KilnStatus ExpectFloatConv(KernelContext& k, const ConvOperands& ops) {
  for (const sdk::Operand o : {ops.input, ops.filter, ops.output}) {
    KILN_SDK_RETURN_IF_ERROR(
        sdk::ExpectType(k, o, {KILN_TYPE_FLOAT32}, kQuantNote));
  }
  return KILN_STATUS_OK;
}

bool IsStatic(const Tensor& t) {
  return !t.present() || (t.is_constant() && t.data<float>() != nullptr);
}

// ---- CONV_2D -------------------------------------------------------------

// The most filter rows of a row-tap convolution (one GEMM segment each).
constexpr int32_t kMaxRowTapSegments = 32;
// The fewest depths (filter_w * in_c) of a segment the row-tap path's
// segmented GEMM reads in place.
constexpr int32_t kMinRowTapDepth = 16;

struct ConvState {
  ConvGeometry g;
  bool direct = false;          // 1x1, stride 1: the input is the GEMM's A
  bool pack_in_invoke = false;  // filter or bias not constant
  int32_t chunk_rows = 0;
  int32_t threads = 1;  // the host pool's threads: one im2col chunk each
  PackedMatrix weights;
  // Row-tap path (stride any, dilation_w 1): an output row's pixels whose
  // taps' columns are all inside the image are one segmented GEMM
  // (GemmSegments: filter row fy's taps of consecutive pixels are the
  // input row iy read in place with row stride stride_w * in_c; a filter
  // row outside the image is left out); the other pixels go through
  // im2col.
  bool row_taps = false;
  int32_t ox_lo = 0, ox_hi = 0;  // pixels with every column inside
  // Segments shorter than kMinRowTapDepth (a first layer's 3 channels):
  // their pixels are copied into the im2col scratch instead, and the row
  // runs as one plain GEMM (the segmented one's short depth runs cost
  // more than the copy).
  bool row_copy = false;
  // threads x chunk_rows x (filter_h * filter_w * in_c)
  std::vector<float> im2col;
  // For a small im2col path (at most kMaxGatherEntries values per image):
  // each value's offset in the image, or -1 for padding, so Im2Col is one
  // gather instead of a walk over taps costing more than the copy.
  std::vector<int32_t> gather;
};

constexpr int64_t kMaxGatherEntries = 16 * 1024;

// ConvState::gather for geometry g (depth = filter_h * filter_w * in_c).
std::vector<int32_t> Im2ColGather(const ConvGeometry& g) {
  std::vector<int32_t> map;
  map.reserve(static_cast<size_t>(g.out_h) * g.out_w * g.filter_h * g.filter_w *
              g.in_c);
  for (int32_t oy = 0; oy < g.out_h; ++oy) {
    for (int32_t ox = 0; ox < g.out_w; ++ox) {
      for (int32_t fy = 0; fy < g.filter_h; ++fy) {
        const int32_t iy =
            oy * g.window.stride_h - g.pad_h + fy * g.window.dilation_h;
        for (int32_t fx = 0; fx < g.filter_w; ++fx) {
          const int32_t ix =
              ox * g.window.stride_w - g.pad_w + fx * g.window.dilation_w;
          const bool inside = iy >= 0 && iy < g.in_h && ix >= 0 && ix < g.in_w;
          for (int32_t ch = 0; ch < g.in_c; ++ch) {
            map.push_back(inside ? (iy * g.in_w + ix) * g.in_c + ch : -1);
          }
        }
      }
    }
  }
  return map;
}

KilnStatus ConvPrepare(KernelContext& k, ConvState& s) {
  const Tensor input = k.input(0), filter = k.input(1), out = k.output(0);
  const Tensor bias = k.num_inputs() > 2 ? k.input(2) : Tensor();
  KILN_SDK_RETURN_IF_ERROR(ExpectFloatConv(k, kConvOperands));
  KILN_SDK_RETURN_IF_ERROR(
      ReadConv2DGeometry(k, "CONV_2D", input, filter, &s.g));
  KILN_SDK_RETURN_IF_ERROR(CheckBias(k, kConvOperands.bias, s.g.out_c));
  s.direct = s.g.filter_h == 1 && s.g.filter_w == 1 &&
             s.g.window.stride_h == 1 && s.g.window.stride_w == 1 &&
             s.g.pad_h == 0 && s.g.pad_w == 0;
  const int32_t depth = s.g.filter_h * s.g.filter_w * s.g.in_c;
  s.pack_in_invoke = !(IsStatic(filter) && IsStatic(bias));
  if (s.pack_in_invoke) {
    s.weights.Resize(s.g.out_c, depth);
  } else {
    s.weights.PackConstant(s.g.out_c, depth, filter.data<float>(), depth, 1,
                           bias.present() ? bias.data<float>() : nullptr);
  }
  s.threads = sdk::ParallelThreads(k.host(), k.raw_context());
  const ConvGeometry& g = s.g;
  s.ox_lo =
      std::min(g.out_w, (g.pad_w + g.window.stride_w - 1) / g.window.stride_w);
  const int32_t last = g.in_w - g.filter_w + g.pad_w;  // >= ox * stride_w
  s.ox_hi = last < 0 ? 0 : std::min(g.out_w, last / g.window.stride_w + 1);
  s.ox_hi = std::max(s.ox_hi, s.ox_lo);
  s.row_taps = !s.direct && g.window.dilation_w == 1 &&
               g.filter_h <= kMaxRowTapSegments && s.ox_hi - s.ox_lo >= 4;
  s.row_copy = s.row_taps && g.filter_w * g.in_c < kMinRowTapDepth;
  if (s.row_taps) {
    s.chunk_rows = g.out_w;  // im2col scratch: one output row per thread
    s.im2col.assign(static_cast<size_t>(s.threads) * s.chunk_rows * depth, 0.f);
  } else if (s.direct) {
    s.im2col.clear();
    s.im2col.shrink_to_fit();
  } else {
    s.chunk_rows =
        ParallelChunkRows(ChunkRows(depth, s.g.out_h * s.g.out_w), s.g.batches,
                          s.g.out_h * s.g.out_w, s.threads);
    s.im2col.assign(static_cast<size_t>(s.threads) * s.chunk_rows * depth, 0.f);
  }
  s.gather.clear();
  if (!s.direct && !s.row_taps &&
      int64_t{g.out_h} * g.out_w * depth <= kMaxGatherEntries &&
      g.in_image() <= std::numeric_limits<int32_t>::max()) {
    s.gather = Im2ColGather(g);
  }
  return k.Resize(out, {s.g.batches, s.g.out_h, s.g.out_w, s.g.out_c});
}

// dst[0, n) = src[0, n) (src null: zeros) in fixed-size moves: im2col
// copies runs of a few floats (a 3-channel first layer: 3 or 9), where
// std::copy and std::fill are library calls costing more than the copy.
inline void CopyFloats(const float* src, int64_t n, float* dst) {
  constexpr float kZeros[8] = {};
  const int64_t step = src != nullptr ? 1 : 0;
  const float* s = src != nullptr ? src : kZeros;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) std::memcpy(dst + i, s + i * step, 32);
  if (i + 4 <= n) {
    std::memcpy(dst + i, s + i * step, 16);
    i += 4;
  }
  if (i + 2 <= n) {
    std::memcpy(dst + i, s + i * step, 8);
    i += 2;
  }
  if (i < n) dst[i] = s[i * step];
}

// Fills rows [row0, row0 + rows) of the im2col matrix of batch image `in`.
void Im2Col(const ConvState& s, const float* in, int32_t row0, int32_t rows,
            float* col) {
  const int32_t c = s.g.in_c;
  const int64_t depth = static_cast<int64_t>(s.g.filter_h) * s.g.filter_w * c;
  if (!s.gather.empty()) {
    const int32_t* offset = s.gather.data() + row0 * depth;
    for (int64_t i = 0; i < rows * depth; ++i) {
      col[i] = offset[i] >= 0 ? in[offset[i]] : 0.f;
    }
    return;
  }
  for (int32_t r = 0; r < rows; ++r) {
    const int32_t oy = (row0 + r) / s.g.out_w, ox = (row0 + r) % s.g.out_w;
    float* dst = col + r * depth;
    const int32_t y0 = oy * s.g.window.stride_h - s.g.pad_h;
    const int32_t x0 = ox * s.g.window.stride_w - s.g.pad_w;
    for (int32_t fy = 0; fy < s.g.filter_h; ++fy) {
      const int32_t iy = y0 + fy * s.g.window.dilation_h;
      if (iy < 0 || iy >= s.g.in_h) {
        CopyFloats(nullptr, s.g.filter_w * c, dst);
        dst += s.g.filter_w * c;
        continue;
      }
      const float* in_row = in + static_cast<int64_t>(iy) * s.g.in_w * c;
      if (s.g.window.dilation_w == 1 && x0 >= 0 &&
          x0 + s.g.filter_w <= s.g.in_w) {
        // The filter row's taps are adjacent pixels: one copy.
        CopyFloats(in_row + static_cast<int64_t>(x0) * c, s.g.filter_w * c,
                   dst);
        dst += s.g.filter_w * c;
        continue;
      }
      for (int32_t fx = 0; fx < s.g.filter_w; ++fx, dst += c) {
        const int32_t ix = x0 + fx * s.g.window.dilation_w;
        CopyFloats(ix < 0 || ix >= s.g.in_w
                       ? nullptr
                       : in_row + static_cast<int64_t>(ix) * c,
                   c, dst);
      }
    }
  }
}

// The row-tap path of ConvState over all output rows, on the host's pool
// (each row computed the same way whatever thread runs it).
KilnStatus RowTapsConv(KernelContext& k, ConvState& s, const float* in,
                       float* o) {
  const ConvGeometry& g = s.g;
  const int32_t depth = s.weights.k(), c = g.in_c, oc = g.out_c;
  const int64_t chunk_floats = static_cast<int64_t>(s.chunk_rows) * depth;
  const int64_t row_macs = static_cast<int64_t>(g.out_w) * oc * depth;
  const auto rows = [&](int64_t begin, int64_t end, int32_t thread) {
    float* col = s.im2col.data() + thread * chunk_floats;
    for (int64_t row = begin; row < end; ++row) {
      const int32_t b = static_cast<int32_t>(row / g.out_h);
      const int32_t oy = static_cast<int32_t>(row % g.out_h);
      const float* image = in + b * g.in_image();
      float* dst = o + row * g.out_w * oc;
      const int32_t y0 = oy * g.window.stride_h - g.pad_h;
      const int32_t r0 = oy * g.out_w;
      const float* seg[kMaxRowTapSegments];
      for (int32_t fy = 0; fy < g.filter_h; ++fy) {
        const int32_t iy = y0 + fy * g.window.dilation_h;
        seg[fy] = iy < 0 || iy >= g.in_h
                      ? nullptr
                      : image + (static_cast<int64_t>(iy) * g.in_w +
                                 s.ox_lo * g.window.stride_w - g.pad_w) *
                                    c;
      }
      const GemmSegments a{seg, g.filter_w * c, int64_t{g.window.stride_w} * c};
      const int32_t inner = s.ox_hi - s.ox_lo;
      if (s.row_copy) {
        // Short segments: the whole row as one GEMM of its im2col rows,
        // the inner pixels' rows copied from the segments.
        Im2Col(s, image, r0, s.ox_lo, col);
        Im2Col(s, image, r0 + s.ox_hi, g.out_w - s.ox_hi,
               col + static_cast<int64_t>(s.ox_hi) * depth);
        for (int32_t fy = 0; fy < g.filter_h; ++fy) {
          float* d = col + static_cast<int64_t>(s.ox_lo) * depth + fy * a.depth;
          for (int32_t p = 0; p < inner; ++p, d += depth) {
            CopyFloats(seg[fy] == nullptr ? nullptr : seg[fy] + p * a.lda,
                       a.depth, d);
          }
        }
        Gemm(col, depth, g.out_w, s.weights, g.activation, dst, oc);
        continue;
      }
      // Pixels [p0, p1) through im2col.
      const auto im2col = [&](int32_t p0, int32_t p1) {
        if (p1 <= p0) return;
        Im2Col(s, image, r0 + p0, p1 - p0, col);
        Gemm(col, depth, p1 - p0, s.weights, g.activation, dst + p0 * oc, oc);
      };
      im2col(0, s.ox_lo);
      im2col(s.ox_hi, g.out_w);
      GemmSegmented(a, inner, s.weights, g.activation,
                    dst + static_cast<int64_t>(s.ox_lo) * oc, oc);
    }
  };
  return ParallelRows(k, static_cast<int64_t>(g.batches) * g.out_h, row_macs,
                      rows);
}

KilnStatus ConvInvoke(KernelContext& k, ConvState& s) {
  const Tensor input = k.input(0), filter = k.input(1), out = k.output(0);
  if (s.pack_in_invoke) {
    const Tensor bias = k.num_inputs() > 2 ? k.input(2) : Tensor();
    s.weights.Pack(filter.data<float>(), s.weights.k(), 1,
                   bias.present() ? bias.data<float>() : nullptr);
  }
  const float* in = input.data<float>();
  float* o = out.data<float>();
  const int32_t rows = s.g.out_h * s.g.out_w;
  const int64_t in_image = static_cast<int64_t>(s.g.in_h) * s.g.in_w * s.g.in_c;
  if (s.direct) {
    ParallelGemm(k, in, s.g.in_c, s.g.batches * rows, s.weights, s.g.activation,
                 o, s.g.out_c);
    return KILN_STATUS_OK;
  }
  const int32_t depth = s.weights.k();
  const int64_t chunk_floats = static_cast<int64_t>(s.chunk_rows) * depth;
  EnsureThreadScratch(k, chunk_floats, &s.threads, &s.im2col);
  if (s.row_taps) return RowTapsConv(k, s, in, o);
  // Chunks of output rows, each im2col'd into the running thread's scratch:
  // a row's value does not depend on the chunk it falls in.
  const int64_t per_image = (rows + s.chunk_rows - 1) / s.chunk_rows;
  const int64_t chunks = per_image * s.g.batches;
  const auto run = [&](int64_t begin, int64_t end, int32_t thread,
                       bool parallel_gemm) {
    float* col = s.im2col.data() + thread * chunk_floats;
    for (int64_t t = begin; t < end; ++t) {
      const int32_t b = static_cast<int32_t>(t / per_image);
      const int32_t r0 = static_cast<int32_t>(t % per_image) * s.chunk_rows;
      const int32_t n = std::min(s.chunk_rows, rows - r0);
      float* dst = o + (static_cast<int64_t>(b) * rows + r0) * s.g.out_c;
      Im2Col(s, in + b * in_image, r0, n, col);
      if (parallel_gemm) {
        ParallelGemm(k, col, depth, n, s.weights, s.g.activation, dst,
                     s.g.out_c);
      } else {
        Gemm(col, depth, n, s.weights, s.g.activation, dst, s.g.out_c);
      }
    }
  };
  if (s.threads > 1 && chunks >= 2 * s.threads) {
    return sdk::ParallelFor(k.host(), k.raw_context(), chunks, 1,
                            [&](int64_t begin, int64_t end, int32_t thread) {
                              run(begin, end, thread, false);
                            });
  }
  run(0, chunks, 0, true);  // few chunks: split each GEMM instead
  return KILN_STATUS_OK;
}

// ---- DEPTHWISE_CONV_2D ---------------------------------------------------

// How DEPTHWISE_CONV_2D computes an output row; fixed by the geometry, so
// chosen once in prepare.
enum class DepthwisePath {
  kRow3x3,      // the AVX2 3x3 row kernel (weights in registers)
  kRow3x3Wide,  // the AVX2 3x3 row kernel for many channels
  kPixel,       // the pixel kernel over a list of in-image taps
  kGeneric,     // multiply-accumulate per tap (depth multiplier > 1, many taps)
};

struct DepthwiseState {
  ConvGeometry g;
  std::vector<float> zero_bias;
  DepthwisePath path = DepthwisePath::kGeneric;
  bool clamp = false;  // the activation is a clamp to [lo, hi]
  float lo = 0.f, hi = 0.f;
};

constexpr int32_t kMaxDepthwiseTaps = 64;
// The fewest channels of a 3x3 layer on the wide row kernel.
constexpr int32_t kMinWideChannels = 16;

// The portable DepthwisePixelFn (depthwise.h): products rounded and then
// added in tap order, a block of channels' sums kept across the taps.
void DepthwisePixelPortable(float* out, const float* bias,
                            const float* const* xs, const float* const* ws,
                            int32_t taps, int32_t channels, float lo,
                            float hi) {
  constexpr int32_t kBlock = 16;
  int32_t i = 0;
  for (; i + kBlock <= channels; i += kBlock) {
    float sum[kBlock];
    for (int32_t j = 0; j < kBlock; ++j) sum[j] = bias[i + j];
    for (int32_t t = 0; t < taps; ++t) {
      const float* x = xs[t] + i;
      const float* w = ws[t] + i;
      for (int32_t j = 0; j < kBlock; ++j) sum[j] += x[j] * w[j];
    }
    for (int32_t j = 0; j < kBlock; ++j) out[i + j] = sum[j];
  }
  for (; i < channels; ++i) {
    float sum = bias[i];
    for (int32_t t = 0; t < taps; ++t) sum += xs[t][i] * ws[t][i];
    out[i] = sum;
  }
  for (int32_t j = 0; j < channels; ++j) {  // NaN stays NaN
    out[j] = out[j] < lo ? lo : (out[j] > hi ? hi : out[j]);
  }
}

DepthwisePixelFn DepthwisePixelKernel() {
  static const DepthwisePixelFn kPixel = [] {
    const DepthwisePixelFn f = DepthwisePixelAvx2Fma();
    return f != nullptr ? f : &DepthwisePixelPortable;
  }();
  return kPixel;
}

DepthwiseRow3x3Fn DepthwiseRow3x3Kernel() {
  static const DepthwiseRow3x3Fn kRow3x3 = DepthwiseRow3x3Avx2Fma();
  return kRow3x3;
}

DepthwiseRow3x3Fn DepthwiseRow3x3WideKernel() {
  static const DepthwiseRow3x3Fn kWide = DepthwiseRow3x3WideAvx2Fma();
  return kWide;
}

DepthwisePath ChooseDepthwisePath(const ConvGeometry& g, bool clamp) {
  // The row kernel (weights in registers) for a few channels; from
  // kMinWideChannels on, the wide row kernel (four pixels' contiguous
  // channel runs at a time) is faster than both it and the pixel kernel
  // (see BM_Depthwise3x3 in bench/gemm_benchmark.cc).
  if (g.depth_multiplier == 1 && g.filter_h == 3 && g.filter_w == 3 && clamp) {
    if (DepthwiseRow3x3WideKernel() != nullptr && g.in_c >= kMinWideChannels) {
      return DepthwisePath::kRow3x3Wide;
    }
    if (DepthwiseRow3x3Kernel() != nullptr) return DepthwisePath::kRow3x3;
  }
  if (g.depth_multiplier == 1 && g.filter_h * g.filter_w <= kMaxDepthwiseTaps) {
    return DepthwisePath::kPixel;
  }
  return DepthwisePath::kGeneric;
}

KilnStatus DepthwisePrepare(KernelContext& k, DepthwiseState& s) {
  const Tensor input = k.input(0), filter = k.input(1);
  KILN_SDK_RETURN_IF_ERROR(ExpectFloatConv(k, kConvOperands));
  KILN_SDK_RETURN_IF_ERROR(
      ReadDepthwiseGeometry(k, "DEPTHWISE_CONV_2D", input, filter, &s.g));
  KILN_SDK_RETURN_IF_ERROR(CheckBias(k, kConvOperands.bias, s.g.out_c));
  s.zero_bias.assign(static_cast<size_t>(s.g.out_c), 0.f);
  s.clamp = ActivationClamp(s.g.activation, &s.lo, &s.hi);
  if (!s.clamp) {  // TANH / SIGN_BIT: applied after the kernel
    s.lo = -std::numeric_limits<float>::infinity();
    s.hi = std::numeric_limits<float>::infinity();
  }
  s.path = ChooseDepthwisePath(s.g, s.clamp);
  return k.Resize(k.output(0), {s.g.batches, s.g.out_h, s.g.out_w, s.g.out_c});
}

// One invoke's operands and one output row's place in them.
struct DepthwiseRowArgs {
  const DepthwiseState& s;
  const float* in;  // NHWC input
  const float* w;   // [filter_h][filter_w][out_c]
  const float* b;   // [out_c]
  float* o;         // NHWC output
  // The row: image n, output y oy, that image's data and the input y of
  // the row's first tap.
  int32_t n = 0, oy = 0;
  const float* image = nullptr;
  int32_t y0 = 0;
  // The row's output pixels computed (the 3x3 row kernels).
  int32_t ox_begin = 0, ox_end = 0;
};

float* DepthwiseOut(const DepthwiseRowArgs& a, int32_t ox) {
  const ConvGeometry& g = a.s.g;
  return a.o + ((static_cast<int64_t>(a.n) * g.out_h + a.oy) * g.out_w + ox) *
                   g.out_c;
}

// The arguments of a 3x3 row kernel for row `a`.
DepthwiseRow3x3 Row3x3Args(const DepthwiseRowArgs& a) {
  const ConvGeometry& g = a.s.g;
  const int32_t c = g.in_c;
  DepthwiseRow3x3 r;
  for (int32_t fy = 0; fy < 3; ++fy) {
    const int32_t iy = a.y0 + fy * g.window.dilation_h;
    r.rows[fy] = iy < 0 || iy >= g.in_h
                     ? nullptr
                     : a.image + static_cast<int64_t>(iy) * g.in_w * c;
  }
  r.weights = a.w;
  r.bias = a.b;
  r.out = DepthwiseOut(a, 0);
  r.channels = c;
  r.in_w = g.in_w;
  r.out_w = g.out_w;
  r.stride_w = g.window.stride_w;
  r.dilation_w = g.window.dilation_w;
  r.pad_w = g.pad_w;
  r.lo = a.s.lo;
  r.hi = a.s.hi;
  r.ox_begin = a.ox_begin;
  r.ox_end = a.ox_end;
  return r;
}

void DepthwiseRowByRow3x3(const DepthwiseRowArgs& a) {
  DepthwiseRow3x3Kernel()(Row3x3Args(a));
}

void DepthwiseRowByRow3x3Wide(const DepthwiseRowArgs& a) {
  DepthwiseRow3x3WideKernel()(Row3x3Args(a));
}

// fn(x, wt) for each tap of output pixel (row, ox) inside the image, in
// (fy, fx) order.
template <typename Fn>
void ForEachPixelTap(const DepthwiseRowArgs& a, int32_t ox, Fn&& fn) {
  const ConvGeometry& g = a.s.g;
  ForEachDepthwiseTap(g, a.image, a.w, a.y0, ox * g.window.stride_w - g.pad_w,
                      fn);
}

void DepthwiseRowByPixel(const DepthwiseRowArgs& a) {
  const ConvGeometry& g = a.s.g;
  const DepthwisePixelFn pixel = DepthwisePixelKernel();
  for (int32_t ox = 0; ox < g.out_w; ++ox) {
    float* acc = DepthwiseOut(a, ox);
    const float* xs[kMaxDepthwiseTaps];
    const float* ws[kMaxDepthwiseTaps];
    int32_t taps = 0;
    ForEachPixelTap(a, ox, [&](const float* x, const float* wt) {
      xs[taps] = x;
      ws[taps++] = wt;
    });
    pixel(acc, a.b, xs, ws, taps, g.in_c, a.s.lo, a.s.hi);
    if (!a.s.clamp) ApplyActivationInPlace(g.activation, acc, g.out_c);
  }
}

void DepthwiseRowGeneric(const DepthwiseRowArgs& a) {
  const ConvGeometry& g = a.s.g;
  const int32_t c = g.in_c, oc = g.out_c, m = g.depth_multiplier;
  for (int32_t ox = 0; ox < g.out_w; ++ox) {
    float* acc = DepthwiseOut(a, ox);
    std::copy(a.b, a.b + oc, acc);
    ForEachPixelTap(a, ox, [&](const float* x, const float* wt) {
      if (m == 1) {
        vec::MulAcc(acc, x, wt, c);
        return;
      }
      for (int32_t ic = 0; ic < c; ++ic) {
        const float v = x[ic];
        for (int32_t j = 0; j < m; ++j) {
          acc[ic * m + j] += v * wt[ic * m + j];
        }
      }
    });
    ApplyActivationInPlace(g.activation, acc, oc);
  }
}

KilnStatus DepthwiseInvoke(KernelContext& k, DepthwiseState& s) {
  const Tensor input = k.input(0), filter = k.input(1), out = k.output(0);
  const Tensor bias = k.num_inputs() > 2 ? k.input(2) : Tensor();
  const float* b = bias.present() ? bias.data<float>() : s.zero_bias.data();
  const DepthwiseRowArgs a{s, input.data<float>(), filter.data<float>(), b,
                           out.data<float>()};
  void (*const row_fn)(const DepthwiseRowArgs&) =
      s.path == DepthwisePath::kRow3x3       ? &DepthwiseRowByRow3x3
      : s.path == DepthwisePath::kRow3x3Wide ? &DepthwiseRowByRow3x3Wide
      : s.path == DepthwisePath::kPixel      ? &DepthwiseRowByPixel
                                             : &DepthwiseRowGeneric;
  // Output rows (batch x out_h) on the host's pool; each row is computed
  // the same way whatever thread runs it. With few rows for the threads
  // (MobileNetV2's 7 and 14), the 3x3 row kernels' rows are split into
  // `parts` pixel ranges of at least 2 pixels, so the threads get even
  // shares; a pixel's value does not depend on its range.
  const int64_t num_rows = static_cast<int64_t>(s.g.batches) * s.g.out_h;
  const int64_t threads = sdk::ParallelThreads(k.host(), k.raw_context());
  int32_t parts = 1;
  if ((s.path == DepthwisePath::kRow3x3 ||
       s.path == DepthwisePath::kRow3x3Wide) &&
      threads > 1 && num_rows < 4 * threads) {
    parts = static_cast<int32_t>(std::min<int64_t>(
        (4 * threads + num_rows - 1) / num_rows, s.g.out_w / 2));
    parts = std::max(parts, 1);
  }
  const int64_t part_macs = static_cast<int64_t>(s.g.out_w) * s.g.out_c *
                            s.g.filter_h * s.g.filter_w / parts;
  const auto items = [&](int64_t begin, int64_t end, int32_t) {
    DepthwiseRowArgs r = a;
    for (int64_t item = begin; item < end; ++item) {
      const int64_t row = item / parts;
      const int32_t part = static_cast<int32_t>(item % parts);
      r.n = static_cast<int32_t>(row / s.g.out_h);
      r.oy = static_cast<int32_t>(row % s.g.out_h);
      r.image =
          r.in + static_cast<int64_t>(r.n) * s.g.in_h * s.g.in_w * s.g.in_c;
      r.y0 = r.oy * s.g.window.stride_h - s.g.pad_h;
      r.ox_begin = static_cast<int32_t>(int64_t{part} * s.g.out_w / parts);
      r.ox_end = static_cast<int32_t>(int64_t{part + 1} * s.g.out_w / parts);
      row_fn(r);
    }
  };
  return ParallelRows(k, num_rows * parts, part_macs, items);
}

// ---- TRANSPOSE_CONV ------------------------------------------------------

struct TransposeConvState {
  ConvGeometry g;
  bool shaped = false;  // output sized (output_shape values known)
  bool pack_in_invoke = false;
  int32_t chunk_rows = 0;
  int32_t threads = 1;
  // No two input pixels' windows overlap (filter no larger than stride).
  bool disjoint = false;
  std::vector<float> reordered;  // filter as [fy][fx][oc] x in_c
  PackedMatrix weights;
  // Per thread: chunk_rows x (filter_h * filter_w * out_c).
  std::vector<float> col;
};

void ReorderTransposeFilter(const ConvGeometry& g, const float* filter,
                            float* dst) {
  const int32_t taps = g.taps();
  for (int32_t oc = 0; oc < g.out_c; ++oc) {
    for (int32_t t = 0; t < taps; ++t) {
      const float* src =
          filter + (static_cast<int64_t>(oc) * taps + t) * g.in_c;
      std::copy(src, src + g.in_c,
                dst + (static_cast<int64_t>(t) * g.out_c + oc) * g.in_c);
    }
  }
}

KilnStatus TransposeConvPrepare(KernelContext& k, TransposeConvState& s) {
  const Tensor filter = k.input(1), out = k.output(0);
  KILN_SDK_RETURN_IF_ERROR(ExpectFloatConv(k, kTransposeConvOperands));
  KILN_SDK_RETURN_IF_ERROR(
      ReadTransposeConvGeometry(k, "TRANSPOSE_CONV", &s.g, &s.shaped));
  KILN_SDK_RETURN_IF_ERROR(
      CheckBias(k, kTransposeConvOperands.bias, s.g.out_c));
  if (!s.shaped) return KILN_STATUS_OK;  // sized once the values exist
  const ConvGeometry& g = s.g;
  const int32_t taps_out = g.taps() * g.out_c;
  s.weights.Resize(taps_out, g.in_c);
  s.reordered.assign(static_cast<size_t>(taps_out) * g.in_c, 0.f);
  s.pack_in_invoke = !IsStatic(filter);
  if (!s.pack_in_invoke) {
    ReorderTransposeFilter(g, filter.data<float>(), s.reordered.data());
    s.weights.Pack(s.reordered.data(), g.in_c, 1, nullptr);
  }
  s.threads = sdk::ParallelThreads(k.host(), k.raw_context());
  s.chunk_rows = ChunkRows(taps_out, g.in_h * g.in_w);
  s.disjoint =
      g.filter_h <= g.window.stride_h && g.filter_w <= g.window.stride_w;
  if (s.disjoint) {
    s.chunk_rows = ParallelChunkRows(s.chunk_rows, g.batches, g.in_h * g.in_w,
                                     s.threads, 8);
  }
  s.col.assign(static_cast<size_t>(s.chunk_rows) * taps_out * s.threads, 0.f);
  return k.Resize(out, {g.batches, g.out_h, g.out_w, g.out_c});
}

// The GEMM of chunks of input pixels with the filter, each added into the
// zeroed output (col2im). When no two input pixels' windows overlap (filter
// no larger than stride), chunks write disjoint output pixels and run across
// the thread pool; otherwise one after another, each GEMM split instead.
KilnStatus TransposeConvScatter(KernelContext& k, TransposeConvState& s,
                                const float* in, float* o) {
  const ConvGeometry& g = s.g;
  const int32_t taps_out = s.weights.n();
  const int32_t rows = g.in_h * g.in_w;
  const int64_t out_image = static_cast<int64_t>(g.out_h) * g.out_w * g.out_c;
  const int64_t chunk_floats = static_cast<int64_t>(s.chunk_rows) * taps_out;
  EnsureThreadScratch(k, chunk_floats, &s.threads, &s.col);
  const int64_t per_image = (rows + s.chunk_rows - 1) / s.chunk_rows;
  const auto run = [&](int64_t begin, int64_t end, int32_t thread,
                       bool parallel_gemm) {
    float* col = s.col.data() + thread * chunk_floats;
    for (int64_t t = begin; t < end; ++t) {
      const int32_t b = static_cast<int32_t>(t / per_image);
      const int32_t r0 = static_cast<int32_t>(t % per_image) * s.chunk_rows;
      const int32_t n = std::min(s.chunk_rows, rows - r0);
      const float* a = in + (static_cast<int64_t>(b) * rows + r0) * g.in_c;
      if (parallel_gemm) {
        ParallelGemm(k, a, g.in_c, n, s.weights, KILN_ACTIVATION_NONE, col,
                     taps_out);
      } else {
        Gemm(a, g.in_c, n, s.weights, KILN_ACTIVATION_NONE, col, taps_out);
      }
      Col2ImAdd(g, r0, n, col, taps_out, o + b * out_image,
                [](float* dst, const float* src, int32_t c) {
                  vec::Acc(dst, src, c);
                });
    }
  };
  const int64_t chunks = per_image * g.batches;
  if (s.disjoint && s.threads > 1 && chunks >= 2) {
    return sdk::ParallelFor(k.host(), k.raw_context(), chunks, 1,
                            [&](int64_t begin, int64_t end, int32_t thread) {
                              run(begin, end, thread, false);
                            });
  }
  run(0, chunks, 0, true);
  return KILN_STATUS_OK;
}

// fn(pixel, channels) for each of `pixels` output pixels of `channels`
// floats, split across the thread pool.
template <typename Fn>
KilnStatus ForEachOutputPixel(KernelContext& k, int64_t pixels, float* o,
                              int32_t channels, Fn&& fn) {
  return ParallelRows(k, pixels, channels,
                      [&](int64_t begin, int64_t end, int32_t) {
                        for (int64_t p = begin; p < end; ++p) {
                          fn(o + p * channels, channels);
                        }
                      });
}

KilnStatus TransposeConvInvoke(KernelContext& k, TransposeConvState& s) {
  constexpr const char* op = "TRANSPOSE_CONV";
  const Tensor shape = k.input(0), filter = k.input(1), input = k.input(2);
  const Tensor bias = k.num_inputs() > 3 ? k.input(3) : Tensor();
  const Tensor out = k.output(0);
  const int32_t* dims = shape.data<int32_t>();
  if (!s.shaped || dims == nullptr) {
    return k.Fail(KILN_STATUS_FAILED_PRECONDITION, op,
                  ": output shape unknown; the host must prepare the node "
                  "again once output_shape input '",
                  shape.name(), "' is computed");
  }
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectOutputShape(
      k, sdk::Output(0), {dims[0], dims[1], dims[2], dims[3]}));
  const ConvGeometry& g = s.g;
  if (s.pack_in_invoke) {
    ReorderTransposeFilter(g, filter.data<float>(), s.reordered.data());
    s.weights.Pack(s.reordered.data(), g.in_c, 1, nullptr);
  }
  float* o = out.data<float>();
  const float* bv = bias.present() ? bias.data<float>() : nullptr;
  // Disjoint windows add at most one product sum s to each output, and
  // 0 + s + bias == bias + s: the output starts from the bias instead.
  const bool bias_first = bv != nullptr && s.disjoint;
  const int64_t pixels = static_cast<int64_t>(g.batches) * g.out_h * g.out_w;
  KILN_SDK_RETURN_IF_ERROR(
      ForEachOutputPixel(k, pixels, o, g.out_c, [&](float* px, int32_t c) {
        if (bias_first) {
          std::copy(bv, bv + c, px);
        } else {
          std::fill(px, px + c, 0.f);
        }
      }));
  KILN_SDK_RETURN_IF_ERROR(TransposeConvScatter(k, s, input.data<float>(), o));
  if (bias_first) bv = nullptr;
  if (bv == nullptr && g.activation == KILN_ACTIVATION_NONE) {
    return KILN_STATUS_OK;
  }
  return ForEachOutputPixel(k, pixels, o, g.out_c, [&](float* px, int32_t c) {
    if (bv != nullptr) vec::Acc(px, bv, c);
    ApplyActivationInPlace(g.activation, px, c);
  });
}

using ConvOps =
    OpVariants<ConvState, QuantizedConvState, HybridConvState, ConvPrepare,
               ConvInvoke, QuantizedConvPrepare, QuantizedConvInvoke,
               HybridConvPrepare, HybridConvInvoke, 2, 3, 0, 1>;
using DepthwiseOps =
    OpVariants<DepthwiseState, QuantizedDepthwiseState, HybridDepthwiseState,
               DepthwisePrepare, DepthwiseInvoke, QuantizedDepthwisePrepare,
               QuantizedDepthwiseInvoke, HybridDepthwisePrepare,
               HybridDepthwiseInvoke, 2, 3, 0, 1>;
// Inputs: output shape, filter, input, [bias].
using TransposeConvOps =
    OpVariants<TransposeConvState, QuantizedTransposeConvState,
               HybridTransposeConvState, TransposeConvPrepare,
               TransposeConvInvoke, QuantizedTransposeConvPrepare,
               QuantizedTransposeConvInvoke, HybridTransposeConvPrepare,
               HybridTransposeConvInvoke, 3, 4, 2, 1>;

}  // namespace

void RegisterConvolutionKernels(sdk::PluginDefinition& def) {
  // Each kernel's state is what its prepare built for one set of shapes,
  // so the host may keep one per input signature.
  // CONV_2D v1: float32 (and uint8) with dilation and fused activation;
  // v2: hybrid (float input, int8 filter); v3: int8 with per-channel
  // filters; v4: int16x8; v5: hybrid with per-channel filter scales. The
  // kernel dispatches on the input and filter types (a converter may write
  // a lower version than the types need). Not declared: v6 (grouped), v7
  // (int4 filters), v8 (int16x8 with an int32 bias).
  def.AddKernel(sdk::StatePerShapeSignature(
      VariantKernel<ConvOps>(KILN_OP_CONV_2D, 1, 5)));
  // DEPTHWISE_CONV_2D v1: float32 (and uint8) with depth_multiplier; v2:
  // dilation; v3: int8 with per-channel filters; v4: hybrid; v5: int16x8;
  // v6: hybrid with per-channel filter scales. Not declared: v7 (int4
  // filters).
  def.AddKernel(sdk::StatePerShapeSignature(
      VariantKernel<DepthwiseOps>(KILN_OP_DEPTHWISE_CONV_2D, 1, 6)));
  // TRANSPOSE_CONV v1: float32 (and uint8); v2: int8 filters (int8,
  // int16x8 and hybrid with a float input); v3: optional bias input; v4:
  // fused activation. Not declared: v5 (int16x8 with an int32 bias).
  def.AddKernel(sdk::StatePerShapeSignature(
      VariantKernel<TransposeConvOps>(KILN_OP_TRANSPOSE_CONV, 1, 4)));
}

}  // namespace kiln::cpu::nn
