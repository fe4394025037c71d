#include "op_generators.h"

#include <cmath>
#include <limits>

#include "conformance_runner.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kiln::conformance {
namespace {

using ::testing::HasSubstr;

TEST(OpGeneratorsTest, SameSeedGivesSameCase) {
  absl::StatusOr<GeneratedCase> a = GenerateCase(KILN_OP_CONV_2D, 7);
  absl::StatusOr<GeneratedCase> b = GenerateCase(KILN_OP_CONV_2D, 7);
  absl::StatusOr<GeneratedCase> c = GenerateCase(KILN_OP_CONV_2D, 8);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  ASSERT_EQ(a->tensors.size(), b->tensors.size());
  for (size_t i = 0; i < a->tensors.size(); ++i) {
    EXPECT_EQ(a->tensors[i].bytes, b->tensors[i].bytes);
  }
  EXPECT_NE(a->tensors[0].bytes, c->tensors[0].bytes);
}

TEST(OpGeneratorsTest, CoversTheCommonOpFamilies) {
  for (int32_t op :
       {KILN_OP_ADD, KILN_OP_LESS, KILN_OP_LOGICAL_AND, KILN_OP_TANH,
        KILN_OP_CONV_2D, KILN_OP_DEPTHWISE_CONV_2D, KILN_OP_FULLY_CONNECTED,
        KILN_OP_MAX_POOL_2D, KILN_OP_MEAN, KILN_OP_ARG_MAX, KILN_OP_RESHAPE,
        KILN_OP_TRANSPOSE, KILN_OP_CONCATENATION, KILN_OP_STRIDED_SLICE,
        KILN_OP_SPLIT}) {
    SCOPED_TRACE(BuiltinOpName(op));
    absl::StatusOr<GeneratedCase> c = GenerateCase(op, 1);
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_FALSE(c->inputs.empty());
    EXPECT_FALSE(c->outputs.empty());
  }
}

// Every op of the shape / data movement family keeps its generator.
TEST(OpGeneratorsTest, CoversEveryShapeAndDataMovementOp) {
  for (int32_t op : {KILN_OP_RESHAPE,
                     KILN_OP_TRANSPOSE,
                     KILN_OP_CONCATENATION,
                     KILN_OP_SQUEEZE,
                     KILN_OP_EXPAND_DIMS,
                     KILN_OP_PAD,
                     KILN_OP_SLICE,
                     KILN_OP_STRIDED_SLICE,
                     KILN_OP_GATHER,
                     KILN_OP_TILE,
                     KILN_OP_BROADCAST_TO,
                     KILN_OP_SHAPE,
                     KILN_OP_SPLIT,
                     KILN_OP_PACK,
                     KILN_OP_UNPACK,
                     KILN_OP_SPACE_TO_DEPTH,
                     KILN_OP_DEPTH_TO_SPACE,
                     KILN_OP_REVERSE_V2,
                     KILN_OP_PADV2,
                     KILN_OP_MIRROR_PAD,
                     KILN_OP_SPLIT_V,
                     KILN_OP_GATHER_ND,
                     KILN_OP_SELECT_V2,
                     KILN_OP_PRELU,
                     KILN_OP_RESIZE_BILINEAR,
                     KILN_OP_RESIZE_NEAREST_NEIGHBOR,
                     KILN_OP_TOPK_V2,
                     KILN_OP_TRANSPOSE_CONV,
                     KILN_OP_CAST}) {
    SCOPED_TRACE(BuiltinOpName(op));
    absl::StatusOr<GeneratedCase> c = GenerateCase(op, 1);
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_EQ(c->family, "shape / data movement");
    EXPECT_FALSE(c->outputs.empty());
  }
}

TEST(OpGeneratorsTest, MissingGeneratorIsExplained) {
  const absl::StatusOr<GeneratedCase> c = GenerateCase(KILN_OP_LSTM, 1);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), "no input generator for op LSTM");
  EXPECT_EQ(GenerateCase(KILN_OP_CUSTOM, 1).status().message(),
            "no input generator for custom ops");
}

TEST(OpGeneratorsTest, BroadcastInputsOfBinaryOps) {
  absl::StatusOr<GeneratedCase> c = GenerateCase(KILN_OP_ADD, 1);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->tensors[static_cast<size_t>(c->inputs[0])].shape,
            (std::vector<int32_t>{2, 3, 4}));
  EXPECT_EQ(c->tensors[static_cast<size_t>(c->inputs[1])].shape,
            (std::vector<int32_t>{3, 1}));
}

Tensor FloatTensor(std::vector<float>* storage) {
  Tensor t;
  t.type = KILN_TYPE_FLOAT32;
  t.shape = {static_cast<int32_t>(storage->size())};
  t.data = storage->data();
  t.bytes = storage->size() * sizeof(float);
  return t;
}

TEST(CompareTensorsTest, FloatsWithinToleranceMatch) {
  std::vector<float> want = {1.f, -2.f, 1000.f,
                             std::numeric_limits<float>::quiet_NaN()};
  std::vector<float> got = {1.f + 5e-6f, -2.f, 1000.05f,
                            std::numeric_limits<float>::quiet_NaN()};
  EXPECT_EQ(CompareTensors(FloatTensor(&got), FloatTensor(&want)), "");
}

TEST(CompareTensorsTest, FloatsOutsideToleranceDiffer) {
  std::vector<float> want = {1.f, 2.f};
  std::vector<float> got = {1.f, 2.01f};
  EXPECT_THAT(CompareTensors(FloatTensor(&got), FloatTensor(&want)),
              HasSubstr("1 of 2 elements outside tolerance"));
  std::vector<float> nan = {1.f, std::numeric_limits<float>::quiet_NaN()};
  EXPECT_THAT(CompareTensors(FloatTensor(&nan), FloatTensor(&want)),
              HasSubstr("outside tolerance"));
}

TEST(CompareTensorsTest, ShapeAndExactTypesAreChecked) {
  std::vector<float> a = {1.f, 2.f}, b = {1.f, 2.f, 3.f};
  EXPECT_THAT(CompareTensors(FloatTensor(&a), FloatTensor(&b)),
              HasSubstr("output shape [2], reference [3]"));
  std::vector<int32_t> x = {1, 2}, y = {1, 3};
  Tensor tx, ty;
  tx.type = ty.type = KILN_TYPE_INT32;
  tx.shape = ty.shape = {2};
  tx.data = x.data();
  ty.data = y.data();
  tx.bytes = ty.bytes = 8;
  EXPECT_THAT(CompareTensors(tx, ty), HasSubstr("first at element 1"));
}

TEST(ConformanceRunnerTest, ServesEveryMinorOfTheMajor) {
  // 1.0 up to the minor these headers declare, so a new minor (1.3) is a
  // new level without an edit here.
  std::vector<uint32_t> every_minor;
  for (uint32_t minor = 0; minor <= KILN_EXT_API_VERSION_MINOR; ++minor) {
    every_minor.push_back(KILN_MAKE_VERSION(1, minor, 0));
  }
  EXPECT_EQ(ServedAbiLevels(), every_minor);
  EXPECT_GE(every_minor.size(), 3u);
  EXPECT_EQ(AbiLevelName(KILN_MAKE_VERSION(1, 1, 0)), "1.1");
}

}  // namespace
}  // namespace kiln::conformance
