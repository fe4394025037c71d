// Test fixture loading the built CPU plugin once per suite.
#ifndef KILN_PLUGINS_CPU_TESTS_CPU_KERNEL_TEST_UTIL_H_
#define KILN_PLUGINS_CPU_TESTS_CPU_KERNEL_TEST_UTIL_H_

#include <memory>
#include <string>

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

// Calls only init + prepare (with resizing allowed), as the host does before
// the values of non-constant inputs exist. Returns prepare's status (init's
// if that failed) and its error message in *error; frees the state.
KilnStatus PrepareOnly(const KilnKernel& kernel, SingleNodeRunner& r,
                       std::string* error);

}  // namespace kiln

#endif  // KILN_PLUGINS_CPU_TESTS_CPU_KERNEL_TEST_UTIL_H_
