#include "kernel_sources.h"

namespace kiln::opencl {
namespace {

constexpr const char* kPrelude = R"CL(
#ifdef KILN_FP16_STORAGE
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
typedef half store_t;
#define LD(p, i) vload_half((i), (p))
#define ST(p, i, v) vstore_half((v), (i), (p))
#else
typedef float store_t;
#define LD(p, i) ((p)[(i)])
#define ST(p, i, v) ((p)[(i)] = (v))
#endif

inline float activate(float x, int act) {
  switch (act) {
    case 1: return fmax(x, 0.0f);
    case 2: return clamp(x, -1.0f, 1.0f);
    case 3: return clamp(x, 0.0f, 6.0f);
    case 4: return tanh(x);
    case 100: return 1.0f / (1.0f + exp(-x));
    default: return x;
  }
}

/* Splits a flat NHWC-style index into 4 coordinates of `dims`. */
inline int4 unflatten(int i, int4 dims) {
  int4 c;
  c.w = i % dims.w; i /= dims.w;
  c.z = i % dims.z; i /= dims.z;
  c.y = i % dims.y;
  c.x = i / dims.y;
  return c;
}
)CL";

constexpr const char* kElementwise = R"CL(
/* out = a (op) b with broadcasting: strides are 0 along broadcast axes.
 * op: 0 add, 1 sub, 2 mul. */
__kernel void binary_op(__global const store_t* a, __global const store_t* b,
                        __global store_t* out, int4 dims, int4 stride_a,
                        int4 stride_b, int op, int act) {
  const int i = get_global_id(0);
  const int4 c = unflatten(i, dims);
  const float x = LD(a, c.x * stride_a.x + c.y * stride_a.y +
                        c.z * stride_a.z + c.w * stride_a.w);
  const float y = LD(b, c.x * stride_b.x + c.y * stride_b.y +
                        c.z * stride_b.z + c.w * stride_b.w);
  const float v = op == 0 ? x + y : (op == 1 ? x - y : x * y);
  ST(out, i, activate(v, act));
}

__kernel void unary_activation(__global const store_t* in,
                               __global store_t* out, int act) {
  const int i = get_global_id(0);
  ST(out, i, activate(LD(in, i), act));
}

/* Copies one concatenation input into its slot of the output.
 * global: (src_inner, outer). */
__kernel void concat_part(__global const store_t* src, __global store_t* dst,
                          int src_inner, int dst_inner, int offset, int act) {
  const int j = get_global_id(0);
  const int outer = get_global_id(1);
  ST(dst, outer * dst_inner + offset + j,
     activate(LD(src, outer * src_inner + j), act));
}

__kernel void pad_constant(__global const store_t* in, __global store_t* out,
                           int4 in_dims, int4 out_dims, int4 before) {
  const int i = get_global_id(0);
  const int4 c = unflatten(i, out_dims) - before;
  float v = 0.0f;
  if (all(c >= (int4)(0)) && all(c < in_dims)) {
    v = LD(in, ((c.x * in_dims.y + c.y) * in_dims.z + c.z) * in_dims.w + c.w);
  }
  ST(out, i, v);
}

/* Mean over the axes flagged in `reduce`; out_dims has 1 on those axes. */
__kernel void mean_reduce(__global const store_t* in, __global store_t* out,
                          int4 in_dims, int4 out_dims, int4 reduce,
                          float inv_count) {
  const int i = get_global_id(0);
  const int4 o = unflatten(i, out_dims);
  const int4 n = select((int4)(1), in_dims, reduce != (int4)(0));
  float sum = 0.0f;
  for (int a = 0; a < n.x; ++a)
    for (int b = 0; b < n.y; ++b)
      for (int c = 0; c < n.z; ++c)
        for (int d = 0; d < n.w; ++d) {
          const int4 p = o + (int4)(a, b, c, d);
          sum += LD(in, ((p.x * in_dims.y + p.y) * in_dims.z + p.z) *
                                in_dims.w + p.w);
        }
  ST(out, i, sum * inv_count);
}
)CL";

constexpr const char* kConvolution = R"CL(
/* NHWC input, OHWI filter. global: (out_c, out_w, batch * out_h).
 * geom: (kernel_h, kernel_w, stride_h, stride_w);
 * dil_pad: (dilation_h, dilation_w, pad_top, pad_left). */
__kernel void conv2d(__global const store_t* in, __global const store_t* filter,
                     __global const store_t* bias, __global store_t* out,
                     int4 in_shape, int4 out_shape, int4 geom, int4 dil_pad,
                     int has_bias, int act) {
  const int oc = get_global_id(0);
  const int ox = get_global_id(1);
  const int oy = get_global_id(2) % out_shape.y;
  const int n = get_global_id(2) / out_shape.y;
  const int channels = in_shape.w;
  float sum = has_bias ? LD(bias, oc) : 0.0f;
  for (int ky = 0; ky < geom.x; ++ky) {
    const int iy = oy * geom.z - dil_pad.z + ky * dil_pad.x;
    if (iy < 0 || iy >= in_shape.y) continue;
    for (int kx = 0; kx < geom.y; ++kx) {
      const int ix = ox * geom.w - dil_pad.w + kx * dil_pad.y;
      if (ix < 0 || ix >= in_shape.z) continue;
      const int in_base = ((n * in_shape.y + iy) * in_shape.z + ix) * channels;
      const int f_base = ((oc * geom.x + ky) * geom.y + kx) * channels;
      for (int c = 0; c < channels; ++c) {
        sum += LD(in, in_base + c) * LD(filter, f_base + c);
      }
    }
  }
  ST(out, ((n * out_shape.y + oy) * out_shape.z + ox) * out_shape.w + oc,
     activate(sum, act));
}

/* Filter [1, kh, kw, out_c]; out channel oc reads input channel
 * oc / multiplier. */
__kernel void depthwise_conv2d(__global const store_t* in,
                               __global const store_t* filter,
                               __global const store_t* bias,
                               __global store_t* out, int4 in_shape,
                               int4 out_shape, int4 geom, int4 dil_pad,
                               int multiplier, int has_bias, int act) {
  const int oc = get_global_id(0);
  const int ox = get_global_id(1);
  const int oy = get_global_id(2) % out_shape.y;
  const int n = get_global_id(2) / out_shape.y;
  const int ic = oc / multiplier;
  float sum = has_bias ? LD(bias, oc) : 0.0f;
  for (int ky = 0; ky < geom.x; ++ky) {
    const int iy = oy * geom.z - dil_pad.z + ky * dil_pad.x;
    if (iy < 0 || iy >= in_shape.y) continue;
    for (int kx = 0; kx < geom.y; ++kx) {
      const int ix = ox * geom.w - dil_pad.w + kx * dil_pad.y;
      if (ix < 0 || ix >= in_shape.z) continue;
      sum += LD(in, ((n * in_shape.y + iy) * in_shape.z + ix) * in_shape.w +
                        ic) *
             LD(filter, (ky * geom.y + kx) * out_shape.w + oc);
    }
  }
  ST(out, ((n * out_shape.y + oy) * out_shape.z + ox) * out_shape.w + oc,
     activate(sum, act));
}

/* out[row, o] = sum_k in[row, k] * weights[o, k] + bias[o].
 * global: (units, rows). */
__kernel void fully_connected(__global const store_t* in,
                              __global const store_t* weights,
                              __global const store_t* bias,
                              __global store_t* out, int depth, int units,
                              int has_bias, int act) {
  const int o = get_global_id(0);
  const int row = get_global_id(1);
  float sum = has_bias ? LD(bias, o) : 0.0f;
  for (int k = 0; k < depth; ++k) {
    sum += LD(in, row * depth + k) * LD(weights, o * depth + k);
  }
  ST(out, row * units + o, activate(sum, act));
}
)CL";

constexpr const char* kPoolSoftmax = R"CL(
/* global: (channels, out_w, batch * out_h). geom: (filter_h, filter_w,
 * stride_h, stride_w); pad: (pad_top, pad_left, -, -). The average counts
 * only elements inside the input, as TFLite does. */
__kernel void pool2d(__global const store_t* in, __global store_t* out,
                     int4 in_shape, int4 out_shape, int4 geom, int4 pad,
                     int is_max, int act) {
  const int c = get_global_id(0);
  const int ox = get_global_id(1);
  const int oy = get_global_id(2) % out_shape.y;
  const int n = get_global_id(2) / out_shape.y;
  float acc = is_max ? -FLT_MAX : 0.0f;
  int count = 0;
  for (int ky = 0; ky < geom.x; ++ky) {
    const int iy = oy * geom.z - pad.x + ky;
    if (iy < 0 || iy >= in_shape.y) continue;
    for (int kx = 0; kx < geom.y; ++kx) {
      const int ix = ox * geom.w - pad.y + kx;
      if (ix < 0 || ix >= in_shape.z) continue;
      const float v =
          LD(in, ((n * in_shape.y + iy) * in_shape.z + ix) * in_shape.w + c);
      acc = is_max ? fmax(acc, v) : acc + v;
      ++count;
    }
  }
  if (!is_max) acc = count > 0 ? acc / (float)count : 0.0f;
  ST(out, ((n * out_shape.y + oy) * out_shape.z + ox) * out_shape.w + c,
     activate(acc, act));
}

/* Softmax over the last axis; one work item per row. */
__kernel void softmax_rows(__global const store_t* in, __global store_t* out,
                           int depth, float beta) {
  const int base = get_global_id(0) * depth;
  float max_value = -FLT_MAX;
  for (int i = 0; i < depth; ++i) max_value = fmax(max_value, LD(in, base + i));
  float sum = 0.0f;
  for (int i = 0; i < depth; ++i) sum += exp((LD(in, base + i) - max_value) * beta);
  const float inv = 1.0f / sum;
  for (int i = 0; i < depth; ++i) {
    ST(out, base + i, exp((LD(in, base + i) - max_value) * beta) * inv);
  }
}
)CL";

}  // namespace

const char* ProgramGroupName(ProgramGroup group) {
  switch (group) {
    case ProgramGroup::kElementwise:
      return "elementwise";
    case ProgramGroup::kConvolution:
      return "convolution";
    case ProgramGroup::kPoolSoftmax:
      return "pool_softmax";
  }
  return "unknown";
}

std::string ProgramSource(ProgramGroup group) {
  std::string source = kPrelude;
  switch (group) {
    case ProgramGroup::kElementwise:
      source += kElementwise;
      break;
    case ProgramGroup::kConvolution:
      source += kConvolution;
      break;
    case ProgramGroup::kPoolSoftmax:
      source += kPoolSoftmax;
      break;
  }
  return source;
}

}  // namespace kiln::opencl
