// Data-movement kernels that reshape or permute: RESHAPE, SQUEEZE,
// EXPAND_DIMS, SHAPE, TRANSPOSE, SPACE_TO_DEPTH, DEPTH_TO_SPACE; plus the
// dynamic-shape prepare contract and the declared op-version ranges.
// Expected values were computed with NumPy.
#include <cstdint>
#include <cstring>
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
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::vector<float> Iota(int n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i);
  return v;
}

// Runs only prepare, as the interpreter's first pass does before the values
// of non-constant inputs exist.
absl::Status PrepareOnly(SingleNodeRunner& r, const KilnKernel& kernel) {
  std::string error;
  const KilnStatus s = PrepareOnly(kernel, r, &error);
  if (s == KILN_STATUS_OK) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(s), error);
}

// ---- RESHAPE ----------------------------------------------------------------

TEST_F(CpuKernelTest, ReshapeFromShapeTensorWithInferredDim) {
  SingleNodeRunner r;
  int in = r.AddTensor<float>(KILN_TYPE_FLOAT32, {2, 3}, Iota(6));
  int shape = r.AddTensor<int32_t>(KILN_TYPE_INT32, {2}, {3, -1}, true);
  int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_RESHAPE, 1, {in, shape}, {out});
  ASSERT_TRUE(r.Run(Kernel(KILN_OP_RESHAPE)).ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(3, 2));
  EXPECT_THAT(r.Values<float>(out), ElementsAre(0, 1, 2, 3, 4, 5));
}

TEST_F(CpuKernelTest, ReshapeFromNewShapeOptionOnInt64) {
  SingleNodeRunner r;
  int in = r.AddTensor<int64_t>(KILN_TYPE_INT64, {4}, {7, 8, 9, 10});
  int out = r.AddTensor(KILN_TYPE_INT64, {});
  r.SetOp(KILN_OP_RESHAPE, 1, {in}, {out});
  r.node().SetIntArray(KILN_OPTION_NEW_SHAPE, {2, 1, 2});
  ASSERT_TRUE(r.Run(Kernel(KILN_OP_RESHAPE)).ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(2, 1, 2));
  EXPECT_THAT(r.Values<int64_t>(out), ElementsAre(7, 8, 9, 10));
}

// Like tflite-testdata/zero_size_constant.bin: a [1] tensor reshaped by an
// empty constant shape tensor becomes a scalar.
TEST_F(CpuKernelTest, ReshapeWithEmptyShapeTensorGivesScalar) {
  SingleNodeRunner r;
  int in = r.AddTensor<int32_t>(KILN_TYPE_INT32, {1}, {42});
  int shape = r.AddTensor(KILN_TYPE_INT32, {0});
  r.tensor(shape).storage = TensorStorage::kConstant;  // present, empty
  int out = r.AddTensor(KILN_TYPE_INT32, {5});
  r.SetOp(KILN_OP_RESHAPE, 1, {in, shape}, {out});
  ASSERT_TRUE(r.Run(Kernel(KILN_OP_RESHAPE)).ok());
  EXPECT_THAT(r.tensor(out).shape, IsEmpty());
  EXPECT_THAT(r.Values<int32_t>(out), ElementsAre(42));
}

TEST_F(CpuKernelTest, ReshapeLegacyZeroNewShapeMeansScalar) {
  SingleNodeRunner r;
  int in = r.AddTensor<float>(KILN_TYPE_FLOAT32, {1, 1}, {3.5f});
  int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_RESHAPE, 1, {in}, {out});
  r.node().SetIntArray(KILN_OPTION_NEW_SHAPE, {0});
  ASSERT_TRUE(r.Run(Kernel(KILN_OP_RESHAPE)).ok());
  EXPECT_THAT(r.tensor(out).shape, IsEmpty());
  EXPECT_THAT(r.Values<float>(out), ElementsAre(3.5f));
}

TEST_F(CpuKernelTest, ReshapeRejectsElementCountMismatch) {
  SingleNodeRunner r;
  int in = r.AddTensor<float>(KILN_TYPE_FLOAT32, {2, 3}, Iota(6));
  int shape = r.AddTensor<int32_t>(KILN_TYPE_INT32, {2}, {4, 2}, true);
  int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_RESHAPE, 1, {in, shape}, {out});
  absl::Status s = r.Run(Kernel(KILN_OP_RESHAPE));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("cannot reshape input 't0' of shape [2, 3] (6 "
                        "elements) to [4, 2] (8 elements)"));
}

TEST_F(CpuKernelTest, ReshapeRejectsTwoInferredDims) {
  SingleNodeRunner r;
  int in = r.AddTensor<float>(KILN_TYPE_FLOAT32, {2, 3}, Iota(6));
  int shape = r.AddTensor<int32_t>(KILN_TYPE_INT32, {2}, {-1, -1}, true);
  int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_RESHAPE, 1, {in, shape}, {out});
  absl::Status s = r.Run(Kernel(KILN_OP_RESHAPE));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("more than one -1"));
}

// Like tflite-testdata/string_input_model.bin: refused with the reason.
TEST_F(CpuKernelTest, ReshapeRefusesStringTensors) {
  SingleNodeRunner r;
  int in = r.AddTensor(KILN_TYPE_STRING, {1, 3});
  int shape = r.AddTensor<int32_t>(KILN_TYPE_INT32, {2}, {1, 3}, true);
  int out = r.AddTensor(KILN_TYPE_STRING, {1, 3});
  r.SetOp(KILN_OP_RESHAPE, 1, {in, shape}, {out});
  absl::Status s = r.Run(Kernel(KILN_OP_RESHAPE));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("RESHAPE of STRING tensor 't0' is not supported"));
}

TEST_F(CpuKernelTest, ReshapeRefusesOutputTypeMismatch) {
  SingleNodeRunner r;
  int in = r.AddTensor<float>(KILN_TYPE_FLOAT32, {2}, {1, 2});
  int out = r.AddTensor(KILN_TYPE_INT32, {});
  r.SetOp(KILN_OP_RESHAPE, 1, {in}, {out});
  r.node().SetIntArray(KILN_OPTION_NEW_SHAPE, {2});
  absl::Status s = r.Run(Kernel(KILN_OP_RESHAPE));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("RESHAPE output 0 (tensor 't1') has type INT32 but "
                        "input 0 (tensor 't0') has type FLOAT32"));
}

TEST_F(CpuKernelTest, DataKernelsRefuseUnsupportedElementTypes) {
  SingleNodeRunner r;
  int in = r.AddTensor(KILN_TYPE_FLOAT16, {2, 2});
  int perm = r.AddTensor<int32_t>(KILN_TYPE_INT32, {2}, {1, 0}, true);
  int out = r.AddTensor(KILN_TYPE_FLOAT16, {});
  r.SetOp(KILN_OP_TRANSPOSE, 1, {in, perm}, {out});
  absl::Status s = r.Run(Kernel(KILN_OP_TRANSPOSE));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("TRANSPOSE input 0 (tensor 't0') has type FLOAT16; "
                        "supports FLOAT32, INT32, UINT8, INT64, BOOL, INT16, "
                        "INT8"));
}

// ---- The dynamic-shape prepare contract -------------------------------------

TEST_F(CpuKernelTest, PrepareLeavesOutputUnresizedWhenShapeValuesAreMissing) {
  SingleNodeRunner r;
  int in = r.AddTensor<float>(KILN_TYPE_FLOAT32, {2, 3}, Iota(6));
  int shape = r.AddTensor(KILN_TYPE_INT32, {2});  // computed by another node
  int out = r.AddTensor(KILN_TYPE_FLOAT32, {7});
  r.SetOp(KILN_OP_RESHAPE, 1, {in, shape}, {out});
  ASSERT_TRUE(PrepareOnly(r, Kernel(KILN_OP_RESHAPE)).ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(7));

  // Once the values exist, the second prepare sizes the output.
  r.tensor(shape).AllocateOwned(8);
  const int32_t dims[2] = {6, 1};
  std::memcpy(r.tensor(shape).data, dims, sizeof(dims));
  ASSERT_TRUE(PrepareOnly(r, Kernel(KILN_OP_RESHAPE)).ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(6, 1));
}

TEST_F(CpuKernelTest, PrepareDefersEveryValueDependentShape) {
  struct Case {
    int32_t op;
    int32_t version;
  };
  // Each op gets a float data input plus value inputs without data.
  for (const Case& c :
       {Case{KILN_OP_TRANSPOSE, 1}, Case{KILN_OP_EXPAND_DIMS, 1},
        Case{KILN_OP_TILE, 1}, Case{KILN_OP_BROADCAST_TO, 2},
        Case{KILN_OP_PAD, 1}, Case{KILN_OP_MIRROR_PAD, 1}}) {
    SCOPED_TRACE(c.op);
    SingleNodeRunner r;
    int in = r.AddTensor<float>(KILN_TYPE_FLOAT32, {2, 2}, Iota(4));
    const bool pads = c.op == KILN_OP_PAD || c.op == KILN_OP_MIRROR_PAD;
    int values = r.AddTensor(
        KILN_TYPE_INT32,
        pads ? std::vector<int32_t>{2, 2}
             : std::vector<int32_t>{c.op == KILN_OP_EXPAND_DIMS ? 1 : 2});
    int out = r.AddTensor(KILN_TYPE_FLOAT32, {9});
    r.SetOp(c.op, c.version, {in, values}, {out});
    ASSERT_TRUE(PrepareOnly(r, Kernel(c.op, c.version)).ok());
    EXPECT_THAT(r.tensor(out).shape, ElementsAre(9));
  }
  // SPLIT: the axis (input 0) has no data yet.
  SingleNodeRunner r;
  int axis = r.AddTensor(KILN_TYPE_INT32, {});
  int in = r.AddTensor<float>(KILN_TYPE_FLOAT32, {2, 2}, Iota(4));
  int o0 = r.AddTensor(KILN_TYPE_FLOAT32, {9});
  int o1 = r.AddTensor(KILN_TYPE_FLOAT32, {9});
  r.SetOp(KILN_OP_SPLIT, 1, {axis, in}, {o0, o1});
  ASSERT_TRUE(PrepareOnly(r, Kernel(KILN_OP_SPLIT)).ok());
  EXPECT_THAT(r.tensor(o0).shape, ElementsAre(9));
}

TEST_F(CpuKernelTest, PrepareDefersWhenAnInputShapeIsUnknown) {
  SingleNodeRunner r;
  int in = r.AddTensor(KILN_TYPE_FLOAT32, {-1, 3});
  int out = r.AddTensor(KILN_TYPE_FLOAT32, {4});
  r.SetOp(KILN_OP_SQUEEZE, 1, {in}, {out});
  ASSERT_TRUE(PrepareOnly(r, Kernel(KILN_OP_SQUEEZE)).ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(4));
}

TEST_F(CpuKernelTest, InvokeWithoutSecondPrepareFailsCleanly) {
  SingleNodeRunner r;
  int in = r.AddTensor<float>(KILN_TYPE_FLOAT32, {2, 3}, Iota(6));
  int shape = r.AddTensor(KILN_TYPE_INT32, {2});  // no data at prepare
  int out = r.AddTensor(KILN_TYPE_FLOAT32, {1});
  r.SetOp(KILN_OP_RESHAPE, 1, {in, shape}, {out});
  // The runner allocates the shape input with zeros after prepare and never
  // prepares again: invoke must notice the stale output shape.
  absl::Status s = r.Run(Kernel(KILN_OP_RESHAPE));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("cannot reshape"));

  SingleNodeRunner r2;
  int in2 = r2.AddTensor<float>(KILN_TYPE_FLOAT32, {2, 3}, Iota(6));
  int perm = r2.AddTensor(KILN_TYPE_INT32, {2});
  int out2 = r2.AddTensor(KILN_TYPE_FLOAT32, {1});
  r2.SetOp(KILN_OP_TRANSPOSE, 1, {in2, perm}, {out2});
  // Zero-filled perm [0, 0] is invalid, reported rather than used.
  s = r2.Run(Kernel(KILN_OP_TRANSPOSE));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("names dimension 0 twice"));
}

TEST_F(CpuKernelTest, InvokeRejectsOutputShapeThatPrepareDidNotSet) {
  SingleNodeRunner r;
  int in = r.AddTensor<float>(KILN_TYPE_FLOAT32, {2, 3}, Iota(6));
  int axis = r.AddTensor<int32_t>(KILN_TYPE_INT32, {}, {0});
  int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_EXPAND_DIMS, 1, {in, axis}, {out});
  const KilnKernel& k = Kernel(KILN_OP_EXPAND_DIMS);
  ASSERT_TRUE(PrepareOnly(r, k).ok());
  // The axis value changes after prepare; invoke must not trust the old
  // output shape.
  int32_t new_axis = 2;
  std::memcpy(r.tensor(axis).data, &new_axis, sizeof(new_axis));
  r.tensor(out).AllocateOwned(r.tensor(out).RequiredBytes());
  CallContext c;
  c.graph = &r.graph();
  c.node = &r.node();
  ASSERT_NE(k.invoke(k.user_data, nullptr, ToOpaque(&c), ToOpaque(&r.node())),
            KILN_STATUS_OK);
  EXPECT_THAT(c.error.message,
              HasSubstr("has shape [1, 2, 3] but its inputs give [2, 3, 1]"));
}

// ---- SQUEEZE / EXPAND_DIMS / SHAPE ----------------------------------------

TEST_F(CpuKernelTest, SqueezeAllUnitDims) {
  SingleNodeRunner r;
  int in = r.AddTensor<int8_t>(KILN_TYPE_INT8, {1, 3, 1}, {-1, 0, 1});
  int out = r.AddTensor(KILN_TYPE_INT8, {});
  r.SetOp(KILN_OP_SQUEEZE, 1, {in}, {out});
  ASSERT_TRUE(r.Run(Kernel(KILN_OP_SQUEEZE)).ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(3));
  EXPECT_THAT(r.Values<int8_t>(out), ElementsAre(-1, 0, 1));
}

TEST_F(CpuKernelTest, SqueezeNegativeDim) {
  SingleNodeRunner r;
  int in = r.AddTensor<float>(KILN_TYPE_FLOAT32, {1, 3, 1}, {1, 2, 3});
  int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_SQUEEZE, 1, {in}, {out});
  r.node().SetIntArray(KILN_OPTION_SQUEEZE_DIMS, {-1});
  ASSERT_TRUE(r.Run(Kernel(KILN_OP_SQUEEZE)).ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(1, 3));
}

TEST_F(CpuKernelTest, SqueezeRejectsNonUnitDim) {
  SingleNodeRunner r;
  int in = r.AddTensor<float>(KILN_TYPE_FLOAT32, {1, 3}, {1, 2, 3});
  int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_SQUEEZE, 1, {in}, {out});
  r.node().SetIntArray(KILN_OPTION_SQUEEZE_DIMS, {1});
  absl::Status s = r.Run(Kernel(KILN_OP_SQUEEZE));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("cannot squeeze dim 1 of input shape [1, 3]: its size "
                        "is 3, not 1"));
}

TEST_F(CpuKernelTest, ExpandDimsNegativeAxis) {
  SingleNodeRunner r;
  int in = r.AddTensor<uint8_t>(KILN_TYPE_BOOL, {2, 2}, {1, 0, 0, 1});
  int axis = r.AddTensor<int64_t>(KILN_TYPE_INT64, {1}, {-1}, true);
  int out = r.AddTensor(KILN_TYPE_BOOL, {});
  r.SetOp(KILN_OP_EXPAND_DIMS, 1, {in, axis}, {out});
  ASSERT_TRUE(r.Run(Kernel(KILN_OP_EXPAND_DIMS)).ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(2, 2, 1));
  EXPECT_THAT(r.Values<uint8_t>(out), ElementsAre(1, 0, 0, 1));
}

TEST_F(CpuKernelTest, ExpandDimsRejectsAxisOutOfRange) {
  SingleNodeRunner r;
  int in = r.AddTensor<float>(KILN_TYPE_FLOAT32, {2}, {1, 2});
  int axis = r.AddTensor<int32_t>(KILN_TYPE_INT32, {}, {3}, true);
  int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_EXPAND_DIMS, 1, {in, axis}, {out});
  absl::Status s = r.Run(Kernel(KILN_OP_EXPAND_DIMS));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("axis 3 is out of range [-2, 2)"));
}

TEST_F(CpuKernelTest, ShapeWritesInt32AndInt64) {
  for (KilnTensorType type : {KILN_TYPE_INT32, KILN_TYPE_INT64}) {
    SingleNodeRunner r;
    int in = r.AddTensor(KILN_TYPE_FLOAT32, {2, 5, 1});
    r.tensor(in).AllocateOwned(40);
    int out = r.AddTensor(type, {});
    r.SetOp(KILN_OP_SHAPE, 1, {in}, {out});
    r.node().SetInt(KILN_OPTION_OUTPUT_TYPE, type);
    ASSERT_TRUE(r.Run(Kernel(KILN_OP_SHAPE)).ok());
    EXPECT_THAT(r.tensor(out).shape, ElementsAre(3));
    if (type == KILN_TYPE_INT32) {
      EXPECT_THAT(r.Values<int32_t>(out), ElementsAre(2, 5, 1));
    } else {
      EXPECT_THAT(r.Values<int64_t>(out), ElementsAre(2, 5, 1));
    }
  }
}

TEST_F(CpuKernelTest, ShapeRejectsOutTypeMismatch) {
  SingleNodeRunner r;
  int in = r.AddTensor<float>(KILN_TYPE_FLOAT32, {2}, {1, 2});
  int out = r.AddTensor(KILN_TYPE_INT32, {});
  r.SetOp(KILN_OP_SHAPE, 1, {in}, {out});
  r.node().SetInt(KILN_OPTION_OUTPUT_TYPE, KILN_TYPE_INT64);
  absl::Status s = r.Run(Kernel(KILN_OP_SHAPE));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("out_type option INT64 does not match output"));
}

// ---- TRANSPOSE / SPACE_TO_DEPTH / DEPTH_TO_SPACE --------------------------

TEST_F(CpuKernelTest, Transpose3d) {
  SingleNodeRunner r;
  int in = r.AddTensor<float>(KILN_TYPE_FLOAT32, {2, 3, 4}, Iota(24));
  int perm = r.AddTensor<int32_t>(KILN_TYPE_INT32, {3}, {2, 0, 1}, true);
  int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_TRANSPOSE, 1, {in, perm}, {out});
  ASSERT_TRUE(r.Run(Kernel(KILN_OP_TRANSPOSE)).ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(4, 2, 3));
  EXPECT_THAT(r.Values<float>(out),
              ElementsAre(0, 4, 8, 12, 16, 20, 1, 5, 9, 13, 17, 21, 2, 6, 10,
                          14, 18, 22, 3, 7, 11, 15, 19, 23));
}

TEST_F(CpuKernelTest, Transpose6dInt16ReversedAxes) {
  SingleNodeRunner r;
  std::vector<int16_t> values(64);
  for (int i = 0; i < 64; ++i)
    values[static_cast<size_t>(i)] = static_cast<int16_t>(i);
  int in = r.AddTensor<int16_t>(KILN_TYPE_INT16, {2, 2, 2, 2, 2, 2}, values);
  int perm =
      r.AddTensor<int64_t>(KILN_TYPE_INT64, {6}, {5, 4, 3, 2, 1, 0}, true);
  int out = r.AddTensor(KILN_TYPE_INT16, {});
  r.SetOp(KILN_OP_TRANSPOSE, 6, {in, perm}, {out});
  ASSERT_TRUE(r.Run(Kernel(KILN_OP_TRANSPOSE, 6)).ok());
  const std::vector<int16_t> expected = {
      0, 32, 16, 48, 8,  40, 24, 56, 4, 36, 20, 52, 12, 44, 28, 60,
      2, 34, 18, 50, 10, 42, 26, 58, 6, 38, 22, 54, 14, 46, 30, 62,
      1, 33, 17, 49, 9,  41, 25, 57, 5, 37, 21, 53, 13, 45, 29, 61,
      3, 35, 19, 51, 11, 43, 27, 59, 7, 39, 23, 55, 15, 47, 31, 63};
  EXPECT_THAT(r.Values<int16_t>(out), ElementsAreArray(expected));
}

TEST_F(CpuKernelTest, TransposeRejectsRankAboveSix) {
  SingleNodeRunner r;
  int in = r.AddTensor(KILN_TYPE_FLOAT32, {1, 1, 1, 1, 1, 1, 1});
  r.tensor(in).AllocateOwned(4);
  int perm =
      r.AddTensor<int32_t>(KILN_TYPE_INT32, {7}, {0, 1, 2, 3, 4, 5, 6}, true);
  int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_TRANSPOSE, 6, {in, perm}, {out});
  absl::Status s = r.Run(Kernel(KILN_OP_TRANSPOSE, 6));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("TRANSPOSE input 0 (tensor 't0') has rank 7; "
                        "supports rank <= 6"));
}

TEST_F(CpuKernelTest, SpaceToDepthAndBack) {
  std::vector<int32_t> values(32);
  for (int i = 0; i < 32; ++i) values[static_cast<size_t>(i)] = i;
  SingleNodeRunner r;
  int in = r.AddTensor<int32_t>(KILN_TYPE_INT32, {1, 4, 4, 2}, values);
  int out = r.AddTensor(KILN_TYPE_INT32, {});
  r.SetOp(KILN_OP_SPACE_TO_DEPTH, 1, {in}, {out});
  r.node().SetInt(KILN_OPTION_BLOCK_SIZE, 2);
  ASSERT_TRUE(r.Run(Kernel(KILN_OP_SPACE_TO_DEPTH)).ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(1, 2, 2, 8));
  const std::vector<int32_t> s2d = r.Values<int32_t>(out);
  EXPECT_THAT(s2d, ElementsAre(0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 12, 13, 14,
                               15, 16, 17, 18, 19, 24, 25, 26, 27, 20, 21, 22,
                               23, 28, 29, 30, 31));

  SingleNodeRunner back;
  int in2 = back.AddTensor<int32_t>(KILN_TYPE_INT32, {1, 2, 2, 8}, s2d);
  int out2 = back.AddTensor(KILN_TYPE_INT32, {});
  back.SetOp(KILN_OP_DEPTH_TO_SPACE, 1, {in2}, {out2});
  back.node().SetInt(KILN_OPTION_BLOCK_SIZE, 2);
  ASSERT_TRUE(back.Run(Kernel(KILN_OP_DEPTH_TO_SPACE)).ok());
  EXPECT_THAT(back.tensor(out2).shape, ElementsAre(1, 4, 4, 2));
  EXPECT_THAT(back.Values<int32_t>(out2), ElementsAreArray(values));
}

TEST_F(CpuKernelTest, SpaceToDepthRejectsIndivisibleHeight) {
  SingleNodeRunner r;
  int in = r.AddTensor<float>(KILN_TYPE_FLOAT32, {1, 3, 2, 1}, Iota(6));
  int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_SPACE_TO_DEPTH, 1, {in}, {out});
  r.node().SetInt(KILN_OPTION_BLOCK_SIZE, 2);
  absl::Status s = r.Run(Kernel(KILN_OP_SPACE_TO_DEPTH));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("must be multiples of block_size 2"));
}

// ---- Declared op-version ranges
// ----------------------------------------------

TEST_F(CpuKernelTest, DataKernelsDeclareOnlyImplementedVersions) {
  struct Range {
    int32_t op;
    std::vector<int32_t> covered;
    std::vector<int32_t> refused;
  };
  const std::vector<Range> ranges = {
      {KILN_OP_RESHAPE, {1}, {2}},
      {KILN_OP_SQUEEZE, {1}, {2}},  // v2 = STRING
      {KILN_OP_EXPAND_DIMS, {1}, {2}},
      {KILN_OP_SHAPE, {1}, {2}},
      {KILN_OP_TRANSPOSE, {1, 2, 3, 4, 5, 6}, {7, 8}},
      {KILN_OP_SPACE_TO_DEPTH, {1, 2}, {3}},
      {KILN_OP_DEPTH_TO_SPACE, {1, 2}, {3}},
      {KILN_OP_CONCATENATION, {1, 2, 3}, {4, 5}},
      {KILN_OP_PACK, {1, 2, 3}, {4}},
      {KILN_OP_UNPACK, {1, 2, 3, 4}, {5}},
      {KILN_OP_SPLIT, {1, 2, 3, 4}, {5}},
      {KILN_OP_SPLIT_V, {1, 2}, {3}},
      {KILN_OP_SLICE, {1, 2, 4, 5}, {3, 6, 7}},
      {KILN_OP_STRIDED_SLICE, {1, 2, 3, 4, 6, 8}, {5, 7, 9}},
      {KILN_OP_GATHER, {1, 2, 3, 4, 5, 6}, {7}},
      {KILN_OP_GATHER_ND, {1, 3, 4, 5}, {2, 6}},
      {KILN_OP_SCATTER_ND, {1}, {2}},
      {KILN_OP_TILE, {1, 3}, {2, 4}},
      {KILN_OP_BROADCAST_TO, {2, 3}, {1, 4}},
      {KILN_OP_PAD, {1, 2, 3, 4, 5}, {6}},
      {KILN_OP_PADV2, {1, 2, 3, 4, 5}, {6}},
      {KILN_OP_MIRROR_PAD, {1, 2, 3}, {4}},
  };
  for (const Range& range : ranges) {
    for (int32_t v : range.covered) {
      EXPECT_TRUE(Covers(range.op, v)) << "op " << range.op << " v" << v;
    }
    for (int32_t v : range.refused) {
      EXPECT_FALSE(Covers(range.op, v)) << "op " << range.op << " v" << v;
    }
  }
}

}  // namespace
}  // namespace kiln
