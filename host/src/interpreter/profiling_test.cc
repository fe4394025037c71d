// Profiling (interpreter.h, runtime/profiler.h): which events the
// interpreter records, one per executed node per Invoke, plugin events
// nested in the host's, and the Chrome trace format.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "interpreter/interpreter.h"
#include "interpreter/test_util.h"
#include "kiln/kiln_builtin_ops.h"
#include "nlohmann/json.hpp"

namespace kiln {
namespace {

using testing::CpuOnlyOptions;
using ::testing::ElementsAre;
using testing::LoadBuilt;
using testing::WithTestDelegate;

// 0: a = ADD(x, x) 1: b = MUL(a, a) [partition] 2: c = SUB(b, x) [kernel]
// 3: d = ADD(c, c) 4: y = MUL(d, b) [partition]
std::shared_ptr<const Model> DiamondModel() {
  ModelBuilder builder;
  SubgraphBuilder& g = builder.AddSubgraph("main");
  auto f32 = [&](const char* name) {
    TensorSpec s;
    s.name = name;
    s.shape = {2, 3};
    return g.AddTensor(s);
  };
  const int32_t x = f32("x"), a = f32("a"), b = f32("b"), c = f32("c"),
                d = f32("d"), y = f32("y");
  g.AddOperator(KILN_OP_ADD, 1, {x, x}, {a});
  g.AddOperator(KILN_OP_MUL, 1, {a, a}, {b});
  g.AddOperator(KILN_OP_SUB, 1, {b, x}, {c});
  g.AddOperator(KILN_OP_ADD, 1, {c, c}, {d});
  g.AddOperator(KILN_OP_MUL, 1, {d, b}, {y});
  g.SetInputs({x});
  g.SetOutputs({y});
  auto model = LoadBuilt(builder);
  EXPECT_TRUE(model.ok()) << model.status();
  return model.ok() ? *model : nullptr;
}

std::unique_ptr<Interpreter> ProfiledRun(
    const std::shared_ptr<const Model>& model, InterpreterOptions options,
    int runs) {
  options.profile = true;
  auto it = Interpreter::Create(model, options);
  EXPECT_TRUE(it.ok()) << it.status();
  if (!it.ok()) return nullptr;
  EXPECT_TRUE((*it)->AllocateTensors().ok());
  for (int i = 0; i < runs; ++i) EXPECT_TRUE((*it)->Invoke().ok());
  return *std::move(it);
}

bool IsNodeRun(const ProfileEvent& e) {
  return e.category == "invoke" || e.category == "partition_invoke";
}

// Node indices of the node events of run `run`, in order.
std::vector<int32_t> NodesOfRun(const std::vector<ProfileEvent>& events,
                                int32_t run) {
  std::vector<int32_t> nodes;
  for (const ProfileEvent& e : events) {
    if (e.run == run && IsNodeRun(e)) nodes.push_back(e.node);
  }
  return nodes;
}

TEST(ProfilingTest, OffRecordsNothing) {
  auto model = DiamondModel();
  ASSERT_NE(model, nullptr);
  auto it = Interpreter::Create(model, WithTestDelegate(""));
  ASSERT_TRUE(it.ok()) << it.status();
  KILN_ASSERT_OK((*it)->AllocateTensors());
  KILN_ASSERT_OK((*it)->Invoke());
  EXPECT_FALSE((*it)->profiling());
  EXPECT_TRUE((*it)->ProfileEvents().empty());
}

TEST(ProfilingTest, OneEventPerExecutedNodeAndPartitionPerInvoke) {
  auto model = DiamondModel();
  ASSERT_NE(model, nullptr);
  auto it = ProfiledRun(model, WithTestDelegate(""), 3);
  ASSERT_NE(it, nullptr);
  const std::vector<ProfileEvent> events = it->ProfileEvents();
  const std::vector<int32_t>& plan = it->execution_plan(0);
  ASSERT_EQ(plan.size(), 3u);  // partition, SUB, partition
  for (int32_t run = 0; run < 3; ++run) {
    EXPECT_EQ(NodesOfRun(events, run), plan) << "run " << run;
  }
  std::map<std::string, int> per_category;
  for (const ProfileEvent& e : events) ++per_category[e.category];
  EXPECT_EQ(per_category["run"], 3);
  EXPECT_EQ(per_category["partition_invoke"], 6);
  EXPECT_EQ(per_category["invoke"], 3);
  EXPECT_EQ(per_category["create"], 1);
  EXPECT_EQ(per_category["partition"], 1);
  EXPECT_EQ(per_category["partition_init"], 2);
  EXPECT_EQ(per_category["partition_prepare"], 2);
  EXPECT_EQ(per_category["allocate"], 1);
  for (const ProfileEvent& e : events) {
    EXPECT_LE(e.begin_ns, e.end_ns) << e.name;
    if (e.category == "partition_invoke") {
      EXPECT_EQ(e.name, "DELEGATE test_delegate");
      EXPECT_EQ(e.delegate, "test_delegate");
      EXPECT_THAT(e.plugin, ::testing::HasSubstr("libtest_delegate.so"));
      EXPECT_EQ(e.depth, 1);
    }
    if (e.category == "invoke") {
      EXPECT_EQ(e.node, 2);
      EXPECT_EQ(e.op, "SUB");
      EXPECT_EQ(e.op_version, 1);
      EXPECT_THAT(e.plugin, ::testing::HasSubstr("libkiln_cpu.so"));
    }
  }
}

TEST(ProfilingTest, PluginEventsNestInTheirPartitionsEvent) {
  auto model = DiamondModel();
  ASSERT_NE(model, nullptr);
  auto it = ProfiledRun(model, WithTestDelegate(""), 2);
  ASSERT_NE(it, nullptr);
  const std::vector<ProfileEvent> events = it->ProfileEvents();
  int plugin_events = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    const ProfileEvent& e = events[i];
    if (!e.from_plugin) continue;
    ++plugin_events;
    EXPECT_EQ(e.name, "compute");
    EXPECT_EQ(e.category, "test_delegate");
    ASSERT_GT(i, 0u);
    const ProfileEvent& parent = events[i - 1];  // begun just before
    EXPECT_EQ(parent.category, "partition_invoke");
    EXPECT_EQ(e.node, parent.node);
    EXPECT_EQ(e.depth, parent.depth + 1);
    EXPECT_GE(e.begin_ns, parent.begin_ns);
    EXPECT_LE(e.end_ns, parent.end_ns);
  }
  EXPECT_EQ(plugin_events, 4);  // 2 partitions x 2 runs
}

TEST(ProfilingTest, FallenBackPartitionCountsItsKernels) {
  auto model = DiamondModel();
  ASSERT_NE(model, nullptr);
  auto it = ProfiledRun(
      model, WithTestDelegate("options { key: 'fail_at' value: 'invoke' }"), 2);
  ASSERT_NE(it, nullptr);
  const std::vector<ProfileEvent> events = it->ProfileEvents();
  const int32_t p0 = it->Partitions(0)[0].node_index;
  const int32_t p1 = it->Partitions(0)[1].node_index;
  // Run 0: each partition fails once, then its nodes run on kernels.
  EXPECT_EQ(NodesOfRun(events, 0),
            std::vector<int32_t>({p0, 0, 1, 2, p1, 3, 4}));
  // Run 1: the partitions have fallen back; only kernels run.
  EXPECT_EQ(NodesOfRun(events, 1), std::vector<int32_t>({0, 1, 2, 3, 4}));
}

TEST(ProfilingTest, CanBeSwitchedOnLaterAndCleared) {
  auto model = DiamondModel();
  ASSERT_NE(model, nullptr);
  auto it = Interpreter::Create(model, CpuOnlyOptions());
  ASSERT_TRUE(it.ok()) << it.status();
  KILN_ASSERT_OK((*it)->AllocateTensors());
  KILN_ASSERT_OK((*it)->Invoke());
  (*it)->SetProfiling(true);
  KILN_ASSERT_OK((*it)->Invoke());
  (*it)->SetProfiling(false);
  KILN_ASSERT_OK((*it)->Invoke());
  std::vector<ProfileEvent> events = (*it)->ProfileEvents();
  EXPECT_THAT(NodesOfRun(events, 0), ElementsAre(0, 1, 2, 3, 4));
  EXPECT_TRUE(NodesOfRun(events, 1).empty());
  (*it)->ClearProfile();
  EXPECT_TRUE((*it)->ProfileEvents().empty());
}

TEST(ProfilingTest, CorpusModelHasOneEventPerNodePerInvoke) {
  KILN_SKIP_WITHOUT_SHARED_MODELS();
  auto model = Model::FromFile(
      testing::SharedModelPath("misc/mobilenet_like_model.bin"));
  ASSERT_TRUE(model.ok()) << model.status();
  auto it = ProfiledRun(*model, CpuOnlyOptions(), 2);
  ASSERT_NE(it, nullptr);
  const std::vector<ProfileEvent> events = it->ProfileEvents();
  // The model file's operators, in order: the interpreter runs each once.
  std::vector<int32_t> all;
  for (int32_t n = 0; n < static_cast<int32_t>((*model)->graph(0).nodes.size());
       ++n) {
    all.push_back(n);
  }
  ASSERT_FALSE(all.empty());
  for (int32_t run = 0; run < 2; ++run) {
    std::vector<int32_t> nodes = NodesOfRun(events, run);
    std::sort(nodes.begin(), nodes.end());
    EXPECT_EQ(nodes, all) << "run " << run;
  }
}

TEST(ProfilingTest, TraceIsChromeTraceEventJson) {
  auto model = DiamondModel();
  ASSERT_NE(model, nullptr);
  auto it = ProfiledRun(model, WithTestDelegate(""), 2);
  ASSERT_NE(it, nullptr);
  const std::string path =
      ::testing::TempDir() + "/kiln_profiling_test_trace.json";
  KILN_ASSERT_OK(it->WriteProfileTrace(path));
  std::ifstream in(path);
  const nlohmann::json trace = nlohmann::json::parse(in);
  std::remove(path.c_str());
  ASSERT_TRUE(trace["traceEvents"].is_array());
  int complete = 0, node_events = 0;
  for (const nlohmann::json& e : trace["traceEvents"]) {
    ASSERT_TRUE(e["ph"].is_string());
    ASSERT_TRUE(e["pid"].is_number_integer());
    ASSERT_TRUE(e["tid"].is_number_integer());
    if (e["ph"] == "M") continue;
    ASSERT_EQ(e["ph"], "X");
    ++complete;
    EXPECT_TRUE(e["name"].is_string());
    EXPECT_TRUE(e["cat"].is_string());
    EXPECT_TRUE(e["ts"].is_number());
    EXPECT_GE(e["dur"].get<double>(), 0.0);
    if (e["cat"] == "invoke" || e["cat"] == "partition_invoke") {
      ++node_events;
      EXPECT_TRUE(e["args"]["node"].is_number_integer());
      EXPECT_TRUE(e["args"]["op"].is_string());
      EXPECT_TRUE(e["args"]["version"].is_number_integer());
      EXPECT_TRUE(e["args"]["plugin"].is_string());
      EXPECT_TRUE(e["args"]["run"].is_number_integer());
    }
  }
  EXPECT_EQ(complete, static_cast<int>(it->ProfileEvents().size()));
  EXPECT_EQ(node_events, 6);
}

}  // namespace
}  // namespace kiln
