// Tests of the application C API 1.1 additions, through libkiln.so only.
// Expected values come from the model files as LiteRT reads them
// (ai_edge_litert Interpreter.get_tensor_details), not from Kiln's code.
#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kiln/kiln_c_api.h"

namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string ModelPath(const std::string& relative) {
  return std::string(KILN_SHARED_MODELS_DIR) + "/" + relative;
}

#define SKIP_WITHOUT_MODEL(relative)                                         \
  do {                                                                       \
    std::error_code ec;                                                      \
    if (!std::filesystem::is_regular_file(ModelPath(relative), ec)) {        \
      GTEST_SKIP() << "shared model corpus absent: " << ModelPath(relative); \
    }                                                                        \
  } while (0)

// Creates an interpreter over `relative` with the build tree's CPU plugin.
class Loaded {
 public:
  explicit Loaded(const std::string& relative) {
    error_ = KilnModelCreateFromFile(ModelPath(relative).c_str(), &model_);
    if (error_ != nullptr) return;
    KilnInterpreterOptions* o = KilnInterpreterOptionsCreate();
    KilnInterpreterOptionsAddPluginPath(
        o, (std::string(KILN_TEST_PLUGIN_DIR) + "/libkiln_cpu.so").c_str());
    KilnInterpreterOptionsSetUseDefaultPlugins(o, 0);
    error_ = KilnInterpreterCreate(model_, o, &interpreter_);
    KilnInterpreterOptionsDestroy(o);
  }
  ~Loaded() {
    KilnInterpreterDestroy(interpreter_);
    KilnModelDestroy(model_);
    KilnErrorDestroy(error_);
  }
  KilnInterpreter* get() const { return interpreter_; }
  std::string error() const {
    return error_ == nullptr ? "" : KilnErrorMessage(error_);
  }

 private:
  KilnModel* model_ = nullptr;
  KilnInterpreter* interpreter_ = nullptr;
  KilnError* error_ = nullptr;
};

TEST(CApi11Test, DefaultPluginDirectoryIsBesideLibkiln) {
  // Oracle: where the dynamic loader says libkiln.so is.
  Dl_info info;
  ASSERT_NE(dladdr(reinterpret_cast<void*>(&KilnRuntimeVersion), &info), 0);
  const std::filesystem::path libkiln =
      std::filesystem::canonical(info.dli_fname);
  EXPECT_EQ(std::string(KilnDefaultPluginDirectory()),
            (libkiln.parent_path() / "kiln" / "plugins").string());
  EXPECT_THAT(KilnDefaultPluginDirectoryOrigin(),
              StartsWith("beside libkiln (" + libkiln.string() + ")"));
  // The build tree keeps the installed layout: the CPU plugin is there.
  EXPECT_TRUE(std::filesystem::exists(
      std::filesystem::path(KilnDefaultPluginDirectory()) / "libkiln_cpu.so"));
  // Built from this tree: at least C API 1.1, where these functions appeared.
  EXPECT_GE(KilnCApiVersion(), KILN_MAKE_VERSION(1, 1, 0));
}

TEST(CApi11Test, TensorsByIndexQuantizationAndShapeSignature) {
  SKIP_WITHOUT_MODEL("misc/pc_conv.bin");
  Loaded l("misc/pc_conv.bin");
  ASSERT_NE(l.get(), nullptr) << l.error();
  KilnInterpreter* it = l.get();
  ASSERT_EQ(KilnInterpreterTensorCount(it), 6);
  EXPECT_EQ(KilnInterpreterInputTensorIndex(it, 0), 4);
  EXPECT_EQ(KilnInterpreterOutputTensorIndex(it, 0), 5);
  EXPECT_EQ(KilnInterpreterInputTensorIndex(it, 1), -1);
  EXPECT_EQ(KilnInterpreterTensor(it, 4), KilnInterpreterInput(it, 0));
  EXPECT_EQ(KilnInterpreterTensor(it, 6), nullptr);
  EXPECT_EQ(KilnInterpreterTensor(it, -1), nullptr);

  // Conv/weights: int8 [1,3,3,128], per-channel along dimension 3.
  const KilnTensor* weights = KilnInterpreterTensor(it, 1);
  ASSERT_NE(weights, nullptr);
  EXPECT_STREQ(KilnTensorName(weights), "Conv/weights");
  KilnTensorQuantizationInfo q;
  q.struct_size = KILN_TENSOR_QUANTIZATION_INFO_STRUCT_SIZE;
  ASSERT_EQ(KilnTensorGetQuantizationInfo(weights, &q), nullptr);
  EXPECT_EQ(q.num_scales, 128);
  EXPECT_EQ(q.num_zero_points, 128);
  EXPECT_EQ(q.quantized_dimension, 3);
  ASSERT_NE(q.scales, nullptr);
  EXPECT_GT(q.scales[127], 0.f);
  EXPECT_EQ(q.zero_points[0], 0);
  // Per-channel tensors have no single (scale, zero point).
  float scale = 0;
  int64_t zero_point = 0;
  EXPECT_EQ(KilnTensorQuantization(weights, &scale, &zero_point), 0);

  // output_int8: per-tensor, zero point 7.
  q.struct_size = KILN_TENSOR_QUANTIZATION_INFO_STRUCT_SIZE;
  ASSERT_EQ(KilnTensorGetQuantizationInfo(KilnInterpreterTensor(it, 3), &q),
            nullptr);
  EXPECT_EQ(q.num_scales, 1);
  EXPECT_EQ(q.zero_points[0], 7);

  // The float input is not quantized.
  q.struct_size = KILN_TENSOR_QUANTIZATION_INFO_STRUCT_SIZE;
  ASSERT_EQ(KilnTensorGetQuantizationInfo(KilnInterpreterInput(it, 0), &q),
            nullptr);
  EXPECT_EQ(q.num_scales, 0);
  EXPECT_EQ(q.scales, nullptr);

  // A struct from no release is refused with the macro to use.
  q.struct_size = 4;
  KilnError* e = KilnTensorGetQuantizationInfo(weights, &q);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(KilnErrorCode(e), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(KilnErrorMessage(e),
              HasSubstr("KILN_TENSOR_QUANTIZATION_INFO_STRUCT_SIZE"));
  KilnErrorDestroy(e);

  // No shape signature in this model: it equals the shape.
  const KilnTensor* input = KilnInterpreterInput(it, 0);
  ASSERT_EQ(KilnTensorShapeSignatureNumDims(input), 4);
  EXPECT_EQ(KilnTensorShapeSignatureDim(input, 1), 128);
  EXPECT_EQ(KilnTensorShapeSignatureDim(input, 4), -1);
}

TEST(CApi11Test, ShapeSignatureMarksTheResizableBatch) {
  SKIP_WITHOUT_MODEL("quantization-testdata/gather_nd.bin");
  Loaded l("quantization-testdata/gather_nd.bin");
  ASSERT_NE(l.get(), nullptr) << l.error();
  // Input 0: shape [1, 2, 3], shape signature [-1, 2, 3].
  KilnTensor* input = KilnInterpreterInput(l.get(), 0);
  ASSERT_EQ(KilnTensorShapeSignatureNumDims(input), 3);
  EXPECT_EQ(KilnTensorShapeSignatureDim(input, 0), -1);
  EXPECT_EQ(KilnTensorShapeSignatureDim(input, 2), 3);
  const int32_t dims[] = {4, 2, 3};
  ASSERT_EQ(KilnInterpreterResizeInput(l.get(), 0, dims, 3), nullptr);
  EXPECT_EQ(KilnTensorDim(input, 0), 4);
  EXPECT_EQ(KilnTensorShapeSignatureDim(input, 0), -1);
}

TEST(CApi11Test, SignatureTensorIndices) {
  SKIP_WITHOUT_MODEL("tflite-testdata/add_quantized_int8.bin");
  Loaded l("tflite-testdata/add_quantized_int8.bin");
  ASSERT_NE(l.get(), nullptr) << l.error();
  KilnSignatureRunner* runner = nullptr;
  ASSERT_EQ(
      KilnInterpreterGetSignatureRunner(l.get(), "serving_default", &runner),
      nullptr);
  // Signature input 'a' is the tensor called 'input' (index 1).
  EXPECT_EQ(KilnSignatureRunnerInputTensorIndex(runner, "a"), 1);
  EXPECT_EQ(KilnSignatureRunnerInputTensorIndex(runner, "nope"), -1);
  EXPECT_EQ(KilnSignatureRunnerOutputTensorIndex(runner, "x"),
            KilnInterpreterOutputTensorIndex(l.get(), 0));
  EXPECT_EQ(KilnSignatureRunnerInputTensorIndex(runner, nullptr), -1);
}

TEST(CApi11Test, PluginProbeAndNodeInfo) {
  SKIP_WITHOUT_MODEL("misc/mobilenet_like_model.bin");
  Loaded l("misc/mobilenet_like_model.bin");
  ASSERT_NE(l.get(), nullptr) << l.error();
  KilnPluginProbe* probe = nullptr;
  ASSERT_EQ(KilnInterpreterGetPluginProbe(l.get(), &probe), nullptr);
  ASSERT_EQ(KilnPluginProbeCount(probe), 1);
  EXPECT_STREQ(KilnPluginProbeName(probe, 0), "kiln_cpu");
  EXPECT_EQ(KilnPluginProbeLoaded(probe, 0), 1);
  EXPECT_NE(KilnPluginProbeNegotiatedVersion(probe, 0), 0u);
  const std::string cpu_path = KilnPluginProbePath(probe, 0);
  KilnPluginProbeDestroy(probe);

  ASSERT_EQ(KilnInterpreterSubgraphCount(l.get()), 1);
  // AVERAGE_POOL_2D, CONV_2D x2, DEPTHWISE_CONV_2D, MAX_POOL_2D, SOFTMAX.
  ASSERT_EQ(KilnInterpreterNodeCount(l.get(), 0), 6);
  EXPECT_EQ(KilnInterpreterNodeCount(l.get(), 1), 0);
  std::vector<std::string> ops;
  for (int32_t n = 0; n < 6; ++n) {
    KilnNodeInfo info;
    info.struct_size = KILN_NODE_INFO_STRUCT_SIZE;
    ASSERT_EQ(KilnInterpreterGetNodeInfo(l.get(), 0, n, &info), nullptr);
    EXPECT_EQ(info.index, n);
    EXPECT_EQ(info.host_intrinsic, 0);
    EXPECT_EQ(info.delegated, 0);
    EXPECT_EQ(info.partition_node, -1);
    EXPECT_EQ(std::string(info.plugin_path), cpu_path);
    EXPECT_STREQ(info.delegate_name, "");
    ops.push_back(info.op);
  }
  EXPECT_THAT(ops, ::testing::UnorderedElementsAre(
                       "AVERAGE_POOL_2D", "CONV_2D", "CONV_2D",
                       "DEPTHWISE_CONV_2D", "MAX_POOL_2D", "SOFTMAX"));
  KilnNodeInfo info;
  info.struct_size = KILN_NODE_INFO_STRUCT_SIZE;
  KilnError* e = KilnInterpreterGetNodeInfo(l.get(), 0, 6, &info);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(KilnErrorCode(e), KILN_STATUS_OUT_OF_RANGE);
  EXPECT_THAT(KilnErrorMessage(e), HasSubstr("has no node 6"));
  KilnErrorDestroy(e);
  EXPECT_EQ(KilnInterpreterWarningCount(l.get()), 0);
  EXPECT_EQ(KilnInterpreterWarning(l.get(), 0), nullptr);
}

TEST(CApi11Test, NullArgumentsAreSafe) {
  EXPECT_EQ(KilnInterpreterTensorCount(nullptr), 0);
  EXPECT_EQ(KilnInterpreterTensor(nullptr, 0), nullptr);
  EXPECT_EQ(KilnInterpreterInputTensorIndex(nullptr, 0), -1);
  EXPECT_EQ(KilnTensorShapeSignatureNumDims(nullptr), -1);
  EXPECT_EQ(KilnInterpreterSubgraphCount(nullptr), 0);
  EXPECT_EQ(KilnInterpreterWarningCount(nullptr), 0);
  KilnPluginProbe* probe = nullptr;
  KilnError* e = KilnInterpreterGetPluginProbe(nullptr, &probe);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(probe, nullptr);
  KilnErrorDestroy(e);
  KilnTensorQuantizationInfo q;
  q.struct_size = KILN_TENSOR_QUANTIZATION_INFO_STRUCT_SIZE;
  e = KilnTensorGetQuantizationInfo(nullptr, &q);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(KilnErrorCode(e), KILN_STATUS_INVALID_ARGUMENT);
  KilnErrorDestroy(e);
}

TEST(CApi12Test, InsecurePluginDirectoryRefusedUnlessAllowed) {
  // A copy of the CPU plugin in a directory every user may write to.
  char pattern[] = "/tmp/kiln-c-api-insecure-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::string dir = pattern;
  std::filesystem::copy_file(
      std::string(KILN_TEST_PLUGIN_DIR) + "/libkiln_cpu.so",
      dir + "/libkiln_cpu.so");
  ASSERT_EQ(chmod(dir.c_str(), 0777), 0);
  for (int32_t allow : {0, 1}) {
    KilnInterpreterOptions* o = KilnInterpreterOptionsCreate();
    KilnInterpreterOptionsSetUseDefaultPlugins(o, 0);
    KilnInterpreterOptionsAddPluginDirectory(o, dir.c_str());
    if (allow) KilnInterpreterOptionsSetAllowInsecurePlugins(o, 1);
    KilnPluginProbe* probe = nullptr;
    ASSERT_EQ(KilnPluginProbeCreate(o, &probe), nullptr);
    ASSERT_EQ(KilnPluginProbeCount(probe), 1);
    EXPECT_EQ(KilnPluginProbeLoaded(probe, 0), allow);
    if (!allow) {
      EXPECT_THAT(KilnPluginProbeRefusalReason(probe, 0),
                  HasSubstr("is writable by every user (mode 0777)"));
    }
    KilnPluginProbeDestroy(probe);
    KilnInterpreterOptionsDestroy(o);
  }
  KilnInterpreterOptionsSetAllowInsecurePlugins(nullptr, 1);  // ignored
  std::filesystem::remove_all(dir);
}

}  // namespace
