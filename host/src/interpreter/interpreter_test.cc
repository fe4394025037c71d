// Interpreter tests on models written with ModelBuilder.
#include "interpreter/interpreter.h"

#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "interpreter/test_util.h"
#include "kiln/kiln_builtin_ops.h"

namespace kiln {
namespace {

using testing::CpuOnlyOptions;
using ::testing::ElementsAre;
using testing::Fill;
using ::testing::HasSubstr;
using testing::LoadBuilt;
using testing::Read;

// x -> ADD(x,x)=a -> ADD(a,a)=b -> ADD(b,b)=c -> ADD(c,c)=y
std::shared_ptr<const Model> AddChain(std::vector<int32_t> shape,
                                      std::vector<int32_t> signature = {}) {
  ModelBuilder b;
  SubgraphBuilder& g = b.AddSubgraph("main");
  TensorSpec xs = FloatTensor("x", shape);
  xs.shape_signature = signature;
  const int32_t x = g.AddTensor(xs);
  const int32_t a = g.AddTensor(FloatTensor("a", shape));
  const int32_t bb = g.AddTensor(FloatTensor("b", shape));
  const int32_t c = g.AddTensor(FloatTensor("c", shape));
  const int32_t y = g.AddTensor(FloatTensor("y", shape));
  g.AddOperator(KILN_OP_ADD, 1, {x, x}, {a});
  g.AddOperator(KILN_OP_ADD, 1, {a, a}, {bb});
  g.AddOperator(KILN_OP_ADD, 1, {bb, bb}, {c});
  g.AddOperator(KILN_OP_ADD, 1, {c, c}, {y});
  g.SetInputs({x});
  g.SetOutputs({y});
  auto model = LoadBuilt(b);
  EXPECT_TRUE(model.ok()) << model.status();
  return model.ok() ? *model : nullptr;
}

TEST(InterpreterTest, RunsAChainAndPlansTheArenaByLifetime) {
  auto model = AddChain({1, 16});
  ASSERT_NE(model, nullptr);
  auto interp = Interpreter::Create(model, CpuOnlyOptions());
  ASSERT_TRUE(interp.ok()) << interp.status();
  Interpreter& it = **interp;
  KILN_ASSERT_OK(it.AllocateTensors());
  // x and y live throughout; a and c never live together: 4 x 64 bytes.
  EXPECT_EQ(it.arena_bytes(), 4u * 64u);
  ASSERT_EQ(it.num_tensors(0), 5);
  EXPECT_EQ(it.tensor(0, 1)->data, it.tensor(0, 3)->data);  // a and c share
  for (int i = 0; i < it.num_tensors(0); ++i) {
    const TensorState& t = *it.tensor(0, i);
    EXPECT_EQ(t.storage, TensorStorage::kArena) << t.desc->name;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data) % 64, 0u) << t.desc->name;
  }
  std::vector<float> x(16);
  for (int i = 0; i < 16; ++i)
    x[static_cast<size_t>(i)] = static_cast<float>(i) - 4.f;
  Fill(it.input(0), x);
  KILN_ASSERT_OK(it.Invoke());
  const std::vector<float> y = Read<float>(it.output(0));
  ASSERT_EQ(y.size(), 16u);
  for (size_t i = 0; i < 16; ++i) EXPECT_FLOAT_EQ(y[i], 16.f * x[i]);
}

TEST(InterpreterTest, SmallTensorsAreAlignedTo64Bytes) {
  auto model = AddChain({1, 3});
  ASSERT_NE(model, nullptr);
  auto interp = Interpreter::Create(model, CpuOnlyOptions());
  ASSERT_TRUE(interp.ok()) << interp.status();
  KILN_ASSERT_OK((*interp)->AllocateTensors());
  EXPECT_EQ((*interp)->arena_bytes(), 4u * 64u);
}

// Variable tensors start as TFLite's ResetVariableTensor leaves them: an
// INT8 one at its zero point (real 0), any other at 0; a later
// AllocateTensors keeps their values.
TEST(InterpreterTest, VariablesStartAtRealZeroAndKeepTheirValues) {
  ModelBuilder b;
  SubgraphBuilder& g = b.AddSubgraph("main");
  const int32_t x = g.AddTensor(FloatTensor("x", {2}));
  const int32_t y = g.AddTensor(FloatTensor("y", {2}));
  TensorSpec q8;
  q8.name = "state_i8";
  q8.type = KILN_TYPE_INT8;
  q8.shape = {3};
  q8.quantization.scales = {0.5f};
  q8.quantization.zero_points = {-5};
  q8.is_variable = true;
  TensorSpec q16 = q8;
  q16.name = "state_i16";
  q16.type = KILN_TYPE_INT16;
  q16.shape = {2};
  q16.quantization.scales = {0.25f};
  q16.quantization.zero_points = {0};
  q16.is_variable = true;
  const int32_t v8 = g.AddTensor(q8);
  const int32_t v16 = g.AddTensor(q16);
  g.AddOperator(KILN_OP_ADD, 1, {x, x}, {y});
  g.SetInputs({x});
  g.SetOutputs({y});
  auto model = LoadBuilt(b);
  ASSERT_TRUE(model.ok()) << model.status();
  auto interp = Interpreter::Create(*model, CpuOnlyOptions());
  ASSERT_TRUE(interp.ok()) << interp.status();
  Interpreter& it = **interp;
  KILN_ASSERT_OK(it.AllocateTensors());
  const auto* i8 = static_cast<const int8_t*>(it.tensor(0, v8)->data);
  const auto* i16 = static_cast<const int16_t*>(it.tensor(0, v16)->data);
  ASSERT_TRUE(i8 != nullptr && i16 != nullptr);
  EXPECT_THAT(std::vector<int8_t>(i8, i8 + 3), ElementsAre(-5, -5, -5));
  EXPECT_THAT(std::vector<int16_t>(i16, i16 + 2), ElementsAre(0, 0));
  static_cast<int8_t*>(it.tensor(0, v8)->data)[1] = 7;
  KILN_ASSERT_OK(it.AllocateTensors());
  EXPECT_EQ(static_cast<const int8_t*>(it.tensor(0, v8)->data)[1], 7);
}

TEST(InterpreterTest, InvokeBeforeAllocateFails) {
  auto model = AddChain({1, 4});
  ASSERT_NE(model, nullptr);
  auto interp = Interpreter::Create(model, CpuOnlyOptions());
  ASSERT_TRUE(interp.ok()) << interp.status();
  const absl::Status s = (*interp)->Invoke();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("AllocateTensors"));
}

TEST(InterpreterTest, ResizeInputAlongDynamicDimension) {
  auto model = AddChain({1, 16}, {-1, 16});
  ASSERT_NE(model, nullptr);
  auto interp = Interpreter::Create(model, CpuOnlyOptions());
  ASSERT_TRUE(interp.ok()) << interp.status();
  Interpreter& it = **interp;
  KILN_ASSERT_OK(it.AllocateTensors());
  const uint64_t small = it.arena_bytes();
  KILN_ASSERT_OK(it.ResizeInput(0, {3, 16}));
  EXPECT_EQ(it.Invoke().code(), absl::StatusCode::kFailedPrecondition);
  KILN_ASSERT_OK(it.AllocateTensors());
  EXPECT_GT(it.arena_bytes(), small);
  EXPECT_EQ(it.arena_bytes(), 4u * 3u * 64u);
  std::vector<float> x(48, 1.5f);
  Fill(it.input(0), x);
  KILN_ASSERT_OK(it.Invoke());
  EXPECT_THAT(it.output(0)->shape, ElementsAre(3, 16));
  const std::vector<float> y = Read<float>(it.output(0));
  ASSERT_EQ(y.size(), 48u);
  EXPECT_FLOAT_EQ(y[47], 24.f);
  EXPECT_FALSE(it.ResizeInput(0, {-1, 16}).ok());
  EXPECT_FALSE(it.ResizeInput(1, {1, 16}).ok());
}

TEST(InterpreterTest, DynamicShapeFromInputValues) {
  // RESHAPE(x, shape) with a non-constant shape: its output size is known
  // only at Invoke, and so is the ADD after it.
  ModelBuilder b;
  SubgraphBuilder& g = b.AddSubgraph("main");
  const int32_t x = g.AddTensor(FloatTensor("x", {2, 3}));
  TensorSpec shape_spec;
  shape_spec.name = "shape";
  shape_spec.type = KILN_TYPE_INT32;
  shape_spec.shape = {2};
  const int32_t shape = g.AddTensor(shape_spec);
  const int32_t r = g.AddTensor(FloatTensor("reshaped", {}));
  const int32_t y = g.AddTensor(FloatTensor("y", {}));
  g.AddOperator(KILN_OP_RESHAPE, 1, {x, shape}, {r});
  g.AddOperator(KILN_OP_ADD, 1, {r, r}, {y});
  g.SetInputs({x, shape});
  g.SetOutputs({y});
  auto model = LoadBuilt(b);
  ASSERT_TRUE(model.ok()) << model.status();
  auto interp = Interpreter::Create(*model, CpuOnlyOptions());
  ASSERT_TRUE(interp.ok()) << interp.status();
  Interpreter& it = **interp;
  KILN_ASSERT_OK(it.AllocateTensors());
  EXPECT_FALSE(it.output(0)->has_rank);
  EXPECT_EQ(it.output(0)->data, nullptr);
  Fill(it.input(0), std::vector<float>{1, 2, 3, 4, 5, 6});
  for (const std::vector<int32_t>& dims :
       {std::vector<int32_t>{3, 2}, std::vector<int32_t>{6, 1}}) {
    Fill(it.input(1), dims);
    KILN_ASSERT_OK(it.Invoke());
    EXPECT_EQ(it.output(0)->shape, dims);
    EXPECT_EQ(it.output(0)->storage, TensorStorage::kOwned);
    EXPECT_THAT(Read<float>(it.output(0)), ElementsAre(2, 4, 6, 8, 10, 12));
  }
}

TEST(InterpreterTest, OutputAliasingAnInputFailsAtAllocation) {
  ModelBuilder b;
  SubgraphBuilder& g = b.AddSubgraph("main");
  const int32_t x = g.AddTensor(FloatTensor("x", {4}));
  const int32_t y = g.AddTensor(FloatTensor("y", {4}));
  g.AddOperator(KILN_OP_ADD, 1, {x, x}, {x});
  g.AddOperator(KILN_OP_ADD, 1, {x, x}, {y});
  g.SetInputs({x});
  g.SetOutputs({y});
  auto bytes = b.BuildUnchecked();
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  auto model = testing::LoadBytes(*bytes, "aliasing");
  ASSERT_TRUE(model.ok()) << model.status();
  auto interp = Interpreter::Create(*model, CpuOnlyOptions());
  ASSERT_TRUE(interp.ok()) << interp.status();
  const absl::Status s = (*interp)->AllocateTensors();
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("alias"));
  EXPECT_THAT(s.message(), HasSubstr("node 0"));
  EXPECT_THAT(s.message(), HasSubstr("'x'"));
}

TEST(InterpreterTest, UnresolvedNodesAreListedInOneMessage) {
  ModelBuilder b;
  SubgraphBuilder& g = b.AddSubgraph("main");
  const int32_t x = g.AddTensor(FloatTensor("x", {4}));
  const int32_t a = g.AddTensor(FloatTensor("a", {4}));
  const int32_t y = g.AddTensor(FloatTensor("y", {4}));
  g.AddOperator(KILN_OP_ADD, 99, {x, x}, {a});
  g.AddOperator(KILN_OP_MUL, 1, {a, a}, {y});
  g.SetInputs({x});
  g.SetOutputs({y});
  SubgraphBuilder& g1 = b.AddSubgraph("second");
  const int32_t p = g1.AddTensor(FloatTensor("p", {4}));
  const int32_t q = g1.AddTensor(FloatTensor("q", {4}));
  g1.AddCustomOperator("MyOp", 3, {p}, {q});
  g1.SetInputs({p});
  g1.SetOutputs({q});
  auto model = LoadBuilt(b);
  ASSERT_TRUE(model.ok()) << model.status();
  auto interp = Interpreter::Create(*model, CpuOnlyOptions());
  ASSERT_FALSE(interp.ok());
  const std::string m(interp.status().message());
  EXPECT_THAT(m, HasSubstr("2 nodes"));
  EXPECT_THAT(
      m, HasSubstr(
             "subgraph 0 node 0: no kernel for builtin op 'ADD' version 99"));
  EXPECT_THAT(m, HasSubstr("libkiln_cpu.so"));
  EXPECT_THAT(m, HasSubstr("No Kiln release runs version 99"));
  EXPECT_THAT(
      m,
      HasSubstr("subgraph 1 node 0: no kernel for custom op 'MyOp' version 3"));
  EXPECT_THAT(m, HasSubstr("no loaded plugin implements any version of it"));
  EXPECT_THAT(m, HasSubstr("Loaded plugins: kiln_cpu"));
  EXPECT_THAT(m, ::testing::Not(HasSubstr("MUL")));
}

TEST(InterpreterTest, MissingPluginIsNamedAsTheCause) {
  auto model = AddChain({4});
  ASSERT_NE(model, nullptr);
  InterpreterOptions none;
  none.plugins.use_default_locations = false;
  auto interp = Interpreter::Create(model, none);
  ASSERT_FALSE(interp.ok());
  EXPECT_THAT(interp.status().message(), HasSubstr("were not loaded"));
  EXPECT_THAT(interp.status().message(), HasSubstr("Loaded plugins: none"));
}

TEST(InterpreterTest, FlexOpsAreRefusedByName) {
  ModelBuilder b;
  SubgraphBuilder& g = b.AddSubgraph("main");
  const int32_t x = g.AddTensor(FloatTensor("x", {4}));
  const int32_t y = g.AddTensor(FloatTensor("y", {4}));
  g.AddCustomOperator("FlexSoftplus", 1, {x}, {y});
  g.SetInputs({x});
  g.SetOutputs({y});
  auto model = LoadBuilt(b);
  ASSERT_TRUE(model.ok()) << model.status();
  auto interp = Interpreter::Create(*model, CpuOnlyOptions());
  ASSERT_FALSE(interp.ok());
  EXPECT_THAT(interp.status().message(), HasSubstr("'FlexSoftplus'"));
  EXPECT_THAT(interp.status().message(), HasSubstr("SELECT_TF_OPS"));
}

TEST(InterpreterTest, UnknownBuiltinCodeIsRefused) {
  ModelBuilder b;
  SubgraphBuilder& g = b.AddSubgraph("main");
  const int32_t x = g.AddTensor(FloatTensor("x", {4}));
  const int32_t y = g.AddTensor(FloatTensor("y", {4}));
  g.AddOperator(250, 1, {x}, {y});
  g.SetInputs({x});
  g.SetOutputs({y});
  auto bytes = b.BuildUnchecked();
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  auto model = testing::LoadBytes(*bytes, "unknown_op");
  if (!model.ok()) {
    EXPECT_THAT(model.status().message(), HasSubstr("250"));
    return;
  }
  auto interp = Interpreter::Create(*model, CpuOnlyOptions());
  ASSERT_FALSE(interp.ok());
  EXPECT_THAT(interp.status().message(), HasSubstr("builtin op code 250"));
  EXPECT_THAT(interp.status().message(), HasSubstr("newer converter"));
}

TEST(InterpreterTest, NewerMinRuntimeVersionIsRefused) {
  for (const char* version : {"2.6.0", "99.1.0"}) {
    ModelBuilder b;
    SubgraphBuilder& g = b.AddSubgraph("main");
    const int32_t x = g.AddTensor(FloatTensor("x", {4}));
    const int32_t y = g.AddTensor(FloatTensor("y", {4}));
    g.AddOperator(KILN_OP_ADD, 1, {x, x}, {y});
    g.SetInputs({x});
    g.SetOutputs({y});
    b.SetMinRuntimeVersion(version);
    auto model = LoadBuilt(b);
    ASSERT_TRUE(model.ok()) << model.status();
    auto interp = Interpreter::Create(*model, CpuOnlyOptions());
    if (std::string(version) == "2.6.0") {
      EXPECT_TRUE(interp.ok()) << interp.status();
    } else {
      ASSERT_FALSE(interp.ok());
      EXPECT_EQ(interp.status().code(), absl::StatusCode::kFailedPrecondition);
      EXPECT_THAT(interp.status().message(), HasSubstr("99.1.0"));
      EXPECT_THAT(interp.status().message(), HasSubstr("upgrade Kiln"));
    }
  }
}

TEST(InterpreterTest, IfRunsTheChosenBranch) {
  ModelBuilder b;
  SubgraphBuilder& g = b.AddSubgraph("main");
  TensorSpec cs;
  cs.name = "cond";
  cs.type = KILN_TYPE_BOOL;
  cs.shape = {};
  const int32_t cond = g.AddTensor(cs);
  const int32_t x = g.AddTensor(FloatTensor("x", {3}));
  const int32_t y = g.AddTensor(FloatTensor("y", {3}));
  g.AddOperator(KILN_OP_IF, 1, {cond, x}, {y},
                {{kHostOptionThenSubgraph, OptionInt(1)},
                 {kHostOptionElseSubgraph, OptionInt(2)}});
  g.SetInputs({cond, x});
  g.SetOutputs({y});
  for (int32_t op : {KILN_OP_ADD, KILN_OP_MUL}) {
    SubgraphBuilder& br = b.AddSubgraph(op == KILN_OP_ADD ? "then" : "else");
    const int32_t p = br.AddTensor(FloatTensor("p", {3}));
    const int32_t q = br.AddTensor(FloatTensor("q", {3}));
    br.AddOperator(op, 1, {p, p}, {q});
    br.SetInputs({p});
    br.SetOutputs({q});
  }
  auto model = LoadBuilt(b);
  ASSERT_TRUE(model.ok()) << model.status();
  auto interp = Interpreter::Create(*model, CpuOnlyOptions());
  ASSERT_TRUE(interp.ok()) << interp.status();
  Interpreter& it = **interp;
  KILN_ASSERT_OK(it.AllocateTensors());
  Fill(it.input(1), std::vector<float>{1, 2, 3});
  Fill(it.input(0), std::vector<uint8_t>{1});
  KILN_ASSERT_OK(it.Invoke());
  EXPECT_THAT(Read<float>(it.output(0)), ElementsAre(2, 4, 6));
  Fill(it.input(0), std::vector<uint8_t>{0});
  KILN_ASSERT_OK(it.Invoke());
  EXPECT_THAT(Read<float>(it.output(0)), ElementsAre(1, 4, 9));
}

TEST(InterpreterTest, ControlFlowSubgraphIndexOutOfRangeIsRefused) {
  ModelBuilder b;
  SubgraphBuilder& g = b.AddSubgraph("main");
  const int32_t x = g.AddTensor(FloatTensor("x", {3}));
  const int32_t y = g.AddTensor(FloatTensor("y", {3}));
  g.AddOperator(KILN_OP_WHILE, 1, {x}, {y},
                {{kHostOptionCondSubgraph, OptionInt(5)},
                 {kHostOptionBodySubgraph, OptionInt(6)}});
  g.SetInputs({x});
  g.SetOutputs({y});
  auto bytes = b.BuildUnchecked();
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  // The model checks prove control-flow subgraph indices; the interpreter
  // relies on them.
  auto model = testing::LoadBytes(*bytes, "bad_while");
  ASSERT_FALSE(model.ok());
  EXPECT_THAT(model.status().message(), HasSubstr("WHILE cond subgraph is 5"));
  EXPECT_THAT(model.status().message(), HasSubstr("the model has 1 subgraphs"));
}

TEST(InterpreterTest, OneModelSharedByInterpretersOnManyThreads) {
  auto model = AddChain({64});
  ASSERT_NE(model, nullptr);
  constexpr int kThreads = 4;
  std::vector<std::thread> threads;
  std::vector<int> failures(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto interp = Interpreter::Create(model, CpuOnlyOptions());
      if (!interp.ok() || !(*interp)->AllocateTensors().ok()) {
        failures[static_cast<size_t>(t)] = 1;
        return;
      }
      TensorState* in = (*interp)->input(0);
      for (int round = 0; round < 50; ++round) {
        auto* x = static_cast<float*>(in->data);
        for (int i = 0; i < 64; ++i)
          x[i] = static_cast<float>(t * 1000 + round + i);
        if (!(*interp)->Invoke().ok()) {
          failures[static_cast<size_t>(t)] = 1;
          return;
        }
        const auto* y = static_cast<const float*>((*interp)->output(0)->data);
        for (int i = 0; i < 64; ++i) {
          if (y[i] != 16.f * static_cast<float>(t * 1000 + round + i)) {
            failures[static_cast<size_t>(t)] = 1;
          }
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_THAT(failures, ::testing::Each(0));
}

}  // namespace
}  // namespace kiln
