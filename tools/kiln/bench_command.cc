// `kiln bench MODEL [--iterations N] [--warmup N] [--profile] [--trace FILE]
// [--shapes SHAPES]... [--json] [options]`: model open+verify, interpreter
// creation (plugins, delegates, compilation), allocation, and invoke latency
// over N runs on seeded random inputs; with --profile a per-op table of the
// timed runs (profile_report.h), with --trace a Chrome trace-event file of
// everything. With --shapes (repeated), every run first resizes the inputs
// to the next shape set in turn and allocates again (the switch, timed apart
// from invoke), which is what the plan cache (--plan-cache-size) makes
// cheap; the plan cache's hits, misses and evictions are reported either way.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "cli_common.h"
#include "commands.h"
#include "interpreter/interpreter.h"
#include "model/model.h"
#include "profile_report.h"

namespace kiln::cli {
namespace {

// The shapes of every input of the main subgraph, in input order.
using ShapeSet = std::vector<std::vector<int32_t>>;

struct BenchOptions {
  std::string model_path;
  int iterations = 50;
  int warmup = 5;
  bool json = false;
  bool profile = false;
  std::string trace_path;  // "" = no trace
  InterpreterOptions interpreter;
  std::vector<ShapeSet> shape_sets;  // --shapes, in order
};

struct LatencyStats {
  double mean = 0, median = 0, p90 = 0, min = 0, max = 0;
};

// Milliseconds of each phase.
struct BenchReport {
  std::string model_path;
  std::vector<std::string> delegates;
  double open_verify_ms = 0;
  double create_ms = 0;
  double allocate_ms = 0;
  double init_ms = 0;  // open + create + allocate
  double first_invoke_ms = 0;
  int iterations = 0;
  LatencyStats invoke_ms;
  // With --shapes: resize + AllocateTensors before each run.
  std::vector<ShapeSet> shape_sets;
  LatencyStats switch_ms;
  uint64_t arena_bytes = 0;
  PlanCacheStats plan_cache;
  std::vector<std::string> warnings;
  std::optional<ProfileReport> profile;  // with --profile
  std::string trace_path;                // with --trace
  size_t trace_events = 0;
};

// "1,64,128:2,64,128" -> {{1,64,128},{2,64,128}}: one shape per input,
// separated by ':' (as TFLite's benchmark_model writes input shapes).
absl::Status ParseShapeSet(absl::string_view value, ShapeSet* set) {
  for (absl::string_view shape : absl::StrSplit(value, ':')) {
    std::vector<int32_t> dims;
    for (absl::string_view dim :
         absl::StrSplit(shape, ',', absl::SkipWhitespace())) {
      int32_t d = 0;
      if (!absl::SimpleAtoi(dim, &d) || d < 0) {
        return UsageError(absl::StrFormat(
            "--shapes expects non-negative integers like 1,64,128:1,8 (one "
            "shape per input, ':' between inputs), got '%s'",
            value));
      }
      dims.push_back(d);
    }
    set->push_back(std::move(dims));
  }
  return absl::OkStatus();
}

FlagParser BenchFlags(BenchOptions& o) {
  FlagParser flags("kiln bench",
                   "Times model open+verify, interpreter creation, allocation "
                   "and invoke\n(seeded random inputs).");
  flags.Positional("MODEL", &o.model_path, "the model file (.tflite)")
      .Int("--iterations", "N", &o.iterations, "timed invocations (default 50)",
           1)
      .Int("--warmup", "N", &o.warmup, "untimed invocations first (default 5)",
           0)
      .Bool("--profile", &o.profile,
            "per-op table of the timed runs: count, total, mean and share "
            "of Invoke time, per delegate partition too")
      .String("--trace", "FILE", &o.trace_path,
              "write every profile event (creation, allocation, each node "
              "and partition, plugin events) as Chrome trace-event JSON for "
              "Perfetto or chrome://tracing")
      .Bool("--json", &o.json, "machine-readable output")
      .Custom(
          "--shapes", "SHAPES",
          [&o](absl::string_view value) {
            ShapeSet set;
            KILN_RETURN_IF_ERROR(ParseShapeSet(value, &set));
            o.shape_sets.push_back(std::move(set));
            return absl::OkStatus();
          },
          "input shapes for the runs, one per input separated by ':' (e.g. "
          "1,64,128); repeat to alternate: each run resizes to the next set "
          "and allocates again",
          FlagParser::Repeat::kYes)
      .Int("--plan-cache-size", "N", &o.interpreter.plan_cache.max_plans,
           "prepared plans kept per subgraph by input signature (default 4; "
           "0 turns the plan cache off)",
           0);
  AddLimitFlags(flags, &o.interpreter);
  AddPluginFlags(flags, &o.interpreter.plugins);
  AddDelegateFlags(flags, &o.interpreter.delegates);
  AddThreadsFlag(flags, &o.interpreter.num_threads);
  return flags;
}

using Clock = std::chrono::steady_clock;

double Ms(Clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

void FillInputs(Interpreter& interp) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> real(-1.f, 1.f);
  for (int i = 0; i < interp.num_inputs(); ++i) {
    TensorState* t = interp.input(i);
    if (t->data == nullptr) continue;
    if (t->desc->type == KILN_TYPE_FLOAT32) {
      float* p = static_cast<float*>(t->data);
      for (int64_t k = 0; k < t->NumElements(); ++k) p[k] = real(rng);
    } else {
      std::memset(t->data, 0, t->bytes);
    }
  }
}

LatencyStats Summarize(const std::vector<double>& times) {
  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  auto pct = [&](double p) {
    return sorted[std::min(sorted.size() - 1,
                           static_cast<size_t>(p * (sorted.size() - 1) + 0.5))];
  };
  LatencyStats s;
  s.mean = std::accumulate(times.begin(), times.end(), 0.0) / times.size();
  s.median = pct(0.5);
  s.p90 = pct(0.9);
  s.min = sorted.front();
  s.max = sorted.back();
  return s;
}

// Resizes the main subgraph's inputs to `set` and allocates again.
absl::Status SwitchShapes(Interpreter& interp, const ShapeSet& set) {
  if (set.size() != static_cast<size_t>(interp.num_inputs())) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--shapes gives %d shape(s) but the model has %d input(s); give one "
        "shape per input, separated by ':'",
        set.size(), interp.num_inputs()));
  }
  for (size_t i = 0; i < set.size(); ++i) {
    KILN_RETURN_IF_ERROR(interp.ResizeInput(static_cast<int>(i), set[i]));
  }
  return interp.AllocateTensors();
}

// Invokes warmup + iterations times (with --shapes, each after switching to
// the next shape set); fills the first-invoke and timed stats.
absl::Status TimeInvocations(Interpreter& interp, const BenchOptions& o,
                             BenchReport& r) {
  std::vector<double> times, switches;
  for (int i = 0; i < o.warmup + o.iterations; ++i) {
    if (!o.shape_sets.empty()) {
      const Clock::time_point start = Clock::now();
      KILN_RETURN_IF_ERROR(SwitchShapes(
          interp, o.shape_sets[static_cast<size_t>(i) % o.shape_sets.size()]));
      if (i >= o.warmup) switches.push_back(Ms(Clock::now() - start));
      FillInputs(interp);
    }
    const Clock::time_point start = Clock::now();
    KILN_RETURN_IF_ERROR(interp.Invoke());
    const double ms = Ms(Clock::now() - start);
    if (i == 0) r.first_invoke_ms = ms;
    if (i >= o.warmup) times.push_back(ms);
  }
  r.iterations = o.iterations;
  r.invoke_ms = Summarize(times);
  if (!switches.empty()) r.switch_ms = Summarize(switches);
  return absl::OkStatus();
}

// Partition rows of the profile: "<delegate>: subgraph S node N (K nodes)".
std::vector<PartitionLabel> PartitionLabels(const Interpreter& interp) {
  std::vector<PartitionLabel> labels;
  for (int s = 0; s < interp.num_subgraphs(); ++s) {
    for (const PartitionInfo& p : interp.Partitions(s)) {
      labels.push_back({s, p.node_index,
                        absl::StrFormat("%s: subgraph %d node %d (%d nodes)",
                                        p.delegate_name, s, p.node_index,
                                        p.delegated_nodes.size())});
    }
  }
  return labels;
}

// The profile table and the trace file, from the events recorded.
absl::Status CollectProfile(const Interpreter& interp, const BenchOptions& o,
                            BenchReport& r) {
  const std::vector<ProfileEvent> events = interp.ProfileEvents();
  if (o.profile) {
    r.profile = SummarizeProfile(events, o.warmup, PartitionLabels(interp));
  }
  if (!o.trace_path.empty()) {
    KILN_RETURN_IF_ERROR(interp.WriteProfileTrace(o.trace_path));
    r.trace_path = o.trace_path;
    r.trace_events = events.size();
  }
  return absl::OkStatus();
}

absl::StatusOr<BenchReport> CollectBench(const BenchOptions& options) {
  BenchOptions o = options;
  o.interpreter.profile = o.profile || !o.trace_path.empty();
  BenchReport r;
  r.model_path = o.model_path;
  const Clock::time_point t0 = Clock::now();
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<const Model> model,
                        Model::FromFile(o.model_path));
  const Clock::time_point t1 = Clock::now();
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Interpreter> interp,
                        Interpreter::Create(std::move(model), o.interpreter));
  r.delegates = interp->ActiveDelegates();
  const Clock::time_point t2 = Clock::now();
  KILN_RETURN_IF_ERROR(interp->AllocateTensors());
  const Clock::time_point t3 = Clock::now();
  r.open_verify_ms = Ms(t1 - t0);
  r.create_ms = Ms(t2 - t1);
  r.allocate_ms = Ms(t3 - t2);
  r.init_ms = Ms(t3 - t0);
  FillInputs(*interp);
  KILN_RETURN_IF_ERROR(TimeInvocations(*interp, o, r));
  r.arena_bytes = interp->arena_bytes();
  r.shape_sets = o.shape_sets;
  r.plan_cache = interp->plan_cache_stats();
  r.warnings = interp->warnings();
  if (o.interpreter.profile)
    KILN_RETURN_IF_ERROR(CollectProfile(*interp, o, r));
  return r;
}

Json StatsToJson(const LatencyStats& s) {
  return {{"mean", s.mean},
          {"median", s.median},
          {"p90", s.p90},
          {"min", s.min},
          {"max", s.max}};
}

Json BenchToJson(const BenchReport& r) {
  Json j;
  j["model"] = r.model_path;
  j["delegates"] = r.delegates;
  j["open_verify_ms"] = r.open_verify_ms;
  j["create_ms"] = r.create_ms;
  j["allocate_ms"] = r.allocate_ms;
  j["init_ms"] = r.init_ms;
  j["first_invoke_ms"] = r.first_invoke_ms;
  j["iterations"] = r.iterations;
  j["invoke_ms"] = StatsToJson(r.invoke_ms);
  if (!r.shape_sets.empty()) {
    j["shape_sets"] = r.shape_sets;
    j["switch_ms"] = StatsToJson(r.switch_ms);
  }
  j["arena_bytes"] = r.arena_bytes;
  j["plan_cache"] = {{"max_plans", r.plan_cache.max_plans},
                     {"hits", r.plan_cache.hits},
                     {"misses", r.plan_cache.misses},
                     {"evictions", r.plan_cache.evictions},
                     {"plans", r.plan_cache.plans},
                     {"bytes", r.plan_cache.bytes},
                     {"plugin_states", r.plan_cache.plugin_states}};
  j["warnings"] = r.warnings;
  if (r.profile.has_value()) j["profile"] = ProfileToJson(*r.profile);
  if (!r.trace_path.empty()) {
    j["trace"] = {{"path", r.trace_path}, {"events", r.trace_events}};
  }
  return j;
}

std::string BenchToText(const BenchReport& r) {
  std::string text = absl::StrFormat(
      "model            %s\n"
      "delegates        %s\n"
      "open + verify    %.3f ms\n"
      "create           %.3f ms (plugins, resolution, delegates)\n"
      "allocate         %.3f ms\n"
      "init total       %.3f ms\n"
      "first invoke     %.3f ms\n"
      "invoke (%d runs) mean %.3f ms, median %.3f, p90 %.3f, min %.3f, max "
      "%.3f\n"
      "arena            %u bytes\n",
      r.model_path,
      r.delegates.empty() ? "none" : absl::StrJoin(r.delegates, ", "),
      r.open_verify_ms, r.create_ms, r.allocate_ms, r.init_ms,
      r.first_invoke_ms, r.iterations, r.invoke_ms.mean, r.invoke_ms.median,
      r.invoke_ms.p90, r.invoke_ms.min, r.invoke_ms.max, r.arena_bytes);
  if (!r.shape_sets.empty()) {
    absl::StrAppendFormat(
        &text,
        "switch (%d runs)  resize + allocate, %d shape sets: mean %.3f ms, "
        "median %.3f, p90 %.3f, min %.3f, max %.3f\n",
        r.iterations, r.shape_sets.size(), r.switch_ms.mean, r.switch_ms.median,
        r.switch_ms.p90, r.switch_ms.min, r.switch_ms.max);
  }
  const PlanCacheStats& c = r.plan_cache;
  absl::StrAppendFormat(
      &text,
      "plan cache       %s: %u hits, %u misses, %u evictions; %u plans "
      "held (%u bytes, %u plugin states of opaque size)\n",
      c.max_plans > 0 ? absl::StrFormat("%d plans per subgraph", c.max_plans)
                      : std::string("off"),
      c.hits, c.misses, c.evictions, c.plans, c.bytes, c.plugin_states);
  if (r.profile.has_value() || !r.trace_path.empty()) {
    text += "(profiling was on: times include its small cost)\n";
  }
  if (r.profile.has_value()) text += "\n" + ProfileToText(*r.profile);
  if (!r.trace_path.empty()) {
    absl::StrAppendFormat(&text,
                          "\ntrace            %s (%d events; open in "
                          "ui.perfetto.dev or chrome://tracing)\n",
                          r.trace_path, r.trace_events);
  }
  return text;
}

}  // namespace

int BenchCommand(std::vector<std::string> args) {
  return ReportCommand(args, BenchFlags, CollectBench, BenchToJson,
                       BenchToText);
}

}  // namespace kiln::cli
