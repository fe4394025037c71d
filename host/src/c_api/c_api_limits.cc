// Application C API 1.2: limits for models from untrusted sources (memory,
// WHILE iterations, Invoke time) and cancellation. See interpreter.h
// ("Limits") and docs/security.md.
#include <cstdint>
#include <string>

#include "c_api/c_api_internal.h"
#include "kiln/kiln_c_api.h"

namespace {

KilnError* NullOptions(const char* function) {
  return kiln::MakeKilnError(KILN_STATUS_INVALID_ARGUMENT,
                             std::string(function) + ": options is NULL");
}

}  // namespace

KilnError* KilnInterpreterOptionsSetMaxArenaBytes(
    KilnInterpreterOptions* options, uint64_t max_bytes) {
  if (options == nullptr) {
    return NullOptions("KilnInterpreterOptionsSetMaxArenaBytes");
  }
  options->max_arena_bytes =
      max_bytes == 0 ? kiln::kDefaultMaxArenaBytes : max_bytes;
  return nullptr;
}

KilnError* KilnInterpreterOptionsSetMaxWhileIterations(
    KilnInterpreterOptions* options, uint64_t max_iterations) {
  if (options == nullptr) {
    return NullOptions("KilnInterpreterOptionsSetMaxWhileIterations");
  }
  options->max_while_iterations = max_iterations;
  return nullptr;
}

KilnError* KilnInterpreterOptionsSetInvokeTimeout(
    KilnInterpreterOptions* options, int64_t timeout_ms) {
  if (options == nullptr) {
    return NullOptions("KilnInterpreterOptionsSetInvokeTimeout");
  }
  if (timeout_ms < 0) {
    return kiln::MakeKilnError(
        KILN_STATUS_INVALID_ARGUMENT,
        "KilnInterpreterOptionsSetInvokeTimeout: timeout_ms is " +
            std::to_string(timeout_ms) +
            "; use 0 for no limit or a positive number of milliseconds");
  }
  options->invoke_timeout_ms = timeout_ms;
  return nullptr;
}

void KilnInterpreterCancel(KilnInterpreter* interpreter) {
  if (interpreter == nullptr || interpreter->interpreter == nullptr) return;
  interpreter->interpreter->Cancel();
}
