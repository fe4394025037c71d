// Row kernels of the float32 pooling, resize and reduction ops: an AVX2+FMA
// implementation selected at run time, and a portable one. Each call
// computes whole output rows, so a kernel split across the thread pool over
// rows gives the same values for any thread count.
#ifndef KILN_PLUGINS_CPU_KERNELS_NN_FLOAT_ROWS_H_
#define KILN_PLUGINS_CPU_KERNELS_NN_FLOAT_ROWS_H_

#include <cstdint>

namespace kiln::cpu::nn {

// One output row of a 2D pool over an NHWC image.
struct PoolRowArgs {
  const float* image = nullptr;  // in_h x in_w x channels
  float* out = nullptr;          // out_w x channels
  int32_t in_w = 0, channels = 0, out_w = 0;
  int32_t ys = 0, ye = 0;  // input rows of the window, clipped
  int32_t stride_w = 1, pad_w = 0, filter_w = 1;
  bool clamp = false;        // apply the fused activation's clamp
  float lo = 0.f, hi = 0.f;  // (lo, hi)
};

// One output row of RESIZE_BILINEAR: out[x][ch] = w_tl tl + w_bl bl + w_tr tr
// + w_br br, the corners at columns x_lo[x] / x_hi[x] (in floats) of rows
// `top` and `bottom`, w_tl = (1 - wy)(1 - wx[x]) and so on.
struct BilinearRowArgs {
  const float* top = nullptr;
  const float* bottom = nullptr;
  const int32_t* x_lo = nullptr;
  const int32_t* x_hi = nullptr;
  const float* wx = nullptr;
  float wy = 0.f;
  int32_t out_w = 0, channels = 0;
  float* out = nullptr;
};

struct FloatRowKernels {
  void (*max_pool_row)(const PoolRowArgs& a) = nullptr;
  // The mean of the window's in-image values (TFLite's count).
  void (*avg_pool_row)(const PoolRowArgs& a) = nullptr;
  void (*bilinear_row)(const BilinearRowArgs& a) = nullptr;
  // out[r] = ((0 + x[r][0]) + x[r][1]) + ... for `rows` rows of n values
  // (x[r][i] = x[r * n + i]): each row added in order, as a scalar loop.
  void (*sum_rows)(const float* x, int64_t rows, int64_t n,
                   float* out) = nullptr;
};

// The fastest kernels this CPU runs (chosen once).
const FloatRowKernels& GetFloatRowKernels();

// The portable kernels (the reference the AVX2 ones are tested against).
FloatRowKernels FloatRowKernelsPortable();

// The AVX2+FMA kernels, or all null when the CPU or the build lacks them.
FloatRowKernels FloatRowKernelsAvx2Fma();

}  // namespace kiln::cpu::nn

#endif  // KILN_PLUGINS_CPU_KERNELS_NN_FLOAT_ROWS_H_
