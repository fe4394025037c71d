// The interpreter's thread pool (kiln.parallel_for/1, extension API 1.3) on
// the converter's real models with the CPU plugin alone: outputs with 1 and
// with 3 threads are bit-identical (the CPU kernels split over output rows
// and channels only), the pool really ran (it started its threads), and a
// plugin instance capped at extension API 1.2, which the host does not
// offer the extension, falls back to serial kernels with the same outputs.
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "interpreter/interpreter.h"
#include "interpreter/test_util.h"

namespace kiln {
namespace {

using testing::CpuOnlyOptions;
using testing::SharedModelPath;

struct ModelRun {
  std::vector<std::vector<uint8_t>> outputs;
  int32_t pool_threads_started = -1;
};

// Deterministic inputs: floats in [-1, 1], other types random bytes.
void FillInputs(Interpreter& it) {
  std::mt19937 rng(12);
  for (int i = 0; i < it.num_inputs(); ++i) {
    TensorState* t = it.input(i);
    ASSERT_NE(t->data, nullptr);
    auto* bytes = static_cast<uint8_t*>(t->data);
    if (t->ElementType() == KILN_TYPE_FLOAT32) {
      std::uniform_real_distribution<float> dist(-1.f, 1.f);
      for (size_t j = 0; j + 4 <= t->bytes; j += 4) {
        const float v = dist(rng);
        std::memcpy(bytes + j, &v, 4);
      }
    } else {
      for (size_t j = 0; j < t->bytes; ++j) {
        bytes[j] = static_cast<uint8_t>(rng());
      }
    }
  }
}

ModelRun RunModel(const std::string& file, int32_t threads, uint32_t max_abi) {
  ModelRun run;
  auto model = Model::FromFile(SharedModelPath("converter/" + file));
  EXPECT_TRUE(model.ok()) << model.status();
  if (!model.ok()) return run;
  InterpreterOptions options = CpuOnlyOptions();
  options.use_default_delegates = false;
  options.num_threads = threads;
  options.plugins.max_abi_version = max_abi;
  auto it = Interpreter::Create(*model, options);
  EXPECT_TRUE(it.ok()) << it.status();
  if (!it.ok()) return run;
  absl::Status s = (*it)->AllocateTensors();
  EXPECT_TRUE(s.ok()) << s;
  if (!s.ok()) return run;
  FillInputs(**it);
  s = (*it)->Invoke();
  EXPECT_TRUE(s.ok()) << s;
  for (int i = 0; i < (*it)->num_outputs(); ++i) {
    run.outputs.push_back(testing::Read<uint8_t>((*it)->output(i)));
  }
  run.pool_threads_started = (*it)->pool_threads_started();
  return run;
}

class ThreadsCorpusTest : public ::testing::TestWithParam<const char*> {};

TEST_P(ThreadsCorpusTest, ThreeThreadsBitIdenticalToOneAndTo12Fallback) {
  KILN_SKIP_WITHOUT_SHARED_MODELS();
  const std::string file = GetParam();
  const ModelRun one = RunModel(file, 1, 0);
  const ModelRun three = RunModel(file, 3, 0);
  const ModelRun capped = RunModel(file, 3, KILN_MAKE_VERSION(1, 2, 0));
  ASSERT_FALSE(one.outputs.empty());
  EXPECT_EQ(one.pool_threads_started, 0);
  // The CPU plugin used the pool: its 2 worker threads were started.
  EXPECT_EQ(three.pool_threads_started, 2);
  // A 1.2 instance never sees kiln.parallel_for/1: no thread is started.
  EXPECT_EQ(capped.pool_threads_started, 0);
  ASSERT_EQ(three.outputs.size(), one.outputs.size());
  ASSERT_EQ(capped.outputs.size(), one.outputs.size());
  for (size_t i = 0; i < one.outputs.size(); ++i) {
    EXPECT_TRUE(three.outputs[i] == one.outputs[i]) << "output " << i;
    EXPECT_TRUE(capped.outputs[i] == one.outputs[i]) << "output " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Converter, ThreadsCorpusTest,
                         ::testing::Values("mobilenet_v2_float32.tflite",
                                           "mobilenet_v2_int8.tflite",
                                           "unet_small_int16x8.tflite",
                                           "transformer_block_float32.tflite",
                                           "transformer_block_int8.tflite",
                                           "unet_small_float32.tflite",
                                           "unet_small_int8.tflite"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string name = info.param;
                           name = name.substr(0, name.find('.'));
                           return name;
                         });

}  // namespace
}  // namespace kiln
