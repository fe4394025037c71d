// kiln conformance PLUGIN.so: the vendor-facing plugin conformance run.
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "commands.h"
#include "conformance_runner.h"

namespace kiln::cli {
namespace {

constexpr const char* kConformanceUsage =
    "usage: kiln conformance PLUGIN.so [options]\n"
    "\n"
    "Checks a plugin against every extension API level this host serves:\n"
    "descriptor and negotiation, every declared kernel version on generated\n"
    "inputs compared with Kiln's CPU plugin, refusal of undeclared versions,\n"
    "error paths, repeated load/unload, concurrent use and leaks. Each check\n"
    "runs in its own process with a timeout, so a crash, hang or exception\n"
    "is reported as a failed check. Exit status: 0 when no check failed,\n"
    "1 when one did, 2 on a usage error.\n"
    "\n"
    "options:\n"
    "  --report FILE      write the JSON report\n"
    "  --junit FILE       write a JUnit XML report\n"
    "  --html FILE        write a static HTML report\n"
    "  --timeout SECONDS  per-check time limit (default 10)\n"
    "  --reference FILE   reference plugin (default: libkiln_cpu.so in the\n"
    "                     default plugin directory)\n"
    "  --seed N           input generator seed (default 1)\n"
    "  --cycles N         load/unload repetitions (default 50)\n"
    "  --threads N        threads of the concurrency check (default 4)\n";

bool TakeValue(std::vector<std::string>& args, size_t& i, std::string* value) {
  if (i + 1 >= args.size()) return false;
  *value = args[++i];
  return true;
}

}  // namespace

int ConformanceCommand(std::vector<std::string> args) {
  if (!args.empty() && args[0] == conformance::kChildMarker) {
    return conformance::RunChildCheck(
        std::vector<std::string>(args.begin() + 1, args.end()));
  }
  conformance::Options options;
  options.self_executable = "/proc/self/exe";
  std::string json_path, junit_path, html_path;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::string value;
    if (a == "--help" || a == "-h") {
      std::cout << kConformanceUsage;
      return 0;
    }
    const bool takes_value = a == "--report" || a == "--junit" ||
                             a == "--html" || a == "--timeout" ||
                             a == "--reference" || a == "--seed" ||
                             a == "--cycles" || a == "--threads";
    if (takes_value && !TakeValue(args, i, &value)) {
      std::cerr << "kiln conformance: " << a << " needs a value\n\n"
                << kConformanceUsage;
      return 2;
    }
    double number = 0;
    const bool numeric = absl::SimpleAtod(value, &number);
    if (a == "--report") {
      json_path = value;
    } else if (a == "--junit") {
      junit_path = value;
    } else if (a == "--html") {
      html_path = value;
    } else if (a == "--reference") {
      options.reference_path = value;
    } else if (takes_value) {
      if (!numeric || number <= 0) {
        std::cerr << "kiln conformance: " << a << " needs a positive number, "
                  << "got '" << value << "'\n";
        return 2;
      }
      if (a == "--timeout") options.timeout_seconds = number;
      if (a == "--seed") options.seed = static_cast<uint64_t>(number);
      if (a == "--cycles")
        options.load_unload_cycles = static_cast<int>(number);
      if (a == "--threads") options.threads = static_cast<int>(number);
    } else if (!a.empty() && a[0] == '-') {
      std::cerr << "kiln conformance: unknown option '" << a << "'\n\n"
                << kConformanceUsage;
      return 2;
    } else if (options.plugin_path.empty()) {
      options.plugin_path = a;
    } else {
      std::cerr << "kiln conformance: more than one plugin given ('"
                << options.plugin_path << "', '" << a
                << "'); run it once per plugin\n";
      return 2;
    }
  }
  if (options.plugin_path.empty()) {
    std::cerr << "kiln conformance: no plugin given\n\n" << kConformanceUsage;
    return 2;
  }
  std::cout << "kiln conformance: " << options.plugin_path << "\n";
  const conformance::Report report = conformance::RunConformance(
      options, [](const std::string& line) { std::cout << line << std::endl; });
  std::cout << (report.Passed() ? "PASSED" : "FAILED") << ": "
            << report.Count(conformance::Verdict::kPass) << " pass, "
            << report.Count(conformance::Verdict::kFail) << " fail, "
            << report.Count(conformance::Verdict::kSkip) << " skip, "
            << report.Count(conformance::Verdict::kNoReference)
            << " no reference (of " << report.checks.size() << " checks)\n";
  std::string error;
  const std::pair<const std::string*,
                  std::string (*)(const conformance::Report&)>
      outputs[] = {{&json_path, &conformance::ReportToJson},
                   {&junit_path, &conformance::ReportToJUnit},
                   {&html_path, &conformance::ReportToHtml}};
  for (const auto& [path, render] : outputs) {
    if (path->empty()) continue;
    if (!conformance::WriteFile(*path, render(report), &error)) {
      std::cerr << "kiln conformance: " << error << "\n";
      return 1;
    }
  }
  return report.Passed() ? 0 : 1;
}

}  // namespace kiln::cli
