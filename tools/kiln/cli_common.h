// Shared pieces of the kiln CLI subcommands: the plugin and delegate flags,
// the top-level error handling (CommandMain), and small formatting helpers.
//
// Every command reads as three steps:
//   1. parse:   a FlagParser fills the command's options struct;
//   2. collect: a function turns the options into a plain data struct (the
//               facts), returning absl::StatusOr;
//   3. render:  a text renderer and a JSON renderer over that same struct.
// CommandMain runs the parse step, then the body (collect + render), and is
// the one place where a Status becomes a message and an exit code.
#ifndef KILN_TOOLS_KILN_CLI_COMMON_H_
#define KILN_TOOLS_KILN_CLI_COMMON_H_

#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "flag_parser.h"
#include "interpreter/interpreter.h"
#include "nlohmann/json.hpp"
#include "plugin/plugin_loader.h"

namespace kiln::cli {

using Json = nlohmann::ordered_json;

// Exit codes of every kiln command.
inline constexpr int kExitSuccess = 0;
inline constexpr int kExitFailure = 1;  // an error, or a check that failed
inline constexpr int kExitUsage = 2;    // the command line is wrong

// `j` as indented JSON text ending in a newline. Strings that are not valid
// UTF-8 (tensor names come from untrusted models) get U+FFFD for their bad
// bytes instead of throwing.
std::string JsonText(const Json& j);

// Parses `args` with `flags`; on --help prints the generated help (exit 0);
// otherwise runs `body`, whose value is the exit code. A non-OK status from
// either step is printed as "<command>: <message>" on stderr and exits with
// kExitUsage for a UsageError, kExitFailure otherwise.
int CommandMain(const FlagParser& flags, const std::vector<std::string>& args,
                const std::function<absl::StatusOr<int>()>& body);

// The whole of a command that only reports: parses `args` into an Options
// (which has `bool json`) declared by `declare`, collects a Report, and
// prints it rendered by `to_json` (with --json) or `to_text`.
template <typename Options, typename Report>
int ReportCommand(const std::vector<std::string>& args,
                  FlagParser (*declare)(Options&),
                  absl::StatusOr<Report> (*collect)(const Options&),
                  Json (*to_json)(const Report&),
                  std::string (*to_text)(const Report&)) {
  Options options;
  return CommandMain(declare(options), args, [&]() -> absl::StatusOr<int> {
    const absl::StatusOr<Report> report = collect(options);
    if (!report.ok()) return report.status();
    std::cout << (options.json ? JsonText(to_json(*report)) : to_text(*report));
    return kExitSuccess;
  });
}

// --max-arena-bytes N, --max-while-iterations N and --timeout SECONDS: the
// interpreter's limits for untrusted models (docs/security.md).
void AddLimitFlags(FlagParser& flags, InterpreterOptions* options);

// The bytes of the regular file `path` (`what` names it in errors: "delegate
// settings file"), refused before reading when it is not a regular file (a
// directory, FIFO or device) or larger than `max_bytes`.
absl::StatusOr<std::string> ReadRegularFile(const std::string& path,
                                            uint64_t max_bytes,
                                            absl::string_view what);

// --plugin PATH, --plugin-dir DIR (repeatable), --no-default-plugins and
// --verbose (plugins' information messages: the host log level "info",
// as KILN_LOG_LEVEL=info).
void AddPluginFlags(FlagParser& flags, PluginSearchConfig* config);

// --delegate NAME[:key=value,...] (repeatable) and --delegate-settings FILE
// (the preceding --delegate's settings message, text or binary, parsed when
// the interpreter knows the delegate: DelegateRequest::settings_file).
void AddDelegateFlags(FlagParser& flags,
                      std::vector<DelegateRequest>* delegates);

// --threads N: threads the delegates may use (InterpreterOptions::
// num_threads; the default xnnpack delegate runs on a pool of N threads).
void AddThreadsFlag(FlagParser& flags, int32_t* num_threads);

// Turns "key=value,key2=value2" into text-format kiln.DelegateSettings
// (options map entries; min_partition_size goes to its typed field).
absl::StatusOr<std::string> DelegateOptionsToText(const std::string& spec);

// One plugin the loader found: loaded, or refused and why.
struct PluginFacts {
  std::string path, name, version;
  uint32_t abi_version = 0;  // what it was built for; 0 when not read
  bool loaded = false;
  uint32_t negotiated_version = 0;      // when loaded
  size_t num_kernels = 0;               // when loaded
  std::optional<std::string> delegate;  // its delegate's name, if any
  std::string refusal;                  // when refused
  // What it logged while loading (entry, initialize), "<level>: <text>".
  std::vector<std::string> messages;
};
std::vector<PluginFacts> CollectPluginFacts(
    const std::vector<PluginLoadRecord>& records);

// Loads a model file and creates an interpreter; errors name the file.
absl::StatusOr<std::unique_ptr<Interpreter>> OpenInterpreter(
    const std::string& model_path, const InterpreterOptions& options);

// "float32" style NumPy dtype names for messages and JSON.
const char* DtypeName(KilnTensorType type);
// "[1,16,16,3]" (the compact form JSON uses)
std::string CompactList(const std::vector<int32_t>& values);

// A JSON string, or null when `value` is absent.
Json StringOrNull(const std::optional<std::string>& value);

}  // namespace kiln::cli

#endif  // KILN_TOOLS_KILN_CLI_COMMON_H_
