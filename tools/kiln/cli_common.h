// Shared helpers of the kiln CLI subcommands.
#ifndef KILN_TOOLS_KILN_CLI_COMMON_H_
#define KILN_TOOLS_KILN_CLI_COMMON_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "interpreter/interpreter.h"
#include "plugin/plugin_loader.h"

namespace kiln::cli {

// Consumes the plugin-selection flags shared by every subcommand from
// `args` (--plugin PATH, --plugin-dir DIR, --no-default-plugins), leaving
// the rest. Returns false and sets *error on a malformed flag.
bool ParsePluginFlags(std::vector<std::string>& args,
                      PluginSearchConfig* config, std::string* error);

// Consumes --delegate NAME[:key=value,...] (repeatable) and
// --delegate-settings FILE (text-format kiln.DelegateSettings for the
// preceding --delegate) from `args`.
bool ParseDelegateFlags(std::vector<std::string>& args,
                        std::vector<DelegateRequest>* delegates,
                        std::string* error);

// Turns "key=value,key2=value2" into text-format kiln.DelegateSettings
// (options map entries; min_partition_size goes to its typed field).
absl::StatusOr<std::string> DelegateOptionsToText(const std::string& spec);

// Loads a model file and creates an interpreter; errors name the file.
absl::StatusOr<std::unique_ptr<Interpreter>> OpenInterpreter(
    const std::string& model_path, const InterpreterOptions& options);

// "float32" style NumPy dtype names for messages and JSON.
const char* DtypeName(KilnTensorType type);
// "[1, 16, 16, 3]"
std::string ShapeString(const std::vector<int32_t>& shape);

inline constexpr const char* kDelegateFlagsHelp =
    "  --delegate NAME[:key=value,...]\n"
    "                         apply a delegate (e.g. opencl:device=cpu)\n"
    "  --delegate-settings FILE\n"
    "                         text-format kiln.DelegateSettings for the\n"
    "                         preceding --delegate\n";

inline constexpr const char* kPluginFlagsHelp =
    "  --plugin PATH          load this plugin (repeatable)\n"
    "  --plugin-dir DIR       load every *.so in DIR (repeatable)\n"
    "  --no-default-plugins   skip $KILN_PLUGIN_PATH and the installed "
    "plugin directory\n";

}  // namespace kiln::cli

#endif  // KILN_TOOLS_KILN_CLI_COMMON_H_
