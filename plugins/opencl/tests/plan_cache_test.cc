// The OpenCL delegate under the interpreter's plan cache: a conv stack whose
// input changes shape between runs keeps one partition state per input
// signature. Every run is compared with a fresh interpreter (plan cache
// off, OpenCL delegate) made for that shape alone, and with the CPU kernels.
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "delegate_harness.h"
#include "gtest/gtest.h"
#include "interpreter/interpreter.h"
#include "kiln/kiln_builtin_ops.h"
#include "model/model.h"
#include "model/model_builder.h"

namespace kiln::opencl_test {
namespace {

std::vector<float> Pattern(size_t n, int seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    v[i] = static_cast<float>((i * 7 + static_cast<size_t>(seed)) % 13) / 13.f -
           0.4f;
  }
  return v;
}

// x [N, H, W, 4] (all but channels resizable) -> CONV_2D 3x3 SAME 4->8
// RELU -> DEPTHWISE_CONV_2D 3x3 SAME -> ADD with the conv output -> y.
std::shared_ptr<const Model> ConvStackModel() {
  static const std::vector<uint8_t>* bytes = [] {
    ModelBuilder builder;
    SubgraphBuilder& g = builder.AddSubgraph("main");
    TensorSpec x_spec = FloatTensor("x", {1, 8, 8, 4});
    x_spec.shape_signature = {-1, -1, -1, 4};
    const int32_t x = g.AddTensor(x_spec);
    const int32_t w = g.AddConstantTensor(FloatTensor("w", {8, 3, 3, 4}),
                                          Pattern(8 * 3 * 3 * 4, 1));
    const int32_t b = g.AddConstantTensor(FloatTensor("b", {8}), Pattern(8, 2));
    const int32_t conv = g.AddTensor(FloatTensor("conv", {1, 8, 8, 8}));
    const OptionList window = {
        {KILN_OPTION_PADDING, OptionInt(KILN_PADDING_SAME)},
        {KILN_OPTION_STRIDE_W, OptionInt(1)},
        {KILN_OPTION_STRIDE_H, OptionInt(1)}};
    OptionList conv_options = window;
    conv_options.push_back(
        {KILN_OPTION_FUSED_ACTIVATION, OptionInt(KILN_ACTIVATION_RELU)});
    g.AddOperator(KILN_OP_CONV_2D, 1, {x, w, b}, {conv}, conv_options);
    const int32_t dw_w = g.AddConstantTensor(FloatTensor("dw_w", {1, 3, 3, 8}),
                                             Pattern(3 * 3 * 8, 3));
    const int32_t dw_b =
        g.AddConstantTensor(FloatTensor("dw_b", {8}), Pattern(8, 4));
    const int32_t dw = g.AddTensor(FloatTensor("dw", {1, 8, 8, 8}));
    OptionList dw_options = window;
    dw_options.push_back({KILN_OPTION_DEPTH_MULTIPLIER, OptionInt(1)});
    dw_options.push_back(
        {KILN_OPTION_FUSED_ACTIVATION, OptionInt(KILN_ACTIVATION_NONE)});
    g.AddOperator(KILN_OP_DEPTHWISE_CONV_2D, 1, {conv, dw_w, dw_b}, {dw},
                  dw_options);
    const int32_t y = g.AddTensor(FloatTensor("y", {1, 8, 8, 8}));
    g.AddOperator(
        KILN_OP_ADD, 1, {dw, conv}, {y},
        {{KILN_OPTION_FUSED_ACTIVATION, OptionInt(KILN_ACTIVATION_NONE)}});
    g.SetInputs({x});
    g.SetOutputs({y});
    absl::StatusOr<std::vector<uint8_t>> built = builder.Build();
    return new std::vector<uint8_t>(built.ok() ? *built
                                               : std::vector<uint8_t>());
  }();
  absl::StatusOr<std::shared_ptr<const Model>> model =
      Model::FromBuffer(bytes->data(), bytes->size(), "conv stack");
  EXPECT_TRUE(model.ok()) << model.status();
  return model.ok() ? *model : nullptr;
}

std::unique_ptr<Interpreter> Open(bool opencl, int32_t max_plans) {
  InterpreterOptions options;
  options.plugins.paths = {CpuPluginPath()};
  options.plugins.use_default_locations = false;
  options.plan_cache.max_plans = max_plans;
  if (opencl) {
    options.plugins.paths.push_back(OpenClPluginPath());
    DelegateRequest request;
    request.name = "opencl";
    request.is_text = true;
    request.text_settings = "opencl { cache_dir: 'none' }";
    options.delegates.push_back(request);
  }
  absl::StatusOr<std::unique_ptr<Interpreter>> created =
      Interpreter::Create(ConvStackModel(), options);
  EXPECT_TRUE(created.ok()) << created.status();
  return created.ok() ? *std::move(created) : nullptr;
}

// Resizes x to `shape`, allocates, fills, invokes; the output's values.
std::vector<float> RunShape(Interpreter& interpreter,
                            const std::vector<int32_t>& shape, int seed) {
  absl::Status s = interpreter.ResizeInput(0, shape);
  if (s.ok()) s = interpreter.AllocateTensors();
  EXPECT_TRUE(s.ok()) << s;
  if (!s.ok()) return {};
  TensorState* x = interpreter.input(0);
  const std::vector<float> values =
      Pattern(static_cast<size_t>(x->NumElements()), seed);
  std::memcpy(x->data, values.data(), values.size() * sizeof(float));
  s = interpreter.Invoke();
  EXPECT_TRUE(s.ok()) << s;
  const TensorState* y = interpreter.output(0);
  if (!s.ok() || y->data == nullptr) return {};
  const float* p = static_cast<const float*>(y->data);
  return std::vector<float>(p, p + y->NumElements());
}

TEST(OpenClPlanCacheTest, AlternatingShapesMatchFreshInterpreters) {
  std::unique_ptr<Interpreter> cached = Open(/*opencl=*/true, 4);
  ASSERT_NE(cached, nullptr);
  if (cached->Partitions(0).empty()) {
    GTEST_SKIP() << "the OpenCL delegate claimed nothing (no device): "
                 << (cached->warnings().empty() ? ""
                                                : cached->warnings().front());
  }
  const std::vector<std::vector<int32_t>> shapes = {
      {1, 8, 8, 4}, {1, 12, 6, 4}, {1, 8, 8, 4}, {2, 5, 7, 4}, {1, 12, 6, 4}};
  for (size_t i = 0; i < shapes.size(); ++i) {
    SCOPED_TRACE(::testing::Message() << "step " << i);
    const int seed = static_cast<int>(i);
    const std::vector<float> got = RunShape(*cached, shapes[i], seed);
    std::unique_ptr<Interpreter> fresh = Open(/*opencl=*/true, 0);
    ASSERT_NE(fresh, nullptr);
    EXPECT_EQ(got, RunShape(*fresh, shapes[i], seed));
    std::unique_ptr<Interpreter> cpu = Open(/*opencl=*/false, 0);
    ASSERT_NE(cpu, nullptr);
    const std::vector<float> want = RunShape(*cpu, shapes[i], seed);
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < got.size(); ++k) {
      EXPECT_NEAR(got[k], want[k], 1e-4f * (1.f + std::fabs(want[k])))
          << "element " << k;
    }
  }
  const std::vector<PartitionInfo> partitions = cached->Partitions(0);
  ASSERT_EQ(partitions.size(), 1u);
  EXPECT_FALSE(partitions[0].fell_back) << partitions[0].fallback_reason;
  const PlanCacheStats stats = cached->plan_cache_stats();
  EXPECT_EQ(stats.misses, 3u);
  EXPECT_EQ(stats.hits, 2u);
  // 3 kernel states (CONV_2D, DEPTHWISE_CONV_2D, ADD: the fallback) per plan.
  // The partition's state is not among them: the OpenCL delegate does not
  // set KILN_DELEGATE_FLAG_STATE_PER_SHAPE_SIGNATURE (its buffer-handle
  // bindings are not kept per signature), so its partition is prepared again
  // on each shape change instead of being kept per plan.
  EXPECT_EQ(stats.plugin_states, 9u);
}

}  // namespace
}  // namespace kiln::opencl_test
