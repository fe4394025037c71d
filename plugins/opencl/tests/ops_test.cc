// Every kernel of the OpenCL delegate against the CPU plugin's kernel for
// the same node: odd channel counts, broadcasting, SAME/VALID, strides,
// dilation. Tolerance 1e-4 absolute or relative.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "delegate_harness.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/single_node_runner.h"

namespace kiln::opencl_test {
namespace {

class OpenClOpsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto cpu = LoadPluginForTest(CpuPluginPath());
    ASSERT_TRUE(cpu.ok()) << cpu.status();
    cpu_ = *cpu;
  }
  static void TearDownTestSuite() { cpu_.reset(); }

  std::vector<float> Random(size_t n, float lo = -2.f, float hi = 2.f) {
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng_);
    return v;
  }
  int Input(SingleNodeRunner& r, std::vector<int32_t> shape) {
    size_t n = 1;
    for (int32_t d : shape) n *= static_cast<size_t>(d);
    return r.AddTensor<float>(KILN_TYPE_FLOAT32, shape, Random(n));
  }
  int Weights(SingleNodeRunner& r, std::vector<int32_t> shape) {
    size_t n = 1;
    for (int32_t d : shape) n *= static_cast<size_t>(d);
    return r.AddTensor<float>(KILN_TYPE_FLOAT32, shape, Random(n), true);
  }

  // Runs the node of `r` on the CPU plugin and, through the delegate, on
  // OpenCL, and compares output `out`.
  void ExpectMatchesCpu(SingleNodeRunner& r, int out) {
    Graph graph = CloneGraph(r.graph());
    graph.outputs = {out};
    const Node& node = r.node();
    const KilnKernel* kernel =
        FindKernel(*cpu_, node.builtin_code, node.version);
    ASSERT_NE(kernel, nullptr) << "the CPU plugin has no kernel for "
                               << node.OpName() << " v" << node.version;
    const absl::Status cpu_status = r.Run(*kernel);
    ASSERT_TRUE(cpu_status.ok()) << cpu_status;

    DelegateHarness h;
    const absl::Status created = h.Create();
    ASSERT_TRUE(created.ok()) << created;
    auto claimed = h.Partition(graph);
    ASSERT_TRUE(claimed.ok()) << claimed.status();
    const char* why = h.decline_reasons()->decline_reason(h.delegate(), 0);
    ASSERT_THAT(*claimed, ::testing::ElementsAre(0))
        << "declined: " << (why != nullptr ? why : "(no reason)");
    absl::Status s = h.Prepare(graph);
    ASSERT_TRUE(s.ok()) << s;
    s = h.Invoke(graph);
    ASSERT_TRUE(s.ok()) << s;

    const Tensor& expected_t = r.tensor(out);
    const Tensor& actual_t = graph.tensors[static_cast<size_t>(out)];
    ASSERT_EQ(actual_t.shape, expected_t.shape);
    const std::vector<float> expected = r.Values<float>(out);
    ASSERT_EQ(actual_t.bytes, expected.size() * sizeof(float));
    const float* actual = static_cast<const float*>(actual_t.data);
    int mismatches = 0;
    for (size_t i = 0; i < expected.size() && mismatches < 5; ++i) {
      const float tol = 1e-4f * std::max(1.0f, std::fabs(expected[i]));
      if (!(std::fabs(actual[i] - expected[i]) <= tol)) {
        ADD_FAILURE() << node.OpName() << " element " << i << ": OpenCL "
                      << actual[i] << " vs CPU " << expected[i];
        ++mismatches;
      }
    }
  }

  std::mt19937 rng_{1234};
  static std::shared_ptr<LoadedPlugin> cpu_;
};
std::shared_ptr<LoadedPlugin> OpenClOpsTest::cpu_;

struct BinaryCase {
  int32_t op;
  std::vector<int32_t> a, b;
  int activation;
};

TEST_F(OpenClOpsTest, BinaryOpsBroadcastWithFusedActivations) {
  const std::vector<BinaryCase> cases = {
      {KILN_OP_ADD, {2, 5, 3, 7}, {2, 5, 3, 7}, KILN_ACTIVATION_NONE},
      {KILN_OP_ADD, {1, 4, 5, 3}, {3}, KILN_ACTIVATION_RELU},
      {KILN_OP_SUB, {2, 1, 5, 3}, {1, 4, 1, 3}, KILN_ACTIVATION_RELU6},
      {KILN_OP_SUB, {5}, {3, 1}, KILN_ACTIVATION_RELU_N1_TO_1},
      {KILN_OP_MUL, {3, 1, 7}, {1, 2, 1}, KILN_ACTIVATION_RELU},
      {KILN_OP_MUL, {2, 3}, {}, KILN_ACTIVATION_NONE},
  };
  for (const BinaryCase& c : cases) {
    SCOPED_TRACE(testing::Message()
                 << "op " << c.op << " act " << c.activation);
    SingleNodeRunner r;
    const int a = Input(r, c.a), b = Input(r, c.b);
    const int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
    r.SetOp(c.op, 1, {a, b}, {out});
    r.node().SetInt(KILN_OPTION_FUSED_ACTIVATION, c.activation);
    ExpectMatchesCpu(r, out);
  }
}

TEST_F(OpenClOpsTest, StandaloneActivations) {
  for (int32_t op :
       {KILN_OP_RELU, KILN_OP_RELU6, KILN_OP_LOGISTIC, KILN_OP_TANH}) {
    SCOPED_TRACE(testing::Message() << "op " << op);
    SingleNodeRunner r;
    const int in = r.AddTensor<float>(KILN_TYPE_FLOAT32, {3, 5, 7},
                                      Random(105, -8.f, 8.f));
    const int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
    r.SetOp(op, 1, {in}, {out});
    ExpectMatchesCpu(r, out);
  }
}

struct ConvCase {
  std::vector<int32_t> input, filter;
  int padding, stride_h, stride_w, dilation_h, dilation_w;
  bool bias;
  int activation;
};

TEST_F(OpenClOpsTest, Conv2dPaddingStridesDilation) {
  const std::vector<ConvCase> cases = {
      {{1, 7, 9, 3},
       {5, 3, 3, 3},
       KILN_PADDING_SAME,
       1,
       1,
       1,
       1,
       true,
       KILN_ACTIVATION_RELU},
      {{2, 8, 7, 5},
       {3, 3, 2, 5},
       KILN_PADDING_VALID,
       2,
       1,
       1,
       1,
       true,
       KILN_ACTIVATION_NONE},
      {{1, 9, 9, 3},
       {7, 3, 3, 3},
       KILN_PADDING_SAME,
       2,
       2,
       1,
       1,
       false,
       KILN_ACTIVATION_RELU6},
      {{1, 11, 10, 2},
       {3, 3, 3, 2},
       KILN_PADDING_VALID,
       1,
       1,
       2,
       3,
       true,
       KILN_ACTIVATION_RELU_N1_TO_1},
      {{1, 6, 6, 1},
       {1, 1, 1, 1},
       KILN_PADDING_SAME,
       1,
       1,
       1,
       1,
       true,
       KILN_ACTIVATION_NONE},
  };
  for (const ConvCase& c : cases) {
    SCOPED_TRACE(testing::Message() << "filter " << c.filter[0] << "x"
                                    << c.filter[1] << "x" << c.filter[2]);
    SingleNodeRunner r;
    const int in = Input(r, c.input);
    const int filter = Weights(r, c.filter);
    const int bias = c.bias ? Weights(r, {c.filter[0]}) : -1;
    const int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
    r.SetOp(KILN_OP_CONV_2D, 1, {in, filter, bias}, {out});
    r.node().SetInt(KILN_OPTION_PADDING, c.padding);
    r.node().SetInt(KILN_OPTION_STRIDE_H, c.stride_h);
    r.node().SetInt(KILN_OPTION_STRIDE_W, c.stride_w);
    r.node().SetInt(KILN_OPTION_DILATION_H, c.dilation_h);
    r.node().SetInt(KILN_OPTION_DILATION_W, c.dilation_w);
    r.node().SetInt(KILN_OPTION_FUSED_ACTIVATION, c.activation);
    ExpectMatchesCpu(r, out);
  }
}

// LiteRT's CONV_2D ignores a fused TANH (its activation range covers only
// the clamps) and the CPU kernel follows it; the delegate leaves such a node
// to the CPU kernel rather than compute tanh.
TEST_F(OpenClOpsTest, Conv2dWithFusedTanhIsDeclined) {
  SingleNodeRunner r;
  const int in = Input(r, {1, 6, 6, 2});
  const int filter = Weights(r, {2, 3, 3, 2});
  const int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_CONV_2D, 1, {in, filter, -1}, {out});
  r.node().SetInt(KILN_OPTION_FUSED_ACTIVATION, KILN_ACTIVATION_TANH);
  Graph graph = CloneGraph(r.graph());
  graph.outputs = {out};
  DelegateHarness h;
  ASSERT_TRUE(h.Create().ok());
  auto claimed = h.Partition(graph);
  ASSERT_TRUE(claimed.ok()) << claimed.status();
  EXPECT_TRUE(claimed->empty());
  const char* why = h.decline_reasons()->decline_reason(h.delegate(), 0);
  ASSERT_NE(why, nullptr);
  EXPECT_THAT(why, ::testing::HasSubstr("fused activation 4 (TANH) is not "
                                        "claimed"));
}

TEST_F(OpenClOpsTest, DepthwiseConv2dMultiplierAndDilation) {
  struct Case {
    std::vector<int32_t> input;
    int multiplier, kernel, padding, stride, dilation, version;
  };
  const std::vector<Case> cases = {
      {{1, 7, 9, 3}, 1, 3, KILN_PADDING_SAME, 1, 1, 1},
      {{2, 8, 8, 5}, 2, 3, KILN_PADDING_VALID, 2, 1, 1},
      {{1, 12, 11, 3}, 1, 3, KILN_PADDING_SAME, 1, 2, 2},
      {{1, 10, 10, 7}, 3, 2, KILN_PADDING_VALID, 1, 3, 2},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message() << "multiplier " << c.multiplier
                                    << " dilation " << c.dilation);
    SingleNodeRunner r;
    const int channels = c.input[3] * c.multiplier;
    const int in = Input(r, c.input);
    const int filter = Weights(r, {1, c.kernel, c.kernel, channels});
    const int bias = Weights(r, {channels});
    const int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
    r.SetOp(KILN_OP_DEPTHWISE_CONV_2D, c.version, {in, filter, bias}, {out});
    r.node().SetInt(KILN_OPTION_PADDING, c.padding);
    r.node().SetInt(KILN_OPTION_STRIDE_H, c.stride);
    r.node().SetInt(KILN_OPTION_STRIDE_W, c.stride);
    r.node().SetInt(KILN_OPTION_DILATION_H, c.dilation);
    r.node().SetInt(KILN_OPTION_DILATION_W, c.dilation);
    r.node().SetInt(KILN_OPTION_DEPTH_MULTIPLIER, c.multiplier);
    r.node().SetInt(KILN_OPTION_FUSED_ACTIVATION, KILN_ACTIVATION_RELU6);
    ExpectMatchesCpu(r, out);
  }
}

TEST_F(OpenClOpsTest, FullyConnectedWithAndWithoutKeepNumDims) {
  for (bool keep : {false, true}) {
    SCOPED_TRACE(keep ? "keep_num_dims" : "flatten");
    SingleNodeRunner r;
    const int in = Input(r, {2, 3, 7});
    const int weights = Weights(r, {5, 7});
    const int bias = Weights(r, {5});
    const int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
    r.SetOp(KILN_OP_FULLY_CONNECTED, keep ? 5 : 1, {in, weights, bias}, {out});
    r.node().SetInt(KILN_OPTION_KEEP_NUM_DIMS, keep ? 1 : 0);
    r.node().SetInt(KILN_OPTION_FUSED_ACTIVATION, KILN_ACTIVATION_RELU);
    ExpectMatchesCpu(r, out);
  }
}

TEST_F(OpenClOpsTest, PoolingSameValidStrides) {
  struct Case {
    int32_t op;
    int padding, filter_h, filter_w, stride_h, stride_w;
  };
  const std::vector<Case> cases = {
      {KILN_OP_MAX_POOL_2D, KILN_PADDING_SAME, 3, 3, 2, 2},
      {KILN_OP_MAX_POOL_2D, KILN_PADDING_VALID, 2, 3, 1, 2},
      {KILN_OP_AVERAGE_POOL_2D, KILN_PADDING_SAME, 3, 3, 2, 2},
      {KILN_OP_AVERAGE_POOL_2D, KILN_PADDING_VALID, 3, 2, 2, 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message()
                 << "op " << c.op << " padding " << c.padding);
    SingleNodeRunner r;
    const int in = Input(r, {2, 9, 8, 3});
    const int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
    r.SetOp(c.op, 1, {in}, {out});
    r.node().SetInt(KILN_OPTION_PADDING, c.padding);
    r.node().SetInt(KILN_OPTION_FILTER_H, c.filter_h);
    r.node().SetInt(KILN_OPTION_FILTER_W, c.filter_w);
    r.node().SetInt(KILN_OPTION_STRIDE_H, c.stride_h);
    r.node().SetInt(KILN_OPTION_STRIDE_W, c.stride_w);
    r.node().SetInt(KILN_OPTION_FUSED_ACTIVATION, KILN_ACTIVATION_NONE);
    ExpectMatchesCpu(r, out);
  }
}

TEST_F(OpenClOpsTest, SoftmaxWithBeta) {
  for (float beta : {1.0f, 0.5f}) {
    SingleNodeRunner r;
    const int in =
        r.AddTensor<float>(KILN_TYPE_FLOAT32, {3, 11}, Random(33, -5.f, 5.f));
    const int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
    r.SetOp(KILN_OP_SOFTMAX, 1, {in}, {out});
    r.node().SetFloat(KILN_OPTION_BETA, beta);
    ExpectMatchesCpu(r, out);
  }
}

TEST_F(OpenClOpsTest, ReshapeFromShapeTensorAndOption) {
  {
    SingleNodeRunner r;
    const int in = Input(r, {2, 3, 5});
    const int shape = r.AddTensor<int32_t>(KILN_TYPE_INT32, {2},
                                           std::vector<int32_t>{-1, 5}, true);
    const int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
    r.SetOp(KILN_OP_RESHAPE, 1, {in, shape}, {out});
    ExpectMatchesCpu(r, out);
  }
  {
    SingleNodeRunner r;
    const int in = Input(r, {2, 3, 5});
    const int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
    r.SetOp(KILN_OP_RESHAPE, 1, {in}, {out});
    r.node().SetIntArray(KILN_OPTION_NEW_SHAPE, {3, 10});
    ExpectMatchesCpu(r, out);
  }
}

TEST_F(OpenClOpsTest, ConcatenationOnEveryAxis) {
  for (int axis : {0, 1, 2, -1}) {
    SCOPED_TRACE(testing::Message() << "axis " << axis);
    SingleNodeRunner r;
    std::vector<int32_t> s1 = {2, 3, 5}, s2 = {2, 3, 5}, s3 = {2, 3, 5};
    const size_t a = static_cast<size_t>(axis < 0 ? axis + 3 : axis);
    s2[a] = 1;
    s3[a] = 4;
    const int x = Input(r, s1), y = Input(r, s2), z = Input(r, s3);
    const int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
    r.SetOp(KILN_OP_CONCATENATION, 1, {x, y, z}, {out});
    r.node().SetInt(KILN_OPTION_AXIS, axis);
    ExpectMatchesCpu(r, out);
  }
}

TEST_F(OpenClOpsTest, MeanOverAxesWithAndWithoutKeepDims) {
  const std::vector<std::vector<int32_t>> axes_cases = {
      {1, 2}, {-1}, {0}, {0, 1, 2, 3}};
  for (const auto& axes : axes_cases) {
    for (bool keep : {false, true}) {
      SCOPED_TRACE(testing::Message()
                   << "axes " << axes.size() << " keep " << keep);
      SingleNodeRunner r;
      const int in = Input(r, {2, 5, 3, 7});
      const int axes_t = r.AddTensor<int32_t>(
          KILN_TYPE_INT32, {static_cast<int32_t>(axes.size())}, axes, true);
      const int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
      r.SetOp(KILN_OP_MEAN, 1, {in, axes_t}, {out});
      r.node().SetInt(KILN_OPTION_KEEP_DIMS, keep ? 1 : 0);
      ExpectMatchesCpu(r, out);
    }
  }
}

TEST_F(OpenClOpsTest, PadRank3And4) {
  {
    SingleNodeRunner r;
    const int in = Input(r, {1, 5, 3, 3});
    const int pads = r.AddTensor<int32_t>(
        KILN_TYPE_INT32, {4, 2}, std::vector<int32_t>{0, 0, 1, 2, 2, 0, 0, 1},
        true);
    const int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
    r.SetOp(KILN_OP_PAD, 1, {in, pads}, {out});
    ExpectMatchesCpu(r, out);
  }
  {
    SingleNodeRunner r;
    const int in = Input(r, {2, 3, 5});
    const int pads = r.AddTensor<int32_t>(
        KILN_TYPE_INT32, {3, 2}, std::vector<int32_t>{1, 0, 0, 3, 2, 2}, true);
    const int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
    r.SetOp(KILN_OP_PAD, 1, {in, pads}, {out});
    ExpectMatchesCpu(r, out);
  }
}

}  // namespace
}  // namespace kiln::opencl_test
