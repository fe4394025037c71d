// CONV_2D (im2col + packed GEMM, direct GEMM for 1x1 stride-1),
// DEPTHWISE_CONV_2D (direct, vectorised over channels) and TRANSPOSE_CONV
// (GEMM + col2im), float32, NHWC activations. DEPTHWISE_CONV_2D also runs
// int8 with per-channel (or per-tensor) int8 filters and int32 bias, with the
// integer requantization of TFLite's DepthwiseConvPerChannel.
#include <algorithm>
#include <vector>

#include "kernels/nn/gemm.h"
#include "kernels/nn/nn_common.h"
#include "kernels/nn/vec.h"
#include "kernels/quantization_util.h"
#include "kernels/registry.h"

namespace kiln::cpu::nn {
namespace {

constexpr const char* kQuantNote =
    "quantized and hybrid variants are not implemented";
constexpr sdk::Operand kFilter = sdk::Input(1, "filter");
// Target size of one im2col / col2im scratch chunk, in floats.
constexpr int64_t kScratchFloats = 64 * 1024;

int32_t ChunkRows(int64_t row_floats, int32_t total_rows) {
  int64_t rows = kScratchFloats / std::max<int64_t>(1, row_floats);
  rows = std::max<int64_t>(rows, 8);
  return static_cast<int32_t>(std::min<int64_t>(rows, std::max(total_rows, 1)));
}

// Checks the optional bias (input `index`): type `type`, shape [channels].
KilnStatus CheckBias(KernelContext& k, int32_t index, int32_t channels,
                     KilnTensorType type, const char* note) {
  const sdk::Operand bias = sdk::Input(index, "bias");
  if (k.num_inputs() <= index || !k.input(index).present()) {
    return KILN_STATUS_OK;
  }
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectType(k, bias, {type}, note));
  return sdk::ExpectShape(k, bias, {channels}, "one value per output channel");
}

// Checks CONV_2D and DEPTHWISE_CONV_2D share: FLOAT32 input, filter and
// output (when `float_types`; the int8 path checks its own), 4-D input and
// filter; reads the window options and the fused activation.
KilnStatus PrepareConvCommon(KernelContext& k, bool float_types,
                             WindowParams* window, int64_t* activation) {
  if (float_types) {
    for (const sdk::Operand o : {sdk::Input(0), kFilter, sdk::Output(0)}) {
      KILN_SDK_RETURN_IF_ERROR(
          sdk::ExpectType(k, o, {KILN_TYPE_FLOAT32}, kQuantNote));
    }
  }
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectRank(k, sdk::Input(0), 4));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectRank(k, kFilter, 4));
  KILN_SDK_RETURN_IF_ERROR(ReadWindowParams(k, true, window));
  return sdk::ReadFusedActivation(k, k.output(0).type(), activation);
}

bool IsStatic(const Tensor& t) {
  return !t.present() || (t.is_constant() && t.data<float>() != nullptr);
}

// ---- CONV_2D -------------------------------------------------------------

struct ConvState {
  WindowParams window;
  int64_t activation = KILN_ACTIVATION_NONE;
  int32_t batches = 0, in_h = 0, in_w = 0, in_c = 0;
  int32_t filter_h = 0, filter_w = 0, out_h = 0, out_w = 0, out_c = 0;
  int32_t pad_h = 0, pad_w = 0;
  bool direct = false;          // 1x1, stride 1: the input is the GEMM's A
  bool pack_in_invoke = false;  // filter or bias not constant
  int32_t chunk_rows = 0;
  PackedMatrix weights;
  std::vector<float> im2col;  // chunk_rows x (filter_h * filter_w * in_c)
};

KilnStatus ConvPrepare(KernelContext& k, ConvState& s) {
  const char* op = sdk::OpName(k);
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectInputCount(k, 2, 3));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectOutputCount(k, 1));
  const Tensor input = k.input(0), filter = k.input(1), out = k.output(0);
  const Tensor bias = k.num_inputs() > 2 ? k.input(2) : Tensor();
  KILN_SDK_RETURN_IF_ERROR(
      PrepareConvCommon(k, /*float_types=*/true, &s.window, &s.activation));
  s.batches = input.dim(0);
  s.in_h = input.dim(1);
  s.in_w = input.dim(2);
  s.in_c = input.dim(3);
  s.out_c = filter.dim(0);
  s.filter_h = filter.dim(1);
  s.filter_w = filter.dim(2);
  if (filter.dim(3) != s.in_c) {
    return k.Fail(KILN_STATUS_UNIMPLEMENTED, op, ": filter '", filter.name(),
                  "' has ", filter.dim(3), " input channels but input '",
                  input.name(), "' has ", s.in_c,
                  "; grouped convolution (CONV_2D version 6) is not supported "
                  "by this CPU kernel");
  }
  KILN_SDK_RETURN_IF_ERROR(
      CheckBias(k, 2, s.out_c, KILN_TYPE_FLOAT32, kQuantNote));
  s.out_h = WindowOutputSize(s.window.padding, s.in_h, s.filter_h,
                             s.window.stride_h, s.window.dilation_h);
  s.out_w = WindowOutputSize(s.window.padding, s.in_w, s.filter_w,
                             s.window.stride_w, s.window.dilation_w);
  if (s.out_h < 0 || s.out_w < 0) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, ": dilated filter ",
                  s.filter_h, "x", s.filter_w, " does not fit input ",
                  ShapeString(input.shape()), " with VALID padding");
  }
  s.pad_h = WindowPadBefore(s.in_h, s.filter_h, s.window.stride_h,
                            s.window.dilation_h, s.out_h);
  s.pad_w = WindowPadBefore(s.in_w, s.filter_w, s.window.stride_w,
                            s.window.dilation_w, s.out_w);
  s.direct = s.filter_h == 1 && s.filter_w == 1 && s.window.stride_h == 1 &&
             s.window.stride_w == 1 && s.pad_h == 0 && s.pad_w == 0;
  const int32_t depth = s.filter_h * s.filter_w * s.in_c;
  s.weights.Resize(s.out_c, depth);
  s.pack_in_invoke = !(IsStatic(filter) && IsStatic(bias));
  if (!s.pack_in_invoke) {
    s.weights.Pack(filter.data<float>(), depth, 1,
                   bias.present() ? bias.data<float>() : nullptr);
  }
  if (s.direct) {
    s.im2col.clear();
    s.im2col.shrink_to_fit();
  } else {
    s.chunk_rows = ChunkRows(depth, s.out_h * s.out_w);
    s.im2col.assign(static_cast<size_t>(s.chunk_rows) * depth, 0.f);
  }
  return k.Resize(out, {s.batches, s.out_h, s.out_w, s.out_c});
}

// Fills rows [row0, row0 + rows) of the im2col matrix of batch image `in`.
void Im2Col(const ConvState& s, const float* in, int32_t row0, int32_t rows,
            float* col) {
  const int32_t c = s.in_c;
  const int64_t depth = static_cast<int64_t>(s.filter_h) * s.filter_w * c;
  for (int32_t r = 0; r < rows; ++r) {
    const int32_t oy = (row0 + r) / s.out_w, ox = (row0 + r) % s.out_w;
    float* dst = col + r * depth;
    const int32_t y0 = oy * s.window.stride_h - s.pad_h;
    const int32_t x0 = ox * s.window.stride_w - s.pad_w;
    for (int32_t fy = 0; fy < s.filter_h; ++fy) {
      const int32_t iy = y0 + fy * s.window.dilation_h;
      if (iy < 0 || iy >= s.in_h) {
        std::fill(dst, dst + s.filter_w * c, 0.f);
        dst += s.filter_w * c;
        continue;
      }
      const float* in_row = in + static_cast<int64_t>(iy) * s.in_w * c;
      for (int32_t fx = 0; fx < s.filter_w; ++fx, dst += c) {
        const int32_t ix = x0 + fx * s.window.dilation_w;
        if (ix < 0 || ix >= s.in_w) {
          std::fill(dst, dst + c, 0.f);
        } else {
          std::copy(in_row + static_cast<int64_t>(ix) * c,
                    in_row + static_cast<int64_t>(ix) * c + c, dst);
        }
      }
    }
  }
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
  const int32_t rows = s.out_h * s.out_w;
  const int64_t in_image = static_cast<int64_t>(s.in_h) * s.in_w * s.in_c;
  if (s.direct) {
    Gemm(in, s.in_c, s.batches * rows, s.weights, s.activation, o, s.out_c);
    return KILN_STATUS_OK;
  }
  const int32_t depth = s.weights.k();
  for (int32_t b = 0; b < s.batches; ++b) {
    for (int32_t r0 = 0; r0 < rows; r0 += s.chunk_rows) {
      const int32_t n = std::min(s.chunk_rows, rows - r0);
      Im2Col(s, in + b * in_image, r0, n, s.im2col.data());
      Gemm(s.im2col.data(), depth, n, s.weights, s.activation,
           o + (static_cast<int64_t>(b) * rows + r0) * s.out_c, s.out_c);
    }
  }
  return KILN_STATUS_OK;
}

// ---- DEPTHWISE_CONV_2D ---------------------------------------------------

struct DepthwiseState {
  WindowParams window;
  int64_t activation = KILN_ACTIVATION_NONE;
  int32_t batches = 0, in_h = 0, in_w = 0, in_c = 0, multiplier = 1;
  int32_t filter_h = 0, filter_w = 0, out_h = 0, out_w = 0, out_c = 0;
  int32_t pad_h = 0, pad_w = 0;
  std::vector<float> zero_bias;
  // Int8 path: acc = sum(w * (x + input_offset)) + bias per output channel,
  // out = clamp(MultiplyByQuantizedMultiplier(acc, multipliers[c]) +
  // output_offset).
  bool quantized = false;
  int32_t input_offset = 0, output_offset = 0;
  int32_t activation_min = -128, activation_max = 127;
  std::vector<QuantizedMultiplier> multipliers;  // one per output channel
};

// Int8 prepare steps that need the channel count: tensor types, bias, and
// the per-channel requantization multipliers.
KilnStatus QuantizedDepthwisePrepare(KernelContext& k, DepthwiseState& s) {
  constexpr const char* kInt8Note =
      "int8 DEPTHWISE_CONV_2D needs INT8 input, filter and output and an "
      "INT32 bias";
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectType(k, kFilter, {KILN_TYPE_INT8}, kInt8Note));
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectType(k, sdk::Output(0), {KILN_TYPE_INT8}, kInt8Note));
  KILN_SDK_RETURN_IF_ERROR(
      CheckBias(k, 2, s.out_c, KILN_TYPE_INT32, kInt8Note));
  sdk::TensorQuantization qin, qf, qout;
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ReadQuantization(k, sdk::Input(0), sdk::kPerTensor, &qin));
  KILN_SDK_RETURN_IF_ERROR(sdk::ReadQuantization(
      k, kFilter, sdk::PerChannel(3, /*symmetric=*/true), &qf));
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ReadQuantization(k, sdk::Output(0), sdk::kPerTensor, &qout));
  s.input_offset = -qin.zero_points[0];
  s.output_offset = qout.zero_points[0];
  s.multipliers.resize(static_cast<size_t>(s.out_c));
  for (int32_t c = 0; c < s.out_c; ++c) {
    const float filter_scale = qf.scales.size() == 1
                                   ? qf.scales[0]
                                   : qf.scales[static_cast<size_t>(c)];
    const double real_multiplier = static_cast<double>(qin.scales[0]) *
                                   static_cast<double>(filter_scale) /
                                   static_cast<double>(qout.scales[0]);
    s.multipliers[static_cast<size_t>(c)] = QuantizeMultiplier(real_multiplier);
  }
  if (!QuantizedActivationRange(s.activation, qout.scales[0],
                                qout.zero_points[0], -128, 127,
                                &s.activation_min, &s.activation_max)) {
    return k.Fail(KILN_STATUS_INTERNAL, sdk::OpName(k),
                  ": no quantized range for fused activation ",
                  sdk::ActivationName(s.activation));
  }
  return KILN_STATUS_OK;
}

KilnStatus DepthwisePrepare(KernelContext& k, DepthwiseState& s) {
  const char* op = sdk::OpName(k);
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectInputCount(k, 2, 3));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectOutputCount(k, 1));
  const Tensor input = k.input(0), filter = k.input(1), out = k.output(0);
  s.quantized = input.present() && input.type() == KILN_TYPE_INT8;
  KILN_SDK_RETURN_IF_ERROR(
      PrepareConvCommon(k, !s.quantized, &s.window, &s.activation));
  s.batches = input.dim(0);
  s.in_h = input.dim(1);
  s.in_w = input.dim(2);
  s.in_c = input.dim(3);
  s.filter_h = filter.dim(1);
  s.filter_w = filter.dim(2);
  s.out_c = filter.dim(3);
  if (filter.dim(0) != 1) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, ": filter '", filter.name(),
                  "' has shape ", ShapeString(filter.shape()),
                  ", expected [1, height, width, channels * multiplier]");
  }
  if (s.in_c <= 0 || s.out_c % s.in_c != 0) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, ": filter '", filter.name(),
                  "' has ", s.out_c,
                  " output channels, not a multiple of the input's ", s.in_c);
  }
  s.multiplier = s.out_c / s.in_c;
  const int64_t option = k.OptionInt(KILN_OPTION_DEPTH_MULTIPLIER, 0);
  if (option != 0 && option != s.multiplier) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, ": depth_multiplier ",
                  option, " disagrees with filter '", filter.name(), "' (",
                  s.out_c, " output channels for ", s.in_c, " input channels)");
  }
  if (s.quantized) {
    KILN_SDK_RETURN_IF_ERROR(QuantizedDepthwisePrepare(k, s));
  } else {
    KILN_SDK_RETURN_IF_ERROR(
        CheckBias(k, 2, s.out_c, KILN_TYPE_FLOAT32, kQuantNote));
  }
  s.out_h = WindowOutputSize(s.window.padding, s.in_h, s.filter_h,
                             s.window.stride_h, s.window.dilation_h);
  s.out_w = WindowOutputSize(s.window.padding, s.in_w, s.filter_w,
                             s.window.stride_w, s.window.dilation_w);
  if (s.out_h < 0 || s.out_w < 0) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, ": dilated filter ",
                  s.filter_h, "x", s.filter_w, " does not fit input ",
                  ShapeString(input.shape()), " with VALID padding");
  }
  s.pad_h = WindowPadBefore(s.in_h, s.filter_h, s.window.stride_h,
                            s.window.dilation_h, s.out_h);
  s.pad_w = WindowPadBefore(s.in_w, s.filter_w, s.window.stride_w,
                            s.window.dilation_w, s.out_w);
  if (!s.quantized) s.zero_bias.assign(static_cast<size_t>(s.out_c), 0.f);
  return k.Resize(out, {s.batches, s.out_h, s.out_w, s.out_c});
}

KilnStatus QuantizedDepthwiseInvoke(KernelContext& k, const DepthwiseState& s) {
  Int8Buffers buffers;
  KILN_SDK_RETURN_IF_ERROR(ReadInt8Buffers(k, kFilter, &buffers));
  const auto [in, w, b, o] = buffers;
  const int32_t c = s.in_c, oc = s.out_c, m = s.multiplier;
  std::vector<int32_t> acc(static_cast<size_t>(oc));
  for (int32_t n = 0; n < s.batches; ++n) {
    const int8_t* image =
        in + static_cast<int64_t>(n) * s.in_h * s.in_w * s.in_c;
    for (int32_t oy = 0; oy < s.out_h; ++oy) {
      const int32_t y0 = oy * s.window.stride_h - s.pad_h;
      for (int32_t ox = 0; ox < s.out_w; ++ox) {
        std::fill(acc.begin(), acc.end(), 0);
        const int32_t x0 = ox * s.window.stride_w - s.pad_w;
        for (int32_t fy = 0; fy < s.filter_h; ++fy) {
          const int32_t iy = y0 + fy * s.window.dilation_h;
          if (iy < 0 || iy >= s.in_h) continue;
          for (int32_t fx = 0; fx < s.filter_w; ++fx) {
            const int32_t ix = x0 + fx * s.window.dilation_w;
            if (ix < 0 || ix >= s.in_w) continue;
            const int8_t* x =
                image + (static_cast<int64_t>(iy) * s.in_w + ix) * c;
            const int8_t* wt =
                w + (static_cast<int64_t>(fy) * s.filter_w + fx) * oc;
            for (int32_t ic = 0; ic < c; ++ic) {
              const int32_t v = x[ic] + s.input_offset;
              for (int32_t j = 0; j < m; ++j) {
                acc[static_cast<size_t>(ic * m + j)] += v * wt[ic * m + j];
              }
            }
          }
        }
        int8_t* dst =
            o + ((static_cast<int64_t>(n) * s.out_h + oy) * s.out_w + ox) * oc;
        for (int32_t ch = 0; ch < oc; ++ch) {
          int32_t v = acc[static_cast<size_t>(ch)];
          if (b != nullptr) v += b[ch];
          v = MultiplyByQuantizedMultiplier(
                  v, s.multipliers[static_cast<size_t>(ch)]) +
              s.output_offset;
          dst[ch] = static_cast<int8_t>(
              std::min(s.activation_max, std::max(s.activation_min, v)));
        }
      }
    }
  }
  return KILN_STATUS_OK;
}

KilnStatus DepthwiseInvoke(KernelContext& k, DepthwiseState& s) {
  if (s.quantized) return QuantizedDepthwiseInvoke(k, s);
  const Tensor input = k.input(0), filter = k.input(1), out = k.output(0);
  const Tensor bias = k.num_inputs() > 2 ? k.input(2) : Tensor();
  const float* in = input.data<float>();
  const float* w = filter.data<float>();
  const float* b = bias.present() ? bias.data<float>() : s.zero_bias.data();
  float* o = out.data<float>();
  const int32_t c = s.in_c, oc = s.out_c, m = s.multiplier;
  for (int32_t n = 0; n < s.batches; ++n) {
    const float* image =
        in + static_cast<int64_t>(n) * s.in_h * s.in_w * s.in_c;
    for (int32_t oy = 0; oy < s.out_h; ++oy) {
      const int32_t y0 = oy * s.window.stride_h - s.pad_h;
      for (int32_t ox = 0; ox < s.out_w; ++ox) {
        float* acc =
            o + ((static_cast<int64_t>(n) * s.out_h + oy) * s.out_w + ox) * oc;
        std::copy(b, b + oc, acc);
        const int32_t x0 = ox * s.window.stride_w - s.pad_w;
        for (int32_t fy = 0; fy < s.filter_h; ++fy) {
          const int32_t iy = y0 + fy * s.window.dilation_h;
          if (iy < 0 || iy >= s.in_h) continue;
          for (int32_t fx = 0; fx < s.filter_w; ++fx) {
            const int32_t ix = x0 + fx * s.window.dilation_w;
            if (ix < 0 || ix >= s.in_w) continue;
            const float* x =
                image + (static_cast<int64_t>(iy) * s.in_w + ix) * c;
            const float* wt =
                w + (static_cast<int64_t>(fy) * s.filter_w + fx) * oc;
            if (m == 1) {
              vec::MulAcc(acc, x, wt, c);
            } else {
              for (int32_t ic = 0; ic < c; ++ic) {
                const float v = x[ic];
                for (int32_t j = 0; j < m; ++j) {
                  acc[ic * m + j] += v * wt[ic * m + j];
                }
              }
            }
          }
        }
        ApplyActivationInPlace(s.activation, acc, oc);
      }
    }
  }
  return KILN_STATUS_OK;
}

// ---- TRANSPOSE_CONV ------------------------------------------------------

struct TransposeConvState {
  WindowParams window;
  int64_t activation = KILN_ACTIVATION_NONE;
  bool shaped = false;  // output sized (output_shape values known)
  int32_t batches = 0, in_h = 0, in_w = 0, in_c = 0;
  int32_t filter_h = 0, filter_w = 0, out_h = 0, out_w = 0, out_c = 0;
  int32_t pad_h = 0, pad_w = 0;
  bool pack_in_invoke = false;
  int32_t chunk_rows = 0;
  std::vector<float> reordered;  // filter as [fy][fx][oc] x in_c
  PackedMatrix weights;
  std::vector<float> col;  // chunk_rows x (filter_h * filter_w * out_c)
};

void ReorderTransposeFilter(const TransposeConvState& s, const float* filter,
                            float* dst) {
  const int32_t taps = s.filter_h * s.filter_w;
  for (int32_t oc = 0; oc < s.out_c; ++oc) {
    for (int32_t t = 0; t < taps; ++t) {
      const float* src =
          filter + (static_cast<int64_t>(oc) * taps + t) * s.in_c;
      std::copy(src, src + s.in_c,
                dst + (static_cast<int64_t>(t) * s.out_c + oc) * s.in_c);
    }
  }
}

KilnStatus TransposeConvPrepare(KernelContext& k, TransposeConvState& s) {
  const char* op = sdk::OpName(k);
  s.shaped = false;
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectInputCount(k, 3, 4));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectOutputCount(k, 1));
  const Tensor shape = k.input(0), filter = k.input(1), input = k.input(2);
  const Tensor out = k.output(0);
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectType(k, sdk::Input(0, "output_shape"), {KILN_TYPE_INT32}));
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectType(k, kFilter, {KILN_TYPE_FLOAT32}, kQuantNote));
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectType(k, sdk::Input(2), {KILN_TYPE_FLOAT32}, kQuantNote));
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectType(k, sdk::Output(0), {KILN_TYPE_FLOAT32}, kQuantNote));
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectRank(k, sdk::Input(0, "output_shape"), 1));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectRank(k, kFilter, 4));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectRank(k, sdk::Input(2), 4));
  if (shape.dim(0) != 4) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, ": output_shape input '",
                  shape.name(), "' must hold 4 values, has ", shape.dim(0));
  }
  KILN_SDK_RETURN_IF_ERROR(ReadWindowParams(k, false, &s.window));
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ReadFusedActivation(k, k.output(0).type(), &s.activation));
  s.batches = input.dim(0);
  s.in_h = input.dim(1);
  s.in_w = input.dim(2);
  s.in_c = input.dim(3);
  s.out_c = filter.dim(0);
  s.filter_h = filter.dim(1);
  s.filter_w = filter.dim(2);
  if (filter.dim(3) != s.in_c) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, ": filter '", filter.name(),
                  "' has ", filter.dim(3), " input channels but input '",
                  input.name(), "' has ", s.in_c);
  }
  KILN_SDK_RETURN_IF_ERROR(
      CheckBias(k, 3, s.out_c, KILN_TYPE_FLOAT32, kQuantNote));
  const int32_t* dims = shape.data<int32_t>();
  if (dims == nullptr) return KILN_STATUS_OK;  // sized once the values exist
  if (dims[0] != s.batches || dims[3] != s.out_c || dims[1] < 0 ||
      dims[2] < 0) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, ": output_shape [", dims[0],
                  ", ", dims[1], ", ", dims[2], ", ", dims[3], "] must be [",
                  s.batches, ", height, width, ", s.out_c,
                  "] (input batches, filter output channels)");
  }
  s.out_h = dims[1];
  s.out_w = dims[2];
  const int32_t conv_h = WindowOutputSize(s.window.padding, s.out_h, s.filter_h,
                                          s.window.stride_h, 1);
  const int32_t conv_w = WindowOutputSize(s.window.padding, s.out_w, s.filter_w,
                                          s.window.stride_w, 1);
  s.pad_h = conv_h < 0 ? 0
                       : WindowPadBefore(s.out_h, s.filter_h, s.window.stride_h,
                                         1, conv_h);
  s.pad_w = conv_w < 0 ? 0
                       : WindowPadBefore(s.out_w, s.filter_w, s.window.stride_w,
                                         1, conv_w);
  const int32_t taps_out = s.filter_h * s.filter_w * s.out_c;
  s.weights.Resize(taps_out, s.in_c);
  s.reordered.assign(static_cast<size_t>(taps_out) * s.in_c, 0.f);
  s.pack_in_invoke = !IsStatic(filter);
  if (!s.pack_in_invoke) {
    ReorderTransposeFilter(s, filter.data<float>(), s.reordered.data());
    s.weights.Pack(s.reordered.data(), s.in_c, 1, nullptr);
  }
  s.chunk_rows = ChunkRows(taps_out, s.in_h * s.in_w);
  s.col.assign(static_cast<size_t>(s.chunk_rows) * taps_out, 0.f);
  s.shaped = true;
  return k.Resize(out, {s.batches, s.out_h, s.out_w, s.out_c});
}

KilnStatus TransposeConvInvoke(KernelContext& k, TransposeConvState& s) {
  const char* op = sdk::OpName(k);
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
  if (s.pack_in_invoke) {
    ReorderTransposeFilter(s, filter.data<float>(), s.reordered.data());
    s.weights.Pack(s.reordered.data(), s.in_c, 1, nullptr);
  }
  const float* in = input.data<float>();
  float* o = out.data<float>();
  const int32_t taps_out = s.weights.n();
  const int32_t rows = s.in_h * s.in_w;
  const int64_t out_image = static_cast<int64_t>(s.out_h) * s.out_w * s.out_c;
  std::fill(o, o + out_image * s.batches, 0.f);
  for (int32_t b = 0; b < s.batches; ++b) {
    float* image = o + b * out_image;
    for (int32_t r0 = 0; r0 < rows; r0 += s.chunk_rows) {
      const int32_t n = std::min(s.chunk_rows, rows - r0);
      Gemm(in + (static_cast<int64_t>(b) * rows + r0) * s.in_c, s.in_c, n,
           s.weights, KILN_ACTIVATION_NONE, s.col.data(), taps_out);
      for (int32_t r = 0; r < n; ++r) {
        const int32_t iy = (r0 + r) / s.in_w, ix = (r0 + r) % s.in_w;
        const float* col = s.col.data() + static_cast<int64_t>(r) * taps_out;
        for (int32_t fy = 0; fy < s.filter_h; ++fy) {
          const int32_t oy = iy * s.window.stride_h - s.pad_h + fy;
          if (oy < 0 || oy >= s.out_h) continue;
          for (int32_t fx = 0; fx < s.filter_w; ++fx) {
            const int32_t ox = ix * s.window.stride_w - s.pad_w + fx;
            if (ox < 0 || ox >= s.out_w) continue;
            vec::Acc(
                image + (static_cast<int64_t>(oy) * s.out_w + ox) * s.out_c,
                col + (fy * s.filter_w + fx) * s.out_c, s.out_c);
          }
        }
      }
    }
  }
  const float* bv = bias.present() ? bias.data<float>() : nullptr;
  const int64_t pixels = static_cast<int64_t>(s.batches) * s.out_h * s.out_w;
  for (int64_t p = 0; p < pixels; ++p) {
    float* px = o + p * s.out_c;
    if (bv != nullptr) vec::Acc(px, bv, s.out_c);
    ApplyActivationInPlace(s.activation, px, s.out_c);
  }
  return KILN_STATUS_OK;
}

}  // namespace

void RegisterConvolutionKernels(sdk::PluginDefinition& def) {
  // CONV_2D v1: float32 conv with dilation and fused activation. v2-v5 and
  // v7-v8 are hybrid/int8/int16/int4 variants; v6 (grouped) is refused.
  def.AddKernel(sdk::MakeStatefulKernel<ConvState, ConvPrepare, ConvInvoke>(
      KILN_OP_CONV_2D, 1, 1));
  // DEPTHWISE_CONV_2D v1: float32 with depth_multiplier (uint8 refused by
  // type); v2: adds dilation; v3: int8 with per-channel int8 filters and
  // int32 bias. v4+ are hybrid/int16/int4 variants. Kernels dispatch on the
  // input type.
  def.AddKernel(sdk::MakeStatefulKernel<DepthwiseState, DepthwisePrepare,
                                        DepthwiseInvoke>(
      KILN_OP_DEPTHWISE_CONV_2D, 1, 3));
  // TRANSPOSE_CONV v1: float32; v2: int8 filters (refused by type);
  // v3: optional bias input; v4: fused activation. v5 is int16 quantized bias.
  def.AddKernel(
      sdk::MakeStatefulKernel<TransposeConvState, TransposeConvPrepare,
                              TransposeConvInvoke>(KILN_OP_TRANSPOSE_CONV, 1,
                                                   4));
}

}  // namespace kiln::cpu::nn
