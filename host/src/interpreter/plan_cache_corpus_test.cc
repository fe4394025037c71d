// The plan cache on converter-written models with the CPU plugin and on the
// test delegate: every step resizes (and, for signatures, switches runner),
// allocates and invokes one interpreter that keeps its plans, and compares
// every output, shape and value, with a fresh interpreter that has the plan
// cache off, made for that step alone (so it never saw another shape).
#include <cstring>
#include <functional>
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
using ::testing::HasSubstr;
using testing::SharedModelPath;

// One step: the shapes of the runner's inputs (in its input order), the
// signature key ("" for the main subgraph) and a salt for the input values.
struct Step {
  std::string signature;
  std::vector<std::vector<int32_t>> shapes;
  int salt = 0;
};

// The inputs and outputs of one interpreter as one step sees them: the
// signature's runner, or the main subgraph.
class Target {
 public:
  Target(Interpreter& interpreter, const std::string& signature)
      : interpreter_(interpreter) {
    if (signature.empty()) return;
    absl::StatusOr<SignatureRunner*> r =
        interpreter.GetSignatureRunner(signature);
    EXPECT_TRUE(r.ok()) << r.status();
    if (r.ok()) runner_ = *r;
  }
  int num_inputs() const {
    return runner_ ? runner_->num_inputs() : interpreter_.num_inputs();
  }
  int num_outputs() const {
    return runner_ ? runner_->num_outputs() : interpreter_.num_outputs();
  }
  TensorState* input(int i) {
    return runner_ ? runner_->input(runner_->input_name(i))
                   : interpreter_.input(i);
  }
  const TensorState* output(int i) const {
    return runner_ ? runner_->output(runner_->output_name(i))
                   : interpreter_.output(i);
  }
  absl::Status Resize(int i, const std::vector<int32_t>& shape) {
    return runner_ ? runner_->ResizeInput(runner_->input_name(i), shape)
                   : interpreter_.ResizeInput(i, shape);
  }
  absl::Status Allocate() {
    return runner_ ? runner_->AllocateTensors()
                   : interpreter_.AllocateTensors();
  }
  absl::Status Invoke() {
    return runner_ ? runner_->Invoke() : interpreter_.Invoke();
  }

 private:
  Interpreter& interpreter_;
  SignatureRunner* runner_ = nullptr;
};

// Writes input `index` deterministically from `salt`; `fill` may override.
using InputFill = std::function<void(int index, TensorState* t, int salt)>;

void DefaultFill(int index, TensorState* t, int salt) {
  if (t->desc->type != KILN_TYPE_FLOAT32) {
    std::memset(t->data, 0, t->bytes);
    return;
  }
  float* p = static_cast<float*>(t->data);
  for (int64_t k = 0; k < t->NumElements(); ++k) {
    p[k] = static_cast<float>((k * 7 + index * 3 + salt) % 23) / 11.0f - 1.0f;
  }
}

struct Outputs {
  std::vector<std::vector<int32_t>> shapes;
  std::vector<std::vector<uint8_t>> bytes;
};

// Resizes, allocates, fills and invokes one step on `interpreter`.
absl::StatusOr<Outputs> RunStep(Interpreter& interpreter, const Step& step,
                                const InputFill& fill) {
  Target target(interpreter, step.signature);
  if (static_cast<size_t>(target.num_inputs()) != step.shapes.size()) {
    return absl::InvalidArgumentError("the step gives a shape per input");
  }
  for (int i = 0; i < target.num_inputs(); ++i) {
    absl::Status s = target.Resize(i, step.shapes[static_cast<size_t>(i)]);
    if (!s.ok()) return s;
  }
  if (absl::Status s = target.Allocate(); !s.ok()) return s;
  for (int i = 0; i < target.num_inputs(); ++i) {
    fill(i, target.input(i), step.salt);
  }
  if (absl::Status s = target.Invoke(); !s.ok()) return s;
  Outputs out;
  for (int i = 0; i < target.num_outputs(); ++i) {
    const TensorState* t = target.output(i);
    out.shapes.push_back(t->shape);
    out.bytes.push_back(testing::Read<uint8_t>(t));
  }
  return out;
}

std::unique_ptr<Interpreter> Open(std::shared_ptr<const Model> model,
                                  InterpreterOptions options,
                                  int32_t max_plans) {
  options.plan_cache.max_plans = max_plans;
  auto created = Interpreter::Create(std::move(model), options);
  EXPECT_TRUE(created.ok()) << created.status();
  return created.ok() ? *std::move(created) : nullptr;
}

// Runs `steps` on one cached interpreter and checks each against a fresh
// uncached one. Returns the cached interpreter for further checks.
std::unique_ptr<Interpreter> ExpectSameAsFresh(
    std::shared_ptr<const Model> model, const InterpreterOptions& options,
    const std::vector<Step>& steps, const InputFill& fill = DefaultFill) {
  std::unique_ptr<Interpreter> cached = Open(model, options, 4);
  if (cached == nullptr) return nullptr;
  for (size_t i = 0; i < steps.size(); ++i) {
    SCOPED_TRACE(::testing::Message() << "step " << i);
    absl::StatusOr<Outputs> got = RunStep(*cached, steps[i], fill);
    EXPECT_TRUE(got.ok()) << got.status();
    std::unique_ptr<Interpreter> fresh = Open(model, options, 0);
    if (fresh == nullptr) return nullptr;
    absl::StatusOr<Outputs> want = RunStep(*fresh, steps[i], fill);
    EXPECT_TRUE(want.ok()) << want.status();
    if (!got.ok() || !want.ok()) continue;
    EXPECT_EQ(got->shapes, want->shapes);
    EXPECT_EQ(got->bytes, want->bytes);
  }
  return cached;
}

std::shared_ptr<const Model> Load(const std::string& relative) {
  auto model = Model::FromFile(SharedModelPath(relative));
  EXPECT_TRUE(model.ok()) << model.status();
  return model.ok() ? *model : nullptr;
}

// dynamic_shapes.bin: y's dimension 1 may vary; z's value (cast to an
// integer) sets the output's dimension 1, so some nodes are deferred to
// invoke.
std::vector<Step> DynamicShapesSteps() {
  const std::vector<int32_t> x = {8, 42, 1024}, z = {1, 1};
  const std::vector<int32_t> y90 = {1, 90, 1024}, y30 = {1, 30, 1024};
  return {{"", {x, y90, z}, 3},
          {"", {x, y30, z}, 5},
          {"", {x, y90, z}, 2},
          {"", {x, y30, z}, 7},
          {"", {x, y90, z}, 4}};
}

void DynamicShapesFill(int index, TensorState* t, int salt) {
  if (index == 2) {  // z: the output's row count
    static_cast<float*>(t->data)[0] = static_cast<float>(salt);
    return;
  }
  DefaultFill(index, t, salt);
}

TEST(PlanCacheCorpusTest, DynamicShapesAlternatingMatchFresh) {
  KILN_SKIP_WITHOUT_SHARED_MODELS();
  auto model = Load("tflite-testdata/dynamic_shapes.bin");
  ASSERT_NE(model, nullptr);
  auto cached = ExpectSameAsFresh(model, CpuOnlyOptions(), DynamicShapesSteps(),
                                  DynamicShapesFill);
  ASSERT_NE(cached, nullptr);
  const PlanCacheStats stats = cached->plan_cache_stats();
  EXPECT_EQ(stats.misses, 2u);
  EXPECT_EQ(stats.hits, 3u);
  EXPECT_GT(stats.plugin_states, 0u);
}

TEST(PlanCacheCorpusTest, ShapeThatFailsPrepareLeavesCachedShapesWorking) {
  KILN_SKIP_WITHOUT_SHARED_MODELS();
  auto model = Load("converter/transformer_block_float32.tflite");
  ASSERT_NE(model, nullptr);
  std::unique_ptr<Interpreter> cached = Open(model, CpuOnlyOptions(), 4);
  ASSERT_NE(cached, nullptr);
  const Step one = {"", {{1, 64, 128}}, 0}, two = {"", {{2, 64, 128}}, 1};
  ASSERT_TRUE(RunStep(*cached, one, DefaultFill).ok());
  ASSERT_TRUE(RunStep(*cached, two, DefaultFill).ok());
  // 100 features do not fit the 128-wide weights: prepare fails.
  const absl::StatusOr<Outputs> bad =
      RunStep(*cached, {"", {{1, 64, 100}}, 2}, DefaultFill);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("prepare failed"));
  EXPECT_EQ(cached->plan_cache_stats().plans, 2u);
  for (const Step& step : {one, two, one}) {
    absl::StatusOr<Outputs> got = RunStep(*cached, step, DefaultFill);
    ASSERT_TRUE(got.ok()) << got.status();
    std::unique_ptr<Interpreter> fresh = Open(model, CpuOnlyOptions(), 0);
    absl::StatusOr<Outputs> want = RunStep(*fresh, step, DefaultFill);
    ASSERT_TRUE(want.ok()) << want.status();
    EXPECT_EQ(got->shapes, want->shapes);
    EXPECT_EQ(got->bytes, want->bytes);
  }
  EXPECT_EQ(cached->plan_cache_stats().hits, 3u);
}

TEST(PlanCacheCorpusTest, WhileOverChangingShapesMatchesFresh) {
  KILN_SKIP_WITHOUT_SHARED_MODELS();
  auto model = Load("tflite-testdata/multi_subgraphs_while.bin");
  ASSERT_NE(model, nullptr);
  const std::vector<std::vector<int32_t>> shapes = {{}, {3}, {2, 2}, {3}, {}};
  std::vector<Step> steps;
  for (size_t i = 0; i < shapes.size(); ++i) {
    steps.push_back({"", {shapes[i]}, static_cast<int>(i)});
  }
  auto cached = ExpectSameAsFresh(model, CpuOnlyOptions(), steps);
  ASSERT_NE(cached, nullptr);
  // The main subgraph returns to [] and [3]; the loop's subgraphs return to
  // shapes they ran before.
  EXPECT_GE(cached->plan_cache_stats().hits, 2u);
  EXPECT_TRUE(cached->warnings().empty());
}

TEST(PlanCacheCorpusTest, NestedWhileMatchesFresh) {
  KILN_SKIP_WITHOUT_SHARED_MODELS();
  auto model = Load("tflite-testdata/nested_while.bin");
  ASSERT_NE(model, nullptr);
  std::vector<Step> steps;
  for (int i = 0; i < 4; ++i) steps.push_back({"", {{}}, i});
  auto cached = ExpectSameAsFresh(model, CpuOnlyOptions(), steps);
  ASSERT_NE(cached, nullptr);
  EXPECT_GT(cached->plan_cache_stats().hits, 0u);
}

TEST(PlanCacheCorpusTest, SignaturesAlternatingMatchFresh) {
  KILN_SKIP_WITHOUT_SHARED_MODELS();
  auto model = Load("tflite-testdata/multi_signatures.bin");
  ASSERT_NE(model, nullptr);
  const std::vector<Step> steps = {{"add", {{1}}, 0}, {"sub", {{4}}, 1},
                                   {"add", {{5}}, 2}, {"sub", {{1}}, 3},
                                   {"add", {{1}}, 4}, {"sub", {{4}}, 5},
                                   {"add", {{5}}, 6}};
  auto cached = ExpectSameAsFresh(model, CpuOnlyOptions(), steps);
  ASSERT_NE(cached, nullptr);
  const PlanCacheStats stats = cached->plan_cache_stats();
  EXPECT_EQ(stats.misses, 4u);  // add [1], add [5], sub [4], sub [1]
  EXPECT_EQ(stats.hits, 3u);
}

TEST(PlanCacheCorpusTest, TransformerBatchesAlternatingMatchFresh) {
  KILN_SKIP_WITHOUT_SHARED_MODELS();
  auto model = Load("converter/transformer_block_float32.tflite");
  ASSERT_NE(model, nullptr);
  const std::vector<Step> steps = {{"", {{1, 64, 128}}, 0},
                                   {"", {{2, 64, 128}}, 1},
                                   {"", {{1, 64, 128}}, 2},
                                   {"", {{2, 64, 128}}, 3}};
  auto cached = ExpectSameAsFresh(model, CpuOnlyOptions(), steps);
  ASSERT_NE(cached, nullptr);
  EXPECT_EQ(cached->plan_cache_stats().hits, 2u);
}

// y = relu(a + b) * a, then + b: ADD and MUL for the test delegate, on
// shapes that vary in both dimensions.
std::shared_ptr<const Model> DelegatedModel() {
  ModelBuilder builder;
  SubgraphBuilder& g = builder.AddSubgraph("main");
  TensorSpec spec = FloatTensor("a", {2, 2});
  spec.shape_signature = {-1, -1};
  const int32_t a = g.AddTensor(spec);
  spec.name = "b";
  const int32_t b = g.AddTensor(spec);
  const int32_t s = g.AddTensor(FloatTensor("s", {2, 2}));
  const int32_t m = g.AddTensor(FloatTensor("m", {2, 2}));
  const int32_t y = g.AddTensor(FloatTensor("y", {2, 2}));
  g.AddOperator(
      KILN_OP_ADD, 1, {a, b}, {s},
      {{KILN_OPTION_FUSED_ACTIVATION, OptionInt(KILN_ACTIVATION_RELU)}});
  g.AddOperator(
      KILN_OP_MUL, 1, {s, a}, {m},
      {{KILN_OPTION_FUSED_ACTIVATION, OptionInt(KILN_ACTIVATION_NONE)}});
  g.AddOperator(
      KILN_OP_ADD, 1, {m, b}, {y},
      {{KILN_OPTION_FUSED_ACTIVATION, OptionInt(KILN_ACTIVATION_NONE)}});
  g.SetInputs({a, b});
  g.SetOutputs({y});
  auto model = testing::LoadBuilt(builder);
  EXPECT_TRUE(model.ok()) << model.status();
  return model.ok() ? *model : nullptr;
}

TEST(PlanCacheCorpusTest, TestDelegateAlternatingMatchesFresh) {
  auto model = DelegatedModel();
  ASSERT_NE(model, nullptr);
  // add_bias makes the delegate's results differ from the kernels', so a
  // partition that silently fell back would not match the fresh run.
  const InterpreterOptions options =
      testing::WithTestDelegate("options { key: 'add_bias' value: '0.5' }");
  std::vector<Step> steps;
  const std::vector<std::vector<int32_t>> shapes = {{2, 2}, {3, 5}, {2, 2},
                                                    {1, 9}, {3, 5}, {2, 2}};
  for (size_t i = 0; i < shapes.size(); ++i) {
    steps.push_back({"", {shapes[i], shapes[i]}, static_cast<int>(i)});
  }
  auto cached = ExpectSameAsFresh(model, options, steps);
  ASSERT_NE(cached, nullptr);
  const std::vector<PartitionInfo> partitions = cached->Partitions(0);
  ASSERT_EQ(partitions.size(), 1u);
  EXPECT_FALSE(partitions[0].fell_back) << partitions[0].fallback_reason;
  const PlanCacheStats stats = cached->plan_cache_stats();
  EXPECT_EQ(stats.misses, 3u);
  EXPECT_EQ(stats.hits, 3u);
  EXPECT_TRUE(cached->warnings().empty());
}

}  // namespace
}  // namespace kiln
