#include "runtime/profiler.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "plugin/plugin_loader.h"
#include "runtime/graph.h"

namespace kiln {
namespace {

int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// 1, 2, ... in the order threads first record an event.
uint32_t ThreadNumber() {
  static std::atomic<uint32_t> next{1};
  thread_local const uint32_t number = next.fetch_add(1);
  return number;
}

uint64_t BeginPluginEvent(KilnOpaqueContext* context, const char* name,
                          const char* category) {
  CallContext* c = FromOpaque(context);
  if (c == nullptr || c->profiler == nullptr) return 0;
  ProfileEvent e;
  e.name = name != nullptr ? name : "(unnamed)";
  e.category = category != nullptr ? category : "plugin";
  e.from_plugin = true;
  e.subgraph = c->subgraph;
  if (c->node != nullptr) {
    e.node = c->node->index;
    e.op = c->node->OpName();
    e.op_version = c->node->version;
  }
  if (c->plugin != nullptr) e.plugin = c->plugin->path();
  return c->profiler->Begin(std::move(e));
}

void EndPluginEvent(KilnOpaqueContext* context, uint64_t token) {
  CallContext* c = FromOpaque(context);
  if (c == nullptr || c->profiler == nullptr || token == 0) return;
  c->profiler->End(token);
}

using Json = nlohmann::ordered_json;

Json EventArgs(const ProfileEvent& e) {
  Json args = Json::object();
  if (e.subgraph >= 0) args["subgraph"] = e.subgraph;
  if (e.node >= 0) args["node"] = e.node;
  if (!e.op.empty()) args["op"] = e.op;
  if (e.op_version > 0) args["version"] = e.op_version;
  if (!e.plugin.empty()) args["plugin"] = e.plugin;
  if (!e.delegate.empty()) args["delegate"] = e.delegate;
  if (e.run >= 0) args["run"] = e.run;
  if (e.from_plugin) args["source"] = "plugin";
  return args;
}

}  // namespace

Profiler::Profiler() : epoch_ns_(SteadyNowNs()) {}

int64_t Profiler::Now() const { return SteadyNowNs() - epoch_ns_; }

uint64_t Profiler::Begin(ProfileEvent event) {
  event.begin_ns = Now();
  event.end_ns = event.begin_ns;
  event.thread = ThreadNumber();
  std::lock_guard<std::mutex> lock(mu_);
  if (events_.size() >= kMaxEvents) {
    ++dropped_;
    return 0;
  }
  event.run = run_;
  for (uint64_t t : open_) {
    if (events_[t - 1].thread == event.thread) ++event.depth;
  }
  events_.push_back(std::move(event));
  const uint64_t token = events_.size();
  open_.push_back(token);
  return token;
}

void Profiler::End(uint64_t token) {
  const int64_t now = Now();
  std::lock_guard<std::mutex> lock(mu_);
  auto it = std::find(open_.begin(), open_.end(), token);
  if (token == 0 || it == open_.end()) return;
  const uint32_t thread = events_[token - 1].thread;
  // This event, and those begun after it on its thread and left open.
  auto kept = std::remove_if(it, open_.end(), [&](uint64_t t) {
    ProfileEvent& e = events_[t - 1];
    if (t != token && e.thread != thread) return false;
    e.end_ns = now;
    return true;
  });
  open_.erase(kept, open_.end());
}

void Profiler::set_run(int32_t run) {
  std::lock_guard<std::mutex> lock(mu_);
  run_ = run;
}

std::vector<ProfileEvent> Profiler::Events() const {
  const int64_t now = Now();
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<ProfileEvent> events = events_;
  for (uint64_t t : open_) events[t - 1].end_ns = now;
  return events;
}

uint64_t Profiler::dropped_events() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dropped_;
}

void Profiler::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  events_.clear();
  open_.clear();
  dropped_ = 0;
}

const KilnProfilerHostExtension* ProfilerHostExtension() {
  static const KilnProfilerHostExtension extension = {
      {KILN_PROFILER_HOST_EXTENSION_STRUCT_SIZE,
       KILN_PROFILER_HOST_EXTENSION_ID, nullptr},
      BeginPluginEvent,
      EndPluginEvent};
  return &extension;
}

std::string ChromeTraceJson(const std::vector<ProfileEvent>& events,
                            const std::string& process_name) {
  const int pid = static_cast<int>(getpid());
  Json trace_events = Json::array();
  trace_events.push_back({{"name", "process_name"},
                          {"ph", "M"},
                          {"pid", pid},
                          {"tid", 0},
                          {"args", {{"name", process_name}}}});
  for (const ProfileEvent& e : events) {
    trace_events.push_back({{"name", e.name},
                            {"cat", e.category},
                            {"ph", "X"},
                            {"ts", static_cast<double>(e.begin_ns) / 1e3},
                            {"dur", static_cast<double>(std::max<int64_t>(
                                        e.end_ns - e.begin_ns, 0)) /
                                        1e3},
                            {"pid", pid},
                            {"tid", e.thread},
                            {"args", EventArgs(e)}});
  }
  Json trace = {{"traceEvents", std::move(trace_events)},
                {"displayTimeUnit", "ms"}};
  // Names come from the model (untrusted): bytes that are not UTF-8 become
  // U+FFFD instead of an exception.
  return trace.dump(-1, ' ', false, Json::error_handler_t::replace);
}

absl::Status WriteChromeTrace(const std::vector<ProfileEvent>& events,
                              const std::string& process_name,
                              const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot open trace file '", path,
                     "' for writing: check the directory exists and is "
                     "writable"));
  }
  out << ChromeTraceJson(events, process_name) << "\n";
  out.close();
  if (!out) {
    return absl::DataLossError(absl::StrCat(
        "writing trace file '", path, "' failed (disk full or I/O error)"));
  }
  return absl::OkStatus();
}

}  // namespace kiln
