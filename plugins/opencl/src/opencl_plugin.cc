// Kiln's OpenCL delegate plugin. Exports only KilnPluginEntry; loads
// libOpenCL at delegate creation, never at plugin load.
#include <cstring>
#include <memory>

#include "delegate.h"
#include "kiln/opencl/opencl_delegate.h"
#include "kiln/sdk/plugin.h"

namespace kiln::opencl {
namespace {

template <typename Body>
KilnStatus Guarded(KilnOpaqueContext* context, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::exception& e) {
    sdk::Host().report_error(
        context, KILN_STATUS_INTERNAL,
        (std::string("OpenCL delegate: internal error: ") + e.what()).c_str());
  } catch (...) {
    sdk::Host().report_error(context, KILN_STATUS_INTERNAL,
                             "OpenCL delegate: unknown internal error");
  }
  return KILN_STATUS_INTERNAL;
}

KilnStatus Create(void*, KilnOpaqueContext* context, const uint8_t* settings,
                  uint64_t settings_size, void** delegate) {
  return Guarded(context, [&] {
    std::unique_ptr<Delegate> d;
    const KilnStatus s =
        Delegate::Create(sdk::Host(), context, settings, settings_size, &d);
    if (s == KILN_STATUS_OK) *delegate = d.release();
    return s;
  });
}

void Destroy(void*, void* delegate) { delete static_cast<Delegate*>(delegate); }

KilnStatus ClaimNodes(void* delegate, KilnOpaqueContext* context) {
  return Guarded(context, [&] {
    return static_cast<Delegate*>(delegate)->ClaimNodes(context);
  });
}

KilnStatus PartitionInit(void* delegate, KilnOpaqueContext* context,
                         KilnOpaqueNode* partition, void** state) {
  return Guarded(context, [&] {
    std::unique_ptr<Partition> p;
    const KilnStatus s =
        static_cast<Delegate*>(delegate)->InitPartition(context, partition, &p);
    if (s == KILN_STATUS_OK) *state = p.release();
    return s;
  });
}

void PartitionFree(void*, void* state) {
  delete static_cast<Partition*>(state);
}

KilnStatus PartitionPrepare(void*, void* state, KilnOpaqueContext* context,
                            KilnOpaqueNode* partition) {
  return Guarded(context, [&] {
    return static_cast<Partition*>(state)->Prepare(context, partition);
  });
}

KilnStatus PartitionInvoke(void*, void* state, KilnOpaqueContext* context,
                           KilnOpaqueNode* partition) {
  return Guarded(context, [&] {
    return static_cast<Partition*>(state)->Invoke(context, partition);
  });
}

const char* DeclineReason(void* delegate, int32_t node_index) {
  if (delegate == nullptr) return nullptr;
  return static_cast<Delegate*>(delegate)->DeclineReason(node_index);
}

KilnStatus GetStats(void* delegate, KilnOpenClStats* stats) {
  if (delegate == nullptr || stats == nullptr ||
      stats->struct_size < KILN_OPENCL_STATS_STRUCT_SIZE) {
    return KILN_STATUS_INVALID_ARGUMENT;
  }
  static_cast<Delegate*>(delegate)->FillStats(stats);
  return KILN_STATUS_OK;
}

const char* DeviceDescription(void* delegate) {
  if (delegate == nullptr) return nullptr;
  return static_cast<Delegate*>(delegate)->description().c_str();
}

const KilnOpenClStatsExtension kStatsExtension = {
    {KILN_OPENCL_STATS_EXTENSION_STRUCT_SIZE, KILN_OPENCL_STATS_EXTENSION_ID,
     nullptr},
    GetStats,
    DeviceDescription};

const KilnDelegateDeclineReasonsExtension kDeclineExtension = {
    {KILN_DELEGATE_DECLINE_REASONS_EXTENSION_STRUCT_SIZE,
     KILN_DELEGATE_DECLINE_REASONS_EXTENSION_ID, &kStatsExtension.base},
    DeclineReason};

const KilnDelegateInterface kDelegateInterface = {
    KILN_DELEGATE_INTERFACE_STRUCT_SIZE,
    "opencl",
    "kiln.DelegateSettings",
    nullptr,
    Create,
    Destroy,
    ClaimNodes,
    PartitionInit,
    PartitionFree,
    PartitionPrepare,
    PartitionInvoke,
};

const KilnPluginDescriptor* Describe() {
  static sdk::PluginDefinition def = [] {
    sdk::PluginDefinition d("kiln_opencl", KILN_RUNTIME_VERSION_STRING);
    d.Delegate(&kDelegateInterface);
    d.Extensions(&kDeclineExtension.base);
    return d;
  }();
  return def.descriptor();
}

}  // namespace
}  // namespace kiln::opencl

KILN_DEFINE_PLUGIN(kiln::opencl::Describe)
