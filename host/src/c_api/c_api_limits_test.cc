// The application C API's limits and cancellation (issue 10), through
// libkiln.so only, on models tools/kiln/tests/hardening_models.cc writes.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kiln/kiln_c_api.h"

namespace {

using ::testing::HasSubstr;

std::string HardeningModel(const char* name) {
  return std::string(KILN_BINARY_DIR) + "/hardening_models/" + name;
}

// The error's message, releasing it; "" for NULL.
std::string Message(KilnError* e) {
  if (e == nullptr) return "";
  std::string m = KilnErrorMessage(e);
  KilnErrorDestroy(e);
  return m;
}

// The error's code, releasing it.
KilnStatus Code(KilnError* e) {
  if (e == nullptr) return KILN_STATUS_OK;
  const KilnStatus code = KilnErrorCode(e);
  KilnErrorDestroy(e);
  return code;
}

// A model and an interpreter over it with options set by `configure`.
class LimitsRun {
 public:
  template <typename Configure>
  LimitsRun(const std::string& path, Configure configure) {
    error_ = Message(KilnModelCreateFromFile(path.c_str(), &model_));
    if (!error_.empty()) return;
    KilnInterpreterOptions* o = KilnInterpreterOptionsCreate();
    KilnInterpreterOptionsSetUseDefaultPlugins(o, 0);
    KilnInterpreterOptionsAddPluginPath(
        o, (std::string(KILN_TEST_PLUGIN_DIR) + "/libkiln_cpu.so").c_str());
    configure(o);
    error_ = Message(KilnInterpreterCreate(model_, o, &interpreter_));
    KilnInterpreterOptionsDestroy(o);
  }
  ~LimitsRun() {
    KilnInterpreterDestroy(interpreter_);
    KilnModelDestroy(model_);
  }
  KilnInterpreter* get() { return interpreter_; }
  const std::string& error() const { return error_; }

  // Allocates and sets the WHILE model's flag.
  KilnError* Prepare(bool flag) {
    if (KilnError* e = KilnInterpreterAllocateTensors(interpreter_)) return e;
    const uint8_t value = flag ? 1 : 0;
    return KilnTensorCopyFromBuffer(KilnInterpreterInput(interpreter_, 0),
                                    &value, 1);
  }

 private:
  KilnModel* model_ = nullptr;
  KilnInterpreter* interpreter_ = nullptr;
  std::string error_;
};

TEST(CApiLimitsTest, SettersRefuseBadArguments) {
  EXPECT_EQ(Code(KilnInterpreterOptionsSetMaxArenaBytes(nullptr, 1)),
            KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(Code(KilnInterpreterOptionsSetMaxWhileIterations(nullptr, 1)),
            KILN_STATUS_INVALID_ARGUMENT);
  KilnInterpreterOptions* o = KilnInterpreterOptionsCreate();
  EXPECT_THAT(Message(KilnInterpreterOptionsSetInvokeTimeout(o, -1)),
              HasSubstr("timeout_ms is -1"));
  EXPECT_EQ(Code(KilnInterpreterOptionsSetInvokeTimeout(o, 10)),
            KILN_STATUS_OK);
  KilnInterpreterOptionsDestroy(o);
  KilnInterpreterCancel(nullptr);  // ignored
}

TEST(CApiLimitsTest, MaxArenaBytesRefusesALargerTensorAtCreation) {
  LimitsRun run(
      HardeningModel("big_input.tflite"), [](KilnInterpreterOptions* o) {
        EXPECT_EQ(KilnInterpreterOptionsSetMaxArenaBytes(o, 1000), nullptr);
      });
  EXPECT_THAT(run.error(), HasSubstr("tensor 0 'x' with shape [256,1024] of "
                                     "FLOAT32 needs 1048576 bytes, more than "
                                     "the limit of 1000 bytes"));
  LimitsRun lifted(
      HardeningModel("big_input.tflite"), [](KilnInterpreterOptions* o) {
        EXPECT_EQ(KilnInterpreterOptionsSetMaxArenaBytes(o, 0), nullptr);
      });
  EXPECT_EQ(lifted.error(), "");
}

TEST(CApiLimitsTest, MaxWhileIterations) {
  LimitsRun run(
      HardeningModel("while_flag.tflite"), [](KilnInterpreterOptions* o) {
        EXPECT_EQ(KilnInterpreterOptionsSetMaxWhileIterations(o, 1000),
                  nullptr);
      });
  ASSERT_EQ(run.error(), "");
  ASSERT_EQ(Message(run.Prepare(true)), "");
  KilnError* e = KilnInterpreterInvoke(run.get());
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(KilnErrorCode(e), KILN_STATUS_RESOURCE_EXHAUSTED);
  EXPECT_THAT(KilnErrorMessage(e), HasSubstr("more than 1000 iterations"));
  KilnErrorDestroy(e);
}

TEST(CApiLimitsTest, InvokeTimeout) {
  LimitsRun run(
      HardeningModel("while_flag.tflite"), [](KilnInterpreterOptions* o) {
        EXPECT_EQ(KilnInterpreterOptionsSetInvokeTimeout(o, 20), nullptr);
      });
  ASSERT_EQ(run.error(), "");
  ASSERT_EQ(Message(run.Prepare(true)), "");
  EXPECT_EQ(Code(KilnInterpreterInvoke(run.get())),
            KILN_STATUS_DEADLINE_EXCEEDED);
}

TEST(CApiLimitsTest, CancelFromAnotherThreadThenInvokeAgain) {
  LimitsRun run(HardeningModel("while_flag.tflite"),
                [](KilnInterpreterOptions*) {});
  ASSERT_EQ(run.error(), "");
  ASSERT_EQ(Message(run.Prepare(true)), "");
  std::atomic<bool> done{false};
  std::thread canceller([&] {
    while (!done.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      KilnInterpreterCancel(run.get());
    }
  });
  KilnError* e = KilnInterpreterInvoke(run.get());
  done.store(true);
  canceller.join();
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(KilnErrorCode(e), KILN_STATUS_CANCELLED);
  EXPECT_THAT(KilnErrorMessage(e), HasSubstr("Invoke cancelled"));
  KilnErrorDestroy(e);
  // Usable afterwards: a false flag ends the loop at once.
  const uint8_t stop = 0;
  ASSERT_EQ(Message(KilnTensorCopyFromBuffer(KilnInterpreterInput(run.get(), 0),
                                             &stop, 1)),
            "");
  EXPECT_EQ(Message(KilnInterpreterInvoke(run.get())), "");
}

}  // namespace
