// kiln conformance --release-matrix: real released hosts' matrices
// (conformance/tests/data: two files as release_host_test.py writes them,
// real results of 0.1.0 and 0.1.0-ext1.0, trimmed) merged into the HTML and
// JUnit reports, and clear errors on a malformed file.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "conformance_runner.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kiln::conformance {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

const std::string kData = KILN_CONFORMANCE_TEST_DATA_DIR;

int Occurrences(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

Report ReportWith(std::vector<RealHostCell> cells) {
  Report r;
  r.plugin_path = "/nowhere/libsomething.so";
  r.plugin_name = "something";
  r.abi_levels = ServedAbiLevels();
  r.real_hosts = std::move(cells);
  return r;
}

TEST(ReleaseMatrixTest, LoadsADirectoryOfMatrices) {
  const absl::StatusOr<std::vector<RealHostCell>> cells =
      LoadReleaseMatrices({kData});
  ASSERT_TRUE(cells.ok()) << cells.status();
  // matrix_0.1.0-ext1.0.json (5 cells) sorts before matrix_0.1.0.json (3).
  ASSERT_EQ(cells->size(), 8u);
  const RealHostCell& probe = (*cells)[0];
  EXPECT_EQ(probe.release, "0.1.0-ext1.0");
  EXPECT_TRUE(probe.built_from_history);
  // A file written before "required" and "plugin_row": the old host's
  // cells are required, the row is the plugin as named, less a path.
  EXPECT_TRUE(probe.required);
  EXPECT_EQ(probe.plugin_row, "libkiln_cpu.so (today's)");
  EXPECT_EQ((*cells)[2].plugin_row, "today's libkiln_cpu.so");
  const RealHostCell& released = (*cells)[7];
  EXPECT_EQ(released.release, "0.1.0");
  EXPECT_FALSE(released.built_from_history);
  EXPECT_FALSE(released.required);
  EXPECT_EQ(released.exit_code, 1);
  EXPECT_EQ(released.plugin_row, "libkiln_cpu.so of 0.1.0");
  EXPECT_EQ(released.plugin_extension_api, "1.1.0");
  ASSERT_EQ(released.checks.size(), 13u);
}

TEST(ReleaseMatrixTest, HtmlShowsRealHostColumnsAndTheirVerdicts) {
  const absl::StatusOr<std::vector<RealHostCell>> cells = LoadReleaseMatrices(
      {kData + "/matrix_0.1.0.json", kData + "/matrix_0.1.0-ext1.0.json"});
  ASSERT_TRUE(cells.ok()) << cells.status();
  const std::string html = ReportToHtml(ReportWith(*cells));
  // Each real host is a column marked as such; today's older levels are
  // marked as the simulation they are.
  EXPECT_THAT(html, HasSubstr("<th>real host 0.1.0 (aac6f7f6f974, extension "
                              "API 1.1), built from history</th>"));
  EXPECT_THAT(html, HasSubstr("<th>real host 0.1.0-ext1.0 (09f8af66c81d, "
                              "extension API 1.0), built from history</th>"));
  EXPECT_THAT(html, HasSubstr("today&apos;s host capped to 1.0: capped "
                              "simulation of today&apos;s host"));
  // Rows: the plugins with the level they were built for.
  EXPECT_THAT(html, HasSubstr("<th>today&apos;s libkiln_cpu.so<br>built for "
                              "extension API 1.3.0</th>"));
  EXPECT_THAT(html, HasSubstr("<th>libkiln_cpu.so of 0.1.0<br>built for "
                              "extension API 1.1.0</th>"));
  // Cell verdicts and summaries from the files.
  EXPECT_THAT(html, HasSubstr("PASSED</a>: PASSED: 568 pass, 0 fail, 44 skip"));
  EXPECT_THAT(html, HasSubstr("<td class=\"fail\">FAILED: 753 pass, 12 "
                              "fail, 24 skip, 0 no reference (of 789 checks) "
                              "(reported, not required)</td>"));
  // Per-op/version verdicts and why: the 0.1.0 CPU plugin's FULLY_CONNECTED
  // v3 fails on today's host at 1.1 (and is skipped at 1.0).
  EXPECT_THAT(html, HasSubstr("<tr><th>FULLY_CONNECTED v3</th>"));
  EXPECT_THAT(html, HasSubstr("execute:FULLY_CONNECTED/v3@1.1</td><td "
                              "style=\"background:#f5b7b1\">fail</td><td>"
                              "declares FULLY_CONNECTED v3 but failed"));
  EXPECT_THAT(html, HasSubstr("<th>real host 0.1.0 capped to 1.0</th>"));
  EXPECT_THAT(html, HasSubstr("<th>real host 0.1.0 at 1.1</th>"));
  // Today's host at 1.1 for the 0.1.0 plugin: one ADD v1 pass, one FC v3
  // fail (negotiation pass).
  EXPECT_THAT(html, HasSubstr("2 pass, 1 fail, 0 skip, 0 no reference"));
  // Lists of a cell without checks (the 1.0 host's kernel driver).
  EXPECT_THAT(html, HasSubstr("<summary>refused_needs_1.1 (5)</summary>"));
  EXPECT_THAT(html, HasSubstr("(reported, not required)"));
  // One details section per cell.
  EXPECT_EQ(Occurrences(html, "<h3 id=\"real-host-"), 8);
}

TEST(ReleaseMatrixTest, JUnitHasOneTestcasePerRealHostCell) {
  const absl::StatusOr<std::vector<RealHostCell>> cells =
      LoadReleaseMatrices({kData});
  ASSERT_TRUE(cells.ok()) << cells.status();
  const std::string junit = ReportToJUnit(ReportWith(*cells));
  EXPECT_THAT(junit, HasSubstr("<testsuite name=\"kiln conformance: real "
                               "released hosts\" tests=\"8\" failures=\"1\""));
  EXPECT_EQ(Occurrences(junit, "classname=\"conformance.real_host.0.1.0\""), 3);
  EXPECT_EQ(
      Occurrences(junit, "classname=\"conformance.real_host.0.1.0-ext1.0\""),
      5);
  EXPECT_EQ(Occurrences(junit, "<failure"), 1);
  EXPECT_THAT(junit, HasSubstr("name=\"libkiln_cpu.so of 0.1.0 on today&apos;s "
                               "host"));
  EXPECT_THAT(junit, HasSubstr("reported, not required by the release-host "
                               "test (a defect of the released plugin): "
                               "FAILED: 753 pass, 12 fail"));
  EXPECT_THAT(junit, HasSubstr("execute:FULLY_CONNECTED/v3@1.1: declares"));
  // Without matrices there is no such suite.
  EXPECT_THAT(ReportToJUnit(ReportWith({})), Not(HasSubstr("real released")));
}

class ReleaseMatrixErrorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kiln_release_matrix_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The error of loading `text` as a matrix file.
  std::string ErrorOf(const std::string& text) {
    const std::string file = (dir_ / "matrix_bad.json").string();
    std::ofstream(file) << text;
    const absl::StatusOr<std::vector<RealHostCell>> cells =
        LoadReleaseMatrices({file});
    EXPECT_FALSE(cells.ok());
    if (cells.ok()) return "";
    EXPECT_THAT(std::string(cells.status().message()), HasSubstr(file));
    return std::string(cells.status().message());
  }

  fs::path dir_;
};

TEST_F(ReleaseMatrixErrorTest, NamesTheFileAndTheField) {
  const std::string head =
      R"({"release": "0.1.0", "commit": "aac6f7f", "extension_api": "1.1", )";
  const std::string cell = R"("host": "h", "plugin": "p", "summary": "PASSED")";
  EXPECT_THAT(ErrorOf("{\"release\": "), HasSubstr("is not valid JSON"));
  EXPECT_THAT(ErrorOf("[1, 2]"), HasSubstr("field '(top level)'"));
  EXPECT_THAT(ErrorOf(R"({"commit": "x"})"),
              HasSubstr("field 'release': missing"));
  EXPECT_THAT(ErrorOf(head + R"("cells": {}})"), HasSubstr("field 'cells'"));
  EXPECT_THAT(ErrorOf(R"({"release": "r", "commit": "c",
                          "extension_api": "one", "cells": []})"),
              HasSubstr("field 'extension_api': expected an extension API "
                        "level like \"1.2\", got \"one\""));
  EXPECT_THAT(ErrorOf(head + R"("cells": [{)" + cell + R"(, "exit": "0"}]})"),
              HasSubstr("field 'cells[0].exit': expected a small integer, "
                        "got \"0\""));
  EXPECT_THAT(ErrorOf(head + R"("cells": [{)" + cell + "}]}"),
              HasSubstr("field 'cells[0].exit': missing"));
  EXPECT_THAT(
      ErrorOf(head + R"("cells": [{)" + cell +
              R"(, "exit": 0, "failures": ["a", 3]}]})"),
      HasSubstr("field 'cells[0].failures[1]': expected a string, got number"));
  EXPECT_THAT(ErrorOf(head + R"("cells": [{)" + cell +
                      R"(, "exit": 0, "checks": [{"name": "n",
                          "verdict": "passed"}]}]})"),
              HasSubstr("field 'cells[0].checks[0].verdict': expected pass, "
                        "fail, skip or no-reference, got \"passed\""));
  EXPECT_THAT(ErrorOf(head + R"("cells": [{)" + cell +
                      R"(, "exit": 0, "checks": [{"name": "n",
                          "verdict": "pass", "abi_level": 1.1}]}]})"),
              HasSubstr("field 'cells[0].checks[0].abi_level': expected a "
                        "string, got number"));
  // What to do.
  EXPECT_THAT(ErrorOf("{}"), HasSubstr("release_host_test.py"));
}

TEST_F(ReleaseMatrixErrorTest, MissingFileAndEmptyDirectory) {
  const absl::StatusOr<std::vector<RealHostCell>> missing =
      LoadReleaseMatrices({(dir_ / "nope.json").string()});
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()),
              HasSubstr("cannot read release matrix '" +
                        (dir_ / "nope.json").string() + "'"));
  const absl::StatusOr<std::vector<RealHostCell>> empty =
      LoadReleaseMatrices({dir_.string()});
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(std::string(empty.status().message()),
              HasSubstr("no matrix_<release>.json in this directory"));
}

}  // namespace
}  // namespace kiln::conformance
