// Test fixture loading the built CPU plugin once per suite.
#ifndef KILN_PLUGINS_CPU_TESTS_CPU_KERNEL_TEST_UTIL_H_
#define KILN_PLUGINS_CPU_TESTS_CPU_KERNEL_TEST_UTIL_H_

#include <memory>

#include "gtest/gtest.h"
#include "runtime/single_node_runner.h"

namespace kiln {

class CpuKernelTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite();
  static void TearDownTestSuite();
  // The kernel covering (code, version); fails the test when none does.
  const KilnKernel& Kernel(int32_t code, int32_t version = 1,
                           const std::string& custom = "");
  // True when the plugin declares (code, version).
  bool Covers(int32_t code, int32_t version) const;
  static std::shared_ptr<LoadedPlugin> plugin_;
};

}  // namespace kiln

#endif  // KILN_PLUGINS_CPU_TESTS_CPU_KERNEL_TEST_UTIL_H_
