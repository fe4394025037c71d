// Data-movement kernels that index: SLICE, STRIDED_SLICE, GATHER, GATHER_ND,
// SCATTER_ND. Expected values were computed with NumPy, e.g. for
// y = np.arange(24).reshape(2, 3, 4): y[:, ::-1, 3:0:-2], y[..., None, 1:3],
// y[1, :, -1], y[None, 0, ..., 2].
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

std::vector<int32_t> Iota32(int n) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = i;
  return v;
}

// ---- SLICE ------------------------------------------------------------------

TEST_F(CpuKernelTest, SliceWithSizeMinusOne) {
  SingleNodeRunner r;
  int in = r.AddTensor<int32_t>(KILN_TYPE_INT32, {2, 3, 4}, Iota32(24));
  int begin = r.AddTensor<int32_t>(KILN_TYPE_INT32, {3}, {1, 1, 0}, true);
  int size = r.AddTensor<int64_t>(KILN_TYPE_INT64, {3}, {1, -1, 4}, true);
  int out = r.AddTensor(KILN_TYPE_INT32, {});
  r.SetOp(KILN_OP_SLICE, 1, {in, begin, size}, {out});
  ASSERT_TRUE(r.Run(Kernel(KILN_OP_SLICE)).ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(1, 2, 4));
  EXPECT_THAT(r.Values<int32_t>(out),
              ElementsAre(16, 17, 18, 19, 20, 21, 22, 23));
}

TEST_F(CpuKernelTest, SliceRejectsOutOfBounds) {
  SingleNodeRunner r;
  int in = r.AddTensor<int32_t>(KILN_TYPE_INT32, {4}, Iota32(4));
  int begin = r.AddTensor<int32_t>(KILN_TYPE_INT32, {1}, {2}, true);
  int size = r.AddTensor<int32_t>(KILN_TYPE_INT32, {1}, {3}, true);
  int out = r.AddTensor(KILN_TYPE_INT32, {});
  r.SetOp(KILN_OP_SLICE, 1, {in, begin, size}, {out});
  absl::Status s = r.Run(Kernel(KILN_OP_SLICE));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("slice of dimension 0 (size 4) with begin 2 and size "
                        "3 is out of bounds"));
}

// ---- STRIDED_SLICE ----------------------------------------------------------

struct StridedSliceSpec {
  std::vector<int32_t> begin, end, strides;
  int64_t begin_mask = 0, end_mask = 0, ellipsis_mask = 0, new_axis_mask = 0,
          shrink_mask = 0, offset = 0;
  int32_t version = 1;
};

// Runs STRIDED_SLICE on y = arange(24).reshape(2, 3, 4) (INT32).
absl::Status RunStridedSlice(const KilnKernel& k, const StridedSliceSpec& spec,
                             SingleNodeRunner& r, int* out) {
  const int32_t n = static_cast<int32_t>(spec.begin.size());
  int in = r.AddTensor<int32_t>(KILN_TYPE_INT32, {2, 3, 4}, Iota32(24));
  int begin = r.AddTensor<int32_t>(KILN_TYPE_INT32, {n}, spec.begin, true);
  int end = r.AddTensor<int32_t>(KILN_TYPE_INT32, {n}, spec.end, true);
  int strides = r.AddTensor<int32_t>(KILN_TYPE_INT32, {n}, spec.strides, true);
  *out = r.AddTensor(KILN_TYPE_INT32, {});
  r.SetOp(KILN_OP_STRIDED_SLICE, spec.version, {in, begin, end, strides},
          {*out});
  r.node().SetInt(KILN_OPTION_BEGIN_MASK, spec.begin_mask);
  r.node().SetInt(KILN_OPTION_END_MASK, spec.end_mask);
  r.node().SetInt(KILN_OPTION_ELLIPSIS_MASK, spec.ellipsis_mask);
  r.node().SetInt(KILN_OPTION_NEW_AXIS_MASK, spec.new_axis_mask);
  r.node().SetInt(KILN_OPTION_SHRINK_AXIS_MASK, spec.shrink_mask);
  r.node().SetInt(KILN_OPTION_OFFSET, spec.offset);
  return r.Run(k);
}

TEST_F(CpuKernelTest, StridedSliceNegativeStridesWithMasks) {
  // y[:, ::-1, 3:0:-2]
  StridedSliceSpec spec;
  spec.begin = {0, 0, 3};
  spec.end = {0, 0, 0};
  spec.strides = {1, -1, -2};
  spec.begin_mask = 0b011;
  spec.end_mask = 0b011;
  SingleNodeRunner r;
  int out = 0;
  ASSERT_TRUE(
      RunStridedSlice(Kernel(KILN_OP_STRIDED_SLICE), spec, r, &out).ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(2, 3, 2));
  EXPECT_THAT(r.Values<int32_t>(out),
              ElementsAre(11, 9, 7, 5, 3, 1, 23, 21, 19, 17, 15, 13));
}

TEST_F(CpuKernelTest, StridedSliceBeginAndEndMasks) {
  // y[:, 1:, :3]
  StridedSliceSpec spec;
  spec.begin = {0, 1, 0};
  spec.end = {0, 0, 3};
  spec.strides = {1, 1, 1};
  spec.begin_mask = 0b101;
  spec.end_mask = 0b011;
  SingleNodeRunner r;
  int out = 0;
  ASSERT_TRUE(
      RunStridedSlice(Kernel(KILN_OP_STRIDED_SLICE), spec, r, &out).ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(2, 2, 3));
  EXPECT_THAT(r.Values<int32_t>(out),
              ElementsAre(4, 5, 6, 8, 9, 10, 16, 17, 18, 20, 21, 22));
}

TEST_F(CpuKernelTest, StridedSliceEllipsisAndNewAxis) {
  // y[..., np.newaxis, 1:3]  (version 6: ellipsis / new axis)
  StridedSliceSpec spec;
  spec.begin = {0, 0, 1};
  spec.end = {0, 0, 3};
  spec.strides = {1, 1, 1};
  spec.ellipsis_mask = 0b001;
  spec.new_axis_mask = 0b010;
  spec.version = 6;
  SingleNodeRunner r;
  int out = 0;
  ASSERT_TRUE(
      RunStridedSlice(Kernel(KILN_OP_STRIDED_SLICE, 6), spec, r, &out).ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(2, 3, 1, 2));
  EXPECT_THAT(r.Values<int32_t>(out),
              ElementsAre(1, 2, 5, 6, 9, 10, 13, 14, 17, 18, 21, 22));
}

TEST_F(CpuKernelTest, StridedSliceShrinkWithNegativeIndex) {
  // y[1, :, -1]
  StridedSliceSpec spec;
  spec.begin = {1, 0, -1};
  spec.end = {2, 0, 0};
  spec.strides = {1, 1, 1};
  spec.begin_mask = 0b010;
  spec.end_mask = 0b010;
  spec.shrink_mask = 0b101;
  SingleNodeRunner r;
  int out = 0;
  ASSERT_TRUE(
      RunStridedSlice(Kernel(KILN_OP_STRIDED_SLICE), spec, r, &out).ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(3));
  EXPECT_THAT(r.Values<int32_t>(out), ElementsAre(15, 19, 23));
}

TEST_F(CpuKernelTest, StridedSliceNewAxisShrinkAndEllipsisTogether) {
  // y[np.newaxis, 0, ..., 2]
  StridedSliceSpec spec;
  spec.begin = {0, 0, 0, 2};
  spec.end = {0, 1, 0, 3};
  spec.strides = {1, 1, 1, 1};
  spec.new_axis_mask = 0b0001;
  spec.shrink_mask = 0b1010;
  spec.ellipsis_mask = 0b0100;
  spec.version = 6;
  SingleNodeRunner r;
  int out = 0;
  ASSERT_TRUE(
      RunStridedSlice(Kernel(KILN_OP_STRIDED_SLICE, 6), spec, r, &out).ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(1, 3));
  EXPECT_THAT(r.Values<int32_t>(out), ElementsAre(2, 6, 10));
}

TEST_F(CpuKernelTest, StridedSliceOffsetMakesEndRelative) {
  // offset=true (version 8): end holds sizes; y[0:2, 1:3, 1:4]
  StridedSliceSpec spec;
  spec.begin = {0, 1, 1};
  spec.end = {2, 2, 3};
  spec.strides = {1, 1, 1};
  spec.offset = 1;
  spec.version = 8;
  SingleNodeRunner r;
  int out = 0;
  ASSERT_TRUE(
      RunStridedSlice(Kernel(KILN_OP_STRIDED_SLICE, 8), spec, r, &out).ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(2, 2, 3));
  EXPECT_THAT(r.Values<int32_t>(out),
              ElementsAre(5, 6, 7, 9, 10, 11, 17, 18, 19, 21, 22, 23));
}

TEST_F(CpuKernelTest, StridedSliceRejectsZeroStrideAndBadShrink) {
  StridedSliceSpec zero;
  zero.begin = {0};
  zero.end = {1};
  zero.strides = {0};
  SingleNodeRunner r;
  int out = 0;
  absl::Status s =
      RunStridedSlice(Kernel(KILN_OP_STRIDED_SLICE), zero, r, &out);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("stride 0 is 0"));

  StridedSliceSpec shrink;
  shrink.begin = {5};
  shrink.end = {6};
  shrink.strides = {1};
  shrink.shrink_mask = 1;
  SingleNodeRunner r2;
  s = RunStridedSlice(Kernel(KILN_OP_STRIDED_SLICE), shrink, r2, &out);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("shrink index 5 at spec entry 0 is out of range for "
                        "dimension 0 of size 2"));
}

// ---- GATHER -----------------------------------------------------------------

TEST_F(CpuKernelTest, GatherAlongAxisOneWithInt64Indices) {
  SingleNodeRunner r;
  int params = r.AddTensor<float>(KILN_TYPE_FLOAT32, {3, 4},
                                  {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  int indices = r.AddTensor<int64_t>(KILN_TYPE_INT64, {2, 2}, {3, 0, 1, 1});
  int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_GATHER, 1, {params, indices}, {out});
  r.node().SetInt(KILN_OPTION_AXIS, -1);
  ASSERT_TRUE(r.Run(Kernel(KILN_OP_GATHER)).ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(3, 2, 2));
  EXPECT_THAT(r.Values<float>(out),
              ElementsAre(3, 0, 1, 1, 7, 4, 5, 5, 11, 8, 9, 9));
}

TEST_F(CpuKernelTest, GatherWithBatchDims) {
  // out[b] = np.take(p[b], i[b], axis=0) for p = arange(24).reshape(2,3,4)
  SingleNodeRunner r;
  int params = r.AddTensor<int32_t>(KILN_TYPE_INT32, {2, 3, 4}, Iota32(24));
  int indices = r.AddTensor<int32_t>(KILN_TYPE_INT32, {2, 2}, {2, 0, 1, 1});
  int out = r.AddTensor(KILN_TYPE_INT32, {});
  r.SetOp(KILN_OP_GATHER, 5, {params, indices}, {out});
  r.node().SetInt(KILN_OPTION_AXIS, 1);
  r.node().SetInt(KILN_OPTION_BATCH_DIMS, 1);
  ASSERT_TRUE(r.Run(Kernel(KILN_OP_GATHER, 5)).ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(2, 2, 4));
  EXPECT_THAT(r.Values<int32_t>(out), ElementsAre(8, 9, 10, 11, 0, 1, 2, 3, 16,
                                                  17, 18, 19, 16, 17, 18, 19));
}

TEST_F(CpuKernelTest, GatherInt16IndicesOnBool) {
  SingleNodeRunner r;
  int params = r.AddTensor<uint8_t>(KILN_TYPE_BOOL, {3}, {1, 0, 1});
  int indices = r.AddTensor<int16_t>(KILN_TYPE_INT16, {4}, {1, 0, 2, 1});
  int out = r.AddTensor(KILN_TYPE_BOOL, {});
  r.SetOp(KILN_OP_GATHER, 6, {params, indices}, {out});
  ASSERT_TRUE(r.Run(Kernel(KILN_OP_GATHER, 6)).ok());
  EXPECT_THAT(r.Values<uint8_t>(out), ElementsAre(0, 1, 1, 0));
}

TEST_F(CpuKernelTest, GatherOutOfRangeIndexFailsAtInvoke) {
  for (int64_t bad : {int64_t{3}, int64_t{-1}}) {
    SingleNodeRunner r;
    int params = r.AddTensor<float>(KILN_TYPE_FLOAT32, {3}, {1, 2, 3});
    int indices = r.AddTensor<int32_t>(KILN_TYPE_INT32, {2},
                                       {0, static_cast<int32_t>(bad)});
    int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
    r.SetOp(KILN_OP_GATHER, 1, {params, indices}, {out});
    absl::Status s = r.Run(Kernel(KILN_OP_GATHER));
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
    EXPECT_THAT(std::string(s.message()),
                HasSubstr("invoke failed: index " + std::to_string(bad) +
                          " at position 1 of indices 't1' is out of range [0, "
                          "3) for axis 0 of params 't0'"));
  }
}

TEST_F(CpuKernelTest, GatherRejectsBatchDimsAboveAxis) {
  SingleNodeRunner r;
  int params = r.AddTensor<int32_t>(KILN_TYPE_INT32, {2, 3}, Iota32(6));
  int indices = r.AddTensor<int32_t>(KILN_TYPE_INT32, {2, 1}, {0, 1});
  int out = r.AddTensor(KILN_TYPE_INT32, {});
  r.SetOp(KILN_OP_GATHER, 5, {params, indices}, {out});
  r.node().SetInt(KILN_OPTION_AXIS, 0);
  r.node().SetInt(KILN_OPTION_BATCH_DIMS, 1);
  absl::Status s = r.Run(Kernel(KILN_OP_GATHER, 5));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("not exceed axis 0"));
}

// ---- GATHER_ND / SCATTER_ND
// ---------------------------------------------------

TEST_F(CpuKernelTest, GatherNdSlices) {
  SingleNodeRunner r;
  int params = r.AddTensor<int32_t>(KILN_TYPE_INT32, {2, 3, 4}, Iota32(24));
  int indices =
      r.AddTensor<int32_t>(KILN_TYPE_INT32, {3, 2}, {0, 1, 1, 2, 1, 0});
  int out = r.AddTensor(KILN_TYPE_INT32, {});
  r.SetOp(KILN_OP_GATHER_ND, 1, {params, indices}, {out});
  ASSERT_TRUE(r.Run(Kernel(KILN_OP_GATHER_ND)).ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(3, 4));
  EXPECT_THAT(r.Values<int32_t>(out),
              ElementsAre(4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15));
}

TEST_F(CpuKernelTest, GatherNdOutOfRangeFailsAtInvoke) {
  SingleNodeRunner r;
  int params = r.AddTensor<int32_t>(KILN_TYPE_INT32, {2, 3}, Iota32(6));
  int indices = r.AddTensor<int64_t>(KILN_TYPE_INT64, {2, 2}, {0, 1, 1, 3});
  int out = r.AddTensor(KILN_TYPE_INT32, {});
  r.SetOp(KILN_OP_GATHER_ND, 1, {params, indices}, {out});
  absl::Status s = r.Run(Kernel(KILN_OP_GATHER_ND));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("index tuple 1 of indices 't1' has coordinate 3 at "
                        "position 1, out of range [0, 3)"));
}

TEST_F(CpuKernelTest, ScatterNdAddsDuplicateIndices) {
  SingleNodeRunner r;
  int indices = r.AddTensor<int32_t>(KILN_TYPE_INT32, {3, 1}, {1, 3, 1});
  int updates = r.AddTensor<float>(KILN_TYPE_FLOAT32, {3, 3},
                                   {1, 2, 3, 4, 5, 6, 10, 20, 30});
  int shape = r.AddTensor<int32_t>(KILN_TYPE_INT32, {2}, {4, 3}, true);
  int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_SCATTER_ND, 1, {indices, updates, shape}, {out});
  ASSERT_TRUE(r.Run(Kernel(KILN_OP_SCATTER_ND)).ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(4, 3));
  EXPECT_THAT(r.Values<float>(out),
              ElementsAre(0, 0, 0, 11, 22, 33, 0, 0, 0, 4, 5, 6));
}

TEST_F(CpuKernelTest, ScatterNdBoolDuplicatesAreOred) {
  SingleNodeRunner r;
  int indices = r.AddTensor<int32_t>(KILN_TYPE_INT32, {3, 1}, {0, 2, 0});
  int updates = r.AddTensor<uint8_t>(KILN_TYPE_BOOL, {3}, {1, 0, 1});
  int shape = r.AddTensor<int32_t>(KILN_TYPE_INT32, {1}, {3}, true);
  int out = r.AddTensor(KILN_TYPE_BOOL, {});
  r.SetOp(KILN_OP_SCATTER_ND, 1, {indices, updates, shape}, {out});
  ASSERT_TRUE(r.Run(Kernel(KILN_OP_SCATTER_ND)).ok());
  EXPECT_THAT(r.Values<uint8_t>(out), ElementsAre(1, 0, 0));
}

TEST_F(CpuKernelTest, ScatterNdRejectsOutOfRangeAndBadUpdatesShape) {
  SingleNodeRunner r;
  int indices = r.AddTensor<int32_t>(KILN_TYPE_INT32, {2, 1}, {0, 4});
  int updates = r.AddTensor<int32_t>(KILN_TYPE_INT32, {2}, {1, 2});
  int shape = r.AddTensor<int32_t>(KILN_TYPE_INT32, {1}, {4}, true);
  int out = r.AddTensor(KILN_TYPE_INT32, {});
  r.SetOp(KILN_OP_SCATTER_ND, 1, {indices, updates, shape}, {out});
  absl::Status s = r.Run(Kernel(KILN_OP_SCATTER_ND));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("has coordinate 4 at position 0, out of range [0, 4)"));

  SingleNodeRunner r2;
  int i2 = r2.AddTensor<int32_t>(KILN_TYPE_INT32, {2, 1}, {0, 1});
  int u2 = r2.AddTensor<int32_t>(KILN_TYPE_INT32, {3}, {1, 2, 3});
  int s2 = r2.AddTensor<int32_t>(KILN_TYPE_INT32, {1}, {4}, true);
  int o2 = r2.AddTensor(KILN_TYPE_INT32, {});
  r2.SetOp(KILN_OP_SCATTER_ND, 1, {i2, u2, s2}, {o2});
  s = r2.Run(Kernel(KILN_OP_SCATTER_ND));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(
      std::string(s.message()),
      HasSubstr("SCATTER_ND input 1 (updates, tensor 't1') has shape [3]; "
                "SCATTER_ND expects [2]"));
}

}  // namespace
}  // namespace kiln
