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
    "  run MODEL [--input NAME=FILE.npy | --input random] [--output-dir D]\n"
    "                       run a model once, outputs as .npy\n"
    "  inspect MODEL [--json]\n"
    "                       tensors, ops, signatures, metadata, and which\n"
    "                       plugin runs each node (or why none can)\n"
    "  bench MODEL [--iterations N]\n"
    "                       time open, init and invoke\n"
    "  build-example OUT.tflite\n"
    "                       write a small example model made by Kiln\n"
    "  plugin validate PLUGIN.so [--json]\n"
    "                       check that a plugin is well-formed and loads\n"
    "  conformance PLUGIN.so [--report F] [--junit F] [--html F]\n"
    "                       run the plugin conformance suite\n"
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
  if (command == "run") return kiln::cli::RunCommand(std::move(args));
  if (command == "inspect") return kiln::cli::InspectCommand(std::move(args));
  if (command == "bench") return kiln::cli::BenchCommand(std::move(args));
  if (command == "build-example") {
    return kiln::cli::BuildExampleCommand(std::move(args));
  }
  if (command == "conformance") {
    return kiln::cli::ConformanceCommand(std::move(args));
  }
  if (command == "plugin") {
    return kiln::cli::PluginCommand(std::move(args));
  }
  std::cerr << "kiln: unknown command '" << command << "'\n\n" << kUsage;
  return 2;
}
