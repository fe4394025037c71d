#include "runtime/plugin_call.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "kiln/kiln_builtin_ops.h"
#include "plugin/plugin_loader.h"
#include "runtime/buffer_handles.h"
#include "runtime/profiler.h"

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

bool MayBindBuffer(const PluginCall& call) {
  return (call.stage == PluginStage::kPartitionPrepare ||
          call.stage == PluginStage::kPartitionInvoke) &&
         call.delegate != nullptr && call.delegate->buffer_handles;
}

absl::Status CallUnprofiled(
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
  context.subgraph = call.subgraph;
  context.profiler = call.profiler;
  context.thread_pool = call.thread_pool;
  context.delegate = call.delegate;
  context.allow_bind_buffer = MayBindBuffer(call);
  const KilnStatus code = fn(
      ToOpaque(&context), call.node != nullptr ? ToOpaque(call.node) : nullptr);
  if (code == KILN_STATUS_OK) return absl::OkStatus();
  return PluginFailure(code, context.error, call.stage, where());
}

// The event spanning `call`: named after the node's op ("DELEGATE <name>"
// for a partition node), the tensor copied, or the delegate.
ProfileEvent StageEvent(const PluginCall& call) {
  ProfileEvent e;
  e.category = PluginStageName(call.stage);
  e.subgraph = call.subgraph;
  if (call.plugin != nullptr) e.plugin = call.plugin->path();
  if (call.delegate != nullptr) e.delegate = call.delegate->name;
  if (call.node != nullptr) {
    const NodeDesc& node = *call.node->desc;
    e.node = node.index;
    e.op = node.OpName();
    e.op_version = node.version;
    e.name = node.builtin_code == KILN_OP_DELEGATE && !e.delegate.empty()
                 ? absl::StrCat(e.op, " ", e.delegate)
                 : e.op;
  } else if (call.tensor != nullptr) {
    e.name = absl::StrCat(e.category, " '", call.tensor->desc->name, "'");
  } else {
    e.name = absl::StrCat(e.category, " ", e.delegate);
  }
  return e;
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
                                           "partition_invoke",
                                           "copy_from_buffer_handle",
                                           "copy_to_buffer_handle"};
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
  if (call.profiler == nullptr) return CallUnprofiled(call, fn, where);
  const uint64_t token = call.profiler->Begin(StageEvent(call));
  absl::Status status = CallUnprofiled(call, fn, where);
  call.profiler->End(token);
  return status;
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
