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

KilnStatus ReadCommon(KernelContext& k, const char* op, const Tensor& input,
                      const Tensor& filter, ConvGeometry* g) {
  KILN_SDK_RETURN_IF_ERROR(ExpectRank(k, op, "input", input, 4));
  KILN_SDK_RETURN_IF_ERROR(ExpectRank(k, op, "filter", filter, 4));
  KILN_SDK_RETURN_IF_ERROR(ReadWindowParams(k, op, true, &g->window));
  KILN_SDK_RETURN_IF_ERROR(ReadActivation(k, op, &g->activation));
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
  KILN_SDK_RETURN_IF_ERROR(ReadCommon(k, op, input, filter, g));
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
  KILN_SDK_RETURN_IF_ERROR(ReadCommon(k, op, input, filter, g));
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

}  // namespace kiln::cpu::nn
