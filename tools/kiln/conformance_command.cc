// kiln conformance PLUGIN.so: the vendor-facing plugin conformance run.
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "case_models.h"
#include "cli_common.h"
#include "commands.h"
#include "conformance_runner.h"

namespace kiln::cli {
namespace {

struct ConformanceCliOptions {
  conformance::Options run;
  std::string json_path, junit_path, html_path;  // "" = not written
  // Real released hosts' matrices (files or directories) to merge in.
  std::vector<std::string> release_matrices;
};

FlagParser ConformanceFlags(ConformanceCliOptions& o) {
  FlagParser flags(
      "kiln conformance",
      "Checks a plugin against every extension API level this host serves:\n"
      "descriptor and negotiation, every declared kernel version on generated\n"
      "inputs, a delegate's every declared op version and multi-op graphs\n"
      "through the interpreter, refusal of undeclared versions,\n"
      "error paths, repeated load/unload, concurrent use and leaks. Each "
      "check\n"
      "runs in its own process with a timeout, so a crash, hang or exception\n"
      "is reported as a failed check.");
  flags.Positional("PLUGIN.so", &o.run.plugin_path, "the plugin under test")
      .String("--report", "FILE", &o.json_path, "write the JSON report")
      .String("--junit", "FILE", &o.junit_path, "write a JUnit XML report")
      .String("--html", "FILE", &o.html_path, "write a static HTML report")
      .Double("--timeout", "SECONDS", &o.run.timeout_seconds,
              "per-check time limit (default 10)", 0.0)
      .String("--reference", "FILE", &o.run.reference_path,
              "kernel plugin that runs what a delegate leaves, and the\n"
              "cross-check of kernels without an independent reference\n"
              "(default: libkiln_cpu.so in the default plugin directory)")
      .String("--references", "DIR", &o.run.reference_dir,
              "independent reference outputs (LiteRT reference kernels;\n"
              "default: Kiln's conformance/references)")
      .String("--custom-cases", "FILE", &o.run.custom_cases_path,
              "inputs and expected outputs of the plugin's custom ops\n"
              "(JSON; conformance/README.md, \"Custom ops\"); without it a\n"
              "custom op runs on a generic input and is not verified")
      .Int("--memory-limit", "MIB", &o.run.memory_limit_mb,
           "address-space limit of each check process (default 4096;\n"
           "0: none)",
           uint64_t{0})
      .Strings("--release-matrix", "FILE.json|DIR", &o.release_matrices,
               "merge the cells of a real released host's matrix\n"
               "(build/releases/matrix_<release>.json, written by the\n"
               "release-host tests; a directory: its matrix_*.json) into\n"
               "the HTML matrix, JUnit and JSON reports")
      .Int("--seed", "N", &o.run.seed, "input generator seed (default 1)",
           uint64_t{1})
      .Int("--cycles", "N", &o.run.load_unload_cycles,
           "load/unload repetitions (default 50)", 1)
      .Int("--threads", "N", &o.run.threads,
           "threads of the concurrency check (default 4)", 1)
      .Epilog(
          "Exit status: 0 when no check failed and every check that ran was\n"
          "verified against a reference, 1 otherwise (a check without a\n"
          "reference is not a pass) or when a required real-host cell of\n"
          "--release-matrix failed, 2 on a usage error.\n");
  return flags;
}

std::string SummaryLine(const conformance::Report& report) {
  using conformance::Verdict;
  return absl::StrCat(report.Passed()                     ? "PASSED"
                      : report.Count(Verdict::kFail) == 0 ? "NOT VERIFIED"
                                                          : "FAILED",
                      ": ", report.Count(Verdict::kPass), " pass, ",
                      report.Count(Verdict::kFail), " fail, ",
                      report.Count(Verdict::kSkip), " skip, ",
                      report.Count(Verdict::kNoReference), " no reference (of ",
                      report.checks.size(), " checks)",
                      report.Passed() || report.Count(Verdict::kFail) > 0
                          ? ""
                          : "; a check without a reference is not a pass",
                      "\n");
}

// The report files asked for, each rendered from the same Report.
absl::Status WriteReports(const ConformanceCliOptions& o,
                          const conformance::Report& report) {
  const std::pair<const std::string*,
                  std::string (*)(const conformance::Report&)>
      outputs[] = {{&o.json_path, &conformance::ReportToJson},
                   {&o.junit_path, &conformance::ReportToJUnit},
                   {&o.html_path, &conformance::ReportToHtml}};
  for (const auto& [path, render] : outputs) {
    if (path->empty()) continue;
    KILN_RETURN_IF_ERROR(conformance::WriteFile(*path, render(report)));
  }
  return absl::OkStatus();
}

}  // namespace

int ConformanceCommand(std::vector<std::string> args) {
  if (!args.empty() && args[0] == conformance::kChildMarker) {
    return conformance::RunChildCheck(
        std::vector<std::string>(args.begin() + 1, args.end()));
  }
  // For conformance/references/generate_references.py: writes every model
  // the runner has references for, with its inputs.
  if (args.size() == 2 && args[0] == conformance::kWriteCasesMarker) {
    const absl::StatusOr<int> n = conformance::WriteCaseModels(args[1], 1);
    if (!n.ok()) {
      std::cerr << "kiln conformance: " << n.status().message() << "\n";
      return kExitFailure;
    }
    std::cout << "wrote " << *n << " models to " << args[1] << "\n";
    return kExitSuccess;
  }
  ConformanceCliOptions options;
  options.run.self_executable = "/proc/self/exe";
  return CommandMain(
      ConformanceFlags(options), args, [&]() -> absl::StatusOr<int> {
        // Read (and validate) the matrices before the run, not after it.
        std::vector<conformance::RealHostCell> real_hosts;
        if (!options.release_matrices.empty()) {
          KILN_ASSIGN_OR_RETURN(real_hosts, conformance::LoadReleaseMatrices(
                                                options.release_matrices));
        }
        std::cout << "kiln conformance: " << options.run.plugin_path << "\n";
        conformance::Report report = conformance::RunConformance(
            options.run,
            [](const std::string& line) { std::cout << line << std::endl; });
        report.real_hosts = std::move(real_hosts);
        std::cout << SummaryLine(report);
        int required_failed = 0;
        for (const conformance::RealHostCell& c : report.real_hosts) {
          if (c.required && !c.Passed()) ++required_failed;
        }
        if (!report.real_hosts.empty()) {
          std::cout << "real released hosts: " << report.real_hosts.size()
                    << " cells merged, " << required_failed
                    << " required cells failed\n";
        }
        KILN_RETURN_IF_ERROR(WriteReports(options, report));
        return report.Passed() && required_failed == 0 ? kExitSuccess
                                                       : kExitFailure;
      });
}

}  // namespace kiln::cli
