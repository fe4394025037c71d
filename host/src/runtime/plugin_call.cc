#include "runtime/plugin_call.h"

#include "absl/strings/str_cat.h"

namespace kiln {
namespace {

absl::StatusCode ToStatusCode(KilnStatus code) {
  if (code <= KILN_STATUS_OK || code > KILN_STATUS_UNAUTHENTICATED) {
    return absl::StatusCode::kUnknown;
  }
  return static_cast<absl::StatusCode>(code);
}

bool MayResize(PluginStage stage) {
  return stage == PluginStage::kPrepare ||
         stage == PluginStage::kPartitionPrepare;
}

}  // namespace

const char* PluginStageName(PluginStage stage) {
  // In PluginStage order.
  static constexpr const char* kNames[] = {"init",
                                           "prepare",
                                           "invoke",
                                           "create",
                                           "partition",
                                           "partition_init",
                                           "partition_prepare",
                                           "partition_invoke"};
  return kNames[static_cast<size_t>(stage)];
}

absl::Status PluginFailure(KilnStatus code, const CallError& error,
                           PluginStage stage, absl::string_view where) {
  return absl::Status(
      ToStatusCode(code),
      absl::StrCat(
          where, where.empty() ? "" : ": ", PluginStageName(stage),
          " failed: ", error.message.empty() ? "(no message)" : error.message));
}

absl::Status CallPlugin(
    const PluginCall& call,
    absl::FunctionRef<KilnStatus(KilnOpaqueContext*, KilnOpaqueNode*)> fn,
    absl::FunctionRef<std::string()> where) {
  CallContext context;
  context.graph = call.graph;
  context.node = call.node != nullptr ? call.node->desc : nullptr;
  context.plugin = call.plugin;
  context.claimed_nodes = call.claimed_nodes;
  context.allow_resize = MayResize(call.stage);
  context.allow_set_type = call.stage == PluginStage::kPrepare;
  const KilnStatus code = fn(
      ToOpaque(&context), call.node != nullptr ? ToOpaque(call.node) : nullptr);
  if (code == KILN_STATUS_OK) return absl::OkStatus();
  return PluginFailure(code, context.error, call.stage, where());
}

absl::Status CallKernel(const KilnKernel& kernel, const PluginCall& call,
                        void** state, absl::FunctionRef<std::string()> where) {
  switch (call.stage) {
    case PluginStage::kInit:
      if (kernel.init == nullptr) return absl::OkStatus();
      return CallPlugin(
          call,
          [&](KilnOpaqueContext* c, KilnOpaqueNode* n) {
            void* made = nullptr;
            const KilnStatus code = kernel.init(kernel.user_data, c, n, &made);
            if (code == KILN_STATUS_OK) *state = made;
            return code;
          },
          where);
    case PluginStage::kPrepare:
      if (kernel.prepare == nullptr) return absl::OkStatus();
      return CallPlugin(
          call,
          [&](KilnOpaqueContext* c, KilnOpaqueNode* n) {
            return kernel.prepare(kernel.user_data, *state, c, n);
          },
          where);
    default:
      return CallPlugin(
          call,
          [&](KilnOpaqueContext* c, KilnOpaqueNode* n) {
            return kernel.invoke(kernel.user_data, *state, c, n);
          },
          where);
  }
}

absl::Status CallDelegate(const KilnDelegateInterface& iface, void* instance,
                          const PluginCall& call, void** state,
                          absl::FunctionRef<std::string()> where) {
  switch (call.stage) {
    case PluginStage::kPartition:
      return CallPlugin(
          call,
          [&](KilnOpaqueContext* c, KilnOpaqueNode*) {
            return iface.partition(instance, c);
          },
          where);
    case PluginStage::kPartitionInit:
      return CallPlugin(
          call,
          [&](KilnOpaqueContext* c, KilnOpaqueNode* n) {
            void* made = nullptr;
            const KilnStatus code = iface.partition_init(instance, c, n, &made);
            if (code == KILN_STATUS_OK) *state = made;
            return code;
          },
          where);
    case PluginStage::kPartitionPrepare:
      if (iface.partition_prepare == nullptr) return absl::OkStatus();
      return CallPlugin(
          call,
          [&](KilnOpaqueContext* c, KilnOpaqueNode* n) {
            return iface.partition_prepare(instance, *state, c, n);
          },
          where);
    default:
      return CallPlugin(
          call,
          [&](KilnOpaqueContext* c, KilnOpaqueNode* n) {
            return iface.partition_invoke(instance, *state, c, n);
          },
          where);
  }
}

}  // namespace kiln
