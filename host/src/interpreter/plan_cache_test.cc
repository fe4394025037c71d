// The plan cache (plan_cache.h): its LRU and retracing bookkeeping, and the
// interpreter's use of it with a plugin that counts its callbacks and fails
// any invoke of a state with shapes it was not prepared for
// (test_plugins/counting_plugin.c, built for extension API 1.1 without the
// state flags and for 1.2 with them). Outputs are checked against
// y = (x + x) * x + x computed here.
#include "interpreter/plan_cache.h"

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "interpreter/interpreter.h"
#include "interpreter/test_plugins/counting_plugin.h"
#include "interpreter/test_util.h"
#include "kiln/kiln_builtin_ops.h"

namespace kiln {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using testing::LoadBuilt;
using testing::Read;

// ---------------------------------------------------------------------------
// PlanCache and RetraceDetector on their own

InputSignature Sig(std::vector<int32_t> shape) {
  InputSignature s;
  s.types = {KILN_TYPE_FLOAT32};
  s.shapes = {std::move(shape)};
  return s;
}

PreparedPlan Plan(std::vector<int32_t> shape) {
  PreparedPlan p;
  p.signature = Sig(std::move(shape));
  return p;
}

TEST(PlanCacheTest, FindsBySignatureAndEvictsTheLeastRecentlyUsed) {
  PlanCache cache;
  PlanCacheOptions options;
  options.max_plans = 2;
  cache.Configure(options);
  EXPECT_TRUE(cache.Insert(Plan({1})).empty());
  EXPECT_TRUE(cache.Insert(Plan({2})).empty());
  ASSERT_NE(cache.Find(Sig({1})), nullptr);  // {1} is now the most recent
  EXPECT_EQ(cache.Find(Sig({3})), nullptr);
  std::vector<PreparedPlan> evicted = cache.Insert(Plan({3}));
  ASSERT_EQ(evicted.size(), 1u);
  EXPECT_EQ(evicted[0].signature, Sig({2}));
  EXPECT_NE(cache.Find(Sig({1})), nullptr);
  EXPECT_NE(cache.Find(Sig({3})), nullptr);
  PlanCacheStats stats;
  cache.AddTo(&stats);
  EXPECT_EQ(stats.plans, 2u);
  EXPECT_EQ(stats.evictions, 1u);
  EXPECT_GT(stats.bytes, 2 * sizeof(PreparedPlan));
}

TEST(PlanCacheTest, SignaturesDifferByType) {
  PlanCache cache;
  cache.Configure(PlanCacheOptions());
  PreparedPlan int_plan = Plan({4});
  int_plan.signature.types = {KILN_TYPE_INT32};
  cache.Insert(std::move(int_plan));
  EXPECT_EQ(cache.Find(Sig({4})), nullptr);
}

TEST(RetraceDetectorTest, CountsPreparedChangesWithinTheWindowOnce) {
  PlanCacheOptions options;
  options.retrace_threshold = 3;
  options.retrace_window = 4;
  RetraceDetector d;
  EXPECT_FALSE(d.Record(Sig({1}), true, options));
  EXPECT_FALSE(d.Record(Sig({1}), true, options));   // same shapes: not counted
  EXPECT_FALSE(d.Record(Sig({2}), false, options));  // a hit: not counted
  EXPECT_FALSE(d.Record(Sig({3}), true, options));
  EXPECT_FALSE(d.Record(Sig({4}), true, options));  // {1} left the window
  EXPECT_TRUE(d.Record(Sig({5}), true, options));
  EXPECT_EQ(d.counted(), 3);
  EXPECT_EQ(d.DistinctSignatures().size(), 3u);
  EXPECT_FALSE(d.Record(Sig({6}), true, options));  // once only
}

// ---------------------------------------------------------------------------
// The interpreter with the counting plugin

std::string CountingPluginPath(const std::string& abi) {
  return std::string(KILN_TEST_BAD_PLUGIN_DIR) + "/libtest_counting_abi" + abi +
         ".so";
}

// y = (x + x) * x + x on a float32 x of any 2-D shape: ADD, MUL, ADD.
std::shared_ptr<const Model> CountingModel() {
  ModelBuilder builder;
  SubgraphBuilder& g = builder.AddSubgraph("main");
  TensorSpec x_spec = FloatTensor("x", {2, 3});
  x_spec.shape_signature = {-1, -1};
  const int32_t x = g.AddTensor(x_spec);
  const int32_t t = g.AddTensor(FloatTensor("t", {2, 3}));
  const int32_t u = g.AddTensor(FloatTensor("u", {2, 3}));
  const int32_t y = g.AddTensor(FloatTensor("y", {2, 3}));
  const OptionList none = {
      {KILN_OPTION_FUSED_ACTIVATION, OptionInt(KILN_ACTIVATION_NONE)}};
  g.AddOperator(KILN_OP_ADD, 1, {x, x}, {t}, none);
  g.AddOperator(KILN_OP_MUL, 1, {t, x}, {u}, none);
  g.AddOperator(KILN_OP_ADD, 1, {u, x}, {y}, none);
  g.SetInputs({x});
  g.SetOutputs({y});
  absl::StatusOr<std::shared_ptr<const Model>> model = LoadBuilt(builder);
  EXPECT_TRUE(model.ok()) << model.status();
  return model.ok() ? *model : nullptr;
}

// An interpreter running CountingModel on the counting plugin built for
// extension API `abi` ("11" or "12"), its MUL delegated when `delegate`.
class CountingRun {
 public:
  CountingRun(const std::string& abi, bool delegate, int32_t max_plans) {
    InterpreterOptions options;
    options.plugins.paths = {CountingPluginPath(abi)};
    options.plugins.use_default_locations = false;
    options.plan_cache.max_plans = max_plans;
    if (delegate) {
      DelegateRequest request;
      request.name = "counting";
      options.delegates.push_back(request);
    }
    absl::StatusOr<std::unique_ptr<Interpreter>> created =
        Interpreter::Create(CountingModel(), options);
    EXPECT_TRUE(created.ok()) << created.status();
    if (!created.ok()) return;
    interpreter = *std::move(created);
    plugin = interpreter->plugin_records()[0].plugin;
    for (const KilnExtensionBase* e = plugin->descriptor()->extensions;
         e != nullptr; e = e->next) {
      if (std::strcmp(e->id, KILN_TEST_CALL_COUNTS_EXTENSION_ID) == 0) {
        counts_ = reinterpret_cast<const KilnTestCallCountsExtension*>(e);
      }
    }
    EXPECT_NE(counts_, nullptr);
    if (counts_ != nullptr) counts_->reset();
  }

  bool ok() const { return interpreter != nullptr && counts_ != nullptr; }

  KilnTestCallCounts counts() const {
    KilnTestCallCounts c{};
    counts_->read(&c);
    return c;
  }

  // Resizes x to `shape` and allocates.
  absl::Status Allocate(const std::vector<int32_t>& shape) {
    absl::Status s = interpreter->ResizeInput(0, shape);
    return s.ok() ? interpreter->AllocateTensors() : s;
  }

  // Fills x, invokes, and checks y = (x + x) * x + x.
  void InvokeAndCheck(int salt) {
    TensorState* x = interpreter->input(0);
    ASSERT_NE(x->data, nullptr);
    std::vector<float> values(static_cast<size_t>(x->NumElements()));
    for (size_t i = 0; i < values.size(); ++i) {
      values[i] = 0.25f * static_cast<float>(i) - static_cast<float>(salt);
    }
    testing::Fill(x, values);
    KILN_ASSERT_OK(interpreter->Invoke());
    const std::vector<float> y = Read<float>(interpreter->output(0));
    ASSERT_EQ(y.size(), values.size());
    for (size_t i = 0; i < y.size(); ++i) {
      const float v = values[i];
      EXPECT_EQ(y[i], (v + v) * v + v) << "element " << i;
    }
    EXPECT_EQ(interpreter->output(0)->shape, x->shape);
  }

  // Destroys the interpreter and checks every state made since the counts
  // were reset was freed, besides the `created` kernel and partition states
  // made at creation.
  void ExpectEveryStateFreedAfterDestruction(int64_t created_kernel_states,
                                             int64_t created_partitions) {
    interpreter.reset();
    const KilnTestCallCounts c = counts();
    EXPECT_EQ(c.kernel_free, c.kernel_init + created_kernel_states);
    EXPECT_EQ(c.partition_free, c.partition_init + created_partitions);
  }

  // Allocates for `shape` and runs once.
  void Run(const std::vector<int32_t>& shape, int salt) {
    KILN_ASSERT_OK(Allocate(shape));
    InvokeAndCheck(salt);
  }

  std::unique_ptr<Interpreter> interpreter;
  std::shared_ptr<LoadedPlugin> plugin;  // keeps the counts readable

 private:
  const KilnTestCallCountsExtension* counts_ = nullptr;
};

const std::vector<int32_t> kA = {2, 3}, kB = {4, 5}, kC = {1, 7};

TEST(PlanCacheInterpreterTest, OldAbiPluginIsPreparedOnEverySwitch) {
  CountingRun run("11", /*delegate=*/true, /*max_plans=*/4);
  ASSERT_TRUE(run.ok());
  ASSERT_EQ(run.interpreter->Partitions(0).size(), 1u);
  int step = 0;
  for (const auto& shape : {kA, kB, kA, kB, kA}) {
    run.Run(shape, step++);
    const KilnTestCallCounts c = run.counts();
    // The partition's MUL is prepared with its kernel too (the fallback).
    EXPECT_EQ(c.kernel_prepare, 3 * step) << "step " << step;
    EXPECT_EQ(c.partition_prepare, step) << "step " << step;
  }
  // One state per node, as with 1.1 hosts.
  EXPECT_EQ(run.counts().kernel_init, 0);
  EXPECT_EQ(run.counts().partition_init, 0);
  EXPECT_EQ(run.counts().partition_invoke, 5);
  EXPECT_EQ(run.interpreter->plan_cache_stats().plugin_states, 0u);
  EXPECT_FALSE(run.interpreter->Partitions(0)[0].fell_back);
}

TEST(PlanCacheInterpreterTest, FlaggedPluginIsPreparedOncePerSignature) {
  CountingRun run("12", /*delegate=*/true, /*max_plans=*/4);
  ASSERT_TRUE(run.ok());
  int step = 0;
  for (const auto& shape : {kA, kB, kA, kB, kA}) run.Run(shape, step++);
  const KilnTestCallCounts c = run.counts();
  // Signature A uses the states made at creation; B gets new ones. The
  // partition's MUL keeps kernel states too (for the fallback).
  EXPECT_EQ(c.kernel_init, 3);
  EXPECT_EQ(c.kernel_prepare, 6);
  EXPECT_EQ(c.partition_init, 1);
  EXPECT_EQ(c.partition_prepare, 2);
  EXPECT_EQ(c.kernel_invoke, 10);
  EXPECT_EQ(c.partition_invoke, 5);
  const PlanCacheStats stats = run.interpreter->plan_cache_stats();
  EXPECT_EQ(stats.hits, 3u);
  EXPECT_EQ(stats.misses, 2u);
  EXPECT_EQ(stats.plans, 2u);
  EXPECT_EQ(stats.plugin_states, 8u);  // 3 kernel + 1 partition per plan
  EXPECT_FALSE(run.interpreter->Partitions(0)[0].fell_back);
}

TEST(PlanCacheInterpreterTest, SameShapesAgainIsAHitWithoutPrepare) {
  CountingRun run("12", /*delegate=*/false, /*max_plans=*/4);
  ASSERT_TRUE(run.ok());
  run.Run(kA, 0);
  KILN_ASSERT_OK(run.interpreter->AllocateTensors());
  run.InvokeAndCheck(1);
  EXPECT_EQ(run.counts().kernel_prepare, 3);
  EXPECT_EQ(run.interpreter->plan_cache_stats().hits, 1u);
}

TEST(PlanCacheInterpreterTest, CacheOffPreparesTheOneStateOnEverySwitch) {
  CountingRun run("12", /*delegate=*/true, /*max_plans=*/0);
  ASSERT_TRUE(run.ok());
  int step = 0;
  for (const auto& shape : {kA, kB, kA}) run.Run(shape, step++);
  const KilnTestCallCounts c = run.counts();
  EXPECT_EQ(c.kernel_init, 0);
  EXPECT_EQ(c.kernel_prepare, 9);
  EXPECT_EQ(c.partition_prepare, 3);
  const PlanCacheStats stats = run.interpreter->plan_cache_stats();
  EXPECT_EQ(stats.hits, 0u);
  EXPECT_EQ(stats.misses, 3u);
  EXPECT_EQ(stats.plans, 0u);
}

TEST(PlanCacheInterpreterTest, EvictionFreesStatesAndEveryInitIsFreed) {
  CountingRun run("12", /*delegate=*/true, /*max_plans=*/2);
  ASSERT_TRUE(run.ok());
  int step = 0;
  for (const auto& shape : {kA, kB, kC}) run.Run(shape, step++);
  // C evicted A: A's states (the ones made at creation) are freed.
  EXPECT_EQ(run.counts().kernel_free, 3);
  EXPECT_EQ(run.counts().partition_free, 1);
  run.Run(kA, step++);  // prepared again, evicting B
  const PlanCacheStats stats = run.interpreter->plan_cache_stats();
  EXPECT_EQ(stats.evictions, 2u);
  EXPECT_EQ(stats.misses, 4u);
  EXPECT_EQ(stats.plans, 2u);
  EXPECT_EQ(run.counts().kernel_prepare, 12);
  run.ExpectEveryStateFreedAfterDestruction(3, 1);
}

TEST(PlanCacheInterpreterTest, FailedPrepareLeavesCacheAndInterpreterUsable) {
  CountingRun run("12", /*delegate=*/true, /*max_plans=*/4);
  ASSERT_TRUE(run.ok());
  run.Run(kA, 0);
  run.Run(kB, 1);
  const int64_t prepares = run.counts().kernel_prepare;
  const absl::Status failed = run.Allocate({13, 2});
  EXPECT_EQ(failed.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(failed.message(),
              AllOf(HasSubstr("node 0 (ADD version 1"),
                    HasSubstr("dimension 0 is 13, which this test plugin")));
  EXPECT_EQ(run.interpreter->Invoke().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(run.interpreter->plan_cache_stats().plans, 2u);
  // Back to a cached signature: restored without any prepare.
  const int64_t after_failure = run.counts().kernel_prepare;
  EXPECT_EQ(after_failure, prepares + 1);
  run.Run(kA, 2);
  EXPECT_EQ(run.counts().kernel_prepare, after_failure);
  // A new signature still works (on the states the failure left behind).
  run.Run(kC, 3);
  run.Run(kB, 4);
  EXPECT_EQ(run.interpreter->plan_cache_stats().plans, 3u);
  run.ExpectEveryStateFreedAfterDestruction(3, 1);
}

TEST(PlanCacheInterpreterTest, RetracingWarnsOnceNamingTheChangingInput) {
  CountingRun run("12", /*delegate=*/false, /*max_plans=*/2);
  ASSERT_TRUE(run.ok());
  for (int32_t rows = 1; rows <= 12; ++rows) run.Run({rows, 3}, rows);
  int found = 0;
  for (const std::string& w : run.interpreter->warnings()) {
    if (w.find("AllocateTensors calls") == std::string::npos) continue;
    ++found;
    EXPECT_THAT(w, AllOf(HasSubstr("5 of the last 5 AllocateTensors calls on "
                                   "subgraph 0 ('main')"),
                         HasSubstr("keeps 2 plans per subgraph"),
                         HasSubstr("input 0 'x': [1,3], [2,3], [3,3], [4,3], "
                                   "[5,3] (dimension 0 varies)"),
                         HasSubstr("--plan-cache-size")));
  }
  EXPECT_EQ(found, 1);
}

TEST(PlanCacheInterpreterTest, AlternatingCachedShapesDoesNotWarn) {
  CountingRun run("12", /*delegate=*/false, /*max_plans=*/4);
  ASSERT_TRUE(run.ok());
  for (int i = 0; i < 20; ++i) run.Run(i % 2 == 0 ? kA : kB, i);
  EXPECT_TRUE(run.interpreter->warnings().empty());
}

TEST(PlanCacheInterpreterTest, NegativeCacheSizeIsRefused) {
  InterpreterOptions options = testing::CpuOnlyOptions();
  options.plan_cache.max_plans = -1;
  const absl::StatusOr<std::unique_ptr<Interpreter>> created =
      Interpreter::Create(CountingModel(), options);
  ASSERT_FALSE(created.ok());
  EXPECT_THAT(created.status().message(),
              HasSubstr("plan cache size -1 is negative"));
}

// The CPU plugin's kernels all keep state per signature: stateless ones
// through sdk::MakeKernel, stateful ones (whose state prepare derives from
// the node and the shapes) through sdk::StatePerShapeSignature.
TEST(PlanCacheInterpreterTest, CpuPluginKernelsKeepStatePerSignature) {
  absl::StatusOr<HostOffer> offer = PluginLoader::MakeOffer(0);
  ASSERT_TRUE(offer.ok()) << offer.status();
  absl::StatusOr<std::shared_ptr<LoadedPlugin>> cpu =
      PluginLoader::Load(testing::CpuPluginPath(), *offer);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  std::vector<std::string> without;
  for (const KilnKernel* k : (*cpu)->kernels()) {
    if (!KernelStatePerSignature(*k, **cpu)) {
      without.push_back(BuiltinOpName(k->builtin_code));
    }
  }
  EXPECT_THAT(without, ::testing::IsEmpty());
}

}  // namespace
}  // namespace kiln
