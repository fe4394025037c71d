// CPU plugin LSTM: the recurrent state carries over from one invoke to the
// next (the variable tensors), cell clipping, and clean refusals. Expected
// values are LiteRT's (reference and optimized kernels agree on them) for
// the same node invoked repeatedly with the same input; the option and
// layout variants against LiteRT are in lstm_vs_litert.py.
#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/graph.h"
#include "runtime/single_node_runner.h"
#include "tests/cpu_kernel_test_util.h"

namespace kiln {
namespace {

using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::HasSubstr;

// The tensors of BuildLstm's node.
struct LstmNode {
  int input, output_state, cell_state, output;
};

// A 2-input, 2-cell LSTM with peephole connections and no projection,
// batch 1, zero initial states; `weight_type` INT8 makes the weight
// matrices int8 (a hybrid LSTM).
LstmNode BuildLstm(SingleNodeRunner& r, KilnTensorType weight_type,
                   bool constant_state) {
  auto w = [&](std::vector<float> v, std::vector<int32_t> shape) {
    if (weight_type == KILN_TYPE_INT8) {
      return r.AddTensor<int8_t>(KILN_TYPE_INT8, shape,
                                 std::vector<int8_t>(v.size(), 1), true);
    }
    return r.AddTensor<float>(KILN_TYPE_FLOAT32, shape, v, true);
  };
  LstmNode n;
  n.input = r.AddTensor<float>(KILN_TYPE_FLOAT32, {1, 2}, {0.8f, -0.6f});
  const std::vector<int32_t> m = {2, 2}, v = {2};
  std::vector<int32_t> in = {n.input};
  for (const auto& values :
       std::vector<std::vector<float>>{{0.1f, -0.2f, 0.3f, 0.4f},
                                       {-0.5f, 0.6f, 0.7f, -0.1f},
                                       {0.2f, 0.2f, -0.3f, 0.5f},
                                       {0.4f, -0.4f, 0.1f, 0.9f},
                                       {0.3f, 0.1f, -0.2f, 0.6f},
                                       {0.5f, -0.3f, 0.2f, 0.1f},
                                       {-0.6f, 0.4f, 0.8f, -0.7f},
                                       {0.1f, 0.2f, 0.3f, -0.4f}}) {
    in.push_back(w(values, m));
  }
  for (const auto& values : std::vector<std::vector<float>>{{0.5f, -0.5f},
                                                            {0.25f, 0.75f},
                                                            {-0.3f, 0.2f},
                                                            {0.1f, -0.1f},
                                                            {1.0f, 0.5f},
                                                            {0.0f, -0.2f},
                                                            {0.3f, 0.05f}}) {
    in.push_back(r.AddTensor<float>(KILN_TYPE_FLOAT32, v, values, true));
  }
  in.push_back(-1);  // projection weights
  in.push_back(-1);  // projection bias
  n.output_state =
      r.AddTensor<float>(KILN_TYPE_FLOAT32, {1, 2}, {0.f, 0.f}, constant_state);
  n.cell_state =
      r.AddTensor<float>(KILN_TYPE_FLOAT32, {1, 2}, {0.f, 0.f}, constant_state);
  in.push_back(n.output_state);
  in.push_back(n.cell_state);
  n.output = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_LSTM, 1, in, {n.output});
  r.node().SetInt(KILN_OPTION_FUSED_ACTIVATION, KILN_ACTIVATION_TANH);
  r.node().SetFloat(KILN_OPTION_CELL_CLIP, 0.f);
  r.node().SetFloat(KILN_OPTION_PROJ_CLIP, 0.f);
  r.node().SetInt(KILN_OPTION_LSTM_KERNEL_TYPE, 0);
  return n;
}

constexpr float kTol = 1e-6f;

TEST_F(CpuKernelTest, LstmStateCarriesOverInvokes) {
  {
    SingleNodeRunner r;
    const LstmNode n = BuildLstm(r, KILN_TYPE_FLOAT32, false);
    ASSERT_TRUE(r.Run(Kernel(KILN_OP_LSTM)).ok());
    EXPECT_THAT(r.tensor(n.output).shape, ElementsAre(1, 2));
    EXPECT_THAT(r.Values<float>(n.output),
                ElementsAre(FloatNear(0.016100991f, kTol),
                            FloatNear(-0.11165682f, kTol)));
  }
  SingleNodeRunner r;
  const LstmNode n = BuildLstm(r, KILN_TYPE_FLOAT32, false);
  ASSERT_TRUE(r.RunRepeated(Kernel(KILN_OP_LSTM), 3).ok());
  EXPECT_THAT(r.Values<float>(n.output),
              ElementsAre(FloatNear(-0.011127128f, kTol),
                          FloatNear(-0.21116079f, kTol)));
  // The states hold the last step's values (output state = output).
  EXPECT_THAT(r.Values<float>(n.output_state),
              ElementsAre(FloatNear(-0.011127128f, kTol),
                          FloatNear(-0.21116079f, kTol)));
  EXPECT_THAT(r.Values<float>(n.cell_state),
              ElementsAre(FloatNear(-0.015981892f, kTol),
                          FloatNear(-0.61246562f, kTol)));
}

TEST_F(CpuKernelTest, LstmClipsTheCell) {
  SingleNodeRunner r;
  const LstmNode n = BuildLstm(r, KILN_TYPE_FLOAT32, false);
  r.node().SetFloat(KILN_OPTION_CELL_CLIP, 0.05f);
  ASSERT_TRUE(r.RunRepeated(Kernel(KILN_OP_LSTM), 3).ok());
  EXPECT_THAT(r.Values<float>(n.output),
              ElementsAre(FloatNear(0.018812349f, kTol),
                          FloatNear(-0.019970110f, kTol)));
  EXPECT_THAT(r.Values<float>(n.cell_state),
              ElementsAre(FloatNear(0.026861377f, kTol), FloatNear(-0.05f, 0)));
}

TEST_F(CpuKernelTest, LstmRefusals) {
  const auto refusal = [&](auto edit) {
    SingleNodeRunner r;
    BuildLstm(r, KILN_TYPE_FLOAT32, false);
    edit(r);
    const absl::Status s = r.Run(Kernel(KILN_OP_LSTM));
    EXPECT_FALSE(s.ok());
    return std::string(s.message());
  };
  // A host that does not serve the 1.3 options (the node lacks them).
  EXPECT_THAT(refusal([](SingleNodeRunner& r) {
                r.node().options.clear();
                r.node().SetInt(KILN_OPTION_FUSED_ACTIVATION,
                                KILN_ACTIVATION_TANH);
              }),
              HasSubstr("extension API 1.3"));
  EXPECT_THAT(refusal([](SingleNodeRunner& r) {
                r.node().SetInt(KILN_OPTION_LSTM_KERNEL_TYPE, 1);
              }),
              HasSubstr("BASIC kernel type"));
  EXPECT_THAT(refusal([](SingleNodeRunner& r) {
                r.node().SetFloat(KILN_OPTION_CELL_CLIP, -1.f);
              }),
              HasSubstr("must be >= 0"));
  EXPECT_THAT(refusal([](SingleNodeRunner& r) {
                r.node().SetInt(KILN_OPTION_FUSED_ACTIVATION,
                                KILN_ACTIVATION_NONE);
              }),
              HasSubstr("fused activation NONE is not supported"));
  // Only the forget gate's weights of the input gate trio: not CIFG.
  EXPECT_THAT(refusal([](SingleNodeRunner& r) { r.node().inputs[1] = -1; }),
              HasSubstr("all present or all omitted"));
  {
    // int8 weights (hybrid) without a scale.
    SingleNodeRunner r;
    BuildLstm(r, KILN_TYPE_INT8, false);
    const absl::Status s = r.Run(Kernel(KILN_OP_LSTM, 3));
    EXPECT_THAT(std::string(s.message()),
                HasSubstr("INT8 but no quantization parameters"));
  }
  {
    // An int8 input (the full-integer form) with float32 weights.
    SingleNodeRunner r;
    const LstmNode n = BuildLstm(r, KILN_TYPE_FLOAT32, false);
    r.tensor(n.input).type_override = KILN_TYPE_INT8;
    const absl::Status s = r.Run(Kernel(KILN_OP_LSTM));
    EXPECT_THAT(std::string(s.message()),
                HasSubstr("an int8 input needs int8 weights"));
  }
  {
    SingleNodeRunner r;
    BuildLstm(r, KILN_TYPE_FLOAT32, true);
    const absl::Status s = r.Run(Kernel(KILN_OP_LSTM));
    EXPECT_THAT(std::string(s.message()), HasSubstr("variable tensor"));
  }
}

TEST_F(CpuKernelTest, LstmDeclaresTheFloatHybridAndIntegerVersions) {
  EXPECT_TRUE(Covers(KILN_OP_LSTM, 1));
  // FULL kernel (float or full integer); BASIC is refused in prepare.
  EXPECT_TRUE(Covers(KILN_OP_LSTM, 2));
  EXPECT_TRUE(Covers(KILN_OP_LSTM, 3));   // hybrid
  EXPECT_TRUE(Covers(KILN_OP_LSTM, 4));   // hybrid, asymmetric inputs
  EXPECT_FALSE(Covers(KILN_OP_LSTM, 5));  // int16x8
  for (int v = 1; v <= 3; ++v) {
    EXPECT_TRUE(Covers(KILN_OP_UNIDIRECTIONAL_SEQUENCE_LSTM, v));
  }
  EXPECT_FALSE(Covers(KILN_OP_UNIDIRECTIONAL_SEQUENCE_LSTM, 4));  // diagonal
}

}  // namespace
}  // namespace kiln
