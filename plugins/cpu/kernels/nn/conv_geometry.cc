#include "kernels/nn/conv_geometry.h"

namespace kiln::cpu::nn {
namespace {

// Output extent and leading padding once the input, filter and window are
// known.
KilnStatus FinishGeometry(KernelContext& k, const char* op, const Tensor& input,
                          ConvGeometry* g) {
  g->out_h = WindowOutputSize(g->window.padding, g->in_h, g->filter_h,
                              g->window.stride_h, g->window.dilation_h);
  g->out_w = WindowOutputSize(g->window.padding, g->in_w, g->filter_w,
                              g->window.stride_w, g->window.dilation_w);
  if (g->out_h < 0 || g->out_w < 0) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, ": dilated filter ",
                  g->filter_h, "x", g->filter_w, " does not fit input ",
                  ShapeString(input.shape()), " with VALID padding");
  }
  g->pad_h = WindowPadBefore(g->in_h, g->filter_h, g->window.stride_h,
                             g->window.dilation_h, g->out_h);
  g->pad_w = WindowPadBefore(g->in_w, g->filter_w, g->window.stride_w,
                             g->window.dilation_w, g->out_w);
  return KILN_STATUS_OK;
}

// Input `input_index` and filter (input 1) of rank 4, the window options
// and the fused activation.
KilnStatus ReadCommon(KernelContext& k, int32_t input_index,
                      const Tensor& input, const Tensor& filter, bool dilation,
                      ConvGeometry* g) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectRank(k, sdk::Input(input_index), 4));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectRank(k, sdk::Input(1, "filter"), 4));
  KILN_SDK_RETURN_IF_ERROR(ReadWindowParams(k, dilation, &g->window));
  KILN_SDK_RETURN_IF_ERROR(ReadClampActivation(k, &g->activation));
  g->batches = input.dim(0);
  g->in_h = input.dim(1);
  g->in_w = input.dim(2);
  g->in_c = input.dim(3);
  g->filter_h = filter.dim(1);
  g->filter_w = filter.dim(2);
  return KILN_STATUS_OK;
}

}  // namespace

KilnStatus ReadConv2DGeometry(KernelContext& k, const char* op,
                              const Tensor& input, const Tensor& filter,
                              ConvGeometry* g) {
  KILN_SDK_RETURN_IF_ERROR(ReadCommon(k, 0, input, filter, true, g));
  g->out_c = filter.dim(0);
  if (filter.dim(3) != g->in_c) {
    return k.Fail(KILN_STATUS_UNIMPLEMENTED, op, ": filter '", filter.name(),
                  "' has ", filter.dim(3), " input channels but input '",
                  input.name(), "' has ", g->in_c,
                  "; grouped convolution (CONV_2D version 6) is not supported "
                  "by this CPU kernel");
  }
  return FinishGeometry(k, op, input, g);
}

KilnStatus ReadDepthwiseGeometry(KernelContext& k, const char* op,
                                 const Tensor& input, const Tensor& filter,
                                 ConvGeometry* g) {
  KILN_SDK_RETURN_IF_ERROR(ReadCommon(k, 0, input, filter, true, g));
  g->out_c = filter.dim(3);
  if (filter.dim(0) != 1) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, ": filter '", filter.name(),
                  "' has shape ", ShapeString(filter.shape()),
                  ", expected [1, height, width, channels * multiplier]");
  }
  if (g->in_c <= 0 || g->out_c % g->in_c != 0) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, ": filter '", filter.name(),
                  "' has ", g->out_c,
                  " output channels, not a multiple of the input's ", g->in_c);
  }
  g->depth_multiplier = g->out_c / g->in_c;
  const int64_t option = k.OptionInt(KILN_OPTION_DEPTH_MULTIPLIER, 0);
  if (option != 0 && option != g->depth_multiplier) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, ": depth_multiplier ",
                  option, " disagrees with filter '", filter.name(), "' (",
                  g->out_c, " output channels for ", g->in_c,
                  " input channels)");
  }
  return FinishGeometry(k, op, input, g);
}

KilnStatus ReadTransposeConvGeometry(KernelContext& k, const char* op,
                                     ConvGeometry* g, bool* known) {
  *known = false;
  const Tensor shape = k.input(0), filter = k.input(1), input = k.input(2);
  constexpr sdk::Operand kShape = sdk::Input(0, "output_shape");
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectType(k, kShape, {KILN_TYPE_INT32}));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectRank(k, kShape, 1));
  if (shape.dim(0) != 4) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, ": output_shape input '",
                  shape.name(), "' must hold 4 values, has ", shape.dim(0));
  }
  KILN_SDK_RETURN_IF_ERROR(ReadCommon(k, 2, input, filter, false, g));
  g->out_c = filter.dim(0);
  if (filter.dim(3) != g->in_c) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, ": filter '", filter.name(),
                  "' has ", filter.dim(3), " input channels but input '",
                  input.name(), "' has ", g->in_c);
  }
  const int32_t* dims = shape.data<int32_t>();
  if (dims == nullptr) return KILN_STATUS_OK;  // sized once the values exist
  if (dims[0] != g->batches || dims[3] != g->out_c || dims[1] < 0 ||
      dims[2] < 0) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, ": output_shape [", dims[0],
                  ", ", dims[1], ", ", dims[2], ", ", dims[3], "] must be [",
                  g->batches, ", height, width, ", g->out_c,
                  "] (input batches, filter output channels)");
  }
  g->out_h = dims[1];
  g->out_w = dims[2];
  const int32_t conv_h = WindowOutputSize(g->window.padding, g->out_h,
                                          g->filter_h, g->window.stride_h, 1);
  const int32_t conv_w = WindowOutputSize(g->window.padding, g->out_w,
                                          g->filter_w, g->window.stride_w, 1);
  g->pad_h = conv_h < 0 ? 0
                        : WindowPadBefore(g->out_h, g->filter_h,
                                          g->window.stride_h, 1, conv_h);
  g->pad_w = conv_w < 0 ? 0
                        : WindowPadBefore(g->out_w, g->filter_w,
                                          g->window.stride_w, 1, conv_w);
  *known = true;
  return KILN_STATUS_OK;
}

}  // namespace kiln::cpu::nn
