// CPU plugin neural-net kernels: CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV,
// FULLY_CONNECTED, BATCH_MATMUL. Expected values come from the LiteRT
// interpreter's builtin kernels run once on single-op models built from the
// same inputs (Pattern below), pasted here.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/single_node_runner.h"
#include "tests/cpu_kernel_test_util.h"

namespace kiln {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

// Deterministic test data: ((i * a) % m - m / 2) / 4 for element i.
std::vector<float> Pattern(const std::vector<int32_t>& shape, int a = 7,
                           int m = 11) {
  int64_t n = 1;
  for (int32_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    v[static_cast<size_t>(i)] = static_cast<float>((i * a) % m - m / 2) * 0.25f;
  }
  return v;
}

constexpr float kTol = 1e-4f;

// Shape {1, 4, 5, 2}.
const std::vector<float> kConvSameRelu = {
    0.0f,    0.0f,    3.9375f, 0.0f,    5.4375f, 0.0f,    6.25f,   0.0f,
    1.5625f, 3.0f,    6.6875f, 2.625f,  0.125f,  8.75f,   0.0f,    8.8125f,
    0.0f,    6.8125f, 0.0f,    0.125f,  0.0f,    0.5625f, 2.6875f, 0.0f,
    6.5f,    0.0f,    8.9375f, 0.0f,    5.5625f, 0.5625f, 4.875f,  0.875f,
    3.3125f, 5.625f,  0.9375f, 5.9375f, 0.0f,    5.5625f, 0.0f,    2.5f};

// Shape {2, 2, 2, 3}.
const std::vector<float> kConvValidS2 = {
    -1.5625f, -2.0f,  -0.6875f, 1.8125f, 1.25f,   0.6875f,  0.875f,   1.1875f,
    -0.6875f, 0.125f, 0.3125f,  1.375f,  0.75f,   -0.5625f, -2.75f,   0.0f,
    2.0f,     1.375f, 1.8125f,  1.25f,   0.6875f, -3.0625f, -0.3125f, 0.6875f};

// Shape {1, 3, 7, 3}.
const std::vector<float> kConvSameDil = {
    0.0f,    4.625f,  2.25f,   1.8125f, 0.875f,  6.0f,    0.375f,  3.5f,
    0.4375f, 0.0f,    2.0f,    0.9375f, 0.25f,   3.25f,   4.1875f, 2.25f,
    1.75f,   1.25f,   0.0f,    4.375f,  0.5f,    0.0f,    3.125f,  0.625f,
    0.0f,    2.5625f, 6.0f,    4.1875f, 2.5625f, 0.9375f, 0.0f,    2.5625f,
    0.0f,    0.0f,    1.875f,  4.1875f, 4.125f,  1.1875f, 5.8125f, 0.625f,
    3.4375f, 0.75f,   0.0625f, 2.0625f, 2.0f,    0.0f,    3.5f,    2.375f,
    4.8125f, 0.875f,  3.8125f, 2.25f,   3.75f,   2.5f,    0.375f,  0.4375f,
    3.25f,   0.0f,    1.25f,   4.0f,    3.375f,  2.5f,    2.3125f};

// Shape {1, 3, 3, 5}.
const std::vector<float> kConv1x1 = {
    1.5f,     -0.58749998f,  0.1375f,      0.23750001f,   -0.28749999f,
    -0.5625f, 0.72500002f,   -0.175f,      -0.13749999f,  1.15f,
    0.125f,   -0.024999999f, -0.48750001f, 1.55f,         -0.16249999f,
    -0.5625f, 0.60000002f,   -0.1125f,     -0.19999999f,  1.275f,
    0.125f,   -0.15000001f,  -0.42500001f, 1.4875f,       -0.037499994f,
    0.125f,   -0.21250001f,  1.325f,       -0.26249999f,  0.025000006f,
    0.125f,   -0.27500001f,  -0.36250001f, 1.425f,        0.087500006f,
    0.125f,   -0.33750001f,  1.3875f,      -0.32499999f,  0.15000001f,
    -0.5625f, 0.97500002f,   -0.30000001f, -0.012499988f, 0.89999998f};

// Shape {1, 5, 5, 3}.
const std::vector<float> kDwSame = {
    -0.71249998f,  -0.42500001f,  0.67500001f,  1.5375f,       -0.73750001f,
    -0.074999988f, -0.83749998f,  1.6375f,      -0.074999988f, -0.46249998f,
    -0.11249995f,  -0.075000048f, -0.27499998f, 0.19999999f,   1.9875f,
    -0.89999998f,  -0.30000001f,  0.48750001f,  1.5999999f,    -0.55000001f,
    -0.26249999f,  0.78750002f,   1.6375f,      -0.26249999f,  -1.4f,
    -0.29999995f,  -0.26250005f,  -0.89999998f, 0.32499999f,   1.8f,
    0.22499999f,   -0.80000001f,  1.8f,         -0.39999998f,  -1.3f,
    -0.26250005f,  1.5375f,       0.88750005f,  -0.26249999f,  -0.64999998f,
    1.7f,          -0.26249999f,  -0.39999998f, -0.80000001f,  -0.26249999f,
    -0.025000006f, 0.074999988f,  1.05f,        0.35000002f,   0.012499988f,
    -0.26249999f,  1.5999999f,    -0.55000001f, -0.26249999f,  0.78750002f,
    1.6375f,       -0.26249999f,  -1.275f,      -0.55000001f,  -0.26250005f,
    0.16249999f,   -0.050000012f, 1.2375f,      0.28749999f,   -0.17500001f,
    -0.074999988f, -0.024999976f, -0.55000001f, -0.074999988f, 1.725f,
    1.825f,        -0.074999988f, -0.64999998f, -0.67500001f,  -0.074999988f};

// Shape {1, 2, 2, 6}.
const std::vector<float> kDwMult3ValidS2 = {
    0.125f, -0.125f,  -1.6875f, 1.5625f, -1.5625f, 0.125f,  1.4375f,  0.125f,
    0.125f, -1.8125f, 1.5625f,  0.125f,  -0.25f,   0.0f,    0.25f,    -0.125f,
    0.0f,   0.125f,   -1.6875f, 0.25f,   0.0f,     1.3125f, -1.6875f, 0.125f};

// Shape {1, 7, 7, 3}.
const std::vector<float> kDwDil2Relu = {
    0.0f,    0.0f,    0.0f,    0.6875f, 0.0f,    0.375f,  1.0625f, 0.0f,
    1.3125f, 0.0f,    1.0625f, 0.0f,    0.0f,    0.6875f, 1.3125f, 0.0f,
    0.0f,    1.3125f, 0.0f,    0.0f,    0.0f,    0.0f,    1.5f,    0.1875f,
    0.0f,    0.0f,    0.0f,    1.625f,  0.0f,    0.0f,    1.3125f, 0.0f,
    0.0f,    0.0f,    0.0f,    0.0f,    0.875f,  0.3125f, 1.3125f, 1.125f,
    0.4375f, 1.3125f, 0.0f,    0.875f,  0.0f,    0.75f,   0.5f,    0.75f,
    1.0625f, 0.0f,    0.9375f, 0.0f,    0.75f,   0.0f,    0.0f,    0.875f,
    0.9375f, 0.0f,    0.0f,    0.9375f, 1.0f,    0.0f,    0.0f,    0.0f,
    1.0f,    0.0f,    0.0f,    0.0f,    0.0f,    0.875f,  0.0f,    0.9375f,
    0.75f,   0.0f,    0.9375f, 0.0f,    1.0625f, 0.0f,    0.5f,    0.75f,
    0.9375f, 0.875f,  0.0f,    0.9375f, 0.375f,  1.125f,  0.0f,    0.0f,
    0.75f,   1.125f,  0.0f,    0.0f,    0.9375f, 1.25f,   1.125f,  0.0f,
    1.125f,  1.25f,   0.0f,    0.0f,    0.0f,    0.0f,    0.75f,   0.0f,
    0.9375f, 0.0f,    0.0f,    0.0f,    0.0f,    0.0f,    0.0f,    0.6875f,
    0.0f,    1.3125f, 1.0625f, 0.0f,    1.3125f, 0.0f,    1.0625f, 0.0f,
    0.0f,    0.6875f, 1.3125f, 0.0f,    0.0f,    1.3125f, 0.0625f, 1.75f,
    0.5625f, 0.0f,    1.5f,    0.1875f, 0.0f,    0.0f,    0.0f,    1.625f,
    0.0f,    0.0f,    1.3125f, 0.0f,    0.0f,    0.0f,    0.1875f, 0.0f,
    0.875f,  0.3125f, 1.3125f};

// Shape {1, 6, 6, 3}.
const std::vector<float> kTconvSameS2 = {
    1.5625f,  1.1875f,  0.8125f,  -1.6875f, 1.375f,   1.0f,     -0.875f,
    2.5625f,  2.5625f,  -0.9375f, 0.8125f,  1.1875f,  -1.4375f, 0.0625f,
    0.1875f,  0.5f,     -0.4375f, -0.6875f, -1.3125f, -1.6875f, 1.375f,
    -1.125f,  -1.5f,    1.5625f,  -2.25f,   -2.25f,   -0.875f,  -1.5f,
    -1.125f,  0.625f,   -0.9375f, -0.8125f, -1.375f,  0.875f,   0.625f,
    -0.3125f, -0.625f,  -1.875f,  -1.75f,   2.0625f,  -1.9375f, -1.8125f,
    4.8125f,  -1.0f,    -2.0f,    -0.0625f, -0.5f,    -0.25f,   -0.8125f,
    3.25f,    -0.9375f, -0.8125f, 0.9375f,  -0.0625f, 0.75f,    1.25f,
    -1.0f,    0.5f,     1.0f,     -1.25f,   -1.0625f, -0.6875f, 2.4375f,
    -1.25f,   -1.375f,  1.25f,    -0.4375f, -1.3125f, -1.5f,    1.125f,
    0.375f,   0.3125f,  -0.625f,  -0.125f,  0.375f,   0.5f,     -0.375f,
    0.125f,   -0.375f,  -2.6875f, -1.5625f, 2.5f,     -2.375f,  -1.75f,
    1.5625f,  1.5625f,  -0.5f,    -2.375f,  2.5f,     1.875f,   0.75f,
    0.75f,    -0.625f,  0.75f,    0.75f,    -0.625f,  1.5f,     2.25f,
    -0.4375f, 0.375f,   1.125f,   -1.5625f, -1.3125f, -0.4375f, 2.5f,
    -1.375f,  -1.25f,   0.9375f};

// Shape {1, 5, 6, 2}.
const std::vector<float> kTconvValidS2BiasRelu = {
    1.4375f, 0.0f,    0.0f,  0.0f,    0.875f,  0.0f,   0.0f,   0.0f,    0.3125f,
    0.0f,    0.875f,  0.0f,  0.0f,    0.0f,    0.0f,   0.0f,   0.0f,    0.0f,
    0.0f,    0.0f,    1.0f,  0.0f,    1.125f,  0.0f,   0.125f, 0.0f,    1.8125f,
    0.0f,    2.1875f, 0.0f,  0.3125f, 0.6875f, 0.125f, 0.0f,   0.1875f, 0.0f,
    1.0f,    0.0f,    0.75f, 0.0f,    0.0f,    0.0f,   0.0f,   0.0f,    1.0f,
    0.0f,    1.375f,  0.0f,  0.5f,    0.0f,    0.25f,  0.0f,   1.0625f, 0.0f,
    1.125f,  0.0f,    0.0f,  0.0f,    0.0f,    0.0f};

// Shape {2, 3, 5}.
const std::vector<float> kFcKeep = {
    -0.75f,   -2.4375f, 1.125f,   1.625f, -0.9375f, -0.4375f, 0.25f,   -0.8125f,
    -0.5625f, 1.875f,   -0.125f,  -0.5f,  0.0f,     1.375f,   0.5625f, -0.5f,
    0.125f,   -0.5625f, -0.8125f, 2.0f,   -0.1875f, -0.625f,  0.25f,   1.125f,
    0.6875f,  -2.625f,  -0.6875f, 0.375f, 1.0f,     0.75f};

// Shape {6, 5}.
const std::vector<float> kFcNobiasRelu = {
    0.25f,   0.0f, 1.125f, 1.125f, 0.0f, 0.5625f, 0.75f,  0.0f,   0.0f, 0.875f,
    0.875f,  0.0f, 0.0f,   0.875f, 0.0f, 0.5f,    0.625f, 0.0f,   0.0f, 1.0f,
    0.8125f, 0.0f, 0.25f,  0.625f, 0.0f, 0.0f,    0.0f,   0.375f, 0.5f, 0.0f};

// Shape {2, 3, 2, 4}.
const std::vector<float> kBmmBcast = {
    1.0f,    0.5625f, 0.6875f,  0.25f,   -1.375f,  1.25f, -1.1875f, 1.4375f,
    0.25f,   0.375f,  -1.1875f, 0.0625f, 1.4375f,  -1.0f, 1.0625f,  -0.8125f,
    0.0625f, -1.5f,   -0.25f,   1.0f,    -0.8125f, 1.25f, -0.625f,  -1.375f,
    -1.0f,   1.25f,   -1.0f,    1.25f,   -0.625f,  1.25f, -0.8125f, 1.0625f,
    1.25f,   -1.0f,   1.25f,    -1.0f,   1.0625f,  -1.0f, 1.4375f,  -1.1875f,
    -1.0f,   1.25f,   -1.0f,    -1.0f,   -1.1875f, 1.25f, -1.375f,  -0.625f};

// Shape {2, 2, 4}.
const std::vector<float> kBmmAdj = {
    0.9375f, -0.1875f, -0.1875f, 0.9375f, 0.375f,   -0.9375f, 1.125f, 0.375f,
    0.8125f, -1.25f,   -1.0625f, 0.8125f, -1.3125f, 0.75f,    1.125f, -1.3125f};

// ---- CONV_2D ---------------------------------------------------------------

struct ConvCase {
  std::vector<int32_t> in_shape, filter_shape;
  int in_a, in_m, w_a, w_m;
  std::vector<float> bias;  // empty: omitted
  int64_t padding, stride_h, stride_w, dilation_h, dilation_w, activation;
};

absl::Status RunConv(const KilnKernel& kernel, int32_t code, int32_t version,
                     const ConvCase& c, SingleNodeRunner& r, int* out,
                     bool constant_filter = true) {
  int x = r.AddTensor<float>(KILN_TYPE_FLOAT32, c.in_shape,
                             Pattern(c.in_shape, c.in_a, c.in_m));
  int w = r.AddTensor<float>(KILN_TYPE_FLOAT32, c.filter_shape,
                             Pattern(c.filter_shape, c.w_a, c.w_m),
                             constant_filter);
  std::vector<int32_t> inputs = {x, w};
  if (!c.bias.empty()) {
    inputs.push_back(r.AddTensor<float>(KILN_TYPE_FLOAT32,
                                        {static_cast<int32_t>(c.bias.size())},
                                        c.bias, true));
  }
  *out = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(code, version, inputs, {*out});
  r.node().SetInt(KILN_OPTION_PADDING, c.padding);
  r.node().SetInt(KILN_OPTION_STRIDE_H, c.stride_h);
  r.node().SetInt(KILN_OPTION_STRIDE_W, c.stride_w);
  r.node().SetInt(KILN_OPTION_DILATION_H, c.dilation_h);
  r.node().SetInt(KILN_OPTION_DILATION_W, c.dilation_w);
  r.node().SetInt(KILN_OPTION_FUSED_ACTIVATION, c.activation);
  return r.Run(kernel);
}

TEST_F(CpuKernelTest, Conv2dSameStride1BiasRelu) {
  SingleNodeRunner r;
  int out;
  ConvCase c{{1, 4, 5, 3},        {2, 3, 3, 3},      7, 11, 5, 13,
             {0.5f, -0.25f},      KILN_PADDING_SAME, 1, 1,  1, 1,
             KILN_ACTIVATION_RELU};
  ASSERT_TRUE(
      RunConv(Kernel(KILN_OP_CONV_2D), KILN_OP_CONV_2D, 1, c, r, &out).ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(1, 4, 5, 2));
  EXPECT_THAT(r.Values<float>(out), Pointwise(FloatNear(kTol), kConvSameRelu));
}

TEST_F(CpuKernelTest, Conv2dValidStride2OddChannelsNoBiasTwoBatches) {
  SingleNodeRunner r;
  int out;
  ConvCase c{{2, 5, 5, 5},
             {3, 2, 3, 5},
             7,
             11,
             3,
             7,
             {},
             KILN_PADDING_VALID,
             2,
             2,
             1,
             1,
             KILN_ACTIVATION_NONE};
  ASSERT_TRUE(
      RunConv(Kernel(KILN_OP_CONV_2D), KILN_OP_CONV_2D, 1, c, r, &out).ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(2, 2, 2, 3));
  EXPECT_THAT(r.Values<float>(out), Pointwise(FloatNear(kTol), kConvValidS2));
}

TEST_F(CpuKernelTest, Conv2dSameDilatedStridedRelu6) {
  SingleNodeRunner r;
  int out;
  ConvCase c{{1, 6, 7, 2},
             {3, 3, 2, 2},
             7,
             11,
             5,
             11,
             {1, 2, 3},
             KILN_PADDING_SAME,
             2,
             1,
             2,
             2,
             KILN_ACTIVATION_RELU6};
  ASSERT_TRUE(
      RunConv(Kernel(KILN_OP_CONV_2D), KILN_OP_CONV_2D, 1, c, r, &out).ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(1, 3, 7, 3));
  EXPECT_THAT(r.Values<float>(out), Pointwise(FloatNear(kTol), kConvSameDil));
}

TEST_F(CpuKernelTest, Conv2dPointwiseDirectPathWithRuntimeFilter) {
  for (bool constant : {true, false}) {
    SingleNodeRunner r;
    int out;
    ConvCase c{{1, 3, 3, 4},
               {5, 1, 1, 4},
               7,
               11,
               3,
               5,
               {0.f, 0.1f, 0.2f, 0.3f, 0.4f},
               KILN_PADDING_VALID,
               1,
               1,
               1,
               1,
               KILN_ACTIVATION_NONE};
    ASSERT_TRUE(RunConv(Kernel(KILN_OP_CONV_2D), KILN_OP_CONV_2D, 1, c, r, &out,
                        constant)
                    .ok());
    EXPECT_THAT(r.Values<float>(out), Pointwise(FloatNear(kTol), kConv1x1))
        << "constant filter: " << constant;
  }
}

// Naive NHWC/OHWI convolution, independent of the kernel's im2col + GEMM.
std::vector<float> NaiveConv(const std::vector<float>& x,
                             const std::vector<int32_t>& xs,
                             const std::vector<float>& w,
                             const std::vector<int32_t>& ws,
                             const std::vector<float>& bias, int pad_h,
                             int pad_w, int sh, int sw, int oh, int ow,
                             int dh = 1) {
  std::vector<float> y(static_cast<size_t>(xs[0]) * oh * ow * ws[0]);
  for (int b = 0; b < xs[0]; ++b)
    for (int oy = 0; oy < oh; ++oy)
      for (int ox = 0; ox < ow; ++ox)
        for (int oc = 0; oc < ws[0]; ++oc) {
          double acc = bias[static_cast<size_t>(oc)];
          for (int fy = 0; fy < ws[1]; ++fy)
            for (int fx = 0; fx < ws[2]; ++fx)
              for (int ic = 0; ic < ws[3]; ++ic) {
                const int iy = oy * sh - pad_h + fy * dh;
                const int ix = ox * sw - pad_w + fx;
                if (iy < 0 || iy >= xs[1] || ix < 0 || ix >= xs[2]) continue;
                acc += x[((static_cast<size_t>(b) * xs[1] + iy) * xs[2] + ix) *
                             xs[3] +
                         ic] *
                       w[((static_cast<size_t>(oc) * ws[1] + fy) * ws[2] + fx) *
                             ws[3] +
                         ic];
              }
          y[((static_cast<size_t>(b) * oh + oy) * ow + ox) * ws[0] + oc] =
              static_cast<float>(acc);
        }
  return y;
}

// Sizes that cross the GEMM's row blocks, depth blocks and 16-column panels
// (with ragged tails), against the naive reference.
TEST_F(CpuKernelTest, Conv2dLargeShapesMatchNaiveReference) {
  struct Geometry {
    std::vector<int32_t> xs, ws;
    int64_t padding;
    int stride;
    int dilation_h = 1;
    bool constant_filter = true;
  };
  const std::vector<Geometry> geometries = {
      {{1, 17, 13, 37}, {35, 3, 3, 37}, KILN_PADDING_SAME, 1},    // depth 333
      {{2, 9, 11, 300}, {17, 1, 1, 300}, KILN_PADDING_VALID, 1},  // direct
      {{1, 20, 20, 8}, {33, 3, 3, 8}, KILN_PADDING_SAME, 2},
      {{1, 90, 3, 3}, {1, 3, 3, 3}, KILN_PADDING_VALID, 1},
      // Output channels filling half a panel or less (2, 7, 24 = 16 + 8)
      // and 13 (a panel with 4 + 1 trailing columns), with pixel counts
      // leaving every tail of the row blocks (63 = 5 x 12 + 3, 55).
      {{1, 7, 9, 16}, {2, 1, 1, 16}, KILN_PADDING_VALID, 1},     // direct
      {{1, 5, 11, 9}, {24, 1, 1, 9}, KILN_PADDING_VALID, 1},     // direct
      {{1, 13, 3, 5}, {13, 3, 3, 5}, KILN_PADDING_SAME, 1},      // im2col
      {{1, 12, 14, 8}, {7, 3, 3, 8}, KILN_PADDING_SAME, 1},      // row taps
      {{2, 11, 17, 12}, {21, 3, 3, 12}, KILN_PADDING_VALID, 2},  // row taps
      // A first layer: 3 input channels, stride 2 (im2col rows of 27).
      {{1, 23, 25, 3}, {16, 3, 3, 3}, KILN_PADDING_SAME, 2},
      {{1, 16, 16, 3}, {32, 3, 3, 3}, KILN_PADDING_SAME, 2},
      // Row taps with segments under 16 depths: the inner pixels' rows
      // copied into the scratch (stride 1, two batches; 5x5 with dilated
      // filter rows partly outside the image; a runtime filter).
      {{2, 14, 19, 3}, {8, 3, 3, 3}, KILN_PADDING_SAME, 1},
      {{1, 11, 13, 2}, {6, 5, 5, 2}, KILN_PADDING_SAME, 1, 2},
      {{1, 9, 12, 1}, {5, 3, 3, 1}, KILN_PADDING_VALID, 2, 1, false},
      // Row taps with two filter rows outside the image (5x5 SAME), with
      // dilated filter rows, and with a filter packed at each invoke.
      {{1, 9, 14, 6}, {11, 5, 5, 6}, KILN_PADDING_SAME, 1},
      {{1, 10, 12, 4}, {9, 3, 3, 4}, KILN_PADDING_SAME, 1, 3},
      {{1, 8, 11, 10}, {17, 3, 3, 10}, KILN_PADDING_SAME, 1, 1, false},
      // Filter rows of 300 depths: GEMM depth blocks split the segments.
      {{1, 6, 9, 100}, {5, 3, 3, 100}, KILN_PADDING_SAME, 1},
  };
  for (const Geometry& g : geometries) {
    SingleNodeRunner r;
    const std::vector<float> x = Pattern(g.xs, 7, 23);
    const std::vector<float> w = Pattern(g.ws, 5, 19);
    std::vector<float> bias(static_cast<size_t>(g.ws[0]));
    for (size_t i = 0; i < bias.size(); ++i) bias[i] = 0.01f * i;
    int xi = r.AddTensor<float>(KILN_TYPE_FLOAT32, g.xs, x);
    int wi = r.AddTensor<float>(KILN_TYPE_FLOAT32, g.ws, w, g.constant_filter);
    int bi = r.AddTensor<float>(KILN_TYPE_FLOAT32, {g.ws[0]}, bias, true);
    int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
    r.SetOp(KILN_OP_CONV_2D, 1, {xi, wi, bi}, {out});
    r.node().SetInt(KILN_OPTION_PADDING, g.padding);
    r.node().SetInt(KILN_OPTION_STRIDE_H, g.stride);
    r.node().SetInt(KILN_OPTION_STRIDE_W, g.stride);
    r.node().SetInt(KILN_OPTION_DILATION_H, g.dilation_h);
    ASSERT_TRUE(r.Run(Kernel(KILN_OP_CONV_2D)).ok());
    const std::vector<int32_t> os = r.tensor(out).shape;
    ASSERT_EQ(os.size(), 4u);
    const int span_h = (g.ws[1] - 1) * g.dilation_h + 1;
    const int pad_h =
        std::max(0, ((os[1] - 1) * g.stride + span_h - g.xs[1]) / 2);
    const int pad_w =
        std::max(0, ((os[2] - 1) * g.stride + g.ws[2] - g.xs[2]) / 2);
    EXPECT_THAT(
        r.Values<float>(out),
        Pointwise(FloatNear(2e-3f),
                  NaiveConv(x, g.xs, w, g.ws, bias, pad_h, pad_w, g.stride,
                            g.stride, os[1], os[2], g.dilation_h)))
        << "input " << ::testing::PrintToString(g.xs) << " filter "
        << ::testing::PrintToString(g.ws);
  }
}

// TFLite refuses an integer CONV_2D without a bias; so does Kiln.
TEST_F(CpuKernelTest, Conv2dInt8WithoutBiasIsRefused) {
  SingleNodeRunner r;
  int x = r.AddTensor<int8_t>(KILN_TYPE_INT8, {1, 2, 2, 1}, {1, 2, 3, 4});
  int w = r.AddTensor<int8_t>(KILN_TYPE_INT8, {1, 1, 1, 1}, {1}, true);
  int out = r.AddTensor(KILN_TYPE_INT8, {});
  r.SetOp(KILN_OP_CONV_2D, 3, {x, w}, {out});
  absl::Status s = r.Run(Kernel(KILN_OP_CONV_2D, 3));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("CONV_2D"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("needs a bias"));
}

TEST_F(CpuKernelTest, Conv2dRefusesGroupedAndBadShapes) {
  {
    SingleNodeRunner r;
    int x = r.AddTensor<float>(KILN_TYPE_FLOAT32, {1, 2, 2, 4}, Pattern({16}));
    int w =
        r.AddTensor<float>(KILN_TYPE_FLOAT32, {2, 1, 1, 2}, Pattern({4}), true);
    int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
    r.SetOp(KILN_OP_CONV_2D, 1, {x, w}, {out});
    absl::Status s = r.Run(Kernel(KILN_OP_CONV_2D));
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(std::string(s.message()), HasSubstr("grouped convolution"));
  }
  {
    SingleNodeRunner r;
    int x = r.AddTensor<float>(KILN_TYPE_FLOAT32, {1, 2, 2, 1}, Pattern({4}));
    int w =
        r.AddTensor<float>(KILN_TYPE_FLOAT32, {1, 3, 3, 1}, Pattern({9}), true);
    int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
    r.SetOp(KILN_OP_CONV_2D, 1, {x, w}, {out});
    r.node().SetInt(KILN_OPTION_PADDING, KILN_PADDING_VALID);
    absl::Status s = r.Run(Kernel(KILN_OP_CONV_2D));
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(std::string(s.message()), HasSubstr("VALID padding"));
  }
  {
    SingleNodeRunner r;
    int x = r.AddTensor<float>(KILN_TYPE_FLOAT32, {1, 2, 2, 1}, Pattern({4}));
    int w = r.AddTensor<float>(KILN_TYPE_FLOAT32, {1, 1, 1, 1}, {1.f}, true);
    int b = r.AddTensor<float>(KILN_TYPE_FLOAT32, {2}, {1.f, 2.f}, true);
    int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
    r.SetOp(KILN_OP_CONV_2D, 1, {x, w, b}, {out});
    absl::Status s = r.Run(Kernel(KILN_OP_CONV_2D));
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(std::string(s.message()), HasSubstr("one value per output"));
  }
}

// ---- DEPTHWISE_CONV_2D -----------------------------------------------------

TEST_F(CpuKernelTest, DepthwiseSameWithBias) {
  SingleNodeRunner r;
  int out;
  ConvCase c{{1, 5, 5, 3},        {1, 3, 3, 3},      7, 11, 5, 9,
             {0.1f, 0.2f, 0.3f},  KILN_PADDING_SAME, 1, 1,  1, 1,
             KILN_ACTIVATION_NONE};
  ASSERT_TRUE(RunConv(Kernel(KILN_OP_DEPTHWISE_CONV_2D),
                      KILN_OP_DEPTHWISE_CONV_2D, 1, c, r, &out)
                  .ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(1, 5, 5, 3));
  EXPECT_THAT(r.Values<float>(out), Pointwise(FloatNear(kTol), kDwSame));
}

// Naive NHWC depthwise convolution (depth multiplier 1, filter
// [1, fh, fw, c]) with a clamp, independent of the kernels.
std::vector<float> NaiveDepthwise(const std::vector<float>& x,
                                  const std::vector<int32_t>& xs,
                                  const std::vector<float>& w, int fh, int fw,
                                  const std::vector<float>& bias, int pad_h,
                                  int pad_w, int stride, int dilation, int oh,
                                  int ow, float lo, float hi) {
  const int c = xs[3];
  std::vector<float> y(static_cast<size_t>(xs[0]) * oh * ow * c);
  for (int b = 0; b < xs[0]; ++b)
    for (int oy = 0; oy < oh; ++oy)
      for (int ox = 0; ox < ow; ++ox)
        for (int ch = 0; ch < c; ++ch) {
          double acc = bias[static_cast<size_t>(ch)];
          for (int fy = 0; fy < fh; ++fy)
            for (int fx = 0; fx < fw; ++fx) {
              const int iy = oy * stride - pad_h + fy * dilation;
              const int ix = ox * stride - pad_w + fx * dilation;
              if (iy < 0 || iy >= xs[1] || ix < 0 || ix >= xs[2]) continue;
              acc +=
                  x[((static_cast<size_t>(b) * xs[1] + iy) * xs[2] + ix) * c +
                    ch] *
                  w[(static_cast<size_t>(fy) * fw + fx) * c + ch];
            }
          y[((static_cast<size_t>(b) * oh + oy) * ow + ox) * c + ch] =
              std::min(hi, std::max(lo, static_cast<float>(acc)));
        }
  return y;
}

// 3x3 depthwise with ReLU6 on rows wide enough for the row kernels'
// four-pixel interior loops (and their one-pixel remainders), channel
// counts on both sides of the row / wide row kernel choice and ragged ones
// (the wide kernel's 16-, 8- and masked channel blocks), strides 1 and 2,
// dilation 2, VALID padding and rows too narrow for a four-pixel group,
// against the naive reference.
TEST_F(CpuKernelTest, DepthwiseWideRowsMatchNaiveReference) {
  struct Geometry {
    std::vector<int32_t> xs;
    int64_t padding;
    int stride, dilation;
  };
  const std::vector<Geometry> geometries = {
      {{1, 6, 19, 8}, KILN_PADDING_SAME, 1, 1},
      {{2, 5, 23, 32}, KILN_PADDING_SAME, 1, 1},
      {{1, 7, 21, 24}, KILN_PADDING_SAME, 2, 1},
      {{1, 4, 18, 13}, KILN_PADDING_VALID, 1, 1},
      {{1, 9, 17, 16}, KILN_PADDING_SAME, 1, 2},
      {{1, 5, 13, 144}, KILN_PADDING_SAME, 1, 1},
      {{1, 4, 11, 12}, KILN_PADDING_SAME, 1, 1},
      {{2, 6, 14, 16}, KILN_PADDING_SAME, 1, 1},
      {{1, 5, 19, 44}, KILN_PADDING_SAME, 1, 1},
      {{1, 7, 22, 40}, KILN_PADDING_SAME, 2, 1},
      {{1, 8, 23, 96}, KILN_PADDING_SAME, 2, 1},
      {{1, 6, 17, 36}, KILN_PADDING_VALID, 1, 1},
      {{1, 7, 20, 27}, KILN_PADDING_VALID, 2, 1},
      {{1, 9, 18, 48}, KILN_PADDING_SAME, 1, 2},
      {{1, 3, 5, 52}, KILN_PADDING_SAME, 1, 1},
      {{1, 2, 2, 20}, KILN_PADDING_SAME, 1, 1},
      {{1, 4, 6, 21}, KILN_PADDING_VALID, 2, 1},
  };
  for (const Geometry& g : geometries) {
    SingleNodeRunner r;
    const int32_t c = g.xs[3];
    const std::vector<float> x = Pattern(g.xs, 7, 23);
    const std::vector<float> w = Pattern({1, 3, 3, c}, 5, 19);
    std::vector<float> bias(static_cast<size_t>(c));
    for (size_t i = 0; i < bias.size(); ++i) bias[i] = 0.1f * (i % 7) - 0.2f;
    int xi = r.AddTensor<float>(KILN_TYPE_FLOAT32, g.xs, x);
    int wi = r.AddTensor<float>(KILN_TYPE_FLOAT32, {1, 3, 3, c}, w, true);
    int bi = r.AddTensor<float>(KILN_TYPE_FLOAT32, {c}, bias, true);
    int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
    r.SetOp(KILN_OP_DEPTHWISE_CONV_2D, 2, {xi, wi, bi}, {out});
    r.node().SetInt(KILN_OPTION_PADDING, g.padding);
    r.node().SetInt(KILN_OPTION_STRIDE_H, g.stride);
    r.node().SetInt(KILN_OPTION_STRIDE_W, g.stride);
    r.node().SetInt(KILN_OPTION_DILATION_H, g.dilation);
    r.node().SetInt(KILN_OPTION_DILATION_W, g.dilation);
    r.node().SetInt(KILN_OPTION_DEPTH_MULTIPLIER, 1);
    r.node().SetInt(KILN_OPTION_FUSED_ACTIVATION, KILN_ACTIVATION_RELU6);
    ASSERT_TRUE(r.Run(Kernel(KILN_OP_DEPTHWISE_CONV_2D)).ok());
    const std::vector<int32_t> os = r.tensor(out).shape;
    ASSERT_EQ(os.size(), 4u);
    const int span = 2 * g.dilation + 1;
    const int pad_h =
        std::max(0, ((os[1] - 1) * g.stride + span - g.xs[1]) / 2);
    const int pad_w =
        std::max(0, ((os[2] - 1) * g.stride + span - g.xs[2]) / 2);
    EXPECT_THAT(
        r.Values<float>(out),
        Pointwise(FloatNear(1e-4f),
                  NaiveDepthwise(x, g.xs, w, 3, 3, bias, pad_h, pad_w, g.stride,
                                 g.dilation, os[1], os[2], 0.f, 6.f)))
        << "input " << ::testing::PrintToString(g.xs);
  }
}

TEST_F(CpuKernelTest, DepthwiseMultiplier3ValidStride2NoBias) {
  SingleNodeRunner r;
  int out;
  ConvCase c{{1, 5, 6, 2},
             {1, 3, 3, 6},
             7,
             11,
             3,
             7,
             {},
             KILN_PADDING_VALID,
             2,
             2,
             1,
             1,
             KILN_ACTIVATION_NONE};
  r.node().SetInt(KILN_OPTION_DEPTH_MULTIPLIER, 3);
  ASSERT_TRUE(RunConv(Kernel(KILN_OP_DEPTHWISE_CONV_2D),
                      KILN_OP_DEPTHWISE_CONV_2D, 1, c, r, &out)
                  .ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(1, 2, 2, 6));
  EXPECT_THAT(r.Values<float>(out),
              Pointwise(FloatNear(kTol), kDwMult3ValidS2));
}

TEST_F(CpuKernelTest, DepthwiseDilation2ReluIsVersion2) {
  SingleNodeRunner r;
  int out;
  ConvCase c{{1, 7, 7, 3},
             {1, 3, 3, 3},
             7,
             11,
             5,
             9,
             {},
             KILN_PADDING_SAME,
             1,
             1,
             2,
             2,
             KILN_ACTIVATION_RELU};
  ASSERT_TRUE(RunConv(Kernel(KILN_OP_DEPTHWISE_CONV_2D, 2),
                      KILN_OP_DEPTHWISE_CONV_2D, 2, c, r, &out)
                  .ok());
  EXPECT_THAT(r.Values<float>(out), Pointwise(FloatNear(kTol), kDwDil2Relu));
}

TEST_F(CpuKernelTest, DepthwiseRefusesInconsistentMultiplier) {
  SingleNodeRunner r;
  int out;
  ConvCase c{{1, 3, 3, 2},
             {1, 1, 1, 4},
             7,
             11,
             3,
             7,
             {},
             KILN_PADDING_VALID,
             1,
             1,
             1,
             1,
             KILN_ACTIVATION_NONE};
  r.node().SetInt(KILN_OPTION_DEPTH_MULTIPLIER, 3);
  absl::Status s = RunConv(Kernel(KILN_OP_DEPTHWISE_CONV_2D),
                           KILN_OP_DEPTHWISE_CONV_2D, 1, c, r, &out);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("depth_multiplier 3"));
}

// ---- TRANSPOSE_CONV --------------------------------------------------------

TEST_F(CpuKernelTest, TransposeConvSameStride2) {
  SingleNodeRunner r;
  int shape = r.AddTensor<int32_t>(KILN_TYPE_INT32, {4}, {1, 6, 6, 3}, true);
  int w = r.AddTensor<float>(KILN_TYPE_FLOAT32, {3, 3, 3, 2},
                             Pattern({3, 3, 3, 2}, 5, 11), true);
  int x = r.AddTensor<float>(KILN_TYPE_FLOAT32, {1, 3, 3, 2},
                             Pattern({1, 3, 3, 2}));
  int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_TRANSPOSE_CONV, 1, {shape, w, x}, {out});
  r.node().SetInt(KILN_OPTION_PADDING, KILN_PADDING_SAME);
  r.node().SetInt(KILN_OPTION_STRIDE_H, 2);
  r.node().SetInt(KILN_OPTION_STRIDE_W, 2);
  ASSERT_TRUE(r.Run(Kernel(KILN_OP_TRANSPOSE_CONV)).ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(1, 6, 6, 3));
  EXPECT_THAT(r.Values<float>(out), Pointwise(FloatNear(kTol), kTconvSameS2));
}

TEST_F(CpuKernelTest, TransposeConvValidBiasReluIsVersion4) {
  SingleNodeRunner r;
  int shape = r.AddTensor<int32_t>(KILN_TYPE_INT32, {4}, {1, 5, 6, 2}, true);
  int w = r.AddTensor<float>(KILN_TYPE_FLOAT32, {2, 3, 2, 2},
                             Pattern({2, 3, 2, 2}, 3, 7), true);
  int x = r.AddTensor<float>(KILN_TYPE_FLOAT32, {1, 2, 3, 2},
                             Pattern({1, 2, 3, 2}));
  int b = r.AddTensor<float>(KILN_TYPE_FLOAT32, {2}, {0.5f, -1.f}, true);
  int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_TRANSPOSE_CONV, 4, {shape, w, x, b}, {out});
  r.node().SetInt(KILN_OPTION_PADDING, KILN_PADDING_VALID);
  r.node().SetInt(KILN_OPTION_STRIDE_H, 2);
  r.node().SetInt(KILN_OPTION_STRIDE_W, 2);
  r.node().SetInt(KILN_OPTION_FUSED_ACTIVATION, KILN_ACTIVATION_RELU);
  ASSERT_TRUE(r.Run(Kernel(KILN_OP_TRANSPOSE_CONV, 4)).ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(1, 5, 6, 2));
  EXPECT_THAT(r.Values<float>(out),
              Pointwise(FloatNear(kTol), kTconvValidS2BiasRelu));
}

TEST_F(CpuKernelTest, TransposeConvOutputShapeWithoutValuesLeavesOutput) {
  SingleNodeRunner r;
  int shape = r.AddTensor(KILN_TYPE_INT32, {4});  // computed at run time
  int w = r.AddTensor<float>(KILN_TYPE_FLOAT32, {1, 1, 1, 1}, {1.f}, true);
  int x = r.AddTensor<float>(KILN_TYPE_FLOAT32, {1, 1, 1, 1}, {1.f});
  int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_TRANSPOSE_CONV, 1, {shape, w, x}, {out});
  // Prepare succeeds without sizing; this runner does not prepare again, so
  // invoke reports that the shape was never computed.
  absl::Status s = r.Run(Kernel(KILN_OP_TRANSPOSE_CONV));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("invoke failed"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("prepare the node again"));
  EXPECT_TRUE(r.tensor(out).shape.empty());
}

// ---- FULLY_CONNECTED -------------------------------------------------------

TEST_F(CpuKernelTest, FullyConnectedKeepNumDimsWithBias) {
  SingleNodeRunner r;
  int x = r.AddTensor<float>(KILN_TYPE_FLOAT32, {2, 3, 4}, Pattern({2, 3, 4}));
  int w = r.AddTensor<float>(KILN_TYPE_FLOAT32, {5, 4}, Pattern({5, 4}, 3, 7),
                             true);
  int b = r.AddTensor<float>(KILN_TYPE_FLOAT32, {5},
                             {-1.f, -0.5f, 0.f, 0.5f, 1.f}, true);
  int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_FULLY_CONNECTED, 5, {x, w, b}, {out});
  r.node().SetInt(KILN_OPTION_KEEP_NUM_DIMS, 1);
  ASSERT_TRUE(r.Run(Kernel(KILN_OP_FULLY_CONNECTED, 5)).ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(2, 3, 5));
  EXPECT_THAT(r.Values<float>(out), Pointwise(FloatNear(kTol), kFcKeep));
}

TEST_F(CpuKernelTest, FullyConnectedOmittedBiasReluFlattens) {
  for (bool constant : {true, false}) {
    SingleNodeRunner r;
    int x =
        r.AddTensor<float>(KILN_TYPE_FLOAT32, {2, 3, 4}, Pattern({2, 3, 4}));
    int w = r.AddTensor<float>(KILN_TYPE_FLOAT32, {5, 4}, Pattern({5, 4}, 3, 7),
                               constant);
    int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
    r.SetOp(KILN_OP_FULLY_CONNECTED, 6, {x, w, -1}, {out});
    r.node().SetInt(KILN_OPTION_FUSED_ACTIVATION, KILN_ACTIVATION_RELU);
    ASSERT_TRUE(r.Run(Kernel(KILN_OP_FULLY_CONNECTED, 6)).ok());
    EXPECT_THAT(r.tensor(out).shape, ElementsAre(6, 5));
    EXPECT_THAT(r.Values<float>(out),
                Pointwise(FloatNear(kTol), kFcNobiasRelu));
  }
}

TEST_F(CpuKernelTest, FullyConnectedWideGemvMatchesNaive) {
  SingleNodeRunner r;
  const int32_t depth = 1000, units = 37;
  const std::vector<float> x = Pattern({1, depth}, 7, 29);
  const std::vector<float> w = Pattern({units, depth}, 5, 31);
  int xi = r.AddTensor<float>(KILN_TYPE_FLOAT32, {1, depth}, x);
  int wi = r.AddTensor<float>(KILN_TYPE_FLOAT32, {units, depth}, w, true);
  int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_FULLY_CONNECTED, 1, {xi, wi}, {out});
  ASSERT_TRUE(r.Run(Kernel(KILN_OP_FULLY_CONNECTED)).ok());
  std::vector<float> expected(units);
  for (int u = 0; u < units; ++u) {
    double acc = 0;
    for (int i = 0; i < depth; ++i) acc += x[i] * w[u * depth + i];
    expected[u] = static_cast<float>(acc);
  }
  EXPECT_THAT(r.Values<float>(out), Pointwise(FloatNear(2e-3f), expected));
}

// Blockwise INT4 weights [2, 4] in blocks of 2, codes (low nibble first)
// unit 0: 1, -2, 3, 7 and unit 1: -8, 0, 5, -1, block scales
// {0.5, 0.25} and {2, 1}, bias {0.1, -0.2}; `edit` may change the node.
struct BlockwiseFc {
  SingleNodeRunner r;
  int x = -1, w = -1, out = -1;
  explicit BlockwiseFc(const std::vector<float>& input) {
    x = r.AddTensor<float>(KILN_TYPE_FLOAT32,
                           {static_cast<int32_t>(input.size() / 4), 4}, input);
    w = r.AddTensor<uint8_t>(KILN_TYPE_INT4, {2, 4}, {0xE1, 0x73, 0x08, 0xF5},
                             true);
    const int b =
        r.AddTensor<float>(KILN_TYPE_FLOAT32, {2}, {0.1f, -0.2f}, true);
    out = r.AddTensor(KILN_TYPE_FLOAT32, {});
    Quantization& q = r.tensor(w).quantization;
    q.block_size = 2;
    q.block_scales = {0.5f, 0.25f, 2.f, 1.f};
    q.block_zero_points = {0, 0, 0, 0};
    r.SetOp(KILN_OP_FULLY_CONNECTED, 1, {x, w, b}, {out});
  }
};

TEST_F(CpuKernelTest, FullyConnectedBlockwiseInt4Weights) {
  // A row of equal values c > 0 quantizes to 127 with zero point -128, so
  // each output is c * sum over blocks of scale * (sum of codes) + bias:
  // unit 0: 0.5 * (1 - 2) + 0.25 * (3 + 7) = 2, unit 1: 2 * (-8 + 0) +
  // 1 * (5 - 1) = -12. A zero row gives the bias.
  BlockwiseFc fc({1, 1, 1, 1, 2, 2, 2, 2, 0, 0, 0, 0});
  const absl::Status s = fc.r.Run(Kernel(KILN_OP_FULLY_CONNECTED, 1));
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_THAT(fc.r.tensor(fc.out).shape, ElementsAre(3, 2));
  EXPECT_THAT(
      fc.r.Values<float>(fc.out),
      Pointwise(FloatNear(1e-5f), {2.1f, -12.2f, 4.1f, -24.2f, 0.1f, -0.2f}));
}

TEST_F(CpuKernelTest, FullyConnectedBlockwiseRefusals) {
  {
    BlockwiseFc fc({1, 1, 1, 1});
    fc.r.node().SetInt(KILN_OPTION_FUSED_ACTIVATION, KILN_ACTIVATION_RELU);
    EXPECT_THAT(fc.r.Run(Kernel(KILN_OP_FULLY_CONNECTED, 1)).message(),
                HasSubstr("fused activation RELU with blockwise INT4 weights "
                          "is refused"));
  }
  {
    BlockwiseFc fc({1, 1, 1, 1});
    fc.r.tensor(fc.w).quantization.block_zero_points[2] = 3;
    EXPECT_THAT(fc.r.Run(Kernel(KILN_OP_FULLY_CONNECTED, 1)).message(),
                HasSubstr("have zero point 3 in block 2"));
  }
  {
    BlockwiseFc fc({1, 1, 1, 1});
    fc.r.tensor(fc.w).quantization = Quantization();
    fc.r.tensor(fc.w).quantization.scales = {0.5f};
    fc.r.tensor(fc.w).quantization.zero_points = {0};
    EXPECT_THAT(fc.r.Run(Kernel(KILN_OP_FULLY_CONNECTED, 1)).message(),
                HasSubstr("are quantized per tensor or per channel"));
  }
  {
    // Other ops never read block scales as channel scales.
    SingleNodeRunner r;
    int x = r.AddTensor<int8_t>(KILN_TYPE_INT8, {2, 2}, {1, 2, 3, 4});
    int out = r.AddTensor(KILN_TYPE_INT8, {});
    r.tensor(x).quantization.block_size = 2;
    r.tensor(x).quantization.block_scales = {0.5f, 0.25f};
    r.tensor(x).quantization.block_zero_points = {0, 0};
    r.tensor(out).quantization.scales = {0.5f};
    r.tensor(out).quantization.zero_points = {0};
    r.SetOp(KILN_OP_RELU, 1, {x}, {out});
    EXPECT_THAT(r.Run(Kernel(KILN_OP_RELU, 1)).message(),
                HasSubstr("is quantized blockwise (blocks of 2 along "
                          "dimension 1), which this kernel does not "
                          "implement"));
  }
}

TEST_F(CpuKernelTest, FullyConnectedRefusesShuffledWeights) {
  // Version 2 (shuffled uint8 weights) is not implemented, so not declared;
  // the option is still refused on a node of a declared version.
  EXPECT_FALSE(Covers(KILN_OP_FULLY_CONNECTED, 2));
  {
    SingleNodeRunner r;
    int x = r.AddTensor<float>(KILN_TYPE_FLOAT32, {1, 2}, {1.f, 2.f});
    int w = r.AddTensor<float>(KILN_TYPE_FLOAT32, {1, 2}, {1.f, 2.f}, true);
    int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
    r.SetOp(KILN_OP_FULLY_CONNECTED, 1, {x, w}, {out});
    r.node().SetInt(KILN_OPTION_WEIGHTS_FORMAT, 1);
    absl::Status s = r.Run(Kernel(KILN_OP_FULLY_CONNECTED, 1));
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(std::string(s.message()), HasSubstr("weights_format 1"));
  }
  {
    SingleNodeRunner r;
    int x = r.AddTensor<float>(KILN_TYPE_FLOAT32, {1, 3}, {1.f, 2.f, 3.f});
    int w = r.AddTensor<float>(KILN_TYPE_FLOAT32, {1, 2}, {1.f, 2.f}, true);
    int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
    r.SetOp(KILN_OP_FULLY_CONNECTED, 1, {x, w}, {out});
    absl::Status s = r.Run(Kernel(KILN_OP_FULLY_CONNECTED));
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(std::string(s.message()), HasSubstr("cannot be viewed"));
  }
}

// ---- BATCH_MATMUL ----------------------------------------------------------

TEST_F(CpuKernelTest, BatchMatMulBroadcastsBatchDims) {
  SingleNodeRunner r;
  int a = r.AddTensor<float>(KILN_TYPE_FLOAT32, {2, 1, 2, 3},
                             Pattern({2, 1, 2, 3}));
  int b = r.AddTensor<float>(KILN_TYPE_FLOAT32, {3, 3, 4},
                             Pattern({3, 3, 4}, 5, 9));
  int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_BATCH_MATMUL, 1, {a, b}, {out});
  ASSERT_TRUE(r.Run(Kernel(KILN_OP_BATCH_MATMUL)).ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(2, 3, 2, 4));
  EXPECT_THAT(r.Values<float>(out), Pointwise(FloatNear(kTol), kBmmBcast));
}

TEST_F(CpuKernelTest, BatchMatMulAdjXAdjY) {
  for (bool constant_rhs : {false, true}) {
    SingleNodeRunner r;
    int a =
        r.AddTensor<float>(KILN_TYPE_FLOAT32, {2, 3, 2}, Pattern({2, 3, 2}));
    int b = r.AddTensor<float>(KILN_TYPE_FLOAT32, {2, 4, 3},
                               Pattern({2, 4, 3}, 5, 9), constant_rhs);
    int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
    r.SetOp(KILN_OP_BATCH_MATMUL, 1, {a, b}, {out});
    r.node().SetInt(KILN_OPTION_ADJ_X, 1);
    r.node().SetInt(KILN_OPTION_ADJ_Y, 1);
    ASSERT_TRUE(r.Run(Kernel(KILN_OP_BATCH_MATMUL)).ok());
    EXPECT_THAT(r.tensor(out).shape, ElementsAre(2, 2, 4));
    EXPECT_THAT(r.Values<float>(out), Pointwise(FloatNear(kTol), kBmmAdj));
  }
}

TEST_F(CpuKernelTest, BatchMatMulRefusesMismatchedDepth) {
  SingleNodeRunner r;
  int a = r.AddTensor<float>(KILN_TYPE_FLOAT32, {2, 3}, Pattern({2, 3}));
  int b = r.AddTensor<float>(KILN_TYPE_FLOAT32, {4, 2}, Pattern({4, 2}));
  int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_BATCH_MATMUL, 1, {a, b}, {out});
  absl::Status s = r.Run(Kernel(KILN_OP_BATCH_MATMUL));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("contracted dimensions differ"));
}

// ---- Versions --------------------------------------------------------------

TEST_F(CpuKernelTest, ConvAndMatMulVersionRanges) {
  EXPECT_TRUE(Covers(KILN_OP_CONV_2D, 1));
  EXPECT_TRUE(Covers(KILN_OP_CONV_2D, 2));   // hybrid
  EXPECT_TRUE(Covers(KILN_OP_CONV_2D, 3));   // int8
  EXPECT_TRUE(Covers(KILN_OP_CONV_2D, 4));   // int16x8
  EXPECT_TRUE(Covers(KILN_OP_CONV_2D, 5));   // per-channel hybrid
  EXPECT_FALSE(Covers(KILN_OP_CONV_2D, 6));  // grouped
  EXPECT_TRUE(Covers(KILN_OP_DEPTHWISE_CONV_2D, 2));
  EXPECT_TRUE(Covers(KILN_OP_DEPTHWISE_CONV_2D, 3));   // per-channel int8
  EXPECT_TRUE(Covers(KILN_OP_DEPTHWISE_CONV_2D, 4));   // hybrid
  EXPECT_TRUE(Covers(KILN_OP_DEPTHWISE_CONV_2D, 6));   // per-channel hybrid
  EXPECT_FALSE(Covers(KILN_OP_DEPTHWISE_CONV_2D, 7));  // int4
  EXPECT_TRUE(Covers(KILN_OP_TRANSPOSE_CONV, 4));
  EXPECT_FALSE(Covers(KILN_OP_TRANSPOSE_CONV, 5));
  EXPECT_FALSE(Covers(KILN_OP_FULLY_CONNECTED, 2));  // shuffled
  EXPECT_TRUE(Covers(KILN_OP_FULLY_CONNECTED, 3));   // hybrid
  EXPECT_TRUE(Covers(KILN_OP_FULLY_CONNECTED, 6));
  EXPECT_TRUE(Covers(KILN_OP_FULLY_CONNECTED, 7));    // int16x8
  EXPECT_TRUE(Covers(KILN_OP_FULLY_CONNECTED, 8));    // sparse, densified
  EXPECT_TRUE(Covers(KILN_OP_FULLY_CONNECTED, 9));    // asymmetric hybrid
  EXPECT_FALSE(Covers(KILN_OP_FULLY_CONNECTED, 10));  // int4
  EXPECT_FALSE(Covers(KILN_OP_FULLY_CONNECTED, 11));  // int32 bias
  EXPECT_TRUE(Covers(KILN_OP_FULLY_CONNECTED, 12));   // per-channel hybrid
  EXPECT_TRUE(Covers(KILN_OP_BATCH_MATMUL, 1));
  EXPECT_TRUE(Covers(KILN_OP_BATCH_MATMUL, 2));  // int8
  EXPECT_TRUE(Covers(KILN_OP_BATCH_MATMUL, 3));  // int16
  EXPECT_TRUE(Covers(KILN_OP_BATCH_MATMUL, 4));  // asymmetric hybrid
  EXPECT_FALSE(Covers(KILN_OP_BATCH_MATMUL, 5));
}

}  // namespace
}  // namespace kiln
