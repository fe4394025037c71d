// The 8-bit SOFTMAX / LOG_SOFTMAX lookup tables (softmax_exp_table.h) against
// TFLite's reference fixed-point algorithm computed directly, element by
// element, for every possible input difference (-255..0) and several input
// scales and betas: first the table entries themselves, then the CPU
// plugin's kernels on rows that contain every difference against the
// reference kernels (reference_ops::Softmax / LogSoftmax for 8-bit inputs)
// written out here with no table. The fixed-point primitives
// (quantization_util.h) are checked against LiteRT by
// cpu_nn_quantized_vs_litert.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/nn/softmax_exp_table.h"
#include "kernels/quantization_util.h"
#include "tests/elementwise_test_util.h"

namespace kiln {
namespace {

using cpu::CalculateInputRadius;
using cpu::ExpOnNegativeValues;
using cpu::Fixed32;
using cpu::GetReciprocal;
using cpu::LogXForXGreaterThanOrEqualTo1;
using cpu::MultiplyByQuantizedMultiplier;
using cpu::MultiplyByQuantizedMultiplierGreaterThanOne;
using cpu::PreprocessSoftmaxScaling;
using cpu::QuantizedMultiplier;
using cpu::Rescale;
using cpu::RoundingDivideByPOT;
using ::testing::ElementsAreArray;

using ScaledDiff = Fixed32<5>;
using Accum = Fixed32<12>;

struct ScaleBeta {
  float scale;
  float beta;
};
// From diff_min below -255 (no cutoff) to diff_min near -10 (most
// differences cut off), including betas other than 1.
const ScaleBeta kCases[] = {{0.002f, 1.f},  {0.01f, 1.f}, {0.05f, 0.5f},
                            {0.0625f, 1.f}, {0.1f, 2.f},  {0.25f, 1.f},
                            {0.5f, 1.5f},   {1.f, 1.f},   {3.f, 1.f}};

struct SoftmaxParams {
  QuantizedMultiplier multiplier;
  int32_t diff_min = 0;
};

SoftmaxParams Params(float scale, float beta) {
  SoftmaxParams p;
  EXPECT_TRUE(PreprocessSoftmaxScaling(beta, scale, 5, &p.multiplier));
  p.diff_min = -CalculateInputRadius(5, p.multiplier.shift);
  return p;
}

Fixed32<0> DirectSoftmaxExp(const SoftmaxParams& p, int32_t d) {
  return ExpOnNegativeValues(ScaledDiff::FromRaw(
      MultiplyByQuantizedMultiplierGreaterThanOne(d, p.multiplier)));
}

TEST(SoftmaxExpTableTest, SoftmaxTablesEqualTheDirectExpForEveryDifference) {
  int cut_cases = 0;
  for (const ScaleBeta& c : kCases) {
    SCOPED_TRACE(testing::Message()
                 << "scale " << c.scale << " beta " << c.beta);
    const SoftmaxParams p = Params(c.scale, c.beta);
    std::vector<int32_t> exp, exp_accum;
    cpu::nn::FillSoftmaxExpTables(p.multiplier, p.diff_min, &exp, &exp_accum);
    ASSERT_EQ(exp.size(), 256u);
    ASSERT_EQ(exp_accum.size(), 256u);
    if (p.diff_min > -255) ++cut_cases;
    for (int32_t d = -255; d <= 0; ++d) {
      SCOPED_TRACE(testing::Message() << "difference " << d);
      const size_t i = static_cast<size_t>(255 + d);
      if (d < p.diff_min) {
        // Cut off: no share of the sum and an output of 0 (the minimum).
        EXPECT_EQ(exp[i], 0);
        EXPECT_EQ(exp_accum[i], 0);
        continue;
      }
      const Fixed32<0> e = DirectSoftmaxExp(p, d);
      EXPECT_EQ(exp[i], e.raw);
      EXPECT_EQ(exp_accum[i], Rescale<12>(e).raw);
    }
  }
  EXPECT_GE(cut_cases, 3);  // the cutoff is exercised
}

TEST(SoftmaxExpTableTest, LogSoftmaxTablesEqualTheDirectValuesForEveryDiff) {
  for (const ScaleBeta& c : kCases) {
    SCOPED_TRACE(testing::Message() << "scale " << c.scale);
    const SoftmaxParams p = Params(c.scale, 1.f);
    std::vector<int32_t> scaled, exp_accum;
    cpu::nn::FillLogSoftmaxTables(p.multiplier, p.diff_min, &scaled,
                                  &exp_accum);
    ASSERT_EQ(scaled.size(), 256u);
    ASSERT_EQ(exp_accum.size(), 256u);
    for (int32_t d = -255; d <= 0; ++d) {
      SCOPED_TRACE(testing::Message() << "difference " << d);
      const size_t i = static_cast<size_t>(255 + d);
      const int32_t s = MultiplyByQuantizedMultiplier(d, p.multiplier);
      EXPECT_EQ(scaled[i], s);
      EXPECT_EQ(
          exp_accum[i],
          d < p.diff_min
              ? 0
              : Rescale<12>(ExpOnNegativeValues(ScaledDiff::FromRaw(s))).raw);
    }
  }
}

// TFLite's reference_ops::Softmax for 8-bit input, one row, no table.
template <typename In, typename Out>
std::vector<Out> ReferenceSoftmaxRow(const SoftmaxParams& p,
                                     const std::vector<In>& x) {
  const int32_t max_in_row = *std::max_element(x.begin(), x.end());
  Accum sum = Accum::FromRaw(0);
  for (In v : x) {
    const int32_t d = v - max_in_row;
    if (d >= p.diff_min) sum = sum + Rescale<12>(DirectSoftmaxExp(p, d));
  }
  int num_bits_over_unit = 0;
  const Fixed32<0> shifted_scale =
      Fixed32<0>::FromRaw(GetReciprocal(sum.raw, 12, &num_bits_over_unit));
  const int exponent =
      num_bits_over_unit + 31 - static_cast<int>(sizeof(Out) * 8);
  constexpr int32_t kMin = std::numeric_limits<Out>::min();
  constexpr int32_t kMax = std::numeric_limits<Out>::max();
  std::vector<Out> y;
  for (In v : x) {
    const int32_t d = v - max_in_row;
    if (d < p.diff_min) {
      y.push_back(static_cast<Out>(kMin));
      continue;
    }
    const int32_t unsat = RoundingDivideByPOT(
        (shifted_scale * DirectSoftmaxExp(p, d)).raw, exponent);
    y.push_back(static_cast<Out>(std::clamp(unsat + kMin, kMin, kMax)));
  }
  return y;
}

// TFLite's reference LogSoftmax for 8-bit input (beta 1), one row.
template <typename T>
std::vector<T> ReferenceLogSoftmaxRow(const SoftmaxParams& p,
                                      const std::vector<T>& x) {
  // PreprocessLogSoftmaxScalingExp's reverse scaling.
  const QuantizedMultiplier reverse = cpu::QuantizeMultiplier(
      static_cast<double>(int64_t{1} << (31 - p.multiplier.shift)) /
      static_cast<double>(p.multiplier.multiplier));
  const int32_t max_in_row = *std::max_element(x.begin(), x.end());
  Accum sum = Accum::FromRaw(0);
  for (T v : x) {
    const int32_t d = v - max_in_row;
    if (d >= p.diff_min) {
      sum = sum + Rescale<12>(ExpOnNegativeValues(ScaledDiff::FromRaw(
                      MultiplyByQuantizedMultiplier(d, p.multiplier))));
    }
  }
  const int32_t log_sum = LogXForXGreaterThanOrEqualTo1<5>(sum).raw;
  const int32_t adjusted_diff_min = std::max(
      p.diff_min - 1,
      MultiplyByQuantizedMultiplier(
          static_cast<int32_t>(static_cast<uint32_t>(log_sum) + 0x80000000u),
          reverse));
  constexpr int32_t kMin = std::numeric_limits<T>::min();
  constexpr int32_t kMax = std::numeric_limits<T>::max();
  std::vector<T> y;
  for (T v : x) {
    const int32_t d = v - max_in_row;
    if (d <= adjusted_diff_min) {
      y.push_back(static_cast<T>(kMin));
      continue;
    }
    const int32_t scaled = MultiplyByQuantizedMultiplier(d, p.multiplier);
    const int32_t out =
        RoundingDivideByPOT(scaled - log_sum, 31 - 5 - 4) + kMax;
    y.push_back(static_cast<T>(std::clamp(out, kMin, kMax)));
  }
  return y;
}

// Rows of 256 values: every value of T once (every difference -255..0),
// the same reversed, a seeded pseudo-random row and a constant row.
template <typename T>
std::vector<std::vector<T>> TestRows() {
  std::vector<T> all, reversed, random, constant(256, T{3});
  for (int32_t v = std::numeric_limits<T>::min();
       v <= std::numeric_limits<T>::max(); ++v) {
    all.push_back(static_cast<T>(v));
  }
  reversed.assign(all.rbegin(), all.rend());
  uint32_t state = 12345;
  for (int i = 0; i < 256; ++i) {
    state = state * 1664525u + 1013904223u;
    random.push_back(static_cast<T>(static_cast<int32_t>(state >> 24) +
                                    std::numeric_limits<T>::min()));
  }
  return {all, reversed, random, constant};
}

template <typename T>
std::vector<T> Flatten(const std::vector<std::vector<T>>& rows) {
  std::vector<T> flat;
  for (const auto& row : rows) flat.insert(flat.end(), row.begin(), row.end());
  return flat;
}

Quantization Quant(float scale, int64_t zero_point) {
  Quantization q;
  q.scales = {scale};
  q.zero_points = {zero_point};
  return q;
}

class SoftmaxTableKernelTest : public ElementwiseTest {
 protected:
  template <typename In, typename Out>
  void ExpectSoftmaxMatchesReference(KilnTensorType in_type,
                                     KilnTensorType out_type,
                                     Quantization out_quant, int32_t version);
  template <typename T>
  void ExpectLogSoftmaxMatchesReference(KilnTensorType type, int32_t zero_point,
                                        int32_t version);
};

template <typename In, typename Out>
void SoftmaxTableKernelTest::ExpectSoftmaxMatchesReference(
    KilnTensorType in_type, KilnTensorType out_type, Quantization out_quant,
    int32_t version) {
  const std::vector<std::vector<In>> rows = TestRows<In>();
  for (const ScaleBeta& c : kCases) {
    SCOPED_TRACE(testing::Message()
                 << "scale " << c.scale << " beta " << c.beta);
    const SoftmaxParams p = Params(c.scale, c.beta);
    std::vector<std::vector<Out>> expected;
    for (const auto& row : rows) {
      expected.push_back(ReferenceSoftmaxRow<In, Out>(p, row));
    }
    TestTensor x = TestTensor::Of(in_type, {4, 256}, Flatten(rows));
    x.quantization = Quant(c.scale, 0);
    const float beta = c.beta;
    auto r =
        RunOn<Out>(Kernel(KILN_OP_SOFTMAX, version), KILN_OP_SOFTMAX, version,
                   {x}, OutputSpec{out_type, out_quant},
                   [beta](Node& n) { n.SetFloat(KILN_OPTION_BETA, beta); });
    ASSERT_TRUE(r.status.ok()) << r.status;
    EXPECT_THAT(r.values, ElementsAreArray(Flatten(expected)));
  }
}

TEST_F(SoftmaxTableKernelTest, SoftmaxInt8MatchesTheDirectReference) {
  ExpectSoftmaxMatchesReference<int8_t, int8_t>(KILN_TYPE_INT8, KILN_TYPE_INT8,
                                                Quant(1.f / 256, -128), 2);
}

TEST_F(SoftmaxTableKernelTest, SoftmaxUint8MatchesTheDirectReference) {
  ExpectSoftmaxMatchesReference<uint8_t, uint8_t>(
      KILN_TYPE_UINT8, KILN_TYPE_UINT8, Quant(1.f / 256, 0), 1);
}

TEST_F(SoftmaxTableKernelTest, SoftmaxInt8ToInt16MatchesTheDirectReference) {
  ExpectSoftmaxMatchesReference<int8_t, int16_t>(
      KILN_TYPE_INT8, KILN_TYPE_INT16, Quant(1.f / 65536, -32768), 3);
}

template <typename T>
void SoftmaxTableKernelTest::ExpectLogSoftmaxMatchesReference(
    KilnTensorType type, int32_t zero_point, int32_t version) {
  const std::vector<std::vector<T>> rows = TestRows<T>();
  for (const ScaleBeta& c : kCases) {
    // TFLite's LOG_SOFTMAX needs the multiplier's shift >= 1 (scale >=
    // 2^-25 or so); all cases here have it.
    SCOPED_TRACE(testing::Message() << "scale " << c.scale);
    const SoftmaxParams p = Params(c.scale, 1.f);
    std::vector<std::vector<T>> expected;
    for (const auto& row : rows) {
      expected.push_back(ReferenceLogSoftmaxRow<T>(p, row));
    }
    TestTensor x = TestTensor::Of(type, {4, 256}, Flatten(rows));
    x.quantization = Quant(c.scale, 0);
    auto r =
        RunOn<T>(Kernel(KILN_OP_LOG_SOFTMAX, version), KILN_OP_LOG_SOFTMAX,
                 version, {x}, OutputSpec{type, Quant(16.f / 256, zero_point)});
    ASSERT_TRUE(r.status.ok()) << r.status;
    EXPECT_THAT(r.values, ElementsAreArray(Flatten(expected)));
  }
}

TEST_F(SoftmaxTableKernelTest, LogSoftmaxInt8MatchesTheDirectReference) {
  ExpectLogSoftmaxMatchesReference<int8_t>(KILN_TYPE_INT8, 127, 2);
}

TEST_F(SoftmaxTableKernelTest, LogSoftmaxUint8MatchesTheDirectReference) {
  ExpectLogSoftmaxMatchesReference<uint8_t>(KILN_TYPE_UINT8, 255, 1);
}

}  // namespace
}  // namespace kiln
