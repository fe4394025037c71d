// Helpers for the interpreter's tests.
#ifndef KILN_HOST_INTERPRETER_TEST_UTIL_H_
#define KILN_HOST_INTERPRETER_TEST_UTIL_H_

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "interpreter/interpreter.h"
#include "model/model.h"
#include "model/model_builder.h"

// ASSERT that an absl::Status is OK, printing it otherwise.
#define KILN_ASSERT_OK(expr)                        \
  do {                                              \
    const absl::Status kiln_status_ = (expr);       \
    ASSERT_TRUE(kiln_status_.ok()) << kiln_status_; \
  } while (0)

namespace kiln::testing {

std::string SharedModelPath(const std::string& relative);
bool SharedModelsPresent();
#define KILN_SKIP_WITHOUT_SHARED_MODELS()                                    \
  do {                                                                       \
    if (!::kiln::testing::SharedModelsPresent()) {                           \
      GTEST_SKIP() << "shared model corpus absent: " KILN_SHARED_MODELS_DIR; \
    }                                                                        \
  } while (0)

std::string CpuPluginPath();
std::string TestDelegatePluginPath();

// Only the in-tree CPU plugin (no default locations).
InterpreterOptions CpuOnlyOptions();
// The CPU plugin plus the test delegate, applied with `text_settings`.
InterpreterOptions WithTestDelegate(const std::string& text_settings);

// Builds `builder` and loads the bytes (kept alive for the process).
absl::StatusOr<std::shared_ptr<const Model>> LoadBuilt(
    const ModelBuilder& builder);
// Loads bytes (copied and kept alive for the process).
absl::StatusOr<std::shared_ptr<const Model>> LoadBytes(
    std::vector<uint8_t> bytes, const std::string& label);

template <typename T>
void Fill(TensorState* t, const std::vector<T>& values) {
  ASSERT_NE(t, nullptr);
  ASSERT_NE(t->data, nullptr) << t->desc->name;
  ASSERT_EQ(t->bytes, values.size() * sizeof(T)) << t->desc->name;
  std::memcpy(t->data, values.data(), t->bytes);
}

template <typename T>
std::vector<T> Read(const TensorState* t) {
  if (t == nullptr || t->data == nullptr) return {};
  std::vector<T> out(t->bytes / sizeof(T));
  std::memcpy(out.data(), t->data, out.size() * sizeof(T));
  return out;
}

}  // namespace kiln::testing

#endif  // KILN_HOST_INTERPRETER_TEST_UTIL_H_
