// kiln: the Kiln command-line tool.
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "commands.h"

namespace {

constexpr const char* kUsage =
    "usage: kiln <command> [options]\n"
    "\n"
    "commands:\n"
    "  version [--json]     runtime, C API, extension API and model schema\n"
    "                       versions, and every plugin found with its\n"
    "                       negotiation result\n"
    "\n"
    "Run 'kiln <command> --help' for a command's options.\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 ||
      std::strcmp(argv[1], "-h") == 0 || std::strcmp(argv[1], "help") == 0) {
    std::cout << kUsage;
    return argc < 2 ? 2 : 0;
  }
  const std::string command = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "version" || command == "--version") {
    return kiln::cli::VersionCommand(std::move(args));
  }
  std::cerr << "kiln: unknown command '" << command << "'\n\n" << kUsage;
  return 2;
}
