#include "runtime/host_log.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "kiln/kiln_common.h"

namespace kiln {
namespace {

thread_local std::vector<std::string>* tls_capture = nullptr;

int32_t LevelFromEnvironment() {
  const char* env = std::getenv("KILN_LOG_LEVEL");
  if (env == nullptr || env[0] == '\0') return KILN_LOG_WARNING;
  const absl::StatusOr<int32_t> level = ParseLogLevel(env);
  if (!level.ok()) {
    std::fprintf(stderr, "kiln: warning: KILN_LOG_LEVEL: %s\n",
                 std::string(level.status().message()).c_str());
    return KILN_LOG_WARNING;
  }
  return *level;
}

std::atomic<int32_t>& Level() {
  static std::atomic<int32_t> level{LevelFromEnvironment()};
  return level;
}

}  // namespace

int32_t LogLevel() { return Level().load(std::memory_order_relaxed); }

void SetLogLevel(int32_t severity) {
  Level().store(severity, std::memory_order_relaxed);
}

absl::StatusOr<int32_t> ParseLogLevel(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  if (lower == "error") return KILN_LOG_ERROR;
  if (lower == "warning") return KILN_LOG_WARNING;
  if (lower == "info") return KILN_LOG_INFO;
  return absl::InvalidArgumentError(absl::StrCat(
      "log level '", name, "' is not one of error, warning, info"));
}

const char* LogLevelName(int32_t severity) {
  return severity >= KILN_LOG_ERROR     ? "error"
         : severity == KILN_LOG_WARNING ? "warning"
                                        : "info";
}

void LogPluginMessage(int32_t severity, const char* message) {
  const char* text = message != nullptr ? message : "";
  if (tls_capture != nullptr) {
    tls_capture->push_back(absl::StrCat(LogLevelName(severity), ": ", text));
  }
  if (severity >= LogLevel()) {
    std::fprintf(stderr, "kiln plugin %s: %s\n", LogLevelName(severity), text);
  }
}

PluginLogCapture::PluginLogCapture(std::vector<std::string>* messages)
    : previous_(tls_capture) {
  tls_capture = messages;
}

PluginLogCapture::~PluginLogCapture() { tls_capture = previous_; }

}  // namespace kiln
