#include "runtime/host_extensions.h"

#include <cstring>

#include "runtime/profiler.h"
#include "runtime/thread_pool.h"

namespace kiln {

const std::vector<HostExtensionEntry>& HostExtensions() {
  // Register each host extension here, e.g.
  //   {KILN_PROFILER_HOST_EXTENSION_ID, ProfilerHostExtension(),
  //    KILN_MAKE_VERSION(1, 2, 0)},
  // and name its id in kiln_capabilities.h and docs/abi-policy.md.
  static const auto* kHostExtensions = new std::vector<HostExtensionEntry>{
      {KILN_PROFILER_HOST_EXTENSION_ID, &ProfilerHostExtension()->base,
       KILN_MAKE_VERSION(1, 2, 0)},
      {KILN_PARALLEL_FOR_HOST_EXTENSION_ID, &ParallelForHostExtension()->base,
       KILN_MAKE_VERSION(1, 3, 0)},
  };
  return *kHostExtensions;
}

const void* FindHostExtension(const std::vector<HostExtensionEntry>& entries,
                              const char* id, uint32_t abi_version) {
  if (id == nullptr) return nullptr;
  for (const HostExtensionEntry& e : entries) {
    if (e.since_abi_version <= abi_version && std::strcmp(e.id, id) == 0) {
      return e.extension;
    }
  }
  return nullptr;
}

}  // namespace kiln
