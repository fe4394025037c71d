// Int8 FULLY_CONNECTED (v4, per-tensor weights, int32 bias) and
// DEPTHWISE_CONV_2D (v3, per-channel weights) of the CPU plugin. Expected
// integers come from the LiteRT interpreter's builtin kernels run once on
// single-op models with the same tensors and quantization (built with
// ai_edge_litert's schema bindings), pasted here; Kiln must match exactly.
// The SOFTMAX and BATCH_MATMUL cases are hand-computed.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/elementwise_test_util.h"

namespace kiln {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

using QuantizedNnTest = ElementwiseTest;

Quantization Quant(std::vector<float> scales, std::vector<int64_t> zero_points,
                   int32_t axis = 0) {
  Quantization q;
  q.scales = std::move(scales);
  q.zero_points = std::move(zero_points);
  q.quantized_dimension = axis;
  return q;
}

template <typename T>
TestTensor QTensor(KilnTensorType type, std::vector<int32_t> shape,
                   std::vector<T> values, Quantization q) {
  TestTensor t = TestTensor::Of(type, std::move(shape), values);
  t.quantization = std::move(q);
  return t;
}

// ---- FULLY_CONNECTED -------------------------------------------------------

std::vector<TestTensor> FcInputs(bool with_bias) {
  std::vector<TestTensor> inputs = {
      QTensor<int8_t>(KILN_TYPE_INT8, {2, 5},
                      {-128, -20, 0, 33, 127, 5, -7, 90, -100, 12},
                      Quant({0.1f}, {-3})),
      QTensor<int8_t>(
          KILN_TYPE_INT8, {3, 5},
          {1, -2, 3, -4, 5, 127, -127, 64, -64, 0, -30, 40, -50, 60, -70},
          Quant({0.02f}, {0}))};
  if (with_bias) {
    inputs.push_back(QTensor<int32_t>(KILN_TYPE_INT32, {3}, {100, -2000, 37},
                                      Quant({0.002f}, {0})));
  }
  return inputs;
}

TEST_F(QuantizedNnTest, FullyConnectedInt8MatchesLiteRt) {
  auto r = RunOn<int8_t>(Kernel(KILN_OP_FULLY_CONNECTED, 4),
                         KILN_OP_FULLY_CONNECTED, 4, FcInputs(true),
                         OutputSpec{KILN_TYPE_INT8, Quant({0.05f}, {5})});
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(r.shape, ElementsAre(2, 3));
  EXPECT_THAT(r.values, ElementsAre(26, -128, -128, 39, 127, -128));
}

TEST_F(QuantizedNnTest, FullyConnectedInt8ReluClampsAtZeroPoint) {
  auto r = RunOn<int8_t>(Kernel(KILN_OP_FULLY_CONNECTED, 4),
                         KILN_OP_FULLY_CONNECTED, 4, FcInputs(true),
                         OutputSpec{KILN_TYPE_INT8, Quant({0.05f}, {5})},
                         Activation(KILN_ACTIVATION_RELU));
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(r.values, ElementsAre(26, 5, 5, 39, 127, 5));
}

TEST_F(QuantizedNnTest, FullyConnectedInt8WithoutBias) {
  auto r = RunOn<int8_t>(Kernel(KILN_OP_FULLY_CONNECTED, 4),
                         KILN_OP_FULLY_CONNECTED, 4, FcInputs(false),
                         OutputSpec{KILN_TYPE_INT8, Quant({0.05f}, {5})});
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(r.values, ElementsAre(22, -128, -128, 35, 127, -128));
}

TEST_F(QuantizedNnTest, FullyConnectedInt8RefusesFloatBiasAndNoQuantization) {
  std::vector<TestTensor> inputs = FcInputs(false);
  inputs.push_back(
      TestTensor::Of<float>(KILN_TYPE_FLOAT32, {3}, {1.f, 2.f, 3.f}));
  auto bad_bias =
      RunOn<int8_t>(Kernel(KILN_OP_FULLY_CONNECTED, 4), KILN_OP_FULLY_CONNECTED,
                    4, inputs, OutputSpec{KILN_TYPE_INT8, Quant({0.05f}, {5})});
  ASSERT_FALSE(bad_bias.status.ok());
  EXPECT_THAT(Message(bad_bias), HasSubstr("has type FLOAT32"));
  auto unquantized =
      RunOn<int8_t>(Kernel(KILN_OP_FULLY_CONNECTED, 4), KILN_OP_FULLY_CONNECTED,
                    4, FcInputs(true), OutputSpec{KILN_TYPE_INT8, {}});
  ASSERT_FALSE(unquantized.status.ok());
  EXPECT_THAT(Message(unquantized), HasSubstr("no quantization parameters"));
}

// ---- DEPTHWISE_CONV_2D -----------------------------------------------------

// Input [1, 3, 4, 2]: ((i * 37) % 256) - 128. Filter [1, 2, 2, 4]:
// ((i * 29) % 200) - 100, depth multiplier 2, per-channel scales on axis 3.
std::vector<TestTensor> DepthwiseInputs() {
  std::vector<int8_t> input(24), filter(16);
  for (int i = 0; i < 24; ++i)
    input[i] = static_cast<int8_t>((i * 37) % 256 - 128);
  for (int i = 0; i < 16; ++i)
    filter[i] = static_cast<int8_t>((i * 29) % 200 - 100);
  return {
      QTensor<int8_t>(KILN_TYPE_INT8, {1, 3, 4, 2}, input, Quant({0.1f}, {2})),
      QTensor<int8_t>(KILN_TYPE_INT8, {1, 2, 2, 4}, filter,
                      Quant({0.01f, 0.02f, 0.03f, 0.015f}, {0, 0, 0, 0}, 3)),
      QTensor<int32_t>(KILN_TYPE_INT32, {4}, {50, -300, 1000, 7},
                       Quant({0.001f, 0.002f, 0.003f, 0.0015f}, {0, 0, 0, 0}))};
}

std::function<void(Node&)> DepthwiseOptions(int64_t padding, int64_t stride,
                                            int64_t activation) {
  return [=](Node& n) {
    n.SetInt(KILN_OPTION_PADDING, padding);
    n.SetInt(KILN_OPTION_STRIDE_W, stride);
    n.SetInt(KILN_OPTION_STRIDE_H, stride);
    n.SetInt(KILN_OPTION_DEPTH_MULTIPLIER, 2);
    n.SetInt(KILN_OPTION_FUSED_ACTIVATION, activation);
  };
}

TEST_F(QuantizedNnTest, DepthwisePerChannelSameMatchesLiteRt) {
  auto r = RunOn<int8_t>(
      Kernel(KILN_OP_DEPTHWISE_CONV_2D, 3), KILN_OP_DEPTHWISE_CONV_2D, 3,
      DepthwiseInputs(), OutputSpec{KILN_TYPE_INT8, Quant({0.07f}, {-4})},
      DepthwiseOptions(KILN_PADDING_SAME, 1, KILN_ACTIVATION_NONE));
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(r.shape, ElementsAre(1, 3, 4, 4));
  EXPECT_THAT(r.values,
              ElementsAreArray<int8_t>(
                  {127,  127,  84,  11,  127,  127,  -128, -128, -128, -128,
                   -128, 127,  -14, -61, 127,  -4,   127,  127,  -39,  -123,
                   77,   127,  127, -14, -128, -128, -128, 127,  127,  127,
                   127,  1,    74,  120, 127,  -127, -15,  65,   -128, 127,
                   -128, -128, 108, 127, 117,  127,  123,  9}));
}

TEST_F(QuantizedNnTest, DepthwisePerChannelValidStride2Relu6) {
  auto r = RunOn<int8_t>(
      Kernel(KILN_OP_DEPTHWISE_CONV_2D, 3), KILN_OP_DEPTHWISE_CONV_2D, 3,
      DepthwiseInputs(), OutputSpec{KILN_TYPE_INT8, Quant({0.07f}, {-4})},
      DepthwiseOptions(KILN_PADDING_VALID, 2, KILN_ACTIVATION_RELU6));
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(r.shape, ElementsAre(1, 1, 2, 4));
  EXPECT_THAT(r.values, ElementsAre(82, 82, 82, 11, -4, -4, -4, 82));
}

TEST_F(QuantizedNnTest, DepthwiseRefusesWrongChannelCount) {
  std::vector<TestTensor> inputs = DepthwiseInputs();
  inputs[1].quantization = Quant({0.01f, 0.02f}, {0, 0}, 3);
  auto wrong = RunOn<int8_t>(
      Kernel(KILN_OP_DEPTHWISE_CONV_2D, 3), KILN_OP_DEPTHWISE_CONV_2D, 3,
      inputs, OutputSpec{KILN_TYPE_INT8, Quant({0.07f}, {-4})},
      DepthwiseOptions(KILN_PADDING_SAME, 1, KILN_ACTIVATION_NONE));
  ASSERT_FALSE(wrong.status.ok());
  EXPECT_THAT(Message(wrong), HasSubstr("has 2 quantization channels"));
}

// LiteRT's per-channel depthwise kernel ignores an int8 filter zero point
// (checked against LiteRT with nn_quantized_litert_test.py): the output
// equals the zero-point-0 output.
TEST_F(QuantizedNnTest, DepthwiseIgnoresInt8FilterZeroPointLikeLiteRt) {
  auto run = [&](int64_t zero_point) {
    std::vector<TestTensor> inputs = DepthwiseInputs();
    inputs[1].quantization =
        Quant({0.01f, 0.02f, 0.03f, 0.015f}, {zero_point, 0, 0, 0}, 3);
    return RunOn<int8_t>(
        Kernel(KILN_OP_DEPTHWISE_CONV_2D, 3), KILN_OP_DEPTHWISE_CONV_2D, 3,
        inputs, OutputSpec{KILN_TYPE_INT8, Quant({0.07f}, {-4})},
        DepthwiseOptions(KILN_PADDING_VALID, 2, KILN_ACTIVATION_RELU6));
  };
  auto with_zp = run(3);
  ASSERT_TRUE(with_zp.status.ok()) << with_zp.status;
  EXPECT_THAT(with_zp.values, ElementsAre(82, 82, 82, 11, -4, -4, -4, 82));
}

// ---- hybrid FULLY_CONNECTED ----------------------------------------------

// Float input, int8 weights (scale 0.5): the row {1, -0.5, 0.25, 0} is
// quantized symmetrically with scale 1/127 to {127, -64, 32, 0} (halves
// round away from zero), so the int32 sums are 95 and -95.
TEST_F(QuantizedNnTest, HybridFullyConnectedQuantizesRows) {
  std::vector<TestTensor> inputs = {
      TestTensor::Of(KILN_TYPE_FLOAT32, {1, 4},
                     std::vector<float>{1.f, -0.5f, 0.25f, 0.f}),
      QTensor<int8_t>(KILN_TYPE_INT8, {2, 4}, {1, 2, 3, 4, -1, 0, 1, 0},
                      Quant({0.5f}, {0})),
      TestTensor::Of(KILN_TYPE_FLOAT32, {2}, std::vector<float>{0.25f, 1.f})};
  auto r =
      RunOn<float>(Kernel(KILN_OP_FULLY_CONNECTED, 3), KILN_OP_FULLY_CONNECTED,
                   3, inputs, OutputSpec{KILN_TYPE_FLOAT32, {}});
  ASSERT_TRUE(r.status.ok()) << r.status;
  const float scale = (1.f / 127.f) * 0.5f;
  EXPECT_THAT(r.values, ElementsAre(0.25f + 95.f * scale, 1.f - 95.f * scale));
}

// asymmetric_quantize_inputs: the row {0, 1, 2, 3} spans [0, 3], scale
// 3/255, zero point -128, so q = {-128, -43, 42, 127}; the zero point is
// removed through the weights' row sums.
TEST_F(QuantizedNnTest, HybridFullyConnectedAsymmetricInputs) {
  std::vector<TestTensor> inputs = {
      TestTensor::Of(KILN_TYPE_FLOAT32, {1, 4},
                     std::vector<float>{0.f, 1.f, 2.f, 3.f}),
      QTensor<int8_t>(KILN_TYPE_INT8, {1, 4}, {1, 1, 1, 1},
                      Quant({0.5f}, {0}))};
  auto r = RunOn<float>(
      Kernel(KILN_OP_FULLY_CONNECTED, 9), KILN_OP_FULLY_CONNECTED, 9, inputs,
      OutputSpec{KILN_TYPE_FLOAT32, {}},
      [](Node& n) { n.SetInt(KILN_OPTION_ASYMMETRIC_QUANTIZE_INPUTS, 1); });
  ASSERT_TRUE(r.status.ok()) << r.status;
  // (-128 - 43 + 42 + 127) - (-128) * 4 = 510 -> 510 * 3/255 * 0.5 = 3.
  const float scale = static_cast<float>(3.0 / 255.0);
  EXPECT_THAT(r.values, ElementsAre(510.f * (scale * 0.5f)));
}

// ---- requantization of 8-channel groups and the tail
// -------------------------

// Eleven output channels (eight vector lanes and a tail of three) of one
// input value 12, input and output scale 1, output zero point 3. Filter
// scales set each channel's multiplier m; with weight w and bias b the
// expected output is clamp(MultiplyByQuantizedMultiplier(12 w + b, m) + 3)
// worked out by hand in TFLite's fixed point (ties of its doubling high
// multiply round up, its rounding shift rounds ties away from zero):
//   c0 m 1/8  12 -> 1.5 -> 2      c1 m 1/8  -12 -> -1.5 -> -2
//   c2 m 1    60 + 4 -> 64        c3 m 4    120 -> 480 -> clamp 127
//   c4 m 4   -120 -> clamp -128   c5 m 1/4  24 -> 6
//   c6 m 1/2  12 -> 6             c7 m 3/4  12 -> 9
//   c8..c10 as c0..c2.
const std::vector<float> kLaneScales = {
    0.125f, 0.125f, 1.f, 4.f, 4.f, 0.25f, 0.5f, 0.75f, 0.125f, 0.125f, 1.f};
const std::vector<int8_t> kLaneWeights = {1, -1, 5, 10, -10, 2, 1, 1, 1, -1, 5};
const std::vector<int32_t> kLaneBias = {0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 4};
const std::vector<int8_t> kLaneExpected = {5, 1,  67, 127, -128, 9,
                                           9, 12, 5,  1,   67};

TEST_F(QuantizedNnTest, ConvRequantizesEightChannelGroupsAndTail) {
  std::vector<TestTensor> inputs = {
      QTensor<int8_t>(KILN_TYPE_INT8, {1, 1, 1, 1}, {12}, Quant({1.f}, {0})),
      QTensor<int8_t>(KILN_TYPE_INT8, {11, 1, 1, 1}, kLaneWeights,
                      Quant(kLaneScales, std::vector<int64_t>(11, 0))),
      QTensor<int32_t>(KILN_TYPE_INT32, {11}, kLaneBias,
                       Quant(kLaneScales, std::vector<int64_t>(11, 0)))};
  auto r =
      RunOn<int8_t>(Kernel(KILN_OP_CONV_2D, 3), KILN_OP_CONV_2D, 3, inputs,
                    OutputSpec{KILN_TYPE_INT8, Quant({1.f}, {3})}, [](Node& n) {
                      n.SetInt(KILN_OPTION_PADDING, KILN_PADDING_VALID);
                      n.SetInt(KILN_OPTION_STRIDE_W, 1);
                      n.SetInt(KILN_OPTION_STRIDE_H, 1);
                    });
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(r.values, ElementsAreArray(kLaneExpected));
}

TEST_F(QuantizedNnTest, DepthwiseRequantizesEightChannelGroupsAndTail) {
  std::vector<TestTensor> inputs = {
      QTensor<int8_t>(KILN_TYPE_INT8, {1, 1, 1, 11},
                      std::vector<int8_t>(11, 12), Quant({1.f}, {0})),
      QTensor<int8_t>(KILN_TYPE_INT8, {1, 1, 1, 11}, kLaneWeights,
                      Quant(kLaneScales, std::vector<int64_t>(11, 0), 3)),
      QTensor<int32_t>(KILN_TYPE_INT32, {11}, kLaneBias,
                       Quant(kLaneScales, std::vector<int64_t>(11, 0)))};
  auto r = RunOn<int8_t>(
      Kernel(KILN_OP_DEPTHWISE_CONV_2D, 3), KILN_OP_DEPTHWISE_CONV_2D, 3,
      inputs, OutputSpec{KILN_TYPE_INT8, Quant({1.f}, {3})}, [](Node& n) {
        n.SetInt(KILN_OPTION_PADDING, KILN_PADDING_VALID);
        n.SetInt(KILN_OPTION_STRIDE_W, 1);
        n.SetInt(KILN_OPTION_STRIDE_H, 1);
        n.SetInt(KILN_OPTION_DEPTH_MULTIPLIER, 1);
      });
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(r.values, ElementsAreArray(kLaneExpected));
}

// ---- hybrid CONV_2D -------------------------------------------------------

// 1x1 convolution of a 1x1x2x2 image {1, -1, 0.5, 0.25}: the image is
// quantized symmetrically as a whole (scale 1/127) to {127, -127, 64, 32};
// filter {2, 1} with scale 0.25 gives sums 127 and 160.
TEST_F(QuantizedNnTest, HybridConvQuantizesTheWholeImage) {
  std::vector<TestTensor> inputs = {
      TestTensor::Of(KILN_TYPE_FLOAT32, {1, 1, 2, 2},
                     std::vector<float>{1.f, -1.f, 0.5f, 0.25f}),
      QTensor<int8_t>(KILN_TYPE_INT8, {1, 1, 1, 2}, {2, 1},
                      Quant({0.25f}, {0})),
      TestTensor::Of(KILN_TYPE_FLOAT32, {1}, std::vector<float>{0.5f})};
  auto r = RunOn<float>(Kernel(KILN_OP_CONV_2D, 2), KILN_OP_CONV_2D, 2, inputs,
                        OutputSpec{KILN_TYPE_FLOAT32, {}}, [](Node& n) {
                          n.SetInt(KILN_OPTION_PADDING, KILN_PADDING_VALID);
                          n.SetInt(KILN_OPTION_STRIDE_W, 1);
                          n.SetInt(KILN_OPTION_STRIDE_H, 1);
                        });
  ASSERT_TRUE(r.status.ok()) << r.status;
  const float scale = (1.f / 127.f) * 0.25f;
  EXPECT_THAT(r.values,
              ElementsAre(127.f * scale + 0.5f, 160.f * scale + 0.5f));
}

// ---- SOFTMAX ---------------------------------------------------------------

// beta * input_scale below 2^-26: TFLite's reference kernel aborts; Kiln, as
// TFLite's optimized kernel, uses a float exp table. With so small a scale
// every exp is ~1, so each of three probabilities is 1/3: round(256 / 3) =
// 85 above the zero point -128.
TEST_F(QuantizedNnTest, SoftmaxInt8WithTinyInputScaleRuns) {
  std::vector<TestTensor> inputs = {QTensor<int8_t>(
      KILN_TYPE_INT8, {2, 3}, {5, 5, 5, 127, -128, 0}, Quant({1e-9f}, {0}))};
  auto r =
      RunOn<int8_t>(Kernel(KILN_OP_SOFTMAX, 2), KILN_OP_SOFTMAX, 2, inputs,
                    OutputSpec{KILN_TYPE_INT8, Quant({1.f / 256}, {-128})});
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(r.values, ElementsAre(-43, -43, -43, -43, -43, -43));
}

// ---- BATCH_MATMUL ----------------------------------------------------------

// Scales chosen so that the requantization multiplier is exactly 1: the
// expected outputs are the hand-computed integer products plus the output
// zero point.
TEST_F(QuantizedNnTest, BatchMatMulInt8SubtractsZeroPoints) {
  std::vector<TestTensor> inputs = {
      QTensor<int8_t>(KILN_TYPE_INT8, {2, 3}, {1, 2, 3, 4, 5, 6},
                      Quant({0.5f}, {1})),
      QTensor<int8_t>(KILN_TYPE_INT8, {3, 2}, {1, -1, 2, 0, -3, 4},
                      Quant({0.25f}, {-1}))};
  // (lhs - 1) . (rhs + 1) = [[-1, 11], [8, 29]], plus zero point 10.
  auto r =
      RunOn<int8_t>(Kernel(KILN_OP_BATCH_MATMUL, 2), KILN_OP_BATCH_MATMUL, 2,
                    inputs, OutputSpec{KILN_TYPE_INT8, Quant({0.125f}, {10})});
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(r.values, ElementsAre(9, 21, 18, 39));
}

// int16 x int16 sums need 64 bits: (-32768)^2 * 2 = 2^31 must not wrap.
TEST_F(QuantizedNnTest, BatchMatMulInt16AccumulatesIn64Bits) {
  const float s = 1.0f / 1024.0f;
  std::vector<TestTensor> inputs = {
      QTensor<int16_t>(KILN_TYPE_INT16, {1, 2}, {-32768, -32768},
                       Quant({s}, {0})),
      QTensor<int16_t>(KILN_TYPE_INT16, {2, 2}, {-32768, 100, -32768, -3},
                       Quant({s}, {0}))};
  // 2^31 * 2^-20 = 2048; (-3276800 + 98304) * 2^-20 = -3.03 -> -3.
  auto r =
      RunOn<int16_t>(Kernel(KILN_OP_BATCH_MATMUL, 3), KILN_OP_BATCH_MATMUL, 3,
                     inputs, OutputSpec{KILN_TYPE_INT16, Quant({1.0f}, {0})});
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(r.values, ElementsAre(2048, -3));
}

TEST_F(QuantizedNnTest, BatchMatMulRefusesMixedIntegerTypes) {
  std::vector<TestTensor> inputs = {
      QTensor<int16_t>(KILN_TYPE_INT16, {1, 2}, {1, 2}, Quant({0.5f}, {0})),
      QTensor<int8_t>(KILN_TYPE_INT8, {2, 1}, {1, 2}, Quant({0.5f}, {0}))};
  auto r =
      RunOn<int16_t>(Kernel(KILN_OP_BATCH_MATMUL, 3), KILN_OP_BATCH_MATMUL, 3,
                     inputs, OutputSpec{KILN_TYPE_INT16, Quant({1.0f}, {0})});
  ASSERT_FALSE(r.status.ok());
  EXPECT_THAT(std::string(r.status.message()),
              HasSubstr("not a supported combination"));
}

}  // namespace
}  // namespace kiln
