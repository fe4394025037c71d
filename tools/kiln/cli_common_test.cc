#include "cli_common.h"

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kiln::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::internal::CaptureStderr;
using ::testing::internal::CaptureStdout;
using ::testing::internal::GetCapturedStderr;
using ::testing::internal::GetCapturedStdout;

struct MainResult {
  int exit_code;
  bool body_ran;
  std::string out, err;
};

// Runs CommandMain with one positional and a body that returns `body_result`.
MainResult RunMain(std::vector<std::string> args,
                   absl::StatusOr<int> body_result) {
  std::string model;
  FlagParser flags("kiln test", "A test command.");
  flags.Positional("MODEL", &model, "the model");
  MainResult r{-1, false, "", ""};
  CaptureStdout();
  CaptureStderr();
  r.exit_code = CommandMain(flags, args, [&]() {
    r.body_ran = true;
    return body_result;
  });
  r.out = GetCapturedStdout();
  r.err = GetCapturedStderr();
  return r;
}

TEST(CommandMainTest, BodyValueIsTheExitCode) {
  MainResult r = RunMain({"m"}, 0);
  EXPECT_EQ(r.exit_code, kExitSuccess);
  EXPECT_TRUE(r.body_ran);
  EXPECT_EQ(r.err, "");
  r = RunMain({"m"}, kExitFailure);
  EXPECT_EQ(r.exit_code, kExitFailure);
  EXPECT_EQ(r.err, "");
}

TEST(CommandMainTest, HelpPrintsAndSkipsTheBody) {
  const MainResult r = RunMain({"--help"}, 1);
  EXPECT_EQ(r.exit_code, kExitSuccess);
  EXPECT_FALSE(r.body_ran);
  EXPECT_THAT(r.out, HasSubstr("usage: kiln test MODEL [options]"));
}

TEST(CommandMainTest, UsageErrorExitsTwoWithoutRunningTheBody) {
  const MainResult r = RunMain({}, 0);
  EXPECT_EQ(r.exit_code, kExitUsage);
  EXPECT_FALSE(r.body_ran);
  EXPECT_EQ(r.err, "kiln test: missing MODEL\n");
}

TEST(CommandMainTest, BodyErrorExitsOneWithTheMessage) {
  const MainResult r =
      RunMain({"m"}, absl::NotFoundError("cannot open 'm': no such file"));
  EXPECT_EQ(r.exit_code, kExitFailure);
  EXPECT_EQ(r.err, "kiln test: cannot open 'm': no such file\n");
}

TEST(CommandMainTest, BodyUsageErrorExitsTwo) {
  const MainResult r = RunMain({"m"}, UsageError("no value for input 'x'"));
  EXPECT_EQ(r.exit_code, kExitUsage);
  EXPECT_EQ(r.err, "kiln test: no value for input 'x'\n");
}

class DelegateFlagsTest : public ::testing::Test {
 protected:
  DelegateFlagsTest() : flags_("kiln test", "") {
    AddPluginFlags(flags_, &plugins_);
    AddDelegateFlags(flags_, &delegates_);
  }
  absl::StatusOr<FlagParser::Outcome> Parse(std::vector<std::string> args) {
    return flags_.Parse(args);
  }

  PluginSearchConfig plugins_;
  std::vector<DelegateRequest> delegates_;
  FlagParser flags_;
};

TEST_F(DelegateFlagsTest, PluginFlags) {
  ASSERT_TRUE(Parse({"--plugin", "a.so", "--plugin-dir=d", "--plugin=b.so",
                     "--no-default-plugins"})
                  .ok());
  EXPECT_EQ(plugins_.paths, (std::vector<std::string>{"a.so", "b.so"}));
  EXPECT_EQ(plugins_.directories, std::vector<std::string>{"d"});
  EXPECT_FALSE(plugins_.use_default_locations);
}

TEST_F(DelegateFlagsTest, DelegateWithOptions) {
  ASSERT_TRUE(Parse({"--delegate", "opencl:device=cpu,min_partition_size=2",
                     "--delegate=acme"})
                  .ok());
  ASSERT_EQ(delegates_.size(), 2u);
  EXPECT_EQ(delegates_[0].name, "opencl");
  EXPECT_TRUE(delegates_[0].is_text);
  EXPECT_EQ(delegates_[0].text_settings,
            "options { key: \"device\" value: \"cpu\" }\n"
            "min_partition_size: 2\n");
  EXPECT_EQ(delegates_[1].name, "acme");
  EXPECT_EQ(delegates_[1].text_settings, "");
}

TEST_F(DelegateFlagsTest, SettingsFileGoesToThePrecedingDelegate) {
  const std::string path = ::testing::TempDir() + "/kiln_settings.txtpb";
  std::ofstream(path) << "min_partition_size: 3\n";
  ASSERT_TRUE(Parse({"--delegate", "a", "--delegate", "b:x=1",
                     "--delegate-settings", path})
                  .ok());
  std::remove(path.c_str());
  ASSERT_EQ(delegates_.size(), 2u);
  EXPECT_EQ(delegates_[0].settings_file_name, "");
  EXPECT_EQ(delegates_[1].text_settings,
            "options { key: \"x\" value: \"1\" }\n");
  EXPECT_EQ(delegates_[1].settings_file_name, path);
  EXPECT_EQ(delegates_[1].settings_file, "min_partition_size: 3\n");
}

TEST_F(DelegateFlagsTest, Errors) {
  auto error = [&](std::vector<std::string> args) {
    absl::StatusOr<FlagParser::Outcome> r = Parse(std::move(args));
    EXPECT_FALSE(r.ok());
    EXPECT_TRUE(IsUsageError(r.status()));
    return std::string(r.status().message());
  };
  EXPECT_EQ(error({"--delegate-settings", "f"}),
            "--delegate-settings must follow a --delegate");
  EXPECT_EQ(error({"--delegate", ":x=1"}),
            "--delegate needs a delegate name, e.g. --delegate opencl");
  EXPECT_EQ(error({"--delegate", "opencl:device"}),
            "delegate option 'device' is not key=value");
  EXPECT_EQ(error({"--delegate", "a:min_partition_size=-1"}),
            "min_partition_size must be a non-negative integer, got '-1'");
  EXPECT_EQ(error({"--delegate", "a", "--delegate-settings", "/nonexistent"}),
            "cannot read delegate settings file '/nonexistent': No such file "
            "or directory");
  // Issue 10: a directory or FIFO is refused before anything is read.
  EXPECT_EQ(error({"--delegate", "a", "--delegate-settings", "/"}),
            "cannot read delegate settings file '/': not a regular file (a "
            "directory, FIFO or device)");
  const std::string path = ::testing::TempDir() + "/kiln_twice.binpb";
  std::ofstream(path) << "x";
  EXPECT_EQ(error({"--delegate", "a", "--delegate-settings", path,
                   "--delegate-settings", path}),
            "--delegate-settings given twice for delegate 'a' ('" + path +
                "' and '" + path + "')");
  std::remove(path.c_str());
}

TEST(FormattingTest, Lists) {
  EXPECT_EQ(CompactList({1, 16, 3}), "[1,16,3]");
  EXPECT_EQ(CompactList({}), "[]");
  EXPECT_EQ(StringOrNull(std::nullopt).dump(), "null");
  EXPECT_EQ(StringOrNull(std::string("x")).dump(), "\"x\"");
}

}  // namespace
}  // namespace kiln::cli
