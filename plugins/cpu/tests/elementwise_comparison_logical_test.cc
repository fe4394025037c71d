// Comparison, logical and SELECT_V2 kernels of the CPU plugin.
#include <cstdint>
#include <limits>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/elementwise_test_util.h"

namespace kiln {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST_F(ElementwiseTest, OrderedComparisonsBroadcast) {
  const std::vector<TestTensor> in = {F32({2, 3}, {1, 2, 3, 4, 5, 6}),
                                      F32({3}, {2, 2, 7})};
  auto less = Run<uint8_t>(KILN_OP_LESS, in, KILN_TYPE_BOOL);
  ASSERT_TRUE(less.status.ok()) << less.status;
  EXPECT_THAT(less.shape, ElementsAre(2, 3));
  EXPECT_THAT(less.values, ElementsAre(1, 0, 1, 0, 0, 1));
  auto less_equal = Run<uint8_t>(KILN_OP_LESS_EQUAL, in, KILN_TYPE_BOOL);
  EXPECT_THAT(less_equal.values, ElementsAre(1, 1, 1, 0, 0, 1));
  auto greater = Run<uint8_t>(KILN_OP_GREATER, in, KILN_TYPE_BOOL);
  EXPECT_THAT(greater.values, ElementsAre(0, 0, 0, 1, 1, 0));
  auto greater_equal = Run<uint8_t>(KILN_OP_GREATER_EQUAL, in, KILN_TYPE_BOOL);
  EXPECT_THAT(greater_equal.values, ElementsAre(0, 1, 0, 1, 1, 0));
}

TEST_F(ElementwiseTest, ComparisonsOnIntegersAndNan) {
  auto less64 = Run<uint8_t>(
      KILN_OP_LESS, {I64({3}, {-(int64_t{1} << 40), 0, 5}), I64({}, {0})},
      KILN_TYPE_BOOL);
  ASSERT_TRUE(less64.status.ok()) << less64.status;
  EXPECT_THAT(less64.values, ElementsAre(1, 0, 0));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto equal = Run<uint8_t>(KILN_OP_EQUAL,
                            {F32({3}, {nan, 1, 2}), F32({3}, {nan, 1, 3})},
                            KILN_TYPE_BOOL);
  EXPECT_THAT(equal.values, ElementsAre(0, 1, 0));
  auto not_equal = Run<uint8_t>(
      KILN_OP_NOT_EQUAL, {I32({3}, {1, 2, 3}), I32({1}, {2})}, KILN_TYPE_BOOL);
  EXPECT_THAT(not_equal.values, ElementsAre(1, 0, 1));
}

TEST_F(ElementwiseTest, EqualOnBoolNormalisesBytes) {
  // Any non-zero byte is true.
  auto r =
      Run<uint8_t>(KILN_OP_EQUAL, {Bool({3}, {2, 0, 1}), Bool({3}, {1, 0, 0})},
                   KILN_TYPE_BOOL);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(r.values, ElementsAre(1, 1, 0));
}

TEST_F(ElementwiseTest, ComparisonsRefuseWrongTypes) {
  auto bool_less = Run<uint8_t>(KILN_OP_LESS, {Bool({1}, {1}), Bool({1}, {0})},
                                KILN_TYPE_BOOL);
  ASSERT_FALSE(bool_less.status.ok());
  EXPECT_THAT(Message(bool_less),
              HasSubstr("LESS input 0 (tensor 't0') has type BOOL; supports "
                        "FLOAT32, INT32, INT64"));
  auto float_out = Run<float>(KILN_OP_GREATER, {F32({1}, {1}), F32({1}, {0})},
                              KILN_TYPE_FLOAT32);
  ASSERT_FALSE(float_out.status.ok());
  EXPECT_THAT(Message(float_out),
              HasSubstr("GREATER output 0 (tensor 't2') has "
                        "type FLOAT32; supports BOOL"));
}

TEST_F(ElementwiseTest, LogicalOps) {
  auto and_op = Run<uint8_t>(KILN_OP_LOGICAL_AND,
                             {Bool({2, 2}, {1, 1, 0, 0}), Bool({2}, {1, 0})},
                             KILN_TYPE_BOOL);
  ASSERT_TRUE(and_op.status.ok()) << and_op.status;
  EXPECT_THAT(and_op.values, ElementsAre(1, 0, 0, 0));
  auto or_op = Run<uint8_t>(KILN_OP_LOGICAL_OR,
                            {Bool({2, 2}, {1, 1, 0, 0}), Bool({2}, {1, 0})},
                            KILN_TYPE_BOOL);
  EXPECT_THAT(or_op.values, ElementsAre(1, 1, 1, 0));
  auto not_op =
      Run<uint8_t>(KILN_OP_LOGICAL_NOT, {Bool({3}, {1, 0, 7})}, KILN_TYPE_BOOL);
  ASSERT_TRUE(not_op.status.ok()) << not_op.status;
  EXPECT_THAT(not_op.values, ElementsAre(0, 1, 0));
  auto float_and = Run<uint8_t>(KILN_OP_LOGICAL_AND,
                                {F32({1}, {1}), F32({1}, {1})}, KILN_TYPE_BOOL);
  ASSERT_FALSE(float_and.status.ok());
  EXPECT_THAT(Message(float_and),
              HasSubstr("LOGICAL_AND input 0 (tensor 't0') has type FLOAT32; "
                        "supports BOOL"));
}

TEST_F(ElementwiseTest, SelectV2BroadcastsAllThreeInputs) {
  // cond [2,1], x [1,3], y scalar -> [2,3]
  auto r = RunF(KILN_OP_SELECT_V2,
                {Bool({2, 1}, {1, 0}), F32({1, 3}, {1, 2, 3}), F32({}, {-1})});
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(r.shape, ElementsAre(2, 3));
  EXPECT_THAT(r.values, ElementsAre(1, 2, 3, -1, -1, -1));
  auto i64 = Run<int64_t>(KILN_OP_SELECT_V2,
                          {Bool({3}, {0, 1, 0}), I64({3}, {1, 2, 3}),
                           I64({3}, {-(int64_t{1} << 50), -2, -3})},
                          KILN_TYPE_INT64);
  ASSERT_TRUE(i64.status.ok()) << i64.status;
  EXPECT_THAT(i64.values, ElementsAre(-(int64_t{1} << 50), 2, -3));
  std::vector<int16_t> x = {1, 2}, y = {-1, -2};
  auto i16 =
      Run<int16_t>(KILN_OP_SELECT_V2,
                   {Bool({2}, {1, 0}), TestTensor::Of(KILN_TYPE_INT16, {2}, x),
                    TestTensor::Of(KILN_TYPE_INT16, {2}, y)},
                   KILN_TYPE_INT16);
  EXPECT_THAT(i16.values, ElementsAre(1, -2));
}

TEST_F(ElementwiseTest, SelectV2RefusesNonBoolConditionAndMixedTypes) {
  auto cond =
      RunF(KILN_OP_SELECT_V2, {F32({1}, {1}), F32({1}, {1}), F32({1}, {2})});
  ASSERT_FALSE(cond.status.ok());
  EXPECT_THAT(Message(cond),
              HasSubstr("SELECT_V2 input 0 (tensor 't0') has type FLOAT32; "
                        "supports BOOL"));
  auto mixed =
      RunF(KILN_OP_SELECT_V2, {Bool({1}, {1}), F32({1}, {1}), I32({1}, {2})});
  ASSERT_FALSE(mixed.status.ok());
  EXPECT_THAT(Message(mixed), HasSubstr("input 2 (tensor 't2') has type INT32 "
                                        "but input 1"));
  auto shapes = RunF(KILN_OP_SELECT_V2,
                     {Bool({2}, {1, 0}), F32({3}, {1, 2, 3}), F32({1}, {0})});
  ASSERT_FALSE(shapes.status.ok());
  EXPECT_THAT(Message(shapes), HasSubstr("SELECT_V2 input shapes [2] and [3] "
                                         "and [1] cannot be broadcast"));
}

}  // namespace
}  // namespace kiln
