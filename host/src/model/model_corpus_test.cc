// Every model of the shared corpus (../shared/models) loads, or is refused
// with the message the corpus README expects; and real facts read from a
// few of them.
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kiln/kiln_builtin_ops.h"
#include "kiln/kiln_extension.h"
#include "model/model.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

#define SKIP_WITHOUT_CORPUS()                                              \
  if (!fs::is_directory(KILN_SHARED_MODELS_DIR)) {                         \
    GTEST_SKIP() << "shared model corpus absent: " KILN_SHARED_MODELS_DIR; \
  }

std::string CorpusPath(const std::string& relative) {
  return std::string(KILN_SHARED_MODELS_DIR) + "/" + relative;
}

std::shared_ptr<const Model> LoadOrDie(const std::string& relative) {
  auto model = Model::FromFile(CorpusPath(relative));
  EXPECT_TRUE(model.ok()) << model.status();
  return model.ok() ? *model : nullptr;
}

int64_t IntOption(const Node& node, uint32_t key) {
  const OptionValue* v = node.FindOption(key);
  EXPECT_NE(v, nullptr) << "option " << key << " missing on " << node.OpName();
  return v ? v->i : -999;
}

// Files Kiln refuses at load, with what the message says: the corpus
// README's broken files, and files LiteRT's loader refuses too.
const std::map<std::string, std::string>& ExpectedRefusals() {
  static const auto* refusals = new std::map<std::string, std::string>{
      {"tflite-testdata/test_model_broken.bin",
       "is not a TFLite model: bytes 4-7 should be the file identifier"},
      {"tflite-testdata/0_subgraphs.bin", "the model has no subgraphs"},
      {"tflite-testdata/no_subgraphs.bin", "the model has no subgraphs"},
      {"quantization-testdata/transpose.bin", "uses TFLite schema version 2"},
      // An unused tensor of shape [-1]; LiteRT's loader refuses both too.
      {"quantization-testdata/lstm_calibrated2.bin",
       "tensor 23 ('output_gate_ln_weights-1'): has invalid dimension -1 in "
       "shape [-1]"},
      {"quantization-testdata/lstm_quantized2.bin",
       "tensor 23 ('output_gate_ln_weights-1'): has invalid dimension -1 in "
       "shape [-1]"},
  };
  return *refusals;
}

TEST(ModelCorpusTest, EveryFileLoadsOrIsRefusedAsExpected) {
  SKIP_WITHOUT_CORPUS();
  int loaded = 0, refused = 0;
  for (const auto& entry :
       fs::recursive_directory_iterator(KILN_SHARED_MODELS_DIR)) {
    if (!entry.is_regular_file() || entry.path().extension() == ".md") continue;
    const std::string relative =
        fs::relative(entry.path(), KILN_SHARED_MODELS_DIR).generic_string();
    SCOPED_TRACE(relative);
    auto model = Model::FromFile(entry.path().string());
    auto expected = ExpectedRefusals().find(relative);
    if (expected == ExpectedRefusals().end()) {
      EXPECT_TRUE(model.ok()) << model.status();
      if (model.ok()) {
        ++loaded;
        EXPECT_EQ((*model)->schema_version(), 3u);
        EXPECT_GE((*model)->num_subgraphs(), 1);
      }
    } else {
      ASSERT_FALSE(model.ok());
      ++refused;
      EXPECT_THAT(model.status().message(), HasSubstr(expected->second));
      EXPECT_THAT(model.status().message(), HasSubstr(relative));
    }
  }
  EXPECT_EQ(refused, static_cast<int>(ExpectedRefusals().size()));
  EXPECT_GE(loaded, 80);
}

TEST(ModelCorpusTest, SchemaVersion2IsRefusedWithAdvice) {
  SKIP_WITHOUT_CORPUS();
  auto model =
      Model::FromFile(CorpusPath("quantization-testdata/transpose.bin"));
  ASSERT_FALSE(model.ok());
  EXPECT_THAT(model.status().message(),
              HasSubstr("Kiln reads only schema version 3"));
  EXPECT_THAT(model.status().message(),
              HasSubstr("Convert the source model again"));
}

TEST(ModelCorpusTest, AddModelHasTwoAddsAndServingSignature) {
  SKIP_WITHOUT_CORPUS();
  auto model = LoadOrDie("tflite-testdata/add.bin");
  ASSERT_TRUE(model);
  const Graph& g = model->graph(0);
  ASSERT_EQ(g.nodes.size(), 2u);
  for (const Node& n : g.nodes) {
    EXPECT_EQ(n.builtin_code, KILN_OP_ADD);
    EXPECT_EQ(n.version, 1);
    EXPECT_EQ(IntOption(n, KILN_OPTION_FUSED_ACTIVATION), KILN_ACTIVATION_NONE);
  }
  EXPECT_EQ(g.execution_plan, (std::vector<int32_t>{0, 1}));
  ASSERT_EQ(model->signatures().size(), 1u);
  EXPECT_EQ(model->signatures()[0].key, "serving_default");
}

TEST(ModelCorpusTest, OpCodeIsMaxOfDeprecatedAndNewField) {
  SKIP_WITHOUT_CORPUS();
  // Written with deprecated_builtin_code 3/32 and builtin_code 0.
  auto model = LoadOrDie("tflite-testdata/test_model_versioned_ops.bin");
  ASSERT_TRUE(model);
  ASSERT_EQ(model->operator_codes().size(), 2u);
  EXPECT_EQ(model->operator_codes()[0].builtin_code, KILN_OP_CONV_2D);
  EXPECT_EQ(model->operator_codes()[0].version, 3);
  EXPECT_EQ(model->operator_codes()[1].builtin_code, KILN_OP_CUSTOM);
  EXPECT_EQ(model->operator_codes()[1].custom_name, "testing_op");
  EXPECT_EQ(model->operator_codes()[1].version, 2);
  const Graph& g = model->graph(0);
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[0].builtin_code, KILN_OP_CONV_2D);
  EXPECT_EQ(g.nodes[0].version, 3);
  EXPECT_EQ(g.nodes[1].OpName(), "CUSTOM 'testing_op'");
  EXPECT_EQ(g.nodes[1].version, 2);
}

TEST(ModelCorpusTest, SignaturesMapByTensorIndexNotInputOrder) {
  SKIP_WITHOUT_CORPUS();
  auto model = LoadOrDie("tflite-testdata/reverse_signature_model.bin");
  ASSERT_TRUE(model);
  ASSERT_EQ(model->signatures().size(), 1u);
  const Signature& sig = model->signatures()[0];
  const Graph& g = model->graph(sig.subgraph_index);
  ASSERT_EQ(sig.inputs.size(), 2u);
  // Signature order x, y; subgraph input order y (0), x (1).
  EXPECT_EQ(sig.inputs[0].name, "x");
  EXPECT_EQ(sig.inputs[0].tensor_index, 1);
  EXPECT_EQ(g.tensors[1].name, "serving_default_x:0");
  EXPECT_EQ(sig.inputs[1].name, "y");
  EXPECT_EQ(g.tensors[0].name, "serving_default_y:0");
  ASSERT_EQ(sig.outputs.size(), 2u);
  EXPECT_EQ(sig.outputs[0].name, "prod");
  EXPECT_EQ(sig.outputs[0].tensor_index, 3);
}

TEST(ModelCorpusTest, MultiSignatureModelHasOneSubgraphPerSignature) {
  SKIP_WITHOUT_CORPUS();
  auto model = LoadOrDie("misc/multi_signature_model.tflite");
  ASSERT_TRUE(model);
  ASSERT_EQ(model->num_subgraphs(), 3);
  const std::vector<std::pair<std::string, int32_t>> expected = {
      {"add", KILN_OP_ADD}, {"mul", KILN_OP_MUL}, {"sub", KILN_OP_SUB}};
  ASSERT_EQ(model->signatures().size(), 3u);
  for (size_t i = 0; i < expected.size(); ++i) {
    const Signature& sig = model->signatures()[i];
    EXPECT_EQ(sig.key, expected[i].first);
    EXPECT_EQ(sig.subgraph_index, static_cast<int32_t>(i));
    const Graph& g = model->graph(sig.subgraph_index);
    ASSERT_EQ(g.nodes.size(), 1u);
    EXPECT_EQ(g.nodes[0].builtin_code, expected[i].second);
    ASSERT_EQ(sig.inputs.size(), 2u);
    EXPECT_EQ(sig.inputs[0].name, "a");
    EXPECT_EQ(g.tensors[sig.inputs[0].tensor_index].name,
              expected[i].first + "_a:0");
  }
}

TEST(ModelCorpusTest, CustomSinhHasCustomOptions) {
  SKIP_WITHOUT_CORPUS();
  auto model = LoadOrDie("tflite-testdata/custom_sinh.bin");
  ASSERT_TRUE(model);
  const Node& node = model->graph(0).nodes.at(0);
  EXPECT_EQ(node.builtin_code, KILN_OP_CUSTOM);
  EXPECT_EQ(node.custom_name, "Sinh");
  ASSERT_NE(node.custom_options, nullptr);
  EXPECT_EQ(node.custom_options_size, 12u);
  // Borrowed from the mapping, not copied.
  EXPECT_GE(node.custom_options, model->bytes());
  EXPECT_LE(node.custom_options + node.custom_options_size,
            model->bytes() + model->byte_size());
}

TEST(ModelCorpusTest, MinRuntimeVersionIsReadWithoutPadding) {
  SKIP_WITHOUT_CORPUS();
  auto model = LoadOrDie("tflite-testdata/test_min_runtime.bin");
  ASSERT_TRUE(model);
  EXPECT_EQ(model->min_runtime_version(), "1.5.0");
  ASSERT_FALSE(model->metadata().empty());
  EXPECT_EQ(model->metadata()[0].name, "min_runtime_version");
  EXPECT_EQ(model->metadata()[0].size, 16u);
}

TEST(ModelCorpusTest, MobilenetLikeOptionsAndConstantsInPlace) {
  SKIP_WITHOUT_CORPUS();
  auto model = LoadOrDie("misc/mobilenet_like_model.bin");
  ASSERT_TRUE(model);
  const Graph& g = model->graph(0);
  ASSERT_EQ(g.nodes.size(), 6u);
  const Node& conv = g.nodes[0];
  EXPECT_EQ(conv.builtin_code, KILN_OP_CONV_2D);
  EXPECT_EQ(IntOption(conv, KILN_OPTION_PADDING), KILN_PADDING_SAME);
  EXPECT_EQ(IntOption(conv, KILN_OPTION_STRIDE_W), 1);
  EXPECT_EQ(IntOption(conv, KILN_OPTION_DILATION_H), 1);
  const Node& dw = g.nodes[1];
  EXPECT_EQ(dw.builtin_code, KILN_OP_DEPTHWISE_CONV_2D);
  EXPECT_EQ(IntOption(dw, KILN_OPTION_PADDING), KILN_PADDING_VALID);
  EXPECT_EQ(IntOption(dw, KILN_OPTION_DEPTH_MULTIPLIER), 1);
  const Node& pool = g.nodes[4];
  EXPECT_EQ(pool.builtin_code, KILN_OP_MAX_POOL_2D);
  EXPECT_EQ(IntOption(pool, KILN_OPTION_FILTER_W), 2);
  EXPECT_EQ(IntOption(pool, KILN_OPTION_FILTER_H), 2);
  const OptionValue* beta = g.nodes[5].FindOption(KILN_OPTION_BETA);
  ASSERT_NE(beta, nullptr);
  EXPECT_FLOAT_EQ(beta->f, 1.0f);
  // Constants are used in place from the read-only mapping (or, if the
  // file misaligns them for their type, from an aligned copy).
  int constants = 0;
  for (const Tensor& t : g.tensors) {
    if (!t.is_constant()) continue;
    ++constants;
    EXPECT_EQ(t.bytes, t.RequiredBytes()) << t.name;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data) % ElementSize(t.type), 0u);
    EXPECT_GE(static_cast<const uint8_t*>(t.data), model->bytes()) << t.name;
    EXPECT_LE(static_cast<const uint8_t*>(t.data) + t.bytes,
              model->bytes() + model->byte_size());
  }
  EXPECT_GT(constants, 0);
}

TEST(ModelCorpusTest, WhileAndCallOnceSubgraphIndices) {
  SKIP_WITHOUT_CORPUS();
  auto model = LoadOrDie("tflite-testdata/multi_subgraphs_while.bin");
  ASSERT_TRUE(model);
  const Node* while_node = nullptr;
  for (const Node& n : model->graph(0).nodes) {
    if (n.builtin_code == KILN_OP_WHILE) while_node = &n;
  }
  ASSERT_NE(while_node, nullptr);
  EXPECT_EQ(IntOption(*while_node, kHostOptionCondSubgraph), 1);
  EXPECT_EQ(IntOption(*while_node, kHostOptionBodySubgraph), 2);

  auto call_once = LoadOrDie("tflite-testdata/call_once_mul.bin");
  ASSERT_TRUE(call_once);
  const Graph& main = call_once->graph(0);
  EXPECT_EQ(main.nodes[0].builtin_code, KILN_OP_CALL_ONCE);
  EXPECT_EQ(IntOption(main.nodes[0], kHostOptionInitSubgraph), 1);
  EXPECT_EQ(main.nodes[1].builtin_code, KILN_OP_VAR_HANDLE);
  const OptionValue* shared = main.nodes[1].FindOption(kHostOptionSharedName);
  ASSERT_NE(shared, nullptr);
  EXPECT_EQ(shared->s, "Variable");
  const OptionValue* container = main.nodes[1].FindOption(kHostOptionContainer);
  ASSERT_NE(container, nullptr);
  EXPECT_EQ(container->s, "");
}

TEST(ModelCorpusTest, DynamicShapesModelKeepsSignatureAndMasks) {
  SKIP_WITHOUT_CORPUS();
  auto model = LoadOrDie("tflite-testdata/dynamic_shapes.bin");
  ASSERT_TRUE(model);
  const Graph& g = model->graph(0);
  EXPECT_EQ(g.tensors[25].name, "StridedSlice2");
  EXPECT_EQ(g.tensors[25].shape, (std::vector<int32_t>{1, 1}));
  EXPECT_EQ(g.tensors[25].shape_signature, (std::vector<int32_t>{-1, -1}));
  const Node& slice = g.nodes[0];
  EXPECT_EQ(slice.builtin_code, KILN_OP_STRIDED_SLICE);
  EXPECT_EQ(IntOption(slice, KILN_OPTION_BEGIN_MASK), 6);
  EXPECT_EQ(IntOption(slice, KILN_OPTION_END_MASK), 6);
  EXPECT_EQ(IntOption(slice, KILN_OPTION_SHRINK_AXIS_MASK), 1);
  EXPECT_EQ(IntOption(slice, KILN_OPTION_OFFSET), 0);
  const OptionValue* alpha = g.nodes[16].FindOption(KILN_OPTION_ALPHA);
  ASSERT_NE(alpha, nullptr);
  EXPECT_FLOAT_EQ(alpha->f, 0.1f);
}

TEST(ModelCorpusTest, SpecialButValidModelsLoad) {
  SKIP_WITHOUT_CORPUS();
  // An operator writes a subgraph input, and operator 1 reads tensor 0,
  // which nothing writes: refused later, at allocation.
  auto shared = LoadOrDie("tflite-testdata/add_shared_tensors.bin");
  ASSERT_TRUE(shared);
  EXPECT_EQ(shared->graph(0).nodes[0].outputs, (std::vector<int32_t>{1}));
  // SEGMENT_SUM reads tensor 2, which nothing writes: fails at prepare or
  // invoke, not at load.
  auto segment = LoadOrDie("tflite-testdata/segment_sum_invalid_buffer.bin");
  ASSERT_TRUE(segment);
  EXPECT_EQ(segment->graph(0).nodes[0].builtin_code, KILN_OP_SEGMENT_SUM);
  // A constant of shape [0]: present, empty data.
  auto zero = LoadOrDie("tflite-testdata/zero_size_constant.bin");
  ASSERT_TRUE(zero);
  EXPECT_TRUE(zero->graph(0).tensors[1].is_constant());
  EXPECT_EQ(zero->graph(0).tensors[1].bytes, 0u);
  // No subgraph inputs, outputs or operators.
  auto empty = LoadOrDie("tflite-testdata/empty_model.bin");
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->graph(0).nodes.empty());
  // Old-style variable tensors (LSTM state) are not constants.
  auto lstm = LoadOrDie("tflite-testdata/lstm.bin");
  ASSERT_TRUE(lstm);
  EXPECT_TRUE(lstm->graph(0).tensors[18].is_variable);
  EXPECT_FALSE(lstm->graph(0).tensors[18].is_constant());
}

TEST(ModelCorpusTest, FromBufferBorrowsCallerBytes) {
  SKIP_WITHOUT_CORPUS();
  std::ifstream in(CorpusPath("misc/mobilenet_like_model.bin"),
                   std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                          std::istreambuf_iterator<char>());
  auto model = Model::FromBuffer(bytes.data(), bytes.size(), "mobilenet");
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ((*model)->source(), "mobilenet");
  EXPECT_EQ((*model)->bytes(), reinterpret_cast<const uint8_t*>(bytes.data()));
}

TEST(ModelCorpusTest, MissingFileNamesPath) {
  auto model = Model::FromFile("/nonexistent/dir/model.tflite");
  ASSERT_FALSE(model.ok());
  EXPECT_THAT(
      model.status().message(),
      HasSubstr("cannot open model file '/nonexistent/dir/model.tflite'"));
}

}  // namespace
}  // namespace kiln
