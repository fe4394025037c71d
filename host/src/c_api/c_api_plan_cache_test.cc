// Tests of the application C API's plan cache functions, through libkiln.so
// only. The model's main subgraph (signature "add" of
// tflite-testdata/multi_signatures.bin) computes x + 2 on a float32 vector
// of any length, as LiteRT runs it.
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kiln/kiln_c_api.h"

namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

constexpr const char* kModel = "/tflite-testdata/multi_signatures.bin";

std::string ModelPath() { return std::string(KILN_SHARED_MODELS_DIR) + kModel; }

// Owns what one test makes; failures are reported as strings.
class PlanCacheRun {
 public:
  // max_plans < 0: leave the option at its default.
  explicit PlanCacheRun(int32_t max_plans) {
    if (Check(KilnModelCreateFromFile(ModelPath().c_str(), &model_))) return;
    KilnInterpreterOptions* o = KilnInterpreterOptionsCreate();
    KilnInterpreterOptionsAddPluginPath(
        o, (std::string(KILN_TEST_PLUGIN_DIR) + "/libkiln_cpu.so").c_str());
    KilnInterpreterOptionsSetUseDefaultPlugins(o, 0);
    if (max_plans >= 0) {
      Check(KilnInterpreterOptionsSetPlanCacheSize(o, max_plans));
    }
    if (error_.empty()) Check(KilnInterpreterCreate(model_, o, &interpreter_));
    KilnInterpreterOptionsDestroy(o);
  }
  ~PlanCacheRun() {
    KilnInterpreterDestroy(interpreter_);
    KilnModelDestroy(model_);
  }

  KilnInterpreter* get() const { return interpreter_; }
  const std::string& error() const { return error_; }

  // Resizes x to `n` elements, allocates, runs, and returns the output.
  std::vector<float> Run(int32_t n) {
    if (Check(KilnInterpreterResizeInput(interpreter_, 0, &n, 1)) ||
        Check(KilnInterpreterAllocateTensors(interpreter_))) {
      return {};
    }
    std::vector<float> x(static_cast<size_t>(n));
    for (int32_t i = 0; i < n; ++i) x[static_cast<size_t>(i)] = 0.5f * i;
    if (Check(KilnTensorCopyFromBuffer(KilnInterpreterInput(interpreter_, 0),
                                       x.data(), x.size() * sizeof(float))) ||
        Check(KilnInterpreterInvoke(interpreter_))) {
      return {};
    }
    std::vector<float> y(x.size());
    Check(KilnTensorCopyToBuffer(KilnInterpreterOutput(interpreter_, 0),
                                 y.data(), y.size() * sizeof(float)));
    return y;
  }

  KilnPlanCacheStats Stats() {
    KilnPlanCacheStats stats;
    std::memset(&stats, 0, sizeof(stats));
    stats.struct_size = KILN_PLAN_CACHE_STATS_STRUCT_SIZE;
    Check(KilnInterpreterGetPlanCacheStats(interpreter_, &stats));
    return stats;
  }

  // Records a failure; true when `e` is one.
  bool Check(KilnError* e) {
    if (e == nullptr) return false;
    error_ = KilnErrorMessage(e);
    KilnErrorDestroy(e);
    return true;
  }

 private:
  KilnModel* model_ = nullptr;
  KilnInterpreter* interpreter_ = nullptr;
  std::string error_;
};

std::vector<float> Expected(int32_t n) {
  std::vector<float> y(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) y[static_cast<size_t>(i)] = 0.5f * i + 2;
  return y;
}

// Runs every length in turn, checking each output; then the stats.
KilnPlanCacheStats RunAll(PlanCacheRun& run,
                          const std::vector<int32_t>& lengths) {
  for (int32_t n : lengths) {
    EXPECT_THAT(run.Run(n), ElementsAreArray(Expected(n)))
        << "length " << n << ": " << run.error();
  }
  return run.Stats();
}

#define SKIP_WITHOUT_MODEL()                                         \
  do {                                                               \
    std::error_code ec;                                              \
    if (!std::filesystem::is_regular_file(ModelPath(), ec)) {        \
      GTEST_SKIP() << "shared model corpus absent: " << ModelPath(); \
    }                                                                \
  } while (0)

TEST(CApiPlanCacheTest, AlternatingShapesHitTheCacheByDefault) {
  SKIP_WITHOUT_MODEL();
  PlanCacheRun run(-1);
  ASSERT_NE(run.get(), nullptr) << run.error();
  const KilnPlanCacheStats stats = RunAll(run, {3, 8, 3, 8, 3});
  EXPECT_EQ(stats.max_plans, 4);
  EXPECT_EQ(stats.hits, 3u);
  EXPECT_EQ(stats.misses, 2u);
  EXPECT_EQ(stats.evictions, 0u);
  EXPECT_EQ(stats.plans, 2u);
  EXPECT_GT(stats.bytes, 0u);
}

TEST(CApiPlanCacheTest, OnePlanEvictsAndManyShapesWarnAboutRetracing) {
  SKIP_WITHOUT_MODEL();
  PlanCacheRun run(1);
  ASSERT_NE(run.get(), nullptr) << run.error();
  const KilnPlanCacheStats stats = RunAll(run, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(stats.max_plans, 1);
  EXPECT_EQ(stats.misses, 6u);
  EXPECT_EQ(stats.evictions, 5u);
  EXPECT_EQ(stats.plans, 1u);
  ASSERT_EQ(KilnInterpreterWarningCount(run.get()), 1);
  EXPECT_THAT(KilnInterpreterWarning(run.get(), 0),
              HasSubstr("input 0 'add_x:0': [1], [2], [3], [4], [5] "
                        "(dimension 0 varies)"));
}

TEST(CApiPlanCacheTest, ZeroTurnsTheCacheOff) {
  SKIP_WITHOUT_MODEL();
  PlanCacheRun run(0);
  ASSERT_NE(run.get(), nullptr) << run.error();
  const KilnPlanCacheStats stats = RunAll(run, {3, 8, 3});
  EXPECT_EQ(stats.max_plans, 0);
  EXPECT_EQ(stats.hits, 0u);
  EXPECT_EQ(stats.misses, 3u);
  EXPECT_EQ(stats.plans, 0u);
}

TEST(CApiPlanCacheTest, BadArgumentsAreRefusedByName) {
  KilnInterpreterOptions* o = KilnInterpreterOptionsCreate();
  KilnError* e = KilnInterpreterOptionsSetPlanCacheSize(o, -2);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(KilnErrorCode(e), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(KilnErrorMessage(e), HasSubstr("max_plans is -2"));
  KilnErrorDestroy(e);
  KilnInterpreterOptionsDestroy(o);
  e = KilnInterpreterOptionsSetPlanCacheSize(nullptr, 1);
  ASSERT_NE(e, nullptr);
  EXPECT_THAT(KilnErrorMessage(e), HasSubstr("options is NULL"));
  KilnErrorDestroy(e);

  KilnPlanCacheStats stats;
  stats.struct_size = 8;
  e = KilnInterpreterGetPlanCacheStats(nullptr, &stats);
  ASSERT_NE(e, nullptr);
  EXPECT_THAT(KilnErrorMessage(e),
              HasSubstr("set it to KILN_PLAN_CACHE_STATS_STRUCT_SIZE"));
  KilnErrorDestroy(e);
  stats.struct_size = KILN_PLAN_CACHE_STATS_STRUCT_SIZE;
  e = KilnInterpreterGetPlanCacheStats(nullptr, &stats);
  ASSERT_NE(e, nullptr);
  EXPECT_THAT(KilnErrorMessage(e), HasSubstr("interpreter is NULL"));
  KilnErrorDestroy(e);
}

}  // namespace
