// Data-movement kernels that join, split, repeat or pad: CONCATENATION,
// PACK, UNPACK, SPLIT, SPLIT_V, TILE, BROADCAST_TO, PAD, PADV2, MIRROR_PAD.
// Expected values were computed with NumPy (np.concatenate, np.stack,
// np.split, np.tile, np.broadcast_to, np.pad with constant/reflect/symmetric).
#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/single_node_runner.h"
#include "tests/cpu_kernel_test_util.h"

namespace kiln {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// ---- CONCATENATION / PACK ---------------------------------------------------

TEST_F(CpuKernelTest, ConcatenationNegativeAxisWithFusedRelu) {
  SingleNodeRunner r;
  int a = r.AddTensor<float>(KILN_TYPE_FLOAT32, {2, 2}, {1, -2, 3, -4});
  int b = r.AddTensor<float>(KILN_TYPE_FLOAT32, {2, 1}, {5, -6});
  int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_CONCATENATION, 1, {a, b}, {out});
  r.node().SetInt(KILN_OPTION_AXIS, -1);
  r.node().SetInt(KILN_OPTION_FUSED_ACTIVATION, KILN_ACTIVATION_RELU);
  ASSERT_TRUE(r.Run(Kernel(KILN_OP_CONCATENATION)).ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(2, 3));
  EXPECT_THAT(r.Values<float>(out), ElementsAre(1, 0, 5, 3, 0, 0));
}

TEST_F(CpuKernelTest, ConcatenationInt64AlongAxisZero) {
  SingleNodeRunner r;
  int a = r.AddTensor<int64_t>(KILN_TYPE_INT64, {1, 2}, {1, 2});
  int b = r.AddTensor<int64_t>(KILN_TYPE_INT64, {2, 2}, {3, 4, 5, 6});
  int out = r.AddTensor(KILN_TYPE_INT64, {});
  r.SetOp(KILN_OP_CONCATENATION, 1, {a, b}, {out});
  ASSERT_TRUE(r.Run(Kernel(KILN_OP_CONCATENATION)).ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(3, 2));
  EXPECT_THAT(r.Values<int64_t>(out), ElementsAre(1, 2, 3, 4, 5, 6));
}

TEST_F(CpuKernelTest, ConcatenationRefusesMismatchedShapesAndRequantization) {
  SingleNodeRunner r;
  int a = r.AddTensor<float>(KILN_TYPE_FLOAT32, {2, 2}, {1, 2, 3, 4});
  int b = r.AddTensor<float>(KILN_TYPE_FLOAT32, {3, 1}, {5, 6, 7});
  int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_CONCATENATION, 1, {a, b}, {out});
  r.node().SetInt(KILN_OPTION_AXIS, 1);
  absl::Status s = r.Run(Kernel(KILN_OP_CONCATENATION));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("input 1 't1' has shape [3, 1], incompatible with "
                        "input 0 shape [2, 2] for concatenation along axis 1"));

  SingleNodeRunner q;
  int qa = q.AddTensor<int8_t>(KILN_TYPE_INT8, {2}, {1, 2});
  int qb = q.AddTensor<int8_t>(KILN_TYPE_INT8, {2}, {3, 4});
  int qo = q.AddTensor(KILN_TYPE_INT8, {});
  for (int t : {qa, qo}) {
    q.tensor(t).quantization.scales = {0.5f};
    q.tensor(t).quantization.zero_points = {0};
  }
  q.tensor(qb).quantization.scales = {0.25f};
  q.tensor(qb).quantization.zero_points = {0};
  q.SetOp(KILN_OP_CONCATENATION, 2, {qa, qb}, {qo});
  s = q.Run(Kernel(KILN_OP_CONCATENATION, 2));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(
      std::string(s.message()),
      HasSubstr("CONCATENATION input 1 (tensor 't1') and output 0 "
                "(tensor 't2') have different quantization parameters"));
}

TEST_F(CpuKernelTest, ConcatenationInt8SameQuantization) {
  SingleNodeRunner q;
  int qa = q.AddTensor<int8_t>(KILN_TYPE_INT8, {2}, {1, 2});
  int qb = q.AddTensor<int8_t>(KILN_TYPE_INT8, {1}, {-3});
  int qo = q.AddTensor(KILN_TYPE_INT8, {});
  for (int t : {qa, qb, qo}) {
    q.tensor(t).quantization.scales = {0.5f};
    q.tensor(t).quantization.zero_points = {-1};
  }
  q.SetOp(KILN_OP_CONCATENATION, 2, {qa, qb}, {qo});
  ASSERT_TRUE(q.Run(Kernel(KILN_OP_CONCATENATION, 2)).ok());
  EXPECT_THAT(q.Values<int8_t>(qo), ElementsAre(1, 2, -3));
}

TEST_F(CpuKernelTest, ConcatenationRefusesActivationOnIntegers) {
  SingleNodeRunner r;
  int a = r.AddTensor<int32_t>(KILN_TYPE_INT32, {1}, {1});
  int out = r.AddTensor(KILN_TYPE_INT32, {});
  r.SetOp(KILN_OP_CONCATENATION, 1, {a}, {out});
  r.node().SetInt(KILN_OPTION_FUSED_ACTIVATION, KILN_ACTIVATION_RELU6);
  absl::Status s = r.Run(Kernel(KILN_OP_CONCATENATION));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("only FLOAT32 concatenation applies a fused "
                        "activation"));
}

TEST_F(CpuKernelTest, PackAlongAxisOne) {
  SingleNodeRunner r;
  int a = r.AddTensor<int32_t>(KILN_TYPE_INT32, {2, 2}, {1, 2, 3, 4});
  int b = r.AddTensor<int32_t>(KILN_TYPE_INT32, {2, 2}, {5, 6, 7, 8});
  int out = r.AddTensor(KILN_TYPE_INT32, {});
  r.SetOp(KILN_OP_PACK, 1, {a, b}, {out});
  r.node().SetInt(KILN_OPTION_VALUES_COUNT, 2);
  r.node().SetInt(KILN_OPTION_AXIS, 1);
  ASSERT_TRUE(r.Run(Kernel(KILN_OP_PACK)).ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(2, 2, 2));
  EXPECT_THAT(r.Values<int32_t>(out), ElementsAre(1, 2, 5, 6, 3, 4, 7, 8));
}

TEST_F(CpuKernelTest, PackRejectsValuesCountMismatch) {
  SingleNodeRunner r;
  int a = r.AddTensor<int32_t>(KILN_TYPE_INT32, {2}, {1, 2});
  int out = r.AddTensor(KILN_TYPE_INT32, {});
  r.SetOp(KILN_OP_PACK, 1, {a}, {out});
  r.node().SetInt(KILN_OPTION_VALUES_COUNT, 3);
  absl::Status s = r.Run(Kernel(KILN_OP_PACK));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("values_count 3 does not match the 1 inputs"));
}

// ---- UNPACK / SPLIT / SPLIT_V -----------------------------------------------

TEST_F(CpuKernelTest, UnpackNegativeAxis) {
  SingleNodeRunner r;
  int in = r.AddTensor<int16_t>(KILN_TYPE_INT16, {2, 3}, {0, 1, 2, 3, 4, 5});
  int o0 = r.AddTensor(KILN_TYPE_INT16, {});
  int o1 = r.AddTensor(KILN_TYPE_INT16, {});
  int o2 = r.AddTensor(KILN_TYPE_INT16, {});
  r.SetOp(KILN_OP_UNPACK, 4, {in}, {o0, o1, o2});
  r.node().SetInt(KILN_OPTION_NUM, 3);
  r.node().SetInt(KILN_OPTION_AXIS, -1);
  ASSERT_TRUE(r.Run(Kernel(KILN_OP_UNPACK, 4)).ok());
  EXPECT_THAT(r.tensor(o0).shape, ElementsAre(2));
  EXPECT_THAT(r.Values<int16_t>(o0), ElementsAre(0, 3));
  EXPECT_THAT(r.Values<int16_t>(o1), ElementsAre(1, 4));
  EXPECT_THAT(r.Values<int16_t>(o2), ElementsAre(2, 5));
}

TEST_F(CpuKernelTest, SplitTakesAxisFromInputZero) {
  SingleNodeRunner r;
  int axis = r.AddTensor<int32_t>(KILN_TYPE_INT32, {}, {-1}, true);
  int in =
      r.AddTensor<float>(KILN_TYPE_FLOAT32, {2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
  int o0 = r.AddTensor(KILN_TYPE_FLOAT32, {});
  int o1 = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_SPLIT, 1, {axis, in}, {o0, o1});
  r.node().SetInt(KILN_OPTION_NUM_SPLITS, 2);
  ASSERT_TRUE(r.Run(Kernel(KILN_OP_SPLIT)).ok());
  EXPECT_THAT(r.tensor(o0).shape, ElementsAre(2, 2));
  EXPECT_THAT(r.Values<float>(o0), ElementsAre(0, 1, 4, 5));
  EXPECT_THAT(r.Values<float>(o1), ElementsAre(2, 3, 6, 7));
}

TEST_F(CpuKernelTest, SplitRejectsIndivisibleDimension) {
  SingleNodeRunner r;
  int axis = r.AddTensor<int32_t>(KILN_TYPE_INT32, {}, {0}, true);
  int in = r.AddTensor<float>(KILN_TYPE_FLOAT32, {3}, {0, 1, 2});
  int o0 = r.AddTensor(KILN_TYPE_FLOAT32, {});
  int o1 = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_SPLIT, 1, {axis, in}, {o0, o1});
  absl::Status s = r.Run(Kernel(KILN_OP_SPLIT));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("has size 3, not divisible into 2 equal splits"));
}

TEST_F(CpuKernelTest, SplitVWithInferredSize) {
  SingleNodeRunner r;
  std::vector<uint8_t> values(12);
  for (int i = 0; i < 12; ++i)
    values[static_cast<size_t>(i)] = static_cast<uint8_t>(i);
  int in = r.AddTensor<uint8_t>(KILN_TYPE_UINT8, {2, 6}, values);
  int sizes = r.AddTensor<int32_t>(KILN_TYPE_INT32, {3}, {1, -1, 2}, true);
  int axis = r.AddTensor<int32_t>(KILN_TYPE_INT32, {1}, {1}, true);
  int o0 = r.AddTensor(KILN_TYPE_UINT8, {});
  int o1 = r.AddTensor(KILN_TYPE_UINT8, {});
  int o2 = r.AddTensor(KILN_TYPE_UINT8, {});
  r.SetOp(KILN_OP_SPLIT_V, 1, {in, sizes, axis}, {o0, o1, o2});
  ASSERT_TRUE(r.Run(Kernel(KILN_OP_SPLIT_V)).ok());
  EXPECT_THAT(r.tensor(o1).shape, ElementsAre(2, 3));
  EXPECT_THAT(r.Values<uint8_t>(o0), ElementsAre(0, 6));
  EXPECT_THAT(r.Values<uint8_t>(o1), ElementsAre(1, 2, 3, 7, 8, 9));
  EXPECT_THAT(r.Values<uint8_t>(o2), ElementsAre(4, 5, 10, 11));
}

TEST_F(CpuKernelTest, SplitVRejectsSizesThatDoNotSum) {
  SingleNodeRunner r;
  int in = r.AddTensor<float>(KILN_TYPE_FLOAT32, {4}, {0, 1, 2, 3});
  int sizes = r.AddTensor<int32_t>(KILN_TYPE_INT32, {2}, {1, 2}, true);
  int axis = r.AddTensor<int32_t>(KILN_TYPE_INT32, {}, {0}, true);
  int o0 = r.AddTensor(KILN_TYPE_FLOAT32, {});
  int o1 = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_SPLIT_V, 1, {in, sizes, axis}, {o0, o1});
  absl::Status s = r.Run(Kernel(KILN_OP_SPLIT_V));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("size_splits sum to 3 but dimension 0 of input 't0' "
                        "has size 4"));
}

// ---- TILE / BROADCAST_TO
// ------------------------------------------------------

TEST_F(CpuKernelTest, TileRepeatsEachDimension) {
  SingleNodeRunner r;
  int in = r.AddTensor<int32_t>(KILN_TYPE_INT32, {2, 2}, {1, 2, 3, 4});
  int multiples = r.AddTensor<int64_t>(KILN_TYPE_INT64, {2}, {2, 3}, true);
  int out = r.AddTensor(KILN_TYPE_INT32, {});
  r.SetOp(KILN_OP_TILE, 1, {in, multiples}, {out});
  ASSERT_TRUE(r.Run(Kernel(KILN_OP_TILE)).ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(4, 6));
  EXPECT_THAT(r.Values<int32_t>(out),
              ElementsAre(1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4, 1, 2, 1, 2, 1, 2,
                          3, 4, 3, 4, 3, 4));
}

TEST_F(CpuKernelTest, BroadcastToAddsLeadingDims) {
  SingleNodeRunner r;
  int in = r.AddTensor<int8_t>(KILN_TYPE_INT8, {2, 1}, {1, 2});
  int shape = r.AddTensor<int32_t>(KILN_TYPE_INT32, {3}, {2, 2, 3}, true);
  int out = r.AddTensor(KILN_TYPE_INT8, {});
  r.SetOp(KILN_OP_BROADCAST_TO, 3, {in, shape}, {out});
  ASSERT_TRUE(r.Run(Kernel(KILN_OP_BROADCAST_TO, 3)).ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(2, 2, 3));
  EXPECT_THAT(r.Values<int8_t>(out),
              ElementsAre(1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2));
}

TEST_F(CpuKernelTest, BroadcastToRejectsIncompatibleShape) {
  SingleNodeRunner r;
  int in = r.AddTensor<float>(KILN_TYPE_FLOAT32, {2}, {1, 2});
  int shape = r.AddTensor<int32_t>(KILN_TYPE_INT32, {2}, {2, 3}, true);
  int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_BROADCAST_TO, 2, {in, shape}, {out});
  absl::Status s = r.Run(Kernel(KILN_OP_BROADCAST_TO, 2));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("cannot broadcast input 't0' of shape [2] to [2, 3]"));
}

// ---- PAD / PADV2 / MIRROR_PAD
// ---------------------------------------------------

TEST_F(CpuKernelTest, PadWithZeros) {
  SingleNodeRunner r;
  int in = r.AddTensor<float>(KILN_TYPE_FLOAT32, {2, 3}, {1, 2, 3, 4, 5, 6});
  int pads = r.AddTensor<int32_t>(KILN_TYPE_INT32, {2, 2}, {1, 0, 0, 2}, true);
  int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_PAD, 1, {in, pads}, {out});
  ASSERT_TRUE(r.Run(Kernel(KILN_OP_PAD)).ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(3, 5));
  EXPECT_THAT(r.Values<float>(out),
              ElementsAre(0, 0, 0, 0, 0, 1, 2, 3, 0, 0, 4, 5, 6, 0, 0));
}

TEST_F(CpuKernelTest, PadInt8UsesOutputZeroPoint) {
  SingleNodeRunner r;
  int in = r.AddTensor<int8_t>(KILN_TYPE_INT8, {2}, {5, 6});
  int pads = r.AddTensor<int64_t>(KILN_TYPE_INT64, {1, 2}, {1, 2}, true);
  int out = r.AddTensor(KILN_TYPE_INT8, {});
  r.tensor(out).quantization.scales = {0.1f};
  r.tensor(out).quantization.zero_points = {-7};
  r.SetOp(KILN_OP_PAD, 2, {in, pads}, {out});
  ASSERT_TRUE(r.Run(Kernel(KILN_OP_PAD, 2)).ok());
  EXPECT_THAT(r.Values<int8_t>(out), ElementsAre(-7, 5, 6, -7, -7));
}

TEST_F(CpuKernelTest, PadV2WithConstantValue) {
  SingleNodeRunner r;
  int in = r.AddTensor<int32_t>(KILN_TYPE_INT32, {2, 3}, {1, 2, 3, 4, 5, 6});
  int pads = r.AddTensor<int32_t>(KILN_TYPE_INT32, {2, 2}, {0, 1, 1, 1}, true);
  int value = r.AddTensor<int32_t>(KILN_TYPE_INT32, {}, {9}, true);
  int out = r.AddTensor(KILN_TYPE_INT32, {});
  r.SetOp(KILN_OP_PADV2, 1, {in, pads, value}, {out});
  ASSERT_TRUE(r.Run(Kernel(KILN_OP_PADV2)).ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(3, 5));
  EXPECT_THAT(r.Values<int32_t>(out),
              ElementsAre(9, 1, 2, 3, 9, 9, 4, 5, 6, 9, 9, 9, 9, 9, 9));
}

TEST_F(CpuKernelTest, PadRejectsNegativePaddingAndBadShape) {
  SingleNodeRunner r;
  int in = r.AddTensor<float>(KILN_TYPE_FLOAT32, {2}, {1, 2});
  int pads = r.AddTensor<int32_t>(KILN_TYPE_INT32, {1, 2}, {-1, 0}, true);
  int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_PAD, 1, {in, pads}, {out});
  absl::Status s = r.Run(Kernel(KILN_OP_PAD));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("paddings for dimension 0 are [-1, 0]; they must be "
                        ">= 0"));

  SingleNodeRunner r2;
  int in2 = r2.AddTensor<float>(KILN_TYPE_FLOAT32, {2}, {1, 2});
  int pads2 = r2.AddTensor<int32_t>(KILN_TYPE_INT32, {2}, {1, 1}, true);
  int out2 = r2.AddTensor(KILN_TYPE_FLOAT32, {});
  r2.SetOp(KILN_OP_PAD, 1, {in2, pads2}, {out2});
  s = r2.Run(Kernel(KILN_OP_PAD));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("paddings must have shape [1, 2]"));
}

TEST_F(CpuKernelTest, MirrorPadReflect) {
  SingleNodeRunner r;
  int in = r.AddTensor<float>(KILN_TYPE_FLOAT32, {2, 3}, {1, 2, 3, 4, 5, 6});
  int pads = r.AddTensor<int32_t>(KILN_TYPE_INT32, {2, 2}, {1, 1, 2, 2}, true);
  int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_MIRROR_PAD, 1, {in, pads}, {out});
  r.node().SetInt(KILN_OPTION_MIRROR_PAD_MODE, 0);
  ASSERT_TRUE(r.Run(Kernel(KILN_OP_MIRROR_PAD)).ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(4, 7));
  EXPECT_THAT(r.Values<float>(out),
              ElementsAre(6, 5, 4, 5, 6, 5, 4, 3, 2, 1, 2, 3, 2, 1, 6, 5, 4, 5,
                          6, 5, 4, 3, 2, 1, 2, 3, 2, 1));
}

TEST_F(CpuKernelTest, MirrorPadSymmetric) {
  SingleNodeRunner r;
  int in = r.AddTensor<int64_t>(KILN_TYPE_INT64, {2, 3}, {1, 2, 3, 4, 5, 6});
  int pads = r.AddTensor<int64_t>(KILN_TYPE_INT64, {2, 2}, {1, 1, 3, 2}, true);
  int out = r.AddTensor(KILN_TYPE_INT64, {});
  r.SetOp(KILN_OP_MIRROR_PAD, 1, {in, pads}, {out});
  r.node().SetInt(KILN_OPTION_MIRROR_PAD_MODE, 1);
  ASSERT_TRUE(r.Run(Kernel(KILN_OP_MIRROR_PAD)).ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(4, 8));
  EXPECT_THAT(r.Values<int64_t>(out),
              ElementsAre(3, 2, 1, 1, 2, 3, 3, 2, 3, 2, 1, 1, 2, 3, 3, 2, 6, 5,
                          4, 4, 5, 6, 6, 5, 6, 5, 4, 4, 5, 6, 6, 5));
}

TEST_F(CpuKernelTest, MirrorPadReflectRejectsPaddingAsLargeAsDim) {
  SingleNodeRunner r;
  int in = r.AddTensor<float>(KILN_TYPE_FLOAT32, {3}, {1, 2, 3});
  int pads = r.AddTensor<int32_t>(KILN_TYPE_INT32, {1, 2}, {3, 0}, true);
  int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_MIRROR_PAD, 1, {in, pads}, {out});
  absl::Status s = r.Run(Kernel(KILN_OP_MIRROR_PAD));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("exceed 2, the most REFLECT mode allows"));
}

}  // namespace
}  // namespace kiln
