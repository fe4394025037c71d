// Sparse constants: the loader densifies valid layouts (expected dense
// values worked out by hand from TFLite's format description) and refuses
// malformed ones with a message naming the tensor and the broken rule.
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kiln/kiln_builtin_ops.h"
#include "model/model.h"
#include "schema/kiln_model_generated.h"

namespace kiln {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

struct SparseDim {
  bool csr = false;
  int32_t dense_size = 0;
  std::vector<int32_t> segments, indices;
};

// One constant tensor 'w' with the given sparsity feeding DENSIFY.
struct SparseSpec {
  std::vector<int32_t> shape;
  fb::TensorType type = fb::TensorType::FLOAT32;
  std::vector<uint8_t> values;  // the stored values' bytes
  std::vector<int32_t> traversal_order, block_map;
  std::vector<SparseDim> dims;
  bool constant = true;
};

template <typename T>
std::vector<uint8_t> Bytes(const std::vector<T>& v) {
  std::vector<uint8_t> out(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(out.data(), v.data(), out.size());
  return out;
}

flatbuffers::Offset<fb::SparsityParameters> Sparsity(
    flatbuffers::FlatBufferBuilder& fbb, const SparseSpec& s) {
  std::vector<flatbuffers::Offset<fb::DimensionMetadata>> dims;
  for (const SparseDim& d : s.dims) {
    if (!d.csr) {
      dims.push_back(fb::CreateDimensionMetadata(fbb, fb::DimensionType::DENSE,
                                                 d.dense_size));
      continue;
    }
    const auto segments =
        fb::CreateInt32Vector(fbb, fbb.CreateVector(d.segments)).Union();
    const auto indices =
        fb::CreateInt32Vector(fbb, fbb.CreateVector(d.indices)).Union();
    dims.push_back(fb::CreateDimensionMetadata(
        fbb, fb::DimensionType::SPARSE_CSR, 0,
        fb::SparseIndexVector::Int32Vector, segments,
        fb::SparseIndexVector::Int32Vector, indices));
  }
  return fb::CreateSparsityParameters(fbb, fbb.CreateVector(s.traversal_order),
                                      fbb.CreateVector(s.block_map),
                                      fbb.CreateVector(dims));
}

std::vector<uint8_t> SparseModel(const SparseSpec& s) {
  flatbuffers::FlatBufferBuilder fbb;
  fbb.ForceVectorAlignment(s.values.size(), 1, 16);
  const auto data = fbb.CreateVector(s.values);
  std::vector<flatbuffers::Offset<fb::Buffer>> buffers = {
      fb::CreateBuffer(fbb), fb::CreateBuffer(fbb, data)};
  std::vector<flatbuffers::Offset<fb::OperatorCode>> codes = {
      fb::CreateOperatorCode(fbb, KILN_OP_DENSIFY, 0, 1, KILN_OP_DENSIFY)};
  std::vector<flatbuffers::Offset<fb::Tensor>> tensors = {
      fb::CreateTensor(fbb, fbb.CreateVector(s.shape), s.type,
                       s.constant ? 1 : 0, fbb.CreateString("w"), 0, false,
                       Sparsity(fbb, s)),
      fb::CreateTensor(fbb, fbb.CreateVector(s.shape), s.type, 0,
                       fbb.CreateString("dense"))};
  std::vector<flatbuffers::Offset<fb::Operator>> ops = {
      fb::CreateOperator(fbb, 0, fbb.CreateVector(std::vector<int32_t>{0}),
                         fbb.CreateVector(std::vector<int32_t>{1}))};
  std::vector<int32_t> inputs;
  if (!s.constant) inputs.push_back(0);
  std::vector<flatbuffers::Offset<fb::SubGraph>> subgraphs = {
      fb::CreateSubGraph(
          fbb, fbb.CreateVector(tensors), fbb.CreateVector(inputs),
          fbb.CreateVector(std::vector<int32_t>{1}), fbb.CreateVector(ops))};
  fb::FinishModelBuffer(fbb, fb::CreateModel(fbb, 3, fbb.CreateVector(codes),
                                             fbb.CreateVector(subgraphs), 0,
                                             fbb.CreateVector(buffers)));
  return std::vector<uint8_t>(fbb.GetBufferPointer(),
                              fbb.GetBufferPointer() + fbb.GetSize());
}

template <typename T>
std::vector<T> DenseOf(const std::vector<uint8_t>& bytes) {
  auto model = Model::FromBuffer(bytes.data(), bytes.size(), "sparse.tflite");
  EXPECT_TRUE(model.ok()) << model.status();
  if (!model.ok()) return {};
  const Tensor& w = (*model)->graph(0).tensors[0];
  std::vector<T> out(w.bytes / sizeof(T));
  std::memcpy(out.data(), w.data, w.bytes);
  return out;
}

std::string LoadError(const SparseSpec& s) {
  const std::vector<uint8_t> bytes = SparseModel(s);
  auto model = Model::FromBuffer(bytes.data(), bytes.size(), "sparse.tflite");
  return model.ok() ? "loaded" : std::string(model.status().message());
}

// [[1,0,2,0],[0,0,0,0],[0,3,0,0],[4,0,0,5]]: rows dense, columns CSR.
SparseSpec CsrMatrix() {
  SparseSpec s;
  s.shape = {4, 4};
  s.values = Bytes(std::vector<float>{1, 2, 3, 4, 5});
  s.traversal_order = {0, 1};
  s.dims = {{false, 4, {}, {}}, {true, 0, {0, 2, 2, 3, 5}, {0, 2, 1, 0, 3}}};
  return s;
}

TEST(SparsityTest, CsrRowsDensify) {
  EXPECT_THAT(DenseOf<float>(SparseModel(CsrMatrix())),
              ElementsAreArray<float>(
                  {1, 0, 2, 0, 0, 0, 0, 0, 0, 3, 0, 0, 4, 0, 0, 5}));
}

// 2x2 blocks of a 4x4 matrix: block rows dense, block columns CSR (block
// (0,0) holds 1 2 / 3 4, block (1,1) holds 5 6 / 7 8), blocks dense.
TEST(SparsityTest, BlockSparseDensifies) {
  SparseSpec s;
  s.shape = {4, 4};
  s.type = fb::TensorType::INT8;
  s.values = Bytes(std::vector<int8_t>{1, 2, 3, 4, 5, 6, 7, 8});
  s.traversal_order = {0, 1, 2, 3};
  s.block_map = {0, 1};
  s.dims = {{false, 2, {}, {}},
            {true, 0, {0, 1, 2}, {0, 1}},
            {false, 2, {}, {}},
            {false, 2, {}, {}}};
  EXPECT_THAT(DenseOf<int8_t>(SparseModel(s)),
              ElementsAreArray<int8_t>(
                  {1, 2, 0, 0, 3, 4, 0, 0, 0, 0, 5, 6, 0, 0, 7, 8}));
}

// Column-major traversal of a 2x3 matrix: columns dense, rows CSR; column
// 0 holds row 1 (10), column 2 rows 0 and 1 (20, 30).
TEST(SparsityTest, ColumnMajorTraversalDensifies) {
  SparseSpec s;
  s.shape = {2, 3};
  s.values = Bytes(std::vector<float>{10, 20, 30});
  s.traversal_order = {1, 0};
  s.dims = {{false, 3, {}, {}}, {true, 0, {0, 1, 1, 3}, {1, 0, 1}}};
  EXPECT_THAT(DenseOf<float>(SparseModel(s)), ElementsAre(0, 0, 20, 10, 0, 30));
}

// TFLite's own test model: a 4x4 int8 constant in 2x2 blocks whose index
// vectors are uint8; blocks (0,0) = 1 0 / 0 4, (0,1) = 2 3 / 0 0 and
// (1,1) = 5 0 / 0 6.
TEST(SparsityTest, TfliteTestModelDensifies) {
  const std::string path = std::string(KILN_SHARED_MODELS_DIR) +
                           "/tflite-testdata/sparse_tensor.bin";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "absent: " << path;
  auto model = Model::FromFile(path);
  ASSERT_TRUE(model.ok()) << model.status();
  const Tensor& w = (*model)->graph(0).tensors[0];
  ASSERT_EQ(w.bytes, 16u);
  const int8_t* v = static_cast<const int8_t*>(w.data);
  EXPECT_THAT(std::vector<int8_t>(v, v + 16),
              ElementsAreArray<int8_t>(
                  {1, 0, 2, 3, 0, 4, 0, 0, 0, 0, 5, 0, 0, 0, 0, 6}));
}

TEST(SparsityTest, MalformedLayoutsAreRefused) {
  const auto refused = [](SparseSpec s, const char* why) {
    const std::string message = LoadError(s);
    EXPECT_THAT(message, HasSubstr("tensor 0 ('w')")) << why;
    EXPECT_THAT(message, HasSubstr(why));
  };
  SparseSpec s = CsrMatrix();
  s.dims[1].segments = {1, 2, 2, 3, 5};
  refused(s, "segments start at 0");
  s = CsrMatrix();
  s.dims[1].segments = {0, 2, 2, 3};
  refused(s, "4 parent positions need 5");
  s = CsrMatrix();
  s.dims[1].indices = {0, 2, 1, 0, 4};
  refused(s, "outside 0..3");
  s = CsrMatrix();
  s.dims[1].segments = {0, 2, 2, 3, 4};
  refused(s, "array_indices has 5 entries");
  s = CsrMatrix();
  s.values = Bytes(std::vector<float>{1, 2, 3, 4});
  refused(s, "stores 5 values");
  s = CsrMatrix();
  s.traversal_order = {0, 0};
  refused(s, "traversal_order entry 1 is 0");
  s = CsrMatrix();
  s.dims[0].dense_size = 5;
  refused(s, "dense_size 5");
  s = CsrMatrix();
  s.dims.pop_back();
  refused(s, "dim_metadata has 1 entries");
  s = CsrMatrix();
  s.block_map = {1};
  s.traversal_order = {0, 1, 2};
  s.dims.push_back({false, 3, {}, {}});
  refused(s, "divides dimension 1");
  s = CsrMatrix();
  s.type = fb::TensorType::STRING;
  refused(s, "sparse STRING constants are not supported");
  s = CsrMatrix();
  s.constant = false;
  refused(s, "only constants can be sparse");
}

}  // namespace
}  // namespace kiln
