// Kiln plugin SDK: run a loop on the interpreter's thread pool through the
// host extension kiln.parallel_for/1 (kiln/kiln_capabilities.h; extension
// API 1.3 hosts), or serially on older hosts. Header-only.
//
//   KilnStatus Invoke(kiln::sdk::KernelContext& k) {
//     ...                                  // read tensors, shapes first
//     return kiln::sdk::ParallelFor(
//         k.host(), k.raw_context(), rows, /*min_range=*/8,
//         [&](int64_t begin, int64_t end, int32_t thread_index) {
//           ComputeRows(begin, end, scratch[thread_index]);
//         });
//   }
//
// The function runs on several threads at once: it must only compute (no
// KilnHostApi calls, no exceptions) and write what its range owns. For
// results that do not depend on the thread count, compute each item
// independently of the range it falls in. Call only from inside a callback,
// with that callback's context (or from inside another ParallelFor's
// function: the nested loop then runs on that thread).
#ifndef KILN_SDK_PARALLEL_H_
#define KILN_SDK_PARALLEL_H_

#include <cstdint>
#include <type_traits>
#include <utility>

#include "kiln/kiln_capabilities.h"
#include "kiln/sdk/plugin.h"

namespace kiln::sdk {

// The kiln.parallel_for/1 of the host behind `host` (a callback's host
// table), or null when it does not offer it (hosts and instances below
// extension API 1.3). Valid until the plugin is unloaded.
inline const KilnParallelForHostExtension* HostParallelFor(
    const KilnHostApi& host) {
  if (host.get_host_extension == nullptr) return nullptr;
  const auto* ext = static_cast<const KilnParallelForHostExtension*>(
      host.get_host_extension(KILN_PARALLEL_FOR_HOST_EXTENSION_ID));
  if (ext == nullptr ||
      !KILN_STRUCT_HAS_FIELD(KilnParallelForHostExtension,
                             ext->base.struct_size, parallel_for)) {
    return nullptr;
  }
  return ext;
}

// How many thread_index values ParallelFor may pass for `context` (>= 1):
// the interpreter's pool size, or 1 without the extension. Size per-thread
// scratch with it.
inline int32_t ParallelThreads(const KilnHostApi& host,
                               KilnOpaqueContext* context) {
  const KilnParallelForHostExtension* ext = HostParallelFor(host);
  if (ext == nullptr) return 1;
  const int32_t n = ext->num_threads(context);
  return n < 1 ? 1 : n;
}

// Runs fn(begin, end, thread_index) over [0, count) in ranges of at least
// min_range items on the host's pool; on a host without kiln.parallel_for/1
// runs fn(0, count, 0) on this thread. fn returns void or KilnStatus (the
// first error stops the loop and is returned).
template <typename Fn>
KilnStatus ParallelFor(const KilnHostApi& host, KilnOpaqueContext* context,
                       int64_t count, int64_t min_range, Fn&& fn) {
  using Result = std::invoke_result_t<Fn&, int64_t, int64_t, int32_t>;
  auto call = [&fn](int64_t begin, int64_t end, int32_t index) -> KilnStatus {
    if constexpr (std::is_void_v<Result>) {
      fn(begin, end, index);
      return KILN_STATUS_OK;
    } else {
      return fn(begin, end, index);
    }
  };
  if (count <= 0) return KILN_STATUS_OK;
  const KilnParallelForHostExtension* ext = HostParallelFor(host);
  if (ext == nullptr) return call(0, count, 0);
  using Call = decltype(call);
  return ext->parallel_for(
      context, count, min_range,
      [](void* data, int64_t begin, int64_t end, int32_t index) -> KilnStatus {
        try {
          return (*static_cast<Call*>(data))(begin, end, index);
        } catch (...) {
          return KILN_STATUS_INTERNAL;
        }
      },
      &call);
}

}  // namespace kiln::sdk

#endif  // KILN_SDK_PARALLEL_H_
