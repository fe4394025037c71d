#include "interpreter/partitioner.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kiln {
namespace {

using ::testing::ElementsAre;

// A graph of `num_tensors` tensors and nodes given as (inputs, outputs).
Graph MakeGraph(
    int num_tensors,
    const std::vector<std::pair<std::vector<int32_t>, std::vector<int32_t>>>&
        nodes) {
  Graph g;
  g.tensors.resize(static_cast<size_t>(num_tensors));
  for (size_t i = 0; i < nodes.size(); ++i) {
    Node n;
    n.index = static_cast<int32_t>(i);
    n.inputs = nodes[i].first;
    n.outputs = nodes[i].second;
    g.nodes.push_back(n);
    g.execution_plan.push_back(static_cast<int32_t>(i));
  }
  return g;
}

TEST(PartitionerTest, ChainBecomesOnePartition) {
  const Graph g = MakeGraph(4, {{{0}, {1}}, {{1}, {2}}, {{2}, {3}}});
  const DependencyGraph deps(g, g.execution_plan);
  EXPECT_THAT(PartitionClaimedNodes(deps, {0, 1, 2}),
              ElementsAre(ElementsAre(0, 1, 2)));
}

TEST(PartitionerTest, UnconnectedNodesStaySeparate) {
  const Graph g = MakeGraph(4, {{{0}, {1}}, {{0}, {2}}, {{1, 2}, {3}}});
  const DependencyGraph deps(g, g.execution_plan);
  EXPECT_THAT(PartitionClaimedNodes(deps, {0, 1}),
              ElementsAre(ElementsAre(0), ElementsAre(1)));
}

TEST(PartitionerTest, PathThroughUnclaimedNodeSplitsThePartition) {
  // 0 -> 1 (unclaimed) -> 2, and 0 -> 2 directly: {0, 2} would be a cycle.
  const Graph g = MakeGraph(4, {{{0}, {1}}, {{1}, {2}}, {{1, 2}, {3}}});
  const DependencyGraph deps(g, g.execution_plan);
  const auto parts = PartitionClaimedNodes(deps, {0, 2});
  EXPECT_THAT(parts, ElementsAre(ElementsAre(0), ElementsAre(2)));
  auto order = ContractedOrder(deps, parts);
  ASSERT_TRUE(order.ok());
  ASSERT_EQ(order->size(), 3u);
  EXPECT_TRUE((*order)[0].is_partition);
  EXPECT_FALSE((*order)[1].is_partition);
  EXPECT_EQ((*order)[1].index, 1);
  EXPECT_TRUE((*order)[2].is_partition);
}

TEST(PartitionerTest, ContractedOrderMovesIndependentNodesAfterPartition) {
  // 0 claimed, 1 unclaimed independent, 2 claimed consuming 0: {0,2} is
  // contractible; node 1 keeps its place relative to the partition.
  const Graph g =
      MakeGraph(5, {{{0}, {1}}, {{0}, {2}}, {{1}, {3}}, {{2, 3}, {4}}});
  const DependencyGraph deps(g, g.execution_plan);
  const auto parts = PartitionClaimedNodes(deps, {0, 2});
  EXPECT_THAT(parts, ElementsAre(ElementsAre(0, 2)));
  auto order = ContractedOrder(deps, parts);
  ASSERT_TRUE(order.ok());
  ASSERT_EQ(order->size(), 3u);
  EXPECT_TRUE((*order)[0].is_partition);
  EXPECT_EQ((*order)[1].index, 1);
  EXPECT_EQ((*order)[2].index, 3);
}

TEST(PartitionerTest, SequencedNodesKeepTheirOrder) {
  // Nodes 0 and 1 share no tensor but are sequenced (side effects).
  const Graph g = MakeGraph(3, {{{0}, {}}, {{0}, {1}}, {{1}, {2}}});
  const DependencyGraph deps(g, g.execution_plan, {0, 1});
  EXPECT_THAT(deps.preds(1), ElementsAre(0));
}

TEST(PartitionerTest, IgnoresUnknownAndDuplicateClaims) {
  const Graph g = MakeGraph(3, {{{0}, {1}}, {{1}, {2}}});
  const DependencyGraph deps(g, g.execution_plan);
  EXPECT_THAT(PartitionClaimedNodes(deps, {1, 1, 7, -3}),
              ElementsAre(ElementsAre(1)));
}

}  // namespace
}  // namespace kiln
