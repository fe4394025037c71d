// Kiln's OpenCL delegate plugin. Exports only KilnPluginEntry; loads
// libOpenCL at delegate creation, never at plugin load. The delegate
// interface and kiln.delegate_decline_reasons/1 come from the SDK's delegate
// helper; this file adds the kiln.opencl_stats/1 and kiln.opencl_buffers/1
// capabilities.
#include "delegate.h"
#include "kiln/opencl/opencl_delegate.h"
#include "kiln/sdk/delegate.h"
#include "kiln/sdk/plugin.h"
#include "ops.h"

namespace kiln::opencl {
namespace {

KilnStatus GetStats(void* handle, KilnOpenClStats* stats) {
  const Delegate* delegate = sdk::DelegateFromHandle<Delegate>(handle);
  if (delegate == nullptr || stats == nullptr ||
      stats->struct_size < KILN_OPENCL_STATS_STRUCT_SIZE_1) {
    return KILN_STATUS_INVALID_ARGUMENT;
  }
  delegate->FillStats(stats);
  return KILN_STATUS_OK;
}

const char* DeviceDescription(void* handle) {
  const Delegate* delegate = sdk::DelegateFromHandle<Delegate>(handle);
  return delegate == nullptr ? nullptr : delegate->description().c_str();
}

void* ClContext(void* handle) {
  const Delegate* delegate = sdk::DelegateFromHandle<Delegate>(handle);
  return delegate == nullptr ? nullptr : delegate->cl_context_handle();
}

void* ClCommandQueue(void* handle) {
  const Delegate* delegate = sdk::DelegateFromHandle<Delegate>(handle);
  return delegate == nullptr ? nullptr : delegate->cl_queue();
}

const KilnOpenClBuffersExtension kBuffersExtension = {
    {KILN_OPENCL_BUFFERS_EXTENSION_STRUCT_SIZE,
     KILN_OPENCL_BUFFERS_EXTENSION_ID, nullptr},
    ClContext,
    ClCommandQueue};

const KilnOpenClStatsExtension kStatsExtension = {
    {KILN_OPENCL_STATS_EXTENSION_STRUCT_SIZE, KILN_OPENCL_STATS_EXTENSION_ID,
     &kBuffersExtension.base},
    GetStats,
    DeviceDescription};

const KilnPluginDescriptor* Describe() {
  // No KILN_DELEGATE_FLAG_STATE_PER_SHAPE_SIGNATURE: a Partition binds its
  // output cl_mem buffers to the partition's tensors (buffer handles), and
  // those bindings are not kept per input signature, so the host prepares
  // the one Partition again after a shape change.
  static sdk::DelegateDefinition delegate(
      "opencl", &Delegate::Create, sdk::DelegateManifest().Ops(SupportedOps()),
      &kStatsExtension.base, sdk::BufferHandles::kYes);
  static sdk::PluginDefinition def =
      sdk::PluginDefinition("kiln_opencl", KILN_RUNTIME_VERSION_STRING)
          .Delegate(delegate.delegate_interface())
          .Extensions(delegate.extensions());
  return def.descriptor();
}

}  // namespace
}  // namespace kiln::opencl

KILN_DEFINE_PLUGIN(kiln::opencl::Describe)
