// Run with OCL_ICD_VENDORS=/nonexistent (set by CTest): no OpenCL platform.
// The plugin still loads and its delegate declines with a clear reason.
#include <cstdlib>
#include <string>

#include "delegate_harness.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kiln::opencl_test {
namespace {

using ::testing::HasSubstr;

TEST(OpenClUnavailableTest, CreateDeclinesPolitelyWithoutPlatforms) {
  const char* vendors = std::getenv("OCL_ICD_VENDORS");
  ASSERT_NE(vendors, nullptr)
      << "run through CTest, which sets OCL_ICD_VENDORS=/nonexistent";
  DelegateHarness h;
  const absl::Status loaded = h.Load();
  ASSERT_TRUE(loaded.ok()) << loaded;
  const absl::Status status = h.Create();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  const std::string message(status.message());
  EXPECT_THAT(message, HasSubstr("the OpenCL delegate cannot run here"));
  EXPECT_THAT(message, HasSubstr("no OpenCL platform is installed"));
  EXPECT_THAT(message, HasSubstr("install an OpenCL driver"));
}

}  // namespace
}  // namespace kiln::opencl_test
