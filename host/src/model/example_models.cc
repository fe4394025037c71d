#include "model/example_models.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "kiln/kiln_builtin_ops.h"
#include "kiln/kiln_extension.h"
#include "model/model_builder.h"

namespace kiln {
namespace {

// Deterministic pseudo-random floats in [-scale, scale) (a 32-bit LCG).
std::vector<float> Pattern(size_t n, uint32_t seed, float scale) {
  std::vector<float> values(n);
  uint32_t state = seed * 2654435761u + 1u;
  for (float& v : values) {
    state = state * 1664525u + 1013904223u;
    v = (static_cast<float>(state >> 8) / 16777216.0f * 2.0f - 1.0f) * scale;
  }
  return values;
}

TensorSpec Spec(std::string name, KilnTensorType type,
                std::vector<int32_t> shape) {
  TensorSpec spec;
  spec.name = std::move(name);
  spec.type = type;
  spec.shape = std::move(shape);
  return spec;
}

}  // namespace

absl::StatusOr<std::vector<uint8_t>> BuildExampleCnnModel() {
  ModelBuilder builder;
  builder.SetDescription("Kiln example CNN");
  builder.SetMinRuntimeVersion("1.0.0");
  SubgraphBuilder& g = builder.AddSubgraph("main");

  const int32_t image = g.AddTensor(FloatTensor("image", {1, 16, 16, 3}));
  const int32_t conv_w =
      g.AddConstantTensor(FloatTensor("conv/weights", {8, 3, 3, 3}),
                          Pattern(8 * 3 * 3 * 3, 1, 0.5f));
  const int32_t conv_b =
      g.AddConstantTensor(FloatTensor("conv/bias", {8}), Pattern(8, 2, 0.1f));
  const int32_t conv = g.AddTensor(FloatTensor("conv/relu", {1, 16, 16, 8}));
  g.AddOperator(
      KILN_OP_CONV_2D, 1, {image, conv_w, conv_b}, {conv},
      {{KILN_OPTION_PADDING, OptionInt(KILN_PADDING_SAME)},
       {KILN_OPTION_STRIDE_W, OptionInt(1)},
       {KILN_OPTION_STRIDE_H, OptionInt(1)},
       {KILN_OPTION_FUSED_ACTIVATION, OptionInt(KILN_ACTIVATION_RELU)}});

  const int32_t dw_w =
      g.AddConstantTensor(FloatTensor("depthwise/weights", {1, 3, 3, 8}),
                          Pattern(3 * 3 * 8, 3, 0.5f));
  const int32_t dw_b = g.AddConstantTensor(FloatTensor("depthwise/bias", {8}),
                                           Pattern(8, 4, 0.1f));
  const int32_t dw = g.AddTensor(FloatTensor("depthwise", {1, 16, 16, 8}));
  g.AddOperator(
      KILN_OP_DEPTHWISE_CONV_2D, 1, {conv, dw_w, dw_b}, {dw},
      {{KILN_OPTION_PADDING, OptionInt(KILN_PADDING_SAME)},
       {KILN_OPTION_STRIDE_W, OptionInt(1)},
       {KILN_OPTION_STRIDE_H, OptionInt(1)},
       {KILN_OPTION_DEPTH_MULTIPLIER, OptionInt(1)},
       {KILN_OPTION_FUSED_ACTIVATION, OptionInt(KILN_ACTIVATION_NONE)}});

  const int32_t pool = g.AddTensor(FloatTensor("pool", {1, 8, 8, 8}));
  g.AddOperator(
      KILN_OP_MAX_POOL_2D, 1, {dw}, {pool},
      {{KILN_OPTION_PADDING, OptionInt(KILN_PADDING_VALID)},
       {KILN_OPTION_STRIDE_W, OptionInt(2)},
       {KILN_OPTION_STRIDE_H, OptionInt(2)},
       {KILN_OPTION_FILTER_W, OptionInt(2)},
       {KILN_OPTION_FILTER_H, OptionInt(2)},
       {KILN_OPTION_FUSED_ACTIVATION, OptionInt(KILN_ACTIVATION_NONE)}});

  const int32_t fc_w = g.AddConstantTensor(
      FloatTensor("dense/weights", {10, 512}), Pattern(10 * 512, 5, 0.05f));
  const int32_t fc_b = g.AddConstantTensor(FloatTensor("dense/bias", {10}),
                                           Pattern(10, 6, 0.1f));
  const int32_t logits = g.AddTensor(FloatTensor("logits", {1, 10}));
  g.AddOperator(
      KILN_OP_FULLY_CONNECTED, 1, {pool, fc_w, fc_b}, {logits},
      {{KILN_OPTION_FUSED_ACTIVATION, OptionInt(KILN_ACTIVATION_NONE)}});

  const int32_t probabilities =
      g.AddTensor(FloatTensor("probabilities", {1, 10}));
  g.AddOperator(KILN_OP_SOFTMAX, 1, {logits}, {probabilities},
                {{KILN_OPTION_BETA, OptionFloat(1.0f)}});

  g.SetInputs({image});
  g.SetOutputs({probabilities});
  builder.AddSignature("serving_default", 0, {{"image", image}},
                       {{"probabilities", probabilities}});
  return builder.Build();
}

std::vector<float> ExampleCnnInput() {
  std::vector<float> values = Pattern(1 * 16 * 16 * 3, 7, 0.5f);
  for (float& v : values) v += 0.5f;
  return values;
}

absl::StatusOr<std::vector<uint8_t>> BuildLargeWeightsModel(
    uint64_t min_weight_bytes, bool external_data) {
  constexpr int32_t kWidth = 4096;
  constexpr uint64_t kLayerBytes = uint64_t{kWidth} * kWidth * sizeof(float);
  const uint64_t layers =
      std::max<uint64_t>(1, (min_weight_bytes + kLayerBytes - 1) / kLayerBytes);
  ModelBuilder builder;
  builder.set_external_data(external_data);
  builder.SetDescription("Kiln large-weights benchmark model");
  SubgraphBuilder& g = builder.AddSubgraph("main");
  int32_t x = g.AddTensor(FloatTensor("x", {1, kWidth}));
  g.SetInputs({x});
  // One weight pattern, varied per layer only in its first element, keeps
  // generation cheap.
  std::vector<float> weights =
      Pattern(uint64_t{kWidth} * kWidth / 64, 11, 0.01f);
  weights.resize(uint64_t{kWidth} * kWidth);
  for (size_t i = weights.size() / 64; i < weights.size(); ++i) {
    weights[i] = weights[i % (weights.size() / 64)];
  }
  for (uint64_t layer = 0; layer < layers; ++layer) {
    const std::string name = "dense" + std::to_string(layer);
    weights[0] = static_cast<float>(layer);
    const int32_t w = g.AddConstantTensor(
        FloatTensor(name + "/weights", {kWidth, kWidth}), weights);
    const int32_t y = g.AddTensor(FloatTensor(name, {1, kWidth}));
    g.AddOperator(
        KILN_OP_FULLY_CONNECTED, 1, {x, w, -1}, {y},
        {{KILN_OPTION_FUSED_ACTIVATION, OptionInt(KILN_ACTIVATION_RELU)}});
    x = y;
  }
  g.SetOutputs({x});
  return builder.Build();
}

absl::StatusOr<std::vector<uint8_t>> BuildWhileLoopModel(bool forever) {
  ModelBuilder b;
  const TensorSpec flag = Spec("b", KILN_TYPE_BOOL, {1});
  SubgraphBuilder& g = b.AddSubgraph("main");
  const int32_t in = g.AddTensor(flag);
  TensorSpec out_spec = flag;
  out_spec.name = "b_out";
  const int32_t out = g.AddTensor(out_spec);
  g.AddOperator(KILN_OP_WHILE, 1, {in}, {out},
                {{kHostOptionCondSubgraph, OptionInt(1)},
                 {kHostOptionBodySubgraph, OptionInt(2)}});
  g.SetInputs({in});
  g.SetOutputs({out});
  for (const std::string name : {"cond", "body"}) {
    SubgraphBuilder& s = b.AddSubgraph(name);
    const int32_t t = s.AddTensor(flag);
    s.SetInputs({t});
    if (forever && name == "cond") {
      TensorSpec true_spec = flag;
      true_spec.name = "true";
      s.SetOutputs({s.AddConstantTensor(true_spec, std::vector<uint8_t>{1})});
    } else {
      s.SetOutputs({t});
    }
  }
  return b.Build();
}

absl::StatusOr<std::vector<uint8_t>> BuildCountingWhileModel() {
  const auto int32_1 = [](std::string name) {
    return Spec(std::move(name), KILN_TYPE_INT32, {1});
  };
  ModelBuilder b;
  SubgraphBuilder& g = b.AddSubgraph("main");
  const int32_t i = g.AddTensor(int32_1("i"));
  const int32_t n = g.AddTensor(int32_1("n"));
  const int32_t i_out = g.AddTensor(int32_1("i_out"));
  const int32_t n_out = g.AddTensor(int32_1("n_out"));
  g.AddOperator(KILN_OP_WHILE, 1, {i, n}, {i_out, n_out},
                {{kHostOptionCondSubgraph, OptionInt(1)},
                 {kHostOptionBodySubgraph, OptionInt(2)}});
  g.SetInputs({i, n});
  g.SetOutputs({i_out, n_out});
  SubgraphBuilder& cond = b.AddSubgraph("cond");
  const int32_t ci = cond.AddTensor(int32_1("i"));
  const int32_t cn = cond.AddTensor(int32_1("n"));
  const int32_t less = cond.AddTensor(Spec("less", KILN_TYPE_BOOL, {1}));
  cond.AddOperator(KILN_OP_LESS, 1, {ci, cn}, {less});
  cond.SetInputs({ci, cn});
  cond.SetOutputs({less});
  SubgraphBuilder& body = b.AddSubgraph("body");
  const int32_t bi = body.AddTensor(int32_1("i"));
  const int32_t bn = body.AddTensor(int32_1("n"));
  const int32_t one =
      body.AddConstantTensor(int32_1("one"), std::vector<int32_t>{1});
  const int32_t next = body.AddTensor(int32_1("next"));
  body.AddOperator(KILN_OP_ADD, 1, {bi, one}, {next});
  body.SetInputs({bi, bn});
  body.SetOutputs({next, bn});
  return b.Build();
}

}  // namespace kiln
