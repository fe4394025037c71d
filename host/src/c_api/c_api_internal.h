// Definitions of the opaque application C API types, shared by the C API
// implementation files. Internal to libkiln.
#ifndef KILN_HOST_C_API_C_API_INTERNAL_H_
#define KILN_HOST_C_API_C_API_INTERNAL_H_

#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "interpreter/interpreter.h"
#include "kiln/kiln_c_api.h"
#include "model/model.h"
#include "plugin/plugin_loader.h"

struct KilnError {
  KilnStatus code = KILN_STATUS_UNKNOWN;
  std::string message;
};

struct KilnDelegateRequest {
  std::string name;
  std::string settings;       // serialized bytes
  std::string text_settings;  // text format, used when non-empty
  bool is_text = false;
};

struct KilnInterpreterOptions {
  kiln::PluginSearchConfig plugins;
  std::vector<KilnDelegateRequest> delegates;
  bool profile = false;
  kiln::PlanCacheOptions plan_cache;
  // Limits (KilnInterpreterOptionsSetMaxArenaBytes, ...).
  uint64_t max_arena_bytes = kiln::kDefaultMaxArenaBytes;
  uint64_t max_while_iterations = 0;
  int64_t invoke_timeout_ms = 0;
  bool use_default_delegates = true;
  int32_t num_threads = 0;
};

struct KilnModel {
  std::shared_ptr<const kiln::Model> model;
};

struct KilnInterpreter {
  std::unique_ptr<kiln::Interpreter> interpreter;
  // Strings handed out by the C API 1.1 queries (node info, warnings); a
  // std::set never moves its elements, so each c_str() stays valid until
  // the interpreter is destroyed.
  mutable std::set<std::string> strings;
  // DescribeNodes of one subgraph, reused while no new warning (a delegate
  // falling back) can have changed it.
  mutable std::vector<kiln::NodeInfo> node_cache;
  mutable int node_cache_subgraph = -1;
  mutable size_t node_cache_warnings = 0;
  // The events KilnInterpreterProfileEventCount took a snapshot of; the
  // strings KilnProfileEvent points to live here.
  std::vector<kiln::ProfileEvent> profile_snapshot;

  const char* Intern(const std::string& s) const {
    return strings.insert(s).first->c_str();
  }
};

struct KilnPluginProbe {
  std::vector<kiln::PluginLoadRecord> records;
};

namespace kiln {

// Converts a status to a caller-owned KilnError (NULL for OK).
KilnError* ToKilnError(const absl::Status& status);
KilnError* MakeKilnError(KilnStatus code, std::string message);

// The in/out struct convention of the C API's queries: INVALID_ARGUMENT
// when `info` is NULL or `struct_size` is below `min_size` (the message
// names `function` and tells to set `size_macro`); NULL otherwise.
KilnError* CheckStruct(const void* info, uint32_t struct_size,
                       uint32_t min_size, const char* function,
                       const char* size_macro);

// Copies `full` into `info` up to info->struct_size (struct_size kept).
template <typename Struct>
void FillUpTo(const Struct& full, Struct* info) {
  const size_t n =
      info->struct_size < sizeof(Struct) ? info->struct_size : sizeof(Struct);
  std::memcpy(reinterpret_cast<char*>(info) + sizeof(uint32_t),
              reinterpret_cast<const char*>(&full) + sizeof(uint32_t),
              n - sizeof(uint32_t));
}

}  // namespace kiln

#endif  // KILN_HOST_C_API_C_API_INTERNAL_H_
