// CPU plugin neural-net kernels: AVERAGE_POOL_2D, MAX_POOL_2D,
// L2_NORMALIZATION, SOFTMAX, LOG_SOFTMAX, RESIZE_BILINEAR,
// RESIZE_NEAREST_NEIGHBOR. Expected values come from the LiteRT interpreter's
// builtin kernels run once on single-op models built from the same inputs,
// pasted here.
#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/graph.h"
#include "runtime/single_node_runner.h"
#include "tests/cpu_kernel_test_util.h"

namespace kiln {
namespace {

using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pointwise;

// ((i * a) % m - m / 2) / 4 * scale for element i.
std::vector<float> Pattern(const std::vector<int32_t>& shape, int a = 7,
                           int m = 11, float scale = 1.f) {
  int64_t n = 1;
  for (int32_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    v[static_cast<size_t>(i)] =
        static_cast<float>((i * a) % m - m / 2) * 0.25f * scale;
  }
  return v;
}

constexpr float kTol = 1e-5f;

// Shape {1, 3, 3, 3}.
const std::vector<float> kAvgSameS2 = {
    0.0625f,       -0.25f,       0.125f,       0.375f,      -0.16666667f,
    -0.25f,        0.0f,         0.375f,       0.0625f,     -0.20833333f,
    -0.29166666f,  0.54166669f,  0.027777778f, -0.3611111f, 0.16666667f,
    -0.041666668f, 0.33333334f,  -0.20833333f, -0.25f,      0.125f,
    0.5f,          -0.16666667f, -0.25f,       0.125f,      0.375f,
    0.0625f,       -0.25f};

// Shape {1, 3, 3, 3}.
const std::vector<float> kMaxSameS2 = {
    1.25f, 0.5f,  1.0f,  1.25f, 1.25f, 0.75f, 0.75f, 1.25f, 1.25f,
    0.5f,  0.75f, 1.25f, 1.25f, 1.25f, 1.0f,  1.0f,  1.25f, 0.5f,
    0.5f,  1.0f,  1.25f, 1.25f, 0.75f, 1.0f,  1.25f, 1.25f, 0.5f};

// Shape {2, 3, 2, 2}.
const std::vector<float> kAvgValidRelu = {
    0.0f, 0.29166666f,  0.041666668f, 0.0f, 0.29166666f,  0.20833333f,  0.0f,
    0.0f, 0.20833333f,  0.125f,       0.0f, 0.0f,         0.041666668f, 0.0f,
    0.0f, 0.083333336f, 0.0f,         0.0f, 0.083333336f, 0.0f,         0.0f,
    0.0f, 0.0f,         0.0f};

// Shape {2, 1, 5, 2}.
const std::vector<float> kMaxValidRelu6 = {
    5.0f, 5.0f, 5.0f, 5.0f, 4.0f, 4.0f, 4.0f, 3.0f, 3.0f, 3.0f,
    4.0f, 4.0f, 4.0f, 3.0f, 3.0f, 3.0f, 5.0f, 5.0f, 5.0f, 5.0f};

// Shape {2, 3, 4}.
const std::vector<float> kL2norm = {
    -0.65653217f, 0.26261285f,  -0.26261285f, 0.65653217f,  0.19611613f,
    -0.58834839f, 0.78446454f,  0.0f,         -0.56011206f, 0.42008403f,
    -0.14002801f, -0.70014006f, 0.34299719f,  -0.34299719f, 0.85749298f,
    0.1714986f,   -0.46852127f, 0.62469506f,  0.0f,         -0.62469506f,
    0.0f,         0.0f,         0.0f,         0.0f};

// Shape {2, 2, 5}.
const std::vector<float> kSoftmaxBeta = {
    0.014307459f, 0.19750838f,  0.044070076f, 0.60836864f,  0.13574539f,
    0.035638154f, 0.49196953f,  0.10977324f,  0.024493722f, 0.33812538f,
    0.069068536f, 0.015411274f, 0.21274607f,  0.047470067f, 0.65530401f,
    0.19440159f,  0.043376859f, 0.59879905f,  0.13361013f,  0.029812451f};

// Shape {2, 2, 5}.
const std::vector<float> kLogSoftmax = {
    -7.6492705f, -2.3992705f,  -5.3992705f,  -0.14927042f, -3.1492705f,
    -5.675189f,  -0.42518926f, -3.4251893f,  -6.425189f,   -1.1751893f,
    -4.6153879f, -7.6153879f,  -2.3653879f,  -5.3653879f,  -0.11538804f,
    -2.4009278f, -5.4009275f,  -0.15092772f, -3.1509278f,  -6.1509275f};

// Shape {1, 5, 7, 2}.
const std::vector<float> kBilinearUpPlain = {
    -1.25f,        0.5f,          -0.82142854f,  0.92857146f,  -0.3928571f,
    0.96428561f,   0.035714388f,  -0.1785717f,   0.46428579f,  -0.53571421f,
    0.89285719f,   -0.10714281f,  1.0f,          0.0f,         -1.1f,
    0.64999998f,   -0.6714285f,   0.13571423f,   -0.24285711f, -0.30000001f,
    0.18571439f,   -0.50000006f,  0.61428577f,   -0.38571417f, 1.0428572f,
    0.0428572f,    1.15f,         0.15000001f,   -0.94999999f, 0.80000001f,
    -0.52142853f,  -0.34285721f,  -0.092857093f, -1.0928571f,  0.3357144f,
    -0.66428566f,  0.60714287f,   -0.23571421f,  0.72142851f,  0.19285721f,
    0.75f,         0.30000001f,   -0.79999995f,  0.95000005f,  -0.37142855f,
    -0.19285718f,  0.057142913f,  -0.94285709f,  0.48571438f,  -0.51428562f,
    0.28571412f,   -0.085714191f, -0.54285747f,  0.34285721f,  -0.75000018f,
    0.44999999f,   -0.75f,        1.0f,          -0.32142857f, -0.14285716f,
    0.1071429f,    -0.89285713f,  0.53571439f,   -0.46428558f, 0.17857122f,
    -0.035714209f, -0.96428585f,  0.39285719f,   -1.25f,       0.5f};

// Shape {1, 5, 7, 2}.
const std::vector<float> kNearestUpPlain = {
    -1.25f, 0.5f,   -1.25f, 0.5f,   -0.5f,  1.25f,  -0.5f,  1.25f,  0.25f,
    -0.75f, 0.25f,  -0.75f, 1.0f,   0.0f,   -1.25f, 0.5f,   -1.25f, 0.5f,
    -0.5f,  1.25f,  -0.5f,  1.25f,  0.25f,  -0.75f, 0.25f,  -0.75f, 1.0f,
    0.0f,   -1.0f,  0.75f,  -1.0f,  0.75f,  -0.25f, -1.25f, -0.25f, -1.25f,
    0.5f,   -0.5f,  0.5f,   -0.5f,  1.25f,  0.25f,  -1.0f,  0.75f,  -1.0f,
    0.75f,  -0.25f, -1.25f, -0.25f, -1.25f, 0.5f,   -0.5f,  0.5f,   -0.5f,
    1.25f,  0.25f,  -0.75f, 1.0f,   -0.75f, 1.0f,   0.0f,   -1.0f,  0.0f,
    -1.0f,  0.75f,  -0.25f, 0.75f,  -0.25f, -1.25f, 0.5f};

// Shape {1, 5, 7, 2}.
const std::vector<float> kBilinearUpAc = {
    -1.25f, 0.5f,    -0.875f, 0.875f,  -0.5f,   1.25f,    -0.125f, 0.25f,
    0.25f,  -0.75f,  0.625f,  -0.375f, 1.0f,    0.0f,     -1.125f, 0.625f,
    -0.75f, 0.3125f, -0.375f, 0.0f,    0.0f,    -0.3125f, 0.375f,  -0.625f,
    0.75f,  -0.25f,  1.125f,  0.125f,  -1.0f,   0.75f,    -0.625f, -0.25f,
    -0.25f, -1.25f,  0.125f,  -0.875f, 0.5f,    -0.5f,    0.875f,  -0.125f,
    1.25f,  0.25f,   -0.875f, 0.875f,  -0.5f,   -0.125f,  -0.125f, -1.125f,
    0.25f,  -0.75f,  0.625f,  -0.375f, 0.3125f, 0.0f,     0.0f,    0.375f,
    -0.75f, 1.0f,    -0.375f, 0.0f,    0.0f,    -1.0f,    0.375f,  -0.625f,
    0.75f,  -0.25f,  -0.25f,  0.125f,  -1.25f,  0.5f};

// Shape {1, 5, 7, 2}.
const std::vector<float> kNearestUpAc = {
    -1.25f, 0.5f,   -0.5f,  1.25f,  -0.5f,  1.25f,  0.25f,  -0.75f, 0.25f,
    -0.75f, 1.0f,   0.0f,   1.0f,   0.0f,   -1.0f,  0.75f,  -0.25f, -1.25f,
    -0.25f, -1.25f, 0.5f,   -0.5f,  0.5f,   -0.5f,  1.25f,  0.25f,  1.25f,
    0.25f,  -1.0f,  0.75f,  -0.25f, -1.25f, -0.25f, -1.25f, 0.5f,   -0.5f,
    0.5f,   -0.5f,  1.25f,  0.25f,  1.25f,  0.25f,  -0.75f, 1.0f,   0.0f,
    -1.0f,  0.0f,   -1.0f,  0.75f,  -0.25f, 0.75f,  -0.25f, -1.25f, 0.5f,
    -1.25f, 0.5f,   -0.75f, 1.0f,   0.0f,   -1.0f,  0.0f,   -1.0f,  0.75f,
    -0.25f, 0.75f,  -0.25f, -1.25f, 0.5f,   -1.25f, 0.5f};

// Shape {1, 5, 7, 2}.
const std::vector<float> kBilinearUpHp = {
    -1.2500002f,   0.50000006f,  -0.98214293f, 0.76785725f,  -0.55357146f,
    1.1964288f,    -0.125f,      0.24999997f,  0.30357158f,  -0.69642842f,
    0.73214304f,   -0.26785704f, 1.0f,         0.0f,         -1.15f,
    0.60000008f,   -0.88214278f, 0.47499996f,  -0.45357141f, 0.27499995f,
    -0.024999991f, -0.20000006f, 0.40357158f,  -0.59642833f, 0.83214301f,
    -0.16785701f,  1.1f,         0.10000001f,  -1.0f,        0.75f,
    -0.73214281f,  0.035714149f, -0.3035714f,  -1.1071429f,  0.125f,
    -0.875f,       0.55357158f,  -0.44642842f, 0.98214298f,  -0.017857015f,
    1.25f,         0.25f,        -0.84999996f, 0.90000004f,  -0.58214277f,
    0.18571417f,   -0.15357137f, -0.95714295f, 0.27500004f,  -0.72500002f,
    0.5857141f,    -0.29642838f, 0.07142818f,  0.13214302f,  -0.25000033f,
    0.40000004f,   -0.75000006f, 1.0f,         -0.48214281f, 0.28571415f,
    -0.053571403f, -0.85714293f, 0.375f,       -0.625f,      0.60714245f,
    -0.19642842f,  -0.53571463f, 0.23214298f,  -1.25f,       0.5f};

// Shape {1, 5, 7, 2}.
const std::vector<float> kNearestUpHp = {
    -1.25f, 0.5f,  -1.25f, 0.5f,   -0.5f,  1.25f,  0.25f,  -0.75f, 0.25f,
    -0.75f, 1.0f,  0.0f,   1.0f,   0.0f,   -1.25f, 0.5f,   -1.25f, 0.5f,
    -0.5f,  1.25f, 0.25f,  -0.75f, 0.25f,  -0.75f, 1.0f,   0.0f,   1.0f,
    0.0f,   -1.0f, 0.75f,  -1.0f,  0.75f,  -0.25f, -1.25f, 0.5f,   -0.5f,
    0.5f,   -0.5f, 1.25f,  0.25f,  1.25f,  0.25f,  -0.75f, 1.0f,   -0.75f,
    1.0f,   0.0f,  -1.0f,  0.75f,  -0.25f, 0.75f,  -0.25f, -1.25f, 0.5f,
    -1.25f, 0.5f,  -0.75f, 1.0f,   -0.75f, 1.0f,   0.0f,   -1.0f,  0.75f,
    -0.25f, 0.75f, -0.25f, -1.25f, 0.5f,   -1.25f, 0.5f};

// Shape {1, 2, 3, 2}.
const std::vector<float> kBilinearDownPlain = {
    -1.25f,  0.5f,   -0.24999997f, 0.58333325f,  0.75000006f, -0.24999994f,
    -0.875f, 0.875f, 0.12500003f,  -0.87499994f, 0.20833328f, 0.12500006f};

// Shape {1, 2, 3, 2}.
const std::vector<float> kNearestDownPlain = {-1.25f, 0.5f,   -0.5f, 1.25f,
                                              0.25f,  -0.75f, -1.0f, 0.75f,
                                              -0.25f, -1.25f, 0.5f,  -0.5f};

// Shape {1, 2, 3, 2}.
const std::vector<float> kBilinearDownAc = {-1.25f, 0.5f,    -0.125f, 0.25f,
                                            1.0f,   0.0f,    -0.75f,  1.0f,
                                            0.375f, -0.625f, -1.25f,  0.5f};

// Shape {1, 2, 3, 2}.
const std::vector<float> kNearestDownAc = {-1.25f, 0.5f,   0.25f,  -0.75f,
                                           1.0f,   0.0f,   -0.75f, 1.0f,
                                           0.75f,  -0.25f, -1.25f, 0.5f};

// Shape {1, 2, 3, 2}.
const std::vector<float> kBilinearDownHp = {
    -1.0625f, 0.57291669f, -0.0625f, -0.03125f, 0.93750012f,  -0.062499881f,
    -0.6875f, 0.60416663f, 0.3125f,  -0.6875f,  -0.40625018f, 0.31250012f};

// Shape {1, 2, 3, 2}.
const std::vector<float> kNearestDownHp = {-1.25f, 0.5f,   0.25f,  -0.75f,
                                           1.0f,   0.0f,   -0.75f, 1.0f,
                                           0.75f,  -0.25f, -1.25f, 0.5f};

// ---- Pooling ---------------------------------------------------------------

absl::Status RunPool(const KilnKernel& kernel, int32_t code,
                     const std::vector<int32_t>& shape,
                     const std::vector<float>& x, int64_t padding, int sh,
                     int sw, int fh, int fw, int64_t act, SingleNodeRunner& r,
                     int* out) {
  int xi = r.AddTensor<float>(KILN_TYPE_FLOAT32, shape, x);
  *out = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(code, 1, {xi}, {*out});
  r.node().SetInt(KILN_OPTION_PADDING, padding);
  r.node().SetInt(KILN_OPTION_STRIDE_H, sh);
  r.node().SetInt(KILN_OPTION_STRIDE_W, sw);
  r.node().SetInt(KILN_OPTION_FILTER_H, fh);
  r.node().SetInt(KILN_OPTION_FILTER_W, fw);
  r.node().SetInt(KILN_OPTION_FUSED_ACTIVATION, act);
  return r.Run(kernel);
}

TEST_F(CpuKernelTest, AveragePoolSameExcludesPadding) {
  SingleNodeRunner r;
  int out;
  ASSERT_TRUE(RunPool(Kernel(KILN_OP_AVERAGE_POOL_2D), KILN_OP_AVERAGE_POOL_2D,
                      {1, 5, 5, 3}, Pattern({1, 5, 5, 3}), KILN_PADDING_SAME, 2,
                      2, 3, 3, KILN_ACTIVATION_NONE, r, &out)
                  .ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(1, 3, 3, 3));
  EXPECT_THAT(r.Values<float>(out), Pointwise(FloatNear(kTol), kAvgSameS2));
}

TEST_F(CpuKernelTest, MaxPoolSameStride2) {
  SingleNodeRunner r;
  int out;
  ASSERT_TRUE(RunPool(Kernel(KILN_OP_MAX_POOL_2D), KILN_OP_MAX_POOL_2D,
                      {1, 5, 5, 3}, Pattern({1, 5, 5, 3}), KILN_PADDING_SAME, 2,
                      2, 3, 3, KILN_ACTIVATION_NONE, r, &out)
                  .ok());
  EXPECT_THAT(r.Values<float>(out), Pointwise(FloatNear(kTol), kMaxSameS2));
}

TEST_F(CpuKernelTest, PoolValidAsymmetricWithFusedActivation) {
  {
    SingleNodeRunner r;
    int out;
    ASSERT_TRUE(RunPool(Kernel(KILN_OP_AVERAGE_POOL_2D),
                        KILN_OP_AVERAGE_POOL_2D, {2, 4, 6, 2},
                        Pattern({2, 4, 6, 2}), KILN_PADDING_VALID, 1, 2, 2, 3,
                        KILN_ACTIVATION_RELU, r, &out)
                    .ok());
    EXPECT_THAT(r.tensor(out).shape, ElementsAre(2, 3, 2, 2));
    EXPECT_THAT(r.Values<float>(out),
                Pointwise(FloatNear(kTol), kAvgValidRelu));
  }
  {
    SingleNodeRunner r;
    int out;
    ASSERT_TRUE(RunPool(Kernel(KILN_OP_MAX_POOL_2D), KILN_OP_MAX_POOL_2D,
                        {2, 4, 6, 2}, Pattern({2, 4, 6, 2}, 7, 11, 4.f),
                        KILN_PADDING_VALID, 2, 1, 3, 2, KILN_ACTIVATION_RELU6,
                        r, &out)
                    .ok());
    EXPECT_THAT(r.tensor(out).shape, ElementsAre(2, 1, 5, 2));
    EXPECT_THAT(r.Values<float>(out),
                Pointwise(FloatNear(kTol), kMaxValidRelu6));
  }
}

TEST_F(CpuKernelTest, PoolRefusesUnquantizedInt8AndMissingFilter) {
  {
    SingleNodeRunner r;
    int x = r.AddTensor<int8_t>(KILN_TYPE_INT8, {1, 2, 2, 1}, {1, 2, 3, 4});
    int out = r.AddTensor(KILN_TYPE_INT8, {});
    r.SetOp(KILN_OP_MAX_POOL_2D, 2, {x}, {out});
    r.node().SetInt(KILN_OPTION_FILTER_H, 2);
    r.node().SetInt(KILN_OPTION_FILTER_W, 2);
    absl::Status s = r.Run(Kernel(KILN_OP_MAX_POOL_2D, 2));
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(std::string(s.message()), HasSubstr("prepare failed"));
    EXPECT_THAT(std::string(s.message()),
                HasSubstr("has type INT8 but no quantization parameters"));
  }
  {
    SingleNodeRunner r;
    int out;
    absl::Status s =
        RunPool(Kernel(KILN_OP_AVERAGE_POOL_2D), KILN_OP_AVERAGE_POOL_2D,
                {1, 2, 2, 1}, Pattern({4}), KILN_PADDING_SAME, 1, 1, 0, 0,
                KILN_ACTIVATION_NONE, r, &out);
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(std::string(s.message()), HasSubstr("filter_height"));
  }
}

// ---- Normalisations --------------------------------------------------------

TEST_F(CpuKernelTest, L2NormalizationLastAxisWithZeroRow) {
  SingleNodeRunner r;
  std::vector<float> x = Pattern({2, 3, 4});
  for (int i = 20; i < 24; ++i) x[i] = 0.f;
  int xi = r.AddTensor<float>(KILN_TYPE_FLOAT32, {2, 3, 4}, x);
  int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_L2_NORMALIZATION, 1, {xi}, {out});
  ASSERT_TRUE(r.Run(Kernel(KILN_OP_L2_NORMALIZATION)).ok());
  EXPECT_THAT(r.Values<float>(out), Pointwise(FloatNear(kTol), kL2norm));
}

TEST_F(CpuKernelTest, SoftmaxWithBetaAndLogSoftmaxOnRank3) {
  const std::vector<float> x = Pattern({2, 2, 5}, 7, 11, 3.f);
  {
    SingleNodeRunner r;
    int xi = r.AddTensor<float>(KILN_TYPE_FLOAT32, {2, 2, 5}, x);
    int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
    r.SetOp(KILN_OP_SOFTMAX, 1, {xi}, {out});
    r.node().SetFloat(KILN_OPTION_BETA, 0.5f);
    ASSERT_TRUE(r.Run(Kernel(KILN_OP_SOFTMAX)).ok());
    EXPECT_THAT(r.tensor(out).shape, ElementsAre(2, 2, 5));
    EXPECT_THAT(r.Values<float>(out), Pointwise(FloatNear(kTol), kSoftmaxBeta));
  }
  {
    SingleNodeRunner r;
    int xi = r.AddTensor<float>(KILN_TYPE_FLOAT32, {2, 2, 5}, x);
    int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
    r.SetOp(KILN_OP_LOG_SOFTMAX, 1, {xi}, {out});
    ASSERT_TRUE(r.Run(Kernel(KILN_OP_LOG_SOFTMAX)).ok());
    EXPECT_THAT(r.Values<float>(out), Pointwise(FloatNear(1e-4f), kLogSoftmax));
  }
}

TEST_F(CpuKernelTest, SoftmaxRefusesUnquantizedInt8) {
  SingleNodeRunner r;
  int x = r.AddTensor<int8_t>(KILN_TYPE_INT8, {2}, {1, 2});
  int out = r.AddTensor(KILN_TYPE_INT8, {});
  r.SetOp(KILN_OP_SOFTMAX, 2, {x}, {out});
  absl::Status s = r.Run(Kernel(KILN_OP_SOFTMAX, 2));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("SOFTMAX input"));
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("no quantization parameters"));
}

// ---- Resize
// ------------------------------------------------------------------

struct ResizeCase {
  int32_t code;
  std::vector<int32_t> size;
  bool align_corners, half_pixel_centers;
  const std::vector<float>* expected;
};

TEST_F(CpuKernelTest, ResizeMatchesTfliteCoordinateRules) {
  const std::vector<ResizeCase> cases = {
      {KILN_OP_RESIZE_BILINEAR, {5, 7}, false, false, &kBilinearUpPlain},
      {KILN_OP_RESIZE_BILINEAR, {5, 7}, true, false, &kBilinearUpAc},
      {KILN_OP_RESIZE_BILINEAR, {5, 7}, false, true, &kBilinearUpHp},
      {KILN_OP_RESIZE_BILINEAR, {2, 3}, false, false, &kBilinearDownPlain},
      {KILN_OP_RESIZE_BILINEAR, {2, 3}, true, false, &kBilinearDownAc},
      {KILN_OP_RESIZE_BILINEAR, {2, 3}, false, true, &kBilinearDownHp},
      {KILN_OP_RESIZE_NEAREST_NEIGHBOR, {5, 7}, false, false, &kNearestUpPlain},
      {KILN_OP_RESIZE_NEAREST_NEIGHBOR, {5, 7}, true, false, &kNearestUpAc},
      {KILN_OP_RESIZE_NEAREST_NEIGHBOR, {5, 7}, false, true, &kNearestUpHp},
      {KILN_OP_RESIZE_NEAREST_NEIGHBOR,
       {2, 3},
       false,
       false,
       &kNearestDownPlain},
      {KILN_OP_RESIZE_NEAREST_NEIGHBOR, {2, 3}, true, false, &kNearestDownAc},
      {KILN_OP_RESIZE_NEAREST_NEIGHBOR, {2, 3}, false, true, &kNearestDownHp},
  };
  for (const ResizeCase& c : cases) {
    SingleNodeRunner r;
    int x = r.AddTensor<float>(KILN_TYPE_FLOAT32, {1, 3, 4, 2},
                               Pattern({1, 3, 4, 2}));
    int size = r.AddTensor<int32_t>(KILN_TYPE_INT32, {2}, c.size, true);
    int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
    const int32_t version = c.align_corners || c.half_pixel_centers ? 3 : 1;
    r.SetOp(c.code, version, {x, size}, {out});
    r.node().SetInt(KILN_OPTION_ALIGN_CORNERS, c.align_corners);
    r.node().SetInt(KILN_OPTION_HALF_PIXEL_CENTERS, c.half_pixel_centers);
    ASSERT_TRUE(r.Run(Kernel(c.code, version)).ok());
    EXPECT_THAT(r.tensor(out).shape, ElementsAre(1, c.size[0], c.size[1], 2));
    EXPECT_THAT(r.Values<float>(out), Pointwise(FloatNear(kTol), *c.expected))
        << "op " << c.code << " size " << c.size[0] << "x" << c.size[1]
        << " align_corners " << c.align_corners << " half_pixel_centers "
        << c.half_pixel_centers;
  }
}

TEST_F(CpuKernelTest, ResizeRefusesBothCornerModesAndComputedSizeWaits) {
  {
    SingleNodeRunner r;
    int x = r.AddTensor<float>(KILN_TYPE_FLOAT32, {1, 2, 2, 1}, Pattern({4}));
    int size = r.AddTensor<int32_t>(KILN_TYPE_INT32, {2}, {3, 3}, true);
    int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
    r.SetOp(KILN_OP_RESIZE_BILINEAR, 3, {x, size}, {out});
    r.node().SetInt(KILN_OPTION_ALIGN_CORNERS, 1);
    r.node().SetInt(KILN_OPTION_HALF_PIXEL_CENTERS, 1);
    absl::Status s = r.Run(Kernel(KILN_OP_RESIZE_BILINEAR, 3));
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(std::string(s.message()), HasSubstr("cannot both be true"));
  }
  {
    // Size computed at run time: prepare leaves the output unsized; this
    // runner invokes without preparing again, so invoke refuses.
    SingleNodeRunner r;
    int x = r.AddTensor<float>(KILN_TYPE_FLOAT32, {1, 2, 2, 1}, Pattern({4}));
    int size = r.AddTensor(KILN_TYPE_INT32, {2});
    int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
    r.SetOp(KILN_OP_RESIZE_NEAREST_NEIGHBOR, 1, {x, size}, {out});
    absl::Status s = r.Run(Kernel(KILN_OP_RESIZE_NEAREST_NEIGHBOR));
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(std::string(s.message()), HasSubstr("invoke failed"));
    EXPECT_THAT(r.tensor(out).shape, IsEmpty());
  }
}

TEST_F(CpuKernelTest, PoolNormResizeVersionRanges) {
  for (int32_t code : {KILN_OP_AVERAGE_POOL_2D, KILN_OP_MAX_POOL_2D}) {
    EXPECT_TRUE(Covers(code, 3)) << code;  // int16
    EXPECT_FALSE(Covers(code, 4)) << code;
  }
  EXPECT_TRUE(Covers(KILN_OP_SOFTMAX, 3));  // int16
  EXPECT_FALSE(Covers(KILN_OP_SOFTMAX, 4));
  for (int32_t code : {KILN_OP_L2_NORMALIZATION, KILN_OP_LOG_SOFTMAX}) {
    EXPECT_TRUE(Covers(code, 2)) << code;  // int8
    EXPECT_FALSE(Covers(code, 3)) << code;
  }
  for (int32_t code :
       {KILN_OP_RESIZE_BILINEAR, KILN_OP_RESIZE_NEAREST_NEIGHBOR}) {
    EXPECT_TRUE(Covers(code, 4)) << code;  // int16
    EXPECT_FALSE(Covers(code, 5)) << code;
  }
}

}  // namespace
}  // namespace kiln
