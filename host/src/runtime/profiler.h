// Profiling of one interpreter: timed events that `kiln bench --profile`
// tabulates and that become Chrome trace-event JSON (Perfetto,
// chrome://tracing). Internal to libkiln.
//
// Who records what:
//   - CallPlugin (plugin_call.h) records one event around every plugin
//     callback it makes when the PluginCall carries a Profiler: init,
//     prepare, invoke of kernels; create, partition, partition_init/
//     prepare/invoke and the buffer-handle copies of delegates. The event's
//     category is the callback's name (PluginStageName).
//   - The interpreter records host-intrinsic nodes (category "invoke"),
//     AllocateTensors ("allocate") and each Invoke ("run").
//   - Plugins add their own events, nested in the host's, through the host
//     extension kiln.profiler/1 (ProfilerHostExtension below).
// With no Profiler attached nothing is recorded: the host tests one pointer
// per plugin call, reads no clock and allocates nothing.
//
// Thread-safety: Begin and End may be called from any thread (a plugin may
// time work on worker threads); the other members on the interpreter's
// thread, between calls into plugins.
#ifndef KILN_HOST_RUNTIME_PROFILER_H_
#define KILN_HOST_RUNTIME_PROFILER_H_

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "kiln/kiln_capabilities.h"

namespace kiln {

// One timed span. Times are nanoseconds of the steady clock since the
// profiler was created.
struct ProfileEvent {
  std::string name;      // "CONV_2D", "DELEGATE opencl", "Invoke", a plugin's
  std::string category;  // "invoke", "partition_invoke", "prepare", ...
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  // Which Invoke of the interpreter (0-based) the event belongs to; -1 for
  // events outside Invoke (creation, AllocateTensors).
  int32_t run = -1;
  int32_t subgraph = -1;
  int32_t node = -1;  // node index (the partition node for partitions)
  int32_t op_version = 0;
  std::string op;        // the node's op, "DELEGATE" for a partition node
  std::string plugin;    // path of the plugin called (or adding the event)
  std::string delegate;  // the delegate's name, for delegate callbacks
  uint32_t thread = 0;   // small number per thread, in order of first use
  // Events open on the same thread when this one began (0: outermost).
  int32_t depth = 0;
  bool from_plugin = false;  // added through kiln.profiler/1
};

class Profiler {
 public:
  // At most this many events are kept; later ones are counted as dropped.
  static constexpr size_t kMaxEvents = size_t{1} << 22;

  Profiler();
  Profiler(const Profiler&) = delete;
  Profiler& operator=(const Profiler&) = delete;

  // Starts `event` now (begin_ns, run, thread and depth are set here).
  // Returns its token for End, or 0 when the event was dropped.
  uint64_t Begin(ProfileEvent event);
  // Ends the event `token` now, and any event begun after it on the same
  // thread that is still open (a plugin that forgot end_event). 0 and
  // unknown or already ended tokens are ignored.
  void End(uint64_t token);

  // Events begun from now on belong to Invoke number `run` (-1: none).
  void set_run(int32_t run);
  // A copy of the events so far, in begin order; events still open end now.
  std::vector<ProfileEvent> Events() const;
  uint64_t dropped_events() const;
  void Clear();

 private:
  int64_t Now() const;

  const int64_t epoch_ns_;
  mutable std::mutex mu_;
  std::vector<ProfileEvent> events_;
  std::vector<uint64_t> open_;  // tokens of open events, oldest first
  int32_t run_ = -1;
  uint64_t dropped_ = 0;
};

// The host extension kiln.profiler/1 (kiln/kiln_capabilities.h): its
// begin_event/end_event reach the Profiler of the calling callback's
// CallContext, and do nothing (begin_event returns 0) without one. Static
// storage.
const KilnProfilerHostExtension* ProfilerHostExtension();

// Chrome trace-event JSON ({"traceEvents": [...]}): one complete event
// ("ph": "X", "ts"/"dur" in microseconds, "pid", "tid") per ProfileEvent,
// with args subgraph, node, op, version, plugin, delegate and run where
// known, plus metadata naming the process `process_name`.
std::string ChromeTraceJson(const std::vector<ProfileEvent>& events,
                            const std::string& process_name);
// Writes ChromeTraceJson to `path`; errors name the path.
absl::Status WriteChromeTrace(const std::vector<ProfileEvent>& events,
                              const std::string& process_name,
                              const std::string& path);

}  // namespace kiln

#endif  // KILN_HOST_RUNTIME_PROFILER_H_
