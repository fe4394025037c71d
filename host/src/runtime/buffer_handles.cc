#include "runtime/buffer_handles.h"

#include "absl/strings/str_cat.h"
#include "plugin/plugin_loader.h"
#include "runtime/plugin_call.h"

namespace kiln {
namespace {

// copy_from_buffer_handle (kCopyFromBufferHandle) or copy_to_buffer_handle
// of `t`'s handle.
absl::Status CopyBufferHandle(TensorState& t, PluginStage stage) {
  const BufferBinding& b = t.buffer;
  const DelegateRef& owner = *b.owner;
  PluginCall call;
  call.stage = stage;
  call.graph = b.graph;
  call.plugin = owner.plugin.get();
  call.delegate = &owner;
  call.tensor = &t;
  call.profiler = owner.profiler != nullptr ? *owner.profiler : nullptr;
  const KilnDelegateInterface& iface = *owner.iface;
  const KilnBufferHandle handle = b.handle;
  return CallPlugin(
      call,
      [&](KilnOpaqueContext* c, KilnOpaqueNode*) {
        return stage == PluginStage::kCopyFromBufferHandle
                   ? iface.copy_from_buffer_handle(owner.instance, c, handle,
                                                   ToOpaque(&t))
                   : iface.copy_to_buffer_handle(owner.instance, c, handle,
                                                 ToOpaque(&t));
      },
      [&] {
        return absl::StrCat(owner.Label(), ", buffer handle ", handle,
                            " of tensor '", t.desc->name, "'");
      });
}

}  // namespace

std::string DelegateRef::Label() const {
  return absl::StrCat("delegate '", name, "' (",
                      plugin != nullptr ? plugin->path() : "?", ")");
}

bool ServesBufferHandles(const KilnDelegateInterface& iface,
                         uint32_t negotiated_version) {
  return negotiated_version >= KILN_MAKE_VERSION(1, 2, 0) &&
         KILN_STRUCT_HAS_FIELD(KilnDelegateInterface, iface.struct_size,
                               free_buffer_handle) &&
         iface.copy_from_buffer_handle != nullptr &&
         iface.copy_to_buffer_handle != nullptr &&
         iface.free_buffer_handle != nullptr;
}

void BindBufferHandle(TensorState& t, const DelegateRef* owner,
                      GraphView* graph, KilnBufferHandle handle,
                      bool host_stale, bool by_application) {
  BufferBinding& b = t.buffer;
  if (b.bound() && b.owner == owner && b.handle == handle) {
    b.host_stale = host_stale;
    b.device_stale = false;
    b.by_application = b.by_application || by_application;
    return;
  }
  ReleaseBufferHandle(t);
  if (handle == KILN_INVALID_BUFFER_HANDLE || owner == nullptr) return;
  b.handle = handle;
  b.owner = owner;
  b.graph = graph;
  b.host_stale = host_stale;
  b.device_stale = false;
  b.by_application = by_application;
  b.bytes = t.bytes;
}

void ReleaseBufferHandle(TensorState& t) {
  BufferBinding& b = t.buffer;
  if (!b.bound()) return;
  const DelegateRef& owner = *b.owner;
  const KilnBufferHandle handle = b.handle;
  b = BufferBinding();
  owner.iface->free_buffer_handle(owner.instance, handle);
}

absl::Status SyncToHost(TensorState& t) {
  if (!t.buffer.bound() || !t.buffer.host_stale) return absl::OkStatus();
  const absl::Status copied =
      CopyBufferHandle(t, PluginStage::kCopyFromBufferHandle);
  if (copied.ok()) t.buffer.host_stale = false;
  return copied;
}

absl::Status SyncToDevice(TensorState& t) {
  if (!t.buffer.bound() || !t.buffer.device_stale) return absl::OkStatus();
  const absl::Status copied =
      CopyBufferHandle(t, PluginStage::kCopyToBufferHandle);
  if (copied.ok()) t.buffer.device_stale = false;
  return copied;
}

}  // namespace kiln
