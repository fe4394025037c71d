#include "profile_report.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kiln::cli {
namespace {

using ::testing::HasSubstr;

ProfileEvent Event(const std::string& name, const std::string& category,
                   int32_t run, int64_t begin_us, int64_t end_us) {
  ProfileEvent e;
  e.name = name;
  e.category = category;
  e.run = run;
  e.begin_ns = begin_us * 1000;
  e.end_ns = end_us * 1000;
  return e;
}

// Two runs of ADD, ADD, CONV_2D and a partition; run 0 is warmup.
std::vector<ProfileEvent> TwoRuns() {
  std::vector<ProfileEvent> events;
  events.push_back(Event("AllocateTensors", "allocate", -1, 0, 50));
  events.push_back(Event("CONV_2D", "prepare", -1, 10, 20));
  for (int32_t run = 0; run < 2; ++run) {
    const int64_t t = 1000 * (run + 1);
    events.push_back(Event("Invoke", "run", run, t, t + 100));
    events.back().subgraph = 0;
    events.push_back(Event("ADD", "invoke", run, t + 1, t + 11));
    events.push_back(Event("ADD", "invoke", run, t + 11, t + 31));
    events.push_back(Event("CONV_2D", "invoke", run, t + 31, t + 61));
    ProfileEvent p =
        Event("DELEGATE opencl", "partition_invoke", run, t + 61, t + 101);
    p.subgraph = 0;
    p.node = 7;
    p.delegate = "opencl";
    events.push_back(p);
    ProfileEvent plugin = Event("finish", "opencl", run, t + 80, t + 100);
    plugin.from_plugin = true;
    plugin.depth = 2;
    events.push_back(plugin);
  }
  return events;
}

TEST(ProfileReportTest, SumsTheTimedRunsByOpPartitionAndPluginEvent) {
  const ProfileReport r =
      SummarizeProfile(TwoRuns(), /*first_run=*/1,
                       {{0, 7, "opencl: subgraph 0 node 7 (3 nodes)"}});
  EXPECT_EQ(r.runs, 1);
  EXPECT_DOUBLE_EQ(r.invoke_ms, 0.1);
  ASSERT_EQ(r.ops.size(), 2u);
  EXPECT_EQ(r.ops[0].key, "ADD");  // 30 us beats CONV_2D's 30 us by order
  EXPECT_EQ(r.ops[0].count, 2);
  EXPECT_DOUBLE_EQ(r.ops[0].total_ms, 0.03);
  EXPECT_DOUBLE_EQ(r.ops[0].mean_us, 15);
  EXPECT_DOUBLE_EQ(r.ops[0].share, 0.3);
  EXPECT_EQ(r.ops[1].key, "CONV_2D");
  EXPECT_EQ(r.ops[1].count, 1);
  ASSERT_EQ(r.partitions.size(), 1u);
  EXPECT_EQ(r.partitions[0].key, "opencl: subgraph 0 node 7 (3 nodes)");
  EXPECT_DOUBLE_EQ(r.partitions[0].share, 0.4);
  ASSERT_EQ(r.plugin_events.size(), 1u);
  EXPECT_EQ(r.plugin_events[0].key, "finish (opencl)");
  EXPECT_EQ(r.plugin_events[0].count, 1);
}

TEST(ProfileReportTest, SetupRowsAreTheEventsOutsideInvokeByCallback) {
  const ProfileReport r = SummarizeProfile(TwoRuns(), 0, {});
  EXPECT_EQ(r.runs, 2);
  ASSERT_EQ(r.setup.size(), 2u);
  EXPECT_EQ(r.setup[0].key, "allocate");
  EXPECT_DOUBLE_EQ(r.setup[0].total_ms, 0.05);
  EXPECT_EQ(r.setup[1].key, "prepare");
  // Without a label the partition is named by delegate and node.
  ASSERT_EQ(r.partitions.size(), 1u);
  EXPECT_EQ(r.partitions[0].key, "opencl: subgraph 0 node 7");
  EXPECT_EQ(r.partitions[0].count, 2);
}

TEST(ProfileReportTest, RendersEveryTable) {
  const ProfileReport r = SummarizeProfile(TwoRuns(), 1, {});
  const std::string text = ProfileToText(r);
  EXPECT_THAT(text, HasSubstr("profile of 1 timed runs (0.100 ms"));
  EXPECT_THAT(text, HasSubstr("nodes by op"));
  EXPECT_THAT(text, HasSubstr("  ADD "));
  EXPECT_THAT(text, HasSubstr("30.0%"));
  EXPECT_THAT(text, HasSubstr("delegate partitions"));
  EXPECT_THAT(text, HasSubstr("finish (opencl)"));
  const Json j = ProfileToJson(r);
  EXPECT_EQ(j["runs"], 1);
  EXPECT_EQ(j["ops"][0]["op"], "ADD");
  EXPECT_EQ(j["ops"][0]["count"], 2);
  EXPECT_EQ(j["partitions"][0]["partition"], "opencl: subgraph 0 node 7");
}

}  // namespace
}  // namespace kiln::cli
