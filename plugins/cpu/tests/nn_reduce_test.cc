// CPU plugin neural-net kernels: MEAN, SUM, REDUCE_PROD/MAX/MIN/ANY/ALL,
// ARG_MAX, ARG_MIN, TOPK_V2, and the value-dependent output-shape contract.
// Expected values come from the LiteRT interpreter's builtin kernels run once
// on single-op models built from the same inputs, pasted here.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/graph.h"
#include "runtime/single_node_runner.h"
#include "tests/cpu_kernel_test_util.h"

namespace kiln {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pointwise;

// ((i * a) % m - m / 2) / 4 for element i.
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

// (i * 5) % 7 - 3 for element i, times `scale`.
template <typename T>
std::vector<T> IntPattern(int64_t n, T scale = 1, T offset = 0) {
  std::vector<T> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    v[static_cast<size_t>(i)] =
        static_cast<T>(((i * 5) % 7 - 3) * scale + offset);
  }
  return v;
}

constexpr float kTol = 1e-5f;

// Shape {2, 1, 1}.
const std::vector<float> kMean13Keep = {-0.10416666f, 0.041666668f};

// Shape {3, 4}.
const std::vector<float> kMean0 = {-0.375f, 0.0f,   0.375f, 0.75f,
                                   -0.25f,  0.125f, 0.5f,   -0.5f,
                                   -0.125f, 0.25f,  -0.75f, -0.375f};

// Shape {2, 4}.
const std::vector<float> kSumNegDup = {-2.0f, 0.5f,  0.25f, 0.0f,
                                       0.5f,  0.25f, 0.0f,  -0.25f};

// Shape {}.
const std::vector<float> kSumAll = {-0.75f};

// Shape {2, 3}.
const std::vector<float> kMax2 = {1.25f, 1.0f, 0.75f, 1.25f, 1.0f, 0.75f};

// Shape {1, 1, 4}.
const std::vector<float> kMin01Keep = {-1.25f, -0.75f, -1.25f, -1.25f};

// Shape {2, 4}.
const std::vector<float> kProd1 = {1.6875f,  8.59375f, 7.875f, 4.875f,
                                   8.59375f, 7.875f,   4.875f, 5.625f};

// Shape {2, 4}.
const std::vector<int32_t> kIsum1 = {2, 3, -3, -2, 0, -6, 2, 3};

// Shape {1, 3, 4}.
const std::vector<int32_t> kImax0 = {1, 2, 0, 2, 3, 1, 3, 1, 2, 0, 2, 3};

// Shape {2, 3}.
const std::vector<int32_t> kImean2 = {-2, 0, 2, 0, 1, -1};

// Shape {2, 3}.
const std::vector<int64_t> kIprod2 = {48, 105, 336, 90, 280, 72};

// Shape {3}.
const std::vector<uint8_t> kAny1 = {1, 1, 0};

// Shape {4}.
const std::vector<uint8_t> kAll0 = {0, 1, 0, 1};

// Shape {3}.
const std::vector<int32_t> kArgmaxTies1 = {1, 0, 0};

// Shape {3}.
const std::vector<int64_t> kArgminTies1 = {3, 2, 1};

// Shape {4}.
const std::vector<int64_t> kArgmax0 = {2, 0, 2, 0};

// Shape {2, 4}.
const std::vector<float> kTopkVals = {3.0f, 3.0f, 3.0f, 2.0f,
                                      7.0f, 5.0f, 5.0f, 5.0f};

// Shape {2, 4}.
const std::vector<int32_t> kTopkIdx = {1, 2, 4, 5, 5, 0, 2, 3};

// Shape {3}.
const std::vector<int32_t> kTopkIvals = {9, 4, 4};

// Shape {3}.
const std::vector<int32_t> kTopkIidx = {3, 0, 2};

// Runs a reduction of `input` over the constant `axes`.
template <typename T>
absl::Status RunReduce(CpuKernelTest* test, const KilnKernel& kernel,
                       int32_t code, KilnTensorType type,
                       const std::vector<int32_t>& shape,
                       const std::vector<T>& input,
                       const std::vector<int32_t>& axes, bool keep_dims,
                       SingleNodeRunner& r, int* out) {
  (void)test;
  int x = r.AddTensor<T>(type, shape, input);
  int a = r.AddTensor<int32_t>(KILN_TYPE_INT32,
                               {static_cast<int32_t>(axes.size())}, axes, true);
  *out = r.AddTensor(type, {});
  r.SetOp(code, 1, {x, a}, {*out});
  r.node().SetInt(KILN_OPTION_KEEP_DIMS, keep_dims ? 1 : 0);
  return r.Run(kernel);
}

TEST_F(CpuKernelTest, MeanKeepDimsWithNegativeAxis) {
  SingleNodeRunner r;
  int out;
  ASSERT_TRUE(RunReduce<float>(this, Kernel(KILN_OP_MEAN), KILN_OP_MEAN,
                               KILN_TYPE_FLOAT32, {2, 3, 4}, Pattern({2, 3, 4}),
                               {1, -1}, true, r, &out)
                  .ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(2, 1, 1));
  EXPECT_THAT(r.Values<float>(out), Pointwise(FloatNear(kTol), kMean13Keep));
}

TEST_F(CpuKernelTest, MeanOverLeadingAxis) {
  SingleNodeRunner r;
  int out;
  ASSERT_TRUE(RunReduce<float>(this, Kernel(KILN_OP_MEAN), KILN_OP_MEAN,
                               KILN_TYPE_FLOAT32, {2, 3, 4}, Pattern({2, 3, 4}),
                               {0}, false, r, &out)
                  .ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(3, 4));
  EXPECT_THAT(r.Values<float>(out), Pointwise(FloatNear(kTol), kMean0));
}

// Float MEAN / SUM over the last axis (with a reduced axis of size 1) sum
// each row in order from 0, as LiteRT's reference kernel: bit for bit the
// sequential float sums (computed here), on rows whose order of addition
// changes the rounding: 11 rows (eight at a time plus a tail), 75 rows (two
// 32-row blocks of four eight-row groups, one group, a tail) and 40 rows of
// 131 values (columns four at a time plus a tail of 3).
TEST_F(CpuKernelTest, MeanAndSumOverLastAxisAddInOrder) {
  for (const auto& [rows, n] :
       {std::pair<size_t, size_t>{11, 37}, {75, 37}, {40, 131}, {32, 128}}) {
    SCOPED_TRACE(std::to_string(rows) + " rows of " + std::to_string(n));
    const std::vector<int32_t> shape = {static_cast<int32_t>(rows), 1,
                                        static_cast<int32_t>(n)};
    std::vector<float> x(rows * n);
    for (size_t i = 0; i < x.size(); ++i) {
      x[i] = static_cast<float>(static_cast<int64_t>(i * 7919 % 1000) - 500) *
             (i % 3 == 0 ? 1e3f : 1.37e-3f);
    }
    std::vector<float> sums(rows), means(rows);
    for (size_t r = 0; r < rows; ++r) {
      float acc = 0.f;
      for (size_t i = 0; i < n; ++i) acc += x[r * n + i];
      sums[r] = acc;
      means[r] = acc / static_cast<float>(n);
    }
    // {1, 2}: two reduced axes (RunReduce); {2} and {-1, 2}: one reduced
    // axis (the row sums of FloatOneAxisSum).
    for (const auto& axes : {std::vector<int32_t>{1, 2}, {2}, {-1, 2}}) {
      for (const int32_t op : {KILN_OP_SUM, KILN_OP_MEAN}) {
        SingleNodeRunner r;
        int out;
        ASSERT_TRUE(RunReduce<float>(this, Kernel(op), op, KILN_TYPE_FLOAT32,
                                     shape, x, axes, false, r, &out)
                        .ok());
        EXPECT_THAT(r.Values<float>(out),
                    ElementsAreArray(op == KILN_OP_SUM ? sums : means));
      }
    }
  }
}

// Float MEAN / SUM over one middle axis: each output adds its column in
// input order from 0 (so -0 + -0 gives +0 as in LiteRT's reference
// kernel), bit for bit, with 19 values a row (AVX2 rows and a tail).
TEST_F(CpuKernelTest, MeanAndSumOverMiddleAxisAddInOrder) {
  const size_t outer = 3, reduced = 37, inner = 19;
  std::vector<float> x(outer * reduced * inner);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<float>(static_cast<int64_t>(i * 7919 % 1000) - 500) *
           (i % 3 == 0 ? 1e3f : 1.37e-3f);
  }
  for (size_t r = 0; r < reduced; ++r) x[r * inner] = -0.f;  // column 0
  std::vector<float> sums(outer * inner), means(outer * inner);
  for (size_t o = 0; o < outer; ++o) {
    for (size_t i = 0; i < inner; ++i) {
      float acc = 0.f;
      for (size_t r = 0; r < reduced; ++r) {
        acc += x[(o * reduced + r) * inner + i];
      }
      sums[o * inner + i] = acc;
      means[o * inner + i] = acc / static_cast<float>(reduced);
    }
  }
  for (const int32_t op : {KILN_OP_SUM, KILN_OP_MEAN}) {
    for (const bool keep_dims : {false, true}) {
      SingleNodeRunner r;
      int out;
      ASSERT_TRUE(RunReduce<float>(this, Kernel(op), op, KILN_TYPE_FLOAT32,
                                   {static_cast<int32_t>(outer),
                                    static_cast<int32_t>(reduced),
                                    static_cast<int32_t>(inner)},
                                   x, {-2}, keep_dims, r, &out)
                      .ok());
      const std::vector<float> got = r.Values<float>(out);
      EXPECT_THAT(got, ElementsAreArray(op == KILN_OP_SUM ? sums : means));
      EXPECT_FALSE(std::signbit(got[0]));
      if (keep_dims) {
        EXPECT_THAT(r.tensor(out).shape, ElementsAre(3, 1, 19));
      }
    }
  }
}

TEST_F(CpuKernelTest, SumDuplicateAxesCountOnce) {
  SingleNodeRunner r;
  int out;
  ASSERT_TRUE(RunReduce<float>(this, Kernel(KILN_OP_SUM), KILN_OP_SUM,
                               KILN_TYPE_FLOAT32, {2, 3, 4}, Pattern({2, 3, 4}),
                               {-2, 1}, false, r, &out)
                  .ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(2, 4));
  EXPECT_THAT(r.Values<float>(out), Pointwise(FloatNear(kTol), kSumNegDup));
}

TEST_F(CpuKernelTest, SumAllAxesGivesScalar) {
  SingleNodeRunner r;
  int out;
  ASSERT_TRUE(RunReduce<float>(this, Kernel(KILN_OP_SUM), KILN_OP_SUM,
                               KILN_TYPE_FLOAT32, {2, 3, 4}, Pattern({2, 3, 4}),
                               {0, 1, 2}, false, r, &out)
                  .ok());
  EXPECT_THAT(r.tensor(out).shape, IsEmpty());
  EXPECT_THAT(r.Values<float>(out), Pointwise(FloatNear(kTol), kSumAll));
}

TEST_F(CpuKernelTest, ReduceMaxMinProdFloat) {
  {
    SingleNodeRunner r;
    int out;
    ASSERT_TRUE(RunReduce<float>(this, Kernel(KILN_OP_REDUCE_MAX),
                                 KILN_OP_REDUCE_MAX, KILN_TYPE_FLOAT32,
                                 {2, 3, 4}, Pattern({2, 3, 4}), {2}, false, r,
                                 &out)
                    .ok());
    EXPECT_THAT(r.Values<float>(out), Pointwise(FloatNear(kTol), kMax2));
  }
  {
    SingleNodeRunner r;
    int out;
    ASSERT_TRUE(RunReduce<float>(this, Kernel(KILN_OP_REDUCE_MIN),
                                 KILN_OP_REDUCE_MIN, KILN_TYPE_FLOAT32,
                                 {2, 3, 4}, Pattern({2, 3, 4}), {0, 1}, true, r,
                                 &out)
                    .ok());
    EXPECT_THAT(r.tensor(out).shape, ElementsAre(1, 1, 4));
    EXPECT_THAT(r.Values<float>(out), Pointwise(FloatNear(kTol), kMin01Keep));
  }
  {
    SingleNodeRunner r;
    int out;
    std::vector<float> x = Pattern({2, 3, 4});
    for (float& v : x) v += 2.f;
    ASSERT_TRUE(RunReduce<float>(this, Kernel(KILN_OP_REDUCE_PROD),
                                 KILN_OP_REDUCE_PROD, KILN_TYPE_FLOAT32,
                                 {2, 3, 4}, x, {1}, false, r, &out)
                    .ok());
    EXPECT_THAT(r.Values<float>(out), Pointwise(FloatNear(kTol), kProd1));
  }
}

TEST_F(CpuKernelTest, ReduceIntegerTypes) {
  {
    SingleNodeRunner r;
    int out;
    ASSERT_TRUE(RunReduce<int32_t>(this, Kernel(KILN_OP_SUM), KILN_OP_SUM,
                                   KILN_TYPE_INT32, {2, 3, 4},
                                   IntPattern<int32_t>(24), {1}, false, r, &out)
                    .ok());
    EXPECT_THAT(r.Values<int32_t>(out), ElementsAreArray(kIsum1));
  }
  {
    SingleNodeRunner r;
    int out;
    ASSERT_TRUE(RunReduce<int32_t>(this, Kernel(KILN_OP_REDUCE_MAX),
                                   KILN_OP_REDUCE_MAX, KILN_TYPE_INT32,
                                   {2, 3, 4}, IntPattern<int32_t>(24), {0},
                                   true, r, &out)
                    .ok());
    EXPECT_THAT(r.tensor(out).shape, ElementsAre(1, 3, 4));
    EXPECT_THAT(r.Values<int32_t>(out), ElementsAreArray(kImax0));
  }
  {
    // Integer MEAN truncates toward zero, as TFLite does.
    SingleNodeRunner r;
    int out;
    ASSERT_TRUE(RunReduce<int32_t>(
                    this, Kernel(KILN_OP_MEAN), KILN_OP_MEAN, KILN_TYPE_INT32,
                    {2, 3, 4}, IntPattern<int32_t>(24, 3), {2}, false, r, &out)
                    .ok());
    EXPECT_THAT(r.Values<int32_t>(out), ElementsAreArray(kImean2));
  }
  {
    SingleNodeRunner r;
    int out;
    ASSERT_TRUE(RunReduce<int64_t>(this, Kernel(KILN_OP_REDUCE_PROD),
                                   KILN_OP_REDUCE_PROD, KILN_TYPE_INT64,
                                   {2, 3, 4}, IntPattern<int64_t>(24, 1, 4),
                                   {2}, false, r, &out)
                    .ok());
    EXPECT_THAT(r.Values<int64_t>(out), ElementsAreArray(kIprod2));
  }
}

TEST_F(CpuKernelTest, ReduceAnyAllOnBool) {
  std::vector<uint8_t> any_in(12), all_in(12);
  for (int i = 0; i < 12; ++i) {
    any_in[i] = i % 7 == 0;
    all_in[i] = i >= 4 || i % 2 == 1;
  }
  {
    SingleNodeRunner r;
    int out;
    ASSERT_TRUE(RunReduce<uint8_t>(this, Kernel(KILN_OP_REDUCE_ANY),
                                   KILN_OP_REDUCE_ANY, KILN_TYPE_BOOL, {3, 4},
                                   any_in, {1}, false, r, &out)
                    .ok());
    EXPECT_THAT(r.Values<uint8_t>(out), ElementsAreArray(kAny1));
  }
  {
    SingleNodeRunner r;
    int out;
    ASSERT_TRUE(RunReduce<uint8_t>(this, Kernel(KILN_OP_REDUCE_ALL),
                                   KILN_OP_REDUCE_ALL, KILN_TYPE_BOOL, {3, 4},
                                   all_in, {0}, false, r, &out)
                    .ok());
    EXPECT_THAT(r.Values<uint8_t>(out), ElementsAreArray(kAll0));
  }
}

TEST_F(CpuKernelTest, ReduceRefusesBadAxisAndTypes) {
  {
    SingleNodeRunner r;
    int out;
    absl::Status s = RunReduce<float>(this, Kernel(KILN_OP_SUM), KILN_OP_SUM,
                                      KILN_TYPE_FLOAT32, {2, 3},
                                      Pattern({2, 3}), {2}, false, r, &out);
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(std::string(s.message()), HasSubstr("axis 2"));
    EXPECT_THAT(std::string(s.message()), HasSubstr("rank 2"));
  }
  {
    SingleNodeRunner r;
    int out;
    absl::Status s =
        RunReduce<int8_t>(this, Kernel(KILN_OP_MEAN), KILN_OP_MEAN,
                          KILN_TYPE_INT8, {2}, {1, 2}, {0}, false, r, &out);
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(std::string(s.message()), HasSubstr("MEAN input"));
    EXPECT_THAT(std::string(s.message()), HasSubstr("INT8"));
    EXPECT_THAT(std::string(s.message()),
                HasSubstr("no quantization parameters"));
  }
  {
    SingleNodeRunner r;
    int out;
    absl::Status s = RunReduce<float>(this, Kernel(KILN_OP_REDUCE_ANY),
                                      KILN_OP_REDUCE_ANY, KILN_TYPE_FLOAT32,
                                      {2}, {1.f, 0.f}, {0}, false, r, &out);
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(std::string(s.message()), HasSubstr("supports BOOL"));
  }
}

// ---- ARG_MAX / ARG_MIN ------------------------------------------------------

const std::vector<float> kArgInput = {1, 3, 3, 0, 2, 2, -1, -1, 5, 0, 5, 0};

TEST_F(CpuKernelTest, ArgMaxArgMinPickFirstOfTies) {
  {
    SingleNodeRunner r;
    int x = r.AddTensor<float>(KILN_TYPE_FLOAT32, {3, 4}, kArgInput);
    int a = r.AddTensor<int32_t>(KILN_TYPE_INT32, {1}, {1}, true);
    int out = r.AddTensor(KILN_TYPE_INT32, {});
    r.SetOp(KILN_OP_ARG_MAX, 1, {x, a}, {out});
    r.node().SetInt(KILN_OPTION_OUTPUT_TYPE, KILN_TYPE_INT32);
    ASSERT_TRUE(r.Run(Kernel(KILN_OP_ARG_MAX)).ok());
    EXPECT_THAT(r.tensor(out).shape, ElementsAre(3));
    EXPECT_THAT(r.Values<int32_t>(out), ElementsAreArray(kArgmaxTies1));
  }
  {
    SingleNodeRunner r;
    int x = r.AddTensor<float>(KILN_TYPE_FLOAT32, {3, 4}, kArgInput);
    int a = r.AddTensor<int64_t>(KILN_TYPE_INT64, {1}, {-1}, true);
    int out = r.AddTensor(KILN_TYPE_INT64, {});
    r.SetOp(KILN_OP_ARG_MIN, 1, {x, a}, {out});
    ASSERT_TRUE(r.Run(Kernel(KILN_OP_ARG_MIN)).ok());
    EXPECT_THAT(r.Values<int64_t>(out), ElementsAreArray(kArgminTies1));
  }
  {
    SingleNodeRunner r;
    int x = r.AddTensor<float>(KILN_TYPE_FLOAT32, {3, 4}, kArgInput);
    int a = r.AddTensor<int32_t>(KILN_TYPE_INT32, {}, {0}, true);
    int out = r.AddTensor(KILN_TYPE_INT64, {});
    r.SetOp(KILN_OP_ARG_MAX, 1, {x, a}, {out});
    ASSERT_TRUE(r.Run(Kernel(KILN_OP_ARG_MAX)).ok());
    EXPECT_THAT(r.tensor(out).shape, ElementsAre(4));
    EXPECT_THAT(r.Values<int64_t>(out), ElementsAreArray(kArgmax0));
  }
}

// Stored values compare directly: int8 (v2), uint8 (v1), bool (v3).
TEST_F(CpuKernelTest, ArgMaxArgMinOnInt8Uint8AndBool) {
  const auto run = [this](int32_t op, int32_t version, KilnTensorType type,
                          std::vector<int32_t> shape,
                          const std::vector<uint8_t>& bytes) {
    SingleNodeRunner r;
    int x = r.AddTensor<uint8_t>(type, std::move(shape), bytes);
    int a = r.AddTensor<int32_t>(KILN_TYPE_INT32, {1}, {-1}, true);
    int out = r.AddTensor(KILN_TYPE_INT32, {});
    r.SetOp(op, version, {x, a}, {out});
    EXPECT_TRUE(r.Run(Kernel(op, version)).ok());
    return r.Values<int32_t>(out);
  };
  // int8 rows {-5, 7, 7} and {-128, -128, 100}, stored as bytes.
  const std::vector<uint8_t> int8_rows = {0xFB, 7, 7, 0x80, 0x80, 100};
  EXPECT_THAT(run(KILN_OP_ARG_MAX, 2, KILN_TYPE_INT8, {2, 3}, int8_rows),
              ElementsAre(1, 2));
  EXPECT_THAT(run(KILN_OP_ARG_MIN, 2, KILN_TYPE_INT8, {2, 3}, int8_rows),
              ElementsAre(0, 0));
  // As uint8 the same bytes order differently: 0xFB is the largest.
  EXPECT_THAT(run(KILN_OP_ARG_MAX, 1, KILN_TYPE_UINT8, {2, 3}, int8_rows),
              ElementsAre(0, 0));
  EXPECT_THAT(run(KILN_OP_ARG_MIN, 1, KILN_TYPE_UINT8, {2, 3}, int8_rows),
              ElementsAre(1, 2));
  const std::vector<uint8_t> bools = {0, 1, 1, 1, 0, 0};
  EXPECT_THAT(run(KILN_OP_ARG_MAX, 3, KILN_TYPE_BOOL, {3, 2}, bools),
              ElementsAre(1, 0, 0));
  EXPECT_THAT(run(KILN_OP_ARG_MIN, 3, KILN_TYPE_BOOL, {3, 2}, bools),
              ElementsAre(0, 0, 0));
}

TEST_F(CpuKernelTest, ArgMaxRefusesFloatOutputAndOptionMismatch) {
  {
    SingleNodeRunner r;
    int x = r.AddTensor<float>(KILN_TYPE_FLOAT32, {3, 4}, kArgInput);
    int a = r.AddTensor<int32_t>(KILN_TYPE_INT32, {1}, {1}, true);
    int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
    r.SetOp(KILN_OP_ARG_MAX, 1, {x, a}, {out});
    absl::Status s = r.Run(Kernel(KILN_OP_ARG_MAX));
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(std::string(s.message()), HasSubstr("ARG_MAX output"));
    EXPECT_THAT(std::string(s.message()), HasSubstr("INT32, INT64"));
  }
  {
    SingleNodeRunner r;
    int x = r.AddTensor<float>(KILN_TYPE_FLOAT32, {3, 4}, kArgInput);
    int a = r.AddTensor<int32_t>(KILN_TYPE_INT32, {1}, {1}, true);
    int out = r.AddTensor(KILN_TYPE_INT32, {});
    r.SetOp(KILN_OP_ARG_MAX, 1, {x, a}, {out});
    r.node().SetInt(KILN_OPTION_OUTPUT_TYPE, KILN_TYPE_INT64);
    absl::Status s = r.Run(Kernel(KILN_OP_ARG_MAX));
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(std::string(s.message()), HasSubstr("output_type option"));
  }
}

// ---- TOPK_V2 ----------------------------------------------------------------

TEST_F(CpuKernelTest, TopKTiesTakeLowerIndexFirst) {
  {
    SingleNodeRunner r;
    int x = r.AddTensor<float>(KILN_TYPE_FLOAT32, {2, 6},
                               {1, 3, 3, 0, 3, 2, 5, -1, 5, 5, 0, 7});
    int k = r.AddTensor<int32_t>(KILN_TYPE_INT32, {}, {4}, true);
    int values = r.AddTensor(KILN_TYPE_FLOAT32, {});
    int indices = r.AddTensor(KILN_TYPE_INT32, {});
    r.SetOp(KILN_OP_TOPK_V2, 1, {x, k}, {values, indices});
    ASSERT_TRUE(r.Run(Kernel(KILN_OP_TOPK_V2)).ok());
    EXPECT_THAT(r.tensor(values).shape, ElementsAre(2, 4));
    EXPECT_THAT(r.Values<float>(values), ElementsAreArray(kTopkVals));
    EXPECT_THAT(r.Values<int32_t>(indices), ElementsAreArray(kTopkIdx));
  }
  {
    SingleNodeRunner r;
    int x = r.AddTensor<int32_t>(KILN_TYPE_INT32, {5}, {4, 1, 4, 9, 1});
    int k = r.AddTensor<int32_t>(KILN_TYPE_INT32, {1}, {3}, true);
    int values = r.AddTensor(KILN_TYPE_INT32, {});
    int indices = r.AddTensor(KILN_TYPE_INT32, {});
    r.SetOp(KILN_OP_TOPK_V2, 1, {x, k}, {values, indices});
    ASSERT_TRUE(r.Run(Kernel(KILN_OP_TOPK_V2)).ok());
    EXPECT_THAT(r.Values<int32_t>(values), ElementsAreArray(kTopkIvals));
    EXPECT_THAT(r.Values<int32_t>(indices), ElementsAreArray(kTopkIidx));
  }
}

TEST_F(CpuKernelTest, TopKRefusesKLargerThanDepth) {
  SingleNodeRunner r;
  int x = r.AddTensor<float>(KILN_TYPE_FLOAT32, {3}, {1, 2, 3});
  int k = r.AddTensor<int32_t>(KILN_TYPE_INT32, {}, {4}, true);
  int values = r.AddTensor(KILN_TYPE_FLOAT32, {});
  int indices = r.AddTensor(KILN_TYPE_INT32, {});
  r.SetOp(KILN_OP_TOPK_V2, 1, {x, k}, {values, indices});
  absl::Status s = r.Run(Kernel(KILN_OP_TOPK_V2));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("k = 4"));
}

// ---- Value-dependent output shapes -----------------------------------------

// Gives a value-less tensor its values, as the host does once the producer
// of a non-constant input has run.
template <typename T>
void SetValues(SingleNodeRunner& r, int index, const std::vector<T>& values) {
  Tensor& t = r.tensor(index);
  t.AllocateOwned(values.size() * sizeof(T));
  std::memcpy(t.data, values.data(), values.size() * sizeof(T));
}

TEST_F(CpuKernelTest, ReductionWithComputedAxisIsSizedOnSecondPrepare) {
  SingleNodeRunner r;
  int x = r.AddTensor<float>(KILN_TYPE_FLOAT32, {2, 3, 4}, Pattern({2, 3, 4}));
  int axis = r.AddTensor(KILN_TYPE_INT32, {2});  // no values yet
  int out = r.AddTensor(KILN_TYPE_FLOAT32, {7});
  r.SetOp(KILN_OP_MEAN, 1, {x, axis}, {out});
  r.node().SetInt(KILN_OPTION_KEEP_DIMS, 1);
  std::string error;
  ASSERT_EQ(PrepareOnly(Kernel(KILN_OP_MEAN), r, &error), KILN_STATUS_OK)
      << error;
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(7));  // left unresized
  SetValues<int32_t>(r, axis, {1, -1});
  ASSERT_TRUE(r.Run(Kernel(KILN_OP_MEAN)).ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(2, 1, 1));
  EXPECT_THAT(r.Values<float>(out), Pointwise(FloatNear(kTol), kMean13Keep));
}

TEST_F(CpuKernelTest, ArgMaxAndTopKWithComputedInputsLeaveOutputsUnresized) {
  {
    SingleNodeRunner r;
    int x = r.AddTensor<float>(KILN_TYPE_FLOAT32, {3, 4}, kArgInput);
    int axis = r.AddTensor(KILN_TYPE_INT32, {1});
    int out = r.AddTensor(KILN_TYPE_INT32, {});
    r.SetOp(KILN_OP_ARG_MAX, 1, {x, axis}, {out});
    std::string error;
    ASSERT_EQ(PrepareOnly(Kernel(KILN_OP_ARG_MAX), r, &error), KILN_STATUS_OK)
        << error;
    EXPECT_THAT(r.tensor(out).shape, IsEmpty());
    SetValues<int32_t>(r, axis, {1});
    ASSERT_TRUE(r.Run(Kernel(KILN_OP_ARG_MAX)).ok());
    EXPECT_THAT(r.Values<int32_t>(out), ElementsAreArray(kArgmaxTies1));
  }
  {
    SingleNodeRunner r;
    int x = r.AddTensor<int32_t>(KILN_TYPE_INT32, {5}, {4, 1, 4, 9, 1});
    int k = r.AddTensor(KILN_TYPE_INT32, {});
    int values = r.AddTensor(KILN_TYPE_INT32, {});
    int indices = r.AddTensor(KILN_TYPE_INT32, {});
    r.SetOp(KILN_OP_TOPK_V2, 1, {x, k}, {values, indices});
    std::string error;
    ASSERT_EQ(PrepareOnly(Kernel(KILN_OP_TOPK_V2), r, &error), KILN_STATUS_OK)
        << error;
    EXPECT_THAT(r.tensor(values).shape, IsEmpty());
    EXPECT_THAT(r.tensor(indices).shape, IsEmpty());
    SetValues<int32_t>(r, k, {3});
    ASSERT_TRUE(r.Run(Kernel(KILN_OP_TOPK_V2)).ok());
    EXPECT_THAT(r.Values<int32_t>(indices), ElementsAreArray(kTopkIidx));
  }
}

TEST_F(CpuKernelTest, InvokeWithoutSecondPrepareReportsUnsizedOutput) {
  SingleNodeRunner r;
  int x = r.AddTensor<float>(KILN_TYPE_FLOAT32, {2, 3, 4}, Pattern({2, 3, 4}));
  int axis = r.AddTensor(KILN_TYPE_INT32, {1});  // zero-filled by the runner
  int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_SUM, 1, {x, axis}, {out});
  absl::Status s = r.Run(Kernel(KILN_OP_SUM));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("prepare the node again"));
}

TEST_F(CpuKernelTest, ReductionAndArgVersionRanges) {
  for (int32_t code : {KILN_OP_MEAN, KILN_OP_REDUCE_MAX, KILN_OP_REDUCE_MIN}) {
    EXPECT_TRUE(Covers(code, 3)) << code;  // int16
    EXPECT_FALSE(Covers(code, 4)) << code;
  }
  for (int32_t code : {KILN_OP_SUM, KILN_OP_REDUCE_PROD}) {
    EXPECT_TRUE(Covers(code, 2)) << code;  // int8
    EXPECT_FALSE(Covers(code, 3)) << code;
  }
  for (int32_t code : {KILN_OP_ARG_MAX, KILN_OP_ARG_MIN}) {
    EXPECT_TRUE(Covers(code, 3)) << code;  // bool
    EXPECT_FALSE(Covers(code, 4)) << code;
  }
  for (int32_t code :
       {KILN_OP_REDUCE_ANY, KILN_OP_REDUCE_ALL, KILN_OP_TOPK_V2}) {
    EXPECT_TRUE(Covers(code, 1)) << code;
    EXPECT_FALSE(Covers(code, 2)) << code;  // int8 variants
  }
}

}  // namespace
}  // namespace kiln
