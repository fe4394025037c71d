// End-to-end tests of `kiln conformance`: the bad-plugin corpus must be
// reported with the right check and verdict (never kill the runner), and
// every in-tree plugin must pass.
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace kiln {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

struct ConformanceRun {
  int exit_code = -1;
  std::string output;
  nlohmann::json report;
  std::string junit, html;
};

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs the kiln binary on `plugin` with every report format.
ConformanceRun RunConformance(const std::string& plugin,
                              const std::string& extra = "") {
  const std::string dir =
      (fs::temp_directory_path() /
       ("kiln_conformance_test_" + std::to_string(::getpid()) + "_" +
        fs::path(plugin).stem().string()))
          .string();
  fs::create_directories(dir);
  const std::string json = dir + "/report.json", junit = dir + "/report.xml",
                    html = dir + "/report.html", log = dir + "/output.txt";
  const std::string command =
      std::string("'") + KILN_BINARY_DIR + "/bin/kiln' conformance '" + plugin +
      "' --report '" + json + "' --junit '" + junit + "' --html '" + html +
      "' " + extra + " > '" + log + "' 2>&1";
  ConformanceRun run;
  const int status = std::system(command.c_str());
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.output = ReadAll(log);
  run.report = nlohmann::json::parse(ReadAll(json), nullptr, false);
  run.junit = ReadAll(junit);
  run.html = ReadAll(html);
  fs::remove_all(dir);
  return run;
}

const nlohmann::json* FindCheck(const ConformanceRun& run,
                                const std::string& name) {
  if (!run.report.is_object()) return nullptr;
  for (const nlohmann::json& c : run.report["checks"]) {
    if (c.value("name", "") == name) return &c;
  }
  return nullptr;
}

// Asserts check `name` has `verdict` and a message containing `text`.
void ExpectCheck(const ConformanceRun& run, const std::string& name,
                 const std::string& verdict, const std::string& text) {
  const nlohmann::json* c = FindCheck(run, name);
  ASSERT_NE(c, nullptr) << "no check '" << name << "' in the report; output:\n"
                        << run.output;
  EXPECT_EQ(c->value("verdict", ""), verdict) << c->dump(2);
  EXPECT_THAT(c->value("message", ""), HasSubstr(text));
}

std::string BadPlugin(const std::string& variant) {
  return std::string(KILN_CONFORMANCE_BAD_PLUGIN_DIR) + "/libbad_plugin_" +
         variant + ".so";
}

// Fast settings for the corpus: small timeout and cycle counts.
constexpr char kQuick[] = "--timeout 5 --cycles 10 --threads 2";

TEST(KilnConformanceBadPluginTest, CrashInPrepareIsReportedAsSigsegv) {
  const ConformanceRun run =
      RunConformance(BadPlugin("crash_in_prepare"), kQuick);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  ExpectCheck(run, "execute:ADD/v1@1.1", "fail", "SIGSEGV");
  ExpectCheck(run, "execute:ADD/v1@1.0", "fail", "crash");
  // The crash kills only that check: later checks still ran.
  ExpectCheck(run, "load_unload:x10", "pass", "load/unload cycles");
}

TEST(KilnConformanceBadPluginTest, HangInInvokeIsKilledAfterTimeout) {
  const ConformanceRun run = RunConformance(
      BadPlugin("hang_in_invoke"), "--timeout 1 --cycles 10 --threads 2");
  EXPECT_EQ(run.exit_code, 1) << run.output;
  ExpectCheck(run, "execute:ADD/v1@1.1", "fail", "timeout");
  ExpectCheck(run, "negotiation@1.0", "pass", "accepted");
}

TEST(KilnConformanceBadPluginTest, ExceptionAcrossTheBoundaryIsReported) {
  const ConformanceRun run = RunConformance(BadPlugin("throws"), kQuick);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  ExpectCheck(run, "execute:ADD/v1@1.1", "fail",
              "C++ exception crossed the plugin's C boundary");
  ExpectCheck(run, "execute:ADD/v1@1.1", "fail", "std::runtime_error");
}

TEST(KilnConformanceBadPluginTest, WrongOutputsDifferFromReference) {
  const ConformanceRun run = RunConformance(BadPlugin("wrong_outputs"), kQuick);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  ExpectCheck(run, "execute:ADD/v1@1.1", "fail",
              "differs from the reference (LiteRT");
  ExpectCheck(run, "execute:ADD/v1@1.0", "fail", "beyond the tolerance");
  ExpectCheck(run, "error_path:ADD/v1", "pass", "COMPLEX128");
}

TEST(KilnConformanceBadPluginTest, LyingDescriptorIsCaughtPerVersion) {
  const ConformanceRun run = RunConformance(BadPlugin("lying_ranges"), kQuick);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  // v2..v9 get what ADD v2..v5 introduced (int8, int16, int64 inputs),
  // which the float code refuses.
  ExpectCheck(run, "execute:ADD/v1@1.1", "pass", "matches LiteRT");
  ExpectCheck(run, "execute:ADD/v2@1.1", "fail",
              "failed on a valid generated input");
  ExpectCheck(run, "execute:ADD/v3@1.1", "fail", "FLOAT32 inputs only");
  ExpectCheck(run, "execute:ADD/v9@1.2", "fail", "(v5 inputs");
  ExpectCheck(run, "version_ranges", "pass", "ADD v10");
}

TEST(KilnConformanceBadPluginTest, FloatOnlyKernelClaimingNewerVersionsFails) {
  // ABS v2..v5 get int8 / int16 (quantized), int16 and int32 inputs, what
  // those versions introduced; a float-only kernel fails them.
  const ConformanceRun run =
      RunConformance(BadPlugin("float_only_abs"), kQuick);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  ExpectCheck(run, "execute:ABS/v1@1.2", "pass", "matches LiteRT");
  ExpectCheck(run, "execute:ABS/v2@1.2", "fail", "");
  ExpectCheck(run, "execute:ABS/v3@1.2", "fail", "");
  ExpectCheck(run, "execute:ABS/v5@1.2", "fail", "");
}

TEST(KilnConformanceBadPluginTest, FloatOnlyAddClaimingV1To4Fails) {
  // ADD v2 int8 and v3 int16 (quantized), v4 int64: what those versions
  // added in TFLite; the float-only kernel refuses them.
  const ConformanceRun run =
      RunConformance(BadPlugin("float_only_add"), kQuick);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  ExpectCheck(run, "execute:ADD/v1@1.2", "pass", "matches LiteRT");
  for (const char* v : {"v2", "v3", "v4"}) {
    ExpectCheck(run, std::string("execute:ADD/") + v + "@1.2", "fail",
                "failed on a valid generated input");
  }
}

TEST(KilnConformanceBadPluginTest, StridedSliceClaimingV8WithTheV3PathFails) {
  // TFLite's STRIDED_SLICE v2 int8, v3 bool (element copies: the old path
  // handles them), v4 rank 5, v6 ellipsis_mask / new_axis_mask, v8 offset:
  // the kernel refuses rank 5 and ignores the masks and the offset.
  const ConformanceRun run =
      RunConformance(BadPlugin("strided_slice_old_path"), kQuick);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  for (const char* v : {"v1", "v2", "v3"}) {
    ExpectCheck(run, std::string("execute:STRIDED_SLICE/") + v + "@1.2", "pass",
                "matches LiteRT");
  }
  ExpectCheck(run, "execute:STRIDED_SLICE/v4@1.2", "fail", "rank <= 4");
  ExpectCheck(run, "execute:STRIDED_SLICE/v5@1.2", "fail", "rank <= 4");
  ExpectCheck(run, "execute:STRIDED_SLICE/v6@1.2", "fail", "output shape");
  ExpectCheck(run, "execute:STRIDED_SLICE/v7@1.2", "fail", "output shape");
  ExpectCheck(run, "execute:STRIDED_SLICE/v8@1.2", "fail", "output shape");
}

TEST(KilnConformanceBadPluginTest, CustomOpThatAlwaysFailsFails) {
  const ConformanceRun run =
      RunConformance(BadPlugin("custom_always_fails"), kQuick);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  ExpectCheck(run, "execute:CUSTOM 'KilnAlwaysFails'/v1@1.2", "fail",
              "KilnAlwaysFails always fails");
  ExpectCheck(run, "execute:CUSTOM 'KilnAlwaysFails'/v1@1.0", "fail",
              "--custom-cases");
  ExpectCheck(run, "execute:ADD/v1@1.2", "pass", "matches LiteRT");
}

TEST(KilnConformanceBadPluginTest, LeakIsReported) {
  const ConformanceRun run = RunConformance(BadPlugin("leaks"), kQuick);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  // "possible leak" from the RSS heuristic, or "leak: LeakSanitizer ..." in
  // a KILN_SANITIZE build.
  ExpectCheck(run, "leak:repeated_invocations", "fail", "leak");
}

std::string BadDelegate(const std::string& variant) {
  return std::string(KILN_CONFORMANCE_BAD_PLUGIN_DIR) + "/libbad_delegate_" +
         variant + ".so";
}

TEST(KilnConformanceBadDelegateTest, CrashInCreateFailsEveryDelegateCheck) {
  const ConformanceRun run =
      RunConformance(BadDelegate("crash_in_create"), kQuick);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  ExpectCheck(run, "delegate:ADD/v1", "fail", "SIGSEGV");
  ExpectCheck(run, "delegate:graph:chain:ADD", "fail", "SIGSEGV");
  ExpectCheck(run, "negotiation@1.2", "pass", "accepted");
}

TEST(KilnConformanceBadDelegateTest, CrashInPartitionIsReported) {
  const ConformanceRun run =
      RunConformance(BadDelegate("crash_in_partition"), kQuick);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  ExpectCheck(run, "delegate:MUL/v1", "fail", "SIGSEGV");
  ExpectCheck(run, "delegate:graph:interrupted:ADD+FLOOR", "fail", "crash");
}

TEST(KilnConformanceBadDelegateTest, CrashInInvokeIsReported) {
  const ConformanceRun run =
      RunConformance(BadDelegate("crash_in_invoke"), kQuick);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  ExpectCheck(run, "delegate:ADD/v1", "fail", "SIGSEGV");
  // Nothing is claimed for a version outside the declaration, so nothing
  // crashes there.
  ExpectCheck(run, "delegate:ADD/v2:outside_declaration", "pass",
              "left ADD v2");
}

TEST(KilnConformanceBadDelegateTest, ClaimOfUndeclaredNodesFails) {
  const ConformanceRun run =
      RunConformance(BadDelegate("claims_undeclared"), kQuick);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  ExpectCheck(run, "delegate:ADD/v2:outside_declaration", "fail",
              "claim outside the declared ops");
  ExpectCheck(run, "delegate:graph:interrupted:ADD+FLOOR", "fail",
              "claim outside the declared ops");
}

TEST(KilnConformanceBadDelegateTest, WrongOutputsDifferFromTheReference) {
  const ConformanceRun run =
      RunConformance(BadDelegate("wrong_outputs"), kQuick);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  ExpectCheck(run, "delegate:ADD/v1", "fail", "wrong output");
  ExpectCheck(run, "delegate:ADD/v1", "fail", "LiteRT");
  ExpectCheck(run, "delegate:MUL/v1", "pass", "outputs match the reference");
}

TEST(KilnConformanceBadDelegateTest, FloatOnlyDelegateClaimingV2Fails) {
  // ADD v2 brings int8 inputs; the delegate claims them (it declares any
  // type) and computes in float.
  const ConformanceRun run =
      RunConformance(BadDelegate("float_only_claims_v2"), kQuick);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  ExpectCheck(run, "delegate:ADD/v1", "pass", "outputs match the reference");
  ExpectCheck(run, "delegate:ADD/v2", "fail", "");
}

TEST(KilnConformanceInTreeTest, SdkExampleDelegatePasses) {
  const ConformanceRun run = RunConformance(
      std::string(KILN_CONFORMANCE_BAD_PLUGIN_DIR) + "/libacme_delegate.so",
      kQuick);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  ExpectCheck(run, "delegate:ADD/v1", "pass", "outputs match the reference");
  ExpectCheck(run, "delegate:MUL/v1", "pass", "outputs match the reference");
  ExpectCheck(run, "delegate:graph:chain:ADD", "pass", "delegated");
  ExpectCheck(run, "delegate:graph:interrupted:ADD+FLOOR", "pass",
              "2 of 3 node(s) delegated in 2 partition(s)");
  ExpectCheck(run, "delegate:ADD/v2:outside_declaration", "pass",
              "left ADD v2");
  // The reports name the delegate, its declaration and per-op verdicts.
  ASSERT_TRUE(run.report.is_object()) << run.output;
  EXPECT_EQ(run.report["plugin"]["delegate"]["name"], "acme");
  EXPECT_EQ(run.report["plugin"]["delegate"]["ops"].size(), 2u);
  EXPECT_EQ(run.report["host_levels"].back()["host"], "this host");
  EXPECT_THAT(run.html, HasSubstr("Delegate 'acme': declared ops and graphs"));
  EXPECT_THAT(run.html, HasSubstr("this host, capped (simulated)"));
  EXPECT_THAT(run.junit, HasSubstr("name=\"delegate:MUL/v1\""));
}

// --release-matrix: real released hosts' matrices (conformance/tests/data,
// real results of 0.1.0 and 0.1.0-ext1.0, trimmed) merged into the reports.
TEST(KilnConformanceTest, ReleaseMatrixMergesRealHostsIntoTheReports) {
  const std::string data =
      std::string(KILN_SOURCE_DIR) + "/conformance/tests/data";
  const ConformanceRun run = RunConformance(
      std::string(KILN_CONFORMANCE_BAD_PLUGIN_DIR) + "/libacme_delegate.so",
      std::string(kQuick) + " --release-matrix '" + data +
          "/matrix_0.1.0.json' --release-matrix '" + data +
          "/matrix_0.1.0-ext1.0.json'");
  // The failing cell (the 0.1.0 CPU plugin on today's host) is not
  // required, so the run passes.
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("real released hosts: 8 cells merged, 0 "
                                    "required cells failed"));
  EXPECT_THAT(run.html, HasSubstr("<th>real host 0.1.0 (aac6f7f6f974, "
                                  "extension API 1.1), built from history"));
  EXPECT_THAT(run.html, HasSubstr("capped simulation of today's host"));
  // The run's own plugin joins the row of the release matrices' acme
  // delegate only when the file is the same; here it is its own row.
  EXPECT_THAT(run.html, HasSubstr("<th>libacme_delegate.so (this run)"));
  EXPECT_THAT(run.junit,
              HasSubstr("classname=\"conformance.real_host.0.1.0\""));
  EXPECT_THAT(run.junit, HasSubstr("name=\"delegate:MUL/v1\""));
  ASSERT_TRUE(run.report.is_object()) << run.output;
  EXPECT_EQ(run.report["real_hosts"].size(), 8u);
}

TEST(KilnConformanceTest, MalformedReleaseMatrixIsAClearErrorBeforeAnyCheck) {
  const std::string bad =
      (fs::temp_directory_path() /
       ("kiln_conformance_bad_matrix_" + std::to_string(::getpid()) + ".json"))
          .string();
  std::ofstream(bad) << R"({"release": "0.1.0", "commit": "aac6f7f",
      "extension_api": "1.1", "cells": [{"host": "h", "plugin": "p",
      "summary": "s", "exit": "zero"}]})";
  const ConformanceRun run =
      RunConformance(BadPlugin("wrong_outputs"),
                     std::string(kQuick) + " --release-matrix '" + bad + "'");
  fs::remove(bad);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("release matrix '" + bad +
                                    "': field 'cells[0].exit': expected a "
                                    "small integer, got \"zero\""));
  EXPECT_THAT(run.output, Not(HasSubstr("descriptor")));
}

TEST(KilnConformanceTest, ReportsListEveryLevelAndCheck) {
  const ConformanceRun run = RunConformance(BadPlugin("wrong_outputs"), kQuick);
  ASSERT_TRUE(run.report.is_object()) << run.output;
  EXPECT_EQ(run.report["abi_levels_tested"],
            nlohmann::json::array({"1.0", "1.1", "1.2", "1.3"}));
  EXPECT_EQ(run.report["summary"]["passed"], false);
  const size_t checks = run.report["checks"].size();
  EXPECT_EQ(run.report["summary"]["total"], checks);
  // One progress line per check.
  size_t lines = 0;
  for (size_t p = run.output.find("\n["); p != std::string::npos;
       p = run.output.find("\n[", p + 1)) {
    ++lines;
  }
  EXPECT_EQ(lines, checks) << run.output;
  EXPECT_THAT(run.junit, HasSubstr("<testsuite "));
  EXPECT_THAT(run.junit, HasSubstr("failures=\""));
  EXPECT_THAT(run.junit, HasSubstr("name=\"execute:ADD/v1@1.1\""));
  EXPECT_THAT(run.html, HasSubstr("Extension API level matrix"));
  EXPECT_THAT(run.html, HasSubstr("<th>host 1.0</th><th>host 1.1</th>"));
}

// The hand-computed case of the matrix plugins' custom op.
std::string MatrixCases() {
  return std::string(" --custom-cases '") + KILN_SOURCE_DIR +
         "/conformance/matrix/matrix_custom_cases.json'";
}

TEST(KilnConformanceTest, MatrixPluginRefusedByOldHostIsRefusedAsDeclared) {
  // min_host 1.1: refusal at 1.0 is correct behaviour, not a failure; its
  // custom op is checked against the hand-computed case.
  const ConformanceRun run =
      RunConformance(std::string(KILN_CONFORMANCE_MATRIX_PLUGIN_DIR) +
                         "/libkiln_matrix_abi11_needs_quant.so",
                     kQuick + MatrixCases());
  EXPECT_EQ(run.exit_code, 0) << run.output;
  ExpectCheck(run, "negotiation@1.0", "pass", "refused as declared");
  ExpectCheck(run, "execute:CUSTOM 'KilnMatrixDequantize'/v1@1.1", "pass",
              "hand-computed");
  EXPECT_EQ(FindCheck(run, "execute:CUSTOM 'KilnMatrixDequantize'/v1@1.0"),
            nullptr);
}

TEST(KilnConformanceTest, CustomOpWithoutReferenceIsNotAPass) {
  // CUSTOM 'Sinh' runs fine on the generic float input, but nothing
  // verifies its outputs: "no reference", and the run is not a pass (exit 1,
  // NOT VERIFIED).
  const std::string sinh =
      std::string(KILN_TEST_PLUGIN_DIR) + "/libexample_sinh.so";
  const ConformanceRun run = RunConformance(sinh, kQuick);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("NOT VERIFIED"));
  ExpectCheck(run, "execute:CUSTOM 'Sinh'/v1@1.2", "no-reference",
              "not a pass");
  ASSERT_TRUE(run.report.is_object()) << run.output;
  EXPECT_EQ(run.report["summary"]["fail"], 0);
  EXPECT_EQ(run.report["summary"]["passed"], false);
  EXPECT_THAT(run.junit, HasSubstr("type=\"no-reference\""));
  // With its case (expected outputs from Python's math.sinh) it passes.
  const ConformanceRun with_case = RunConformance(
      sinh, std::string(kQuick) + " --custom-cases '" + KILN_SOURCE_DIR +
                "/plugins/examples/custom_sinh/sinh_conformance_cases.json'");
  EXPECT_EQ(with_case.exit_code, 0) << with_case.output;
  ExpectCheck(with_case, "execute:CUSTOM 'Sinh'/v1@1.2", "pass", "math.sinh");
  // A matrix plugin, whose op takes INT8, with the hand-computed case.
  const ConformanceRun matrix =
      RunConformance(std::string(KILN_CONFORMANCE_MATRIX_PLUGIN_DIR) +
                         "/libkiln_matrix_abi11_plain.so",
                     kQuick + MatrixCases());
  EXPECT_EQ(matrix.exit_code, 0) << matrix.output;
  ExpectCheck(matrix, "execute:CUSTOM 'KilnMatrixDequantize'/v1@1.0", "pass",
              "hand-computed");
}

TEST(KilnConformanceTest, NextMajorPluginFailsCleanly) {
  const ConformanceRun run =
      RunConformance(std::string(KILN_CONFORMANCE_MATRIX_PLUGIN_DIR) +
                         "/libkiln_matrix_abi20_next_major.so",
                     kQuick);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  ExpectCheck(run, "descriptor", "fail", "newer major version");
  ExpectCheck(run, "kernels", "skip", "could not be loaded");
}

TEST(KilnConformanceTest, UsageErrors) {
  const std::string kiln = std::string("'") + KILN_BINARY_DIR + "/bin/kiln'";
  EXPECT_EQ(WEXITSTATUS(
                std::system((kiln + " conformance > /dev/null 2>&1").c_str())),
            2);
  EXPECT_EQ(
      WEXITSTATUS(std::system(
          (kiln + " conformance x.so --timeout -1 > /dev/null 2>&1").c_str())),
      2);
  EXPECT_EQ(WEXITSTATUS(std::system(
                (kiln + " conformance x.so --bogus > /dev/null 2>&1").c_str())),
            2);
}

TEST(KilnConformanceInTreeTest, CpuPluginPasses) {
  const ConformanceRun run =
      RunConformance(std::string(KILN_TEST_PLUGIN_DIR) + "/libkiln_cpu.so");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  ASSERT_TRUE(run.report.is_object()) << run.output;
  EXPECT_EQ(run.report["summary"]["fail"], 0) << run.output;
  ExpectCheck(run, "execute:ADD/v1@1.0", "pass", "matches");
  ExpectCheck(run, "execute:ADD/v1@1.1", "pass", "matches");
}

TEST(KilnConformanceInTreeTest, EveryOtherInTreePluginPasses) {
  std::vector<std::string> plugins;
  for (const fs::directory_entry& e :
       fs::directory_iterator(KILN_TEST_PLUGIN_DIR)) {
    if (e.path().extension() == ".so" &&
        e.path().filename() != "libkiln_cpu.so") {
      plugins.push_back(e.path().string());
    }
  }
  for (const std::string& plugin : plugins) {
    SCOPED_TRACE(plugin);
    // Custom ops are verified against the case files next to their sources.
    std::string extra = "--timeout 20";
    if (fs::path(plugin).filename() == "libexample_sinh.so") {
      extra += std::string(" --custom-cases '") + KILN_SOURCE_DIR +
               "/plugins/examples/custom_sinh/sinh_conformance_cases.json'";
    }
    const ConformanceRun run = RunConformance(plugin, extra);
    EXPECT_EQ(run.exit_code, 0) << run.output;
  }
  RecordProperty("plugins_checked", static_cast<int>(plugins.size()));
}

}  // namespace
}  // namespace kiln
