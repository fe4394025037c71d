// Kiln plugin SDK: a plugin's own timed events in the host's profile
// (`kiln bench --profile/--trace`), through the host extension
// kiln.profiler/1 (kiln/kiln_capabilities.h; extension API 1.2 hosts).
// Header-only.
//
//   KilnStatus Invoke(kiln::sdk::PartitionContext& p) override {
//     kiln::sdk::ProfileScope enqueue(p.host(), p.raw_context(), "enqueue",
//                                     "opencl");
//     ...                       // timed until the scope ends (or End())
//   }
//
// Events nest inside the host's event for the callback they are made in.
// Call only from inside a callback, with that callback's context. When
// profiling is off a scope costs two calls into the host (begin_event
// returns 0 and nothing is recorded); on hosts older than 1.2 it does
// nothing.
#ifndef KILN_SDK_PROFILER_H_
#define KILN_SDK_PROFILER_H_

#include <cstdint>

#include "kiln/kiln_capabilities.h"
#include "kiln/sdk/plugin.h"

namespace kiln::sdk {

// The kiln.profiler/1 of the host behind `host` (a callback's host table),
// or null when it does not offer it. Valid until the plugin is unloaded.
inline const KilnProfilerHostExtension* HostProfiler(const KilnHostApi& host) {
  if (host.get_host_extension == nullptr) return nullptr;
  const auto* profiler = static_cast<const KilnProfilerHostExtension*>(
      host.get_host_extension(KILN_PROFILER_HOST_EXTENSION_ID));
  if (profiler == nullptr ||
      !KILN_STRUCT_HAS_FIELD(KilnProfilerHostExtension,
                             profiler->base.struct_size, end_event)) {
    return nullptr;
  }
  return profiler;
}

// One event, from construction to End() or destruction. `name` and
// `category` are copied by the host (category NULL: "plugin").
class ProfileScope {
 public:
  // `host`: the callback's host table (KernelContext::host(),
  // DelegateContext::host()).
  ProfileScope(const KilnHostApi& host, KilnOpaqueContext* context,
               const char* name, const char* category = nullptr)
      : ProfileScope(HostProfiler(host), context, name, category) {}
  // With a profiler looked up once (HostProfiler(host); may be null).
  ProfileScope(const KilnProfilerHostExtension* profiler,
               KilnOpaqueContext* context, const char* name,
               const char* category = nullptr)
      : profiler_(profiler), context_(context) {
    if (profiler_ != nullptr) {
      token_ = profiler_->begin_event(context_, name, category);
    }
  }
  ~ProfileScope() { End(); }
  ProfileScope(const ProfileScope&) = delete;
  ProfileScope& operator=(const ProfileScope&) = delete;

  void End() {
    if (token_ == 0) return;
    profiler_->end_event(context_, token_);
    token_ = 0;
  }

 private:
  const KilnProfilerHostExtension* profiler_;
  KilnOpaqueContext* context_;
  uint64_t token_ = 0;
};

}  // namespace kiln::sdk

#endif  // KILN_SDK_PROFILER_H_
