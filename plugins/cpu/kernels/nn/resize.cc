// RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR on NHWC images (float32,
// int8, uint8, int16), with TFLite's align_corners / half_pixel_centers
// coordinate rules. Integer bilinear interpolation in resize_quantized.h.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/nn/float_rows.h"
#include "kernels/nn/nn_common.h"
#include "kernels/nn/parallel.h"
#include "kernels/nn/resize_quantized.h"
#include "kernels/registry.h"

namespace kiln::cpu::nn {
namespace {

struct ResizeParams {
  bool align_corners = false, half_pixel_centers = false;
  bool known = false;  // size values available
  int32_t out_h = 0, out_w = 0;
};

KilnStatus ReadResize(KernelContext& k, const char* op, ResizeParams* p) {
  constexpr sdk::Operand kSize = sdk::Input(1, "size");
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectArity(k, 2, 1));
  const Tensor size = k.input(1);
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectType(
      k, sdk::Input(0),
      {KILN_TYPE_FLOAT32, KILN_TYPE_INT8, KILN_TYPE_UINT8, KILN_TYPE_INT16}));
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectSameType(k, sdk::Output(0), sdk::Input(0)));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectType(k, kSize, {KILN_TYPE_INT32}));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectRank(k, sdk::Input(0), 4));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectRank(k, kSize, 1));
  if (size.dim(0) != 2) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, ": size input '",
                  size.name(), "' must hold 2 values (height, width), has ",
                  size.dim(0));
  }
  p->align_corners = k.OptionInt(KILN_OPTION_ALIGN_CORNERS, 0) != 0;
  p->half_pixel_centers = k.OptionInt(KILN_OPTION_HALF_PIXEL_CENTERS, 0) != 0;
  if (p->align_corners && p->half_pixel_centers) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op,
                  ": align_corners and half_pixel_centers cannot both be "
                  "true");
  }
  const int32_t* dims = size.data<int32_t>();
  p->known = dims != nullptr;
  if (!p->known) return KILN_STATUS_OK;
  if (dims[0] <= 0 || dims[1] <= 0) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, ": output size [", dims[0],
                  ", ", dims[1], "] from size input '", size.name(),
                  "' must be positive");
  }
  p->out_h = dims[0];
  p->out_w = dims[1];
  return KILN_STATUS_OK;
}

template <const char* kOp>
KilnStatus ResizePrepare(KernelContext& k) {
  ResizeParams p;
  KILN_SDK_RETURN_IF_ERROR(ReadResize(k, kOp, &p));
  if (!p.known) return KILN_STATUS_OK;  // sized once the values exist
  const Tensor input = k.input(0);
  return k.Resize(k.output(0), {input.dim(0), p.out_h, p.out_w, input.dim(3)});
}

float ResizeScale(bool align_corners, int32_t in, int32_t out) {
  return (align_corners && out > 1)
             ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
             : static_cast<float>(in) / static_cast<float>(out);
}

// Source coordinate and neighbours of output index `i` (TFLite rules).
struct Lerp {
  int32_t lo, hi;
  float frac;  // weight of `hi`
};
Lerp BilinearSource(int32_t i, float scale, bool half_pixel, int32_t in) {
  const float x = half_pixel ? (static_cast<float>(i) + 0.5f) * scale - 0.5f
                             : static_cast<float>(i) * scale;
  const float fl = std::floor(x);
  Lerp l;
  l.lo = std::max(static_cast<int32_t>(fl), 0);
  l.hi = std::min(static_cast<int32_t>(std::ceil(x)), in - 1);
  l.frac = x - static_cast<float>(l.lo);
  return l;
}

int32_t NearestSource(int32_t i, float scale, bool align_corners,
                      bool half_pixel, int32_t in) {
  const float offset = half_pixel ? 0.5f : 0.f;
  const float x = (static_cast<float>(i) + offset) * scale;
  int32_t src = align_corners ? static_cast<int32_t>(std::round(x))
                              : static_cast<int32_t>(std::floor(x));
  src = std::min(src, in - 1);
  if (half_pixel) src = std::max(src, 0);
  return src;
}

template <const char* kOp>
KilnStatus ResizeCommonInvoke(KernelContext& k, ResizeParams* p) {
  KILN_SDK_RETURN_IF_ERROR(ReadResize(k, kOp, p));
  const Tensor input = k.input(0);
  if (!p->known) {
    return k.Fail(KILN_STATUS_FAILED_PRECONDITION, kOp,
                  ": size input has no values at invoke");
  }
  return sdk::ExpectOutputShape(
      k, sdk::Output(0), {input.dim(0), p->out_h, p->out_w, input.dim(3)});
}

int64_t ElementSize(KilnTensorType type) {
  switch (type) {
    case KILN_TYPE_INT8:
    case KILN_TYPE_UINT8:
      return 1;
    case KILN_TYPE_INT16:
      return 2;
    default:
      return 4;
  }
}

constexpr char kBilinear[] = "RESIZE_BILINEAR";
constexpr char kNearest[] = "RESIZE_NEAREST_NEIGHBOR";

// Float RESIZE_BILINEAR: the column sources once (they repeat on every
// row), then output rows (batch, y) split across the thread pool.
KilnStatus FloatBilinear(KernelContext& k, const ResizeParams& p,
                         const Tensor& input) {
  const int32_t in_h = input.dim(1), in_w = input.dim(2), c = input.dim(3);
  const float sy = ResizeScale(p.align_corners, in_h, p.out_h);
  const float sx = ResizeScale(p.align_corners, in_w, p.out_w);
  std::vector<int32_t> x_lo(static_cast<size_t>(p.out_w));
  std::vector<int32_t> x_hi(x_lo.size());
  std::vector<float> wx(x_lo.size());
  for (size_t x = 0; x < x_lo.size(); ++x) {
    const Lerp l =
        BilinearSource(static_cast<int32_t>(x), sx, p.half_pixel_centers, in_w);
    x_lo[x] = l.lo * c;
    x_hi[x] = l.hi * c;
    wx[x] = l.frac;
  }
  const float* in = input.data<float>();
  float* o = k.output(0).data<float>();
  const int64_t image = static_cast<int64_t>(in_h) * in_w * c;
  const int64_t in_row = static_cast<int64_t>(in_w) * c;
  const int64_t out_row = static_cast<int64_t>(p.out_w) * c;
  const auto row_fn = GetFloatRowKernels().bilinear_row;
  return ParallelRows(k, int64_t{input.dim(0)} * p.out_h, out_row * 4,
                      [&](int64_t begin, int64_t end, int32_t) {
                        for (int64_t r = begin; r < end; ++r) {
                          const Lerp ly =
                              BilinearSource(static_cast<int32_t>(r % p.out_h),
                                             sy, p.half_pixel_centers, in_h);
                          const float* src = in + (r / p.out_h) * image;
                          BilinearRowArgs a;
                          a.top = src + ly.lo * in_row;
                          a.bottom = src + ly.hi * in_row;
                          a.x_lo = x_lo.data();
                          a.x_hi = x_hi.data();
                          a.wx = wx.data();
                          a.wy = ly.frac;
                          a.out_w = p.out_w;
                          a.channels = c;
                          a.out = o + r * out_row;
                          row_fn(a);
                        }
                      });
}

KilnStatus BilinearInvoke(KernelContext& k) {
  ResizeParams p;
  KILN_SDK_RETURN_IF_ERROR(ResizeCommonInvoke<kBilinear>(k, &p));
  const Tensor input = k.input(0);
  const int32_t batches = input.dim(0), in_h = input.dim(1),
                in_w = input.dim(2), c = input.dim(3);
  if (input.type() != KILN_TYPE_FLOAT32) {
    const ResizeShape shape{batches,
                            in_h,
                            in_w,
                            c,
                            p.out_h,
                            p.out_w,
                            p.align_corners,
                            p.half_pixel_centers};
    const Tensor out = k.output(0);
    if (input.type() == KILN_TYPE_UINT8) {
      ResizeBilinearUint8(shape, input.data<uint8_t>(), out.data<uint8_t>());
    } else if (input.type() == KILN_TYPE_INT8) {
      ResizeBilinearInt8(shape, input.data<int8_t>(), out.data<int8_t>());
    } else {
      ResizeBilinearInt16(shape, input.data<int16_t>(), out.data<int16_t>());
    }
    return KILN_STATUS_OK;
  }
  return FloatBilinear(k, p, input);
}

KilnStatus NearestInvoke(KernelContext& k) {
  ResizeParams p;
  KILN_SDK_RETURN_IF_ERROR(ResizeCommonInvoke<kNearest>(k, &p));
  const Tensor input = k.input(0);
  const int32_t batches = input.dim(0), in_h = input.dim(1),
                in_w = input.dim(2), c = input.dim(3);
  const float sy = ResizeScale(p.align_corners, in_h, p.out_h);
  const float sx = ResizeScale(p.align_corners, in_w, p.out_w);
  // Nearest neighbour copies values of any type: work on bytes.
  const int64_t pixel = static_cast<int64_t>(c) * ElementSize(input.type());
  const uint8_t* in = input.data<uint8_t>();
  uint8_t* o = k.output(0).data<uint8_t>();
  for (int32_t b = 0; b < batches; ++b) {
    const uint8_t* image = in + static_cast<int64_t>(b) * in_h * in_w * pixel;
    for (int32_t y = 0; y < p.out_h; ++y) {
      const int32_t iy =
          NearestSource(y, sy, p.align_corners, p.half_pixel_centers, in_h);
      for (int32_t x = 0; x < p.out_w; ++x) {
        const int32_t ix =
            NearestSource(x, sx, p.align_corners, p.half_pixel_centers, in_w);
        const uint8_t* src =
            image + (static_cast<int64_t>(iy) * in_w + ix) * pixel;
        std::copy(src, src + pixel,
                  o + ((static_cast<int64_t>(b) * p.out_h + y) * p.out_w + x) *
                          pixel);
      }
    }
  }
  return KILN_STATUS_OK;
}

}  // namespace

void RegisterResizeKernels(sdk::PluginDefinition& def) {
  // RESIZE_BILINEAR v1: float32 (and uint8) with align_corners; v2: int8;
  // v3: half_pixel_centers; v4: int16.
  def.AddKernel(sdk::MakeKernel<ResizePrepare<kBilinear>, BilinearInvoke>(
      KILN_OP_RESIZE_BILINEAR, 1, 4));
  // RESIZE_NEAREST_NEIGHBOR v1: float32 (and uint8); v2: int8; v3:
  // align_corners / half_pixel_centers; v4: int16.
  def.AddKernel(sdk::MakeKernel<ResizePrepare<kNearest>, NearestInvoke>(
      KILN_OP_RESIZE_NEAREST_NEIGHBOR, 1, 4));
}

}  // namespace kiln::cpu::nn
