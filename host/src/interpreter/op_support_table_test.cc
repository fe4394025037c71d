#include "interpreter/op_support_table.h"

#include <map>
#include <set>
#include <string>
#include <tuple>

#include "gtest/gtest.h"
#include "interpreter/op_resolution.h"
#include "interpreter/test_util.h"
#include "kiln/kiln_builtin_ops.h"
#include "kiln/kiln_version.h"
#include "runtime/single_node_runner.h"

namespace kiln {
namespace {

// One op version: (builtin code, custom name, version).
using OpVersion = std::tuple<int32_t, std::string, int32_t>;

std::string RowText(int32_t code, const std::string& custom, int32_t min,
                    int32_t max, uint32_t release) {
  const std::string custom_text =
      custom.empty() ? "nullptr" : "\"" + custom + "\"";
  return "{KILN_OP_" + std::string(BuiltinOpName(code)) + ", " + custom_text +
         ", " + std::to_string(min) + ", " + std::to_string(max) + ", k" +
         std::to_string(KILN_VERSION_MAJOR(release)) + "_" +
         std::to_string(KILN_VERSION_MINOR(release)) + "_" +
         std::to_string(KILN_VERSION_PATCH(release)) + "},";
}

// The release this build's rows may name: after a release, main builds
// toward the next minor, and the rows of what it adds name that release.
constexpr uint32_t kReleaseOfThisBuild = KILN_MAKE_VERSION(
    KILN_RUNTIME_VERSION_MAJOR, KILN_RUNTIME_VERSION_MINOR + 1, 0);

// Every op version this build runs: the CPU plugin's declared kernels and
// the host-intrinsic ops. *rows gets one table row per kernel range.
std::set<OpVersion> VersionsThisBuildRuns(
    const LoadedPlugin& cpu, std::map<OpVersion, std::string>* rows) {
  std::set<OpVersion> run;
  for (const KilnKernel* k : cpu.kernels()) {
    const std::string custom = k->custom_name != nullptr ? k->custom_name : "";
    for (int32_t v = k->min_version; v <= k->max_version; ++v) {
      run.insert({k->builtin_code, custom, v});
      (*rows)[{k->builtin_code, custom, v}] =
          RowText(k->builtin_code, custom, k->min_version, k->max_version,
                  kReleaseOfThisBuild);
    }
  }
  for (int32_t code = 0; code < 1024; ++code) {
    if (!IsHostIntrinsicOp(code)) continue;
    for (int32_t v = 1; v <= HostIntrinsicMaxVersion(code); ++v) {
      run.insert({code, "", v});
    }
  }
  return run;
}

// Every op version the table says this release runs.
std::set<OpVersion> VersionsTheTableClaims() {
  std::set<OpVersion> claimed;
  for (const OpSupportEntry& e : OpSupportTable()) {
    if (e.first_release > kReleaseOfThisBuild) continue;
    for (int32_t v = e.min_version; v <= e.max_version; ++v) {
      claimed.insert({e.builtin_code, e.custom_name ? e.custom_name : "", v});
    }
  }
  return claimed;
}

// The rows of op_support_table_cpu.inc are what the CPU plugin registers:
// every version it declares is listed (else an old model's "upgrade Kiln"
// hint is wrong), and every version the table says this release runs is run
// by the plugin or the host (else the hint promises what no release does).
TEST(OpSupportTableTest, RowsMatchWhatTheCpuPluginAndHostRun) {
  auto plugin = LoadPluginForTest(testing::CpuPluginPath());
  ASSERT_TRUE(plugin.ok()) << plugin.status();
  std::map<OpVersion, std::string> rows;
  const std::set<OpVersion> run = VersionsThisBuildRuns(**plugin, &rows);
  const std::set<OpVersion> claimed = VersionsTheTableClaims();
  std::set<std::string> missing;
  for (const OpVersion& v : run) {
    if (claimed.count(v) == 0) missing.insert(rows[v]);
  }
  std::string unrun;
  for (const auto& [code, custom, version] : claimed) {
    if (run.count({code, custom, version}) == 0) {
      unrun += "  " + std::string(BuiltinOpName(code)) +
               (custom.empty() ? "" : " '" + custom + "'") + " version " +
               std::to_string(version) + "\n";
    }
  }
  std::string missing_text;
  for (const std::string& row : missing) missing_text += row + "\n";
  EXPECT_TRUE(missing.empty())
      << "op_support_table_cpu.inc lacks these rows (the CPU plugin "
         "registers them):\n"
      << missing_text;
  EXPECT_TRUE(unrun.empty())
      << "the op support table says Kiln " KILN_RUNTIME_VERSION_STRING
         " runs these op versions, but neither the CPU plugin nor the host "
         "does; fix or remove their rows:\n"
      << unrun;
}

// Rows of one release do not overlap: each op version is listed once.
TEST(OpSupportTableTest, EachOpVersionIsListedOnce) {
  std::map<OpVersion, int> count;
  for (const OpSupportEntry& e : OpSupportTable()) {
    for (int32_t v = e.min_version; v <= e.max_version; ++v) {
      ++count[{e.builtin_code, e.custom_name ? e.custom_name : "", v}];
    }
  }
  for (const auto& [op, n] : count) {
    EXPECT_EQ(n, 1) << BuiltinOpName(std::get<0>(op)) << " version "
                    << std::get<2>(op) << " is listed in " << n << " rows";
  }
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
