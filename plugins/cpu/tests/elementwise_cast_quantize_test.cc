// CAST, QUANTIZE and DEQUANTIZE kernels of the CPU plugin.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/elementwise_test_util.h"

namespace kiln {
namespace {

using ::testing::ElementsAre;
using ::testing::FloatEq;
using ::testing::HasSubstr;

template <typename T>
TestTensor Typed(KilnTensorType type, std::vector<int32_t> shape,
                 std::vector<T> values) {
  return TestTensor::Of(type, std::move(shape), values);
}

TEST_F(ElementwiseTest, CastFloatToIntTruncatesTowardZeroAndSaturates) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto r = Run<int32_t>(KILN_OP_CAST,
                        {F32({6}, {1.9f, -1.9f, 0.f, 3e9f, -3e9f, nan})},
                        KILN_TYPE_INT32);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(r.values, ElementsAre(1, -1, 0, 2147483647, -2147483647 - 1, 0));
  auto u8 = Run<uint8_t>(KILN_OP_CAST, {F32({3}, {-5, 200.7f, 300})},
                         KILN_TYPE_UINT8);
  EXPECT_THAT(u8.values, ElementsAre(0, 200, 255));
}

TEST_F(ElementwiseTest, CastBoolAndIntegers) {
  auto to_bool =
      Run<uint8_t>(KILN_OP_CAST, {F32({3}, {0, -0.5f, 2})}, KILN_TYPE_BOOL);
  EXPECT_THAT(to_bool.values, ElementsAre(0, 1, 1));
  auto from_bool =
      Run<float>(KILN_OP_CAST, {Bool({3}, {0, 1, 5})}, KILN_TYPE_FLOAT32);
  EXPECT_THAT(from_bool.values, ElementsAre(0, 1, 1));
  // INT64 -> INT32 wraps modulo 2^32; INT32 -> INT8 likewise (v3).
  auto narrow = Run<int32_t>(
      KILN_OP_CAST, {I64({2}, {(int64_t{1} << 32) + 5, -1})}, KILN_TYPE_INT32);
  EXPECT_THAT(narrow.values, ElementsAre(5, -1));
  auto i8 = Run<int8_t>(KILN_OP_CAST, {I32({3}, {127, 128, -129})},
                        KILN_TYPE_INT8, {}, /*version=*/3);
  ASSERT_TRUE(i8.status.ok()) << i8.status;
  EXPECT_THAT(i8.values, ElementsAre(127, -128, 127));
  auto u32 = Run<uint32_t>(KILN_OP_CAST, {I32({2}, {-1, 7})}, KILN_TYPE_UINT32,
                           {}, /*version=*/2);
  EXPECT_THAT(u32.values, ElementsAre(4294967295u, 7u));
  auto i16 = Run<int64_t>(KILN_OP_CAST,
                          {Typed<int16_t>(KILN_TYPE_INT16, {2}, {-300, 300})},
                          KILN_TYPE_INT64);
  EXPECT_THAT(i16.values, ElementsAre(-300, 300));
}

TEST_F(ElementwiseTest, CastFloat16BothWaysAndFloat64) {
  // numpy: np.float16 bit patterns of 1.0, -2.5, 65504, 0.1, 6e-8, 70000
  // (0x3C00, 0xC100, 0x7BFF, 0x2E66, 0x0001, 0x7C00 = inf).
  auto to_half = Run<uint16_t>(
      KILN_OP_CAST, {F32({6}, {1.f, -2.5f, 65504.f, 0.1f, 6e-8f, 70000.f})},
      KILN_TYPE_FLOAT16, {}, /*version=*/5);
  ASSERT_TRUE(to_half.status.ok()) << to_half.status;
  EXPECT_THAT(to_half.values,
              ElementsAre(15360, 49408, 31743, 11878, 1, 31744));
  auto from_half = Run<float>(
      KILN_OP_CAST,
      {Typed<uint16_t>(KILN_TYPE_FLOAT16, {4}, {15360, 49408, 11878, 1})},
      KILN_TYPE_FLOAT32, {}, /*version=*/5);
  ASSERT_TRUE(from_half.status.ok()) << from_half.status;
  EXPECT_THAT(from_half.values,
              ElementsAre(1.f, -2.5f, FloatEq(0.0999755859375f),
                          FloatEq(5.9604644775390625e-08f)));
  auto to_double = Run<double>(KILN_OP_CAST, {I32({2}, {-3, 1 << 30})},
                               KILN_TYPE_FLOAT64, {}, /*version=*/5);
  EXPECT_THAT(to_double.values, ElementsAre(-3.0, 1073741824.0));
}

TEST_F(ElementwiseTest, CastRefusesUnsupportedTypes) {
  auto r =
      Run<float>(KILN_OP_CAST, {Typed<float>(KILN_TYPE_COMPLEX64, {1}, {1, 0})},
                 KILN_TYPE_FLOAT32);
  ASSERT_FALSE(r.status.ok());
  EXPECT_THAT(
      Message(r),
      HasSubstr("CAST input 0 (tensor 't0') has type COMPLEX64; supports "
                "FLOAT32, FLOAT16, INT32, UINT8, INT64, BOOL, INT16, "
                "INT8, FLOAT64, UINT32, UINT16"));
}

TEST_F(ElementwiseTest, QuantizePerTensorRoundsHalfAwayAndClamps) {
  Quantization q;
  q.scales = {0.01f};
  q.zero_points = {-3};
  // numpy: clip(round(x / 0.01) - 3, -128, 127).
  auto r =
      RunOn<int8_t>(Kernel(KILN_OP_QUANTIZE), KILN_OP_QUANTIZE, 1,
                    {F32({7}, {-1.f, -0.26f, 0.f, 0.25f, 0.3f, 1.f, 100.f})},
                    OutputSpec{KILN_TYPE_INT8, q});
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(r.values, ElementsAre(-103, -29, -3, 22, 27, 97, 127));
  // 0.5 / 1.0 rounds half away from zero (std::round), as TFLite.
  Quantization unit;
  unit.scales = {1.f};
  unit.zero_points = {128};
  auto u8 = RunOn<uint8_t>(Kernel(KILN_OP_QUANTIZE), KILN_OP_QUANTIZE, 1,
                           {F32({4}, {0.5f, -0.5f, -200.f, 1.5f})},
                           OutputSpec{KILN_TYPE_UINT8, unit});
  ASSERT_TRUE(u8.status.ok()) << u8.status;
  EXPECT_THAT(u8.values, ElementsAre(129, 127, 0, 130));
}

TEST_F(ElementwiseTest, QuantizeInt16AndPerChannel) {
  Quantization q16;
  q16.scales = {0.5f};
  q16.zero_points = {0};
  auto i16 = RunOn<int16_t>(Kernel(KILN_OP_QUANTIZE, 2), KILN_OP_QUANTIZE, 2,
                            {F32({3}, {-1.f, 2.2f, 1e9f})},
                            OutputSpec{KILN_TYPE_INT16, q16});
  ASSERT_TRUE(i16.status.ok()) << i16.status;
  EXPECT_THAT(i16.values, ElementsAre(-2, 4, 32767));
  // Per-channel along axis 1 of [2,2]: channel 0 scale 1, channel 1 scale 0.1.
  Quantization pc;
  pc.scales = {1.f, 0.1f};
  pc.zero_points = {0, 10};
  pc.quantized_dimension = 1;
  auto r = RunOn<int8_t>(Kernel(KILN_OP_QUANTIZE, 3), KILN_OP_QUANTIZE, 3,
                         {F32({2, 2}, {1.f, 1.f, -2.f, -0.5f})},
                         OutputSpec{KILN_TYPE_INT8, pc});
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(r.values, ElementsAre(1, 20, -2, 5));
}

TEST_F(ElementwiseTest, QuantizeRequantizesBetweenIntegerTypes) {
  auto in = Typed<uint8_t>(KILN_TYPE_UINT8, {3}, {0, 128, 255})
                .Quantized({0.5f}, {128});
  Quantization out;
  out.scales = {1.f};
  out.zero_points = {0};
  auto r = RunOn<int8_t>(Kernel(KILN_OP_QUANTIZE), KILN_OP_QUANTIZE, 1, {in},
                         OutputSpec{KILN_TYPE_INT8, out});
  ASSERT_TRUE(r.status.ok()) << r.status;
  // real = 0.5 * (q - 128) = -64, 0, 63.5 -> -64, 0, 64 (half away).
  EXPECT_THAT(r.values, ElementsAre(-64, 0, 64));
}

TEST_F(ElementwiseTest, QuantizeRefusesMissingOrBadParameters) {
  auto none = RunOn<int8_t>(Kernel(KILN_OP_QUANTIZE), KILN_OP_QUANTIZE, 1,
                            {F32({1}, {1.f})}, OutputSpec{KILN_TYPE_INT8, {}});
  ASSERT_FALSE(none.status.ok());
  EXPECT_THAT(Message(none), HasSubstr("QUANTIZE output 0 (tensor 't1') "
                                       "has type INT8 but no quantization "
                                       "parameters"));
  Quantization zero_scale;
  zero_scale.scales = {0.f};
  zero_scale.zero_points = {0};
  auto bad =
      RunOn<int8_t>(Kernel(KILN_OP_QUANTIZE), KILN_OP_QUANTIZE, 1,
                    {F32({1}, {1.f})}, OutputSpec{KILN_TYPE_INT8, zero_scale});
  EXPECT_THAT(Message(bad),
              HasSubstr("has scale 0 at channel 0; quantization scales "
                        "must be finite and positive"));
  Quantization zp;
  zp.scales = {1.f};
  zp.zero_points = {300};
  auto bad_zp =
      RunOn<int8_t>(Kernel(KILN_OP_QUANTIZE), KILN_OP_QUANTIZE, 1,
                    {F32({1}, {1.f})}, OutputSpec{KILN_TYPE_INT8, zp});
  EXPECT_THAT(Message(bad_zp), HasSubstr("zero point 300 at channel 0, "
                                         "outside the INT8 range [-128, 127]"));
  Quantization channels;
  channels.scales = {1.f, 1.f, 1.f};
  channels.zero_points = {0, 0, 0};
  auto mismatch = RunOn<int8_t>(Kernel(KILN_OP_QUANTIZE, 3), KILN_OP_QUANTIZE,
                                3, {F32({2}, {1.f, 2.f})},
                                OutputSpec{KILN_TYPE_INT8, channels});
  EXPECT_THAT(Message(mismatch), HasSubstr("has 3 quantization channels along "
                                           "dimension 0 but that dimension has "
                                           "extent 2"));
  auto float_out =
      RunOn<float>(Kernel(KILN_OP_QUANTIZE), KILN_OP_QUANTIZE, 1,
                   {F32({1}, {1.f})}, OutputSpec{KILN_TYPE_FLOAT32, {}});
  EXPECT_THAT(Message(float_out), HasSubstr("QUANTIZE output 0 (tensor 't1') "
                                            "has type FLOAT32; supports "
                                            "UINT8, INT16, INT8"));
}

TEST_F(ElementwiseTest, DequantizePerTensorAllIntegerTypes) {
  auto u8 = RunF(KILN_OP_DEQUANTIZE,
                 {Typed<uint8_t>(KILN_TYPE_UINT8, {3}, {0, 128, 255})
                      .Quantized({0.5f}, {128})});
  ASSERT_TRUE(u8.status.ok()) << u8.status;
  EXPECT_THAT(u8.values, ElementsAre(-64, 0, 63.5f));
  auto i8 = RunF(KILN_OP_DEQUANTIZE,
                 {Typed<int8_t>(KILN_TYPE_INT8, {2, 2}, {-128, -1, 0, 127})
                      .Quantized({0.25f}, {-1})});
  ASSERT_TRUE(i8.status.ok()) << i8.status;
  EXPECT_THAT(i8.shape, ElementsAre(2, 2));
  EXPECT_THAT(i8.values, ElementsAre(-31.75f, 0, 0.25f, 32));
  auto i16 = RunF(KILN_OP_DEQUANTIZE,
                  {Typed<int16_t>(KILN_TYPE_INT16, {2}, {-32768, 1000})
                       .Quantized({0.001f}, {0})});
  ASSERT_TRUE(i16.status.ok()) << i16.status;
  EXPECT_THAT(i16.values, ElementsAre(FloatEq(-32.768f), FloatEq(1.f)));
}

TEST_F(ElementwiseTest, DequantizePerChannelInt8) {
  // [2,3] quantized along axis 0 (scales 1, 0.5) and along axis 1.
  auto rows = RunF(KILN_OP_DEQUANTIZE,
                   {Typed<int8_t>(KILN_TYPE_INT8, {2, 3}, {1, 2, 3, 4, 5, 6})
                        .Quantized({1.f, 0.5f}, {0, 2}, 0)});
  ASSERT_TRUE(rows.status.ok()) << rows.status;
  EXPECT_THAT(rows.values, ElementsAre(1, 2, 3, 1, 1.5f, 2));
  auto cols = RunF(KILN_OP_DEQUANTIZE,
                   {Typed<int8_t>(KILN_TYPE_INT8, {2, 3}, {1, 2, 3, 4, 5, 6})
                        .Quantized({1.f, 2.f, -1.f}, {0, 0, 1}, 1)});
  // A negative scale is refused: scales must be positive.
  ASSERT_FALSE(cols.status.ok());
  EXPECT_THAT(Message(cols), HasSubstr("has scale -1 at channel 2"));
  auto cols_ok = RunF(KILN_OP_DEQUANTIZE,
                      {Typed<int8_t>(KILN_TYPE_INT8, {2, 3}, {1, 2, 3, 4, 5, 6})
                           .Quantized({1.f, 2.f, 10.f}, {0, 0, 1}, 1)});
  ASSERT_TRUE(cols_ok.status.ok()) << cols_ok.status;
  EXPECT_THAT(cols_ok.values, ElementsAre(1, 4, 20, 4, 10, 50));
}

TEST_F(ElementwiseTest, DequantizeConstantFloat16Weights) {
  SingleNodeRunner r;
  const std::vector<uint16_t> half = {0x3C00, 0xC100, 0x7C00, 0x0000};
  const int in = r.AddTensor(KILN_TYPE_FLOAT16, {2, 2}, half.data(),
                             half.size() * sizeof(uint16_t),
                             /*constant=*/true);
  const int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_DEQUANTIZE, 3, {in}, {out});
  ASSERT_TRUE(r.Run(Kernel(KILN_OP_DEQUANTIZE, 3)).ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(2, 2));
  EXPECT_THAT(
      r.Values<float>(out),
      ElementsAre(1.f, -2.5f, std::numeric_limits<float>::infinity(), 0.f));
}

TEST_F(ElementwiseTest, DequantizeRefusesUnquantizedAndWrongTypes) {
  auto none =
      RunF(KILN_OP_DEQUANTIZE, {Typed<int8_t>(KILN_TYPE_INT8, {1}, {1})});
  ASSERT_FALSE(none.status.ok());
  EXPECT_THAT(Message(none),
              HasSubstr("DEQUANTIZE input 0 (tensor 't0') has type INT8 "
                        "but no quantization parameters"));
  auto f32 = RunF(KILN_OP_DEQUANTIZE, {F32({1}, {1.f})});
  EXPECT_THAT(Message(f32), HasSubstr("DEQUANTIZE input 0 (tensor 't0') has "
                                      "type FLOAT32; supports FLOAT16, UINT8, "
                                      "INT16, INT8"));
}

}  // namespace
}  // namespace kiln
