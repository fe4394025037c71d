// Delegate buffer handles (extension API 1.2): a tensor may be backed by
// memory a delegate instance owns (KilnBufferHandle, e.g. an OpenCL
// buffer). The binding (TensorState::buffer, graph.h) records which
// instance owns the handle and which copy is newer; this file binds,
// releases and copies. When to copy is the interpreter's decision
// (interpreter.h, "Buffer handles"). Internal to libkiln.
//
// Thread-safety: as the interpreter (one thread at a time).
#ifndef KILN_HOST_RUNTIME_BUFFER_HANDLES_H_
#define KILN_HOST_RUNTIME_BUFFER_HANDLES_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "kiln/kiln_extension.h"
#include "runtime/graph.h"

namespace kiln {

// A created delegate instance as the runtime sees it: what callbacks,
// messages, profile events and buffer bindings need. The interpreter's
// DelegateInstance extends it.
struct DelegateRef {
  std::string name;  // KilnDelegateInterface.name
  std::shared_ptr<LoadedPlugin> plugin;
  const KilnDelegateInterface* iface = nullptr;
  void* instance = nullptr;  // from create
  // The instance serves copy_from/copy_to/free_buffer_handle
  // (ServesBufferHandles).
  bool buffer_handles = false;
  // Where the interpreter keeps its active profiler (null inside when
  // profiling is off): the copies record events there.
  Profiler* const* profiler = nullptr;

  // "delegate 'opencl' (/path/libkiln_opencl.so)"
  std::string Label() const;
};

// Whether a delegate of a plugin negotiated at `negotiated_version` serves
// buffer handles: version 1.2 or later, a struct that covers the three
// callbacks, and all three set.
bool ServesBufferHandles(const KilnDelegateInterface& iface,
                         uint32_t negotiated_version);

// Binds `handle` of `owner` (which must serve buffer handles) to `t` of
// `graph`; KILN_INVALID_BUFFER_HANDLE unbinds. A different handle bound
// before is released through its owner's free_buffer_handle; rebinding the
// same handle only updates the flags. Afterwards host_stale is as given,
// device_stale false; by_application is kept for the same handle.
void BindBufferHandle(TensorState& t, const DelegateRef* owner,
                      GraphView* graph, KilnBufferHandle handle,
                      bool host_stale, bool by_application);
// Releases `t`'s handle (free_buffer_handle) and forgets the binding; does
// nothing when none is bound. The host data is not synchronised first.
void ReleaseBufferHandle(TensorState& t);

// The host data of `t` is current afterwards: calls the owner's
// copy_from_buffer_handle when the handle holds the newer value. Errors
// name the delegate, its plugin and the tensor; the flags are then
// unchanged.
absl::Status SyncToHost(TensorState& t);
// The handle of `t` is current afterwards: calls copy_to_buffer_handle when
// the host data holds the newer value.
absl::Status SyncToDevice(TensorState& t);

// The host data of `t` was written by someone other than the handle's
// owner: the handle, if any, is now the stale copy.
inline void MarkHostWritten(TensorState& t) {
  if (!t.buffer.bound()) return;
  t.buffer.host_stale = false;
  t.buffer.device_stale = true;
}

}  // namespace kiln

#endif  // KILN_HOST_RUNTIME_BUFFER_HANDLES_H_
