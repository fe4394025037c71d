// Partitioning, decline reasons, settings refusal, multi-node partitions and
// the on-disk program cache's corruption handling.
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "delegate_harness.h"
#include "gmock/gmock.h"
#include "graph_builder.h"
#include "gtest/gtest.h"
#include "runtime/single_node_runner.h"

namespace kiln::opencl_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string Reason(const DelegateHarness& h, int32_t node) {
  const char* why = h.decline_reasons()->decline_reason(h.delegate(), node);
  return why != nullptr ? why : "";
}

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/kiln-opencl-delegate-test-XXXXXX";
    path_ = mkdtemp(pattern) != nullptr ? pattern : "";
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string CacheSettings(const std::string& dir) {
  kiln::DelegateSettings s;
  s.mutable_opencl()->set_cache_dir(dir);
  return SerializeSettings(s);
}

TEST(OpenClDelegateTest, PluginOffersItsExtensions) {
  DelegateHarness h;
  ASSERT_TRUE(h.Load().ok());
  ASSERT_NE(h.decline_reasons(), nullptr);
  ASSERT_NE(h.stats_extension(), nullptr);
  EXPECT_GE(h.decline_reasons()->base.struct_size,
            KILN_DELEGATE_DECLINE_REASONS_EXTENSION_STRUCT_SIZE);
  EXPECT_GE(h.stats_extension()->base.struct_size,
            KILN_OPENCL_STATS_EXTENSION_STRUCT_SIZE);
}

TEST(OpenClDelegateTest, NodeWithNewerOpVersionIsNotClaimed) {
  GraphBuilder b;
  const int in = b.Random({1, 6, 6, 3}, false);
  const int filter = b.Random({4, 3, 3, 3}, true);
  const int out = b.Tensor(KILN_TYPE_FLOAT32, {1, 6, 6, 4});
  b.Op(KILN_OP_CONV_2D, 7, {in, filter, -1}, {out});
  const int relu_out = b.Tensor(KILN_TYPE_FLOAT32, {1, 6, 6, 4});
  b.Op(KILN_OP_RELU, 3, {out}, {relu_out});
  DelegateHarness h;
  ASSERT_TRUE(h.Create().ok());
  auto claimed = h.Partition(b.graph());
  ASSERT_TRUE(claimed.ok()) << claimed.status();
  EXPECT_THAT(*claimed, IsEmpty());
  EXPECT_THAT(Reason(h, 0),
              HasSubstr("CONV_2D version 7 is outside the versions 1..1"));
  EXPECT_THAT(Reason(h, 1), HasSubstr("RELU version 3 is outside"));
}

TEST(OpenClDelegateTest, DeclinesUnsupportedNodesWithReasonsAndClaimsTheRest) {
  GraphBuilder b;
  const int in = b.Random({1, 4, 4, 2}, false);
  const int a = b.Tensor(KILN_TYPE_FLOAT32, {1, 4, 4, 2});
  b.Op(KILN_OP_RELU, 1, {in}, {a});
  const int floor_out = b.Tensor(KILN_TYPE_FLOAT32, {1, 4, 4, 2});
  b.Op(KILN_OP_FLOOR, 1, {a}, {floor_out});
  const int ints = b.Tensor(KILN_TYPE_INT32, {1, 4, 4, 2});
  const int int_out = b.Tensor(KILN_TYPE_INT32, {1, 4, 4, 2});
  b.Op(KILN_OP_ADD, 1, {ints, ints}, {int_out});
  const int big = b.Random({1, 2, 2, 2, 2}, false);
  const int big_out = b.Tensor(KILN_TYPE_FLOAT32, {1, 2, 2, 2, 2});
  b.Op(KILN_OP_TANH, 1, {big}, {big_out});
  const int sign_out = b.Tensor(KILN_TYPE_FLOAT32, {1, 4, 4, 2});
  b.Op(KILN_OP_ADD, 1, {floor_out, a}, {sign_out})
      .SetInt(KILN_OPTION_FUSED_ACTIVATION, KILN_ACTIVATION_SIGN_BIT);
  const int last = b.Tensor(KILN_TYPE_FLOAT32, {1, 4, 4, 2});
  b.Op(KILN_OP_LOGISTIC, 1, {floor_out}, {last});
  DelegateHarness h;
  ASSERT_TRUE(h.Create().ok());
  auto claimed = h.Partition(b.graph());
  ASSERT_TRUE(claimed.ok()) << claimed.status();
  EXPECT_THAT(*claimed, ElementsAre(0, 5));
  EXPECT_EQ(Reason(h, 0), "");
  EXPECT_THAT(Reason(h, 1),
              HasSubstr("FLOOR is not implemented by the OpenCL delegate"));
  EXPECT_EQ(Reason(h, 2),
            "ADD input 0 (tensor 't3') has type INT32; supports FLOAT32 (the "
            "OpenCL delegate runs float32 only)");
  EXPECT_EQ(Reason(h, 3),
            "TANH input 0 (tensor 't5') has rank 5; the OpenCL delegate "
            "supports rank <= 4");
  EXPECT_EQ(Reason(h, 4),
            "ADD: fused activation 5 (SIGN_BIT) is not supported (NONE, RELU, "
            "RELU_N1_TO_1, RELU6 and TANH are)");
  EXPECT_EQ(Reason(h, 99), "");
}

TEST(OpenClDelegateTest, ReasonsPrintShapesAndCountsInTheSdkWords) {
  GraphBuilder b;
  const int x = b.Random({2, 3}, false);
  const int y = b.Random({4}, false);
  const int sum = b.Tensor(KILN_TYPE_FLOAT32, {2, 3});
  b.Op(KILN_OP_ADD, 1, {x, y}, {sum});
  const int relu = b.Tensor(KILN_TYPE_FLOAT32, {2, 3});
  b.Op(KILN_OP_RELU, 1, {x, x}, {relu});
  DelegateHarness h;
  ASSERT_TRUE(h.Create().ok());
  auto claimed = h.Partition(b.graph());
  ASSERT_TRUE(claimed.ok()) << claimed.status();
  EXPECT_THAT(*claimed, IsEmpty());
  EXPECT_EQ(Reason(h, 0),
            "ADD: input shapes [2, 3] and [4] cannot be broadcast together");
  EXPECT_EQ(Reason(h, 1), "RELU expects 1 input, the node has 2");
}

TEST(OpenClDelegateTest, MinPartitionSizeDropsSmallGroups) {
  GraphBuilder b;
  const int in = b.Random({2, 3}, false);
  const int a = b.Tensor(KILN_TYPE_FLOAT32, {2, 3});
  b.Op(KILN_OP_RELU, 1, {in}, {a});
  const int c = b.Tensor(KILN_TYPE_FLOAT32, {2, 3});
  b.Op(KILN_OP_FLOOR, 1, {a}, {c});
  const int d = b.Tensor(KILN_TYPE_FLOAT32, {2, 3});
  b.Op(KILN_OP_TANH, 1, {c}, {d});
  const int e = b.Tensor(KILN_TYPE_FLOAT32, {2, 3});
  b.Op(KILN_OP_LOGISTIC, 1, {d}, {e});
  kiln::DelegateSettings s;
  s.set_min_partition_size(2);
  DelegateHarness h;
  ASSERT_TRUE(h.Create(SerializeSettings(s)).ok());
  auto claimed = h.Partition(b.graph());
  ASSERT_TRUE(claimed.ok());
  EXPECT_THAT(*claimed, ElementsAre(2, 3));
  EXPECT_THAT(Reason(h, 0), HasSubstr("fewer than min_partition_size=2"));
}

TEST(OpenClDelegateTest, UnknownOptionIsRefusedByName) {
  kiln::DelegateSettings s;
  (*s.mutable_options())["devcie"] = "gpu";
  DelegateHarness h;
  const absl::Status status = h.Create(SerializeSettings(s));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("'devcie'"));
}

TEST(OpenClDelegateTest, NoMatchingDeviceIsUnavailableAndListsDevices) {
  kiln::DelegateSettings s;
  (*s.mutable_options())["device_name"] = "no-such-device-name";
  DelegateHarness h;
  const absl::Status status = h.Create(SerializeSettings(s));
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("no available OpenCL device matches"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("devices present"));
}

// Runs `graph` node by node on the CPU plugin; returns output `out`.
std::vector<float> RunOnCpu(const Graph& graph, int out) {
  auto cpu = LoadPluginForTest(CpuPluginPath());
  EXPECT_TRUE(cpu.ok()) << cpu.status();
  if (!cpu.ok()) return {};
  Graph g = CloneGraph(graph);
  for (int32_t n : g.execution_plan) {
    SingleNodeRunner r;
    const Node& node = g.nodes[static_cast<size_t>(n)];
    std::vector<int32_t> ins, outs;
    for (int32_t t : node.inputs) {
      if (t < 0) {
        ins.push_back(-1);
        continue;
      }
      const Tensor& src = g.tensors[static_cast<size_t>(t)];
      ins.push_back(r.AddTensor(src.type, src.shape, src.data, src.bytes,
                                src.is_constant()));
    }
    for (int32_t t : node.outputs) {
      outs.push_back(r.AddTensor(g.tensors[static_cast<size_t>(t)].type, {}));
    }
    r.SetOp(node.builtin_code, node.version, ins, outs);
    for (const auto& [key, value] : node.options)
      r.node().SetOption(key, value);
    const KilnKernel* k = FindKernel(**cpu, node.builtin_code, node.version);
    EXPECT_NE(k, nullptr) << node.OpName();
    if (k == nullptr) return {};
    const absl::Status s = r.Run(*k);
    EXPECT_TRUE(s.ok()) << s;
    Tensor& dst = g.tensors[static_cast<size_t>(node.outputs[0])];
    dst.shape = r.tensor(outs[0]).shape;
    dst.AllocateOwned(r.tensor(outs[0]).bytes);
    std::memcpy(dst.data, r.tensor(outs[0]).data, dst.bytes);
  }
  const Tensor& t = g.tensors[static_cast<size_t>(out)];
  const float* p = static_cast<const float*>(t.data);
  return std::vector<float>(p, p + t.bytes / sizeof(float));
}

void ExpectNear(const std::vector<float>& actual,
                const std::vector<float>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    ASSERT_NEAR(actual[i], expected[i],
                1e-4f * std::max(1.0f, std::fabs(expected[i])))
        << "element " << i;
  }
}

std::vector<float> Values(const Graph& g, int t) {
  const Tensor& x = g.tensors[static_cast<size_t>(t)];
  const float* p = static_cast<const float*>(x.data);
  return std::vector<float>(p, p + x.bytes / sizeof(float));
}

TEST(OpenClDelegateTest, ConvStackRunsAsOnePartitionAndMatchesCpu) {
  int out = -1;
  Graph graph = ConvStack(&out);
  const std::vector<float> expected = RunOnCpu(graph, out);
  TempDir dir;
  DelegateHarness h;
  ASSERT_TRUE(h.Create(CacheSettings(dir.path())).ok());
  auto claimed = h.Partition(graph);
  ASSERT_TRUE(claimed.ok());
  EXPECT_THAT(*claimed, ElementsAre(0, 1, 2, 3, 4));
  ASSERT_TRUE(h.Prepare(graph).ok());
  EXPECT_EQ(h.partition_nodes().size(), 1u);
  for (int i = 0; i < 2; ++i) {  // repeated invokes give the same result
    const absl::Status s = h.Invoke(graph);
    ASSERT_TRUE(s.ok()) << s;
    ExpectNear(Values(graph, out), expected);
  }
  const KilnOpenClStats stats = h.Stats();
  EXPECT_EQ(stats.fp16_storage, 0u);
  EXPECT_EQ(stats.programs_built_from_source, 3u);  // three program groups
  EXPECT_EQ(stats.cache_files_written, 3u);
}

TEST(OpenClDelegateTest, CorruptCacheFileIsDetectedAndRebuilt) {
  TempDir dir;
  int out = -1;
  Graph original = ConvStack(&out);
  {
    Graph graph = CloneGraph(original);
    DelegateHarness h;
    ASSERT_TRUE(h.Create(CacheSettings(dir.path())).ok());
    ASSERT_TRUE(h.Partition(graph).ok());
    ASSERT_TRUE(h.Prepare(graph).ok());
    ASSERT_EQ(h.Stats().cache_files_written, 3u);
  }
  // Corrupt one byte in the middle of every cache file.
  int corrupted = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    std::fstream f(entry.path(),
                   std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(0, std::ios::end);
    const std::streamoff size = f.tellg();
    f.seekg(size / 2);
    char c = 0;
    f.get(c);
    f.seekp(size / 2);
    f.put(static_cast<char>(c ^ 0x5a));
    ++corrupted;
  }
  ASSERT_EQ(corrupted, 3);
  {
    Graph graph = CloneGraph(original);
    DelegateHarness h;
    ASSERT_TRUE(h.Create(CacheSettings(dir.path())).ok());
    ASSERT_TRUE(h.Partition(graph).ok());
    const absl::Status s = h.Prepare(graph);
    ASSERT_TRUE(s.ok()) << s;
    const KilnOpenClStats stats = h.Stats();
    EXPECT_EQ(stats.cache_files_rejected, 3u);
    EXPECT_EQ(stats.programs_built_from_source, 3u);
    EXPECT_EQ(stats.cache_files_written, 3u);
    ASSERT_TRUE(h.Invoke(graph).ok());
    ExpectNear(Values(graph, out), RunOnCpu(original, out));
  }
  {  // The rewritten files are valid again.
    Graph graph = CloneGraph(original);
    DelegateHarness h;
    ASSERT_TRUE(h.Create(CacheSettings(dir.path())).ok());
    ASSERT_TRUE(h.Partition(graph).ok());
    ASSERT_TRUE(h.Prepare(graph).ok());
    const KilnOpenClStats stats = h.Stats();
    EXPECT_EQ(stats.cache_files_rejected, 0u);
    EXPECT_EQ(stats.programs_built_from_source, 0u);
    EXPECT_EQ(stats.programs_loaded_from_disk_cache, 3u);
  }
}

}  // namespace
}  // namespace kiln::opencl_test
