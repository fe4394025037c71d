// Prepare-time values (prepare_values.cc): shape arithmetic evaluated at
// AllocateTensors gives its consumers static shapes and arena memory, no
// node is prepared again at invoke, and the values follow the input
// signature through the plan cache; and zero-copy RESHAPE / SQUEEZE
// (allocation.cc). Expected values are computed by hand here (the oracle),
// never by Kiln.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "interpreter/interpreter.h"
#include "interpreter/test_util.h"
#include "kiln/kiln_builtin_ops.h"

namespace kiln {
namespace {

using testing::CpuOnlyOptions;
using ::testing::ElementsAre;
using testing::Fill;
using testing::LoadBuilt;
using testing::Read;

TensorSpec IntTensor(std::string name, std::vector<int32_t> shape) {
  TensorSpec spec = FloatTensor(std::move(name), std::move(shape));
  spec.type = KILN_TYPE_INT32;
  return spec;
}

// Tensor indices of the Tensordot model.
enum : int32_t {
  kX,       // input float32 [N, 4, 8]
  kShape,   // SHAPE(x): [N, 4, 8]
  kIdx,     // const [0, 1]
  kLead,    // GATHER(shape, idx): [N, 4]
  kAxes,    // const [0]
  kRows,    // REDUCE_PROD(lead): N * 4
  kEight,   // const 8
  kNewShp,  // PACK(rows, 8): [N * 4, 8]
  kFlat,    // RESHAPE(x, new_shape): [N * 4, 8]
  kW,       // const [2, 8]
  kBias,    // const [2]
  kY,       // FULLY_CONNECTED(flat, w, bias): [N * 4, 2]
};

float Weight(int j, int k) { return static_cast<float>((j + 1) * (k % 3) - k); }

// x [N,4,8] -> SHAPE -> GATHER[0,1] -> REDUCE_PROD -> PACK(., 8) -> RESHAPE(x)
// -> FULLY_CONNECTED (the converters' Tensordot pattern); with `add_tail`,
// ADD(flat, flat) instead of FULLY_CONNECTED (for the test delegate).
std::shared_ptr<const Model> TensordotModel(bool add_tail = false) {
  ModelBuilder b;
  SubgraphBuilder& g = b.AddSubgraph("main");
  TensorSpec xs = FloatTensor("x", {1, 4, 8});
  xs.shape_signature = {-1, 4, 8};
  g.AddTensor(xs);
  g.AddTensor(IntTensor("shape", {3}));
  g.AddConstantTensor(IntTensor("idx", {2}), std::vector<int32_t>{0, 1});
  g.AddTensor(IntTensor("lead", {2}));
  g.AddConstantTensor(IntTensor("axes", {1}), std::vector<int32_t>{0});
  g.AddTensor(IntTensor("rows", {}));
  g.AddConstantTensor(IntTensor("eight", {}), std::vector<int32_t>{8});
  g.AddTensor(IntTensor("new_shape", {2}));
  g.AddTensor(FloatTensor("flat", {4, 8}));
  std::vector<float> w(16);
  for (int j = 0; j < 2; ++j) {
    for (int k = 0; k < 8; ++k)
      w[static_cast<size_t>(j * 8 + k)] = Weight(j, k);
  }
  g.AddConstantTensor(FloatTensor("w", {2, 8}), w);
  g.AddConstantTensor(FloatTensor("bias", {2}), std::vector<float>{0.5f, -1.f});
  g.AddTensor(FloatTensor("y", {4, add_tail ? 8 : 2}));
  g.AddOperator(KILN_OP_SHAPE, 1, {kX}, {kShape},
                {{KILN_OPTION_OUTPUT_TYPE, OptionInt(KILN_TYPE_INT32)}});
  g.AddOperator(KILN_OP_GATHER, 1, {kShape, kIdx}, {kLead},
                {{KILN_OPTION_AXIS, OptionInt(0)}});
  g.AddOperator(KILN_OP_REDUCE_PROD, 1, {kLead, kAxes}, {kRows},
                {{KILN_OPTION_KEEP_DIMS, OptionInt(0)}});
  g.AddOperator(KILN_OP_PACK, 1, {kRows, kEight}, {kNewShp},
                {{KILN_OPTION_VALUES_COUNT, OptionInt(2)},
                 {KILN_OPTION_AXIS, OptionInt(0)}});
  g.AddOperator(KILN_OP_RESHAPE, 1, {kX, kNewShp}, {kFlat});
  if (add_tail) {
    g.AddOperator(KILN_OP_ADD, 1, {kFlat, kFlat}, {kY});
  } else {
    g.AddOperator(KILN_OP_FULLY_CONNECTED, 1, {kFlat, kW, kBias}, {kY});
  }
  g.SetInputs({kX});
  g.SetOutputs({kY});
  auto model = LoadBuilt(b);
  EXPECT_TRUE(model.ok()) << model.status();
  return model.ok() ? *model : nullptr;
}

std::unique_ptr<Interpreter> Create(const std::shared_ptr<const Model>& model,
                                    int32_t max_plans,
                                    bool test_delegate = false) {
  if (model == nullptr) return nullptr;
  InterpreterOptions options =
      test_delegate ? testing::WithTestDelegate("") : CpuOnlyOptions();
  options.plan_cache.max_plans = max_plans;
  options.plan_cache.retrace_threshold = 0;  // switching is the point here
  options.profile = true;
  auto interp = Interpreter::Create(model, options);
  EXPECT_TRUE(interp.ok()) << interp.status();
  return interp.ok() ? std::move(*interp) : nullptr;
}

// Resizes x to [n, 4, 8] and allocates; then, before any Invoke, every
// shape downstream of the shape arithmetic is static.
void AllocateBatch(Interpreter& it, int32_t n) {
  KILN_ASSERT_OK(it.ResizeInput(0, {n, 4, 8}));
  KILN_ASSERT_OK(it.AllocateTensors());
  const TensorState& shape = *it.raw_tensor(0, kNewShp);
  EXPECT_EQ(shape.storage, TensorStorage::kOwned);
  EXPECT_THAT(Read<int32_t>(&shape), ElementsAre(4 * n, 8));
  for (int32_t t : {kFlat, kY}) {
    const TensorState& x = *it.raw_tensor(0, t);
    EXPECT_TRUE(x.has_rank) << x.desc->name;
    EXPECT_EQ(x.storage, TensorStorage::kArena) << x.desc->name;
    EXPECT_EQ(x.shape, (std::vector<int32_t>{4 * n, t == kFlat ? 8 : 2}))
        << x.desc->name;
  }
}

// Invokes with x[i] = i % 7 - 3 and checks y against the hand-computed
// product; no node is prepared at invoke and only RESHAPE and
// FULLY_CONNECTED run.
void InvokeAndCheck(Interpreter& it, int32_t n) {
  std::vector<float> x(static_cast<size_t>(n) * 32);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
  }
  Fill(it.input(0), x);
  it.ClearProfile();
  KILN_ASSERT_OK(it.Invoke());
  std::vector<std::string> ran;
  for (const ProfileEvent& e : it.ProfileEvents()) {
    EXPECT_NE(e.category, "prepare") << e.name;
    if (e.category == "invoke") ran.push_back(e.op);
  }
  EXPECT_THAT(ran, ElementsAre("RESHAPE", "FULLY_CONNECTED"));
  const std::vector<float> y = Read<float>(it.output(0));
  ASSERT_EQ(y.size(), static_cast<size_t>(n) * 8);
  for (int r = 0; r < 4 * n; ++r) {
    for (int j = 0; j < 2; ++j) {
      float want = j == 0 ? 0.5f : -1.f;
      for (int k = 0; k < 8; ++k) {
        want += x[static_cast<size_t>(r * 8 + k)] * Weight(j, k);
      }
      EXPECT_FLOAT_EQ(y[static_cast<size_t>(r * 2 + j)], want)
          << "row " << r << " column " << j << " batch " << n;
    }
  }
}

class PrepareValuesTest : public ::testing::TestWithParam<int32_t> {};

TEST_P(PrepareValuesTest, TensordotShapesAreStaticAcrossSignatures) {
  std::unique_ptr<Interpreter> it = Create(TensordotModel(), GetParam());
  ASSERT_NE(it, nullptr);
  for (int32_t n : {1, 3, 1, 3, 2, 1}) {
    AllocateBatch(*it, n);
    InvokeAndCheck(*it, n);
    InvokeAndCheck(*it, n);  // and again, with the same plan
  }
  // [1,4,8], [3,4,8], [2,4,8] are prepared once each with room for them;
  // with one plan every switch prepares.
  const PlanCacheStats stats = it->plan_cache_stats();
  EXPECT_EQ(stats.hits, GetParam() >= 3 ? 3u : 0u);
}

INSTANTIATE_TEST_SUITE_P(PlanCache, PrepareValuesTest,
                         ::testing::Values(4, 1, 0),
                         [](const ::testing::TestParamInfo<int32_t>& info) {
                           return "MaxPlans" + std::to_string(info.param);
                         });

// The partition after the RESHAPE (the test delegate's ADD) has static
// shapes too: prepared once at AllocateTensors, never at invoke.
TEST(PrepareValuesDelegateTest, PartitionAfterTheReshapeIsNotDeferred) {
  std::unique_ptr<Interpreter> it =
      Create(TensordotModel(/*add_tail=*/true), 4, /*test_delegate=*/true);
  ASSERT_NE(it, nullptr);
  ASSERT_EQ(it->Partitions(0).size(), 1u);
  for (int32_t n : {2, 1, 2}) {
    KILN_ASSERT_OK(it->ResizeInput(0, {n, 4, 8}));
    KILN_ASSERT_OK(it->AllocateTensors());
    EXPECT_EQ(it->raw_tensor(0, kY)->storage, TensorStorage::kArena);
    std::vector<float> x(static_cast<size_t>(n) * 32);
    for (size_t i = 0; i < x.size(); ++i) x[i] = 0.25f * static_cast<float>(i);
    Fill(it->input(0), x);
    it->ClearProfile();
    KILN_ASSERT_OK(it->Invoke());
    std::vector<std::string> ran;
    for (const ProfileEvent& e : it->ProfileEvents()) {
      EXPECT_THAT(e.category, ::testing::Not(::testing::EndsWith("prepare")))
          << e.name;
      if (e.category == "invoke" || e.category == "partition_invoke") {
        ran.push_back(e.op);
      }
    }
    EXPECT_THAT(ran, ElementsAre("RESHAPE", "DELEGATE"));
    const std::vector<float> y = Read<float>(it->output(0));
    ASSERT_EQ(y.size(), x.size());
    for (size_t i = 0; i < x.size(); ++i) EXPECT_FLOAT_EQ(y[i], 2.f * x[i]);
  }
}

// x -> RESHAPE(x, shape input) -> z (value-dependent shape) -> SHAPE -> out:
// the SHAPE of a dynamic tensor stays deferred to invoke.
TEST(PrepareValuesDynamicTest, ShapeOfAValueDependentTensorStaysDeferred) {
  ModelBuilder b;
  SubgraphBuilder& g = b.AddSubgraph("main");
  const int32_t x = g.AddTensor(FloatTensor("x", {6}));
  const int32_t target = g.AddTensor(IntTensor("target", {2}));
  const int32_t z = g.AddTensor(FloatTensor("z", {2, 3}));
  const int32_t shape = g.AddTensor(IntTensor("shape", {2}));
  const int32_t one =
      g.AddConstantTensor(IntTensor("one", {}), std::vector<int32_t>{1});
  const int32_t out = g.AddTensor(IntTensor("out", {2}));
  g.AddOperator(KILN_OP_RESHAPE, 1, {x, target}, {z});
  g.AddOperator(KILN_OP_SHAPE, 1, {z}, {shape},
                {{KILN_OPTION_OUTPUT_TYPE, OptionInt(KILN_TYPE_INT32)}});
  g.AddOperator(KILN_OP_ADD, 1, {shape, one}, {out});
  g.SetInputs({x, target});
  g.SetOutputs({out});
  auto model = LoadBuilt(b);
  ASSERT_TRUE(model.ok()) << model.status();
  std::unique_ptr<Interpreter> it = Create(*model, 4);
  ASSERT_NE(it, nullptr);
  KILN_ASSERT_OK(it->AllocateTensors());
  EXPECT_FALSE(it->raw_tensor(0, shape)->has_rank);
  EXPECT_EQ(it->raw_tensor(0, shape)->data, nullptr);
  for (const auto& [rows, cols] : {std::pair{3, 2}, std::pair{1, 6}}) {
    Fill(it->input(0), std::vector<float>(6, 1.f));
    Fill(it->input(1), std::vector<int32_t>{rows, cols});
    it->ClearProfile();
    KILN_ASSERT_OK(it->Invoke());
    EXPECT_THAT(Read<int32_t>(it->output(0)), ElementsAre(rows + 1, cols + 1));
    int prepares = 0;
    for (const ProfileEvent& e : it->ProfileEvents()) {
      prepares += e.category == "prepare" ? 1 : 0;
    }
    EXPECT_EQ(prepares, 3);  // RESHAPE, SHAPE, ADD prepared at invoke
  }
}

// A shape value that is a subgraph output is computed at invoke, into the
// memory the application reads.
TEST(PrepareValuesDynamicTest, ShapeOutputOfTheSubgraphRunsAtInvoke) {
  ModelBuilder b;
  SubgraphBuilder& g = b.AddSubgraph("main");
  const int32_t x = g.AddTensor(FloatTensor("x", {2, 5}));
  const int32_t shape = g.AddTensor(IntTensor("shape", {2}));
  g.AddOperator(KILN_OP_SHAPE, 1, {x}, {shape},
                {{KILN_OPTION_OUTPUT_TYPE, OptionInt(KILN_TYPE_INT32)}});
  g.SetInputs({x});
  g.SetOutputs({shape});
  auto model = LoadBuilt(b);
  ASSERT_TRUE(model.ok()) << model.status();
  std::unique_ptr<Interpreter> it = Create(*model, 4);
  ASSERT_NE(it, nullptr);
  KILN_ASSERT_OK(it->ResizeInput(0, {7, 3}));
  KILN_ASSERT_OK(it->AllocateTensors());
  EXPECT_EQ(it->raw_tensor(0, shape)->storage, TensorStorage::kArena);
  KILN_ASSERT_OK(it->Invoke());
  EXPECT_THAT(Read<int32_t>(it->output(0)), ElementsAre(7, 3));
}

// x -> ADD(x, x) = a -> RESHAPE(a) = b -> SQUEEZE(b) = c -> ADD(c, c) = y,
// and ADD(a, x) = keep when `a_lives_on`: a RESHAPE / SQUEEZE output shares
// its input's arena bytes when the input dies there (zero copy), never
// otherwise.
void RunRelabelChain(bool a_lives_on) {
  ModelBuilder b;
  SubgraphBuilder& g = b.AddSubgraph("main");
  const int32_t x = g.AddTensor(FloatTensor("x", {2, 6}));
  const int32_t a = g.AddTensor(FloatTensor("a", {2, 6}));
  const int32_t shape = g.AddConstantTensor(IntTensor("shape", {3}),
                                            std::vector<int32_t>{3, 1, 4});
  const int32_t r = g.AddTensor(FloatTensor("r", {3, 1, 4}));
  const int32_t c = g.AddTensor(FloatTensor("c", {3, 4}));
  const int32_t y = g.AddTensor(FloatTensor("y", {3, 4}));
  g.AddOperator(KILN_OP_ADD, 1, {x, x}, {a});
  g.AddOperator(KILN_OP_RESHAPE, 1, {a, shape}, {r});
  g.AddOperator(KILN_OP_SQUEEZE, 1, {r}, {c},
                {{KILN_OPTION_SQUEEZE_DIMS, OptionIntArray({1})}});
  g.AddOperator(KILN_OP_ADD, 1, {c, c}, {y});
  std::vector<int32_t> outputs = {y};
  if (a_lives_on) {
    const int32_t keep = g.AddTensor(FloatTensor("keep", {2, 6}));
    g.AddOperator(KILN_OP_ADD, 1, {a, x}, {keep});
    outputs.push_back(keep);
  }
  g.SetInputs({x});
  g.SetOutputs(outputs);
  auto model = LoadBuilt(b);
  ASSERT_TRUE(model.ok()) << model.status();
  std::unique_ptr<Interpreter> it = Create(*model, 4);
  ASSERT_NE(it, nullptr);
  KILN_ASSERT_OK(it->AllocateTensors());
  const void* a_data = it->raw_tensor(0, a)->data;
  EXPECT_EQ(it->raw_tensor(0, r)->data == a_data, !a_lives_on);
  EXPECT_EQ(it->raw_tensor(0, c)->data == a_data, !a_lives_on);
  EXPECT_NE(it->raw_tensor(0, y)->data, a_data);
  std::vector<float> xs(12);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(i) - 5.f;
  Fill(it->input(0), xs);
  KILN_ASSERT_OK(it->Invoke());
  const std::vector<float> ys = Read<float>(it->output(0));
  ASSERT_EQ(ys.size(), 12u);
  for (size_t i = 0; i < 12; ++i) EXPECT_FLOAT_EQ(ys[i], 4.f * xs[i]) << i;
  if (a_lives_on) {
    const std::vector<float> keep = Read<float>(it->output(1));
    ASSERT_EQ(keep.size(), 12u);
    for (size_t i = 0; i < 12; ++i) EXPECT_FLOAT_EQ(keep[i], 3.f * xs[i]);
  }
}

TEST(ZeroCopyRelabelTest, OutputSharesTheBytesOfAnInputThatDiesThere) {
  RunRelabelChain(/*a_lives_on=*/false);
}

TEST(ZeroCopyRelabelTest, InputUsedLaterKeepsItsOwnBytes) {
  RunRelabelChain(/*a_lives_on=*/true);
}

}  // namespace
}  // namespace kiln
