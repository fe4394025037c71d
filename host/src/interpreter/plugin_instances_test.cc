// Per-instance negotiation (kiln_plugin.h, "Load instances"): interpreters
// in one process that load one plugin each get a load instance of their
// own, with the host table and version of their own cap, whatever the order
// they are created in; initialize and shutdown are called once per instance.
// The probe plugin (test_plugins/probe_plugin.cc) reports, from inside its
// kernel, what its instance's host table offers.
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "interpreter/interpreter.h"
#include "interpreter/test_util.h"
#include "model/model_builder.h"

namespace kiln {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::LoadBuilt;
using testing::Read;

// What the probe's kernel wrote (probe_plugin.cc lists the values).
struct Probe {
  int minor = -1;
  bool has_1_1 = false, has_1_2 = false;
  int initialize_calls = -1, shutdown_calls = -1;
  bool unknown_extension_is_null = false;
  // What a host level shows a plugin, independent of the counters.
  std::vector<int> view() const {
    return {minor, has_1_1 ? 1 : 0, has_1_2 ? 1 : 0};
  }
};

std::string ProbePath(const std::string& variant) {
  return std::string(KILN_TEST_BAD_PLUGIN_DIR) + "/libtest_probe" + variant +
         ".so";
}

std::shared_ptr<const Model> ProbeModel() {
  static const std::shared_ptr<const Model> model = [] {
    ModelBuilder builder;
    SubgraphBuilder& g = builder.AddSubgraph("main");
    const int32_t x = g.AddTensor(FloatTensor("x", {1}));
    const int32_t y = g.AddTensor(FloatTensor("y", {6}));
    g.AddCustomOperator("KilnProbeHost", 1, {x}, {y});
    g.SetInputs({x});
    g.SetOutputs({y});
    absl::StatusOr<std::shared_ptr<const Model>> m = LoadBuilt(builder);
    EXPECT_TRUE(m.ok()) << m.status();
    return m.ok() ? *m : nullptr;
  }();
  return model;
}

// An interpreter over the probe model with only the probe plugin `variant`,
// serving at most extension API 1.`max_minor` (-1: newest).
absl::StatusOr<std::unique_ptr<Interpreter>> ProbeInterpreter(
    int max_minor, const std::string& variant = "") {
  InterpreterOptions options;
  options.plugins.paths = {ProbePath(variant)};
  options.plugins.use_default_locations = false;
  if (max_minor >= 0) {
    options.plugins.max_abi_version = KILN_MAKE_VERSION(1, max_minor, 0);
  }
  return Interpreter::Create(ProbeModel(), options);
}

Probe RunProbe(Interpreter& interpreter) {
  Probe p;
  absl::Status s = interpreter.AllocateTensors();
  if (s.ok()) s = interpreter.Invoke();
  EXPECT_TRUE(s.ok()) << s;
  const std::vector<float> v = Read<float>(interpreter.output(0));
  if (v.size() != 6) {
    ADD_FAILURE() << "the probe wrote " << v.size() << " values";
    return p;
  }
  p.minor = static_cast<int>(v[0]);
  p.has_1_1 = v[1] != 0;
  p.has_1_2 = v[2] != 0;
  p.initialize_calls = static_cast<int>(v[3]);
  p.shutdown_calls = static_cast<int>(v[4]);
  p.unknown_extension_is_null = v[5] != 0;
  return p;
}

const std::vector<int> kView_1_0 = {0, 0, 0};
const std::vector<int> kView_1_1 = {1, 1, 0};
const std::vector<int> kView_1_2 = {2, 1, 1};
// 1.3 adds no table function, only host extensions.
const std::vector<int> kView_1_3 = {3, 1, 1};

// The two-interpreter test of issue 13 ("Done when"), in both orders: the
// uncapped interpreter always runs with the 1.1 and 1.2 functions, the one
// capped at 1.0 sees exactly a 1.0 host in both orders.
TEST(PluginInstancesTest, UncappedThenCappedEachSeeTheirOwnHost) {
  auto uncapped = ProbeInterpreter(-1);
  ASSERT_TRUE(uncapped.ok()) << uncapped.status();
  EXPECT_EQ(RunProbe(**uncapped).view(), kView_1_3);
  auto capped = ProbeInterpreter(0);
  ASSERT_TRUE(capped.ok()) << capped.status();
  EXPECT_EQ(RunProbe(**capped).view(), kView_1_0);
  EXPECT_EQ(RunProbe(**uncapped).view(), kView_1_3);
  EXPECT_EQ(RunProbe(**capped).view(), kView_1_0);
}

TEST(PluginInstancesTest, CappedThenUncappedEachSeeTheirOwnHost) {
  auto capped = ProbeInterpreter(0);
  ASSERT_TRUE(capped.ok()) << capped.status();
  EXPECT_EQ(RunProbe(**capped).view(), kView_1_0);
  auto uncapped = ProbeInterpreter(-1);
  ASSERT_TRUE(uncapped.ok()) << uncapped.status();
  EXPECT_EQ(RunProbe(**uncapped).view(), kView_1_3);
  EXPECT_EQ(RunProbe(**capped).view(), kView_1_0);
  EXPECT_EQ(RunProbe(**uncapped).view(), kView_1_3);
}

TEST(PluginInstancesTest, EveryHostLevelAtOnce) {
  auto v10 = ProbeInterpreter(0);
  auto v12 = ProbeInterpreter(2);
  auto v11 = ProbeInterpreter(1);
  ASSERT_TRUE(v10.ok() && v11.ok() && v12.ok());
  EXPECT_EQ(RunProbe(**v11).view(), kView_1_1);
  EXPECT_EQ(RunProbe(**v10).view(), kView_1_0);
  EXPECT_EQ(RunProbe(**v12).view(), kView_1_2);
  EXPECT_TRUE(RunProbe(**v10).unknown_extension_is_null);
  EXPECT_TRUE(RunProbe(**v12).unknown_extension_is_null);
}

// A capped interpreter that refuses the plugin (it needs a 1.1 host) leaves
// the uncapped one running, in both orders.
TEST(PluginInstancesTest, RefusalByACappedHostLeavesTheOtherRunning) {
  for (bool capped_first : {true, false}) {
    SCOPED_TRACE(capped_first ? "capped first" : "uncapped first");
    std::unique_ptr<Interpreter> uncapped;
    absl::Status refused;
    const auto make_capped = [&] {
      refused = ProbeInterpreter(0, "_min_host_1_1").status();
    };
    if (capped_first) make_capped();
    auto made = ProbeInterpreter(-1, "_min_host_1_1");
    ASSERT_TRUE(made.ok()) << made.status();
    uncapped = *std::move(made);
    if (!capped_first) make_capped();
    EXPECT_THAT(refused.message(),
                HasSubstr("requires a host serving extension API 1.1"));
    EXPECT_EQ(RunProbe(*uncapped).view(), kView_1_3);
  }
}

// initialize once per instance of a 1.2 host, shutdown once when its last
// user goes; capped (1.0/1.1) instances, as on old hosts, get neither.
TEST(PluginInstancesTest, InitializeAndShutdownOncePerInstance) {
  auto first = ProbeInterpreter(-1);
  ASSERT_TRUE(first.ok()) << first.status();
  const Probe start = RunProbe(**first);
  EXPECT_EQ(start.initialize_calls, 1);
  EXPECT_EQ(start.shutdown_calls, 0);
  {
    auto second = ProbeInterpreter(-1);
    auto capped = ProbeInterpreter(1);
    ASSERT_TRUE(second.ok() && capped.ok());
    const Probe both = RunProbe(**second);
    EXPECT_EQ(both.initialize_calls, 2);
    EXPECT_EQ(both.shutdown_calls, 0);
  }
  const Probe after = RunProbe(**first);
  EXPECT_EQ(after.initialize_calls, 2);
  EXPECT_EQ(after.shutdown_calls, 1);
}

// A plugin whose initialize refuses: the interpreter does not use it, the
// refusal quotes what the plugin logged, and its shutdown still ran.
TEST(PluginInstancesTest, RefusalInInitializeIsShownWithItsMessages) {
  auto interpreter = ProbeInterpreter(-1, "_refuses_initialize");
  EXPECT_FALSE(interpreter.ok());
  InterpreterOptions options;
  options.plugins.paths = {ProbePath("_refuses_initialize")};
  options.plugins.use_default_locations = false;
  const std::vector<PluginLoadRecord> records =
      PluginLoader::LoadAll(options.plugins);
  ASSERT_EQ(records.size(), 1u);
  const PluginLoadRecord& r = records[0];
  EXPECT_EQ(r.plugin, nullptr);
  EXPECT_THAT(r.refusal, HasSubstr("its initialize returned UNAVAILABLE for "
                                   "extension API 1.3.0"));
  EXPECT_THAT(r.refusal,
              HasSubstr("error: probe refuses: no probe device on this "
                        "machine"));
  EXPECT_THAT(r.messages,
              ElementsAre("error: probe refuses: no probe device on this "
                          "machine",
                          "info: probe: shutdown"));
}

// tensor_set_type through the interpreter: the output declared FLOAT32 is
// INT32 after prepare (memory planned for it), and again after a resize.
TEST(TensorSetTypeInterpreterTest, PrepareRetypesTheOutput) {
  ModelBuilder builder;
  SubgraphBuilder& g = builder.AddSubgraph("main");
  const int32_t x = g.AddTensor(FloatTensor("x", {4}));
  const int32_t y = g.AddTensor(FloatTensor("y", {4}));
  g.AddCustomOperator("KilnProbeSetType", 1, {x}, {y});
  g.SetInputs({x});
  g.SetOutputs({y});
  auto model = LoadBuilt(builder);
  ASSERT_TRUE(model.ok()) << model.status();
  InterpreterOptions options;
  options.plugins.paths = {ProbePath("")};
  options.plugins.use_default_locations = false;
  auto interpreter = Interpreter::Create(*model, options);
  ASSERT_TRUE(interpreter.ok()) << interpreter.status();
  Interpreter& i = **interpreter;
  KILN_ASSERT_OK(i.AllocateTensors());
  KILN_ASSERT_OK(i.Invoke());
  EXPECT_EQ(i.output(0)->ElementType(), KILN_TYPE_INT32);
  EXPECT_EQ(i.output(0)->desc->type, KILN_TYPE_FLOAT32);
  EXPECT_THAT(Read<int32_t>(i.output(0)), ElementsAre(0, 1, 2, 3));
  KILN_ASSERT_OK(i.ResizeInput(0, {6}));
  KILN_ASSERT_OK(i.AllocateTensors());
  KILN_ASSERT_OK(i.Invoke());
  EXPECT_EQ(i.output(0)->ElementType(), KILN_TYPE_INT32);
  EXPECT_THAT(Read<int32_t>(i.output(0)), ElementsAre(0, 1, 2, 3, 4, 5));
}

}  // namespace
}  // namespace kiln
