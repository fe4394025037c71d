// Models Kiln must refuse, each with its specific message; and corrupted
// bytes that must be refused cleanly (never a crash).
#include "model/model_checks.h"

#include <sys/stat.h>

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
#include "model/model_builder.h"
#include "schema/kiln_model_generated.h"

namespace kiln {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

absl::Status LoadStatus(const std::vector<uint8_t>& bytes,
                        const std::string& label = "test.tflite") {
  return Model::FromBuffer(bytes.data(), bytes.size(), label).status();
}

std::vector<uint8_t> Unchecked(const ModelBuilder& builder) {
  absl::StatusOr<std::vector<uint8_t>> bytes = builder.BuildUnchecked();
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  return bytes.ok() ? *bytes : std::vector<uint8_t>();
}

// x, y -> ADD -> z, all [1,4].
std::vector<uint8_t> ValidAddModel() {
  ModelBuilder builder;
  SubgraphBuilder& g = builder.AddSubgraph("main");
  const int32_t x = g.AddTensor(FloatTensor("x", {1, 4}));
  const int32_t y = g.AddTensor(FloatTensor("y", {1, 4}));
  const int32_t z = g.AddTensor(FloatTensor("z", {1, 4}));
  g.AddOperator(KILN_OP_ADD, 1, {x, y}, {z});
  g.SetInputs({x, y});
  g.SetOutputs({z});
  return Unchecked(builder);
}

// One ADD over three [1] tensors written with the raw schema API, for
// defects the builder cannot express.
struct RawModelOptions {
  uint32_t version = 3;
  uint32_t tensor0_buffer = 0;
  uint32_t opcode_index = 0;
  bool conv_options_on_add = false;
};
std::vector<uint8_t> RawAddModel(const RawModelOptions& o) {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<fb::Buffer>> buffers = {
      fb::CreateBuffer(fbb)};
  std::vector<flatbuffers::Offset<fb::OperatorCode>> codes = {
      fb::CreateOperatorCode(fbb, 0, 0, 1, KILN_OP_ADD)};
  std::vector<flatbuffers::Offset<fb::Tensor>> tensors;
  for (int i = 0; i < 3; ++i) {
    tensors.push_back(
        fb::CreateTensor(fbb, fbb.CreateVector(std::vector<int32_t>{1}),
                         fb::TensorType::FLOAT32, i == 0 ? o.tensor0_buffer : 0,
                         fbb.CreateString("t" + std::to_string(i))));
  }
  flatbuffers::Offset<void> options;
  fb::BuiltinOptions type;
  if (o.conv_options_on_add) {
    options = fb::CreateConv2DOptions(fbb).Union();
    type = fb::BuiltinOptions::Conv2DOptions;
  } else {
    options = fb::CreateAddOptions(fbb).Union();
    type = fb::BuiltinOptions::AddOptions;
  }
  std::vector<flatbuffers::Offset<fb::Operator>> ops = {fb::CreateOperator(
      fbb, o.opcode_index, fbb.CreateVector(std::vector<int32_t>{0, 1}),
      fbb.CreateVector(std::vector<int32_t>{2}), type, options)};
  std::vector<flatbuffers::Offset<fb::SubGraph>> subgraphs = {
      fb::CreateSubGraph(fbb, fbb.CreateVector(tensors),
                         fbb.CreateVector(std::vector<int32_t>{0, 1}),
                         fbb.CreateVector(std::vector<int32_t>{2}),
                         fbb.CreateVector(ops))};
  fb::FinishModelBuffer(fbb,
                        fb::CreateModel(fbb, o.version, fbb.CreateVector(codes),
                                        fbb.CreateVector(subgraphs), 0,
                                        fbb.CreateVector(buffers)));
  return std::vector<uint8_t>(fbb.GetBufferPointer(),
                              fbb.GetBufferPointer() + fbb.GetSize());
}

TEST(ModelChecksTest, ValidModelsLoad) {
  EXPECT_TRUE(LoadStatus(ValidAddModel()).ok()) << LoadStatus(ValidAddModel());
  EXPECT_TRUE(LoadStatus(RawAddModel({})).ok()) << LoadStatus(RawAddModel({}));
}

TEST(ModelChecksTest, TooShort) {
  const std::vector<uint8_t> bytes = {0x10, 0, 0, 0};
  EXPECT_THAT(LoadStatus(bytes).message(),
              AllOf(HasSubstr("test.tflite: is 4 bytes, too small"),
                    HasSubstr("8-byte FlatBuffer header")));
  EXPECT_THAT(LoadStatus({}).message(), HasSubstr("is 0 bytes"));
}

TEST(ModelChecksTest, WrongIdentifier) {
  std::vector<uint8_t> bytes = ValidAddModel();
  std::memcpy(bytes.data() + 4, "ABCD", 4);
  EXPECT_THAT(LoadStatus(bytes).message(),
              HasSubstr("is not a TFLite model: bytes 4-7 should be the file "
                        "identifier \"TFL3\" but are \"ABCD\""));
  bytes[4] = 0;
  EXPECT_THAT(LoadStatus(bytes).message(), HasSubstr("hex 00 42 43 44"));
}

TEST(ModelChecksTest, TruncatedFileFailsVerification) {
  std::vector<uint8_t> bytes = ValidAddModel();
  bytes.resize(bytes.size() / 2);
  EXPECT_THAT(LoadStatus(bytes).message(),
              HasSubstr("test.tflite: failed FlatBuffers verification"));
}

TEST(ModelChecksTest, RootOffsetOutsideFileFailsVerification) {
  std::vector<uint8_t> bytes = ValidAddModel();
  const uint32_t root = 0x7ffffff0;
  std::memcpy(bytes.data(), &root, 4);
  EXPECT_THAT(LoadStatus(bytes).message(),
              HasSubstr("failed FlatBuffers verification"));
}

// Every single-byte corruption of a real model is either accepted or
// refused with a message; none may crash (run under ASan/UBSan).
TEST(ModelChecksTest, SingleByteCorruptionsNeverCrash) {
  absl::StatusOr<std::vector<uint8_t>> cnn = BuildExampleCnnModel();
  ASSERT_TRUE(cnn.ok()) << cnn.status();
  // The FlatBuffer tables and vectors sit before and between the weights;
  // test every byte outside the large weight payload and a sample inside.
  int refused = 0;
  for (size_t i = 0; i < cnn->size();
       i += (i < 2048 || i + 4096 > cnn->size()) ? 1 : 61) {
    for (uint8_t flip : {0xff, 0x80, 0x01}) {
      std::vector<uint8_t> bytes = *cnn;
      bytes[i] ^= flip;
      absl::Status status = LoadStatus(bytes);
      if (!status.ok()) {
        ++refused;
        EXPECT_THAT(status.message(), HasSubstr("test.tflite: "));
      }
    }
  }
  EXPECT_GT(refused, 100);
}

// Issue 10: a FIFO given as the model blocked in open().
TEST(ModelChecksTest, FromFileRefusesFilesThatAreNotRegular) {
  const std::string fifo = ::testing::TempDir() + "/kiln_model_fifo";
  std::remove(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path :
       {::testing::TempDir(), fifo, std::string("/dev/zero")}) {
    EXPECT_THAT(Model::FromFile(path).status().message(),
                HasSubstr("not a regular file (a directory, FIFO or device)"))
        << path;
  }
  std::remove(fifo.c_str());
}

TEST(ModelChecksTest, VersionOtherThan3) {
  RawModelOptions o;
  o.version = 2;
  EXPECT_THAT(LoadStatus(RawAddModel(o)).message(),
              AllOf(HasSubstr("uses TFLite schema version 2"),
                    HasSubstr("Kiln reads only schema version 3")));
}

TEST(ModelChecksTest, NoSubgraphs) {
  ModelBuilder builder;
  EXPECT_THAT(LoadStatus(Unchecked(builder)).message(),
              HasSubstr("test.tflite: the model has no subgraphs"));
}

TEST(ModelChecksTest, BufferIndexOutOfRange) {
  RawModelOptions o;
  o.tensor0_buffer = 5;
  EXPECT_THAT(LoadStatus(RawAddModel(o)).message(),
              HasSubstr("subgraph 0, tensor 0 ('t0'): refers to buffer 5 but "
                        "the model has 1 buffers"));
}

TEST(ModelChecksTest, OpcodeIndexOutOfRange) {
  RawModelOptions o;
  o.opcode_index = 3;
  EXPECT_THAT(LoadStatus(RawAddModel(o)).message(),
              HasSubstr("subgraph 0, operator 0: uses operator code 3 but the "
                        "model has 1 operator codes"));
}

TEST(ModelChecksTest, OptionsTableOfAnotherOp) {
  RawModelOptions o;
  o.conv_options_on_add = true;
  EXPECT_THAT(LoadStatus(RawAddModel(o)).message(),
              HasSubstr("operator 0 (ADD): has options table type 1 but this "
                        "op needs AddOptions (type 11)"));
}

TEST(ModelChecksTest, OperatorTensorIndexOutOfRange) {
  ModelBuilder builder;
  SubgraphBuilder& g = builder.AddSubgraph("main");
  const int32_t x = g.AddTensor(FloatTensor("x", {1}));
  const int32_t z = g.AddTensor(FloatTensor("z", {1}));
  g.AddOperator(KILN_OP_ADD, 1, {x, 99}, {z});
  g.SetInputs({x});
  g.SetOutputs({z});
  EXPECT_THAT(LoadStatus(Unchecked(builder)).message(),
              HasSubstr("subgraph 0 ('main'), operator 0 (ADD): input 1 is "
                        "tensor 99 but the subgraph has 2 tensors"));
}

TEST(ModelChecksTest, SubgraphOutputIndexOutOfRange) {
  ModelBuilder builder;
  SubgraphBuilder& g = builder.AddSubgraph();
  g.AddTensor(FloatTensor("x", {1}));
  g.SetOutputs({-3});
  EXPECT_THAT(LoadStatus(Unchecked(builder)).message(),
              HasSubstr("subgraph 0: output 0 is tensor -3 but the subgraph "
                        "has 1 tensors"));
}

TEST(ModelChecksTest, WrongConstantSize) {
  ModelBuilder builder;
  SubgraphBuilder& g = builder.AddSubgraph("main");
  const std::vector<float> three = {1, 2, 3};
  const int32_t w = g.AddConstantTensor(FloatTensor("w", {2, 2}), three);
  g.SetOutputs({w});
  EXPECT_THAT(
      LoadStatus(Unchecked(builder)).message(),
      HasSubstr("subgraph 0 ('main'), tensor 0 ('w'): constant data "
                "has 12 bytes but shape [2,2] of FLOAT32 needs 16 bytes"));
}

// Issue 10: [2^30, 2^30, 4] float32 wrapped the byte size to 0, and
// [65536]x4 the element count.
TEST(ModelChecksTest, ShapeWhoseSizeOverflows) {
  for (const std::vector<int32_t>& shape :
       {std::vector<int32_t>{1 << 30, 1 << 30, 4},
        std::vector<int32_t>{65536, 65536, 65536, 65536}}) {
    ModelBuilder builder;
    SubgraphBuilder& g = builder.AddSubgraph("main");
    const int32_t x = g.AddTensor(FloatTensor("x", shape));
    const int32_t y = g.AddTensor(FloatTensor("y", shape));
    g.AddOperator(KILN_OP_RELU, 1, {x}, {y});
    g.SetInputs({x});
    g.SetOutputs({y});
    EXPECT_THAT(LoadStatus(Unchecked(builder)).message(),
                AllOf(HasSubstr("subgraph 0 ('main'), tensor 0 ('x'): has "
                                "shape ["),
                      HasSubstr("whose size in bytes does not fit in 64 "
                                "bits")));
  }
}

// quantization-testdata/lstm_calibrated2.bin has an unused tensor of shape
// [-1]; LiteRT's loader refuses it, and so does Kiln (issue 11: a model
// LiteRT refuses is refused cleanly). Dynamic sizes live in shape_signature.
TEST(ModelChecksTest, NegativeDimensionInShape) {
  ModelBuilder builder;
  SubgraphBuilder& g = builder.AddSubgraph("main");
  const int32_t x = g.AddTensor(FloatTensor("x", {1, 4}));
  const int32_t y = g.AddTensor(FloatTensor("y", {1, 4}));
  g.AddTensor(FloatTensor("unused", {-1}));
  g.AddOperator(KILN_OP_RELU, 1, {x}, {y});
  g.SetInputs({x});
  g.SetOutputs({y});
  EXPECT_THAT(LoadStatus(Unchecked(builder)).message(),
              AllOf(HasSubstr("subgraph 0 ('main'), tensor 2 ('unused'): has "
                              "invalid dimension -1 in shape [-1]"),
                    HasSubstr("shape_signature")));
}

TEST(ModelChecksTest, ExternalBufferPastEndOfFile) {
  ModelBuilder builder;
  builder.set_external_data(true);
  SubgraphBuilder& g = builder.AddSubgraph("main");
  const int32_t w =
      g.AddConstantTensor(FloatTensor("w", {64}), std::vector<float>(64, 1.0f));
  g.SetOutputs({w});
  std::vector<uint8_t> bytes = Unchecked(builder);
  ASSERT_TRUE(LoadStatus(bytes).ok()) << LoadStatus(bytes);
  bytes.resize(bytes.size() - 8);
  EXPECT_THAT(
      LoadStatus(bytes).message(),
      AllOf(HasSubstr("buffer 1 points to external data at file offset"),
            HasSubstr("with 256 bytes, past the end of the"),
            HasSubstr("The file is truncated")));
}

TEST(ModelChecksTest, LargeCustomOptionsPastEndOfFile) {
  ModelBuilder builder;
  builder.set_external_data(true);
  SubgraphBuilder& g = builder.AddSubgraph("main");
  const int32_t x = g.AddTensor(FloatTensor("x", {1}));
  const int32_t y = g.AddTensor(FloatTensor("y", {1}));
  g.AddCustomOperator("MyOp", 1, {x}, {y}, std::vector<uint8_t>(100, 7));
  g.SetInputs({x});
  g.SetOutputs({y});
  std::vector<uint8_t> bytes = Unchecked(builder);
  {
    auto model = Model::FromBuffer(bytes.data(), bytes.size());
    ASSERT_TRUE(model.ok()) << model.status();
    const Node& node = (*model)->graph(0).nodes[0];
    ASSERT_EQ(node.custom_options_size, 100u);
    EXPECT_EQ(node.custom_options[99], 7);
    EXPECT_EQ(node.custom_options, bytes.data() + bytes.size() - 112);
  }
  bytes.resize(bytes.size() - 20);
  EXPECT_THAT(LoadStatus(bytes).message(),
              AllOf(HasSubstr("operator 0 (CUSTOM 'MyOp'): custom options at "
                              "file offset"),
                    HasSubstr("lie past the end of the")));
}

TEST(ModelChecksTest, ReadBeforeWrite) {
  ModelBuilder builder;
  SubgraphBuilder& g = builder.AddSubgraph("main");
  const int32_t x = g.AddTensor(FloatTensor("x", {1}));
  const int32_t mid = g.AddTensor(FloatTensor("mid", {1}));
  const int32_t y = g.AddTensor(FloatTensor("y", {1}));
  g.AddOperator(KILN_OP_RELU, 1, {mid}, {y});  // reads mid too early
  g.AddOperator(KILN_OP_RELU, 1, {x}, {mid});
  g.SetInputs({x});
  g.SetOutputs({y});
  EXPECT_THAT(LoadStatus(Unchecked(builder)).message(),
              HasSubstr("operator 0 (RELU): input 0 reads tensor 1 ('mid') "
                        "before operator 1 writes it"));
}

// Like the corpus' add_shared_tensors.bin: a tensor nothing writes may be
// read; the runtime refuses it at allocation or prepare.
TEST(ModelChecksTest, TensorThatNothingWritesMayBeRead) {
  ModelBuilder builder;
  SubgraphBuilder& g = builder.AddSubgraph("main");
  const int32_t x = g.AddTensor(FloatTensor("x", {1}));
  const int32_t never = g.AddTensor(FloatTensor("never_written", {1}));
  const int32_t y = g.AddTensor(FloatTensor("y", {1}));
  g.AddOperator(KILN_OP_ADD, 1, {x, never}, {y});
  g.SetInputs({x});
  g.SetOutputs({y});
  EXPECT_TRUE(LoadStatus(Unchecked(builder)).ok());
}

TEST(ModelChecksTest, ProducedTwice) {
  ModelBuilder builder;
  SubgraphBuilder& g = builder.AddSubgraph("main");
  const int32_t x = g.AddTensor(FloatTensor("x", {1}));
  const int32_t y = g.AddTensor(FloatTensor("y", {1}));
  g.AddOperator(KILN_OP_RELU, 1, {x}, {y});
  g.AddOperator(KILN_OP_RELU6, 1, {x}, {y});
  g.SetInputs({x});
  g.SetOutputs({y});
  EXPECT_THAT(LoadStatus(Unchecked(builder)).message(),
              HasSubstr("operator 1 (RELU6): output 0 is tensor 1 ('y'), which "
                        "operator 0 already writes"));
}

TEST(ModelChecksTest, OperatorWritesConstant) {
  ModelBuilder builder;
  SubgraphBuilder& g = builder.AddSubgraph("main");
  const int32_t x = g.AddTensor(FloatTensor("x", {1}));
  const int32_t c =
      g.AddConstantTensor(FloatTensor("c", {1}), std::vector<float>{1});
  g.AddOperator(KILN_OP_RELU, 1, {x}, {c});
  g.SetInputs({x});
  g.SetOutputs({c});
  EXPECT_THAT(LoadStatus(Unchecked(builder)).message(),
              HasSubstr("output 0 is tensor 1 ('c'), a constant; operators "
                        "cannot write constants"));
}

// Issue 10: a constant input made `kiln run` write into the read-only
// mapped weights. Such files load (as in TFLite); interpreters refuse them.
std::string ConstantInputsStatus(const ModelBuilder& builder) {
  const std::vector<uint8_t> bytes = Unchecked(builder);
  auto model = Model::FromBuffer(bytes.data(), bytes.size(), "c.tflite");
  EXPECT_TRUE(model.ok()) << model.status();
  if (!model.ok()) return "";
  return std::string(CheckNoConstantInputs(**model).message());
}

TEST(ModelChecksTest, ConstantSubgraphInput) {
  ModelBuilder builder;
  SubgraphBuilder& g = builder.AddSubgraph("main");
  const int32_t c =
      g.AddConstantTensor(FloatTensor("c", {1}), std::vector<float>{1});
  const int32_t y = g.AddTensor(FloatTensor("y", {1}));
  g.AddOperator(KILN_OP_RELU, 1, {c}, {y});
  g.SetInputs({c});
  g.SetOutputs({y});
  EXPECT_THAT(ConstantInputsStatus(builder),
              HasSubstr("model 'c.tflite': subgraph 0 ('main'): input 0 is "
                        "tensor 0 ('c'), a constant"));
}

TEST(ModelChecksTest, ConstantSignatureInput) {
  ModelBuilder builder;
  SubgraphBuilder& g = builder.AddSubgraph("main");
  const int32_t x = g.AddTensor(FloatTensor("x", {1}));
  const int32_t c =
      g.AddConstantTensor(FloatTensor("c", {1}), std::vector<float>{1});
  const int32_t y = g.AddTensor(FloatTensor("y", {1}));
  g.AddOperator(KILN_OP_ADD, 1, {x, c}, {y});
  g.SetInputs({x});
  g.SetOutputs({y});
  builder.AddSignature("serving_default", 0, {{"x", x}, {"bias", c}},
                       {{"y", y}});
  EXPECT_THAT(ConstantInputsStatus(builder),
              HasSubstr("signature 'serving_default' input 'bias' is tensor "
                        "1 ('c'), a constant"));
}

TEST(ModelChecksTest, NonConstantInputsPass) {
  ModelBuilder builder;
  SubgraphBuilder& g = builder.AddSubgraph("main");
  const int32_t x = g.AddTensor(FloatTensor("x", {1}));
  const int32_t y = g.AddTensor(FloatTensor("y", {1}));
  g.AddOperator(KILN_OP_RELU, 1, {x}, {y});
  g.SetInputs({x});
  g.SetOutputs({y});
  builder.AddSignature("serving_default", 0, {{"x", x}}, {{"y", y}});
  EXPECT_EQ(ConstantInputsStatus(builder), "");
}

TEST(ModelChecksTest, SubgraphOutputNeverWritten) {
  ModelBuilder builder;
  SubgraphBuilder& g = builder.AddSubgraph("main");
  const int32_t y = g.AddTensor(FloatTensor("y", {1}));
  g.SetOutputs({y});
  EXPECT_THAT(
      LoadStatus(Unchecked(builder)).message(),
      HasSubstr("subgraph 0 ('main'): output 0 is tensor 0 ('y'), which "
                "no operator writes"));
}

// sg0 --WHILE--> cond sg1, body sg2; sg2 --CALL_ONCE--> sg0.
TEST(ModelChecksTest, SubgraphRecursion) {
  ModelBuilder builder;
  SubgraphBuilder& main = builder.AddSubgraph("main");
  SubgraphBuilder& cond = builder.AddSubgraph("cond");
  SubgraphBuilder& body = builder.AddSubgraph("body");
  const int32_t x = main.AddTensor(FloatTensor("x", {1}));
  const int32_t y = main.AddTensor(FloatTensor("y", {1}));
  main.AddOperator(KILN_OP_WHILE, 1, {x}, {y},
                   {{kHostOptionCondSubgraph, OptionInt(1)},
                    {kHostOptionBodySubgraph, OptionInt(2)}});
  main.SetInputs({x});
  main.SetOutputs({y});
  const int32_t cx = cond.AddTensor(FloatTensor("x", {1}));
  TensorSpec flag = FloatTensor("flag", {});
  flag.type = KILN_TYPE_BOOL;
  const int32_t cflag = cond.AddConstantTensor(flag, std::vector<uint8_t>{0});
  cond.SetInputs({cx});
  cond.SetOutputs({cflag});
  const int32_t bx = body.AddTensor(FloatTensor("x", {1}));
  body.AddOperator(KILN_OP_CALL_ONCE, 1, {}, {},
                   {{kHostOptionInitSubgraph, OptionInt(0)}});
  body.SetInputs({bx});
  body.SetOutputs({bx});
  EXPECT_THAT(LoadStatus(Unchecked(builder)).message(),
              HasSubstr("subgraphs call themselves recursively: subgraph 0 "
                        "-(WHILE body, operator 0)-> subgraph 2 -(CALL_ONCE "
                        "init, operator 0)-> subgraph 0"));
}

TEST(ModelChecksTest, ControlFlowSubgraphOutOfRange) {
  ModelBuilder builder;
  SubgraphBuilder& main = builder.AddSubgraph("main");
  const int32_t x = main.AddTensor(FloatTensor("x", {1}));
  const int32_t y = main.AddTensor(FloatTensor("y", {1}));
  main.AddOperator(KILN_OP_IF, 1, {x}, {y},
                   {{kHostOptionThenSubgraph, OptionInt(7)},
                    {kHostOptionElseSubgraph, OptionInt(0)}});
  main.SetInputs({x});
  main.SetOutputs({y});
  EXPECT_THAT(LoadStatus(Unchecked(builder)).message(),
              HasSubstr("operator 0 (IF): IF then subgraph is 7 but the model "
                        "has 1 subgraphs"));
}

TEST(ModelChecksTest, WhileWithoutOptions) {
  // Reuse the builder for everything but the missing options: a WHILE with
  // no options reads as "cond 0, body 0", which must not be guessed.
  ModelBuilder builder;
  SubgraphBuilder& main = builder.AddSubgraph("main");
  const int32_t x = main.AddTensor(FloatTensor("x", {1}));
  main.AddCustomOperator("placeholder", 1, {x}, {});
  main.SetInputs({x});
  std::vector<uint8_t> bytes = Unchecked(builder);
  // Turn the custom op code into WHILE (deprecated code and code).
  auto* codes = fb::GetModel(bytes.data())->operator_codes();
  const fb::OperatorCode* code = codes->Get(0);
  ASSERT_EQ(code->builtin_code(), KILN_OP_CUSTOM);
  // Locate the int32 builtin_code (32) and int8 deprecated code (32) in the
  // table by value; both are non-default and thus stored.
  const uint8_t* base = bytes.data();
  const auto* table = reinterpret_cast<const flatbuffers::Table*>(code);
  const uint8_t* builtin =
      table->GetAddressOf(fb::OperatorCode::VT_BUILTIN_CODE);
  const uint8_t* deprecated =
      table->GetAddressOf(fb::OperatorCode::VT_DEPRECATED_BUILTIN_CODE);
  ASSERT_NE(builtin, nullptr);
  ASSERT_NE(deprecated, nullptr);
  const int32_t while_code = KILN_OP_WHILE;
  std::memcpy(bytes.data() + (builtin - base), &while_code, 4);
  bytes[static_cast<size_t>(deprecated - base)] = KILN_OP_WHILE;
  EXPECT_THAT(LoadStatus(bytes).message(),
              HasSubstr("operator 0 (WHILE): has options table type 0 but this "
                        "op needs WhileOptions (type 93)"));
}

TEST(ModelChecksTest, QuantizationZeroPointCountMismatch) {
  ModelBuilder builder;
  SubgraphBuilder& g = builder.AddSubgraph("main");
  TensorSpec spec = FloatTensor("q", {2, 3});
  spec.type = KILN_TYPE_INT8;
  spec.quantization.scales = {0.5f, 0.25f};
  spec.quantization.zero_points = {0};
  const int32_t q = g.AddTensor(spec);
  g.SetInputs({q});
  g.SetOutputs({q});
  EXPECT_THAT(LoadStatus(Unchecked(builder)).message(),
              HasSubstr("tensor 0 ('q'): quantization has 2 scales but 1 zero "
                        "points"));
}

TEST(ModelChecksTest, PerChannelQuantizationChannelMismatch) {
  ModelBuilder builder;
  SubgraphBuilder& g = builder.AddSubgraph("main");
  TensorSpec spec = FloatTensor("q", {2, 3});
  spec.type = KILN_TYPE_INT8;
  spec.quantization.scales = {0.5f, 0.25f};
  spec.quantization.zero_points = {0, 0};
  spec.quantization.quantized_dimension = 1;
  const int32_t q = g.AddTensor(spec);
  g.SetInputs({q});
  g.SetOutputs({q});
  EXPECT_THAT(LoadStatus(Unchecked(builder)).message(),
              HasSubstr("per-channel quantization has 2 scales but dimension 1 "
                        "of shape [2,3] has 3 entries"));
  // min/max alone are not quantization: checked nowhere, loaded as float.
}

TEST(ModelChecksTest, StringConstantWithBadOffsets) {
  ModelBuilder builder;
  SubgraphBuilder& g = builder.AddSubgraph("main");
  TensorSpec spec = FloatTensor("s", {2});
  spec.type = KILN_TYPE_STRING;
  // n = 2, offsets {16, 18, 99}, bytes "abc".
  std::vector<int32_t> words = {2, 16, 18, 99};
  std::vector<uint8_t> data(reinterpret_cast<uint8_t*>(words.data()),
                            reinterpret_cast<uint8_t*>(words.data()) + 16);
  data.insert(data.end(), {'a', 'b', 'c'});
  const int32_t s = g.AddConstantTensor(spec, data.data(), data.size());
  g.SetOutputs({s});
  EXPECT_THAT(LoadStatus(Unchecked(builder)).message(),
              HasSubstr("tensor 0 ('s'): string constant offset 2 is 99"));
}

TEST(ModelChecksTest, SignatureTensorOutOfRange) {
  ModelBuilder builder;
  SubgraphBuilder& g = builder.AddSubgraph("main");
  const int32_t x = g.AddTensor(FloatTensor("x", {1}));
  g.SetInputs({x});
  g.SetOutputs({x});
  builder.AddSignature("serving_default", 0, {{"x", 5}}, {});
  EXPECT_THAT(LoadStatus(Unchecked(builder)).message(),
              HasSubstr("signature 'serving_default' input 'x' is tensor 5 but "
                        "subgraph 0 ('main') has 1 tensors"));
}

TEST(ModelChecksTest, CustomOpWithoutName) {
  ModelBuilder builder;
  SubgraphBuilder& g = builder.AddSubgraph("main");
  const int32_t x = g.AddTensor(FloatTensor("x", {1}));
  g.AddCustomOperator("", 1, {x}, {});
  g.SetInputs({x});
  EXPECT_THAT(LoadStatus(Unchecked(builder)).message(),
              HasSubstr("operator code 0 is CUSTOM but has no custom_code"));
}

TEST(ModelChecksTest, MisalignedInt64ConstantIsCopiedAligned) {
  ModelBuilder builder;
  SubgraphBuilder& g = builder.AddSubgraph("main");
  TensorSpec spec = FloatTensor("i", {2});
  spec.type = KILN_TYPE_INT64;
  const int32_t i = g.AddConstantTensor(spec, std::vector<int64_t>{-5, 7});
  const int32_t f = g.AddConstantTensor(FloatTensor("f", {2}),
                                        std::vector<float>{1.5f, 2.5f});
  g.SetOutputs({i, f});
  const std::vector<uint8_t> bytes = Unchecked(builder);
  // Place the model at an address that is 4 mod 8: int64 data (16-aligned
  // within the file) becomes misaligned, float data stays aligned.
  std::vector<uint64_t> storage(bytes.size() / 8 + 2);
  uint8_t* start = reinterpret_cast<uint8_t*>(storage.data()) + 4;
  std::memcpy(start, bytes.data(), bytes.size());
  auto model = Model::FromBuffer(start, bytes.size());
  ASSERT_TRUE(model.ok()) << model.status();
  const Tensor& i64 = (*model)->graph(0).tensors[0];
  const Tensor& f32 = (*model)->graph(0).tensors[1];
  EXPECT_EQ(reinterpret_cast<uintptr_t>(i64.data) % 8, 0u);
  EXPECT_EQ(static_cast<const int64_t*>(i64.data)[0], -5);
  EXPECT_EQ(static_cast<const int64_t*>(i64.data)[1], 7);
  EXPECT_TRUE(i64.data < start || i64.data >= start + bytes.size());
  EXPECT_GE(static_cast<const uint8_t*>(f32.data), start);
  EXPECT_LT(static_cast<const uint8_t*>(f32.data), start + bytes.size());
  EXPECT_EQ(static_cast<const float*>(f32.data)[1], 2.5f);
}

// ---- Blockwise quantization ------------------------------------------------

// x [2,64] -> FULLY_CONNECTED(w, bias) -> y [2,16] with INT4 weights w
// [16,64] quantized blockwise as ai-edge-quantizer's dynamic_wi4b32_afp32
// recipe writes them: tensors x 0, scales 1 (a FLOAT16 constant [16,2]), w 2,
// bias 3, y 4, and zero points 5 when `zero_point_type` is set.
struct BlockwiseFcOptions {
  TensorSpec::Blockwise blockwise{/*scales=*/1,
                                  /*zero_points=*/-1,
                                  /*block_size=*/32,
                                  {}};
  std::vector<int32_t> weight_shape = {16, 64};
  KilnTensorType scale_type = KILN_TYPE_FLOAT16;
  std::vector<int32_t> scale_shape = {16, 2};
  bool scales_constant = true;
  std::vector<float> per_channel_scales;  // written as well when non-empty
  KilnTensorType zero_point_type = -1;    // -1: no zero-point tensor
};

std::vector<uint8_t> BlockwiseFcModel(const BlockwiseFcOptions& o) {
  ModelBuilder builder;
  SubgraphBuilder& g = builder.AddSubgraph("main");
  const int32_t x = g.AddTensor(FloatTensor("x", {2, 64}));
  TensorSpec scale_spec = FloatTensor("w_scales", o.scale_shape);
  scale_spec.type = o.scale_type;
  int64_t blocks = 1;
  for (int32_t d : o.scale_shape) blocks *= d;
  if (!o.scales_constant) {
    g.AddTensor(scale_spec);
  } else if (o.scale_type == KILN_TYPE_FLOAT32) {
    std::vector<float> scales(static_cast<size_t>(blocks), 0.5f);
    scales[1] = 2.f;
    g.AddConstantTensor(scale_spec, scales);
  } else {  // FLOAT16 bits (or another 2-byte type): 0.5, 2.0, then 0.5s
    std::vector<uint16_t> scales(static_cast<size_t>(blocks), 0x3800);
    scales[1] = 0x4000;
    scales.back() = 0x3C00;  // 1.0
    g.AddConstantTensor(scale_spec, scales);
  }
  TensorSpec w_spec = FloatTensor("w", o.weight_shape);
  w_spec.type = KILN_TYPE_INT4;
  w_spec.blockwise = o.blockwise;
  if (!o.per_channel_scales.empty()) {
    w_spec.quantization.scales = o.per_channel_scales;
    w_spec.quantization.zero_points.assign(o.per_channel_scales.size(), 0);
  }
  int64_t weights = 1;
  for (int32_t d : o.weight_shape) weights *= d;
  const int32_t w = g.AddConstantTensor(
      w_spec,
      std::vector<uint8_t>(static_cast<size_t>((weights + 1) / 2), 0x21));
  const int32_t bias = g.AddConstantTensor(FloatTensor("bias", {16}),
                                           std::vector<float>(16, 0.f));
  const int32_t y = g.AddTensor(FloatTensor("y", {2, 16}));
  if (o.zero_point_type != -1) {
    TensorSpec zp_spec = FloatTensor("w_zero_points", o.scale_shape);
    zp_spec.type = o.zero_point_type;
    std::vector<int8_t> zp(
        static_cast<size_t>(blocks) * ElementSize(o.zero_point_type), 0);
    zp[4 * ElementSize(o.zero_point_type)] = -3;
    if (ElementSize(o.zero_point_type) > 1) {
      for (size_t i = 1; i < ElementSize(o.zero_point_type); ++i) {
        zp[4 * ElementSize(o.zero_point_type) + i] = -1;  // sign-extend -3
      }
    }
    g.AddConstantTensor(zp_spec, zp);
  }
  g.AddOperator(KILN_OP_FULLY_CONNECTED, 1, {x, w, bias}, {y});
  g.SetInputs({x});
  g.SetOutputs({y});
  return Unchecked(builder);
}

TEST(ModelChecksTest, BlockwiseWeightsLoadWithTheirScalesConverted) {
  const std::vector<uint8_t> bytes = BlockwiseFcModel({});
  auto model = Model::FromBuffer(bytes.data(), bytes.size());
  ASSERT_TRUE(model.ok()) << model.status();
  const Quantization& q = (*model)->graph(0).tensors[2].quantization;
  EXPECT_TRUE(q.blockwise());
  EXPECT_FALSE(q.quantized());  // no per-tensor or per-channel scales
  EXPECT_EQ(q.block_size, 32);
  ASSERT_EQ(q.block_scales.size(), 32u);
  EXPECT_EQ(q.block_scales[0], 0.5f);
  EXPECT_EQ(q.block_scales[1], 2.f);
  EXPECT_EQ(q.block_scales[31], 1.f);
  EXPECT_EQ(q.block_zero_points, std::vector<int64_t>(32, 0));
}

TEST(ModelChecksTest, BlockwiseFloat32ScalesAndZeroPointTensors) {
  BlockwiseFcOptions o;
  o.scale_type = KILN_TYPE_FLOAT32;
  o.blockwise.zero_points = 5;
  for (KilnTensorType zp_type :
       {KILN_TYPE_INT8, KILN_TYPE_INT16, KILN_TYPE_INT32, KILN_TYPE_INT64}) {
    o.zero_point_type = zp_type;
    const std::vector<uint8_t> bytes = BlockwiseFcModel(o);
    auto model = Model::FromBuffer(bytes.data(), bytes.size());
    ASSERT_TRUE(model.ok()) << model.status();
    const Quantization& q = (*model)->graph(0).tensors[2].quantization;
    EXPECT_EQ(q.block_scales[1], 2.f);
    ASSERT_EQ(q.block_zero_points.size(), 32u);
    EXPECT_EQ(q.block_zero_points[4], -3) << TypeName(zp_type);
    EXPECT_EQ(q.block_zero_points[5], 0);
  }
}

TEST(ModelChecksTest, BlockwiseScalesMustBeAConstantFloatTensorOfTheGrid) {
  BlockwiseFcOptions o;
  o.blockwise.scales = 9;
  EXPECT_THAT(LoadStatus(BlockwiseFcModel(o)).message(),
              HasSubstr("tensor 2 ('w'): blockwise quantization scales is "
                        "tensor 9 but the subgraph has 5 tensors"));
  o = {};
  o.scale_type = KILN_TYPE_INT16;
  EXPECT_THAT(LoadStatus(BlockwiseFcModel(o)).message(),
              HasSubstr("blockwise quantization scales is tensor 1 of type "
                        "INT16; it must be FLOAT16 or FLOAT32"));
  o = {};
  o.scale_shape = {16, 4};
  EXPECT_THAT(LoadStatus(BlockwiseFcModel(o)).message(),
              HasSubstr("blockwise quantization scales is tensor 1 of shape "
                        "[16,4]; it must be [16,2] (rows, cols / block_size)"));
  o = {};
  o.scales_constant = false;
  EXPECT_THAT(LoadStatus(BlockwiseFcModel(o)).message(),
              HasSubstr("blockwise quantization scales is tensor 1, which "
                        "must be a dense constant of 64 bytes"));
}

TEST(ModelChecksTest, BlockwiseBlockSizeMustDivideTheLastDimension) {
  for (int32_t block : {0, -32, 24}) {
    BlockwiseFcOptions o;
    o.blockwise.block_size = block;
    o.scale_shape = {16, 2};
    EXPECT_THAT(LoadStatus(BlockwiseFcModel(o)).message(),
                HasSubstr("blockwise quantization has block_size " +
                          std::to_string(block) +
                          ", which must be positive and divide the last "
                          "dimension 64"));
  }
}

TEST(ModelChecksTest, BlockwiseOnRank2TensorsWithBlocksAlongTheLastDimension) {
  BlockwiseFcOptions o;
  o.weight_shape = {16, 2, 32};
  EXPECT_THAT(LoadStatus(BlockwiseFcModel(o)).message(),
              HasSubstr("blockwise quantization on a tensor of shape "
                        "[16,2,32]; Kiln reads it on rank-2 tensors"));
  o = {};
  o.blockwise.block_shape = {2, 32};
  EXPECT_THAT(LoadStatus(BlockwiseFcModel(o)).message(),
              HasSubstr("blockwise quantization has block_shape [2,32]"));
  o.blockwise.block_shape = {1, 32};
  EXPECT_TRUE(LoadStatus(BlockwiseFcModel(o)).ok());
}

TEST(ModelChecksTest, BlockwiseZeroPointsAndPerChannelScales) {
  BlockwiseFcOptions o;
  o.blockwise.zero_points = 5;
  o.zero_point_type = KILN_TYPE_FLOAT32;
  EXPECT_THAT(LoadStatus(BlockwiseFcModel(o)).message(),
              HasSubstr("blockwise quantization zero_points is tensor 5 of "
                        "type FLOAT32; it must be INT8, INT16, INT32 or INT64 "
                        "(or -1 for none)"));
  o = {};
  o.blockwise.zero_points = 7;
  EXPECT_THAT(LoadStatus(BlockwiseFcModel(o)).message(),
              HasSubstr("blockwise quantization zero_points is tensor 7 but "
                        "the subgraph has 5 tensors"));
  o = {};
  o.per_channel_scales.assign(16, 0.5f);
  EXPECT_THAT(LoadStatus(BlockwiseFcModel(o)).message(),
              HasSubstr("blockwise quantization comes with 16 per-tensor or "
                        "per-channel scales as well"));
}

}  // namespace
}  // namespace kiln
