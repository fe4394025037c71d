// End-to-end tests of the application C API, through libkiln.so only.
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kiln/kiln_c_api.h"

namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string ModelPath(const std::string& relative) {
  return std::string(KILN_SHARED_MODELS_DIR) + "/" + relative;
}

bool ModelsPresent() {
  std::error_code ec;
  return std::filesystem::is_directory(KILN_SHARED_MODELS_DIR, ec);
}

#define SKIP_WITHOUT_MODELS()                                                \
  do {                                                                       \
    if (!ModelsPresent()) {                                                  \
      GTEST_SKIP() << "shared model corpus absent: " KILN_SHARED_MODELS_DIR; \
    }                                                                        \
  } while (0)

// Fails the test with the error's message; returns true when error was NULL.
bool Ok(KilnError* error) {
  if (error == nullptr) return true;
  ADD_FAILURE() << "KilnError " << KilnErrorCode(error) << ": "
                << KilnErrorMessage(error);
  KilnErrorDestroy(error);
  return false;
}

// The error's (code, message); the error is destroyed.
std::pair<KilnStatus, std::string> Take(KilnError* error) {
  if (error == nullptr) return {KILN_STATUS_OK, ""};
  std::pair<KilnStatus, std::string> r = {KilnErrorCode(error),
                                          KilnErrorMessage(error)};
  KilnErrorDestroy(error);
  return r;
}

KilnInterpreterOptions* CpuOptions() {
  KilnInterpreterOptions* o = KilnInterpreterOptionsCreate();
  KilnInterpreterOptionsAddPluginPath(
      o, (std::string(KILN_TEST_PLUGIN_DIR) + "/libkiln_cpu.so").c_str());
  KilnInterpreterOptionsSetUseDefaultPlugins(o, 0);
  return o;
}

// add_10x10.tflite: out = a + b over [10, 10] floats.
void RunAdd10x10(KilnModel* model, KilnInterpreterOptions* options) {
  KilnInterpreter* it = nullptr;
  ASSERT_TRUE(Ok(KilnInterpreterCreate(model, options, &it)));
  ASSERT_NE(it, nullptr);
  ASSERT_EQ(KilnInterpreterInputCount(it), 2);
  ASSERT_EQ(KilnInterpreterOutputCount(it), 1);
  ASSERT_TRUE(Ok(KilnInterpreterAllocateTensors(it)));
  EXPECT_GT(KilnInterpreterArenaBytes(it), 0u);
  std::vector<float> a(100), b(100), out(100);
  for (int i = 0; i < 100; ++i) {
    a[static_cast<size_t>(i)] = static_cast<float>(i);
    b[static_cast<size_t>(i)] = 0.5f;
  }
  KilnTensor* in0 = KilnInterpreterInput(it, 0);
  KilnTensor* in1 = KilnInterpreterInput(it, 1);
  ASSERT_NE(in0, nullptr);
  EXPECT_EQ(KilnTensorGetType(in0), KILN_TYPE_FLOAT32);
  EXPECT_EQ(KilnTensorNumDims(in0), 2);
  EXPECT_EQ(KilnTensorDim(in0, 1), 10);
  EXPECT_EQ(KilnTensorDim(in0, 2), -1);
  EXPECT_EQ(KilnTensorByteSize(in0), 400u);
  EXPECT_NE(KilnTensorData(in0), nullptr);
  EXPECT_GT(std::strlen(KilnTensorName(in0)), 0u);
  ASSERT_TRUE(Ok(KilnTensorCopyFromBuffer(in0, a.data(), 400)));
  ASSERT_TRUE(Ok(KilnTensorCopyFromBuffer(in1, b.data(), 400)));
  ASSERT_TRUE(Ok(KilnInterpreterInvoke(it)));
  const KilnTensor* o = KilnInterpreterOutput(it, 0);
  ASSERT_NE(o, nullptr);
  ASSERT_TRUE(Ok(KilnTensorCopyToBuffer(o, out.data(), 400)));
  for (int i = 0; i < 100; ++i) {
    EXPECT_FLOAT_EQ(out[static_cast<size_t>(i)], static_cast<float>(i) + 0.5f);
  }
  // Wrong sizes are INVALID_ARGUMENT with a message.
  auto [code, message] = Take(KilnTensorCopyFromBuffer(in0, a.data(), 399));
  EXPECT_EQ(code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(message, HasSubstr("400 bytes"));
  EXPECT_EQ(Take(KilnTensorCopyToBuffer(o, out.data(), 4)).first,
            KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(KilnInterpreterInput(it, 2), nullptr);
  EXPECT_EQ(KilnInterpreterOutput(it, -1), nullptr);
  KilnInterpreterDestroy(it);
}

TEST(CApiTest, CreateFromFileAndRun) {
  SKIP_WITHOUT_MODELS();
  KilnModel* model = nullptr;
  ASSERT_TRUE(Ok(KilnModelCreateFromFile(
      ModelPath("misc/add_10x10.tflite").c_str(), &model)));
  KilnInterpreterOptions* options = CpuOptions();
  RunAdd10x10(model, options);
  KilnInterpreterOptionsDestroy(options);
  KilnModelDestroy(model);
}

TEST(CApiTest, CreateFromBufferAndRun) {
  SKIP_WITHOUT_MODELS();
  std::ifstream in(ModelPath("misc/add_10x10.tflite"), std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
  KilnModel* model = nullptr;
  ASSERT_TRUE(
      Ok(KilnModelCreateFromBuffer(bytes.data(), bytes.size(), &model)));
  KilnInterpreterOptions* options = CpuOptions();
  RunAdd10x10(model, options);
  KilnInterpreterOptionsDestroy(options);
  KilnModelDestroy(model);
}

TEST(CApiTest, InterpreterKeepsTheModelAlive) {
  SKIP_WITHOUT_MODELS();
  KilnModel* model = nullptr;
  ASSERT_TRUE(Ok(KilnModelCreateFromFile(
      ModelPath("misc/add_10x10.tflite").c_str(), &model)));
  KilnInterpreterOptions* options = CpuOptions();
  KilnInterpreter* it = nullptr;
  ASSERT_TRUE(Ok(KilnInterpreterCreate(model, options, &it)));
  KilnInterpreterOptionsDestroy(options);
  KilnModelDestroy(model);
  ASSERT_TRUE(Ok(KilnInterpreterAllocateTensors(it)));
  ASSERT_TRUE(Ok(KilnInterpreterInvoke(it)));
  KilnInterpreterDestroy(it);
}

TEST(CApiTest, ErrorsCarryCodesAndMessages) {
  KilnModel* model = reinterpret_cast<KilnModel*>(0x1);
  auto [code, message] =
      Take(KilnModelCreateFromFile("/nonexistent/model.tflite", &model));
  EXPECT_NE(code, KILN_STATUS_OK);
  EXPECT_THAT(message, HasSubstr("/nonexistent/model.tflite"));
  EXPECT_EQ(model, nullptr);
  const char junk[16] = "not a model....";
  EXPECT_NE(Take(KilnModelCreateFromBuffer(junk, sizeof(junk), &model)).first,
            KILN_STATUS_OK);
  EXPECT_EQ(Take(KilnModelCreateFromBuffer(nullptr, 0, &model)).first,
            KILN_STATUS_INVALID_ARGUMENT);
  KilnInterpreter* it = nullptr;
  EXPECT_EQ(Take(KilnInterpreterCreate(nullptr, nullptr, &it)).first,
            KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(Take(KilnInterpreterInvoke(nullptr)).first,
            KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(KilnErrorCode(nullptr), KILN_STATUS_OK);
}

TEST(CApiTest, UnresolvedOpsFailCreationWithTheNodeList) {
  SKIP_WITHOUT_MODELS();
  KilnModel* model = nullptr;
  ASSERT_TRUE(Ok(KilnModelCreateFromFile(
      ModelPath("tflite-testdata/multi_add_flex.bin").c_str(), &model)));
  KilnInterpreterOptions* options = CpuOptions();
  KilnInterpreter* it = nullptr;
  auto [code, message] = Take(KilnInterpreterCreate(model, options, &it));
  EXPECT_NE(code, KILN_STATUS_OK);
  EXPECT_EQ(it, nullptr);
  EXPECT_THAT(message, HasSubstr("FlexAddV2"));
  KilnInterpreterOptionsDestroy(options);
  KilnModelDestroy(model);
}

TEST(CApiTest, InvokeBeforeAllocateAndResize) {
  SKIP_WITHOUT_MODELS();
  KilnModel* model = nullptr;
  ASSERT_TRUE(Ok(KilnModelCreateFromFile(
      ModelPath("misc/add_10x10.tflite").c_str(), &model)));
  KilnInterpreterOptions* options = CpuOptions();
  KilnInterpreter* it = nullptr;
  ASSERT_TRUE(Ok(KilnInterpreterCreate(model, options, &it)));
  auto [code, message] = Take(KilnInterpreterInvoke(it));
  EXPECT_EQ(code, KILN_STATUS_FAILED_PRECONDITION);
  EXPECT_THAT(message, HasSubstr("AllocateTensors"));
  const int32_t dims[2] = {2, 10};
  ASSERT_TRUE(Ok(KilnInterpreterResizeInput(it, 0, dims, 2)));
  ASSERT_TRUE(Ok(KilnInterpreterResizeInput(it, 1, dims, 2)));
  ASSERT_TRUE(Ok(KilnInterpreterAllocateTensors(it)));
  EXPECT_EQ(KilnTensorByteSize(KilnInterpreterInput(it, 0)), 80u);
  ASSERT_TRUE(Ok(KilnInterpreterInvoke(it)));
  EXPECT_EQ(KilnTensorDim(KilnInterpreterOutput(it, 0), 0), 2);
  const int32_t bad[2] = {-2, 10};
  EXPECT_EQ(Take(KilnInterpreterResizeInput(it, 0, bad, 2)).first,
            KILN_STATUS_INVALID_ARGUMENT);
  KilnInterpreterDestroy(it);
  KilnInterpreterOptionsDestroy(options);
  KilnModelDestroy(model);
}

TEST(CApiTest, SignatureRunners) {
  SKIP_WITHOUT_MODELS();
  KilnModel* model = nullptr;
  ASSERT_TRUE(Ok(KilnModelCreateFromFile(
      ModelPath("tflite-testdata/reverse_signature_model.bin").c_str(),
      &model)));
  KilnInterpreterOptions* options = CpuOptions();
  KilnInterpreter* it = nullptr;
  ASSERT_TRUE(Ok(KilnInterpreterCreate(model, options, &it)));
  ASSERT_EQ(KilnInterpreterSignatureCount(it), 1);
  EXPECT_STREQ(KilnInterpreterSignatureKey(it, 0), "serving_default");
  EXPECT_EQ(KilnInterpreterSignatureKey(it, 1), nullptr);
  KilnSignatureRunner* runner = nullptr;
  auto [code, message] =
      Take(KilnInterpreterGetSignatureRunner(it, "nope", &runner));
  EXPECT_EQ(code, KILN_STATUS_NOT_FOUND);
  EXPECT_THAT(message, HasSubstr("'serving_default'"));
  ASSERT_TRUE(
      Ok(KilnInterpreterGetSignatureRunner(it, "serving_default", &runner)));
  ASSERT_EQ(KilnSignatureRunnerInputCount(runner), 2);
  EXPECT_STREQ(KilnSignatureRunnerInputName(runner, 0), "x");
  EXPECT_STREQ(KilnSignatureRunnerInputName(runner, 1), "y");
  ASSERT_EQ(KilnSignatureRunnerOutputCount(runner), 2);
  EXPECT_EQ(KilnSignatureRunnerInput(runner, "z"), nullptr);
  ASSERT_TRUE(Ok(KilnSignatureRunnerAllocateTensors(runner)));
  std::vector<float> x(8, 2.0f), y(8, 3.0f), prod(8), sum(8);
  ASSERT_TRUE(Ok(KilnTensorCopyFromBuffer(KilnSignatureRunnerInput(runner, "x"),
                                          x.data(), 32)));
  ASSERT_TRUE(Ok(KilnTensorCopyFromBuffer(KilnSignatureRunnerInput(runner, "y"),
                                          y.data(), 32)));
  ASSERT_TRUE(Ok(KilnSignatureRunnerInvoke(runner)));
  ASSERT_TRUE(Ok(KilnTensorCopyToBuffer(
      KilnSignatureRunnerOutput(runner, "prod"), prod.data(), 32)));
  ASSERT_TRUE(Ok(KilnTensorCopyToBuffer(
      KilnSignatureRunnerOutput(runner, "sum"), sum.data(), 32)));
  EXPECT_FLOAT_EQ(prod[0], 6.0f);
  EXPECT_FLOAT_EQ(sum[7], 5.0f);
  const int32_t dims[2] = {2, 8};
  ASSERT_TRUE(Ok(KilnSignatureRunnerResizeInput(runner, "x", dims, 2)));
  EXPECT_EQ(Take(KilnSignatureRunnerResizeInput(runner, "w", dims, 2)).first,
            KILN_STATUS_NOT_FOUND);
  KilnInterpreterDestroy(it);
  KilnInterpreterOptionsDestroy(options);
  KilnModelDestroy(model);
}

TEST(CApiTest, DelegateOptions) {
  SKIP_WITHOUT_MODELS();
  KilnModel* model = nullptr;
  ASSERT_TRUE(Ok(KilnModelCreateFromFile(
      ModelPath("misc/add_10x10.tflite").c_str(), &model)));
  KilnInterpreterOptions* options = CpuOptions();
  KilnInterpreterOptionsAddPluginPath(
      options,
      (std::string(KILN_TEST_BAD_PLUGIN_DIR) + "/libtest_delegate.so").c_str());
  KilnInterpreterOptionsAddDelegateTextSettings(options, "test_delegate",
                                                "min_partition_size: 1");
  RunAdd10x10(model, options);

  KilnInterpreterOptions* unknown = CpuOptions();
  KilnInterpreterOptionsAddDelegate(unknown, "no_such_delegate", nullptr, 0);
  KilnInterpreter* it = nullptr;
  auto [code, message] = Take(KilnInterpreterCreate(model, unknown, &it));
  EXPECT_EQ(code, KILN_STATUS_NOT_FOUND);
  EXPECT_THAT(message, HasSubstr("no_such_delegate"));
  KilnInterpreterOptionsDestroy(unknown);
  KilnInterpreterOptionsDestroy(options);
  KilnModelDestroy(model);
}

}  // namespace
