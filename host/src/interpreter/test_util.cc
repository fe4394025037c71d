#include "interpreter/test_util.h"

#include <deque>
#include <filesystem>
#include <mutex>

#include "base/status_macros.h"
#include "gtest/gtest.h"

namespace kiln::testing {

std::string SharedModelPath(const std::string& relative) {
  return std::string(KILN_SHARED_MODELS_DIR) + "/" + relative;
}

bool SharedModelsPresent() {
  std::error_code ec;
  return std::filesystem::is_directory(KILN_SHARED_MODELS_DIR, ec);
}

std::string CpuPluginPath() {
  return std::string(KILN_TEST_PLUGIN_DIR) + "/libkiln_cpu.so";
}

std::string TestDelegatePluginPath() {
  return std::string(KILN_TEST_BAD_PLUGIN_DIR) + "/libtest_delegate.so";
}

InterpreterOptions CpuOnlyOptions() {
  InterpreterOptions options;
  options.plugins.paths = {CpuPluginPath()};
  options.plugins.use_default_locations = false;
  return options;
}

InterpreterOptions WithTestDelegate(const std::string& text_settings) {
  InterpreterOptions options = CpuOnlyOptions();
  options.plugins.paths.push_back(TestDelegatePluginPath());
  DelegateRequest request;
  request.name = "test_delegate";
  request.is_text = true;
  request.text_settings = text_settings;
  options.delegates.push_back(request);
  return options;
}

absl::StatusOr<std::shared_ptr<const Model>> LoadBytes(
    std::vector<uint8_t> bytes, const std::string& label) {
  static std::mutex mu;
  static auto* storage = new std::deque<std::vector<uint8_t>>();
  const std::vector<uint8_t>* kept;
  {
    std::lock_guard<std::mutex> lock(mu);
    storage->push_back(std::move(bytes));
    kept = &storage->back();
  }
  return Model::FromBuffer(kept->data(), kept->size(), label);
}

absl::StatusOr<std::shared_ptr<const Model>> LoadBuilt(
    const ModelBuilder& builder) {
  KILN_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, builder.Build());
  return LoadBytes(std::move(bytes), "<built model>");
}

}  // namespace kiln::testing
