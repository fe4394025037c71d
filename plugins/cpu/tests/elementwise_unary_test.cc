// Unary math and activation kernels of the CPU plugin. Values marked "numpy"
// were computed once with numpy 2.4 (float64 math rounded to float32).
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
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

const std::vector<float> kActivationInput = {-3,    -1.5f, -0.5f, 0,
                                             0.25f, 1,     2.5f,  4};

TEST_F(ElementwiseTest, AbsNegOnFloatAndIntegers) {
  auto abs = RunF(KILN_OP_ABS, {F32({3}, {-1.5f, 0, 2})});
  ASSERT_TRUE(abs.status.ok()) << abs.status;
  EXPECT_THAT(abs.values, ElementsAre(1.5f, 0, 2));
  auto abs32 = Run<int32_t>(KILN_OP_ABS, {I32({3}, {-7, 0, 7})},
                            KILN_TYPE_INT32, {}, /*version=*/5);
  ASSERT_TRUE(abs32.status.ok()) << abs32.status;
  EXPECT_THAT(abs32.values, ElementsAre(7, 0, 7));
  auto neg64 = Run<int64_t>(KILN_OP_NEG, {I64({2}, {5, -(int64_t{1} << 40)})},
                            KILN_TYPE_INT64);
  ASSERT_TRUE(neg64.status.ok()) << neg64.status;
  EXPECT_THAT(neg64.values, ElementsAre(-5, int64_t{1} << 40));
  auto neg = RunF(KILN_OP_NEG, {F32({2, 1}, {1, -2})});
  EXPECT_THAT(neg.shape, ElementsAre(2, 1));
  EXPECT_THAT(neg.values, ElementsAre(-1, 2));
}

TEST_F(ElementwiseTest, ExpLogSinCosRsqrtMatchNumpy) {
  auto exp = RunF(KILN_OP_EXP, {F32({4}, {-1, 0, 0.5f, 3})});
  EXPECT_THAT(
      exp.values,
      Pointwise(FloatNear(1e-5f),
                std::vector<float>{0.3678794205188751f, 1.0f,
                                   1.6487212181091309f, 20.08553695678711f}));
  auto log = RunF(KILN_OP_LOG, {F32({4}, {0.1f, 1, 2.5f, 100})});
  EXPECT_THAT(
      log.values,
      Pointwise(FloatNear(1e-6f),
                std::vector<float>{-2.3025851249694824f, 0.0f,
                                   0.9162907600402832f, 4.605170249938965f}));
  auto sin = RunF(KILN_OP_SIN, {F32({4}, {-1, 0, 0.5f, 3})});
  EXPECT_THAT(
      sin.values,
      Pointwise(FloatNear(1e-6f),
                std::vector<float>{-0.8414710164070129f, 0.0f,
                                   0.4794255495071411f, 0.14112000167369843f}));
  auto cos = RunF(KILN_OP_COS, {F32({4}, {-1, 0, 0.5f, 3})});
  EXPECT_THAT(
      cos.values,
      Pointwise(FloatNear(1e-6f),
                std::vector<float>{0.5403022766113281f, 1.0f,
                                   0.8775825500488281f, -0.9899924993515015f}));
  auto rsqrt = RunF(KILN_OP_RSQRT, {F32({4}, {0.25f, 1, 2, 9})});
  EXPECT_THAT(rsqrt.values,
              Pointwise(FloatNear(1e-6f),
                        std::vector<float>{2.0f, 1.0f, 0.7071067690849304f,
                                           0.3333333432674408f}));
}

TEST_F(ElementwiseTest, LogSqrtRsqrtEdgeCasesFollowIeee) {
  const float inf = std::numeric_limits<float>::infinity();
  auto log = RunF(KILN_OP_LOG, {F32({2}, {0, -1})});
  EXPECT_EQ(log.values[0], -inf);
  EXPECT_TRUE(std::isnan(log.values[1]));
  auto sqrt = RunF(KILN_OP_SQRT, {F32({3}, {4, 0, -1})});
  EXPECT_EQ(sqrt.values[0], 2);
  EXPECT_EQ(sqrt.values[1], 0);
  EXPECT_TRUE(std::isnan(sqrt.values[2]));
  auto rsqrt = RunF(KILN_OP_RSQRT, {F32({1}, {0})});
  EXPECT_EQ(rsqrt.values[0], inf);
  auto square = RunF(KILN_OP_SQUARE, {F32({3}, {-3, 0.5f, 2})});
  EXPECT_THAT(square.values, ElementsAre(9, 0.25f, 4));
}

TEST_F(ElementwiseTest, FloorCeilRoundHalvesToEven) {
  const std::vector<float> x = {-2.5f, -1.5f, -0.5f, 0.5f, 1.5f,
                                2.5f,  2.4f,  2.6f,  -2.6f};
  // numpy: np.round(x) (round half to even).
  auto round = RunF(KILN_OP_ROUND, {F32({9}, x)});
  ASSERT_TRUE(round.status.ok()) << round.status;
  EXPECT_THAT(round.values, ElementsAre(-2, -2, 0, 0, 2, 2, 2, 3, -3));
  auto floor = RunF(KILN_OP_FLOOR, {F32({9}, x)});
  EXPECT_THAT(floor.values, ElementsAre(-3, -2, -1, 0, 1, 2, 2, 2, -3));
  auto ceil = RunF(KILN_OP_CEIL, {F32({9}, x)});
  EXPECT_THAT(ceil.values, ElementsAre(-2, -1, 0, 1, 2, 3, 3, 3, -2));
}

TEST_F(ElementwiseTest, SignOnFloatAndInt32) {
  auto f = RunF(KILN_OP_SIGN, {F32({3}, {-0.1f, 0, 7})});
  EXPECT_THAT(f.values, ElementsAre(-1, 0, 1));
  auto i = Run<int32_t>(KILN_OP_SIGN, {I32({3}, {-5, 0, 9})}, KILN_TYPE_INT32,
                        {}, /*version=*/2);
  ASSERT_TRUE(i.status.ok()) << i.status;
  EXPECT_THAT(i.values, ElementsAre(-1, 0, 1));
}

TEST_F(ElementwiseTest, ReluFamilyClamps) {
  const TestTensor in = F32({6}, {-7, -1, -0.5f, 0.5f, 3, 9});
  EXPECT_THAT(RunF(KILN_OP_RELU, {in}).values,
              ElementsAre(0, 0, 0, 0.5f, 3, 9));
  EXPECT_THAT(RunF(KILN_OP_RELU6, {in}).values,
              ElementsAre(0, 0, 0, 0.5f, 3, 6));
  EXPECT_THAT(RunF(KILN_OP_RELU_N1_TO_1, {in}).values,
              ElementsAre(-1, -1, -0.5f, 0.5f, 1, 1));
  EXPECT_THAT(RunF(KILN_OP_RELU_0_TO_1, {in}).values,
              ElementsAre(0, 0, 0, 0.5f, 1, 1));
}

TEST_F(ElementwiseTest, LeakyReluUsesAlphaOption) {
  auto r = RunF(KILN_OP_LEAKY_RELU, {F32({3}, {-2, 0, 3})},
                [](Node& n) { n.SetFloat(KILN_OPTION_ALPHA, 0.1f); });
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(r.values, ElementsAre(FloatNear(-0.2f, 1e-7f), 0, 3));
}

TEST_F(ElementwiseTest, TanhLogisticEluHardSwishMatchNumpy) {
  const TestTensor in = F32({8}, kActivationInput);
  auto tanh = RunF(KILN_OP_TANH, {in});
  EXPECT_THAT(
      tanh.values,
      Pointwise(FloatNear(1e-6f),
                std::vector<float>{-0.9950547814369202f, -0.9051482081413269f,
                                   -0.46211719512939453f, 0.0f,
                                   0.24491865932941437f, 0.7615941762924194f,
                                   0.9866142868995667f, 0.9993293285369873f}));
  auto logistic = RunF(KILN_OP_LOGISTIC, {in});
  EXPECT_THAT(
      logistic.values,
      Pointwise(FloatNear(1e-6f),
                std::vector<float>{0.04742587357759476f, 0.18242552876472473f,
                                   0.3775406777858734f, 0.5f,
                                   0.562176525592804f, 0.7310585975646973f,
                                   0.9241418242454529f, 0.9820137619972229f}));
  auto elu = RunF(KILN_OP_ELU, {in});
  EXPECT_THAT(
      elu.values,
      Pointwise(FloatNear(1e-6f),
                std::vector<float>{-0.9502129554748535f, -0.7768698334693909f,
                                   -0.39346933364868164f, 0.0f, 0.25f, 1.0f,
                                   2.5f, 4.0f}));
  auto hard_swish = RunF(KILN_OP_HARD_SWISH, {in});
  EXPECT_THAT(
      hard_swish.values,
      Pointwise(FloatNear(1e-6f),
                std::vector<float>{0.0f, -0.375f, -0.2083333283662796f, 0.0f,
                                   0.1354166716337204f, 0.6666666865348816f,
                                   2.2916667461395264f, 4.0f}));
}

TEST_F(ElementwiseTest, LogisticSaturatesWithoutNan) {
  auto r = RunF(KILN_OP_LOGISTIC, {F32({2}, {-1000, 1000})});
  EXPECT_THAT(r.values, ElementsAre(0, 1));
}

TEST_F(ElementwiseTest, GeluExactAndApproximateMatchNumpy) {
  const TestTensor in = F32({8}, kActivationInput);
  // numpy: 0.5*x*(1+erf(x/sqrt(2))) in float64.
  auto exact = RunF(KILN_OP_GELU, {in});
  ASSERT_TRUE(exact.status.ok()) << exact.status;
  EXPECT_THAT(exact.values,
              Pointwise(FloatNear(1e-6f),
                        std::vector<float>{
                            -0.004049694165587425f, -0.10021080076694489f,
                            -0.1542687714099884f, 0.0f, 0.14967657625675201f,
                            0.8413447737693787f, 2.48447585105896f,
                            3.999873399734497f}));
  // numpy: 0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715*x^3))).
  auto approx = RunF(KILN_OP_GELU, {in},
                     [](Node& n) { n.SetInt(KILN_OPTION_APPROXIMATE, 1); });
  ASSERT_TRUE(approx.status.ok()) << approx.status;
  EXPECT_THAT(approx.values,
              Pointwise(FloatNear(1e-6f),
                        std::vector<float>{
                            -0.003637392073869705f, -0.10042842477560043f,
                            -0.1542859971523285f, 0.0f, 0.14967535436153412f,
                            0.8411920070648193f, 2.4849157333374023f,
                            3.999929666519165f}));
}

// The exact GELU's vector kernel (a rational erf) over [-10, 10] and far
// beyond, against 0.5 x erfc(-x / sqrt(2)) in double: within 2e-6 absolute
// (the differential tests' bound is 1e-5 of the output's scale), exactly x
// and 0 where erf saturates. 2005 values: a vector tail too.
TEST_F(ElementwiseTest, GeluExactMatchesErfcOverWholeRange) {
  std::vector<float> x;
  for (int i = -1000; i <= 1000; ++i) x.push_back(static_cast<float>(i) / 100);
  for (const float v : {-200.f, -5.2f, 5.2f, 200.f}) x.push_back(v);
  auto r = RunF(KILN_OP_GELU, {F32({static_cast<int32_t>(x.size())}, x)});
  ASSERT_TRUE(r.status.ok()) << r.status;
  ASSERT_EQ(r.values.size(), x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = x[i];
    const double want = 0.5 * v * std::erfc(-v / std::sqrt(2.0));
    EXPECT_NEAR(r.values[i], want, 2e-6 + 1e-6 * std::fabs(want)) << "x " << v;
  }
  EXPECT_EQ(r.values[x.size() - 4], 0.f);
  EXPECT_EQ(r.values[x.size() - 1], 200.f);
}

TEST_F(ElementwiseTest, UnaryRefusesWrongTypes) {
  auto exp = Run<int32_t>(KILN_OP_EXP, {I32({1}, {1})}, KILN_TYPE_INT32);
  ASSERT_FALSE(exp.status.ok());
  EXPECT_THAT(Message(exp), HasSubstr("EXP input 0 (tensor 't0') has type "
                                      "INT32; supports FLOAT32"));
  auto abs64 = Run<int64_t>(KILN_OP_ABS, {I64({1}, {1})}, KILN_TYPE_INT64);
  EXPECT_THAT(Message(abs64),
              HasSubstr("ABS input 0 (tensor 't0') has type INT64; supports "
                        "FLOAT32, INT32"));
  auto out = Run<int32_t>(KILN_OP_RELU, {F32({1}, {1})}, KILN_TYPE_INT32);
  EXPECT_THAT(Message(out), HasSubstr("output 0 (tensor 't1') has type INT32 "
                                      "but input 0"));
}

}  // namespace
}  // namespace kiln
