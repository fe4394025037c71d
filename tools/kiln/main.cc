// kiln: the Kiln command-line tool.
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "cli_common.h"
#include "commands.h"

namespace {

struct Command {
  const char* name;
  int (*run)(std::vector<std::string> args);
  const char* synopsis;  // the usage line and summary under "commands:"
};

constexpr Command kCommands[] = {
    {"version", kiln::cli::VersionCommand,
     "  version [--json]     runtime, C API, extension API and model schema\n"
     "                       versions, and every plugin found with its\n"
     "                       negotiation result\n"},
    {"run", kiln::cli::RunCommand,
     "  run MODEL [--input NAME=FILE.npy | --input random] [--output-dir D]\n"
     "                       run a model once, outputs as .npy\n"},
    {"inspect", kiln::cli::InspectCommand,
     "  inspect MODEL [--json]\n"
     "                       tensors, ops, signatures, metadata, and which\n"
     "                       plugin runs each node (or why none can)\n"},
    {"bench", kiln::cli::BenchCommand,
     "  bench MODEL [--iterations N]\n"
     "                       time open, init and invoke\n"},
    {"build-example", kiln::cli::BuildExampleCommand,
     "  build-example OUT.tflite\n"
     "                       write a small example model made by Kiln\n"},
    {"plugin", kiln::cli::PluginCommand,
     "  plugin validate PLUGIN.so [--json]\n"
     "                       check that a plugin is well-formed and loads\n"
     "  plugin inspect PLUGIN.so [--json]\n"
     "                       what a plugin declares (kernels, delegate ops,\n"
     "                       settings type, capabilities) and its\n"
     "                       negotiation with this host, without a model\n"},
    {"conformance", kiln::cli::ConformanceCommand,
     "  conformance PLUGIN.so [--report F] [--junit F] [--html F]\n"
     "                       run the plugin conformance suite\n"},
};

std::string Usage() {
  std::string usage = "usage: kiln <command> [options]\n\ncommands:\n";
  for (const Command& c : kCommands) usage += c.synopsis;
  return usage + "\nRun 'kiln <command> --help' for a command's options.\n";
}

}  // namespace

namespace {

// The commands without the last line of defence.
int Main(int argc, char** argv) {
  const std::string command = argc < 2 ? "" : argv[1];
  if (argc < 2 || command == "--help" || command == "-h" || command == "help") {
    std::cout << Usage();
    return argc < 2 ? kiln::cli::kExitUsage : kiln::cli::kExitSuccess;
  }
  std::vector<std::string> args(argv + 2, argv + argc);
  for (const Command& c : kCommands) {
    if (command == c.name ||
        (command == "--version" && std::string(c.name) == "version")) {
      return c.run(std::move(args));
    }
  }
  std::cerr << "kiln: unknown command '" << command << "'\n\n" << Usage();
  return kiln::cli::kExitUsage;
}

}  // namespace

// Every error is a message and an exit code, never an abort or a stack
// trace: whatever escapes a command (an exception a library threw on bad
// input) ends here.
int main(int argc, char** argv) {
  const char* command = argc < 2 ? "kiln" : argv[1];
  try {
    return Main(argc, argv);
  } catch (const std::bad_alloc&) {
    std::cerr << "kiln " << command
              << ": out of memory; the input needs more memory than this "
                 "process can get (see --max-arena-bytes)\n";
  } catch (const std::exception& e) {
    std::cerr << "kiln " << command << ": internal error: " << e.what()
              << "\nPlease report this with the command line that caused "
                 "it.\n";
  } catch (...) {
    std::cerr << "kiln " << command
              << ": internal error (unknown exception)\nPlease report this "
                 "with the command line that caused it.\n";
  }
  return kiln::cli::kExitFailure;
}
