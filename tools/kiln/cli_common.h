// Shared helpers of the kiln CLI subcommands.
#ifndef KILN_TOOLS_KILN_CLI_COMMON_H_
#define KILN_TOOLS_KILN_CLI_COMMON_H_

#include <string>
#include <vector>

#include "plugin/plugin_loader.h"

namespace kiln::cli {

// Consumes the plugin-selection flags shared by every subcommand from
// `args` (--plugin PATH, --plugin-dir DIR, --no-default-plugins), leaving
// the rest. Returns false and sets *error on a malformed flag.
bool ParsePluginFlags(std::vector<std::string>& args,
                      PluginSearchConfig* config, std::string* error);

inline constexpr const char* kPluginFlagsHelp =
    "  --plugin PATH          load this plugin (repeatable)\n"
    "  --plugin-dir DIR       load every *.so in DIR (repeatable)\n"
    "  --no-default-plugins   skip $KILN_PLUGIN_PATH and the installed "
    "plugin directory\n";

}  // namespace kiln::cli

#endif  // KILN_TOOLS_KILN_CLI_COMMON_H_
