// Application C API 1.2: profiling (events and Chrome traces) over
// Interpreter's profile (runtime/profiler.h).
#include <cstring>
#include <string>

#include "c_api/c_api_internal.h"
#include "interpreter/interpreter.h"

namespace {

KilnError* NullInterpreter(const char* function) {
  return kiln::MakeKilnError(KILN_STATUS_INVALID_ARGUMENT,
                             std::string(function) + ": interpreter is NULL");
}

}  // namespace

extern "C" {

void KilnInterpreterOptionsSetProfiling(KilnInterpreterOptions* options,
                                        int32_t enabled) {
  if (options != nullptr) options->profile = enabled != 0;
}

void KilnInterpreterSetProfiling(KilnInterpreter* interpreter,
                                 int32_t enabled) {
  if (interpreter != nullptr) {
    interpreter->interpreter->SetProfiling(enabled != 0);
  }
}

int32_t KilnInterpreterProfileEventCount(KilnInterpreter* interpreter) {
  if (interpreter == nullptr) return 0;
  interpreter->profile_snapshot = interpreter->interpreter->ProfileEvents();
  return static_cast<int32_t>(interpreter->profile_snapshot.size());
}

KilnError* KilnInterpreterGetProfileEvent(const KilnInterpreter* interpreter,
                                          int32_t index,
                                          KilnProfileEvent* event) {
  constexpr uint32_t kSize_1_2 =
      KILN_STRUCT_SIZE(KilnProfileEvent, delegate_name);
  if (KilnError* e = kiln::CheckStruct(
          event, event == nullptr ? 0 : event->struct_size, kSize_1_2,
          "KilnInterpreterGetProfileEvent", "KILN_PROFILE_EVENT_STRUCT_SIZE")) {
    return e;
  }
  if (interpreter == nullptr) {
    return NullInterpreter("KilnInterpreterGetProfileEvent");
  }
  const auto& events = interpreter->profile_snapshot;
  if (index < 0 || static_cast<size_t>(index) >= events.size()) {
    return kiln::MakeKilnError(
        KILN_STATUS_OUT_OF_RANGE,
        "KilnInterpreterGetProfileEvent: event " + std::to_string(index) +
            " is not in the snapshot, which holds " +
            std::to_string(events.size()) +
            " events (KilnInterpreterProfileEventCount takes it)");
  }
  const kiln::ProfileEvent& e = events[static_cast<size_t>(index)];
  KilnProfileEvent full;
  std::memset(&full, 0, sizeof(full));
  full.run = e.run;
  full.subgraph = e.subgraph;
  full.node = e.node;
  full.op_version = e.op_version;
  full.from_plugin = e.from_plugin ? 1 : 0;
  full.thread = e.thread;
  full.depth = e.depth;
  full.begin_us = static_cast<double>(e.begin_ns) / 1e3;
  full.duration_us = static_cast<double>(e.end_ns - e.begin_ns) / 1e3;
  full.name = e.name.c_str();
  full.category = e.category.c_str();
  full.op = e.op.c_str();
  full.plugin_path = e.plugin.c_str();
  full.delegate_name = e.delegate.c_str();
  kiln::FillUpTo(full, event);
  return nullptr;
}

void KilnInterpreterClearProfile(KilnInterpreter* interpreter) {
  if (interpreter == nullptr) return;
  interpreter->interpreter->ClearProfile();
  interpreter->profile_snapshot.clear();
}

KilnError* KilnInterpreterWriteProfileTrace(const KilnInterpreter* interpreter,
                                            const char* path) {
  if (interpreter == nullptr) {
    return NullInterpreter("KilnInterpreterWriteProfileTrace");
  }
  if (path == nullptr) {
    return kiln::MakeKilnError(
        KILN_STATUS_INVALID_ARGUMENT,
        "KilnInterpreterWriteProfileTrace: path is NULL");
  }
  return kiln::ToKilnError(interpreter->interpreter->WriteProfileTrace(path));
}

}  // extern "C"
