#include "flag_parser.h"

#include <cmath>
#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace kiln::cli {
namespace {

constexpr absl::string_view kUsagePayload = "kiln.cli/usage_error";

// Help layout: flags in a column of this width, their help after it.
constexpr size_t kHelpColumn = 25;

bool LooksLikeFlag(absl::string_view arg) {
  return arg.size() > 1 && arg[0] == '-';
}

// "  NAME VALUE" padded to the help column, or on a line of its own when
// longer; then each line of `help` aligned in the column.
std::string HelpEntry(const std::string& left, const std::string& help) {
  std::string out = "  " + left;
  if (out.size() + 1 > kHelpColumn) {
    out += "\n" + std::string(kHelpColumn, ' ');
  } else {
    out.append(kHelpColumn - out.size(), ' ');
  }
  bool first = true;
  for (absl::string_view line : absl::StrSplit(help, '\n')) {
    if (!first) out += "\n" + std::string(kHelpColumn, ' ');
    absl::StrAppend(&out, line);
    first = false;
  }
  return out + "\n";
}

}  // namespace

absl::Status UsageError(absl::string_view message) {
  absl::Status status = absl::InvalidArgumentError(message);
  status.SetPayload(kUsagePayload, absl::Cord("1"));
  return status;
}

bool IsUsageError(const absl::Status& status) {
  return status.GetPayload(kUsagePayload).has_value();
}

namespace flag_internal {

absl::StatusOr<int64_t> ParseSigned(absl::string_view flag,
                                    absl::string_view value, int64_t min,
                                    int64_t max) {
  int64_t v = 0;
  if (!absl::SimpleAtoi(value, &v)) {
    return UsageError(
        absl::StrCat(flag, " expects an integer, got '", value, "'"));
  }
  if (v < min || v > max) {
    return UsageError(absl::StrCat(flag, " expects an integer from ", min,
                                   " to ", max, ", got '", value, "'"));
  }
  return v;
}

absl::StatusOr<uint64_t> ParseUnsigned(absl::string_view flag,
                                       absl::string_view value, uint64_t min,
                                       uint64_t max) {
  uint64_t v = 0;
  const bool negative = !value.empty() && value[0] == '-';
  if (!negative && !absl::SimpleAtoi(value, &v)) {
    return UsageError(
        absl::StrCat(flag, " expects an integer, got '", value, "'"));
  }
  if (negative || v < min || v > max) {
    return UsageError(absl::StrCat(flag, " expects an integer from ", min,
                                   " to ", max, ", got '", value, "'"));
  }
  return v;
}

}  // namespace flag_internal

FlagParser::FlagParser(std::string command, std::string description)
    : command_(std::move(command)), description_(std::move(description)) {}

FlagParser& FlagParser::Positional(std::string name, std::string* out,
                                   std::string help) {
  positionals_.push_back({std::move(name), out, std::move(help)});
  return *this;
}

FlagParser& FlagParser::Add(Flag flag) {
  flags_.push_back(std::move(flag));
  return *this;
}

FlagParser& FlagParser::Bool(std::string name, bool* out, std::string help,
                             bool set_to) {
  return Add({std::move(name), "", std::move(help), Repeat::kNo,
              [out, set_to](absl::string_view) {
                *out = set_to;
                return absl::OkStatus();
              }});
}

FlagParser& FlagParser::String(std::string name, std::string value_name,
                               std::string* out, std::string help) {
  return Custom(
      std::move(name), std::move(value_name),
      [out](absl::string_view value) {
        *out = std::string(value);
        return absl::OkStatus();
      },
      std::move(help));
}

FlagParser& FlagParser::Strings(std::string name, std::string value_name,
                                std::vector<std::string>* out,
                                std::string help) {
  return Custom(
      std::move(name), std::move(value_name),
      [out](absl::string_view value) {
        out->emplace_back(value);
        return absl::OkStatus();
      },
      std::move(help), Repeat::kYes);
}

FlagParser& FlagParser::Double(std::string name, std::string value_name,
                               double* out, std::string help,
                               double greater_than) {
  std::string flag = name;
  const bool bounded = greater_than != std::numeric_limits<double>::lowest();
  return Custom(
      std::move(name), std::move(value_name),
      [flag, out, greater_than, bounded](absl::string_view value) {
        double v = 0;
        if (!absl::SimpleAtod(value, &v) || !std::isfinite(v) ||
            !(v > greater_than)) {
          return UsageError(absl::StrCat(
              flag, " expects a number",
              bounded ? absl::StrCat(" greater than ", greater_than) : "",
              ", got '", value, "'"));
        }
        *out = v;
        return absl::OkStatus();
      },
      std::move(help));
}

FlagParser& FlagParser::Custom(std::string name, std::string value_name,
                               Setter set, std::string help, Repeat repeat) {
  return Add({std::move(name), std::move(value_name), std::move(help), repeat,
              std::move(set)});
}

FlagParser& FlagParser::Epilog(std::string text) {
  epilog_ = std::move(text);
  return *this;
}

const FlagParser::Flag* FlagParser::FindFlag(absl::string_view name) const {
  for (const Flag& f : flags_) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

absl::Status FlagParser::ApplyFlag(const std::vector<std::string>& args,
                                   size_t* index) const {
  const std::string& arg = args[*index];
  const size_t eq = arg.find('=');
  const absl::string_view name = absl::string_view(arg).substr(
      0, eq == std::string::npos ? arg.size() : eq);
  const Flag* flag = FindFlag(name);
  if (flag == nullptr) {
    return UsageError(
        absl::StrCat("unknown option '", name, "'; see ", command_, " --help"));
  }
  std::string value;
  if (flag->value_name.empty()) {
    if (eq != std::string::npos) {
      return UsageError(absl::StrCat(name, " takes no value, got '", arg, "'"));
    }
  } else if (eq != std::string::npos) {
    value = arg.substr(eq + 1);
  } else if (*index + 1 < args.size()) {
    value = args[++*index];
  } else {
    return UsageError(
        absl::StrCat(name, " needs a value (", flag->value_name, ")"));
  }
  absl::Status status = flag->set(value);
  if (status.ok() || IsUsageError(status)) return status;
  return UsageError(status.message());
}

absl::StatusOr<FlagParser::Outcome> FlagParser::Parse(
    const std::vector<std::string>& args) const {
  size_t positional = 0;
  bool options_ended = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (!options_ended && (arg == "--help" || arg == "-h")) {
      return Outcome::kHelpRequested;
    }
    if (!options_ended && arg == "--") {
      options_ended = true;
    } else if (!options_ended && LooksLikeFlag(arg)) {
      if (absl::Status s = ApplyFlag(args, &i); !s.ok()) return s;
    } else if (positional < positionals_.size()) {
      *positionals_[positional++].out = arg;
    } else {
      return UsageError(absl::StrCat("unexpected argument '", arg, "'"));
    }
  }
  if (positional < positionals_.size()) {
    return UsageError(absl::StrCat("missing ", positionals_[positional].name));
  }
  return Outcome::kParsed;
}

std::string FlagParser::Help() const {
  std::string usage = "usage: " + command_;
  for (const PositionalArg& p : positionals_)
    absl::StrAppend(&usage, " ", p.name);
  std::string out = absl::StrCat(usage, " [options]\n", description_);
  if (!description_.empty() && description_.back() != '\n') out += "\n";
  if (!positionals_.empty()) out += "\narguments:\n";
  for (const PositionalArg& p : positionals_) out += HelpEntry(p.name, p.help);
  out += "\noptions:\n";
  for (const Flag& f : flags_) {
    const std::string left =
        f.value_name.empty() ? f.name : f.name + " " + f.value_name;
    out += HelpEntry(
        left, f.repeat == Repeat::kYes ? f.help + " (repeatable)" : f.help);
  }
  out += HelpEntry("-h, --help", "show this help");
  if (!epilog_.empty()) out += "\n" + epilog_;
  if (!out.empty() && out.back() != '\n') out += "\n";
  return out;
}

}  // namespace kiln::cli
