// Quantized unary and binary elementwise kernels of the CPU plugin (uint8,
// int8, int16). Every expected value was produced by LiteRT 2.3's reference
// kernels (OpResolverType.BUILTIN_REF) on a single-op model with the same
// inputs, scales, zero points and options (built with
// plugins/cpu/tests/litert_single_op.py), and pasted here; Kiln must match
// exactly. Refusals are the ones LiteRT makes for the same node.
// (plugins/cpu/tests/quantized_ops_litert_test.py sweeps many more random
// cases against LiteRT itself.)
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/elementwise_test_util.h"

namespace kiln {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A tensor of type T with per-tensor quantization (scale, zero_point).
template <typename T>
TestTensor Q(KilnTensorType type, std::vector<int32_t> shape,
             std::vector<T> values, float scale, int64_t zero_point) {
  TestTensor t = TestTensor::Of(type, std::move(shape), values);
  t.quantization.scales = {scale};
  t.quantization.zero_points = {zero_point};
  return t;
}

OutputSpec Out(KilnTensorType type, float scale, int64_t zero_point) {
  OutputSpec o{type, {}};
  o.quantization.scales = {scale};
  o.quantization.zero_points = {zero_point};
  return o;
}

std::function<void(Node&)> FloatOption(int32_t key, float value) {
  return [key, value](Node& n) { n.SetFloat(key, value); };
}
std::function<void(Node&)> IntOption(int32_t key, int64_t value) {
  return [key, value](Node& n) { n.SetInt(key, value); };
}

const std::vector<int8_t> kInt8Codes = {-128, -64, -1, 0, 1, 63, 127};

class QuantizedElementwiseTest : public ElementwiseTest {
 protected:
  template <typename T>
  NodeResult<T> Unary(int32_t code, int32_t version, TestTensor in,
                      OutputSpec out,
                      const std::function<void(Node&)>& options = {}) {
    return RunOn<T>(Kernel(code, version), code, version, {std::move(in)},
                    std::move(out), options);
  }
  template <typename T>
  NodeResult<T> Binary(int32_t code, int32_t version, TestTensor a,
                       TestTensor b, OutputSpec out,
                       const std::function<void(Node&)>& options = {}) {
    return RunOn<T>(Kernel(code, version), code, version,
                    {std::move(a), std::move(b)}, std::move(out), options);
  }
};

// ---- Unary ------------------------------------------------------------------

TEST_F(QuantizedElementwiseTest, LogisticInt8) {
  auto r = Unary<int8_t>(KILN_OP_LOGISTIC, 2,
                         Q<int8_t>(KILN_TYPE_INT8, {7}, kInt8Codes, 0.05f, -3),
                         Out(KILN_TYPE_INT8, 1.f / 256, -128));
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(r.values, ElementsAre(-128, -116, 6, 10, 13, 119, 127));
}

TEST_F(QuantizedElementwiseTest, LogisticRefusesOutputScaleOtherThan256th) {
  auto r = Unary<int8_t>(KILN_OP_LOGISTIC, 2,
                         Q<int8_t>(KILN_TYPE_INT8, {2}, {1, 2}, 0.05f, 0),
                         Out(KILN_TYPE_INT8, 1.f / 128, -128));
  ASSERT_FALSE(r.status.ok());
  EXPECT_THAT(Message(r), HasSubstr("quantized output scale must be 1/256"));
}

TEST_F(QuantizedElementwiseTest, TanhUint8) {
  auto r =
      Unary<uint8_t>(KILN_OP_TANH, 1,
                     Q<uint8_t>(KILN_TYPE_UINT8, {7},
                                {0, 60, 119, 120, 121, 200, 255}, 0.03f, 120),
                     Out(KILN_TYPE_UINT8, 1.f / 128, 128));
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(r.values, ElementsAre(0, 7, 124, 128, 132, 254, 255));
}

TEST_F(QuantizedElementwiseTest, GeluInt8ExactAndApproximate) {
  for (int64_t approximate : {0, 1}) {
    auto r = Unary<int8_t>(KILN_OP_GELU, 2,
                           Q<int8_t>(KILN_TYPE_INT8, {7}, kInt8Codes, 0.04f, 5),
                           Out(KILN_TYPE_INT8, 0.03f, -100),
                           IntOption(KILN_OPTION_APPROXIMATE, approximate));
    ASSERT_TRUE(r.status.ok()) << r.status;
    EXPECT_THAT(r.values, ElementsAre(-100, -100, -103, -103, -102, -23, 63));
  }
}

TEST_F(QuantizedElementwiseTest, HardSwishInt8) {
  auto r = Unary<int8_t>(KILN_OP_HARD_SWISH, 1,
                         Q<int8_t>(KILN_TYPE_INT8, {7}, kInt8Codes, 0.05f, 10),
                         Out(KILN_TYPE_INT8, 0.04f, -20));
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(r.values, ElementsAre(-20, -20, -26, -25, -25, 42, 126));
}

TEST_F(QuantizedElementwiseTest, RsqrtInt8AndNegativeInputFailsInvoke) {
  auto r = Unary<int8_t>(KILN_OP_RSQRT, 2,
                         Q<int8_t>(KILN_TYPE_INT8, {6},
                                   {-128, -127, -100, 0, 64, 127}, 0.02f, -128),
                         Out(KILN_TYPE_INT8, 0.06f, -120));
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(r.values, ElementsAre(127, -2, -98, -110, -111, -113));
  auto negative = Unary<int8_t>(
      KILN_OP_RSQRT, 2, Q<int8_t>(KILN_TYPE_INT8, {2}, {-1, 5}, 0.02f, 0),
      Out(KILN_TYPE_INT8, 0.06f, -120));
  ASSERT_FALSE(negative.status.ok());
  EXPECT_THAT(Message(negative),
              HasSubstr("RSQRT is only defined for non-negative values"));
}

TEST_F(QuantizedElementwiseTest, SqrtInt8TruncatesAndNegativeInputFails) {
  auto r = Unary<int8_t>(KILN_OP_SQRT, 1,
                         Q<int8_t>(KILN_TYPE_INT8, {6},
                                   {-128, -100, -50, 0, 60, 127}, 0.05f, -128),
                         Out(KILN_TYPE_INT8, 0.02f, -128));
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(r.values, ElementsAre(-128, -69, -30, -2, 25, 50));
  auto negative = Unary<int8_t>(
      KILN_OP_SQRT, 1, Q<int8_t>(KILN_TYPE_INT8, {2}, {-1, 5}, 0.05f, 0),
      Out(KILN_TYPE_INT8, 0.02f, 0));
  ASSERT_FALSE(negative.status.ok());
  EXPECT_THAT(Message(negative),
              HasSubstr("SQRT is only defined for non-negative values"));
}

// INT16 EXP, LOG and RSQRT interpolate LiteRT's 513-entry table; SQRT
// computes in float.
TEST_F(QuantizedElementwiseTest, Int16MathOps) {
  auto exp = Unary<int16_t>(
      KILN_OP_EXP, 2,
      Q<int16_t>(KILN_TYPE_INT16, {7}, {-32768, -16384, -1, 0, 1, 16384, 32767},
                 0.0001f, 0),
      Out(KILN_TYPE_INT16, 0.0001f, 0));
  ASSERT_TRUE(exp.status.ok()) << exp.status;
  EXPECT_THAT(exp.values,
              ElementsAre(377, 1943, 9999, 10000, 10001, 32767, 32767));
  auto log =
      Unary<int16_t>(KILN_OP_LOG, 2,
                     Q<int16_t>(KILN_TYPE_INT16, {6},
                                {-5, 0, 1, 100, 10000, 32767}, 0.001f, 0),
                     Out(KILN_TYPE_INT16, 0.0005f, 0));
  ASSERT_TRUE(log.status.ok()) << log.status;
  EXPECT_THAT(log.values,
              ElementsAre(-26556, -26304, -26130, -8926, 4605, 6979));
  const std::vector<int16_t> codes = {0, 1, 100, 10000, 32767};
  auto rsqrt = Unary<int16_t>(
      KILN_OP_RSQRT, 3, Q<int16_t>(KILN_TYPE_INT16, {5}, codes, 0.001f, 0),
      Out(KILN_TYPE_INT16, 0.002f, 0));
  ASSERT_TRUE(rsqrt.status.ok()) << rsqrt.status;
  EXPECT_THAT(rsqrt.values, ElementsAre(25218, 25032, 6590, 158, 87));
  auto sqrt = Unary<int16_t>(KILN_OP_SQRT, 1,
                             Q<int16_t>(KILN_TYPE_INT16, {5}, codes, 0.001f, 0),
                             Out(KILN_TYPE_INT16, 0.0002f, 0));
  ASSERT_TRUE(sqrt.status.ok()) << sqrt.status;
  EXPECT_THAT(sqrt.values, ElementsAre(0, 158, 1581, 15811, 28621));
  // GELU v1 takes int16 with any zero points.
  auto gelu = Unary<int16_t>(
      KILN_OP_GELU, 1,
      Q<int16_t>(KILN_TYPE_INT16, {7}, {-32768, -5000, -1, 0, 1, 5000, 32767},
                 0.0003f, 10),
      Out(KILN_TYPE_INT16, 0.0002f, -3));
  ASSERT_TRUE(gelu.status.ok()) << gelu.status;
  EXPECT_THAT(gelu.values, ElementsAre(0, -499, -9, -8, -7, 6982, 32767));
  auto asymmetric = Unary<int16_t>(
      KILN_OP_EXP, 2, Q<int16_t>(KILN_TYPE_INT16, {1}, {1}, 0.001f, 5),
      Out(KILN_TYPE_INT16, 0.001f, 0));
  ASSERT_FALSE(asymmetric.status.ok());
  EXPECT_THAT(Message(asymmetric), HasSubstr("need zero point 0"));
}

TEST_F(QuantizedElementwiseTest, Relu6AndLeakyReluInt16) {
  const std::vector<int16_t> x = {-32768, -5, 100, 4000, 32767};
  auto relu6 = Unary<int16_t>(KILN_OP_RELU6, 3,
                              Q<int16_t>(KILN_TYPE_INT16, {5}, x, 0.001f, 0),
                              Out(KILN_TYPE_INT16, 0.0005f, 0));
  ASSERT_TRUE(relu6.status.ok()) << relu6.status;
  EXPECT_THAT(relu6.values, ElementsAre(0, 0, 200, 8000, 12000));
  auto leaky = Unary<int16_t>(
      KILN_OP_LEAKY_RELU, 2, Q<int16_t>(KILN_TYPE_INT16, {5}, x, 0.001f, 0),
      Out(KILN_TYPE_INT16, 0.002f, 0), FloatOption(KILN_OPTION_ALPHA, 0.3f));
  ASSERT_TRUE(leaky.status.ok()) << leaky.status;
  EXPECT_THAT(leaky.values, ElementsAre(-4915, -1, 50, 2000, 16384));
}

TEST_F(QuantizedElementwiseTest, AbsInt8RescalesAndPlainInt16Wraps) {
  auto q = Unary<int8_t>(
      KILN_OP_ABS, 2,
      Q<int8_t>(KILN_TYPE_INT8, {5}, {-128, 0, 3, 50, 127}, 0.05f, 3),
      Out(KILN_TYPE_INT8, 0.08f, -100));
  ASSERT_TRUE(q.status.ok()) << q.status;
  EXPECT_THAT(q.values, ElementsAre(-18, -98, -100, -71, -22));
  // INT16 without quantization (ABS v4, LiteRT's optimized resolver).
  auto plain = Run<int16_t>(
      KILN_OP_ABS,
      {TestTensor::Of<int16_t>(KILN_TYPE_INT16, {4}, {-32768, -7, 0, 9})},
      KILN_TYPE_INT16, {}, 4);
  ASSERT_TRUE(plain.status.ok()) << plain.status;
  EXPECT_THAT(plain.values, ElementsAre(-32768, 7, 0, 9));
}

// ---- Binary -----------------------------------------------------------------

const std::vector<int8_t> kA = {-128, -50, 0, 7, 90, 127};
const std::vector<int8_t> kB = {127, -128, 30};

TEST_F(QuantizedElementwiseTest, SubInt8BroadcastWithRelu) {
  auto r = Binary<int8_t>(
      KILN_OP_SUB, 2, Q<int8_t>(KILN_TYPE_INT8, {2, 3}, kA, 0.02f, -10),
      Q<int8_t>(KILN_TYPE_INT8, {3}, kB, 0.03f, 4),
      Out(KILN_TYPE_INT8, 0.05f, 2), Activation(KILN_ACTIVATION_RELU));
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(r.values, ElementsAre(2, 65, 2, 2, 121, 41));
}

TEST_F(QuantizedElementwiseTest, MulInt8Broadcast) {
  auto r = Binary<int8_t>(KILN_OP_MUL, 2,
                          Q<int8_t>(KILN_TYPE_INT8, {2, 3}, kA, 0.02f, -10),
                          Q<int8_t>(KILN_TYPE_INT8, {3}, kB, 0.03f, 4),
                          Out(KILN_TYPE_INT8, 0.01f, 2));
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(r.values, ElementsAre(-128, 127, 18, 127, -128, 127));
}

TEST_F(QuantizedElementwiseTest, MulInt16ToInt8) {
  const float q15 = 1.f / 32768;
  auto r = Binary<int8_t>(
      KILN_OP_MUL, 4,
      Q<int16_t>(KILN_TYPE_INT16, {4}, {-32768, -1000, 16384, 32767}, q15, 0),
      Q<int16_t>(KILN_TYPE_INT16, {4}, {-32768, 30000, 16384, 32767}, q15, 0),
      Out(KILN_TYPE_INT8, 1.f / 128, 3));
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(r.values, ElementsAre(127, -1, 35, 127));
}

TEST_F(QuantizedElementwiseTest, DivUint8AndInt8WithReluAndZeroDivisor) {
  auto u8 = Binary<uint8_t>(
      KILN_OP_DIV, 1,
      Q<uint8_t>(KILN_TYPE_UINT8, {6}, {0, 10, 100, 200, 255, 128}, 0.05f, 128),
      Q<uint8_t>(KILN_TYPE_UINT8, {6}, {1, 3, 50, 140, 255, 129}, 0.02f, 130),
      Out(KILN_TYPE_UINT8, 0.1f, 100));
  ASSERT_TRUE(u8.status.ok()) << u8.status;
  EXPECT_THAT(u8.values, ElementsAre(125, 123, 109, 255, 125, 100));
  auto i8 = Binary<int8_t>(
      KILN_OP_DIV, 1,
      Q<int8_t>(KILN_TYPE_INT8, {6}, {-128, -5, 0, 7, 100, 127}, 0.05f, -3),
      Q<int8_t>(KILN_TYPE_INT8, {6}, {-100, 3, 50, -60, 1, 127}, 0.02f, 2),
      Out(KILN_TYPE_INT8, 0.1f, 0),
      IntOption(KILN_OPTION_FUSED_ACTIVATION, KILN_ACTIVATION_RELU));
  ASSERT_TRUE(i8.status.ok()) << i8.status;
  EXPECT_THAT(i8.values, ElementsAre(31, 0, 2, 0, 0, 26));
  // The divisor's zero point is a real 0: LiteRT fails the invoke.
  auto zero = Binary<int8_t>(KILN_OP_DIV, 1,
                             Q<int8_t>(KILN_TYPE_INT8, {2}, {1, 2}, 0.05f, -3),
                             Q<int8_t>(KILN_TYPE_INT8, {2}, {2, 5}, 0.02f, 2),
                             Out(KILN_TYPE_INT8, 0.1f, 0));
  ASSERT_FALSE(zero.status.ok());
  EXPECT_THAT(Message(zero), HasSubstr("DIV: input 1 holds 0 (its zero point "
                                       "2) at element 0; division by zero"));
}

TEST_F(QuantizedElementwiseTest, SquaredDifferenceInt8) {
  auto r = Binary<int8_t>(
      KILN_OP_SQUARED_DIFFERENCE, 2,
      Q<int8_t>(KILN_TYPE_INT8, {4}, {-128, 0, 60, 127}, 0.02f, -10),
      Q<int8_t>(KILN_TYPE_INT8, {4}, {127, -128, 4, 0}, 0.03f, 4),
      Out(KILN_TYPE_INT8, 0.1f, -128));
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(r.values, ElementsAre(127, 45, -108, -46));
}

TEST_F(QuantizedElementwiseTest, PreluInt8) {
  auto r = Binary<int8_t>(
      KILN_OP_PRELU, 1,
      Q<int8_t>(KILN_TYPE_INT8, {2, 3}, {-128, -3, 60, -40, 0, 127}, 0.05f, -3),
      Q<int8_t>(KILN_TYPE_INT8, {3}, {-100, 20, 127}, 0.004f, 0),
      Out(KILN_TYPE_INT8, 0.04f, 5));
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(r.values, ElementsAre(68, 5, 84, 24, 9, 127));
}

// int16x8 PRELU: an INT16 input with an INT8 alpha. (LiteRT reads an INT16
// alpha's bytes as INT8 values; Kiln refuses that node.)
TEST_F(QuantizedElementwiseTest, PreluInt16WithInt8Alpha) {
  const std::vector<int16_t> x = {-32768, -30000, -16384, -1000, -256,
                                  -100,   -10,    -1,     5,     300};
  auto r = Binary<int16_t>(KILN_OP_PRELU, 1,
                           Q<int16_t>(KILN_TYPE_INT16, {10}, x, 0.01f, 0),
                           Q<int8_t>(KILN_TYPE_INT8, {1}, {100}, 0.0001f, 3),
                           Out(KILN_TYPE_INT16, 0.01f, 0));
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(r.values,
              ElementsAre(-318, -291, -159, -10, -2, -1, 0, 0, 5, 300));
  auto int16_alpha = Binary<int16_t>(
      KILN_OP_PRELU, 1, Q<int16_t>(KILN_TYPE_INT16, {10}, x, 0.01f, 0),
      Q<int16_t>(KILN_TYPE_INT16, {1}, {100}, 0.0001f, 0),
      Out(KILN_TYPE_INT16, 0.01f, 0));
  ASSERT_FALSE(int16_alpha.status.ok());
  EXPECT_THAT(Message(int16_alpha),
              HasSubstr("an INT16 PRELU needs an INT8 alpha"));
}

TEST_F(QuantizedElementwiseTest, MaximumInt8ComparesStoredCodes) {
  auto r = Binary<int8_t>(KILN_OP_MAXIMUM, 2,
                          Q<int8_t>(KILN_TYPE_INT8, {3}, {-5, 7, 0}, 0.1f, 0),
                          Q<int8_t>(KILN_TYPE_INT8, {3}, {3, -8, 0}, 0.1f, 0),
                          Out(KILN_TYPE_INT8, 0.1f, 0));
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(r.values, ElementsAre(3, 7, 0));
}

TEST_F(QuantizedElementwiseTest, ComparisonsRescaleTheirInputs) {
  auto less = Binary<uint8_t>(
      KILN_OP_LESS, 1,
      Q<uint8_t>(KILN_TYPE_UINT8, {4}, {100, 110, 120, 0}, 0.1f, 100),
      Q<uint8_t>(KILN_TYPE_UINT8, {4}, {90, 110, 130, 0}, 0.05f, 90),
      OutputSpec{KILN_TYPE_BOOL, {}});
  ASSERT_TRUE(less.status.ok()) << less.status;
  EXPECT_THAT(less.values, ElementsAre(0, 0, 0, 1));
  // LiteRT's rescaling merges neighbouring int16 codes of a small scale.
  auto equal = Binary<uint8_t>(
      KILN_OP_EQUAL, 4,
      Q<int16_t>(KILN_TYPE_INT16, {3}, {1000, 1001, -500}, 0.0001f, 0),
      Q<int16_t>(KILN_TYPE_INT16, {3}, {1001, 1001, -499}, 0.0001f, 0),
      OutputSpec{KILN_TYPE_BOOL, {}});
  ASSERT_TRUE(equal.status.ok()) << equal.status;
  EXPECT_THAT(equal.values, ElementsAre(1, 1, 1));
  // Int16 orderings compare the stored codes, whatever the scales: 100 >
  // 60 although 1.0 < 1.2.
  auto greater = Binary<uint8_t>(
      KILN_OP_GREATER, 1, Q<int16_t>(KILN_TYPE_INT16, {2}, {100, 10}, 0.01f, 0),
      Q<int16_t>(KILN_TYPE_INT16, {2}, {60, 60}, 0.02f, 0),
      OutputSpec{KILN_TYPE_BOOL, {}});
  ASSERT_TRUE(greater.status.ok()) << greater.status;
  EXPECT_THAT(greater.values, ElementsAre(1, 0));
}

const std::vector<int16_t> kI16A = {-32768, 4097, -3, 32767};
const std::vector<int16_t> kI16B = {32767, -100, 1, -32768};

TEST_F(QuantizedElementwiseTest, AddInt16PowerOfTwoAndGeneralScales) {
  auto pot = Binary<int16_t>(
      KILN_OP_ADD, 1, Q<int16_t>(KILN_TYPE_INT16, {4}, kI16A, 1.f / 4096, 0),
      Q<int16_t>(KILN_TYPE_INT16, {4}, kI16B, 1.f / 1024, 0),
      Out(KILN_TYPE_INT16, 1.f / 1024, 0),
      IntOption(KILN_OPTION_POT_SCALE_INT16, 1));
  ASSERT_TRUE(pot.status.ok()) << pot.status;
  EXPECT_THAT(pot.values, ElementsAre(24575, 924, 0, -24576));
  auto general = Binary<int16_t>(
      KILN_OP_ADD, 3, Q<int16_t>(KILN_TYPE_INT16, {4}, kI16A, 0.0003f, 0),
      Q<int16_t>(KILN_TYPE_INT16, {4}, kI16B, 0.0007f, 0),
      Out(KILN_TYPE_INT16, 0.001f, 0),
      IntOption(KILN_OPTION_POT_SCALE_INT16, 0));
  ASSERT_TRUE(general.status.ok()) << general.status;
  EXPECT_THAT(general.values, ElementsAre(13106, 1159, 0, -13107));
}

TEST_F(QuantizedElementwiseTest, SubInt16RefusesNonZeroZeroPoint) {
  auto r = Binary<int16_t>(KILN_OP_SUB, 5,
                           Q<int16_t>(KILN_TYPE_INT16, {1}, {1}, 0.001f, 2),
                           Q<int16_t>(KILN_TYPE_INT16, {1}, {1}, 0.001f, 0),
                           Out(KILN_TYPE_INT16, 0.001f, 0));
  ASSERT_FALSE(r.status.ok());
  EXPECT_THAT(Message(r), HasSubstr("INT16 inputs and output need zero point "
                                    "0"));
}

}  // namespace
}  // namespace kiln
