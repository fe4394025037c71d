// Tests of the application C API 1.2 additions (profiling, delegate
// capabilities, delegate buffer handles), through libkiln.so only, on
// misc/add_10x10.tflite (Identity = a + b, 10x10 float32; LiteRT reads one
// ADD node). Buffer handles use the test delegate's fake device memory
// (host/src/interpreter/test_plugins/test_delegate_buffers.h).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "interpreter/test_plugins/test_delegate_buffers.h"
#include "kiln/kiln_c_api.h"

namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr const char* kModel = "misc/add_10x10.tflite";
constexpr int kElements = 100;

std::string ModelPath() {
  return std::string(KILN_SHARED_MODELS_DIR) + "/" + kModel;
}

#define SKIP_WITHOUT_MODEL()                                         \
  do {                                                               \
    std::error_code ec;                                              \
    if (!std::filesystem::is_regular_file(ModelPath(), ec)) {        \
      GTEST_SKIP() << "shared model corpus absent: " << ModelPath(); \
    }                                                                \
  } while (0)

std::string Message(KilnError* e) {
  const std::string m = e == nullptr ? "" : KilnErrorMessage(e);
  KilnErrorDestroy(e);
  return m;
}

KilnStatus Code(KilnError* e) {
  const KilnStatus code = e == nullptr ? KILN_STATUS_OK : KilnErrorCode(e);
  KilnErrorDestroy(e);
  return code;
}

// An interpreter over add_10x10 with the CPU plugin, optionally profiling
// and with the test delegate keeping outputs in its device memory.
class Loaded {
 public:
  Loaded(bool profile, bool test_delegate) {
    error_ = Message(KilnModelCreateFromFile(ModelPath().c_str(), &model_));
    if (!error_.empty()) return;
    KilnInterpreterOptions* o = KilnInterpreterOptionsCreate();
    KilnInterpreterOptionsAddPluginPath(
        o, (std::string(KILN_TEST_PLUGIN_DIR) + "/libkiln_cpu.so").c_str());
    KilnInterpreterOptionsSetUseDefaultPlugins(o, 0);
    KilnInterpreterOptionsSetProfiling(o, profile ? 1 : 0);
    if (test_delegate) {
      KilnInterpreterOptionsAddPluginPath(
          o, (std::string(KILN_TEST_BAD_PLUGIN_DIR) + "/libtest_delegate.so")
                 .c_str());
      KilnInterpreterOptionsAddDelegateTextSettings(
          o, "test_delegate", "options { key: 'device_memory' value: 'true' }");
    }
    error_ = Message(KilnInterpreterCreate(model_, o, &interpreter_));
    KilnInterpreterOptionsDestroy(o);
    if (error_.empty()) {
      error_ = Message(KilnInterpreterAllocateTensors(interpreter_));
    }
  }
  ~Loaded() {
    KilnInterpreterDestroy(interpreter_);
    KilnModelDestroy(model_);
  }
  KilnInterpreter* get() const {
    return error_.empty() ? interpreter_ : nullptr;
  }
  const std::string& error() const { return error_; }

 private:
  KilnModel* model_ = nullptr;
  KilnInterpreter* interpreter_ = nullptr;
  std::string error_;
};

std::vector<float> Values(float start) {
  std::vector<float> v(kElements);
  for (int i = 0; i < kElements; ++i) v[i] = start + 0.25f * i;
  return v;
}

std::vector<float> Sum(const std::vector<float>& a,
                       const std::vector<float>& b) {
  std::vector<float> s(a.size());
  for (size_t i = 0; i < a.size(); ++i) s[i] = a[i] + b[i];
  return s;
}

TEST(CApi12ProfilingTest, EventsPerInvokeAndTrace) {
  SKIP_WITHOUT_MODEL();
  Loaded l(/*profile=*/true, /*test_delegate=*/false);
  KilnInterpreter* it = l.get();
  ASSERT_NE(it, nullptr) << l.error();
  ASSERT_EQ(Code(KilnInterpreterInvoke(it)), KILN_STATUS_OK);
  ASSERT_EQ(Code(KilnInterpreterInvoke(it)), KILN_STATUS_OK);
  const int32_t count = KilnInterpreterProfileEventCount(it);
  int adds = 0, runs = 0, setup = 0;
  for (int32_t i = 0; i < count; ++i) {
    KilnProfileEvent e;
    e.struct_size = KILN_PROFILE_EVENT_STRUCT_SIZE;
    ASSERT_EQ(Code(KilnInterpreterGetProfileEvent(it, i, &e)), KILN_STATUS_OK);
    EXPECT_GE(e.duration_us, 0);
    if (std::string(e.category) == "invoke") {
      EXPECT_STREQ(e.name, "ADD");
      EXPECT_STREQ(e.op, "ADD");
      EXPECT_EQ(e.node, 0);
      EXPECT_EQ(e.subgraph, 0);
      EXPECT_EQ(e.run, adds);
      EXPECT_EQ(e.depth, 1);
      EXPECT_THAT(e.plugin_path, HasSubstr("libkiln_cpu.so"));
      ++adds;
    } else if (std::string(e.category) == "run") {
      EXPECT_STREQ(e.name, "Invoke");
      ++runs;
    } else {
      EXPECT_EQ(e.run, -1) << e.category;
      ++setup;
    }
  }
  EXPECT_EQ(adds, 2);
  EXPECT_EQ(runs, 2);
  EXPECT_GE(setup, 2);  // the ADD's prepare and AllocateTensors at least

  KilnProfileEvent old;
  old.struct_size = 8;
  EXPECT_EQ(Code(KilnInterpreterGetProfileEvent(it, 0, &old)),
            KILN_STATUS_INVALID_ARGUMENT);
  KilnProfileEvent e;
  e.struct_size = KILN_PROFILE_EVENT_STRUCT_SIZE;
  EXPECT_THAT(Message(KilnInterpreterGetProfileEvent(it, count, &e)),
              HasSubstr("not in the snapshot"));

  const std::string path =
      ::testing::TempDir() + "/kiln_c_api_profile_trace.json";
  ASSERT_EQ(Code(KilnInterpreterWriteProfileTrace(it, path.c_str())),
            KILN_STATUS_OK);
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  std::remove(path.c_str());
  EXPECT_THAT(text, StartsWith("{\"traceEvents\":["));
  EXPECT_THAT(text, HasSubstr("\"ph\":\"X\""));
  EXPECT_THAT(Message(KilnInterpreterWriteProfileTrace(
                  it, "/nonexistent-dir/trace.json")),
              HasSubstr("/nonexistent-dir/trace.json"));

  KilnInterpreterSetProfiling(it, 0);
  ASSERT_EQ(Code(KilnInterpreterInvoke(it)), KILN_STATUS_OK);
  EXPECT_EQ(KilnInterpreterProfileEventCount(it), count);
  KilnInterpreterClearProfile(it);
  EXPECT_EQ(KilnInterpreterProfileEventCount(it), 0);
}

TEST(CApi12ProfilingTest, OffByDefault) {
  SKIP_WITHOUT_MODEL();
  Loaded l(/*profile=*/false, /*test_delegate=*/false);
  ASSERT_NE(l.get(), nullptr) << l.error();
  ASSERT_EQ(Code(KilnInterpreterInvoke(l.get())), KILN_STATUS_OK);
  EXPECT_EQ(KilnInterpreterProfileEventCount(l.get()), 0);
}

class CApi12BuffersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SKIP_WITHOUT_MODEL();
    loaded_ = std::make_unique<Loaded>(false, true);
    it_ = loaded_->get();
    ASSERT_NE(it_, nullptr) << loaded_->error();
    const void* extension = nullptr;
    ASSERT_EQ(Code(KilnInterpreterGetDelegateExtension(
                  it_, "test_delegate", KILN_TEST_DELEGATE_BUFFERS_ID,
                  &delegate_, &extension)),
              KILN_STATUS_OK);
    buffers_ = static_cast<const KilnTestDelegateBuffers*>(extension);
  }
  std::string TakeLog() {
    const std::string log = buffers_->copy_log(delegate_);
    buffers_->clear_copy_log(delegate_);
    return log;
  }
  // Binds a new device buffer holding `values` to `tensor`.
  float* Bind(KilnTensor* tensor, const std::vector<float>& values) {
    const int64_t handle = buffers_->create_buffer(delegate_, kElements);
    float* data = buffers_->buffer_data(delegate_, handle);
    std::copy(values.begin(), values.end(), data);
    EXPECT_EQ(Code(KilnInterpreterSetTensorBufferHandle(
                  it_, tensor, "test_delegate", handle)),
              KILN_STATUS_OK);
    return data;
  }

  std::unique_ptr<Loaded> loaded_;
  KilnInterpreter* it_ = nullptr;
  void* delegate_ = nullptr;
  const KilnTestDelegateBuffers* buffers_ = nullptr;
};

TEST_F(CApi12BuffersTest, ApplicationBuffersMakeNoHostCopy) {
  const std::vector<float> a = Values(1), b = Values(-3);
  Bind(KilnInterpreterInput(it_, 0), a);
  Bind(KilnInterpreterInput(it_, 1), b);
  KilnTensor* out =
      KilnInterpreterTensor(it_, KilnInterpreterOutputTensorIndex(it_, 0));
  const float* y = Bind(out, std::vector<float>(kElements, 0.f));
  for (int round = 0; round < 3; ++round) {
    ASSERT_EQ(Code(KilnInterpreterInvoke(it_)), KILN_STATUS_OK);
    EXPECT_EQ(TakeLog(), "") << "round " << round;
    EXPECT_EQ(std::vector<float>(y, y + kElements), Sum(a, b));
  }
  // The data accessor copies to host memory once.
  const float* host =
      static_cast<const float*>(KilnTensorData(KilnInterpreterOutput(it_, 0)));
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(std::vector<float>(host, host + kElements), Sum(a, b));
  EXPECT_EQ(TakeLog(), "from Identity\n");
  EXPECT_EQ(Code(KilnTensorSyncToHost(KilnInterpreterOutput(it_, 0))),
            KILN_STATUS_OK);
  EXPECT_EQ(TakeLog(), "");
}

TEST_F(CApi12BuffersTest, HostWritesReachTheBoundBuffer) {
  const std::vector<float> a = Values(2), b = Values(5);
  float* a_device = Bind(KilnInterpreterInput(it_, 0), Values(0));
  ASSERT_EQ(Code(KilnTensorCopyFromBuffer(KilnInterpreterInput(it_, 1),
                                          b.data(), b.size() * 4)),
            KILN_STATUS_OK);
  ASSERT_EQ(Code(KilnTensorCopyFromBuffer(KilnInterpreterInput(it_, 0),
                                          a.data(), a.size() * 4)),
            KILN_STATUS_OK);
  ASSERT_EQ(Code(KilnInterpreterInvoke(it_)), KILN_STATUS_OK);
  // a was written on the host after binding: copied in before the run.
  EXPECT_EQ(TakeLog(), "to a\n");
  EXPECT_EQ(std::vector<float>(a_device, a_device + kElements), a);
  std::vector<float> y(kElements);
  ASSERT_EQ(Code(KilnTensorCopyToBuffer(KilnInterpreterOutput(it_, 0), y.data(),
                                        y.size() * 4)),
            KILN_STATUS_OK);
  EXPECT_EQ(y, Sum(a, b));
  // The partition's own output buffer, read once through the accessor.
  EXPECT_EQ(TakeLog(), "from Identity\n");
}

TEST_F(CApi12BuffersTest, RefusalsSayWhy) {
  const void* extension = nullptr;
  void* delegate = nullptr;
  EXPECT_THAT(
      Message(KilnInterpreterGetDelegateExtension(
          it_, "test_delegate", "kiln.nothing/1", &delegate, &extension)),
      HasSubstr("it offers: kiln.delegate_decline_reasons/1"));
  EXPECT_EQ(extension, nullptr);
  EXPECT_EQ(
      Code(KilnInterpreterGetDelegateExtension(
          it_, "gpu", KILN_TEST_DELEGATE_BUFFERS_ID, &delegate, &extension)),
      KILN_STATUS_NOT_FOUND);
  EXPECT_THAT(Message(KilnInterpreterSetTensorBufferHandle(
                  it_, KilnInterpreterInput(it_, 0), "gpu", 1)),
              HasSubstr("no such delegate is active"));
  EXPECT_EQ(Code(KilnInterpreterSetTensorBufferHandle(it_, nullptr,
                                                      "test_delegate", 1)),
            KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(Code(KilnTensorSyncToHost(nullptr)), KILN_STATUS_INVALID_ARGUMENT);
}

}  // namespace
