// Entry points of the kiln CLI subcommands. Each returns the process exit
// code: 0 success, 1 failure, 2 usage error.
#ifndef KILN_TOOLS_KILN_COMMANDS_H_
#define KILN_TOOLS_KILN_COMMANDS_H_

#include <string>
#include <vector>

namespace kiln::cli {

int VersionCommand(std::vector<std::string> args);
int RunCommand(std::vector<std::string> args);
int InspectCommand(std::vector<std::string> args);
int BenchCommand(std::vector<std::string> args);
int BuildExampleCommand(std::vector<std::string> args);
// `kiln conformance PLUGIN.so [...]` (conformance_command.cc).
int ConformanceCommand(std::vector<std::string> args);
// `kiln plugin validate|inspect ...` (plugin_validate_command.cc).
int PluginCommand(std::vector<std::string> args);
// `kiln plugin inspect PLUGIN.so [--json]` (plugin_inspect_command.cc).
int PluginInspectCommand(std::vector<std::string> args);

}  // namespace kiln::cli

#endif  // KILN_TOOLS_KILN_COMMANDS_H_
