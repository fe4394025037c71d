#include "interpreter/arena_planner.h"

#include "gtest/gtest.h"

namespace kiln {
namespace {

TEST(ArenaPlannerTest, EmptyPlanHasNoBytes) {
  const ArenaPlan plan = PlanArena({});
  EXPECT_EQ(plan.arena_bytes, 0u);
  EXPECT_TRUE(plan.offsets.empty());
}

TEST(ArenaPlannerTest, DisjointLifetimesShareMemory) {
  // a [0,1], b [1,2], c [2,3]: a and c never live together.
  const ArenaPlan plan = PlanArena({{256, 0, 1}, {256, 1, 2}, {256, 2, 3}});
  EXPECT_EQ(plan.arena_bytes, 512u);
  EXPECT_EQ(plan.offsets[0], plan.offsets[2]);
  EXPECT_NE(plan.offsets[0], plan.offsets[1]);
}

TEST(ArenaPlannerTest, OverlappingLifetimesNeverOverlapInMemory) {
  const std::vector<ArenaRequest> requests = {
      {100, 0, 5}, {300, 2, 3}, {64, 1, 4}, {1000, 4, 6},
      {10, 0, 0},  {700, 5, 6}, {1, 3, 3},  {129, 2, 6}};
  const ArenaPlan plan = PlanArena(requests);
  for (size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(plan.offsets[i] % kArenaAlignment, 0u) << i;
    EXPECT_LE(plan.offsets[i] + requests[i].bytes, plan.arena_bytes) << i;
    for (size_t j = i + 1; j < requests.size(); ++j) {
      const bool live_together =
          requests[i].first_use <= requests[j].last_use &&
          requests[j].first_use <= requests[i].last_use;
      if (!live_together) continue;
      const bool disjoint =
          plan.offsets[i] + AlignArenaSize(requests[i].bytes) <=
              plan.offsets[j] ||
          plan.offsets[j] + AlignArenaSize(requests[j].bytes) <=
              plan.offsets[i];
      EXPECT_TRUE(disjoint) << "requests " << i << " and " << j;
    }
  }
}

TEST(ArenaPlannerTest, OffsetsAndTotalAre64ByteAligned) {
  const ArenaPlan plan = PlanArena({{12, 0, 2}, {12, 1, 2}, {1, 2, 2}});
  EXPECT_EQ(plan.arena_bytes, 3 * kArenaAlignment);
  for (size_t offset : plan.offsets) EXPECT_EQ(offset % 64, 0u);
}

TEST(ArenaPlannerTest, BestFitPicksTheSmallestGapThatFits) {
  // Largest first: big [0,9] at 0 .. 1024; then two 512s alive at [0,9]
  // would stack. Build a layout with two gaps and check the tighter one is
  // used: A(256,[0,0]) B(128,[0,9]) C(512,[0,0]) D(64,[0,9]) then E(128,[5,5]).
  const std::vector<ArenaRequest> requests = {
      {512, 0, 0},  // C: placed first at 0
      {256, 0, 0},  // A: at 512
      {128, 0, 9},  // B: at 768
      {64, 0, 9},   // D: at 896
      {128, 5, 5},  // E: gaps among live B, D: [0,768) (768 bytes) -> 0
  };
  const ArenaPlan plan = PlanArena(requests);
  EXPECT_EQ(plan.offsets[0], 0u);
  EXPECT_EQ(plan.offsets[4], 0u);
  EXPECT_EQ(plan.arena_bytes, 960u);
}

TEST(ArenaPlannerTest, ZeroSizedTensorsTakeNoSpace) {
  const ArenaPlan plan = PlanArena({{0, 0, 3}, {64, 0, 3}});
  EXPECT_EQ(plan.arena_bytes, 64u);
}

}  // namespace
}  // namespace kiln
