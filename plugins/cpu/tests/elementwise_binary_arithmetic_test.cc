// Binary arithmetic kernels of the CPU plugin, loaded from the built plugin
// and run through the extension API. Expected values are hand-checked unless
// marked "numpy" (computed once with numpy 2.4 and pasted).
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/single_node_runner.h"
#include "tests/cpu_kernel_test_util.h"
#include "tests/elementwise_test_util.h"

namespace kiln {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::FloatEq;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pointwise;

TEST_F(CpuKernelTest, AddBroadcastsWithFusedRelu) {
  SingleNodeRunner r;
  int a = r.AddTensor<float>(KILN_TYPE_FLOAT32, {2, 3}, {1, -2, 3, -4, 5, -6});
  int b = r.AddTensor<float>(KILN_TYPE_FLOAT32, {3}, {1, 1, 1});
  int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_ADD, 1, {a, b}, {out});
  r.node().SetInt(KILN_OPTION_FUSED_ACTIVATION, KILN_ACTIVATION_RELU);
  ASSERT_TRUE(r.Run(Kernel(KILN_OP_ADD)).ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(2, 3));
  EXPECT_THAT(r.Values<float>(out), ElementsAre(2, 0, 4, 0, 6, 0));
}

TEST_F(CpuKernelTest, MulRejectsIncompatibleShapes) {
  SingleNodeRunner r;
  int a = r.AddTensor<float>(KILN_TYPE_FLOAT32, {2}, {1, 2});
  int b = r.AddTensor<float>(KILN_TYPE_FLOAT32, {3}, {1, 2, 3});
  int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_MUL, 1, {a, b}, {out});
  absl::Status s = r.Run(Kernel(KILN_OP_MUL));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()),
              AllOf(HasSubstr("MUL input shapes [2] and [3]"),
                    HasSubstr("cannot be broadcast")));
}

TEST_F(ElementwiseTest, AddSameShapeInt32AndInt64) {
  auto r32 = Run<int32_t>(
      KILN_OP_ADD,
      {I32({2, 2}, {1, -2, 3, 2147483647}), I32({2, 2}, {10, 20, -30, 1})},
      KILN_TYPE_INT32);
  ASSERT_TRUE(r32.status.ok()) << r32.status;
  // INT32 overflow wraps rather than being undefined.
  EXPECT_THAT(r32.values, ElementsAre(11, 18, -27, -2147483647 - 1));
  auto r64 = Run<int64_t>(KILN_OP_ADD,
                          {I64({2}, {int64_t{1} << 40, -5}), I64({}, {7})},
                          KILN_TYPE_INT64, {}, /*version=*/4);
  ASSERT_TRUE(r64.status.ok()) << r64.status;
  EXPECT_THAT(r64.shape, ElementsAre(2));
  EXPECT_THAT(r64.values, ElementsAre((int64_t{1} << 40) + 7, 2));
}

TEST_F(ElementwiseTest, AddScalarBroadcastBothSides) {
  auto left = RunF(KILN_OP_ADD, {F32({}, {10}), F32({3}, {1, 2, 3})});
  ASSERT_TRUE(left.status.ok()) << left.status;
  EXPECT_THAT(left.shape, ElementsAre(3));
  EXPECT_THAT(left.values, ElementsAre(11, 12, 13));
  auto right = RunF(KILN_OP_ADD, {F32({1, 3}, {1, 2, 3}), F32({1}, {0.5f})});
  ASSERT_TRUE(right.status.ok()) << right.status;
  EXPECT_THAT(right.shape, ElementsAre(1, 3));
  EXPECT_THAT(right.values, ElementsAre(1.5f, 2.5f, 3.5f));
}

TEST_F(ElementwiseTest, SubBroadcastsBothOperandsInMiddleDims) {
  // a [2,1,3] - b [1,2,1] -> [2,2,3]
  auto r = RunF(KILN_OP_SUB, {F32({2, 1, 3}, {1, 2, 3, 4, 5, 6}),
                              F32({1, 2, 1}, {10, 100})});
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(r.shape, ElementsAre(2, 2, 3));
  EXPECT_THAT(r.values, ElementsAre(-9, -8, -7, -99, -98, -97,  //
                                    -6, -5, -4, -96, -95, -94));
}

TEST_F(ElementwiseTest, MulBroadcastsRankSix) {
  // a [2,1,1,1,1,2] * b [2,1] -> [2,1,1,1,2,2]
  auto r = RunF(KILN_OP_MUL,
                {F32({2, 1, 1, 1, 1, 2}, {1, 2, 3, 4}), F32({2, 1}, {10, -1})});
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(r.shape, ElementsAre(2, 1, 1, 1, 2, 2));
  EXPECT_THAT(r.values, ElementsAre(10, 20, -1, -2, 30, 40, -3, -4));
}

TEST_F(ElementwiseTest, BinaryRefusesRankSeven) {
  auto r =
      RunF(KILN_OP_ADD, {F32({1, 1, 1, 1, 1, 1, 2}, {1, 2}), F32({2}, {1, 2})});
  ASSERT_FALSE(r.status.ok());
  EXPECT_THAT(Message(r), HasSubstr("ADD input 0 (tensor 't0') has rank 7; "
                                    "supports rank <= 6"));
}

TEST_F(ElementwiseTest, FusedActivationsOnFloat) {
  const std::vector<TestTensor> in = {F32({5}, {-3, -0.5f, 0.5f, 2, 8}),
                                      F32({}, {0})};
  auto relu6 = RunF(KILN_OP_ADD, in, Activation(KILN_ACTIVATION_RELU6));
  EXPECT_THAT(relu6.values, ElementsAre(0, 0, 0.5f, 2, 6));
  auto n1 = RunF(KILN_OP_SUB, in, Activation(KILN_ACTIVATION_RELU_N1_TO_1));
  EXPECT_THAT(n1.values, ElementsAre(-1, -0.5f, 0.5f, 1, 1));
  auto tanh = RunF(KILN_OP_MUL, {F32({2}, {0.5f, -1}), F32({}, {1})},
                   Activation(KILN_ACTIVATION_TANH));
  EXPECT_THAT(tanh.values,
              ElementsAre(FloatEq(std::tanh(0.5f)), FloatEq(std::tanh(-1.f))));
  auto sign_bit = RunF(KILN_OP_DIV, {F32({3}, {-2, 0, 2}), F32({}, {1})},
                       Activation(KILN_ACTIVATION_SIGN_BIT));
  EXPECT_THAT(sign_bit.values, ElementsAre(1, 0, 0));
}

TEST_F(ElementwiseTest, FusedActivationOnIntegersClampsAndRefusesTanh) {
  auto relu6 =
      Run<int32_t>(KILN_OP_MUL, {I32({4}, {-2, 1, 3, 5}), I32({}, {2})},
                   KILN_TYPE_INT32, Activation(KILN_ACTIVATION_RELU6));
  ASSERT_TRUE(relu6.status.ok()) << relu6.status;
  EXPECT_THAT(relu6.values, ElementsAre(0, 2, 6, 6));
  auto tanh = Run<int32_t>(KILN_OP_ADD, {I32({1}, {1}), I32({1}, {1})},
                           KILN_TYPE_INT32, Activation(KILN_ACTIVATION_TANH));
  ASSERT_FALSE(tanh.status.ok());
  EXPECT_THAT(Message(tanh), HasSubstr("fused activation TANH is not defined "
                                       "for INT32 outputs"));
  auto unknown =
      RunF(KILN_OP_ADD, {F32({1}, {1}), F32({1}, {1})}, Activation(42));
  ASSERT_FALSE(unknown.status.ok());
  EXPECT_THAT(Message(unknown), HasSubstr("unknown fused activation 42"));
}

TEST_F(ElementwiseTest, RefusesWrongTypesWithPreciseMessage) {
  std::vector<int8_t> q = {1, 2};
  // ADD implements INT8 (quantized); SUB does not.
  auto int8 = Run<int8_t>(KILN_OP_SUB,
                          {TestTensor::Of(KILN_TYPE_INT8, {2}, q),
                           TestTensor::Of(KILN_TYPE_INT8, {2}, q)},
                          KILN_TYPE_INT8);
  ASSERT_FALSE(int8.status.ok());
  EXPECT_THAT(Message(int8),
              HasSubstr("SUB input 0 (tensor 't0') has type INT8; supports "
                        "FLOAT32, INT32, INT64"));
  auto mixed = RunF(KILN_OP_SUB, {F32({1}, {1}), I32({1}, {1})});
  ASSERT_FALSE(mixed.status.ok());
  EXPECT_THAT(Message(mixed),
              HasSubstr("input 1 (tensor 't1') has type INT32 but input 0 "
                        "(tensor 't0') has type FLOAT32; they must match"));
  auto out_type = Run<int32_t>(KILN_OP_MUL, {F32({1}, {1}), F32({1}, {1})},
                               KILN_TYPE_INT32);
  ASSERT_FALSE(out_type.status.ok());
  EXPECT_THAT(Message(out_type), HasSubstr("output 0 (tensor 't2') has type "
                                           "INT32 but input 0"));
  auto div64 = Run<int64_t>(KILN_OP_DIV, {I64({1}, {1}), I64({1}, {1})},
                            KILN_TYPE_INT64);
  EXPECT_THAT(Message(div64),
              HasSubstr("DIV input 0 (tensor 't0') has type INT64; supports "
                        "FLOAT32, INT32"));
  auto atan2 = Run<int32_t>(KILN_OP_ATAN2, {I32({1}, {1}), I32({1}, {1})},
                            KILN_TYPE_INT32);
  EXPECT_THAT(Message(atan2), HasSubstr("ATAN2 input 0 (tensor 't0') has type "
                                        "INT32; supports FLOAT32"));
}

TEST_F(ElementwiseTest, RefusesWrongArity) {
  auto r = RunF(KILN_OP_ADD, {F32({1}, {1})});
  ASSERT_FALSE(r.status.ok());
  EXPECT_THAT(Message(r), HasSubstr("ADD expects 2 inputs, the node has 1"));
}

TEST_F(ElementwiseTest, DivFloatFollowsIeeeForZero) {
  auto r = RunF(KILN_OP_DIV, {F32({4}, {1, -1, 0, 7}), F32({4}, {0, 0, 0, 2})});
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(r.values[0], std::numeric_limits<float>::infinity());
  EXPECT_EQ(r.values[1], -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(r.values[2]));
  EXPECT_EQ(r.values[3], 3.5f);
}

TEST_F(ElementwiseTest, DivInt32TruncatesAndRefusesZeroDivisor) {
  auto r = Run<int32_t>(
      KILN_OP_DIV,
      {I32({4}, {7, -7, 7, -2147483647 - 1}), I32({4}, {2, 2, -2, -1})},
      KILN_TYPE_INT32);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(r.values, ElementsAre(3, -3, -3, -2147483647 - 1));
  auto zero = Run<int32_t>(KILN_OP_DIV, {I32({2}, {1, 2}), I32({2}, {1, 0})},
                           KILN_TYPE_INT32);
  ASSERT_FALSE(zero.status.ok());
  EXPECT_THAT(Message(zero), HasSubstr("DIV input 1 (tensor 't1') holds 0 at "
                                       "element 1; integer division by zero"));
}

TEST_F(ElementwiseTest, SquaredDifferenceMaximumMinimum) {
  auto sq =
      RunF(KILN_OP_SQUARED_DIFFERENCE, {F32({3}, {1, -2, 0.5f}), F32({}, {3})});
  EXPECT_THAT(sq.values, ElementsAre(4, 25, 6.25f));
  auto sq32 =
      Run<int32_t>(KILN_OP_SQUARED_DIFFERENCE,
                   {I32({2}, {-3, 4}), I32({2}, {2, 4})}, KILN_TYPE_INT32);
  EXPECT_THAT(sq32.values, ElementsAre(25, 0));
  auto max =
      RunF(KILN_OP_MAXIMUM, {F32({2, 2}, {1, 5, -3, 0}), F32({2}, {2, -1})});
  EXPECT_THAT(max.values, ElementsAre(2, 5, 2, 0));
  auto min = Run<int64_t>(
      KILN_OP_MINIMUM, {I64({3}, {-4, 0, 9}), I64({1}, {1})}, KILN_TYPE_INT64);
  EXPECT_THAT(min.values, ElementsAre(-4, 0, 1));
}

TEST_F(ElementwiseTest, PowFloatMatchesNumpy) {
  // numpy: np.power([0.5,2,3], [[1.5],[-0.5]]) in float32.
  auto r =
      RunF(KILN_OP_POW, {F32({3}, {0.5f, 2, 3}), F32({2, 1}, {1.5f, -0.5f})});
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(r.shape, ElementsAre(2, 3));
  const std::vector<float> numpy = {0.3535533845424652f, 2.8284270763397217f,
                                    5.196152210235596f,  1.4142135381698608f,
                                    0.7071067690849304f, 0.5773502588272095f};
  EXPECT_THAT(r.values, Pointwise(FloatNear(1e-6f), numpy));
}

TEST_F(ElementwiseTest, PowInt32ExactAndRefusesNegativeExponent) {
  auto r = Run<int32_t>(KILN_OP_POW,
                        {I32({4}, {2, -3, 5, 0}), I32({4}, {10, 3, 0, 0})},
                        KILN_TYPE_INT32);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(r.values, ElementsAre(1024, -27, 1, 1));
  auto neg = Run<int32_t>(KILN_OP_POW, {I32({1}, {2}), I32({1}, {-1})},
                          KILN_TYPE_INT32);
  ASSERT_FALSE(neg.status.ok());
  EXPECT_THAT(Message(neg), HasSubstr("holds -1 at element 0; integer POW "
                                      "needs non-negative exponents"));
}

TEST_F(ElementwiseTest, FloorDivAndFloorModFollowDivisorSign) {
  // numpy: np.floor_divide / np.mod of [7,-7,7,-7] by [3,3,-3,-3].
  auto div = Run<int32_t>(KILN_OP_FLOOR_DIV,
                          {I32({4}, {7, -7, 7, -7}), I32({4}, {3, 3, -3, -3})},
                          KILN_TYPE_INT32);
  ASSERT_TRUE(div.status.ok()) << div.status;
  EXPECT_THAT(div.values, ElementsAre(2, -3, -3, 2));
  auto mod = Run<int64_t>(KILN_OP_FLOOR_MOD,
                          {I64({4}, {7, -7, 7, -7}), I64({4}, {3, 3, -3, -3})},
                          KILN_TYPE_INT64);
  ASSERT_TRUE(mod.status.ok()) << mod.status;
  EXPECT_THAT(mod.values, ElementsAre(1, 2, -2, -1));
  auto fdiv = Run<float>(KILN_OP_FLOOR_DIV,
                         {F32({3}, {7, -7, -0.5f}), F32({3}, {2, 2, 4})},
                         KILN_TYPE_FLOAT32, {}, /*version=*/2);
  ASSERT_TRUE(fdiv.status.ok()) << fdiv.status;
  EXPECT_THAT(fdiv.values, ElementsAre(3, -4, -1));
  // TFLite's FLOOR_DIV refuses a zero divisor even for floats.
  auto fdiv_zero =
      Run<float>(KILN_OP_FLOOR_DIV, {F32({2}, {1, 1}), F32({2}, {1, 0})},
                 KILN_TYPE_FLOAT32, {}, /*version=*/2);
  ASSERT_FALSE(fdiv_zero.status.ok());
  EXPECT_THAT(Message(fdiv_zero), HasSubstr("holds 0 at element 1; FLOOR_DIV "
                                            "refuses a zero divisor"));
  auto fmod = RunF(KILN_OP_FLOOR_MOD,
                   {F32({3}, {5.5f, -5.5f, 1}), F32({3}, {2, 2, 0})});
  ASSERT_TRUE(fmod.status.ok()) << fmod.status;
  EXPECT_EQ(fmod.values[0], 1.5f);
  EXPECT_EQ(fmod.values[1], 0.5f);
  EXPECT_TRUE(std::isnan(fmod.values[2]));
  auto zero = Run<int32_t>(KILN_OP_FLOOR_MOD, {I32({1}, {1}), I32({1}, {0})},
                           KILN_TYPE_INT32);
  ASSERT_FALSE(zero.status.ok());
  EXPECT_THAT(Message(zero), HasSubstr("integer division by zero"));
}

TEST_F(ElementwiseTest, Atan2MatchesNumpy) {
  // numpy: np.arctan2([1,-2,0.5,-0.75], [[2],[-3]]) in float32.
  auto r = RunF(KILN_OP_ATAN2,
                {F32({4}, {1, -2, 0.5f, -0.75f}), F32({2, 1}, {2, -3})});
  ASSERT_TRUE(r.status.ok()) << r.status;
  const std::vector<float> numpy = {0.46364760398864746f, -0.7853981852531433f,
                                    0.244978666305542f,   -0.3587706685066223f,
                                    2.8198421001434326f,  -2.5535900592803955f,
                                    2.9764440059661865f,  -2.8966140747070312f};
  EXPECT_THAT(r.values, Pointwise(FloatNear(1e-6f), numpy));
}

TEST_F(ElementwiseTest, PreluBroadcastsAlphaPerChannel) {
  auto r = RunF(KILN_OP_PRELU,
                {F32({2, 2}, {-1, 2, -4, 0}), F32({2}, {0.5f, 0.25f})});
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(r.values, ElementsAre(-0.5f, 2, -2, 0));
}

TEST_F(ElementwiseTest, EmptyTensorsProduceEmptyOutput) {
  auto r = RunF(KILN_OP_ADD, {F32({0, 3}, {}), F32({3}, {1, 2, 3})});
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(r.shape, ElementsAre(0, 3));
  EXPECT_THAT(r.values, IsEmpty());
}

TEST_F(ElementwiseTest, PrepareRefusesUnknownDimension) {
  SingleNodeRunner r;
  const int a = r.AddTensor(KILN_TYPE_FLOAT32, {-1, 3});
  const int b = r.AddTensor<float>(KILN_TYPE_FLOAT32, {3}, {1, 2, 3});
  const int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_ADD, 1, {a, b}, {out});
  const absl::Status s = r.Run(Kernel(KILN_OP_ADD));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("ADD input 0 (tensor 't0') has unknown extent in "
                        "dimension 0 (shape [-1, 3]) at prepare"));
}

TEST_F(ElementwiseTest, RepeatedInvokeReusesPreparedPlan) {
  SingleNodeRunner r;
  int a = r.AddTensor<float>(KILN_TYPE_FLOAT32, {2, 1}, {1, 2});
  int b = r.AddTensor<float>(KILN_TYPE_FLOAT32, {1, 2}, {10, 20});
  int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_ADD, 1, {a, b}, {out});
  ASSERT_TRUE(r.RunRepeated(Kernel(KILN_OP_ADD), 3).ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(2, 2));
  EXPECT_THAT(r.Values<float>(out), ElementsAre(11, 21, 12, 22));
}

}  // namespace
}  // namespace kiln
