// Where plugins' KilnHostApi.log messages go: the host's log sink.
//
// A message at or above the log level is printed on stderr as
// "kiln plugin <level>: <message>". The level starts from the environment
// variable KILN_LOG_LEVEL ("error", "warning" (default), "info"); SetLogLevel
// (the CLI's --verbose, the application) overrides it for the process.
//
// While a PluginLogCapture is alive on a thread, every message logged on
// that thread, at any level, is also recorded in it: the plugin loader keeps
// what a plugin logs during its entry point and initialize in the load
// record, so a refusal can say what the plugin said.
//
// Thread-safety: the level is atomic; captures are per thread.
#ifndef KILN_HOST_RUNTIME_HOST_LOG_H_
#define KILN_HOST_RUNTIME_HOST_LOG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kiln {

// KILN_LOG_* severity: messages below it are not printed.
int32_t LogLevel();
void SetLogLevel(int32_t severity);
// "error", "warning", "info" (any case) as a KILN_LOG_* severity; an error
// naming the accepted words otherwise.
absl::StatusOr<int32_t> ParseLogLevel(absl::string_view name);
// "error", "warning" or "info".
const char* LogLevelName(int32_t severity);

// What KilnHostApi.log does: records into the thread's capture, if any, and
// prints at or above the log level.
void LogPluginMessage(int32_t severity, const char* message);

// Records, as "<level>: <message>", what is logged on this thread while it
// lives. Captures nest (the innermost records).
class PluginLogCapture {
 public:
  explicit PluginLogCapture(std::vector<std::string>* messages);
  ~PluginLogCapture();
  PluginLogCapture(const PluginLogCapture&) = delete;
  PluginLogCapture& operator=(const PluginLogCapture&) = delete;

 private:
  std::vector<std::string>* previous_;
};

}  // namespace kiln

#endif  // KILN_HOST_RUNTIME_HOST_LOG_H_
