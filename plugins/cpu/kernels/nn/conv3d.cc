// CONV_3D, float32 (TFLite's conv3d.cc and reference_ops::Conv3D): input
// NDHWC [batches, depth, height, width, in_c], filter DHWIO [depth, height,
// width, in_c, out_c], optional bias [out_c]; SAME or VALID padding, strides
// and dilations per spatial dim, and a fused activation applied as the
// output range of TFLite's CalculateActivationRange (TANH and SIGN_BIT leave
// the range, NONE clamps to the largest finite floats).
//
// Every output sums its taps in the reference kernel's order (filter depth,
// height, width, then input channel), skipping taps outside the input, then
// adds the bias: the same float operations, so the same results.
//
// Versions (TFLite's op_version.cc): v1, float32 only.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/nn/nn_common.h"

namespace kiln::cpu::nn {
namespace {

constexpr sdk::Operand kInput = sdk::Input(0, "input");
constexpr sdk::Operand kFilter = sdk::Input(1, "filter");
constexpr sdk::Operand kBias = sdk::Input(2, "bias");
constexpr sdk::TypeSet kFloat32{KILN_TYPE_FLOAT32};

// One spatial dim of the window: extent in and out, filter, stride,
// dilation and leading padding.
struct Dim {
  int32_t in = 0, filter = 0, out = 0;
  int32_t stride = 1, dilation = 1, pad = 0;
};

struct Conv3DState {
  int32_t batches = 0, in_c = 0, out_c = 0;
  Dim d, h, w;
  float lo = 0, hi = 0;  // the fused activation's output range
};

// TFLite's CalculateActivationRange for float outputs.
void ActivationRange(int64_t act, float* lo, float* hi) {
  *lo = std::numeric_limits<float>::lowest();
  *hi = std::numeric_limits<float>::max();
  if (act == KILN_ACTIVATION_RELU) {
    *lo = 0.f;
  } else if (act == KILN_ACTIVATION_RELU6) {
    *lo = 0.f;
    *hi = 6.f;
  } else if (act == KILN_ACTIVATION_RELU_N1_TO_1) {
    *lo = -1.f;
    *hi = 1.f;
  }
}

// Reads the depth stride and dilation (the height and width ones come with
// ReadWindowParams), with the same bounds.
KilnStatus ReadDepthWindow(KernelContext& k, Dim* d) {
  const int64_t stride = k.OptionInt(KILN_OPTION_STRIDE_D, 1);
  const int64_t dilation = k.OptionInt(KILN_OPTION_DILATION_D, 1);
  constexpr int64_t kMax = 1 << 20;
  if (stride < 1 || stride > kMax || dilation < 1 || dilation > kMax) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT,
                  "CONV_3D: stride_d and dilation_d_factor must be >= 1, got ",
                  stride, " and ", dilation);
  }
  d->stride = static_cast<int32_t>(stride);
  d->dilation = static_cast<int32_t>(dilation);
  return KILN_STATUS_OK;
}

KilnStatus FinishDim(KernelContext& k, int64_t padding, const char* name,
                     Dim* d) {
  d->out = WindowOutputSize(padding, d->in, d->filter, d->stride, d->dilation);
  if (d->out < 0) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "CONV_3D: the filter's ", name,
                  " ", d->filter, " with dilation ", d->dilation,
                  " is larger than the input's ", d->in,
                  " under VALID padding");
  }
  d->pad = WindowPadBefore(d->in, d->filter, d->stride, d->dilation, d->out);
  return KILN_STATUS_OK;
}

KilnStatus Conv3DPrepare(KernelContext& k, Conv3DState& s) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectInputCount(k, 2, 3));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectOutputCount(k, 1));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectType(k, kInput, kFloat32));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectType(k, kFilter, kFloat32));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectType(k, sdk::Output(0), kFloat32));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectRank(k, kInput, 5));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectRank(k, kFilter, 5));
  const Tensor input = k.input(0), filter = k.input(1);
  s.batches = input.dim(0);
  s.d.in = input.dim(1);
  s.h.in = input.dim(2);
  s.w.in = input.dim(3);
  s.in_c = input.dim(4);
  s.d.filter = filter.dim(0);
  s.h.filter = filter.dim(1);
  s.w.filter = filter.dim(2);
  s.out_c = filter.dim(4);
  if (filter.dim(3) != s.in_c) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "CONV_3D: filter '",
                  filter.name(), "' has ", filter.dim(3),
                  " input channels (dim 3) but input '", input.name(), "' has ",
                  s.in_c, " (dim 4); they must be equal");
  }
  if (k.num_inputs() > 2 && k.input(2).present()) {
    KILN_SDK_RETURN_IF_ERROR(sdk::ExpectType(k, kBias, kFloat32));
    if (k.input(2).num_elements() != s.out_c) {
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "CONV_3D: bias '",
                    k.input(2).name(), "' has ", k.input(2).num_elements(),
                    " elements, expected one per output channel (", s.out_c,
                    ")");
    }
  }
  WindowParams window;
  KILN_SDK_RETURN_IF_ERROR(ReadWindowParams(k, true, &window));
  s.h.stride = window.stride_h;
  s.h.dilation = window.dilation_h;
  s.w.stride = window.stride_w;
  s.w.dilation = window.dilation_w;
  KILN_SDK_RETURN_IF_ERROR(ReadDepthWindow(k, &s.d));
  KILN_SDK_RETURN_IF_ERROR(FinishDim(k, window.padding, "depth", &s.d));
  KILN_SDK_RETURN_IF_ERROR(FinishDim(k, window.padding, "height", &s.h));
  KILN_SDK_RETURN_IF_ERROR(FinishDim(k, window.padding, "width", &s.w));
  int64_t act = KILN_ACTIVATION_NONE;
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ReadFusedActivation(k, KILN_TYPE_FLOAT32, &act));
  ActivationRange(act, &s.lo, &s.hi);
  return k.Resize(k.output(0), {s.batches, s.d.out, s.h.out, s.w.out, s.out_c});
}

KilnStatus Conv3DInvoke(KernelContext& k, Conv3DState& s) {
  const float *in = nullptr, *filter = nullptr, *bias = nullptr;
  float* out = nullptr;
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, kInput, &in));
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, kFilter, &filter));
  if (k.num_inputs() > 2 && k.input(2).present()) {
    KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, kBias, &bias));
  }
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, sdk::Output(0), &out));
  const int64_t in_c = s.in_c, out_c = s.out_c;
  std::vector<float> sums(static_cast<size_t>(out_c));
  float* acc = sums.data();
  for (int32_t b = 0; b < s.batches; ++b) {
    for (int32_t od = 0; od < s.d.out; ++od) {
      for (int32_t oy = 0; oy < s.h.out; ++oy) {
        for (int32_t ox = 0; ox < s.w.out; ++ox) {
          std::fill(sums.begin(), sums.end(), 0.f);
          for (int32_t fd = 0; fd < s.d.filter; ++fd) {
            const int32_t id = od * s.d.stride - s.d.pad + fd * s.d.dilation;
            if (id < 0 || id >= s.d.in) continue;
            for (int32_t fy = 0; fy < s.h.filter; ++fy) {
              const int32_t iy = oy * s.h.stride - s.h.pad + fy * s.h.dilation;
              if (iy < 0 || iy >= s.h.in) continue;
              for (int32_t fx = 0; fx < s.w.filter; ++fx) {
                const int32_t ix =
                    ox * s.w.stride - s.w.pad + fx * s.w.dilation;
                if (ix < 0 || ix >= s.w.in) continue;
                const float* px =
                    in +
                    (((int64_t{b} * s.d.in + id) * s.h.in + iy) * s.w.in + ix) *
                        in_c;
                const float* taps =
                    filter +
                    ((int64_t{fd} * s.h.filter + fy) * s.w.filter + fx) * in_c *
                        out_c;
                for (int64_t ic = 0; ic < in_c; ++ic) {
                  const float x = px[ic];
                  const float* row = taps + ic * out_c;
                  for (int64_t oc = 0; oc < out_c; ++oc) acc[oc] += x * row[oc];
                }
              }
            }
          }
          for (int64_t oc = 0; oc < out_c; ++oc) {
            const float v = acc[oc] + (bias != nullptr ? bias[oc] : 0.f);
            *out++ = std::min(std::max(v, s.lo), s.hi);
          }
        }
      }
    }
  }
  return KILN_STATUS_OK;
}

}  // namespace

void RegisterConv3DKernels(sdk::PluginDefinition& def) {
  // The state holds the geometry prepare derives from the options and the
  // shapes, so each input signature keeps its own.
  def.AddKernel(sdk::StatePerShapeSignature(
      sdk::MakeStatefulKernel<Conv3DState, Conv3DPrepare, Conv3DInvoke>(
          KILN_OP_CONV_3D, 1, 1)));
}

}  // namespace kiln::cpu::nn
