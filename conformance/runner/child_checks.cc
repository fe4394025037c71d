// The child side of the conformance runner: one check per process. Every
// function here may crash, hang or be killed; it reports through the result
// file only when it finishes.
#include <cxxabi.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <typeinfo>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "case_models.h"
#include "conformance_runner.h"
#include "delegate_checks.h"
#include "nlohmann/json.hpp"
#include "op_generators.h"
#include "plugin/plugin_loader.h"
#include "references.h"
#include "runtime/single_node_runner.h"
#include "version_inputs.h"

namespace kiln::conformance {
namespace {

using Json = nlohmann::json;

struct Spec {
  std::string result_path;  // where the result object goes
  std::string kind;
  std::string plugin;
  std::string reference;
  uint32_t cap = 0;
  int32_t op = 0;
  std::string custom;
  int32_t version = 1;
  uint64_t seed = 1;
  int cycles = 50;
  int threads = 4;
  // Delegate checks (delegate_checks.h).
  std::string delegate, kernels, references;
  std::string custom_cases;  // a vendor's custom-case file (custom ops)
  std::string graph = "single";
  int32_t interrupt = 0;
  bool outside = false;
};

// Sets the numeric field `key` of *s; false for an unknown key.
bool SetNumber(const std::string& key, int64_t n, Spec* s) {
  if (key == "cap") {
    s->cap = static_cast<uint32_t>(n);
  } else if (key == "op") {
    s->op = static_cast<int32_t>(n);
  } else if (key == "version") {
    s->version = static_cast<int32_t>(n);
  } else if (key == "seed") {
    s->seed = static_cast<uint64_t>(n);
  } else if (key == "cycles") {
    s->cycles = static_cast<int>(n);
  } else if (key == "threads") {
    s->threads = static_cast<int>(n);
  } else if (key == "interrupt") {
    s->interrupt = static_cast<int32_t>(n);
  } else if (key == "outside") {
    s->outside = n != 0;
  } else {
    return false;
  }
  return true;
}

struct Outcome {
  Verdict verdict = Verdict::kFail;
  std::string message;
  Json extra = Json::object();
};

Outcome Make(Verdict v, std::string message) {
  Outcome o;
  o.verdict = v;
  o.message = std::move(message);
  return o;
}

// A failed check whose message is `status`'s.
Outcome Failed(const absl::Status& status) {
  return Make(Verdict::kFail, std::string(status.message()));
}

std::string OpLabel(int32_t op, const std::string& custom) {
  return op == KILN_OP_CUSTOM ? absl::StrCat("CUSTOM '", custom, "'")
                              : std::string(BuiltinOpName(op));
}

// The exception currently being handled, as "type: what".
std::string CurrentException() {
  std::string type = "unknown type";
  if (const std::type_info* t = abi::__cxa_current_exception_type()) {
    int status = 0;
    char* name = abi::__cxa_demangle(t->name(), nullptr, nullptr, &status);
    type = status == 0 && name != nullptr ? name : t->name();
    std::free(name);
  }
  try {
    throw;
  } catch (const std::exception& e) {
    return absl::StrCat(type, ": ", e.what());
  } catch (...) {
    return type;
  }
}

// Runs a kernel, turning a C++ exception that crossed the C boundary into a
// status (the plugin broke the ABI contract; the host would have died).
absl::Status RunKernel(SingleNodeRunner& runner, const KilnKernel& kernel,
                       int invocations = 1) {
  try {
    return runner.RunRepeated(kernel, invocations);
  } catch (...) {
    return absl::InternalError(absl::StrCat(
        "a C++ exception crossed the plugin's C boundary (", CurrentException(),
        "); kernel callbacks must catch everything and return a status "
        "(the SDK's callbacks do)"));
  }
}

uint64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

absl::StatusOr<std::shared_ptr<LoadedPlugin>> Load(const std::string& path,
                                                   uint32_t cap) {
  try {
    return LoadPluginForTest(path, cap);
  } catch (...) {
    return absl::InternalError(absl::StrCat(
        "a C++ exception escaped KilnPluginEntry (", CurrentException(), ")"));
  }
}

// A float input of shape [2,3] mapped to one float output: how custom ops
// (whose signature the runner cannot know) are exercised.
GeneratedCase GenericCase() {
  GeneratedCase c;
  c.family = "generic (custom op)";
  GeneratedTensor x;
  x.shape = {2, 3};
  const float values[6] = {-1.5f, -0.5f, 0.f, 0.5f, 1.f, 2.f};
  x.bytes.resize(sizeof(values));
  std::memcpy(x.bytes.data(), values, sizeof(values));
  c.tensors.push_back(x);
  c.tensors.push_back(GeneratedTensor());
  c.inputs = {0};
  c.outputs = {1};
  return c;
}

Outcome Describe(const Spec& s) {
  PluginLoadRecord record;
  absl::StatusOr<HostOffer> offer = PluginLoader::MakeOffer(0);
  if (!offer.ok()) return Make(Verdict::kFail, offer.status().ToString());
  absl::StatusOr<std::shared_ptr<LoadedPlugin>> plugin;
  try {
    plugin = PluginLoader::Load(s.plugin, *offer, &record);
  } catch (...) {
    return Make(Verdict::kFail,
                absl::StrCat("a C++ exception escaped KilnPluginEntry (",
                             CurrentException(), ")"));
  }
  Outcome o;
  o.extra["name"] = record.name;
  o.extra["version"] = record.version;
  o.extra["abi_version"] = record.abi_version;
  if (!plugin.ok()) {
    o.verdict = Verdict::kFail;
    o.message = absl::StrCat(
        "the newest host (extension API ", AbiLevelName(offer->max_abi_version),
        ") refused the plugin: ", plugin.status().message());
    return o;
  }
  const LoadedPlugin& p = **plugin;
  o.extra["name"] = p.name();
  o.extra["version"] = p.version();
  o.extra["min_host_abi_version"] = p.descriptor()->min_host_abi_version;
  Json kernels = Json::array();
  for (const KilnKernel* k : p.kernels()) {
    kernels.push_back({{"builtin_code", k->builtin_code},
                       {"custom_name", k->custom_name ? k->custom_name : ""},
                       {"min_version", k->min_version},
                       {"max_version", k->max_version}});
  }
  o.extra["kernels"] = kernels;
  if (const KilnDelegateInterface* d = p.delegate()) {
    const DelegateDeclaration& declared = p.delegate_declaration();
    Json ops = Json::array();
    for (const DeclaredOp& op : declared.ops) {
      Json types = Json::array();
      for (KilnTensorType t : op.tensor_types) types.push_back(TypeName(t));
      ops.push_back({{"builtin_code", op.builtin_code},
                     {"custom_name", op.custom_name},
                     {"min_version", op.min_version},
                     {"max_version", op.max_version},
                     {"types", types}});
    }
    o.extra["delegate"] = {{"name", d->name != nullptr ? d->name : ""},
                           {"ops_declared", declared.ops_declared},
                           {"ops", ops}};
  }
  o.verdict = Verdict::kPass;
  o.message = absl::StrCat(p.Describe(), ": ", p.kernels().size(), " kernel(s)",
                           p.delegate() != nullptr ? ", a delegate" : "",
                           "; descriptor valid");
  return o;
}

Outcome Negotiate(const Spec& s) {
  absl::StatusOr<std::shared_ptr<LoadedPlugin>> plugin = Load(s.plugin, s.cap);
  Outcome o;
  o.extra["accepted"] = plugin.ok();
  if (!plugin.ok()) {
    o.verdict = Verdict::kFail;  // the parent decides whether it was due
    o.message = std::string(plugin.status().message());
    return o;
  }
  o.verdict = Verdict::kPass;
  o.message = absl::StrCat("accepted; negotiated extension API ",
                           AbiLevelName((*plugin)->negotiated_version()));
  return o;
}

// The case a check runs: the op's generated case or, for a custom op (whose
// signature the runner cannot know), the generic one.
absl::StatusOr<GeneratedCase> CaseFor(const Spec& s) {
  absl::StatusOr<GeneratedCase> c = GenerateCase(s.op, s.seed, s.version);
  if (!c.ok() && s.op == KILN_OP_CUSTOM) return GenericCase();
  return c;
}

// The plugin's run of one generated case.
struct PluginRun {
  const GeneratedCase& c;
  SingleNodeRunner& runner;
  std::vector<int> outputs;
  absl::Status status;
};

// Judges `run` against the independent reference of the op's generated
// case (LiteRT's reference kernels, references.h): the single-op graph of
// the same case at version 1, whose inputs every later version accepts with
// the same meaning. Never against another Kiln plugin.
Outcome JudgeRun(const Spec& s, const std::string& label, PluginRun& run,
                 const std::optional<Reference>& reference,
                 const std::string& missing = "");

Outcome JudgeAgainstReference(const Spec& s, const std::string& label,
                              PluginRun& run) {
  std::string missing;
  std::optional<Reference> reference;
  absl::StatusOr<GeneratedGraph> g =
      MakeGraph(kGraphSingle, s.op, InputVersion(s.op, s.version), s.seed);
  absl::StatusOr<Reference> r = g.ok() ? FindGraphReference(s.references, *g)
                                       : absl::StatusOr<Reference>(g.status());
  if (r.ok()) {
    reference = *std::move(r);
  } else {
    missing = std::string(r.status().message());
  }
  return JudgeRun(s, label, run, reference, missing);
}

// Judges `run` against `reference` (none: "no reference", `missing` says
// why).
Outcome JudgeRun(const Spec& s, const std::string& label, PluginRun& run,
                 const std::optional<Reference>& reference,
                 const std::string& missing) {
  bool narrow_ints = false;
  for (const GeneratedTensor& t : run.c.tensors) {
    narrow_ints = narrow_ints || t.type == KILN_TYPE_INT8 ||
                  t.type == KILN_TYPE_INT16 || t.type == KILN_TYPE_UINT8;
  }
  if (!run.status.ok() && narrow_ints && s.cap != 0 &&
      s.cap < KILN_MAKE_VERSION(1, 1, 0)) {
    return Make(
        Verdict::kSkip,
        absl::StrCat("a host serving extension API ", AbiLevelName(s.cap),
                     " cannot tell a kernel the quantization of its "
                     "int8/int16 tensors (KilnHostApi."
                     "tensor_quantization is 1.1), so refusing the ",
                     label, " case (v", run.c.exercises_version,
                     " inputs) is correct: ", run.status.message()));
  }
  if (!run.status.ok()) {
    return Make(
        Verdict::kFail,
        absl::StrCat(
            "declares ", label, " but failed on a valid generated input (v",
            run.c.exercises_version, " inputs, ", run.c.family, ")",
            reference ? absl::StrCat(" that ", reference->source, " run")
                      : std::string(),
            ": ", run.status.message()));
  }
  if (!reference) {
    return Make(Verdict::kNoReference,
                absl::StrCat("ran OK; outputs not compared: ", missing));
  }
  if (reference->outputs.size() != run.outputs.size()) {
    return Make(
        Verdict::kFail,
        absl::StrCat("the node has ", run.outputs.size(),
                     " outputs, the reference ", reference->outputs.size()));
  }
  for (size_t i = 0; i < run.outputs.size(); ++i) {
    const Tensor& t = run.runner.tensor(run.outputs[i]);
    const std::string diff = CompareWithReference(
        t.type, t.shape, t.data, t.bytes, reference->outputs[i],
        reference->abs_tolerance, reference->rel_tolerance);
    if (!diff.empty()) {
      return Make(
          Verdict::kFail,
          absl::StrCat("output ", i, " differs from the reference (",
                       reference->source, ", ", reference->path,
                       ") on a generated input (", run.c.family, "): ", diff));
    }
  }
  std::string older;
  if (s.op != KILN_OP_CUSTOM && run.c.exercises_version != s.version) {
    // Verified on an older version's inputs only: say so, and why.
    const char* gap = VersionInputsGap(s.op, s.version);
    older = absl::StrCat("; v", run.c.exercises_version,
                         " inputs: no version-true inputs for v", s.version,
                         gap != nullptr
                             ? absl::StrCat(" (", gap, ")")
                             : std::string(" (a version TFLite's op "
                                           "versioning does not change "
                                           "inputs for, or not listed)"));
  }
  return Make(Verdict::kPass, absl::StrCat("matches ", reference->source, " (",
                                           run.c.family, ")", older));
}

// A custom op: the runner cannot know its signature, so its reference is
// the vendor's case (--custom-cases FILE: inputs, custom options, expected
// outputs). Without one, the op runs on the generic float [2,3] input: a
// failure there fails the check (an op that always fails is caught); a
// success is "no reference", which is not a pass either.
Outcome ExecuteCustom(const Spec& s, const std::string& label,
                      const KilnKernel& kernel) {
  std::string missing = "no --custom-cases file given";
  if (!s.custom_cases.empty()) {
    absl::StatusOr<CustomCase> custom =
        LoadCustomCase(s.custom_cases, s.custom, s.version);
    if (custom.ok()) {
      SingleNodeRunner runner;
      PluginRun run{custom->c, runner,
                    BuildNode(custom->c, s.op, s.version, s.custom, &runner),
                    absl::OkStatus()};
      run.status = RunKernel(runner, kernel);
      return JudgeRun(s, label, run, custom->reference);
    }
    if (custom.status().code() != absl::StatusCode::kNotFound) {
      return Make(Verdict::kFail, std::string(custom.status().message()));
    }
    missing = std::string(custom.status().message());
  }
  const GeneratedCase c = GenericCase();
  SingleNodeRunner runner;
  PluginRun run{c, runner, BuildNode(c, s.op, s.version, s.custom, &runner),
                absl::OkStatus()};
  run.status = RunKernel(runner, kernel);
  if (!run.status.ok()) {
    return Make(
        Verdict::kFail,
        absl::StrCat(label, " failed on the generic float [2,3] input (",
                     missing, "): ", run.status.ToString(),
                     "; if the op takes other inputs, give its case with the "
                     "expected outputs: --custom-cases FILE "
                     "(conformance/README.md, \"Custom ops\")"));
  }
  return Make(Verdict::kNoReference,
              absl::StrCat("ran OK on the generic float [2,3] input; outputs "
                           "not verified (",
                           missing,
                           "): a check without a reference is not a pass; "
                           "give the op's case with its expected outputs: "
                           "--custom-cases FILE"));
}

Outcome Execute(const Spec& s) {
  absl::StatusOr<std::shared_ptr<LoadedPlugin>> plugin = Load(s.plugin, s.cap);
  if (!plugin.ok()) return Failed(plugin.status());
  const std::string label =
      absl::StrCat(OpLabel(s.op, s.custom), " v", s.version);
  const KilnKernel* kernel = FindKernel(**plugin, s.op, s.version, s.custom);
  if (kernel == nullptr) {
    return Make(Verdict::kFail,
                absl::StrCat("the plugin declares ", label,
                             " but the host resolves no kernel for it"));
  }
  if (s.op == KILN_OP_CUSTOM) return ExecuteCustom(s, label, *kernel);
  const absl::StatusOr<GeneratedCase> c = CaseFor(s);
  if (!c.ok()) return Make(Verdict::kSkip, std::string(c.status().message()));
  SingleNodeRunner runner;
  PluginRun run{*c, runner, BuildNode(*c, s.op, s.version, s.custom, &runner),
                absl::OkStatus()};
  run.status = RunKernel(runner, *kernel);
  return JudgeAgainstReference(s, label, run);
}

Outcome ErrorPath(const Spec& s) {
  absl::StatusOr<std::shared_ptr<LoadedPlugin>> plugin = Load(s.plugin, s.cap);
  if (!plugin.ok()) return Failed(plugin.status());
  const KilnKernel* kernel = FindKernel(**plugin, s.op, s.version, s.custom);
  if (kernel == nullptr) return Make(Verdict::kFail, "no kernel resolved");
  absl::StatusOr<GeneratedCase> generated = CaseFor(s);
  if (!generated.ok()) {
    return Make(Verdict::kSkip, std::string(generated.status().message()));
  }
  GeneratedCase& c = *generated;
  // Input 0 becomes COMPLEX128, a type no kernel of these op families takes.
  // SHAPE and RANK read only the shape of any input type: their output
  // becomes COMPLEX128 instead.
  const bool type_agnostic_input =
      s.op == KILN_OP_SHAPE || s.op == KILN_OP_RANK;
  const char* what = type_agnostic_input ? "output 0" : "input 0";
  if (type_agnostic_input) {
    c.tensors[static_cast<size_t>(c.outputs[0])].type = KILN_TYPE_COMPLEX128;
  } else {
    GeneratedTensor& input = c.tensors[static_cast<size_t>(c.inputs[0])];
    int64_t count = 1;
    for (int32_t d : input.shape) count *= d;
    input.type = KILN_TYPE_COMPLEX128;
    input.bytes.assign(static_cast<size_t>(count) * 16, 0);
  }
  SingleNodeRunner runner;
  BuildNode(c, s.op, s.version, s.custom, &runner);
  const absl::Status status = RunKernel(runner, *kernel);
  if (status.ok()) {
    return Make(Verdict::kFail,
                absl::StrCat("accepted ", what,
                             " of type COMPLEX128 and returned OK; a kernel "
                             "must reject unsupported types with a non-OK "
                             "status and a message "
                             "(KilnHostApi.report_error)"));
  }
  if (status.message().find("(no message)") != absl::string_view::npos) {
    return Make(Verdict::kFail,
                absl::StrCat("rejected the wrong type with status ",
                             absl::StatusCodeToString(status.code()),
                             " but reported no message; call "
                             "KilnHostApi.report_error before failing"));
  }
  return Make(
      Verdict::kPass,
      absl::StrCat(what, " of type COMPLEX128 rejected: ", status.ToString()));
}

Outcome VersionRanges(const Spec& s) {
  absl::StatusOr<std::shared_ptr<LoadedPlugin>> plugin = Load(s.plugin, s.cap);
  if (!plugin.ok()) return Failed(plugin.status());
  std::map<std::pair<int32_t, std::string>, std::set<int32_t>> declared;
  for (const KilnKernel* k : (*plugin)->kernels()) {
    auto& versions =
        declared[{k->builtin_code, k->custom_name ? k->custom_name : ""}];
    for (int32_t v = k->min_version; v <= k->max_version && v < 10000; ++v) {
      versions.insert(v);
    }
  }
  std::vector<std::string> problems, probed;
  for (const auto& [key, versions] : declared) {
    const auto& [op, custom] = key;
    std::vector<int32_t> outside = {*versions.rbegin() + 1};
    if (*versions.begin() > 1) outside.push_back(*versions.begin() - 1);
    for (int32_t v = *versions.begin(); v < *versions.rbegin(); ++v) {
      if (!versions.count(v)) outside.push_back(v);  // gaps
    }
    for (int32_t v : outside) {
      probed.push_back(absl::StrCat(OpLabel(op, custom), " v", v));
      if (FindKernel(**plugin, op, v, custom) != nullptr) {
        problems.push_back(absl::StrCat(OpLabel(op, custom), " v", v,
                                        " is outside the declared ranges but "
                                        "the host selected the plugin"));
      }
    }
  }
  if (!problems.empty()) {
    return Make(Verdict::kFail, absl::StrJoin(problems, "; "));
  }
  return Make(
      Verdict::kPass,
      absl::StrCat("the host does not select the plugin for ", probed.size(),
                   " op version(s) outside its declared ranges (",
                   probed.size() > 6
                       ? absl::StrCat(absl::StrJoin(probed.begin(),
                                                    probed.begin() + 6, ", "),
                                      ", ...")
                       : absl::StrJoin(probed, ", "),
                   ")"));
}

Outcome Delegate(const Spec& s) {
  DelegateCheckSpec d;
  d.plugin = s.plugin;
  d.delegate = s.delegate;
  d.kernels = s.kernels;
  d.references = s.references;
  d.cap = s.cap;
  d.graph = s.graph;
  d.op = s.op;
  d.version = s.version;
  d.interrupt_op = s.interrupt;
  d.seed = s.seed;
  d.outside_declaration = s.outside;
  DelegateCheckOutcome r = RunDelegateCheck(d);
  Outcome o = Make(r.verdict, std::move(r.message));
  o.extra = std::move(r.extra);
  return o;
}

Outcome LoadUnload(const Spec& s) {
  std::string name;
  size_t kernels = 0;
  uint64_t rss_after_warmup = 0;
  const int warmup = std::min(5, s.cycles);
  for (int i = 0; i < s.cycles; ++i) {
    absl::StatusOr<std::shared_ptr<LoadedPlugin>> plugin =
        Load(s.plugin, s.cap);
    if (!plugin.ok()) {
      return Make(Verdict::kFail,
                  absl::StrCat("load ", i + 1, " of ", s.cycles,
                               " failed: ", plugin.status().message()));
    }
    if (i == 0) {
      name = (*plugin)->name();
      kernels = (*plugin)->kernels().size();
    } else if ((*plugin)->name() != name ||
               (*plugin)->kernels().size() != kernels) {
      return Make(Verdict::kFail,
                  absl::StrCat("load ", i + 1,
                               " returned a different descriptor (name or "
                               "kernel count changed)"));
    }
    if (i + 1 == warmup) rss_after_warmup = ResidentBytes();
  }
  const uint64_t rss_end = ResidentBytes();
  const int64_t growth =
      static_cast<int64_t>(rss_end) - static_cast<int64_t>(rss_after_warmup);
  constexpr int64_t kLimit = 8 << 20;
  if (growth > kLimit) {
    return Make(
        Verdict::kFail,
        absl::StrCat("possible leak: resident memory grew by ", growth / 1024,
                     " KiB over ", s.cycles - warmup,
                     " load/unload cycles (limit ", kLimit / 1024, " KiB)"));
  }
  return Make(Verdict::kPass,
              absl::StrCat(s.cycles,
                           " load/unload cycles; resident memory "
                           "change after warm-up ",
                           growth / 1024, " KiB"));
}

struct KernelCase {
  const KilnKernel* kernel;
  int32_t op;
  int32_t version;
  std::string custom;
  GeneratedCase c;
};

std::vector<KernelCase> CasesWithGenerators(const LoadedPlugin& plugin,
                                            uint64_t seed, size_t limit) {
  std::vector<KernelCase> cases;
  for (const KilnKernel* k : plugin.kernels()) {
    if (cases.size() >= limit) break;
    absl::StatusOr<GeneratedCase> c = GenerateCase(k->builtin_code, seed);
    if (!c.ok()) continue;
    cases.push_back({k, k->builtin_code, k->min_version, "", *c});
  }
  return cases;
}

// Single-threaded outputs of each case: bytes per output, empty for a case
// whose kernel failed (not usable for the concurrency check).
std::vector<std::optional<std::vector<std::vector<uint8_t>>>>
SingleThreadedOutputs(const std::vector<KernelCase>& cases) {
  std::vector<std::optional<std::vector<std::vector<uint8_t>>>> expected(
      cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    SingleNodeRunner r;
    const std::vector<int> outs =
        BuildNode(cases[i].c, cases[i].op, cases[i].version, "", &r);
    if (!RunKernel(r, *cases[i].kernel).ok()) continue;
    expected[i].emplace();
    for (int o : outs) {
      const Tensor& t = r.tensor(o);
      const auto* p = static_cast<const uint8_t*>(t.data);
      expected[i]->emplace_back(p, p + t.bytes);
    }
  }
  return expected;
}

struct ConcurrentResult {
  int mismatches = 0;
  std::string first_problem;  // of one mismatching run
};

// Runs every usable case `rounds` times on each of `threads` threads, each
// run with its own node and state, comparing with `expected`.
ConcurrentResult RunConcurrently(
    const std::vector<KernelCase>& cases,
    const std::vector<std::optional<std::vector<std::vector<uint8_t>>>>&
        expected,
    int threads, int rounds) {
  std::atomic<int> mismatches{0};
  std::vector<std::string> first_problem(static_cast<size_t>(threads));
  auto worker = [&](size_t t) {
    for (int round = 0; round < rounds; ++round) {
      for (size_t i = 0; i < cases.size(); ++i) {
        if (!expected[i]) continue;
        SingleNodeRunner r;
        const std::vector<int> outs =
            BuildNode(cases[i].c, cases[i].op, cases[i].version, "", &r);
        const absl::Status st = RunKernel(r, *cases[i].kernel);
        bool same = st.ok();
        for (size_t o = 0; same && o < outs.size(); ++o) {
          const Tensor& out = r.tensor(outs[o]);
          const auto* p = static_cast<const uint8_t*>(out.data);
          same = std::vector<uint8_t>(p, p + out.bytes) == (*expected[i])[o];
        }
        if (!same && mismatches.fetch_add(1) == 0) {
          first_problem[t] = absl::StrCat(
              OpLabel(cases[i].op, ""), " v", cases[i].version,
              st.ok() ? " produced a different output than single-threaded"
                      : absl::StrCat(" failed: ", st.message()));
        }
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back(worker, static_cast<size_t>(t));
  }
  for (std::thread& t : pool) t.join();
  ConcurrentResult result;
  result.mismatches = mismatches.load();
  for (const std::string& p : first_problem) {
    if (!p.empty()) result.first_problem = p;
  }
  return result;
}

Outcome Concurrency(const Spec& s) {
  absl::StatusOr<std::shared_ptr<LoadedPlugin>> plugin = Load(s.plugin, s.cap);
  if (!plugin.ok()) return Failed(plugin.status());
  const std::vector<KernelCase> cases =
      CasesWithGenerators(**plugin, s.seed, 8);
  if (cases.empty()) {
    return Make(Verdict::kSkip,
                "no declared kernel has an input generator to run "
                "concurrently");
  }
  const auto expected = SingleThreadedOutputs(cases);
  constexpr int kRounds = 20;
  const ConcurrentResult result =
      RunConcurrently(cases, expected, s.threads, kRounds);
  const size_t ops = static_cast<size_t>(
      std::count_if(expected.begin(), expected.end(),
                    [](const auto& e) { return e.has_value(); }));
  if (result.mismatches > 0) {
    return Make(
        Verdict::kFail,
        absl::StrCat(result.mismatches, " concurrent run(s) on ", s.threads,
                     " threads (own node and state each) "
                     "disagreed with single-threaded runs; first: ",
                     result.first_problem));
  }
  if (ops == 0) {
    return Make(Verdict::kSkip,
                "no kernel ran successfully single-threaded on generated "
                "inputs");
  }
  return Make(
      Verdict::kPass,
      absl::StrCat(ops, " kernel(s) x ", kRounds, " rounds on ", s.threads,
                   " threads, each with its own node and state, match "
                   "single-threaded outputs bit for bit"));
}

Outcome Leak(const Spec& s) {
  absl::StatusOr<std::shared_ptr<LoadedPlugin>> plugin = Load(s.plugin, s.cap);
  if (!plugin.ok()) return Failed(plugin.status());
  const std::vector<KernelCase> cases =
      CasesWithGenerators(**plugin, s.seed, 1000);
  if (cases.empty()) {
    return Make(Verdict::kSkip, "no declared kernel has an input generator");
  }
  constexpr int kWarmup = 5, kCycles = 100;
  constexpr int64_t kLimit = 4 << 20;
  std::vector<std::string> leaks;
  for (const KernelCase& k : cases) {
    auto cycle = [&] {
      SingleNodeRunner r;
      BuildNode(k.c, k.op, k.version, "", &r);
      (void)RunKernel(r, *k.kernel, 2);
    };
    for (int i = 0; i < kWarmup; ++i) cycle();
    const uint64_t before = ResidentBytes();
    for (int i = 0; i < kCycles; ++i) cycle();
    const int64_t growth =
        static_cast<int64_t>(ResidentBytes()) - static_cast<int64_t>(before);
    if (growth > kLimit) {
      leaks.push_back(absl::StrCat(OpLabel(k.op, ""), " v", k.version, " +",
                                   growth / 1024, " KiB"));
    }
  }
  if (!leaks.empty()) {
    return Make(
        Verdict::kFail,
        absl::StrCat("possible leak: resident memory grew by more than ",
                     kLimit / 1024, " KiB over ", kCycles,
                     " init/prepare/invoke x2/free cycles for: ",
                     absl::StrJoin(leaks, ", ")));
  }
  return Make(Verdict::kPass,
              absl::StrCat(cases.size(), " kernel(s) x ", kCycles,
                           " init/prepare/invoke/free cycles; resident memory "
                           "grew by at most ",
                           kLimit / 1024, " KiB each"));
}

// The hidden arguments of a check process: RESULT_FILE KIND key=value...
absl::StatusOr<Spec> ParseSpec(const std::vector<std::string>& args) {
  if (args.size() < 2) {
    return absl::InvalidArgumentError("expected RESULT_FILE KIND key=value...");
  }
  Spec s;
  s.result_path = args[0];
  s.kind = args[1];
  for (size_t i = 2; i < args.size(); ++i) {
    const size_t eq = args[i].find('=');
    if (eq == std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", args[i], "' is not key=value"));
    }
    const std::string key = args[i].substr(0, eq),
                      value = args[i].substr(eq + 1);
    int64_t n = 0;
    const bool numeric = absl::SimpleAtoi(value, &n);
    if (key == "plugin") {
      s.plugin = value;
    } else if (key == "reference") {
      s.reference = value;
    } else if (key == "custom") {
      s.custom = value;
    } else if (key == "delegate") {
      s.delegate = value;
    } else if (key == "kernels") {
      s.kernels = value;
    } else if (key == "references") {
      s.references = value;
    } else if (key == "custom_cases") {
      s.custom_cases = value;
    } else if (key == "graph") {
      s.graph = value;
    } else if (!numeric || !SetNumber(key, n, &s)) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown or non-numeric argument '", args[i], "'"));
    }
  }
  return s;
}

// Writes the outcome as the result object, atomically (write, rename).
absl::Status WriteResult(const std::string& path, const Outcome& o) {
  Json result = o.extra;
  result["verdict"] = VerdictName(o.verdict);
  result["message"] = o.message;
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << result.dump();
    if (!out) return absl::InternalError(absl::StrCat("cannot write ", tmp));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    return absl::InternalError(
        absl::StrCat("cannot rename ", tmp, ": ", ec.message()));
  }
  return absl::OkStatus();
}

}  // namespace

int RunChildCheck(const std::vector<std::string>& args) {
  static constexpr std::pair<const char*, Outcome (*)(const Spec&)> kChecks[] =
      {{"describe", &Describe},
       {"negotiation", &Negotiate},
       {"execute", &Execute},
       {"error_path", &ErrorPath},
       {"version_ranges", &VersionRanges},
       {"load_unload", &LoadUnload},
       {"concurrency", &Concurrency},
       {"leak", &Leak},
       {"delegate", &Delegate}};
  const absl::StatusOr<Spec> spec = ParseSpec(args);
  if (!spec.ok()) {
    std::fprintf(stderr,
                 "kiln conformance: malformed internal check arguments: %s\n",
                 std::string(spec.status().message()).c_str());
    return 2;
  }
  for (const auto& [kind, check] : kChecks) {
    if (spec->kind != kind) continue;
    const absl::Status written = WriteResult(spec->result_path, check(*spec));
    if (!written.ok()) {
      std::fprintf(stderr, "kiln conformance: %s\n",
                   std::string(written.message()).c_str());
      return 3;
    }
    return 0;
  }
  std::fprintf(stderr, "kiln conformance: unknown check kind '%s'\n",
               spec->kind.c_str());
  return 2;
}

}  // namespace kiln::conformance
