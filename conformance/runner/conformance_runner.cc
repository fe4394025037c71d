#include "conformance_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "case_models.h"
#include "nlohmann/json.hpp"
#include "plugin/negotiation.h"
#include "plugin/plugin_loader.h"
#include "references.h"
#include "runtime/graph.h"
#include "runtime/host_api.h"

namespace kiln::conformance {
namespace {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;  // shadow memory needs the address space
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif
}  // namespace

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kPass:
      return "pass";
    case Verdict::kFail:
      return "fail";
    case Verdict::kSkip:
      return "skip";
    case Verdict::kNoReference:
      return "no-reference";
  }
  return "fail";
}

namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

Verdict ParseVerdict(const std::string& s) {
  if (s == "pass") return Verdict::kPass;
  if (s == "skip") return Verdict::kSkip;
  if (s == "no-reference") return Verdict::kNoReference;
  return Verdict::kFail;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Last `lines` non-empty lines of `text`, joined with " | ".
std::string Tail(const std::string& text, size_t lines) {
  std::vector<std::string> all =
      absl::StrSplit(text, '\n', absl::SkipWhitespace());
  if (all.size() > lines) all.erase(all.begin(), all.end() - lines);
  std::string out = absl::StrJoin(all, " | ");
  if (out.size() > 600) out = "..." + out.substr(out.size() - 600);
  return out;
}

std::string SignalDescription(int sig) {
  const char* name = sigabbrev_np(sig);
  std::string text = absl::StrCat("SIG", name != nullptr ? name : "?", " (",
                                  strsignal(sig), ")");
  if (sig == SIGABRT) {
    text +=
        ": abort() or std::terminate, e.g. a C++ exception thrown across "
        "the C boundary or a failed assertion";
  }
  return text;
}

// One check to run in a child process.
struct ChildCheck {
  std::string name, category;
  std::vector<std::string> args;  // kind then key=value pairs
  std::string op;
  int32_t op_version = 0;
  uint32_t abi_level = 0;
};

struct ChildOutcome {
  CheckResult result;
  Json data;  // the child's result object (empty if it died)
};

class Runner {
 public:
  Runner(const Options& options,
         const std::function<void(const std::string&)>& progress)
      : options_(options), progress_(progress) {
    char dir[] = "/tmp/kiln-conformance-XXXXXX";
    if (mkdtemp(dir) != nullptr) work_dir_ = dir;
  }
  ~Runner() {
    std::error_code ec;
    if (!work_dir_.empty()) fs::remove_all(work_dir_, ec);
  }

  ChildOutcome Run(const ChildCheck& check) {
    ChildOutcome out;
    CheckResult& r = out.result;
    r.name = check.name;
    r.category = check.category;
    r.op = check.op;
    r.op_version = check.op_version;
    r.abi_level = check.abi_level;
    const std::string id = std::to_string(counter_++);
    const std::string result_path = work_dir_ + "/result-" + id + ".json";
    const std::string log_path = work_dir_ + "/stderr-" + id + ".txt";
    std::vector<std::string> argv = {options_.self_executable, "conformance",
                                     kChildMarker, result_path};
    argv.insert(argv.end(), check.args.begin(), check.args.end());
    const auto start = std::chrono::steady_clock::now();
    const pid_t pid = Launch(argv, log_path);
    if (pid < 0) {
      r.verdict = Verdict::kFail;
      r.message =
          absl::StrCat("could not start a check process: ", strerror(errno));
      return Finish(out, start);
    }
    const ChildExit ended = Wait(pid, start);
    Judge(ended, ReadFile(log_path), result_path, out);
    return Finish(out, start);
  }

  void Emit(const CheckResult& r) {
    ++done_;
    std::ostringstream line;
    line << "[" << done_ << "] " << VerdictName(r.verdict);
    line << std::string(13 - std::string(VerdictName(r.verdict)).size(), ' ');
    line << r.name << " (" << static_cast<int>(r.seconds * 1000) << " ms)";
    if (r.verdict != Verdict::kPass) line << ": " << r.message;
    if (progress_) progress_(line.str());
  }

  const Options& options() const { return options_; }

 private:
  // How a check process ended.
  struct ChildExit {
    int status = 0;  // from waitpid
    bool timed_out = false;
  };

  // Starts `argv` in its own process group with stdout and stderr going to
  // `log_path`. Returns its pid, or -1 with errno set.
  pid_t Launch(std::vector<std::string> argv,
               const std::string& log_path) const {
    const pid_t pid = fork();
    if (pid == 0) {
      setpgid(0, 0);
      if (options_.memory_limit_mb > 0 && !kSanitized) {
        const rlim_t bytes = static_cast<rlim_t>(options_.memory_limit_mb)
                             << 20;
        const struct rlimit limit = {bytes, bytes};
        setrlimit(RLIMIT_AS, &limit);
      }
      const int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      if (fd >= 0) {
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        close(fd);
      }
      std::vector<char*> cargv;
      for (std::string& a : argv) cargv.push_back(a.data());
      cargv.push_back(nullptr);
      execv(cargv[0], cargv.data());
      _exit(127);
    }
    if (pid > 0) setpgid(pid, pid);
    return pid;
  }

  // Waits for `pid`, killing its process group past the timeout.
  ChildExit Wait(pid_t pid, std::chrono::steady_clock::time_point start) const {
    ChildExit ended;
    auto sleep = std::chrono::microseconds(200);
    while (true) {
      const pid_t w = waitpid(pid, &ended.status, WNOHANG);
      if (w == pid) break;
      if (w < 0 && errno != EINTR) break;
      const double elapsed = std::chrono::duration<double>(
                                 std::chrono::steady_clock::now() - start)
                                 .count();
      if (elapsed > options_.timeout_seconds) {
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
        waitpid(pid, &ended.status, 0);
        ended.timed_out = true;
        break;
      }
      std::this_thread::sleep_for(sleep);
      sleep = std::min(sleep * 2, std::chrono::microseconds(10000));
    }
    return ended;
  }

  // The verdict from how the process ended, its output and its result file.
  void Judge(const ChildExit& ended, const std::string& log,
             const std::string& result_path, ChildOutcome& out) const {
    CheckResult& r = out.result;
    const std::string log_tail = Tail(log, 4);
    r.verdict = Verdict::kFail;
    if (ended.timed_out) {
      r.message = absl::StrCat("timeout: did not finish within ",
                               options_.timeout_seconds,
                               " s (a hang?); the check process was killed");
    } else if (WIFSIGNALED(ended.status)) {
      r.message = absl::StrCat("crash: the check process died of ",
                               SignalDescription(WTERMSIG(ended.status)));
      if (!log_tail.empty()) {
        absl::StrAppend(&r.message, "; stderr: ", log_tail);
      }
    } else if (log.find("LeakSanitizer") != std::string::npos) {
      r.message =
          absl::StrCat("leak: LeakSanitizer reported leaks; ", log_tail);
    } else if (WIFEXITED(ended.status) && WEXITSTATUS(ended.status) != 0) {
      r.message = absl::StrCat("the check process exited with status ",
                               WEXITSTATUS(ended.status),
                               " (the plugin called exit()?)",
                               log_tail.empty() ? "" : "; stderr: ", log_tail);
    } else {
      Json data = Json::parse(ReadFile(result_path), nullptr, false);
      if (data.is_discarded() || !data.is_object()) {
        r.message = "the check process wrote no result";
      } else {
        out.data = data;
        r.verdict = ParseVerdict(data.value("verdict", "fail"));
        r.message = data.value("message", "");
      }
    }
  }

  ChildOutcome& Finish(ChildOutcome& out,
                       std::chrono::steady_clock::time_point start) {
    out.result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    Emit(out.result);
    return out;
  }

  Options options_;
  std::function<void(const std::string&)> progress_;
  std::string work_dir_;
  int counter_ = 0;
  int done_ = 0;
};

std::string OpLabel(int32_t code, const std::string& custom) {
  return code == KILN_OP_CUSTOM ? absl::StrCat("CUSTOM '", custom, "'")
                                : std::string(BuiltinOpName(code));
}

std::string Arg(const char* key, const std::string& value) {
  return absl::StrCat(key, "=", value);
}
std::string Arg(const char* key, int64_t value) {
  return absl::StrCat(key, "=", value);
}

}  // namespace

std::vector<uint32_t> ServedAbiLevels() {
  std::vector<uint32_t> levels;
  for (uint32_t minor = KILN_VERSION_MINOR(kMinPluginAbiVersion);
       minor <= KILN_VERSION_MINOR(kMaxPluginAbiVersion); ++minor) {
    const uint32_t v =
        KILN_MAKE_VERSION(KILN_VERSION_MAJOR(kMaxPluginAbiVersion), minor, 0);
    if (HostApiSizeForVersion(v) != 0) levels.push_back(v);
  }
  return levels;
}

std::string AbiLevelName(uint32_t v) {
  return absl::StrCat(KILN_VERSION_MAJOR(v), ".", KILN_VERSION_MINOR(v));
}

// A check without a reference is not a pass: its outputs were not
// verified.
bool Report::Passed() const {
  return Count(Verdict::kFail) == 0 && Count(Verdict::kNoReference) == 0;
}

int Report::Count(Verdict v) const {
  return static_cast<int>(
      std::count_if(checks.begin(), checks.end(),
                    [v](const CheckResult& c) { return c.verdict == v; }));
}

namespace {

// The checks of one run, in order; each step appends to the report.
class ConformanceRun {
 public:
  ConformanceRun(const Options& options,
                 const std::function<void(const std::string&)>& progress,
                 Report& report)
      : options_(options),
        runner_(options, progress),
        report_(report),
        plugin_(Arg("plugin", options.plugin_path)),
        references_(Arg("references", options.reference_dir)),
        seed_(Arg("seed", static_cast<int64_t>(options.seed))) {}

  void Run() {
    const bool described = Describe();
    std::vector<uint32_t> accepted_levels = Negotiate(described);
    if (!described || accepted_levels.empty()) {
      CheckResult skip;
      skip.name = "kernels";
      skip.category = "execute";
      skip.verdict = Verdict::kSkip;
      skip.message =
          "not run: the plugin could not be loaded at any host level";
      runner_.Emit(skip);
      report_.checks.push_back(skip);
      return;
    }
    const uint32_t newest = accepted_levels.back();
    std::vector<KernelInfo> kernels = report_.kernels;
    std::stable_sort(
        kernels.begin(), kernels.end(),
        [](const KernelInfo& a, const KernelInfo& b) {
          return std::tie(a.builtin_code, a.custom_name, a.min_version) <
                 std::tie(b.builtin_code, b.custom_name, b.min_version);
        });
    ExecuteKernels(kernels, accepted_levels);
    if (!report_.delegate.name.empty()) ExecuteDelegate(newest);
    Add("version_ranges", "version_ranges",
        {"version_ranges", plugin_, Arg("cap", newest)}, newest);
    ErrorPaths(kernels, newest);
    Lifecycle(newest);
  }

 private:
  void Add(std::string name, std::string category,
           std::vector<std::string> args, uint32_t level, std::string op = "",
           int32_t op_version = 0) {
    report_.checks.push_back(
        runner_
            .Run({std::move(name), std::move(category), std::move(args),
                  std::move(op), op_version, level})
            .result);
  }

  // 1. The descriptor at the newest level; fills the report's plugin facts.
  bool Describe() {
    ChildOutcome describe = runner_.Run({"descriptor",
                                         "descriptor",
                                         {"describe", plugin_},
                                         "",
                                         0,
                                         report_.abi_levels.back()});
    report_.checks.push_back(describe.result);
    const Json& d = describe.data;
    if (d.is_object()) {
      report_.plugin_name = d.value("name", "");
      report_.plugin_version = d.value("version", "");
      report_.plugin_abi_version = d.value("abi_version", 0u);
      report_.plugin_min_host_abi_version = d.value("min_host_abi_version", 0u);
      if (d.contains("delegate") && d["delegate"].is_object()) {
        const Json& del = d["delegate"];
        report_.delegate.name = del.value("name", "");
        report_.delegate.ops_declared = del.value("ops_declared", false);
        for (const Json& k : del.value("ops", Json::array())) {
          report_.delegate.ops.push_back(
              {k.value("builtin_code", 0), k.value("custom_name", ""),
               k.value("min_version", 0), k.value("max_version", 0),
               k.value("types", std::vector<std::string>{})});
        }
      }
      if (d.contains("kernels")) {
        for (const Json& k : d["kernels"]) {
          report_.kernels.push_back({k.value("builtin_code", 0),
                                     k.value("custom_name", ""),
                                     k.value("min_version", 0),
                                     k.value("max_version", 0),
                                     {}});
        }
      }
    }
    return describe.result.verdict == Verdict::kPass;
  }

  // 2. Negotiation at every served level. Returns the levels accepted.
  std::vector<uint32_t> Negotiate(bool described) {
    std::vector<uint32_t> accepted_levels;
    for (uint32_t level : report_.abi_levels) {
      ChildOutcome n = runner_.Run({"negotiation@" + AbiLevelName(level),
                                    "negotiation",
                                    {"negotiation", plugin_, Arg("cap", level)},
                                    "",
                                    0,
                                    level});
      CheckResult r = n.result;
      const bool accepted =
          n.data.is_object() && n.data.value("accepted", false);
      if (accepted) {
        accepted_levels.push_back(level);
      } else if (n.data.is_object() && described &&
                 report_.plugin_min_host_abi_version > level) {
        // Refused because the plugin declared a newer minimum host: correct.
        r.verdict = Verdict::kPass;
        r.message =
            absl::StrCat("refused as declared (min_host_abi_version ",
                         AbiLevelName(report_.plugin_min_host_abi_version),
                         "): ", r.message);
      }
      report_.checks.push_back(r);
    }
    return accepted_levels;
  }

  // 3. Every declared kernel version at every accepted level.
  void ExecuteKernels(const std::vector<KernelInfo>& kernels,
                      const std::vector<uint32_t>& levels) {
    for (const KernelInfo& k : kernels) {
      const std::string op = OpLabel(k.builtin_code, k.custom_name);
      for (int32_t v = k.min_version; v <= k.max_version; ++v) {
        for (uint32_t level : levels) {
          std::vector<std::string> args = {
              "execute",         plugin_,
              references_,       seed_,
              Arg("cap", level), Arg("op", k.builtin_code),
              Arg("version", v)};
          if (!k.custom_name.empty()) {
            args.push_back(Arg("custom", k.custom_name));
            if (!options_.custom_cases_path.empty()) {
              args.push_back(Arg("custom_cases", options_.custom_cases_path));
            }
          }
          Add(absl::StrCat("execute:", op, "/v", v, "@", AbiLevelName(level)),
              "execute", std::move(args), level, op, v);
        }
      }
    }
  }

  // 4. The delegate: every declared op version as a single-op model, the
  // version after each declared range (must be left to kernels), and the
  // multi-op graphs (chain, branch, interrupted by an undeclared op) on the
  // first declared op that chains, all through the interpreter at the
  // newest level, each in its own process.
  void ExecuteDelegate(uint32_t level) {
    const DelegateInfo& d = report_.delegate;
    const std::vector<std::string> common = {
        "delegate",
        plugin_,
        Arg("delegate", d.name),
        Arg("kernels", options_.reference_path),
        references_,
        seed_,
        Arg("cap", level)};
    const auto add = [&](const std::string& name, int32_t op, int32_t version,
                         std::vector<std::string> extra) {
      std::vector<std::string> args = common;
      args.push_back(Arg("op", op));
      args.push_back(Arg("version", version));
      args.insert(args.end(), extra.begin(), extra.end());
      Add(name, "delegate", std::move(args), level,
          std::string(BuiltinOpName(op)), version);
    };
    if (!d.ops_declared) {
      CheckResult skip;
      skip.name = "delegate:" + d.name;
      skip.category = "delegate";
      skip.verdict = Verdict::kSkip;
      skip.message =
          "the delegate declares no supported_ops (extension API 1.2), so "
          "the runner cannot know which ops to give it; declare them";
      runner_.Emit(skip);
      report_.checks.push_back(skip);
      return;
    }
    std::set<int32_t> declared_codes;
    int32_t chain_op = -1;
    for (const KernelInfo& k : d.ops) {
      if (k.builtin_code == KILN_OP_CUSTOM) continue;  // no generator
      declared_codes.insert(k.builtin_code);
      const std::string op = BuiltinOpName(k.builtin_code);
      const int32_t last = std::min(k.max_version, k.min_version + 15);
      for (int32_t v = k.min_version; v <= last; ++v) {
        add(absl::StrCat("delegate:", op, "/v", v), k.builtin_code, v, {});
      }
      add(absl::StrCat("delegate:", op, "/v", k.max_version + 1,
                       ":outside_declaration"),
          k.builtin_code, k.max_version + 1, {Arg("outside", 1)});
      if (chain_op < 0 && Chainable(k.builtin_code)) {
        chain_op = k.builtin_code;
      }
    }
    if (chain_op < 0) return;
    const std::string op = BuiltinOpName(chain_op);
    for (const char* kind : {kGraphChain, kGraphBranch}) {
      add(absl::StrCat("delegate:graph:", kind, ":", op), chain_op, 1,
          {Arg("graph", kind)});
    }
    for (int32_t u : InterruptCandidates()) {
      if (declared_codes.count(u) > 0) continue;
      add(absl::StrCat("delegate:graph:interrupted:", op, "+",
                       BuiltinOpName(u)),
          chain_op, 1, {Arg("graph", kGraphInterrupted), Arg("interrupt", u)});
      break;
    }
  }

  // 5. Error paths: one per op, at its lowest declared version.
  void ErrorPaths(const std::vector<KernelInfo>& kernels, uint32_t newest) {
    std::map<std::string, const KernelInfo*> lowest;
    for (const KernelInfo& k : kernels) {
      const std::string op = OpLabel(k.builtin_code, k.custom_name);
      if (!lowest.count(op) || k.min_version < lowest[op]->min_version) {
        lowest[op] = &k;
      }
    }
    for (const auto& [op, k] : lowest) {
      std::vector<std::string> args = {"error_path",
                                       plugin_,
                                       seed_,
                                       Arg("cap", newest),
                                       Arg("op", k->builtin_code),
                                       Arg("version", k->min_version)};
      if (!k->custom_name.empty()) {
        args.push_back(Arg("custom", k->custom_name));
      }
      Add(absl::StrCat("error_path:", op, "/v", k->min_version), "error_path",
          std::move(args), newest, op, k->min_version);
    }
  }

  // 6. Lifecycle, threads, leaks.
  void Lifecycle(uint32_t newest) {
    Add(absl::StrCat("load_unload:x", options_.load_unload_cycles),
        "load_unload",
        {"load_unload", plugin_, Arg("cap", newest),
         Arg("cycles", options_.load_unload_cycles)},
        newest);
    Add(absl::StrCat("concurrency:", options_.threads, "_threads"),
        "concurrency",
        {"concurrency", plugin_, seed_, Arg("cap", newest),
         Arg("threads", options_.threads)},
        newest);
    Add("leak:repeated_invocations", "leak",
        {"leak", plugin_, seed_, Arg("cap", newest)}, newest);
  }

  const Options& options_;
  Runner runner_;
  Report& report_;
  const std::string plugin_, references_, seed_;
};

}  // namespace

Report RunConformance(const Options& in,
                      const std::function<void(const std::string&)>& progress) {
  Options options = in;
  if (options.reference_path.empty()) {
    options.reference_path = DefaultPluginDirectory() + "/libkiln_cpu.so";
  }
  if (options.reference_dir.empty()) {
    options.reference_dir = DefaultReferenceDirectory();
  }
  std::error_code ec;
  const fs::path canonical = fs::weakly_canonical(options.plugin_path, ec);
  if (!ec) options.plugin_path = canonical.string();
  Report report;
  report.plugin_path = options.plugin_path;
  report.reference_path = options.reference_path;
  report.reference_dir = options.reference_dir;
  report.abi_levels = ServedAbiLevels();
  ConformanceRun(options, progress, report).Run();
  return report;
}

}  // namespace kiln::conformance
