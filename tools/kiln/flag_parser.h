// The one command-line parser of the kiln CLI: every subcommand declares its
// flags and positional arguments, and the parser reads argv, reports precise
// usage errors and generates the command's --help from the declarations.
//
//   RunOptions o;  // defaults live in the options struct
//   FlagParser flags("kiln run", "Runs MODEL once ...");
//   flags.Positional("MODEL", &o.model_path, "the model file (.tflite)")
//       .Int("--seed", "N", &o.seed, "seed for --input random (default 1)")
//       .Bool("--json", &o.json, "print the result as JSON")
//       .Strings("--plugin", "PATH", &o.plugins, "load this plugin");
//   absl::StatusOr<FlagParser::Outcome> r = flags.Parse(args);
//
// Syntax: `--flag value` and `--flag=value` for flags with a value, a bare
// `--flag` for a boolean; `-h` / `--help` asks for the help; `--` ends the
// options (what follows is positional). A flag that is not repeatable and is
// given again keeps its last value; a repeatable one (Strings, or Custom with
// Repeat::kYes) sees every occurrence, in order. Values are stored as they
// are parsed, so a callback may depend on flags given before it.
//
// Every error is a UsageError whose message names the flag and the value,
// without the command name (CommandMain adds it): "--seed expects an integer,
// got 'abc'".
#ifndef KILN_TOOLS_KILN_FLAG_PARSER_H_
#define KILN_TOOLS_KILN_FLAG_PARSER_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kiln::cli {

// A status meaning "the command line is wrong": the command exits with 2.
// Any other non-OK status is a failure (exit 1). See CommandMain.
absl::Status UsageError(absl::string_view message);
bool IsUsageError(const absl::Status& status);

class FlagParser {
 public:
  enum class Outcome { kParsed, kHelpRequested };
  enum class Repeat { kNo, kYes };
  // Receives a flag's value (empty for a boolean flag). A non-OK status is
  // reported as a usage error with its message unchanged, so it should name
  // the flag.
  using Setter = std::function<absl::Status(absl::string_view value)>;

  // `command` as typed ("kiln run"); `description`: the help text under the
  // usage line (may span lines).
  FlagParser(std::string command, std::string description);

  // A required positional argument; `name` is how help and errors call it
  // ("MODEL"). Positionals are filled in declaration order.
  FlagParser& Positional(std::string name, std::string* out, std::string help);

  // A boolean flag: when given, *out = set_to.
  FlagParser& Bool(std::string name, bool* out, std::string help,
                   bool set_to = true);
  FlagParser& String(std::string name, std::string value_name, std::string* out,
                     std::string help);
  // Repeatable: each occurrence appends its value.
  FlagParser& Strings(std::string name, std::string value_name,
                      std::vector<std::string>* out, std::string help);
  // An integer of T's range and at least `min`.
  template <typename T>
  FlagParser& Int(std::string name, std::string value_name, T* out,
                  std::string help, T min = std::numeric_limits<T>::min());
  // A finite number greater than `greater_than`.
  FlagParser& Double(
      std::string name, std::string value_name, double* out, std::string help,
      double greater_than = std::numeric_limits<double>::lowest());
  // Any other flag with a value: `set` parses and stores it.
  FlagParser& Custom(std::string name, std::string value_name, Setter set,
                     std::string help, Repeat repeat = Repeat::kNo);

  // Text appended to the generated help (e.g. exit codes).
  FlagParser& Epilog(std::string text);

  // Reads `args` (argv after the command name) into the declared outputs.
  absl::StatusOr<Outcome> Parse(const std::vector<std::string>& args) const;

  // "usage: kiln run MODEL [options]", the description, the positionals and
  // flags with their help, the epilog.
  std::string Help() const;

  const std::string& command() const { return command_; }

 private:
  struct Flag {
    std::string name;        // "--seed"
    std::string value_name;  // "N"; empty for a boolean flag
    std::string help;
    Repeat repeat = Repeat::kNo;
    Setter set;
  };
  struct PositionalArg {
    std::string name;
    std::string* out;
    std::string help;
  };

  FlagParser& Add(Flag flag);
  const Flag* FindFlag(absl::string_view name) const;
  // Applies the flag at args[*index], consuming its value; *index is left on
  // the last argument used.
  absl::Status ApplyFlag(const std::vector<std::string>& args,
                         size_t* index) const;

  std::string command_;
  std::string description_;
  std::string epilog_;
  std::vector<Flag> flags_;
  std::vector<PositionalArg> positionals_;
};

namespace flag_internal {
// `value` as an integer in [min, max]; errors name `flag`.
absl::StatusOr<int64_t> ParseSigned(absl::string_view flag,
                                    absl::string_view value, int64_t min,
                                    int64_t max);
absl::StatusOr<uint64_t> ParseUnsigned(absl::string_view flag,
                                       absl::string_view value, uint64_t min,
                                       uint64_t max);
}  // namespace flag_internal

template <typename T>
FlagParser& FlagParser::Int(std::string name, std::string value_name, T* out,
                            std::string help, T min) {
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>);
  std::string flag = name;
  Setter set = [flag, out, min](absl::string_view value) -> absl::Status {
    if constexpr (std::is_signed_v<T>) {
      absl::StatusOr<int64_t> v = flag_internal::ParseSigned(
          flag, value, min, std::numeric_limits<T>::max());
      if (!v.ok()) return v.status();
      *out = static_cast<T>(*v);
    } else {
      absl::StatusOr<uint64_t> v = flag_internal::ParseUnsigned(
          flag, value, min, std::numeric_limits<T>::max());
      if (!v.ok()) return v.status();
      *out = static_cast<T>(*v);
    }
    return absl::OkStatus();
  };
  return Custom(std::move(name), std::move(value_name), std::move(set),
                std::move(help));
}

}  // namespace kiln::cli

#endif  // KILN_TOOLS_KILN_FLAG_PARSER_H_
