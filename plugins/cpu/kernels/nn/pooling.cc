// AVERAGE_POOL_2D, MAX_POOL_2D (NHWC), and last-axis normalisations:
// L2_NORMALIZATION, SOFTMAX, LOG_SOFTMAX. Float32; integer pooling in
// pooling_quantized.h.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/nn/float_rows.h"
#include "kernels/nn/nn_common.h"
#include "kernels/nn/parallel.h"
#include "kernels/nn/pooling_quantized.h"
#include "kernels/nn/softmax_quantized.h"
#include "kernels/nn/vec.h"
#include "kernels/nn/vec_math.h"
#include "kernels/registry.h"

namespace kiln::cpu::nn {
namespace {

constexpr const char* kQuantNote = "quantized variants are not implemented";

// ---- Pooling -------------------------------------------------------------

KilnStatus ReadPoolGeometry(KernelContext& k, const char* op, PoolGeometry* g) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectInputCount(k, 1, 1));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectOutputCount(k, 1));
  const Tensor input = k.input(0);
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectType(
      k, sdk::Input(0),
      {KILN_TYPE_FLOAT32, KILN_TYPE_INT8, KILN_TYPE_UINT8, KILN_TYPE_INT16}));
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectSameType(k, sdk::Output(0), sdk::Input(0)));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectRank(k, sdk::Input(0), 4));
  KILN_SDK_RETURN_IF_ERROR(ReadWindowParams(k, false, &g->window));
  // TFLite's pools take their range from CalculateActivationRange(Quantized),
  // which ignores TANH and SIGN_BIT.
  KILN_SDK_RETURN_IF_ERROR(ReadClampActivation(k, &g->activation));
  const int64_t fh = k.OptionInt(KILN_OPTION_FILTER_H, 0);
  const int64_t fw = k.OptionInt(KILN_OPTION_FILTER_W, 0);
  if (fh < 1 || fw < 1 || fh > (1 << 20) || fw > (1 << 20)) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op,
                  ": filter_height and filter_width must be >= 1, got ", fh,
                  "x", fw);
  }
  g->filter_h = static_cast<int32_t>(fh);
  g->filter_w = static_cast<int32_t>(fw);
  g->batches = input.dim(0);
  g->in_h = input.dim(1);
  g->in_w = input.dim(2);
  g->channels = input.dim(3);
  g->out_h = WindowOutputSize(g->window.padding, g->in_h, g->filter_h,
                              g->window.stride_h, 1);
  g->out_w = WindowOutputSize(g->window.padding, g->in_w, g->filter_w,
                              g->window.stride_w, 1);
  if (g->out_h < 0 || g->out_w < 0) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, ": filter ", g->filter_h,
                  "x", g->filter_w, " does not fit input ",
                  ShapeString(input.shape()), " with VALID padding");
  }
  g->pad_h =
      WindowPadBefore(g->in_h, g->filter_h, g->window.stride_h, 1, g->out_h);
  g->pad_w =
      WindowPadBefore(g->in_w, g->filter_w, g->window.stride_w, 1, g->out_w);
  return KILN_STATUS_OK;
}

// The geometry prepare derived from the node's options and the input's
// shape; invoke reads it instead of deriving it again.
struct PoolState {
  PoolGeometry g;
};

template <bool kMax>
KilnStatus PoolPrepare(KernelContext& k, PoolState& s) {
  const char* op = kMax ? "MAX_POOL_2D" : "AVERAGE_POOL_2D";
  KILN_SDK_RETURN_IF_ERROR(ReadPoolGeometry(k, op, &s.g));
  const PoolGeometry& g = s.g;
  if (k.input(0).type() != KILN_TYPE_FLOAT32) {
    int32_t lo = 0, hi = 0;
    KILN_SDK_RETURN_IF_ERROR(QuantizedPoolBounds(k, op, g, &lo, &hi));
  }
  return k.Resize(k.output(0), {g.batches, g.out_h, g.out_w, g.channels});
}

// Float pooling: output rows (batch, oy) split across the thread pool.
KilnStatus FloatPoolInvoke(KernelContext& k, const PoolGeometry& g, bool max) {
  const FloatRowKernels& kernels = GetFloatRowKernels();
  const auto row_fn = max ? kernels.max_pool_row : kernels.avg_pool_row;
  PoolRowArgs base;
  base.in_w = g.in_w;
  base.channels = g.channels;
  base.out_w = g.out_w;
  base.stride_w = g.window.stride_w;
  base.pad_w = g.pad_w;
  base.filter_w = g.filter_w;
  base.clamp = g.activation != KILN_ACTIVATION_NONE &&
               ActivationClamp(g.activation, &base.lo, &base.hi);
  const float* in = k.input(0).data<float>();
  float* o = k.output(0).data<float>();
  const int64_t image = static_cast<int64_t>(g.in_h) * g.in_w * g.channels;
  const int64_t out_row = static_cast<int64_t>(g.out_w) * g.channels;
  return ParallelRows(k, int64_t{g.batches} * g.out_h,
                      out_row * g.filter_h * g.filter_w,
                      [&](int64_t begin, int64_t end, int32_t) {
                        for (int64_t r = begin; r < end; ++r) {
                          const int32_t oy = static_cast<int32_t>(r % g.out_h);
                          const int32_t y0 = oy * g.window.stride_h - g.pad_h;
                          PoolRowArgs a = base;
                          a.image = in + (r / g.out_h) * image;
                          a.out = o + r * out_row;
                          a.ys = std::max(0, y0);
                          a.ye = std::min(g.in_h, y0 + g.filter_h);
                          row_fn(a);
                        }
                      });
}

template <bool kMax>
KilnStatus PoolInvoke(KernelContext& k, PoolState& s) {
  if (k.input(0).type() != KILN_TYPE_FLOAT32) {
    return QuantizedPoolInvoke(k, kMax ? "MAX_POOL_2D" : "AVERAGE_POOL_2D",
                               kMax, s.g);
  }
  return FloatPoolInvoke(k, s.g, kMax);
}

// ---- Last-axis normalisations --------------------------------------------

// Checks one float32 input/output of any rank >= 1 and sizes the output.
KilnStatus LastAxisPrepare(KernelContext& k, const char* op) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectInputCount(k, 1, 1));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectOutputCount(k, 1));
  const Tensor input = k.input(0), out = k.output(0);
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectType(k, sdk::Input(0), {KILN_TYPE_FLOAT32}, kQuantNote));
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectType(k, sdk::Output(0), {KILN_TYPE_FLOAT32}, kQuantNote));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectKnownShape(k, sdk::Input(0)));
  if (input.rank() < 1) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, ": input '", input.name(),
                  "' must have rank >= 1 (the op normalises the last axis)");
  }
  return k.Resize(out, input.shape());
}

KilnStatus SoftmaxPrepare(KernelContext& k) {
  return LastAxisPrepare(k, "SOFTMAX");
}
KilnStatus LogSoftmaxPrepare(KernelContext& k) {
  return LastAxisPrepare(k, "LOG_SOFTMAX");
}

// TFLite refuses a fused activation on L2_NORMALIZATION ("our
// implementations don't support activations").
KilnStatus ExpectNoActivation(KernelContext& k) {
  int64_t act = KILN_ACTIVATION_NONE;
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ReadFusedActivation(k, KILN_TYPE_FLOAT32, &act));
  if (act == KILN_ACTIVATION_NONE) return KILN_STATUS_OK;
  return k.Fail(KILN_STATUS_INVALID_ARGUMENT, sdk::OpName(k),
                ": fused activation ", sdk::ActivationName(act),
                " is refused (as by TFLite, which supports none here)");
}

KilnStatus L2NormPrepare(KernelContext& k) {
  KILN_SDK_RETURN_IF_ERROR(ExpectNoActivation(k));
  return LastAxisPrepare(k, "L2_NORMALIZATION");
}

// Calls fn(in_row, out_row, depth) for every last-axis row.
template <typename Fn>
void ForEachRow(KernelContext& k, Fn&& fn) {
  const Tensor input = k.input(0), out = k.output(0);
  const std::vector<int32_t> shape = input.shape();
  const int64_t depth = shape.back();
  if (depth == 0) return;
  const int64_t rows = DimProduct(shape, 0, shape.size()) / depth;
  const float* in = input.data<float>();
  float* o = out.data<float>();
  for (int64_t r = 0; r < rows; ++r) fn(in + r * depth, o + r * depth, depth);
}

// Rows split across the thread pool (about 24 flops an element).
KilnStatus SoftmaxInvoke(KernelContext& k) {
  const float beta = k.OptionFloat(KILN_OPTION_BETA, 1.f);
  const Tensor input = k.input(0);
  const int64_t depth = input.rank() > 0 ? input.shape().back() : 0;
  if (depth == 0) return KILN_STATUS_OK;
  const int64_t rows = input.num_elements() / depth;
  const float* x = input.data<float>();
  float* y = k.output(0).data<float>();
  return ParallelRows(
      k, rows, depth * 24, [&](int64_t begin, int64_t end, int32_t) {
        if (depth == 2) {  // U-Net's 2-class SOFTMAX: one vector pass
          GetVecMathKernels().softmax_pairs(x + 2 * begin, beta, y + 2 * begin,
                                            end - begin);
          return;
        }
        GetVecMathKernels().softmax_rows(x + begin * depth, beta,
                                         y + begin * depth, end - begin, depth);
      });
}

KilnStatus LogSoftmaxInvoke(KernelContext& k) {
  ForEachRow(k, [&](const float* x, float* y, int64_t n) {
    const float max = *std::max_element(x, x + n);
    float sum = 0.f;
    for (int64_t i = 0; i < n; ++i) sum += std::exp(x[i] - max);
    const float log_sum = std::log(sum);
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] - max - log_sum;
  });
  return KILN_STATUS_OK;
}

KilnStatus L2NormInvoke(KernelContext& k) {
  ForEachRow(k, [&](const float* x, float* y, int64_t n) {
    float squares = 0.f;
    for (int64_t i = 0; i < n; ++i) squares += x[i] * x[i];
    const float norm = std::max(std::sqrt(squares), 1e-6f);
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] / norm;
  });
  return KILN_STATUS_OK;
}

struct L2NormIntState {
  int32_t input_zero_point = 0;
};
KilnStatus L2NormIntPrepare(KernelContext& k, L2NormIntState& s) {
  KILN_SDK_RETURN_IF_ERROR(ExpectNoActivation(k));
  return QuantizedL2NormPrepare(k, &s.input_zero_point);
}
KilnStatus L2NormIntInvoke(KernelContext& k, L2NormIntState& s) {
  return QuantizedL2NormInvoke(k, s.input_zero_point);
}

// A last-axis op: the float kernel, or the integer one (with its state) for
// integer inputs.
template <typename IntState, KilnStatus (*kFloatPrepare)(KernelContext&),
          KilnStatus (*kFloatInvoke)(KernelContext&),
          KilnStatus (*kIntPrepare)(KernelContext&, IntState&),
          KilnStatus (*kIntInvoke)(KernelContext&, IntState&)>
struct LastAxisOp {
  struct State {
    bool integer = false;
    IntState q;
  };
  static KilnStatus Prepare(KernelContext& k, State& s) {
    KILN_SDK_RETURN_IF_ERROR(sdk::ExpectInputCount(k, 1, 1));
    KILN_SDK_RETURN_IF_ERROR(sdk::ExpectOutputCount(k, 1));
    const Tensor input = k.input(0);
    s.integer = input.present() && input.type() != KILN_TYPE_FLOAT32;
    return s.integer ? kIntPrepare(k, s.q) : kFloatPrepare(k);
  }
  static KilnStatus Invoke(KernelContext& k, State& s) {
    return s.integer ? kIntInvoke(k, s.q) : kFloatInvoke(k);
  }
  static KilnKernel Kernel(int32_t op, int32_t min_version,
                           int32_t max_version) {
    return sdk::MakeStatefulKernel<State, Prepare, Invoke>(op, min_version,
                                                           max_version);
  }
};

KilnStatus QuantizedSoftmaxRun(KernelContext& k, QuantizedSoftmaxState& s) {
  return QuantizedSoftmaxInvoke(k, s);
}
KilnStatus QuantizedLogSoftmaxRun(KernelContext& k,
                                  QuantizedLogSoftmaxState& s) {
  return QuantizedLogSoftmaxInvoke(k, s);
}

using SoftmaxOp =
    LastAxisOp<QuantizedSoftmaxState, SoftmaxPrepare, SoftmaxInvoke,
               QuantizedSoftmaxPrepare, QuantizedSoftmaxRun>;
using LogSoftmaxOp =
    LastAxisOp<QuantizedLogSoftmaxState, LogSoftmaxPrepare, LogSoftmaxInvoke,
               QuantizedLogSoftmaxPrepare, QuantizedLogSoftmaxRun>;
using L2NormOp = LastAxisOp<L2NormIntState, L2NormPrepare, L2NormInvoke,
                            L2NormIntPrepare, L2NormIntInvoke>;

}  // namespace

void RegisterPoolingKernels(sdk::PluginDefinition& def) {
  // AVERAGE_POOL_2D / MAX_POOL_2D v1: float32 and uint8; v2: int8; v3:
  // int16. Integer types pool raw values as TFLite does.
  // Their state is the geometry of one input shape, so each input
  // signature keeps its own.
  def.AddKernel(sdk::StatePerShapeSignature(
      sdk::MakeStatefulKernel<PoolState, PoolPrepare<false>, PoolInvoke<false>>(
          KILN_OP_AVERAGE_POOL_2D, 1, 3)));
  def.AddKernel(sdk::StatePerShapeSignature(
      sdk::MakeStatefulKernel<PoolState, PoolPrepare<true>, PoolInvoke<true>>(
          KILN_OP_MAX_POOL_2D, 1, 3)));
  // The integer variants keep state prepare derives from the node and the
  // shapes, so each input signature keeps its own.
  // L2_NORMALIZATION v1: float32 and uint8; v2: int8. No fused activation
  // (TFLite refuses one).
  def.AddKernel(sdk::StatePerShapeSignature(
      L2NormOp::Kernel(KILN_OP_L2_NORMALIZATION, 1, 2)));
  // SOFTMAX v1: float32 (and uint8) with beta, any rank; v2: int8; v3:
  // int16.
  def.AddKernel(
      sdk::StatePerShapeSignature(SoftmaxOp::Kernel(KILN_OP_SOFTMAX, 1, 3)));
  // LOG_SOFTMAX v1: float32 and uint8; v2: int8.
  def.AddKernel(sdk::StatePerShapeSignature(
      LogSoftmaxOp::Kernel(KILN_OP_LOG_SOFTMAX, 1, 2)));
}

}  // namespace kiln::cpu::nn
