// The vendor-facing plugin conformance runner behind `kiln conformance`.
//
// The runner never loads the plugin under test into its own process: every
// check runs in a child process (fork + exec of `Options::self_executable`
// with the hidden arguments built by ChildArguments), under a timeout. A
// plugin that crashes, hangs, throws across the C boundary or leaks is thus
// reported as a failed check, never fatal to the run. The checks and their
// tolerances are documented in conformance/README.md.
#ifndef KILN_CONFORMANCE_RUNNER_CONFORMANCE_RUNNER_H_
#define KILN_CONFORMANCE_RUNNER_CONFORMANCE_RUNNER_H_

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace kiln::conformance {

// Verdict of one check. kFail and kNoReference make the run fail: a check
// whose outputs were not compared with a reference is not a pass.
enum class Verdict {
  kPass,
  kFail,
  kSkip,         // not run, with a reason (e.g. no input generator)
  kNoReference,  // ran, outputs not verified: no independent reference
};
const char* VerdictName(Verdict v);  // "pass", "fail", "skip", "no-reference"

// The extension API levels a host of this build serves, oldest first
// (KILN_MAKE_VERSION values).
std::vector<uint32_t> ServedAbiLevels();
std::string AbiLevelName(uint32_t version);  // "1.0"

struct CheckResult {
  std::string name;      // e.g. "execute:ADD/v2@1.1"
  std::string category;  // descriptor, negotiation, execute, ...
  Verdict verdict = Verdict::kFail;
  std::string message;
  double seconds = 0;
  // For checks tied to one kernel version and ABI level (the matrix); empty
  // / 0 otherwise.
  std::string op;  // "ADD" or "CUSTOM 'Name'"
  int32_t op_version = 0;
  uint32_t abi_level = 0;
};

struct KernelInfo {
  int32_t builtin_code = 0;
  std::string custom_name;
  int32_t min_version = 0;
  int32_t max_version = 0;
  std::vector<std::string> types;  // delegate rows: declared types ([] any)
};

// The delegate of the plugin under test, as it declares itself.
struct DelegateInfo {
  std::string name;  // "" when the plugin has no delegate
  // supported_ops (extension API 1.2); false: declares nothing.
  bool ops_declared = false;
  std::vector<KernelInfo> ops;
};

// One cell of a real released host's matrix
// (build/releases/matrix_<release>.json, written by
// conformance/releases/release_host_test.py): a plugin on a host, one of
// them built from git history. `kiln conformance --release-matrix` merges
// these into its reports (release_matrix.cc).
struct RealHostCell {
  std::string source;  // the matrix file it came from
  // The release of the file: which commit stands for it, its level.
  std::string release, commit, release_extension_api;
  std::string host, plugin, runner, summary;
  // The matrix row (a plugin across hosts), its file and the extension API
  // it was built for ("" when the file does not say).
  std::string plugin_row, plugin_path, plugin_extension_api;
  // built_from_history: the host is the release's (the plugin is today's);
  // false: the host is today's build (the plugin is the release's).
  bool host_is_real = false, built_from_history = false;
  // A failure fails the release-host test (false: reported, e.g. a defect
  // of the released plugin).
  bool required = false;
  int exit_code = 0;
  std::vector<std::string> levels;  // "1.0", ... as the runner tested them
  // Named lists of the cell ("failures", "delegate_checks", ...).
  std::vector<std::pair<std::string, std::vector<std::string>>> lists;
  // Per-check verdicts where the file has them (abi_level 0: none).
  std::vector<CheckResult> checks;
  bool Passed() const { return exit_code == 0; }
  // "real host 0.2.0 (77595c99fa50, extension API 1.2), built from history"
  // or "today's host".
  std::string HostLabel() const;
};

// Reads release-host matrices: each path is a matrix JSON file or a
// directory, whose matrix_*.json files are read (sorted). Validates every
// field used; an error names the file and the field.
absl::StatusOr<std::vector<RealHostCell>> LoadReleaseMatrices(
    const std::vector<std::string>& paths);

struct Report {
  std::string plugin_path;
  std::string plugin_name, plugin_version;
  uint32_t plugin_abi_version = 0, plugin_min_host_abi_version = 0;
  std::string reference_path;
  std::vector<uint32_t> abi_levels;  // every level tested
  std::vector<KernelInfo> kernels;
  DelegateInfo delegate;
  std::string reference_dir;  // independent reference outputs
  std::vector<CheckResult> checks;
  // Cells of real released hosts merged in (--release-matrix); rendered in
  // the HTML matrix and as JUnit testcases.
  std::vector<RealHostCell> real_hosts;
  // No check failed and every check that ran was verified (no kFail, no
  // kNoReference).
  bool Passed() const;
  int Count(Verdict v) const;
};

struct Options {
  std::string plugin_path;
  // Kiln's CPU plugin, the reference for outputs; "" = the default plugin
  // directory's libkiln_cpu.so.
  std::string reference_path;
  // Independent reference outputs (references.h); "" = the default
  // directory (conformance/references/golden or its installed copy).
  std::string reference_dir;
  // A vendor's custom-case file: inputs and expected outputs of the
  // plugin's custom ops (references.h LoadCustomCase); "" = none.
  std::string custom_cases_path;
  // Address-space limit of each check process in MiB (0 = none; not
  // applied in sanitizer builds).
  uint64_t memory_limit_mb = 4096;
  // Binary that understands ChildArguments (normally the kiln CLI itself).
  std::string self_executable;
  double timeout_seconds = 10;
  uint64_t seed = 1;
  // Repetitions of the load/unload check.
  int load_unload_cycles = 50;
  int threads = 4;
};

// Runs every check; `progress` receives one line per finished check.
Report RunConformance(const Options& options,
                      const std::function<void(const std::string&)>& progress);

// Renderings of a report.
std::string ReportToJson(const Report& report);
std::string ReportToJUnit(const Report& report);
std::string ReportToHtml(const Report& report);
// Writes `text` to `path`; the error names the file and the cause.
absl::Status WriteFile(const std::string& path, const std::string& text);

// Child side. `args` are the arguments after the hidden marker; writes one
// JSON result object to the result file named in them. Returns the process
// exit code.
inline constexpr const char* kChildMarker = "--internal-run-check";
// `kiln conformance --internal-write-cases DIR`: case_models.h
// WriteCaseModels (for the reference generator).
inline constexpr const char* kWriteCasesMarker = "--internal-write-cases";
int RunChildCheck(const std::vector<std::string>& args);

}  // namespace kiln::conformance

#endif  // KILN_CONFORMANCE_RUNNER_CONFORMANCE_RUNNER_H_
