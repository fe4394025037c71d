// Builder round trips: build -> load -> the same graph, options, constants.
#include "model/model_builder.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kiln/kiln_builtin_ops.h"
#include "kiln/kiln_extension.h"
#include "model/example_models.h"
#include "model/model.h"
#include "model/op_options.h"
#include "schema/kiln_model_generated.h"

namespace kiln {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::shared_ptr<const Model> Load(const std::vector<uint8_t>& bytes) {
  auto model = Model::FromBuffer(bytes.data(), bytes.size(), "built");
  EXPECT_TRUE(model.ok()) << model.status();
  return model.ok() ? *model : nullptr;
}

// A distinct non-default value for every option field.
OptionValue SampleValue(const OptionField& field, int salt) {
  switch (field.type) {
    case OptionFieldType::kBool:
      return OptionInt(field.default_value != 0 ? 0 : 1);
    case OptionFieldType::kInt8:
      return OptionInt(2 + salt % 3);
    case OptionFieldType::kInt32:
      return OptionInt(field.key >= kHostOptionBase ? 1 : 5 + salt);
    case OptionFieldType::kFloat:
      return OptionFloat(0.25f + static_cast<float>(salt));
    case OptionFieldType::kInt32Vector:
      return OptionIntArray({1, -1, salt});
    case OptionFieldType::kString:
      return OptionString("name" + std::to_string(salt));
  }
  return OptionInt(0);
}

void ExpectSameValue(const OptionValue& a, const OptionValue& b) {
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.i, b.i);
  EXPECT_EQ(a.f, b.f);
  EXPECT_EQ(a.array, b.array);
  EXPECT_EQ(a.s, b.s);
}

TEST(ModelBuilderTest, EveryMappedOptionRoundTrips) {
  for (const OpOptionsLayout& layout : AllOpOptionsLayouts()) {
    SCOPED_TRACE(BuiltinOpName(layout.builtin_code));
    ModelBuilder builder;
    SubgraphBuilder& g = builder.AddSubgraph("main");
    builder.AddSubgraph("callee");  // target of control-flow options (1)
    const int32_t x = g.AddTensor(FloatTensor("x", {1}));
    const int32_t y = g.AddTensor(FloatTensor("y", {1}));
    OptionList options;
    int salt = 0;
    for (const OptionField& f : layout.fields) {
      options.emplace_back(f.key, SampleValue(f, salt++));
    }
    g.AddOperator(layout.builtin_code, 2, {x}, {y}, options);
    g.SetInputs({x});
    g.SetOutputs({y});
    absl::StatusOr<std::vector<uint8_t>> bytes = builder.Build();
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    auto model = Load(*bytes);
    ASSERT_TRUE(model);
    const Node& node = model->graph(0).nodes.at(0);
    EXPECT_EQ(node.builtin_code, layout.builtin_code);
    EXPECT_EQ(node.version, 2);
    ASSERT_EQ(node.options.size(), options.size());
    for (const auto& [key, value] : options) {
      SCOPED_TRACE(OptionKeyName(key));
      const OptionValue* read = node.FindOption(key);
      ASSERT_NE(read, nullptr);
      ExpectSameValue(*read, value);
    }
  }
}

TEST(ModelBuilderTest, AbsentOptionsReadAsSchemaDefaults) {
  ModelBuilder builder;
  SubgraphBuilder& g = builder.AddSubgraph("main");
  const int32_t x = g.AddTensor(FloatTensor("x", {1, 4, 4, 1}));
  const int32_t w = g.AddConstantTensor(FloatTensor("w", {1, 1, 1, 1}),
                                        std::vector<float>{2});
  const int32_t y = g.AddTensor(FloatTensor("y", {1, 4, 4, 1}));
  const int32_t z = g.AddTensor(FloatTensor("z", {1, 4, 4, 1}));
  g.AddOperator(KILN_OP_CONV_2D, 1, {x, w, -1}, {y});
  g.AddOperator(KILN_OP_SUB, 1, {y, x}, {z});
  g.SetInputs({x});
  g.SetOutputs({z});
  absl::StatusOr<std::vector<uint8_t>> bytes = builder.Build();
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  auto model = Load(*bytes);
  ASSERT_TRUE(model);
  const Node& conv = model->graph(0).nodes[0];
  EXPECT_EQ(conv.inputs, (std::vector<int32_t>{0, 1, -1}));
  EXPECT_EQ(conv.FindOption(KILN_OPTION_DILATION_W)->i, 1);
  EXPECT_EQ(conv.FindOption(KILN_OPTION_STRIDE_W)->i, 0);
  EXPECT_EQ(conv.FindOption(KILN_OPTION_PADDING)->i, KILN_PADDING_SAME);
  const Node& sub = model->graph(0).nodes[1];
  EXPECT_EQ(sub.FindOption(KILN_OPTION_POT_SCALE_INT16)->i, 1);
  // Array options are set only when written.
  EXPECT_EQ(sub.FindOption(KILN_OPTION_NEW_SHAPE), nullptr);
}

TEST(ModelBuilderTest, ExampleCnnRoundTrips) {
  absl::StatusOr<std::vector<uint8_t>> bytes = BuildExampleCnnModel();
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  absl::StatusOr<std::vector<uint8_t>> again = BuildExampleCnnModel();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*bytes, *again) << "the example model must be deterministic";
  auto model = Load(*bytes);
  ASSERT_TRUE(model);
  EXPECT_EQ(model->description(), "Kiln example CNN");
  EXPECT_EQ(model->min_runtime_version(), "1.0.0");
  const Graph& g = model->graph(0);
  std::vector<int32_t> ops;
  for (const Node& n : g.nodes) ops.push_back(n.builtin_code);
  EXPECT_THAT(ops, ElementsAre(KILN_OP_CONV_2D, KILN_OP_DEPTHWISE_CONV_2D,
                               KILN_OP_MAX_POOL_2D, KILN_OP_FULLY_CONNECTED,
                               KILN_OP_SOFTMAX));
  EXPECT_EQ(g.nodes[0].FindOption(KILN_OPTION_FUSED_ACTIVATION)->i,
            KILN_ACTIVATION_RELU);
  EXPECT_EQ(g.nodes[2].FindOption(KILN_OPTION_STRIDE_H)->i, 2);
  EXPECT_EQ(g.nodes[4].FindOption(KILN_OPTION_BETA)->f, 1.0f);
  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.tensors[g.inputs[0]].shape, (std::vector<int32_t>{1, 16, 16, 3}));
  ASSERT_EQ(g.outputs.size(), 1u);
  EXPECT_EQ(g.tensors[g.outputs[0]].name, "probabilities");
  EXPECT_EQ(g.tensors[g.outputs[0]].shape, (std::vector<int32_t>{1, 10}));
  ASSERT_EQ(model->signatures().size(), 1u);
  EXPECT_EQ(model->signatures()[0].outputs[0].tensor_index, g.outputs[0]);
  for (const Tensor& t : g.tensors) {
    if (!t.is_constant()) continue;
    EXPECT_EQ(t.bytes, t.RequiredBytes()) << t.name;
    // 16-byte aligned within the file.
    EXPECT_EQ((static_cast<const uint8_t*>(t.data) - model->bytes()) % 16, 0)
        << t.name;
  }
  EXPECT_EQ(ExampleCnnInput().size(), 16u * 16u * 3u);
}

TEST(ModelBuilderTest, TensorsSubgraphsSignaturesAndMetadataRoundTrip) {
  ModelBuilder builder;
  builder.SetDescription("round trip");
  builder.SetMinRuntimeVersion("2.14.0");
  builder.AddMetadata("extra", {1, 2, 3});
  SubgraphBuilder& main = builder.AddSubgraph("main");
  SubgraphBuilder& second = builder.AddSubgraph("second");

  TensorSpec in = FloatTensor("in", {1, 3});
  in.shape_signature = {-1, 3};
  const int32_t a = main.AddTensor(in);
  TensorSpec quant = FloatTensor("q", {2, 3});
  quant.type = KILN_TYPE_INT8;
  quant.quantization.scales = {0.5f, 0.25f, 0.125f};
  quant.quantization.zero_points = {1, 2, 3};
  quant.quantization.quantized_dimension = 1;
  const std::vector<int8_t> q_values = {1, -2, 3, -4, 5, -6};
  const int32_t q = main.AddConstantTensor(quant, q_values);
  const int32_t shared = main.AddTensorSharingData(quant, q);
  TensorSpec var = FloatTensor("state", {1, 3});
  var.is_variable = true;
  const int32_t state = main.AddTensor(var);
  TensorSpec unknown = FloatTensor("unknown_rank", {});
  unknown.has_rank = false;
  const int32_t out = main.AddTensor(unknown);
  main.AddOperator(
      KILN_OP_ADD, 3, {a, state}, {out},
      {{KILN_OPTION_FUSED_ACTIVATION, OptionInt(KILN_ACTIVATION_RELU6)}});
  main.AddCustomOperator("MyCustom", 4, {out, q, shared}, {},
                         {0xde, 0xad, 0xbe, 0xef});
  main.SetInputs({a});
  main.SetOutputs({out});

  const int32_t sx = second.AddTensor(FloatTensor("sx", {}));
  const int32_t sy = second.AddTensor(FloatTensor("sy", {}));
  second.AddOperator(KILN_OP_GELU, 1, {sx}, {sy});  // code > 127
  second.SetInputs({sx});
  second.SetOutputs({sy});
  builder.AddSignature("run", 0, {{"input", a}}, {{"output", out}});
  builder.AddSignature("gelu", 1, {{"x", sx}}, {{"y", sy}});

  absl::StatusOr<std::vector<uint8_t>> bytes = builder.Build();
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  auto model = Load(*bytes);
  ASSERT_TRUE(model);
  EXPECT_EQ(model->description(), "round trip");
  EXPECT_EQ(model->min_runtime_version(), "2.14.0");
  ASSERT_EQ(model->metadata().size(), 2u);
  EXPECT_EQ(model->metadata()[1].name, "extra");
  ASSERT_EQ(model->metadata()[1].size, 3u);
  EXPECT_EQ(model->metadata()[1].data[2], 3);

  ASSERT_EQ(model->num_subgraphs(), 2);
  const Graph& g = model->graph(0);
  EXPECT_EQ(g.name, "main");
  EXPECT_EQ(g.tensors[a].shape_signature, (std::vector<int32_t>{-1, 3}));
  EXPECT_TRUE(g.tensors[a].has_rank);
  const Tensor& qt = g.tensors[q];
  EXPECT_TRUE(qt.is_constant());
  EXPECT_EQ(qt.type, KILN_TYPE_INT8);
  EXPECT_EQ(qt.quantization.scales, quant.quantization.scales);
  EXPECT_EQ(qt.quantization.zero_points, quant.quantization.zero_points);
  EXPECT_EQ(qt.quantization.quantized_dimension, 1);
  ASSERT_EQ(qt.bytes, 6u);
  EXPECT_EQ(std::memcmp(qt.data, q_values.data(), 6), 0);
  EXPECT_EQ(g.tensors[shared].data, qt.data);
  EXPECT_TRUE(g.tensors[state].is_variable);
  EXPECT_FALSE(g.tensors[state].is_constant());
  EXPECT_FALSE(g.tensors[out].has_rank);
  EXPECT_FALSE(g.tensors[a].quantization.quantized());

  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[0].version, 3);
  EXPECT_EQ(g.nodes[0].FindOption(KILN_OPTION_FUSED_ACTIVATION)->i,
            KILN_ACTIVATION_RELU6);
  EXPECT_EQ(g.nodes[1].OpName(), "CUSTOM 'MyCustom'");
  EXPECT_EQ(g.nodes[1].version, 4);
  ASSERT_EQ(g.nodes[1].custom_options_size, 4u);
  EXPECT_EQ(g.nodes[1].custom_options[3], 0xef);

  const Graph& g1 = model->graph(1);
  EXPECT_EQ(g1.nodes[0].builtin_code, KILN_OP_GELU);
  EXPECT_TRUE(g1.tensors[sx].has_rank);  // scalar: has_rank written
  EXPECT_TRUE(g1.tensors[sx].shape.empty());
  // Codes > 127 keep 127 in the deprecated int8 field for old readers.
  const fb::Model* raw = fb::GetModel(bytes->data());
  bool found_gelu = false;
  for (const fb::OperatorCode* c : *raw->operator_codes()) {
    if (c->builtin_code() == KILN_OP_GELU) {
      found_gelu = true;
      EXPECT_EQ(c->deprecated_builtin_code(), 127);
    } else {
      EXPECT_EQ(c->deprecated_builtin_code(), c->builtin_code());
    }
  }
  EXPECT_TRUE(found_gelu);

  ASSERT_EQ(model->signatures().size(), 2u);
  EXPECT_EQ(model->signatures()[1].key, "gelu");
  EXPECT_EQ(model->signatures()[1].subgraph_index, 1);
  EXPECT_EQ(model->signatures()[1].inputs[0].name, "x");
  EXPECT_EQ(model->signatures()[1].outputs[0].tensor_index, sy);
}

TEST(ModelBuilderTest, ExternalDataRoundTrips) {
  ModelBuilder builder;
  builder.set_external_data(true);
  SubgraphBuilder& g = builder.AddSubgraph("main");
  std::vector<float> values(1000);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<float>(i) * 0.5f;
  const int32_t w = g.AddConstantTensor(FloatTensor("w", {10, 100}), values);
  const int32_t z =
      g.AddConstantTensor(FloatTensor("empty", {0}), std::vector<float>{});
  g.SetOutputs({w, z});
  absl::StatusOr<std::vector<uint8_t>> bytes = builder.Build();
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  auto model = Load(*bytes);
  ASSERT_TRUE(model);
  const Tensor& t = model->graph(0).tensors[w];
  ASSERT_TRUE(t.is_constant());
  ASSERT_EQ(t.bytes, 4000u);
  EXPECT_EQ(std::memcmp(t.data, values.data(), 4000), 0);
  const size_t offset = static_cast<const uint8_t*>(t.data) - bytes->data();
  EXPECT_EQ(offset % 16, 0u);
  EXPECT_EQ(offset + 4000, bytes->size());  // after the FlatBuffer
  const fb::Model* raw = fb::GetModel(bytes->data());
  EXPECT_EQ(raw->buffers()->Get(1)->data(), nullptr);
  EXPECT_EQ(raw->buffers()->Get(1)->offset(), offset);
  EXPECT_TRUE(model->graph(0).tensors[z].is_constant());
  EXPECT_EQ(model->graph(0).tensors[z].bytes, 0u);
}

TEST(ModelBuilderTest, WriteToFileThenMapUsesWeightsInPlace) {
  const std::string path = std::string(KILN_BINARY_DIR) +
                           "/model_builder_test_" + std::to_string(getpid()) +
                           ".tflite";
  ModelBuilder builder;
  SubgraphBuilder& g = builder.AddSubgraph("main");
  const int32_t w = g.AddConstantTensor(FloatTensor("w", {4}),
                                        std::vector<float>{1, 2, 3, 4});
  g.SetOutputs({w});
  ASSERT_TRUE(builder.WriteToFile(path).ok());
  auto model = Model::FromFile(path);
  std::remove(path.c_str());  // the mapping stays valid
  ASSERT_TRUE(model.ok()) << model.status();
  const Tensor& t = (*model)->graph(0).tensors[w];
  EXPECT_EQ((*model)->source(), path);
  EXPECT_GE(static_cast<const uint8_t*>(t.data), (*model)->bytes());
  EXPECT_LT(static_cast<const uint8_t*>(t.data),
            (*model)->bytes() + (*model)->byte_size());
  EXPECT_EQ(static_cast<const float*>(t.data)[3], 4.0f);
}

// A constant with TensorSpec.sparsity is written as Tensor.sparsity with
// the compressed values; the loader densifies it back (the hand-computed
// matrix of sparsity_test.cc's CsrRowsDensify).
TEST(ModelBuilderTest, SparseConstantRoundTripsDense) {
  ModelBuilder builder;
  SubgraphBuilder& g = builder.AddSubgraph("main");
  TensorSpec spec = FloatTensor("w", {4, 4});
  spec.sparsity.traversal_order = {0, 1};
  SparsitySpec::Level rows, cols;
  rows.dense_size = 4;
  cols.compressed = true;
  cols.segments = {0, 2, 2, 3, 5};
  cols.indices = {0, 2, 1, 0, 3};
  spec.sparsity.levels = {rows, cols};
  const int32_t w =
      g.AddConstantTensor(spec, std::vector<float>{1, 2, 3, 4, 5});
  const int32_t out = g.AddTensor(FloatTensor("out", {4, 4}));
  g.AddOperator(KILN_OP_DENSIFY, 1, {w}, {out});
  g.SetOutputs({out});
  absl::StatusOr<std::vector<uint8_t>> bytes = builder.Build();
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  std::shared_ptr<const Model> model = Load(*bytes);
  ASSERT_NE(model, nullptr);
  const Tensor& t = model->graph(0).tensors[static_cast<size_t>(w)];
  std::vector<float> dense(t.bytes / sizeof(float));
  std::memcpy(dense.data(), t.data, t.bytes);
  EXPECT_THAT(dense,
              ElementsAre(1, 0, 2, 0, 0, 0, 0, 0, 0, 3, 0, 0, 4, 0, 0, 5));
}

TEST(ModelBuilderTest, LargeWeightsModelLoads) {
  absl::StatusOr<std::vector<uint8_t>> bytes = BuildLargeWeightsModel(1, true);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_GE(bytes->size(), 64u << 20);
  auto model = Load(*bytes);
  ASSERT_TRUE(model);
  const Graph& g = model->graph(0);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].builtin_code, KILN_OP_FULLY_CONNECTED);
  EXPECT_EQ(g.nodes[0].inputs[2], -1);
  EXPECT_EQ(g.tensors[g.nodes[0].inputs[1]].bytes, 64u << 20);
}

TEST(ModelBuilderTest, BuildReportsOptionMistakes) {
  auto build_with = [](int32_t code, OptionList options) {
    ModelBuilder builder;
    SubgraphBuilder& g = builder.AddSubgraph("main");
    const int32_t x = g.AddTensor(FloatTensor("x", {1}));
    const int32_t y = g.AddTensor(FloatTensor("y", {1}));
    g.AddOperator(code, 1, {x}, {y}, std::move(options));
    g.SetInputs({x});
    g.SetOutputs({y});
    return builder.Build().status();
  };
  EXPECT_THAT(
      build_with(KILN_OP_ADD, {{KILN_OPTION_BETA, OptionFloat(1)}}).message(),
      HasSubstr("subgraph 0, operator 0 (ADD): option KILN_OPTION_BETA "
                "(key 13) does not exist for ADD (AddOptions)"));
  EXPECT_THAT(
      build_with(KILN_OP_SOFTMAX, {{KILN_OPTION_BETA, OptionInt(1)}}).message(),
      HasSubstr("option KILN_OPTION_BETA of SOFTMAX needs a float value, "
                "got a integer"));
  EXPECT_THAT(
      build_with(KILN_OP_CONV_2D, {{KILN_OPTION_PADDING, OptionInt(300)}})
          .message(),
      HasSubstr("option KILN_OPTION_PADDING of CONV_2D is 300, outside the "
                "field's range [-128, 127]"));
  EXPECT_THAT(
      build_with(KILN_OP_RELU, {{KILN_OPTION_AXIS, OptionInt(1)}}).message(),
      HasSubstr("Kiln maps no options for this op"));
}

TEST(ModelBuilderTest, BuildRunsTheLoaderChecks) {
  ModelBuilder builder;
  SubgraphBuilder& g = builder.AddSubgraph("main");
  const int32_t y = g.AddTensor(FloatTensor("y", {1}));
  g.SetOutputs({y});
  EXPECT_THAT(
      builder.Build().status().message(),
      HasSubstr("<built model>: subgraph 0 ('main'): output 0 is tensor "
                "0 ('y'), which no operator writes"));
  EXPECT_TRUE(builder.BuildUnchecked().ok());
}

TEST(ModelBuilderTest, MinRuntimeVersionMustFitSixteenBytes) {
  ModelBuilder builder;
  builder.AddSubgraph();
  builder.SetMinRuntimeVersion("1234567890.123456");
  EXPECT_THAT(builder.Build().status().message(),
              HasSubstr("at most 15 fit the 16-byte field"));
}

}  // namespace
}  // namespace kiln
