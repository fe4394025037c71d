#include "interpreter/op_support_table.h"

#include <string>

#include "gtest/gtest.h"
#include "interpreter/op_resolution.h"
#include "interpreter/test_util.h"
#include "kiln/kiln_builtin_ops.h"
#include "kiln/kiln_version.h"
#include "runtime/single_node_runner.h"

namespace kiln {
namespace {

TEST(OpSupportTableTest, CoversEveryVersionTheCpuPluginDeclares) {
  auto plugin = LoadPluginForTest(testing::CpuPluginPath());
  ASSERT_TRUE(plugin.ok()) << plugin.status();
  std::string missing;
  for (const KilnKernel* k : (*plugin)->kernels()) {
    const std::string custom = k->custom_name != nullptr ? k->custom_name : "";
    for (int32_t v = k->min_version; v <= k->max_version; ++v) {
      const auto release = FirstReleaseSupporting(k->builtin_code, custom, v);
      if (!release || *release > KILN_RUNTIME_VERSION) {
        missing += "{KILN_OP_" + std::string(BuiltinOpName(k->builtin_code)) +
                   ", nullptr, " + std::to_string(k->min_version) + ", " +
                   std::to_string(k->max_version) + ", k0_1_0},\n";
        break;
      }
    }
  }
  EXPECT_TRUE(missing.empty()) << "op_support_table_cpu.inc lacks these rows:\n"
                               << missing;
}

TEST(OpSupportTableTest, HostIntrinsicOpsAreListed) {
  for (int32_t code : {KILN_OP_WHILE, KILN_OP_IF, KILN_OP_CALL_ONCE,
                       KILN_OP_VAR_HANDLE, KILN_OP_READ_VARIABLE,
                       KILN_OP_ASSIGN_VARIABLE, KILN_OP_STABLEHLO_COMPOSITE}) {
    EXPECT_TRUE(IsHostIntrinsicOp(code)) << code;
    EXPECT_EQ(FirstReleaseSupporting(code, "", 1), KILN_MAKE_VERSION(0, 1, 0));
  }
  EXPECT_FALSE(FirstReleaseSupporting(KILN_OP_WHILE, "", 2).has_value());
  EXPECT_EQ(NewestSupportedVersion(KILN_OP_WHILE, ""), 1);
  EXPECT_EQ(ReleaseString(KILN_MAKE_VERSION(1, 12, 3)), "1.12.3");
}

TEST(OpSupportTableTest, ComparesDottedVersionsNumerically) {
  bool ok = false;
  EXPECT_EQ(CompareDottedVersions("1.10.0", "1.9", &ok), 1);
  EXPECT_TRUE(ok);
  EXPECT_EQ(CompareDottedVersions("2.6", "2.6.0", &ok), 0);
  EXPECT_EQ(CompareDottedVersions("2.6.0", "2.20.0", &ok), -1);
  CompareDottedVersions("2.x", "1", &ok);
  EXPECT_FALSE(ok);
}

}  // namespace
}  // namespace kiln
