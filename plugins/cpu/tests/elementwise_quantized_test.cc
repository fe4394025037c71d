// Quantized (UINT8 / INT8) ADD of the CPU plugin. Expected integers come from
// the LiteRT interpreter's builtin ADD run once on single-op models with the
// same inputs, scales and zero points (built with ai_edge_litert's schema
// bindings), pasted here; Kiln must match them exactly.
#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/elementwise_test_util.h"

namespace kiln {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Quantization PerTensor(float scale, int64_t zero_point) {
  Quantization q;
  q.scales = {scale};
  q.zero_points = {zero_point};
  return q;
}

class QuantizedAddTest : public ElementwiseTest {
 protected:
  template <typename T>
  NodeResult<T> Add(KilnTensorType type, int32_t version,
                    std::vector<int32_t> a_shape, std::vector<T> a,
                    std::vector<int32_t> b_shape, std::vector<T> b,
                    Quantization qa, Quantization qb, Quantization qout,
                    int64_t activation) {
    TestTensor ta = TestTensor::Of(type, std::move(a_shape), a);
    ta.quantization = std::move(qa);
    TestTensor tb = TestTensor::Of(type, std::move(b_shape), b);
    tb.quantization = std::move(qb);
    return RunOn<T>(Kernel(KILN_OP_ADD, version), KILN_OP_ADD, version,
                    {ta, tb}, OutputSpec{type, std::move(qout)},
                    Activation(activation));
  }
};

const std::vector<uint8_t> kU8A = {0, 17, 100, 128, 200, 255};
const std::vector<uint8_t> kU8B = {3, 140, 250};

TEST_F(QuantizedAddTest, Uint8BroadcastMatchesLiteRt) {
  auto r = Add<uint8_t>(KILN_TYPE_UINT8, 1, {1, 2, 3}, kU8A, {3}, kU8B,
                        PerTensor(0.05f, 128), PerTensor(0.1f, 100),
                        PerTensor(0.08f, 120), KILN_ACTIVATION_NONE);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(r.shape, ElementsAre(1, 2, 3));
  EXPECT_THAT(r.values, ElementsAre(0, 101, 255, 0, 215, 255));
}

TEST_F(QuantizedAddTest, Uint8Relu6ClampsInQuantizedDomain) {
  // RELU6 on scale 0.08, zero point 120: [120, 120 + round(6 / 0.08)].
  auto r = Add<uint8_t>(KILN_TYPE_UINT8, 1, {1, 2, 3}, kU8A, {3}, kU8B,
                        PerTensor(0.05f, 128), PerTensor(0.1f, 100),
                        PerTensor(0.08f, 120), KILN_ACTIVATION_RELU6);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(r.values, ElementsAre(120, 120, 195, 120, 195, 195));
}

const std::vector<int8_t> kI8A = {-128, -50, -1, 0, 1, 37, 99, 127};
const std::vector<int8_t> kI8B = {127, -128, 5, -7, 64, -64, 0, 100};

TEST_F(QuantizedAddTest, Int8MatchesLiteRt) {
  auto r = Add<int8_t>(KILN_TYPE_INT8, 2, {2, 4}, kI8A, {2, 4}, kI8B,
                       PerTensor(0.02f, -10), PerTensor(0.013f, 3),
                       PerTensor(0.03f, -20), KILN_ACTIVATION_NONE);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(r.values, ElementsAre(-45, -103, -13, -18, 14, -18, 51, 113));
}

TEST_F(QuantizedAddTest, Int8ReluClampsAtOutputZeroPoint) {
  auto r = Add<int8_t>(KILN_TYPE_INT8, 2, {2, 4}, kI8A, {2, 4}, kI8B,
                       PerTensor(0.02f, -10), PerTensor(0.013f, 3),
                       PerTensor(0.03f, -20), KILN_ACTIVATION_RELU);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(r.values, ElementsAre(-20, -20, -13, -18, 14, -18, 51, 113));
}

TEST_F(QuantizedAddTest, RefusesMissingQuantizationAndTanh) {
  auto unquantized = Add<int8_t>(KILN_TYPE_INT8, 2, {2}, {1, 2}, {2}, {3, 4},
                                 PerTensor(0.1f, 0), Quantization{},
                                 PerTensor(0.1f, 0), KILN_ACTIVATION_NONE);
  ASSERT_FALSE(unquantized.status.ok());
  EXPECT_THAT(Message(unquantized),
              HasSubstr("input 1 (tensor 't1') has type INT8 but no "
                        "quantization parameters"));
  auto tanh = Add<int8_t>(KILN_TYPE_INT8, 2, {2}, {1, 2}, {2}, {3, 4},
                          PerTensor(0.1f, 0), PerTensor(0.1f, 0),
                          PerTensor(0.1f, 0), KILN_ACTIVATION_TANH);
  ASSERT_FALSE(tanh.status.ok());
  EXPECT_THAT(Message(tanh),
              HasSubstr("ADD fused activation TANH is not defined "
                        "for INT8 outputs"));
}

}  // namespace
}  // namespace kiln
