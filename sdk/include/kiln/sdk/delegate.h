// Kiln plugin SDK: a delegate written as a small C++ interface, header-only.
//
// A vendor implements
//   class MyDelegate : public kiln::sdk::Delegate          (one per create)
//     Supports(node)           whether it runs a node; if not, why not
//     CreatePartitionKernel()  the kernel of one claimed partition
//   class MyPartition : public kiln::sdk::PartitionKernel
//     Init / Prepare / Invoke  of that partition, over a PartitionContext
//   a DelegateFactory          MyDelegate from decoded kiln.DelegateSettings
// and hands one DelegateDefinition to the plugin's descriptor:
//   static kiln::sdk::DelegateDefinition delegate("my_npu", &CreateMyDelegate);
//   static kiln::sdk::PluginDefinition plugin =
//       kiln::sdk::PluginDefinition("my_vendor", "1.0.0")
//           .Delegate(delegate.delegate_interface())
//           .Extensions(delegate.extensions());
//
// DelegateDefinition fills KilnDelegateInterface (kiln/kiln_extension.h) and
// the kiln.delegate_decline_reasons/1 capability (kiln/kiln_capabilities.h):
//   create     decodes the serialized kiln.DelegateSettings
//              (kiln/sdk/delegate_settings.h) and calls the factory;
//   partition  asks Supports about every node of the execution plan,
//              declines the connected groups of supported nodes smaller than
//              Delegate::min_partition_size, claims the rest through
//              KilnHostApi.context_delegate_nodes (the host splits them into
//              partitions) and keeps every decline reason for the capability;
//   partition_init/prepare/invoke/free
//              check the partition's delegated nodes, create its kernel, and
//              call Init, Prepare and Invoke; free destroys the kernel.
// Buffer handles (extension API 1.2): a delegate that keeps tensors in its
// own device memory between partitions builds its DelegateDefinition with
// BufferHandles::kYes and implements Delegate::CopyFromBufferHandle,
// CopyToBufferHandle and FreeBufferHandle; its partition kernels bind
// handles to their inputs and outputs with PartitionContext::
// BindBufferHandle and find the handles bound to them (by another partition
// of the same instance, or by the application) with BufferHandle. The host
// then copies a tensor between device and host memory only when a reader
// on the other side needs it (kiln/kiln_extension.h).
//
// Every callback runs under a guard: no C++ exception crosses the boundary.
// An exception becomes KILN_STATUS_INTERNAL, reported as "C++ exception
// escaped the '<name>' delegate's <callback>: <what()>".
//
// Errors: as in kernels, a method that fails reports why and returns the
// code in one call, `return context.Fail(KILN_STATUS_..., "what", value);`.
// The host prefixes the message with the delegate, its plugin path, the
// callback and the node, so say what is wrong and what to do.
//
// Threading: the host drives one delegate instance (and the kernels of its
// partitions) from one thread at a time; different instances, made by
// different interpreters, may run concurrently, so state shared between
// instances must be thread-safe. Destructors must not throw.
#ifndef KILN_SDK_DELEGATE_H_
#define KILN_SDK_DELEGATE_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kiln/kiln_capabilities.h"
#include "kiln/sdk/delegate_settings.h"
#include "kiln/sdk/plugin.h"

namespace kiln::sdk {

namespace internal {

template <typename... Parts>
std::string Concat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

}  // namespace internal

// A host callback that concerns no node: create, and the start of
// partition. Valid only for the duration of that callback.
class DelegateContext {
 public:
  DelegateContext(const KilnHostApi& host, KilnOpaqueContext* context)
      : host_(&host), context_(context) {}

  KilnOpaqueContext* raw_context() const { return context_; }
  // The host table of the plugin's load instance that made this delegate;
  // valid until that instance's shutdown, i.e. for the delegate's whole
  // life (a factory may keep it for the Delegate it makes).
  const KilnHostApi& host() const { return *host_; }
  // A tensor of the subgraph being partitioned, by index (present() is
  // false out of range). Create sees no subgraph.
  Tensor tensor(int32_t index) const {
    return Tensor(*host_, host_->context_tensor(context_, index));
  }
  // Reports an error built from the streamed parts; returns `code`.
  template <typename... Parts>
  KilnStatus Fail(KilnStatus code, const Parts&... parts) const {
    host_->report_error(context_, code, internal::Concat(parts...).c_str());
    return code;
  }

 private:
  const KilnHostApi* host_;
  KilnOpaqueContext* context_;
};

// A node seen from a delegate callback: its op, version, options and
// tensors (KernelContext's accessors), plus its tensors' indices in the
// subgraph and any other tensor of the subgraph. Valid only for the
// callback that made it; cheap to copy.
class NodeView : public KernelContext {
 public:
  NodeView(const KilnHostApi& host, KilnOpaqueContext* context,
           KilnOpaqueNode* node)
      : KernelContext(host, context, node) {}

  // Subgraph tensor index of input/output `i`; -1 for an omitted optional
  // input or an `i` out of range.
  int32_t input_index(int32_t i) const {
    return host().node_input_index(raw_node(), i);
  }
  int32_t output_index(int32_t i) const {
    return host().node_output_index(raw_node(), i);
  }
  // Any tensor of the subgraph, by index (present() is false out of range).
  Tensor tensor(int32_t index) const {
    return Tensor(host(), host().context_tensor(raw_context(), index));
  }
};

// One node of the subgraph as the model has it, and its index there.
class GraphNode : public NodeView {
 public:
  GraphNode(const KilnHostApi& host, KilnOpaqueContext* context,
            KilnOpaqueNode* node, int32_t index)
      : NodeView(host, context, node), index_(index) {}

  int32_t index() const { return index_; }

 private:
  int32_t index_;
};

// The answer of Delegate::Supports for one node.
class NodeSupport {
 public:
  static NodeSupport Supported() { return NodeSupport(true, std::string()); }
  // Not supported, for a reason built from the streamed parts and phrased
  // to stand alone, e.g. "CONV_2D version 7 is newer than the versions 1..1
  // this delegate implements". Users read it in `kiln inspect --delegate`.
  template <typename First, typename... Rest>
  static NodeSupport Unsupported(const First& first, const Rest&... rest) {
    return NodeSupport(false, internal::Concat(first, rest...));
  }

  bool supported() const { return supported_; }
  // Empty when supported.
  const std::string& reason() const { return reason_; }

 private:
  NodeSupport(bool supported, std::string reason)
      : supported_(supported), reason_(std::move(reason)) {}
  bool supported_;
  std::string reason_;
};

// Returns `expr` from the enclosing function (which returns NodeSupport)
// when it is unsupported, so that checks compose.
#define KILN_SDK_RETURN_IF_UNSUPPORTED(expr)                      \
  do {                                                            \
    ::kiln::sdk::NodeSupport kiln_sdk_support_ = (expr);          \
    if (!kiln_sdk_support_.supported()) return kiln_sdk_support_; \
  } while (0)

// What the callbacks of a partition kernel see. As a NodeView it is the
// partition node: its inputs and outputs are the partition's (tensors the
// rest of the graph writes and reads), Resize sizes those outputs during
// Prepare, Fail reports. nodes() are the original nodes it replaced. Valid
// only for the duration of one callback.
class PartitionContext : public NodeView {
 public:
  // `node_indices` must outlive the context.
  PartitionContext(const KilnHostApi& host, KilnOpaqueContext* context,
                   KilnOpaqueNode* partition,
                   const std::vector<int32_t>& node_indices)
      : NodeView(host, context, partition), node_indices_(node_indices) {}

  // Subgraph indices of the delegated nodes, in the host's order
  // (KilnHostApi.node_delegated_nodes); never empty.
  const std::vector<int32_t>& node_indices() const { return node_indices_; }
  // The buffer handle bound to `tensor` when this delegate instance owns it
  // (bound by a partition of this instance, or by the application for it),
  // else KILN_INVALID_BUFFER_HANDLE: then the host data is current. Always
  // invalid on hosts older than extension API 1.2.
  KilnBufferHandle BufferHandle(const Tensor& tensor) const {
    if (!HostHas(&KilnHostApi::tensor_buffer_handle)) {
      return KILN_INVALID_BUFFER_HANDLE;
    }
    return host().tensor_buffer_handle(raw_context(), tensor.raw());
  }
  // During Prepare or Invoke, binds `handle` (memory this instance owns) to
  // `tensor`, an input or output of this partition; KILN_INVALID_BUFFER_
  // HANDLE unbinds. host_data_stale: the handle holds a newer value than
  // the host data (the partition wrote only the device copy), so the host
  // calls CopyFromBufferHandle before a reader outside this instance. A
  // handle bound before is freed (FreeBufferHandle) unless it is the same.
  // Needs BufferHandles::kYes; UNIMPLEMENTED on hosts older than 1.2.
  KilnStatus BindBufferHandle(const Tensor& tensor, KilnBufferHandle handle,
                              bool host_data_stale) {
    if (!HostHas(&KilnHostApi::tensor_set_buffer_handle)) {
      return Fail(KILN_STATUS_UNIMPLEMENTED,
                  "binding buffer handles needs a host serving extension API "
                  "1.2 (KilnHostApi.tensor_set_buffer_handle)");
    }
    return host().tensor_set_buffer_handle(raw_context(), tensor.raw(), handle,
                                           host_data_stale ? 1 : 0);
  }

  // Views of the delegated nodes, in node_indices() order. Built on first
  // use in each callback, so a callback that does not ask pays nothing.
  const std::vector<GraphNode>& nodes() const {
    if (nodes_.size() != node_indices_.size()) {
      nodes_.clear();
      for (int32_t index : node_indices_) {
        KilnOpaqueNode* node = host().context_node(raw_context(), index);
        // partition_init checked every index; only a broken host gets here.
        if (node == nullptr) {
          throw std::runtime_error(internal::Concat(
              "delegated node ", index, " does not exist in the subgraph"));
        }
        nodes_.emplace_back(host(), raw_context(), node, index);
      }
    }
    return nodes_;
  }

 private:
  const std::vector<int32_t>& node_indices_;
  mutable std::vector<GraphNode> nodes_;
};

// The kernel of one partition, made by Delegate::CreatePartitionKernel. If
// Init, Prepare or Invoke fails, the host warns once and runs the
// partition's original nodes on kernel plugins instead.
class PartitionKernel {
 public:
  virtual ~PartitionKernel() = default;
  // Once, right after creation (partition_init): set up what depends only
  // on the graph. On failure the kernel is destroyed without further calls.
  virtual KilnStatus Init(PartitionContext& /*partition*/) {
    return KILN_STATUS_OK;
  }
  // After Init and after every change of input shapes (partition_prepare):
  // check shapes, Resize the partition's outputs, allocate resources.
  virtual KilnStatus Prepare(PartitionContext& /*partition*/) {
    return KILN_STATUS_OK;
  }
  // Per inference (partition_invoke): read the partition's inputs, write
  // its outputs. Tensor data pointers are valid only during the call.
  virtual KilnStatus Invoke(PartitionContext& partition) = 0;
};

// One delegate instance, made by a DelegateFactory per interpreter that
// selects the delegate and destroyed with it, after all its kernels.
class Delegate {
 public:
  virtual ~Delegate() = default;

  // At the start of every partition call (once per subgraph), before
  // Supports. A failure (reported through subgraph.Fail) fails the
  // interpreter's creation.
  virtual KilnStatus BeginPartitioning(DelegateContext& /*subgraph*/) {
    return KILN_STATUS_OK;
  }
  // Whether this delegate runs `node`. Every supported node is claimed (and
  // then never run by the kernels), so answer Unsupported, with the reason,
  // for every op, op version, type, shape or option not implemented
  // completely. The reason reaches the host through
  // kiln.delegate_decline_reasons/1.
  virtual NodeSupport Supports(const GraphNode& node) = 0;
  // Connected groups of supported nodes (linked by a tensor one produces and
  // another consumes) smaller than this are declined, each node with a
  // reason. The host applies DelegateSettings.min_partition_size on its own
  // as well; return it (or an option of yours) to have those nodes explained.
  virtual int32_t min_partition_size() const { return 1; }
  // A new kernel for one partition; Init follows. Must not return null.
  virtual std::unique_ptr<PartitionKernel> CreatePartitionKernel() = 0;

  // ---- Buffer handles (with BufferHandles::kYes; extension API 1.2) ----
  // Copies the value held by `handle` into `tensor`'s host data
  // (tensor.data(), tensor.byte_size() bytes). The host calls it before a
  // reader outside this instance reads a tensor whose handle is newer.
  virtual KilnStatus CopyFromBufferHandle(DelegateContext& context,
                                          KilnBufferHandle handle,
                                          const Tensor& tensor) {
    (void)handle;
    return context.Fail(KILN_STATUS_UNIMPLEMENTED, "tensor '", tensor.name(),
                        "': this delegate does not implement "
                        "CopyFromBufferHandle");
  }
  // Copies `tensor`'s host data into the memory behind `handle`, before a
  // partition of this instance reads a tensor whose host data is newer.
  virtual KilnStatus CopyToBufferHandle(DelegateContext& context,
                                        KilnBufferHandle handle,
                                        const Tensor& tensor) {
    (void)handle;
    return context.Fail(KILN_STATUS_UNIMPLEMENTED, "tensor '", tensor.name(),
                        "': this delegate does not implement "
                        "CopyToBufferHandle");
  }
  // The host no longer refers to `handle` (rebound, released at
  // AllocateTensors, or the interpreter is going away); called at most once
  // per binding, before the instance is destroyed. Must not throw.
  virtual void FreeBufferHandle(KilnBufferHandle /*handle*/) {}
};

// Whether a DelegateDefinition offers the host the buffer-handle callbacks.
enum class BufferHandles { kNo, kYes };

// What a delegate declares about itself (extension API 1.2), handed to
// DelegateDefinition:
//   - the ops it may claim: one row per op and inclusive version range, with
//     the tensor types every input and output of a claimed node must have
//     (an empty TypeSet: any type). A 1.2 host refuses a claim no row
//     covers; the helper declines, with a reason, any node that Supports()
//     accepts outside the rows, and logs a warning (a bug to fix in one of
//     the two). No rows at all: "undeclared", as before 1.2;
//   - optionally a settings message of its own (VendorSettings): its full
//     name and a serialized FileDescriptorSet defining it (static, e.g. the
//     array kiln_add_settings_descriptor_set generates). The host parses the
//     user's text or binary settings into it and the factory receives the
//     bytes in DelegateSettings::vendor_settings.
//   kiln::sdk::DelegateManifest()
//       .Op(KILN_OP_ADD, 1, 2, {KILN_TYPE_FLOAT32})
//       .CustomOp("acme.Fused", 1, 1)
//       .VendorSettings("acme.AcmeSettings", kSet, sizeof(kSet))
// `kiln plugin inspect PLUGIN` shows it without a model.
class DelegateManifest {
 public:
  struct Row {
    int32_t builtin_code;
    const char* custom_name;  // static; KILN_OP_CUSTOM only
    int32_t min_version, max_version;
    TypeSet types;
  };

  DelegateManifest& Op(int32_t builtin_code, int32_t min_version,
                       int32_t max_version, TypeSet types = {}) {
    rows_.push_back({builtin_code, nullptr, min_version, max_version, types});
    return *this;
  }
  // One Op row per element of `table`: any range of structs with
  // builtin_code, min_version, max_version and types members (a delegate's
  // own supported-op table), in order.
  template <typename Table>
  DelegateManifest& Ops(const Table& table) {
    for (const auto& op : table) {
      Op(op.builtin_code, op.min_version, op.max_version, op.types);
    }
    return *this;
  }
  DelegateManifest& CustomOp(const char* name, int32_t min_version,
                             int32_t max_version, TypeSet types = {}) {
    rows_.push_back({KILN_OP_CUSTOM, name, min_version, max_version, types});
    return *this;
  }
  DelegateManifest& VendorSettings(const char* type,
                                   const uint8_t* descriptor_set, size_t size) {
    settings_type_ = type;
    descriptor_set_ = descriptor_set;
    descriptor_set_size_ = size;
    return *this;
  }

  // KilnDelegateInterface.flags (KILN_DELEGATE_FLAG_*). With
  // KILN_DELEGATE_FLAG_STATE_PER_SHAPE_SIGNATURE a host that keeps plans per
  // input signature (extension API 1.2) may create one PartitionKernel per
  // signature of a partition (Init and Prepare each) and invoke each only
  // with the shapes it was prepared for, without calling Prepare again when
  // shapes return to a signature it keeps. Correct when a PartitionKernel
  // owns what its Prepare builds (buffers, plans) and shares nothing
  // mutable with other kernels of the same partition.
  DelegateManifest& Flags(uint32_t flags) {
    flags_ = flags;
    return *this;
  }

  const std::vector<Row>& rows() const { return rows_; }
  // Empty when no row declares `node`'s op, version and types; else why
  // not, phrased to follow "Supports() accepted <OP> version <V>, but ".
  std::string Uncovered(const NodeView& node) const {
    if (rows_.empty()) return "";
    const int32_t code = node.builtin_code();
    const char* custom = node.custom_name();
    std::string why = "the manifest declares no such op";
    for (const Row& row : rows_) {
      if (row.builtin_code != code ||
          (code == KILN_OP_CUSTOM &&
           (custom == nullptr || std::string(custom) != row.custom_name))) {
        continue;
      }
      if (node.op_version() < row.min_version ||
          node.op_version() > row.max_version) {
        why = internal::Concat("the manifest declares versions ",
                               row.min_version, "..", row.max_version);
        continue;
      }
      const KilnTensorType bad = FirstTypeOutside(node, row.types);
      if (bad < 0) return "";
      why = internal::Concat("a tensor has type ", KilnTensorTypeName(bad),
                             ", which the manifest does not declare (",
                             row.types.ToString(), ")");
    }
    return why;
  }

 private:
  friend class DelegateDefinition;
  // The first present operand's type outside `types`; -1 when none.
  static KilnTensorType FirstTypeOutside(const NodeView& node, TypeSet types) {
    if (types.empty()) return -1;
    for (int32_t i = 0; i < node.num_inputs() + node.num_outputs(); ++i) {
      const Tensor t = i < node.num_inputs()
                           ? node.input(i)
                           : node.output(i - node.num_inputs());
      if (t.present() && !types.contains(t.type())) return t.type();
    }
    return -1;
  }

  std::vector<Row> rows_;
  const char* settings_type_ = nullptr;
  const uint8_t* descriptor_set_ = nullptr;
  size_t descriptor_set_size_ = 0;
  uint32_t flags_ = 0;
};

// Makes a delegate instance from `settings` (all defaults when the
// application gave none). On failure it reports through context.Fail and
// returns the code; *delegate is then ignored. UNAVAILABLE (no device here)
// makes the host run without this delegate; any other failure, e.g.
// INVALID_ARGUMENT for a bad option (name it), fails the interpreter.
using DelegateFactory = KilnStatus (*)(DelegateContext& context,
                                       const DelegateSettings& settings,
                                       std::unique_ptr<Delegate>* delegate);

class DelegateDefinition;

namespace internal {

// What KilnDelegateInterface.create hands the host as `void* delegate`.
struct DelegateHandle {
  const DelegateDefinition* definition = nullptr;
  // The load instance whose create made it (its host table).
  const PluginInstance* instance = nullptr;
  std::unique_ptr<Delegate> delegate;
  // Node index -> why it was not claimed, from the latest partition call.
  std::map<int32_t, std::string> declined;
};

// What partition_init hands the host as the partition's state.
struct PartitionHandle {
  std::vector<int32_t> node_indices;
  std::unique_ptr<PartitionKernel> kernel;
};

// Declines (with a reason in *declined) every node of `supported` whose
// connected group has fewer than `min_size` nodes; returns the indices of
// the others in their order.
inline std::vector<int32_t> DeclineSmallGroups(
    const std::vector<GraphNode>& supported, int32_t min_size,
    std::map<int32_t, std::string>* declined) {
  std::vector<int32_t> kept;
  if (min_size <= 1) {
    for (const GraphNode& n : supported) kept.push_back(n.index());
    return kept;
  }
  std::map<int32_t, int32_t> parent;  // union-find over node indices
  for (const GraphNode& n : supported) parent[n.index()] = n.index();
  auto root = [&](int32_t n) {
    while (parent[n] != n) n = parent[n] = parent[parent[n]];
    return n;
  };
  std::map<int32_t, int32_t> producer;  // tensor -> supported node
  for (const GraphNode& n : supported) {
    for (int32_t o = 0; o < n.num_outputs(); ++o) {
      producer[n.output_index(o)] = n.index();
    }
  }
  for (const GraphNode& n : supported) {
    for (int32_t i = 0; i < n.num_inputs(); ++i) {
      auto p = producer.find(n.input_index(i));
      if (p != producer.end()) parent[root(n.index())] = root(p->second);
    }
  }
  std::map<int32_t, int32_t> group_size;
  for (const GraphNode& n : supported) ++group_size[root(n.index())];
  for (const GraphNode& n : supported) {
    const int32_t size = group_size[root(n.index())];
    if (size >= min_size) {
      kept.push_back(n.index());
    } else {
      (*declined)[n.index()] =
          Concat("its connected group of supported nodes has ", size,
                 " node(s), fewer than min_partition_size=", min_size);
    }
  }
  return kept;
}

// The partition's delegated node indices, each checked to exist. On failure
// reports and returns INTERNAL (a host that breaks its contract).
inline KilnStatus ReadDelegatedNodes(const KilnHostApi& host,
                                     KilnOpaqueContext* context,
                                     const KilnOpaqueNode* partition,
                                     std::vector<int32_t>* node_indices) {
  const DelegateContext reporter(host, context);
  const int32_t* nodes = nullptr;
  int32_t count = 0;
  const KilnStatus s = host.node_delegated_nodes(partition, &nodes, &count);
  if (s != KILN_STATUS_OK || nodes == nullptr || count <= 0) {
    return reporter.Fail(KILN_STATUS_INTERNAL,
                         "the partition node lists no delegated nodes "
                         "(node_delegated_nodes returned status ",
                         s, " with ", count, " nodes)");
  }
  node_indices->assign(nodes, nodes + count);
  for (int32_t index : *node_indices) {
    if (host.context_node(context, index) == nullptr) {
      return reporter.Fail(KILN_STATUS_INTERNAL, "delegated node ", index,
                           " does not exist in the subgraph");
    }
  }
  return KILN_STATUS_OK;
}

}  // namespace internal

// The vendor delegate behind an instance handle: the `void* delegate` that
// KilnDelegateInterface callbacks and capabilities receive. For a plugin's
// own capabilities (e.g. device statistics). T must be the class the
// factory created. Null for a null handle.
template <typename T>
T* DelegateFromHandle(void* handle) {
  if (handle == nullptr) return nullptr;
  return static_cast<T*>(
      static_cast<internal::DelegateHandle*>(handle)->delegate.get());
}

// Owns the KilnDelegateInterface and the kiln.delegate_decline_reasons/1
// capability of one delegate. The host keeps pointers into it, so keep it
// in a function-local static next to the PluginDefinition; not copyable.
class DelegateDefinition {
 public:
  // `name` (static string): what users select the delegate by, e.g. "npu".
  // `more_extensions`: the plugin's own capabilities (e.g. device
  // statistics), chained after the decline-reasons entry; it must stay
  // valid while the plugin is loaded. `buffer_handles`: kYes when the
  // delegate implements the Delegate's buffer-handle methods.
  DelegateDefinition(const char* name, DelegateFactory factory,
                     const KilnExtensionBase* more_extensions = nullptr,
                     BufferHandles buffer_handles = BufferHandles::kNo)
      : DelegateDefinition(name, factory, DelegateManifest(), more_extensions,
                           buffer_handles) {}
  // With what the delegate declares (ops it may claim, its own settings
  // message): DelegateManifest.
  DelegateDefinition(const char* name, DelegateFactory factory,
                     DelegateManifest manifest,
                     const KilnExtensionBase* more_extensions = nullptr,
                     BufferHandles buffer_handles = BufferHandles::kNo)
      : name_(name), factory_(factory), manifest_(std::move(manifest)) {
    static const char* const kStageNames[kNumStages] = {
        "create",
        "partition",
        "partition_init",
        "partition_prepare",
        "partition_invoke",
        "copy_from_buffer_handle",
        "copy_to_buffer_handle"};
    for (int i = 0; i < kNumStages; ++i) {
      where_[i] =
          internal::Concat("the '", name, "' delegate's ", kStageNames[i]);
    }
    FillTables(more_extensions, buffer_handles);
    interface_.flags = manifest_.flags_;
    internal::RegisterInstanceBoundDelegate(&interface_);
  }
  DelegateDefinition(const DelegateDefinition&) = delete;
  DelegateDefinition& operator=(const DelegateDefinition&) = delete;

  const char* name() const { return name_; }
  // For PluginDefinition::Delegate: the template the entry point copies into
  // each load instance (whose copy carries the PluginInstance as
  // user_data); never call it directly.
  const KilnDelegateInterface* delegate_interface() const {
    return &interface_;
  }

  // For PluginDefinition::Extensions: kiln.delegate_decline_reasons/1, then
  // `more_extensions`.
  const KilnExtensionBase* extensions() const { return &decline_reasons_.base; }

 private:
  enum Stage {
    kCreate,
    kPartition,
    kInit,
    kPrepare,
    kInvoke,
    kCopyFrom,
    kCopyTo,
    kNumStages
  };
  using KernelMethod = KilnStatus (PartitionKernel::*)(PartitionContext&);
  using CopyMethod = KilnStatus (Delegate::*)(DelegateContext&,
                                              KilnBufferHandle, const Tensor&);

  // The one place the C tables are filled; new extension API fields go
  // here.
  void FillTables(const KilnExtensionBase* more_extensions,
                  BufferHandles buffer_handles) {
    interface_ = KilnDelegateInterface{};
    interface_.struct_size = KILN_DELEGATE_INTERFACE_STRUCT_SIZE;
    interface_.name = name_;
    interface_.settings_type = manifest_.settings_type_ != nullptr
                                   ? manifest_.settings_type_
                                   : "kiln.DelegateSettings";
    interface_.settings_descriptor_set = manifest_.descriptor_set_;
    interface_.settings_descriptor_set_size = manifest_.descriptor_set_size_;
    for (const DelegateManifest::Row& row : manifest_.rows_) {
      KilnDelegateOpSupport op{};
      op.struct_size = KILN_DELEGATE_OP_SUPPORT_STRUCT_SIZE;
      op.builtin_code = row.builtin_code;
      op.custom_name = row.custom_name;
      op.min_version = row.min_version;
      op.max_version = row.max_version;
      std::vector<int32_t>& types = row_types_.emplace_back();
      for (KilnTensorType t = 0; t < 64; ++t) {
        if (row.types.contains(t)) types.push_back(t);
      }
      op.num_tensor_types = static_cast<uint32_t>(types.size());
      op.tensor_types = types.empty() ? nullptr : types.data();
      rows_.push_back(op);
    }
    for (const KilnDelegateOpSupport& op : rows_) row_ptrs_.push_back(&op);
    interface_.supported_ops = row_ptrs_.empty() ? nullptr : row_ptrs_.data();
    interface_.num_supported_ops = static_cast<uint32_t>(row_ptrs_.size());
    interface_.user_data = this;
    interface_.create = &Create;
    interface_.destroy = &Destroy;
    interface_.partition = &Partition;
    interface_.partition_init = &PartitionInit;
    interface_.partition_free = &PartitionFree;
    interface_.partition_prepare = &PartitionPrepare;
    interface_.partition_invoke = &PartitionInvoke;
    if (buffer_handles == BufferHandles::kYes) {
      interface_.copy_from_buffer_handle = &CopyFromBufferHandle;
      interface_.copy_to_buffer_handle = &CopyToBufferHandle;
      interface_.free_buffer_handle = &FreeBufferHandle;
    }
    decline_reasons_ = KilnDelegateDeclineReasonsExtension{};
    decline_reasons_.base.struct_size =
        KILN_DELEGATE_DECLINE_REASONS_EXTENSION_STRUCT_SIZE;
    decline_reasons_.base.id = KILN_DELEGATE_DECLINE_REASONS_EXTENSION_ID;
    decline_reasons_.base.next = more_extensions;
    decline_reasons_.decline_reason = &DeclineReason;
  }

  const char* where(Stage stage) const { return where_[stage].c_str(); }

  static internal::DelegateHandle& HandleOf(void* delegate) {
    return *static_cast<internal::DelegateHandle*>(delegate);
  }

  static KilnStatus Create(void* user_data, KilnOpaqueContext* context,
                           const uint8_t* settings, uint64_t settings_size,
                           void** delegate) {
    const auto& instance = *static_cast<const PluginInstance*>(user_data);
    const auto* self =
        static_cast<const DelegateDefinition*>(instance.delegate_definition());
    return internal::Guard(
        instance.host(), context,
        [&] {
          DelegateContext c(instance.host(), context);
          DelegateSettings decoded;
          std::string error;
          if (!ParseDelegateSettings(settings,
                                     static_cast<size_t>(settings_size),
                                     &decoded, &error)) {
            return c.Fail(KILN_STATUS_INVALID_ARGUMENT,
                          "settings of delegate '", self->name_, "': ", error);
          }
          auto handle = std::make_unique<internal::DelegateHandle>();
          handle->definition = self;
          handle->instance = &instance;
          KILN_SDK_RETURN_IF_ERROR(
              self->factory_(c, decoded, &handle->delegate));
          if (handle->delegate == nullptr) {
            return c.Fail(KILN_STATUS_INTERNAL, "the factory of delegate '",
                          self->name_, "' returned OK but no delegate");
          }
          *delegate = handle.release();
          return KILN_STATUS_OK;
        },
        self->where(kCreate));
  }

  static void Destroy(void*, void* delegate) {
    delete static_cast<internal::DelegateHandle*>(delegate);
  }

  static KilnStatus Partition(void* delegate, KilnOpaqueContext* context) {
    internal::DelegateHandle& h = HandleOf(delegate);
    return internal::Guard(
        h.instance->host(), context,
        [&] { return ClaimSupportedNodes(h, context); },
        h.definition->where(kPartition));
  }

  static KilnStatus ClaimSupportedNodes(internal::DelegateHandle& h,
                                        KilnOpaqueContext* context) {
    h.declined.clear();
    const KilnHostApi& host = h.instance->host();
    DelegateContext subgraph(host, context);
    KILN_SDK_RETURN_IF_ERROR(h.delegate->BeginPartitioning(subgraph));
    const int32_t* plan = nullptr;
    int32_t count = 0;
    const KilnStatus s = host.context_execution_plan(context, &plan, &count);
    if (s != KILN_STATUS_OK) {
      return subgraph.Fail(s, "context_execution_plan failed");
    }
    std::vector<GraphNode> supported;
    for (int32_t i = 0; i < count; ++i) {
      KilnOpaqueNode* node = host.context_node(context, plan[i]);
      if (node == nullptr) continue;
      const GraphNode view(host, context, node, plan[i]);
      const NodeSupport support = CheckedSupport(h, view);
      if (support.supported()) {
        supported.push_back(view);
      } else {
        h.declined[plan[i]] = support.reason().empty()
                                  ? "declined without a reason"
                                  : support.reason();
      }
    }
    const std::vector<int32_t> claimed = internal::DeclineSmallGroups(
        supported, h.delegate->min_partition_size(), &h.declined);
    LogClaims(h, context, claimed.size(), count);
    if (claimed.empty()) return KILN_STATUS_OK;
    return host.context_delegate_nodes(context, claimed.data(),
                                       static_cast<int32_t>(claimed.size()));
  }

  // Supports(node), declined when the manifest does not cover it (the host
  // would refuse the claim), with a warning for the delegate's author.
  static NodeSupport CheckedSupport(const internal::DelegateHandle& h,
                                    const GraphNode& node) {
    NodeSupport support = h.delegate->Supports(node);
    if (!support.supported()) return support;
    const std::string why = h.definition->manifest_.Uncovered(node);
    if (why.empty()) return support;
    support = NodeSupport::Unsupported(
        "Supports() accepted ", OpName(node), " version ", node.op_version(),
        " but ", why, "; the delegate's Supports and its manifest disagree");
    node.host().log(
        node.raw_context(), KILN_LOG_WARNING,
        internal::Concat("delegate '", h.definition->name_, "' node ",
                         node.index(), ": ", support.reason())
            .c_str());
    return support;
  }

  static void LogClaims(const internal::DelegateHandle& h,
                        KilnOpaqueContext* context, size_t claimed,
                        int32_t planned) {
    const char* name = h.definition->name_;
    const KilnHostApi& host = h.instance->host();
    for (const auto& [index, why] : h.declined) {
      host.log(context, KILN_LOG_INFO,
               internal::Concat("delegate '", name, "' declines node ", index,
                                ": ", why)
                   .c_str());
    }
    host.log(context, KILN_LOG_INFO,
             internal::Concat("delegate '", name, "' claims ", claimed, " of ",
                              planned, " nodes")
                 .c_str());
  }

  static const char* DeclineReason(void* delegate,
                                   int32_t node_index) noexcept {
    if (delegate == nullptr) return nullptr;
    const internal::DelegateHandle& h = HandleOf(delegate);
    auto it = h.declined.find(node_index);
    return it == h.declined.end() ? nullptr : it->second.c_str();
  }

  static KilnStatus PartitionInit(void* delegate, KilnOpaqueContext* context,
                                  KilnOpaqueNode* partition, void** state) {
    internal::DelegateHandle& h = HandleOf(delegate);
    const KilnHostApi& host = h.instance->host();
    return internal::Guard(
        host, context,
        [&] {
          auto p = std::make_unique<internal::PartitionHandle>();
          KILN_SDK_RETURN_IF_ERROR(internal::ReadDelegatedNodes(
              host, context, partition, &p->node_indices));
          p->kernel = h.delegate->CreatePartitionKernel();
          if (p->kernel == nullptr) {
            return DelegateContext(host, context)
                .Fail(KILN_STATUS_INTERNAL,
                      "CreatePartitionKernel of delegate '",
                      h.definition->name_, "' returned null");
          }
          PartitionContext c(host, context, partition, p->node_indices);
          KILN_SDK_RETURN_IF_ERROR(p->kernel->Init(c));
          *state = p.release();
          return KILN_STATUS_OK;
        },
        h.definition->where(kInit));
  }

  static void PartitionFree(void*, void* state) {
    delete static_cast<internal::PartitionHandle*>(state);
  }

  static KilnStatus RunKernel(void* delegate, void* state,
                              KilnOpaqueContext* context,
                              KilnOpaqueNode* partition, Stage stage,
                              KernelMethod method) {
    const internal::DelegateHandle& h = HandleOf(delegate);
    const KilnHostApi& host = h.instance->host();
    auto* p = static_cast<internal::PartitionHandle*>(state);
    return internal::Guard(
        host, context,
        [&] {
          PartitionContext c(host, context, partition, p->node_indices);
          return ((*p->kernel).*method)(c);
        },
        h.definition->where(stage));
  }

  static KilnStatus PartitionPrepare(void* delegate, void* state,
                                     KilnOpaqueContext* context,
                                     KilnOpaqueNode* partition) {
    return RunKernel(delegate, state, context, partition, kPrepare,
                     &PartitionKernel::Prepare);
  }

  static KilnStatus PartitionInvoke(void* delegate, void* state,
                                    KilnOpaqueContext* context,
                                    KilnOpaqueNode* partition) {
    return RunKernel(delegate, state, context, partition, kInvoke,
                     &PartitionKernel::Invoke);
  }

  static KilnStatus CopyBufferHandle(void* delegate, KilnOpaqueContext* context,
                                     KilnBufferHandle handle,
                                     KilnOpaqueTensor* tensor, Stage stage,
                                     CopyMethod method) {
    internal::DelegateHandle& h = HandleOf(delegate);
    const KilnHostApi& host = h.instance->host();
    return internal::Guard(
        host, context,
        [&] {
          DelegateContext c(host, context);
          return ((*h.delegate).*method)(c, handle, Tensor(host, tensor));
        },
        h.definition->where(stage));
  }

  static KilnStatus CopyFromBufferHandle(void* delegate,
                                         KilnOpaqueContext* context,
                                         KilnBufferHandle handle,
                                         KilnOpaqueTensor* tensor) {
    return CopyBufferHandle(delegate, context, handle, tensor, kCopyFrom,
                            &Delegate::CopyFromBufferHandle);
  }

  static KilnStatus CopyToBufferHandle(void* delegate,
                                       KilnOpaqueContext* context,
                                       KilnBufferHandle handle,
                                       KilnOpaqueTensor* tensor) {
    return CopyBufferHandle(delegate, context, handle, tensor, kCopyTo,
                            &Delegate::CopyToBufferHandle);
  }

  static void FreeBufferHandle(void* delegate,
                               KilnBufferHandle handle) noexcept {
    try {
      HandleOf(delegate).delegate->FreeBufferHandle(handle);
    } catch (...) {
      // FreeBufferHandle must not throw; nothing to report to.
    }
  }

  const char* name_;
  DelegateFactory factory_;
  DelegateManifest manifest_;
  // The C rows of manifest_ (KilnDelegateInterface.supported_ops).
  std::deque<std::vector<int32_t>> row_types_;
  std::deque<KilnDelegateOpSupport> rows_;
  std::vector<const KilnDelegateOpSupport*> row_ptrs_;
  std::string where_[kNumStages];
  KilnDelegateInterface interface_{};
  KilnDelegateDeclineReasonsExtension decline_reasons_{};
};

}  // namespace kiln::sdk

#endif  // KILN_SDK_DELEGATE_H_
