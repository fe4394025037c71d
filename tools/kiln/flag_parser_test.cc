#include "flag_parser.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kiln::cli {
namespace {

using ::testing::HasSubstr;

// Every flag kind, as a command would declare them.
struct Options {
  std::string model;
  std::string signature;
  bool json = false;
  bool use_defaults = true;
  uint32_t seed = 1;
  int iterations = 50;
  int64_t offset = 0;
  double timeout = 10;
  std::vector<std::string> plugins;
  std::vector<std::string> custom_values;
};

class FlagParserTest : public ::testing::Test {
 protected:
  FlagParserTest() : flags_("kiln test", "Tests the parser.") {
    flags_.Positional("MODEL", &o_.model, "the model")
        .String("--signature", "KEY", &o_.signature, "a signature")
        .Bool("--json", &o_.json, "JSON output")
        .Bool("--no-defaults", &o_.use_defaults, "skip defaults", false)
        .Int("--seed", "N", &o_.seed, "a seed")
        .Int("--iterations", "N", &o_.iterations, "runs", 1)
        .Int("--offset", "N", &o_.offset, "signed")
        .Double("--timeout", "SECONDS", &o_.timeout, "limit", 0.0)
        .Strings("--plugin", "PATH", &o_.plugins, "a plugin")
        .Custom(
            "--input", "NAME=FILE",
            [this](absl::string_view v) -> absl::Status {
              if (v.find('=') == absl::string_view::npos) {
                return absl::InvalidArgumentError(
                    absl::StrCat("--input expects NAME=FILE, got '", v, "'"));
              }
              o_.custom_values.emplace_back(v);
              return absl::OkStatus();
            },
            "an input", FlagParser::Repeat::kYes)
        .Epilog("Exit code: 0 or 1.\n");
  }

  absl::StatusOr<FlagParser::Outcome> Parse(std::vector<std::string> args) {
    return flags_.Parse(args);
  }

  // The usage error message Parse gives for `args`.
  std::string ErrorOf(std::vector<std::string> args) {
    absl::StatusOr<FlagParser::Outcome> r = Parse(std::move(args));
    EXPECT_FALSE(r.ok());
    if (r.ok()) return "";
    EXPECT_TRUE(IsUsageError(r.status())) << r.status();
    return std::string(r.status().message());
  }

  Options o_;
  FlagParser flags_;
};

TEST_F(FlagParserTest, DefaultsStayWhenFlagsAreAbsent) {
  ASSERT_EQ(*Parse({"m.tflite"}), FlagParser::Outcome::kParsed);
  EXPECT_EQ(o_.model, "m.tflite");
  EXPECT_FALSE(o_.json);
  EXPECT_TRUE(o_.use_defaults);
  EXPECT_EQ(o_.seed, 1u);
  EXPECT_EQ(o_.iterations, 50);
  EXPECT_EQ(o_.timeout, 10);
  EXPECT_TRUE(o_.plugins.empty());
}

TEST_F(FlagParserTest, ValueAfterSpaceOrEquals) {
  ASSERT_TRUE(Parse({"--signature", "serve", "m", "--seed=7", "--offset", "-3",
                     "--timeout=2.5"})
                  .ok());
  EXPECT_EQ(o_.signature, "serve");
  EXPECT_EQ(o_.model, "m");
  EXPECT_EQ(o_.seed, 7u);
  EXPECT_EQ(o_.offset, -3);
  EXPECT_EQ(o_.timeout, 2.5);
}

TEST_F(FlagParserTest, EqualsValueMayContainEqualsAndBeEmpty) {
  ASSERT_TRUE(Parse({"m", "--signature=a=b", "--plugin="}).ok());
  EXPECT_EQ(o_.signature, "a=b");
  EXPECT_EQ(o_.plugins, std::vector<std::string>{""});
}

TEST_F(FlagParserTest, SpaceValueMayStartWithDashes) {
  ASSERT_TRUE(Parse({"m", "--signature", "--json"}).ok());
  EXPECT_EQ(o_.signature, "--json");
  EXPECT_FALSE(o_.json);
}

TEST_F(FlagParserTest, BoolFlagsSetTheirValue) {
  ASSERT_TRUE(Parse({"--json", "m", "--no-defaults"}).ok());
  EXPECT_TRUE(o_.json);
  EXPECT_FALSE(o_.use_defaults);
}

TEST_F(FlagParserTest, BoolFlagTakesNoValue) {
  EXPECT_EQ(ErrorOf({"m", "--json=yes"}),
            "--json takes no value, got '--json=yes'");
}

TEST_F(FlagParserTest, RepeatableFlagsKeepEveryValueInOrder) {
  ASSERT_TRUE(Parse({"--plugin", "a.so", "m", "--plugin=b.so", "--input",
                     "x=1.npy", "--plugin", "c.so", "--input=y=2.npy"})
                  .ok());
  EXPECT_EQ(o_.plugins, (std::vector<std::string>{"a.so", "b.so", "c.so"}));
  EXPECT_EQ(o_.custom_values, (std::vector<std::string>{"x=1.npy", "y=2.npy"}));
}

TEST_F(FlagParserTest, SingleFlagGivenTwiceKeepsTheLastValue) {
  ASSERT_TRUE(Parse({"m", "--seed", "3", "--seed", "4"}).ok());
  EXPECT_EQ(o_.seed, 4u);
}

TEST_F(FlagParserTest, IntegerErrorsNameFlagAndValue) {
  EXPECT_EQ(ErrorOf({"m", "--seed", "abc"}),
            "--seed expects an integer, got 'abc'");
  EXPECT_EQ(ErrorOf({"m", "--seed=1.5"}),
            "--seed expects an integer, got '1.5'");
  EXPECT_EQ(ErrorOf({"m", "--seed", ""}), "--seed expects an integer, got ''");
  EXPECT_EQ(ErrorOf({"m", "--seed", "-1"}),
            "--seed expects an integer from 0 to 4294967295, got '-1'");
  EXPECT_EQ(ErrorOf({"m", "--seed", "4294967296"}),
            "--seed expects an integer from 0 to 4294967295, got "
            "'4294967296'");
  EXPECT_EQ(ErrorOf({"m", "--iterations", "0"}),
            "--iterations expects an integer from 1 to 2147483647, got '0'");
  EXPECT_EQ(ErrorOf({"m", "--offset", "99999999999999999999"}),
            "--offset expects an integer, got '99999999999999999999'");
}

TEST_F(FlagParserTest, IntegerBoundsAreInclusive) {
  ASSERT_TRUE(Parse({"m", "--seed", "4294967295", "--iterations", "1"}).ok());
  EXPECT_EQ(o_.seed, 4294967295u);
  EXPECT_EQ(o_.iterations, 1);
}

TEST_F(FlagParserTest, NumberErrors) {
  EXPECT_EQ(ErrorOf({"m", "--timeout", "soon"}),
            "--timeout expects a number greater than 0, got 'soon'");
  EXPECT_EQ(ErrorOf({"m", "--timeout", "0"}),
            "--timeout expects a number greater than 0, got '0'");
  EXPECT_EQ(ErrorOf({"m", "--timeout", "inf"}),
            "--timeout expects a number greater than 0, got 'inf'");
}

TEST_F(FlagParserTest, CustomSetterErrorBecomesUsageError) {
  EXPECT_EQ(ErrorOf({"m", "--input", "nofile"}),
            "--input expects NAME=FILE, got 'nofile'");
}

TEST_F(FlagParserTest, MissingValue) {
  EXPECT_EQ(ErrorOf({"m", "--seed"}), "--seed needs a value (N)");
}

TEST_F(FlagParserTest, UnknownOptionPointsAtHelp) {
  EXPECT_EQ(ErrorOf({"m", "--sede", "1"}),
            "unknown option '--sede'; see kiln test --help");
  EXPECT_EQ(ErrorOf({"m", "--sede=1"}),
            "unknown option '--sede'; see kiln test --help");
  EXPECT_EQ(ErrorOf({"-x", "m"}), "unknown option '-x'; see kiln test --help");
}

TEST_F(FlagParserTest, PositionalErrors) {
  EXPECT_EQ(ErrorOf({}), "missing MODEL");
  EXPECT_EQ(ErrorOf({"--json"}), "missing MODEL");
  EXPECT_EQ(ErrorOf({"a", "b"}), "unexpected argument 'b'");
}

TEST_F(FlagParserTest, DoubleDashEndsOptions) {
  ASSERT_TRUE(Parse({"--json", "--", "--model-with-dashes"}).ok());
  EXPECT_EQ(o_.model, "--model-with-dashes");
  EXPECT_TRUE(o_.json);
}

TEST_F(FlagParserTest, SingleDashIsPositional) {
  ASSERT_TRUE(Parse({"-"}).ok());
  EXPECT_EQ(o_.model, "-");
}

TEST_F(FlagParserTest, HelpWinsOverMissingArguments) {
  EXPECT_EQ(*Parse({"--help"}), FlagParser::Outcome::kHelpRequested);
  EXPECT_EQ(*Parse({"--json", "-h"}), FlagParser::Outcome::kHelpRequested);
}

TEST_F(FlagParserTest, HelpIsGeneratedFromTheDeclarations) {
  const std::string help = flags_.Help();
  EXPECT_THAT(help, HasSubstr("usage: kiln test MODEL [options]\n"
                              "Tests the parser.\n"));
  EXPECT_THAT(help, HasSubstr("\n  MODEL                  the model\n"));
  EXPECT_THAT(help, HasSubstr("\n  --signature KEY        a signature\n"));
  EXPECT_THAT(help, HasSubstr("\n  --json                 JSON output\n"));
  EXPECT_THAT(help, HasSubstr("\n  --plugin PATH          a plugin "
                              "(repeatable)\n"));
  EXPECT_THAT(help, HasSubstr("\n  -h, --help             show this help\n"));
  EXPECT_THAT(help, HasSubstr("\nExit code: 0 or 1.\n"));
}

TEST(FlagParserHelpTest, LongFlagsAndMultiLineHelpAlign) {
  std::string value;
  FlagParser flags("kiln x", "");
  flags.String("--a-rather-long-flag-name", "VALUE", &value,
               "first line\nsecond line");
  EXPECT_THAT(flags.Help(),
              HasSubstr("  --a-rather-long-flag-name VALUE\n"
                        "                         first line\n"
                        "                         second line\n"));
}

TEST(UsageErrorTest, OnlyUsageErrorsAreMarked) {
  EXPECT_TRUE(IsUsageError(UsageError("bad flag")));
  EXPECT_EQ(UsageError("bad flag").message(), "bad flag");
  EXPECT_FALSE(IsUsageError(absl::InvalidArgumentError("bad model")));
  EXPECT_FALSE(IsUsageError(absl::OkStatus()));
}

}  // namespace
}  // namespace kiln::cli
