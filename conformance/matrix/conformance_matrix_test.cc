// The extension API compatibility matrix: every matrix plugin build (rows)
// against every extension API level this host serves (columns), each cell an
// expected verdict. Older hosts are reproduced by capping the offer
// (PluginLoader::MakeOffer); conformance/README.md says how faithful that is.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/host_api.h"
#include "runtime/single_node_runner.h"

namespace kiln {
namespace {

constexpr char kOpName[] = "KilnMatrixDequantize";
constexpr float kScale = 0.25f;
constexpr int32_t kZeroPoint = -3;
const std::vector<int8_t> kInput = {-128, -3, 0, 1, 7, 42, 100, 127};

struct HostLevel {
  const char* label;
  uint32_t cap;
};
const HostLevel kHostLevels[] = {
    {"host 1.0 (capped)", KILN_MAKE_VERSION(1, 0, 0)},
    {"host 1.1 (capped)", KILN_MAKE_VERSION(1, 1, 0)},
    {"host 1.2 (capped)", KILN_MAKE_VERSION(1, 2, 0)},
    {"host 1.3 (current)", KILN_MAKE_VERSION(1, 3, 0)},
};

enum class Outcome { kRuns, kRefused, kFails };

struct Expected {
  Outcome outcome;
  // Substring the refusal or failure message must contain.
  const char* reason;
};

struct PluginRow {
  const char* file;
  const char* description;
  Expected cells[4];  // one per kHostLevels entry
};

constexpr Expected kRuns = {Outcome::kRuns, ""};

const PluginRow kRows[] = {
    {"libkiln_matrix_abi10.so",
     "built against frozen 1.0 headers",
     {kRuns, kRuns, kRuns, kRuns}},
    {"libkiln_matrix_abi11_plain.so",
     "1.1 headers, no 1.1 feature used",
     {kRuns, kRuns, kRuns, kRuns}},
    {"libkiln_matrix_abi11_needs_quant.so",
     "needs tensor_quantization (min_host 1.1)",
     {{Outcome::kRefused, "requires a host serving extension API 1.1 or newer"},
      kRuns,
      kRuns,
      kRuns}},
    {"libkiln_matrix_abi11_optional_quant.so",
     "tensor_quantization optional, no fallback",
     {{Outcome::kFails, "KilnHostApi.tensor_quantization"},
      kRuns,
      kRuns,
      kRuns}},
    {"libkiln_matrix_abi11_fallback_quant.so",
     "tensor_quantization optional, falls back",
     {kRuns, kRuns, kRuns, kRuns}},
    {"libkiln_matrix_abi20_next_major.so",
     "next major (extension API 2.0)",
     {{Outcome::kRefused, "a newer major version than this host serves"},
      {Outcome::kRefused, "a newer major version than this host serves"},
      {Outcome::kRefused, "a newer major version than this host serves"},
      {Outcome::kRefused, "a newer major version than this host serves"}}},
};

struct CellResult {
  Outcome outcome = Outcome::kFails;
  std::string message;
  std::vector<float> output;
};

std::string PluginPath(const char* file) {
  return std::string(KILN_CONFORMANCE_MATRIX_PLUGIN_DIR) + "/" + file;
}

CellResult RunCell(const std::string& path, uint32_t cap) {
  CellResult result;
  absl::StatusOr<std::shared_ptr<LoadedPlugin>> plugin =
      LoadPluginForTest(path, cap);
  if (!plugin.ok()) {
    result.outcome = Outcome::kRefused;
    result.message = std::string(plugin.status().message());
    return result;
  }
  const KilnKernel* kernel = FindKernel(**plugin, KILN_OP_CUSTOM, 1, kOpName);
  if (kernel == nullptr) {
    result.message =
        "plugin has no kernel for CUSTOM '" + std::string(kOpName) + "' v1";
    return result;
  }
  SingleNodeRunner runner;
  const int in = runner.AddTensor(KILN_TYPE_INT8, {2, 4}, kInput);
  runner.tensor(in).quantization.scales = {kScale};
  runner.tensor(in).quantization.zero_points = {kZeroPoint};
  const int out = runner.AddTensor(KILN_TYPE_FLOAT32, {});
  runner.SetOp(KILN_OP_CUSTOM, 1, {in}, {out}, kOpName);
  uint8_t options[8];
  std::memcpy(options, &kScale, 4);
  std::memcpy(options + 4, &kZeroPoint, 4);
  runner.node().custom_options = options;
  runner.node().custom_options_size = sizeof(options);
  absl::Status status = runner.Run(*kernel);
  if (!status.ok()) {
    result.message = std::string(status.message());
    return result;
  }
  result.outcome = Outcome::kRuns;
  result.output = runner.Values<float>(out);
  return result;
}

std::vector<float> ExpectedOutput() {
  std::vector<float> y;
  for (int8_t q : kInput) {
    y.push_back(kScale *
                static_cast<float>(static_cast<int32_t>(q) - kZeroPoint));
  }
  return y;
}

const char* OutcomeName(Outcome o) {
  switch (o) {
    case Outcome::kRuns:
      return "RUNS";
    case Outcome::kRefused:
      return "REFUSED";
    case Outcome::kFails:
      return "FAILS";
  }
  return "?";
}

std::string CellText(const CellResult& r) {
  if (r.outcome == Outcome::kRuns) return "RUNS, identical output";
  std::string reason = r.message;
  // Keep the table readable: the part after "refused: ".
  if (size_t p = reason.find("refused: "); p != std::string::npos) {
    reason = reason.substr(p + 9);
  }
  if (reason.size() > 50) reason = reason.substr(0, 47) + "...";
  return std::string(OutcomeName(r.outcome)) + ": " + reason;
}

TEST(ConformanceMatrixTest, HostServesExactlyTheMatrixColumns) {
  // A new minor version must add a column to this matrix.
  EXPECT_EQ(kMaxPluginAbiVersion, KILN_MAKE_VERSION(1, 3, 0))
      << "the host serves a new extension API version: add it to "
         "kHostLevels and give every row an expected verdict";
  EXPECT_EQ(HostApiSizeForVersion(KILN_MAKE_VERSION(1, 0, 0)),
            KILN_HOST_API_STRUCT_SIZE_1_0);
  EXPECT_EQ(HostApiSizeForVersion(KILN_MAKE_VERSION(1, 1, 0)),
            KILN_HOST_API_STRUCT_SIZE_1_1);
  EXPECT_EQ(HostApiSizeForVersion(KILN_MAKE_VERSION(1, 2, 0)),
            KILN_HOST_API_STRUCT_SIZE_1_2);
  EXPECT_EQ(HostApiSizeForVersion(KILN_MAKE_VERSION(1, 3, 0)),
            KILN_HOST_API_STRUCT_SIZE_1_3);
}

TEST(ConformanceMatrixTest, EveryCellHasItsExpectedVerdict) {
  const std::vector<float> expected_output = ExpectedOutput();
  std::ostringstream table;
  table << std::left << std::setw(44) << "plugin build \\ host";
  for (const HostLevel& level : kHostLevels) {
    table << " | " << std::setw(62) << level.label;
  }
  table << "\n" << std::string(44 + std::size(kHostLevels) * 65, '-') << "\n";
  for (const PluginRow& row : kRows) {
    table << std::setw(44) << row.description;
    for (size_t c = 0; c < std::size(kHostLevels); ++c) {
      SCOPED_TRACE(std::string(row.file) + " on " + kHostLevels[c].label);
      const Expected& want = row.cells[c];
      const CellResult got = RunCell(PluginPath(row.file), kHostLevels[c].cap);
      table << " | " << std::setw(62) << CellText(got);
      EXPECT_EQ(OutcomeName(got.outcome),
                std::string(OutcomeName(want.outcome)))
          << got.message;
      if (want.outcome == Outcome::kRuns) {
        EXPECT_THAT(got.output, ::testing::Pointwise(::testing::FloatEq(),
                                                     expected_output));
      } else {
        EXPECT_THAT(got.message, ::testing::HasSubstr(want.reason));
      }
    }
    table << "\n";
  }
  std::cout << "\nExtension API compatibility matrix (custom op " << kOpName
            << "):\n"
            << table.str() << std::endl;
}

TEST(ConformanceMatrixTest, RefusalsNameVersionsAndPath) {
  const std::string path = PluginPath("libkiln_matrix_abi11_needs_quant.so");
  const CellResult r = RunCell(path, KILN_MAKE_VERSION(1, 0, 0));
  ASSERT_EQ(r.outcome, Outcome::kRefused);
  EXPECT_THAT(r.message, ::testing::HasSubstr(path));
  EXPECT_THAT(r.message, ::testing::HasSubstr("this host serves 1.0 to 1.0"));
}

TEST(ConformanceMatrixTest, OptionalFeatureFailureNamesHostVersion) {
  const CellResult r =
      RunCell(PluginPath("libkiln_matrix_abi11_optional_quant.so"),
              KILN_MAKE_VERSION(1, 0, 0));
  ASSERT_EQ(r.outcome, Outcome::kFails);
  EXPECT_THAT(r.message, ::testing::HasSubstr("prepare failed"));
  EXPECT_THAT(r.message, ::testing::HasSubstr("extension API 1.0"));
}

TEST(ConformanceMatrixTest, NegotiatedVersionIsMinimumOfHostAndPlugin) {
  struct Case {
    const char* file;
    uint32_t cap;
    uint32_t negotiated;
  };
  const Case cases[] = {
      {"libkiln_matrix_abi10.so", KILN_MAKE_VERSION(1, 1, 0),
       KILN_MAKE_VERSION(1, 0, 0)},
      {"libkiln_matrix_abi11_plain.so", KILN_MAKE_VERSION(1, 0, 0),
       KILN_MAKE_VERSION(1, 0, 0)},
      {"libkiln_matrix_abi11_plain.so", KILN_MAKE_VERSION(1, 1, 0),
       KILN_MAKE_VERSION(1, 1, 0)},
      {"libkiln_matrix_abi10.so", KILN_MAKE_VERSION(1, 2, 0),
       KILN_MAKE_VERSION(1, 0, 0)},
      {"libkiln_matrix_abi11_plain.so", KILN_MAKE_VERSION(1, 2, 0),
       KILN_MAKE_VERSION(1, 1, 0)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    absl::StatusOr<std::shared_ptr<LoadedPlugin>> plugin =
        LoadPluginForTest(PluginPath(c.file), c.cap);
    ASSERT_TRUE(plugin.ok()) << plugin.status();
    EXPECT_EQ((*plugin)->negotiated_version(), c.negotiated);
  }
}

}  // namespace
}  // namespace kiln
