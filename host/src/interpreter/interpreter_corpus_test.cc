// Interpreter tests on the shared corpus of converter-written models.
// Expected values were computed with the TFLite reference runtime.
#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "interpreter/interpreter.h"
#include "interpreter/test_util.h"

namespace kiln {
namespace {

using testing::CpuOnlyOptions;
using ::testing::ElementsAre;
using testing::Fill;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;
using testing::Read;
using testing::SharedModelPath;

std::unique_ptr<Interpreter> Open(const std::string& relative) {
  auto model = Model::FromFile(SharedModelPath(relative));
  EXPECT_TRUE(model.ok()) << model.status();
  if (!model.ok()) return nullptr;
  auto interp = Interpreter::Create(*model, CpuOnlyOptions());
  EXPECT_TRUE(interp.ok()) << interp.status();
  if (!interp.ok()) return nullptr;
  return *std::move(interp);
}

TEST(InterpreterCorpusTest, MultiSubgraphsWhile) {
  KILN_SKIP_WITHOUT_SHARED_MODELS();
  auto it = Open("tflite-testdata/multi_subgraphs_while.bin");
  ASSERT_NE(it, nullptr);
  KILN_ASSERT_OK(it->AllocateTensors());
  Fill(it->input(0), std::vector<float>{1.5f});
  const absl::Status s = it->Invoke();
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_THAT(Read<float>(it->output(0)), ElementsAre(6.0f));
  EXPECT_THAT(Read<int32_t>(it->output(1)), ElementsAre(2));
}

TEST(InterpreterCorpusTest, NestedWhile) {
  KILN_SKIP_WITHOUT_SHARED_MODELS();
  auto it = Open("tflite-testdata/nested_while.bin");
  ASSERT_NE(it, nullptr);
  KILN_ASSERT_OK(it->AllocateTensors());
  for (float x : {1.0f, 2.0f}) {
    Fill(it->input(0), std::vector<float>{x});
    const absl::Status s = it->Invoke();
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_THAT(Read<float>(it->output(0)), ElementsAre(2.0f));
  }
}

TEST(InterpreterCorpusTest, WhileWithForwardedInputs) {
  KILN_SKIP_WITHOUT_SHARED_MODELS();
  auto it = Open("tflite-testdata/while_op_with_forwarding_input.bin");
  ASSERT_NE(it, nullptr);
  KILN_ASSERT_OK(it->AllocateTensors());
  Fill(it->input(0), std::vector<int32_t>{3});
  // One string "abc": count, offsets[2], bytes.
  std::vector<uint8_t> str(4 + 8 + 3);
  const int32_t header[3] = {1, 12, 15};
  std::memcpy(str.data(), header, sizeof(header));
  std::memcpy(str.data() + 12, "abc", 3);
  it->input(1)->AllocateOwned(str.size());
  Fill(it->input(1), str);
  const absl::Status s = it->Invoke();
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_THAT(Read<int32_t>(it->output(0)), ElementsAre(3));
  EXPECT_THAT(Read<int32_t>(it->output(1)), ElementsAre(4));
  EXPECT_EQ(Read<uint8_t>(it->output(2)), str);
}

TEST(InterpreterCorpusTest, CallOnceInitialisesAVariableOnce) {
  KILN_SKIP_WITHOUT_SHARED_MODELS();
  auto it = Open("tflite-testdata/call_once_mul.bin");
  ASSERT_NE(it, nullptr);
  KILN_ASSERT_OK(it->AllocateTensors());
  const float expected[3] = {6.0f, 15.0f, 35.0f};
  const float inputs[3] = {3.0f, 5.0f, 7.0f};
  for (int i = 0; i < 3; ++i) {
    Fill(it->input(0), std::vector<float>{inputs[i]});
    const absl::Status s = it->Invoke();
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_THAT(Read<float>(it->output(0)), ElementsAre(expected[i])) << i;
  }
}

TEST(InterpreterCorpusTest, ResourceVariablesPersistAcrossInvokes) {
  KILN_SKIP_WITHOUT_SHARED_MODELS();
  auto it = Open("quantization-testdata/resource_vars_calibrated.bin");
  ASSERT_NE(it, nullptr);
  auto runner = it->GetSignatureRunner("serving_default");
  ASSERT_TRUE(runner.ok()) << runner.status();
  KILN_ASSERT_OK((*runner)->AllocateTensors());
  const std::vector<float> x = {0.0f, 0.1f, 0.2f, 0.3f, 0.4f};
  const std::vector<std::vector<float>> output0 = {
      {10.666980f, 9.284595f, 8.811371f, 7.818419f, 6.018317f},
      {5.666980f, 4.724596f, 4.691371f, 4.138418f, 2.778317f}};
  const std::vector<float> output1 = {0.666980f, 0.384595f, 1.011371f,
                                      1.118418f, 0.418317f};
  for (int round = 0; round < 2; ++round) {
    Fill((*runner)->input("x"), x);
    const absl::Status s = (*runner)->Invoke();
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_THAT(
        Read<float>((*runner)->output("output_0")),
        Pointwise(FloatNear(1e-4f), output0[static_cast<size_t>(round)]));
    EXPECT_THAT(Read<float>((*runner)->output("output_1")),
                Pointwise(FloatNear(1e-4f), output1));
  }
}

TEST(InterpreterCorpusTest, SharedTensorsFailAtAllocation) {
  KILN_SKIP_WITHOUT_SHARED_MODELS();
  auto it = Open("tflite-testdata/add_shared_tensors.bin");
  ASSERT_NE(it, nullptr);
  const absl::Status s = it->AllocateTensors();
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("alias"));
  EXPECT_THAT(s.message(), HasSubstr("add_shared_tensors.bin"));
}

TEST(InterpreterCorpusTest, FlexModelIsRefusedByName) {
  KILN_SKIP_WITHOUT_SHARED_MODELS();
  auto model =
      Model::FromFile(SharedModelPath("tflite-testdata/multi_add_flex.bin"));
  ASSERT_TRUE(model.ok()) << model.status();
  auto it = Interpreter::Create(*model, CpuOnlyOptions());
  ASSERT_FALSE(it.ok());
  EXPECT_THAT(it.status().message(), HasSubstr("'FlexAddV2'"));
  EXPECT_THAT(it.status().message(), HasSubstr("SELECT_TF_OPS"));
  EXPECT_THAT(it.status().message(), HasSubstr("3 nodes"));
}

TEST(InterpreterCorpusTest, MinRuntimeVersion) {
  KILN_SKIP_WITHOUT_SHARED_MODELS();
  const std::string path =
      SharedModelPath("tflite-testdata/test_min_runtime.bin");
  auto it = Open("tflite-testdata/test_min_runtime.bin");
  ASSERT_NE(it, nullptr);  // "1.5.0" is readable
  KILN_ASSERT_OK(it->AllocateTensors());
  KILN_ASSERT_OK(it->Invoke());
  EXPECT_THAT(it->output(0)->shape, ElementsAre(0));
  // The same file claiming TFLite 9.5.0 is refused.
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  const std::string needle("1.5.0\0", 6);
  auto pos =
      std::search(bytes.begin(), bytes.end(), needle.begin(), needle.end());
  ASSERT_NE(pos, bytes.end());
  *pos = '9';
  auto model = testing::LoadBytes(bytes, "test_min_runtime_9.5.0");
  ASSERT_TRUE(model.ok()) << model.status();
  auto refused = Interpreter::Create(*model, CpuOnlyOptions());
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("9.5.0"));
}

TEST(InterpreterCorpusTest, SignatureRunnersByName) {
  KILN_SKIP_WITHOUT_SHARED_MODELS();
  auto it = Open("misc/multi_signature_model.tflite");
  ASSERT_NE(it, nullptr);
  ASSERT_EQ(it->num_signatures(), 3);
  std::vector<float> a(100), b(100);
  for (int i = 0; i < 100; ++i) {
    a[static_cast<size_t>(i)] = static_cast<float>(i + 1);
    b[static_cast<size_t>(i)] = static_cast<float>(i + 11);
  }
  const std::map<std::string, std::vector<float>> expected = {
      {"add", {12, 14, 16, 18}},
      {"mul", {11, 24, 39, 56}},
      {"sub", {-10, -10, -10, -10}}};
  for (const auto& [key, want] : expected) {
    auto runner = it->GetSignatureRunner(key);
    ASSERT_TRUE(runner.ok()) << runner.status();
    KILN_ASSERT_OK((*runner)->AllocateTensors());
    Fill((*runner)->input("a"), a);
    Fill((*runner)->input("b"), b);
    KILN_ASSERT_OK((*runner)->Invoke());
    const std::vector<float> out = Read<float>((*runner)->output("output"));
    ASSERT_EQ(out.size(), 100u) << key;
    EXPECT_EQ(std::vector<float>(out.begin(), out.begin() + 4), want) << key;
  }
  auto missing = it->GetSignatureRunner("div");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("'add', 'mul', 'sub'"));
}

TEST(InterpreterCorpusTest, SignaturesOnTheirOwnSubgraphs) {
  KILN_SKIP_WITHOUT_SHARED_MODELS();
  auto it = Open("tflite-testdata/multi_signatures.bin");
  ASSERT_NE(it, nullptr);
  for (const auto& [key, want] :
       std::map<std::string, float>{{"add", 3.0f}, {"sub", -2.0f}}) {
    auto runner = it->GetSignatureRunner(key);
    ASSERT_TRUE(runner.ok()) << runner.status();
    KILN_ASSERT_OK((*runner)->ResizeInput("x", {1}));
    KILN_ASSERT_OK((*runner)->AllocateTensors());
    Fill((*runner)->input("x"), std::vector<float>{1.0f});
    KILN_ASSERT_OK((*runner)->Invoke());
    EXPECT_THAT(Read<float>((*runner)->output("output_0")), ElementsAre(want))
        << key;
  }
  // Resizing the -1 dimension of "add".
  auto add = it->GetSignatureRunner("add");
  ASSERT_TRUE(add.ok());
  KILN_ASSERT_OK((*add)->ResizeInput("x", {3}));
  KILN_ASSERT_OK((*add)->AllocateTensors());
  Fill((*add)->input("x"), std::vector<float>{1, 2, 3});
  KILN_ASSERT_OK((*add)->Invoke());
  EXPECT_THAT(Read<float>((*add)->output("output_0")), ElementsAre(3, 4, 5));
  EXPECT_EQ((*add)->ResizeInput("nope", {1}).code(),
            absl::StatusCode::kNotFound);
}

TEST(InterpreterCorpusTest, SignatureMapsTensorsByIndexNotOrder) {
  KILN_SKIP_WITHOUT_SHARED_MODELS();
  auto it = Open("tflite-testdata/reverse_signature_model.bin");
  ASSERT_NE(it, nullptr);
  auto runner = it->GetSignatureRunner("serving_default");
  ASSERT_TRUE(runner.ok());
  EXPECT_EQ((*runner)->input_name(0), "x");
  KILN_ASSERT_OK((*runner)->AllocateTensors());
  std::vector<float> x(8), y(8);
  for (int i = 0; i < 8; ++i) {
    x[static_cast<size_t>(i)] = static_cast<float>(i + 1);
    y[static_cast<size_t>(i)] = static_cast<float>(i + 11);
  }
  Fill((*runner)->input("x"), x);
  Fill((*runner)->input("y"), y);
  KILN_ASSERT_OK((*runner)->Invoke());
  const std::vector<float> prod = Read<float>((*runner)->output("prod"));
  const std::vector<float> sum = Read<float>((*runner)->output("sum"));
  ASSERT_EQ(prod.size(), 8u);
  ASSERT_EQ(sum.size(), 8u);
  EXPECT_FLOAT_EQ(prod[1], 24.0f);
  EXPECT_FLOAT_EQ(sum[1], 14.0f);
}

TEST(InterpreterCorpusTest, InvalidBufferFailsCleanly) {
  KILN_SKIP_WITHOUT_SHARED_MODELS();
  auto model = Model::FromFile(
      SharedModelPath("tflite-testdata/segment_sum_invalid_buffer.bin"));
  if (!model.ok()) return;  // refused by the loader: also acceptable
  auto it = Interpreter::Create(*model, CpuOnlyOptions());
  if (!it.ok()) {
    EXPECT_THAT(it.status().message(), HasSubstr("SEGMENT_SUM"));
    return;
  }
  absl::Status s = (*it)->AllocateTensors();
  if (s.ok()) s = (*it)->Invoke();
  EXPECT_FALSE(s.ok());
}

// Two chained quantized ADDs whose intermediate tensor the model declares
// FLOAT32: LiteRT's ADD prepare gives it the inputs' type, and so does the
// CPU plugin's (KilnHostApi.tensor_set_type). Expected values from LiteRT's
// reference kernels (3x, saturating).
TEST(InterpreterCorpusTest, QuantizedAddIntermediateDeclaredFloat) {
  KILN_SKIP_WITHOUT_SHARED_MODELS();
  auto it = Open("tflite-testdata/add_quantized.bin");
  ASSERT_NE(it, nullptr);
  KILN_ASSERT_OK(it->AllocateTensors());
  std::vector<uint8_t> x(192, 0);
  const std::vector<uint8_t> head = {0, 1, 2, 3, 41, 42, 43, 84, 85, 86, 127};
  std::copy(head.begin(), head.end(), x.begin());
  Fill(it->input(0), x);
  KILN_ASSERT_OK(it->Invoke());
  EXPECT_EQ(it->output(0)->ElementType(), KILN_TYPE_UINT8);
  const std::vector<uint8_t> y = Read<uint8_t>(it->output(0));
  ASSERT_EQ(y.size(), 192u);
  EXPECT_THAT(std::vector<uint8_t>(y.begin(), y.begin() + 11),
              ElementsAre(0, 3, 6, 9, 123, 126, 129, 252, 255, 255, 255));
}

// WHERE's output shape follows the condition's values at every invoke
// (LiteRT makes the output dynamic); values as LiteRT's reference kernel
// gives them for [[T, F, T, T]].
TEST(InterpreterCorpusTest, WhereResizesItsOutputAtEachInvoke) {
  KILN_SKIP_WITHOUT_SHARED_MODELS();
  auto it = Open("quantization-testdata/where.bin");
  ASSERT_NE(it, nullptr);
  KILN_ASSERT_OK(it->AllocateTensors());
  Fill(it->input(0), std::vector<uint8_t>{1, 0, 1, 1});
  KILN_ASSERT_OK(it->Invoke());
  EXPECT_THAT(it->output(0)->shape, ElementsAre(3, 2));
  EXPECT_THAT(Read<int64_t>(it->output(0)), ElementsAre(0, 0, 0, 2, 0, 3));
  Fill(it->input(0), std::vector<uint8_t>{0, 0, 0, 0});
  KILN_ASSERT_OK(it->Invoke());
  EXPECT_THAT(it->output(0)->shape, ElementsAre(0, 2));
  Fill(it->input(0), std::vector<uint8_t>{0, 1, 0, 0});
  KILN_ASSERT_OK(it->Invoke());
  EXPECT_THAT(it->output(0)->shape, ElementsAre(1, 2));
  EXPECT_THAT(Read<int64_t>(it->output(0)), ElementsAre(0, 1));
}

}  // namespace
}  // namespace kiln
