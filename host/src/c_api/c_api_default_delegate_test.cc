// The default delegate and thread options of the application C API 1.2
// (KilnInterpreterOptionsSetUseDefaultDelegates, ...SetNumThreads), through
// libkiln.so only, with the build tree's CPU and xnnpack plugins. Which nodes
// XNNPACK runs comes from the model as LiteRT reads it: int8 MobileNetV2 has
// 65 nodes; all but its int8 SOFTMAX (which this libXNNPACK's subgraph API
// runs on float32 only) are int8 ops the delegate claims by default (its
// FULLY_CONNECTED, with per-channel weights, as a 1x1 convolution).
#include <filesystem>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kiln/kiln_c_api.h"

namespace {

using ::testing::HasSubstr;

const char kModel[] = "/converter/mobilenet_v2_int8.tflite";

std::string PluginPath(const char* file) {
  return std::string(KILN_TEST_PLUGIN_DIR) + "/" + file;
}

// Delegated nodes of an interpreter over int8 MobileNetV2 with the CPU and
// xnnpack plugins; `configure` sets further options. -1 on failure.
template <typename Configure>
int32_t DelegatedNodes(Configure configure, std::string* delegate_name) {
  KilnModel* model = nullptr;
  KilnError* e = KilnModelCreateFromFile(
      (std::string(KILN_SHARED_MODELS_DIR) + kModel).c_str(), &model);
  if (e != nullptr) {
    ADD_FAILURE() << KilnErrorMessage(e);
    KilnErrorDestroy(e);
    return -1;
  }
  KilnInterpreterOptions* o = KilnInterpreterOptionsCreate();
  KilnInterpreterOptionsSetUseDefaultPlugins(o, 0);
  KilnInterpreterOptionsAddPluginPath(o, PluginPath("libkiln_cpu.so").c_str());
  KilnInterpreterOptionsAddPluginPath(o,
                                      PluginPath("libkiln_xnnpack.so").c_str());
  configure(o);
  KilnInterpreter* interpreter = nullptr;
  e = KilnInterpreterCreate(model, o, &interpreter);
  KilnInterpreterOptionsDestroy(o);
  int32_t delegated = -1;
  if (e != nullptr) {
    ADD_FAILURE() << KilnErrorMessage(e);
    KilnErrorDestroy(e);
  } else {
    delegated = 0;
    for (int32_t n = 0; n < KilnInterpreterNodeCount(interpreter, 0); ++n) {
      KilnNodeInfo info;
      info.struct_size = KILN_NODE_INFO_STRUCT_SIZE;
      if (KilnInterpreterGetNodeInfo(interpreter, 0, n, &info) == nullptr &&
          info.delegated != 0) {
        ++delegated;
        *delegate_name = info.delegate_name;
      }
    }
    KilnInterpreterDestroy(interpreter);
  }
  KilnModelDestroy(model);
  return delegated;
}

class DefaultDelegateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(
            std::string(KILN_SHARED_MODELS_DIR) + kModel, ec)) {
      GTEST_SKIP() << "shared model corpus absent";
    }
    if (!std::filesystem::is_regular_file(PluginPath("libkiln_xnnpack.so"),
                                          ec)) {
      GTEST_SKIP() << "libkiln_xnnpack.so not built (libxnnpack-dev absent)";
    }
  }
};

TEST_F(DefaultDelegateTest, XnnpackRunsTheInt8NodesByDefault) {
  std::string name;
  EXPECT_EQ(DelegatedNodes([](KilnInterpreterOptions*) {}, &name), 64);
  EXPECT_EQ(name, "xnnpack");
}

TEST_F(DefaultDelegateTest, TurnedOffByTheOptionOrByDelegateNone) {
  std::string name;
  EXPECT_EQ(DelegatedNodes(
                [](KilnInterpreterOptions* o) {
                  KilnInterpreterOptionsSetUseDefaultDelegates(o, 0);
                },
                &name),
            0);
  EXPECT_EQ(DelegatedNodes(
                [](KilnInterpreterOptions* o) {
                  KilnInterpreterOptionsAddDelegate(o, "none", nullptr, 0);
                },
                &name),
            0);
}

TEST_F(DefaultDelegateTest, NumThreadsReachesTheDelegate) {
  std::string name;
  EXPECT_EQ(DelegatedNodes(
                [](KilnInterpreterOptions* o) {
                  EXPECT_EQ(KilnInterpreterOptionsSetNumThreads(o, 2), nullptr);
                },
                &name),
            64);
}

TEST(NumThreadsTest, RefusesNegativeCountsAndNull) {
  KilnInterpreterOptions* o = KilnInterpreterOptionsCreate();
  KilnError* e = KilnInterpreterOptionsSetNumThreads(o, -1);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(KilnErrorCode(e), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(KilnErrorMessage(e), HasSubstr("num_threads is -1"));
  KilnErrorDestroy(e);
  e = KilnInterpreterOptionsSetNumThreads(nullptr, 1);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(KilnErrorCode(e), KILN_STATUS_INVALID_ARGUMENT);
  KilnErrorDestroy(e);
  EXPECT_EQ(KilnInterpreterOptionsSetNumThreads(o, 0), nullptr);
  KilnInterpreterOptionsSetUseDefaultDelegates(nullptr, 0);  // no crash
  KilnInterpreterOptionsDestroy(o);
}

}  // namespace
