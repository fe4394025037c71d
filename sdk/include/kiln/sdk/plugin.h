// Kiln plugin SDK: a header-only C++17 layer over the C extension API.
//
// Plugins built with it export exactly one symbol (KilnPluginEntry, through
// KILN_DEFINE_PLUGIN) and never link against libkiln. No C++ exception
// crosses the boundary: every callback trampoline catches and reports.
//
// Typical use:
//   KilnStatus AddPrepare(kiln::sdk::KernelContext& k) { ... }
//   KilnStatus AddInvoke(kiln::sdk::KernelContext& k) { ... }
//   const KilnPluginDescriptor* Describe() {
//     static kiln::sdk::PluginDefinition def =
//         kiln::sdk::PluginDefinition("acme_npu", "1.0.0")
//             .AddKernel(kiln::sdk::MakeKernel<AddPrepare, AddInvoke>(
//                 KILN_OP_ADD, 1, 2));
//     return def.descriptor();
//   }
//   KILN_DEFINE_PLUGIN(Describe)
#ifndef KILN_SDK_PLUGIN_H_
#define KILN_SDK_PLUGIN_H_

#include <cstdint>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "kiln/kiln_plugin.h"

namespace kiln::sdk {

// True when `api` contains `field` (a pointer-to-member of KilnHostApi),
// i.e. the host serves the minor version that added it.
template <typename T>
bool HostHas(const KilnHostApi& api, T KilnHostApi::*field) {
  const auto offset = reinterpret_cast<std::uintptr_t>(
      &(static_cast<const KilnHostApi*>(nullptr)->*field));
  return api.struct_size >= offset + sizeof(T);
}

inline const char* TypeName(KilnTensorType type) {
  return KilnTensorTypeName(type);
}

// A non-owning view of a host tensor, read through the host table of the
// callback that made it. Cheap to copy. A default-constructed (or omitted
// optional) tensor has present() == false and nothing else may be called.
class Tensor {
 public:
  Tensor() = default;
  Tensor(const KilnHostApi& host, KilnOpaqueTensor* raw)
      : host_(&host), raw_(raw) {}

  bool present() const { return raw_ != nullptr; }
  KilnOpaqueTensor* raw() const { return raw_; }
  // The host table it is read through (present tensors only).
  const KilnHostApi& host() const { return *host_; }
  KilnTensorType type() const { return host().tensor_type(raw_); }
  int32_t rank() const { return host().tensor_rank(raw_); }
  int32_t dim(int32_t axis) const { return host().tensor_dim(raw_, axis); }
  std::vector<int32_t> shape() const {
    std::vector<int32_t> s(static_cast<size_t>(rank() < 0 ? 0 : rank()));
    for (size_t i = 0; i < s.size(); ++i) s[i] = dim(static_cast<int32_t>(i));
    return s;
  }
  // Product of the dims (1 for a scalar); 0 if any dim is 0 or unknown.
  int64_t num_elements() const {
    int64_t n = 1;
    for (int32_t i = 0, r = rank(); i < r; ++i) {
      const int32_t d = dim(i);
      if (d <= 0) return 0;
      n *= d;
    }
    return n;
  }
  uint64_t byte_size() const { return host().tensor_byte_size(raw_); }
  template <typename T>
  T* data() const {
    return static_cast<T*>(host().tensor_data(raw_));
  }
  const char* name() const { return host().tensor_name(raw_); }
  bool is_constant() const { return host().tensor_is_constant(raw_) != 0; }

 private:
  const KilnHostApi* host_ = nullptr;
  KilnOpaqueTensor* raw_ = nullptr;
};

// Everything a kernel callback needs: the node, its tensors and options, and
// error reporting, through the host table of the plugin's load instance the
// callback belongs to. Valid only for the duration of one callback. Every
// member but Resize and SetType leaves the view and the model unchanged and
// is const, so the checks of kiln/sdk/checks.h also run on a delegate's
// const GraphNode.
class KernelContext {
 public:
  KernelContext(const KilnHostApi& host, KilnOpaqueContext* context,
                KilnOpaqueNode* node)
      : host_(&host), context_(context), node_(node) {}

  KilnOpaqueContext* raw_context() const { return context_; }
  KilnOpaqueNode* raw_node() const { return node_; }
  // This load instance's host table (valid until its shutdown).
  const KilnHostApi& host() const { return *host_; }
  // Whether the host serves `field` (feature detection, docs/abi-policy.md).
  template <typename T>
  bool HostHas(T KilnHostApi::*field) const {
    return sdk::HostHas(*host_, field);
  }

  int32_t builtin_code() const { return host().node_builtin_code(node_); }
  const char* custom_name() const { return host().node_custom_name(node_); }
  int32_t op_version() const { return host().node_op_version(node_); }

  int32_t num_inputs() const { return host().node_num_inputs(node_); }
  int32_t num_outputs() const { return host().node_num_outputs(node_); }
  Tensor input(int32_t i) const {
    return Tensor(*host_, host().node_input(context_, node_, i));
  }
  Tensor output(int32_t i) const {
    return Tensor(*host_, host().node_output(context_, node_, i));
  }
  // The node's intermediate tensors (extension API 1.3,
  // KilnHostApi.node_num_intermediates / node_intermediate): 0 and absent
  // tensors on an older host, which does not pass them on.
  int32_t num_intermediates() const {
    return HostHas(&KilnHostApi::node_num_intermediates)
               ? host().node_num_intermediates(node_)
               : 0;
  }
  Tensor intermediate(int32_t i) const {
    return HostHas(&KilnHostApi::node_intermediate)
               ? Tensor(*host_, host().node_intermediate(context_, node_, i))
               : Tensor(*host_, nullptr);
  }

  int64_t OptionInt(uint32_t key, int64_t fallback) const {
    int64_t v = fallback;
    return host().node_option_int(node_, key, &v) == KILN_STATUS_OK ? v
                                                                    : fallback;
  }
  float OptionFloat(uint32_t key, float fallback) const {
    float v = fallback;
    return host().node_option_float(node_, key, &v) == KILN_STATUS_OK
               ? v
               : fallback;
  }
  // Empty when the option is absent.
  std::vector<int32_t> OptionIntArray(uint32_t key) const {
    const int32_t* values = nullptr;
    int32_t count = 0;
    if (host().node_option_int_array(node_, key, &values, &count) !=
            KILN_STATUS_OK ||
        values == nullptr) {
      return {};
    }
    return std::vector<int32_t>(values, values + count);
  }
  std::pair<const uint8_t*, uint64_t> CustomOptions() const {
    const uint8_t* data = nullptr;
    uint64_t size = 0;
    if (host().node_custom_options(node_, &data, &size) != KILN_STATUS_OK) {
      return {nullptr, 0};
    }
    return {data, size};
  }

  // Whether Quantization() hands a blockwise-quantized tensor (extension API
  // 1.3, KilnQuantizationParams.block_size > 0) to the caller.
  enum class Blockwise { kRefuse, kAccept };

  // Reads a tensor's quantization parameters (extension API 1.1). On a host
  // older than 1.1 this reports which host function is missing and returns
  // KILN_STATUS_UNIMPLEMENTED; *params is then untouched. A blockwise-
  // quantized tensor (one scale per block of a row, not per tensor or
  // channel) is refused with KILN_STATUS_UNIMPLEMENTED and a message naming
  // it unless `blockwise` is kAccept, so that a kernel written for per-tensor
  // or per-channel scales never reads block scales as channel scales; hosts
  // older than 1.3 report such a tensor as not quantized.
  KilnStatus Quantization(const Tensor& tensor, KilnQuantizationParams* params,
                          Blockwise blockwise = Blockwise::kRefuse) const {
    if (!HostHas(&KilnHostApi::tensor_quantization)) {
      return Unserved("reading quantization parameters",
                      "1.1 (KilnHostApi.tensor_quantization)");
    }
    params->struct_size = KILN_QUANTIZATION_PARAMS_STRUCT_SIZE;
    const KilnStatus s = host().tensor_quantization(tensor.raw(), params);
    if (s != KILN_STATUS_OK) {
      return Fail(s, "tensor_quantization failed for tensor '", tensor.name(),
                  "'");
    }
    if (params->block_size > 0 && blockwise == Blockwise::kRefuse) {
      return Fail(KILN_STATUS_UNIMPLEMENTED, "tensor '", tensor.name(),
                  "' is quantized blockwise (blocks of ", params->block_size,
                  " along dimension ", params->block_dimension,
                  "), which this kernel does not implement; it supports "
                  "per-tensor and per-channel quantization only");
    }
    return KILN_STATUS_OK;
  }

  KilnStatus Resize(const Tensor& tensor, const std::vector<int32_t>& dims) {
    return host().tensor_resize(context_, tensor.raw(),
                                static_cast<int32_t>(dims.size()), dims.data());
  }

  // Gives output `tensor` element type `type` during prepare (extension API
  // 1.2, KilnHostApi.tensor_set_type: only the node's own non-constant
  // outputs that are not subgraph inputs). On an older host this reports
  // which host function is missing and returns KILN_STATUS_UNIMPLEMENTED.
  KilnStatus SetType(const Tensor& tensor, KilnTensorType type) {
    if (!HostHas(&KilnHostApi::tensor_set_type)) {
      return Unserved("setting an output's type",
                      "1.2 (KilnHostApi.tensor_set_type)");
    }
    return host().tensor_set_type(context_, tensor.raw(), type);
  }

  // Reports an error built from the streamed parts and returns `code`, so a
  // kernel can write: return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "...", x);
  template <typename... Parts>
  KilnStatus Fail(KilnStatus code, const Parts&... parts) const {
    std::ostringstream out;
    (out << ... << parts);
    host().report_error(context_, code, out.str().c_str());
    return code;
  }

  // Arity and type checks, kept for existing plugins; defined in
  // kiln/sdk/checks.h (included below), whose free functions (ExpectArity,
  // ExpectType with a TypeSet, ...) new code should prefer. Each reports
  // the checks.h message on failure.
  // Between `min` and `max` inputs: ExpectInputCount.
  KilnStatus ExpectInputs(int32_t min, int32_t max) const;
  // Exactly `count` outputs: ExpectOutputCount.
  KilnStatus ExpectOutputs(int32_t count) const;
  // `t` is present and has type `expected`; `what` names it ("input 0").
  KilnStatus ExpectType(const char* what, const Tensor& t,
                        KilnTensorType expected) const;

 private:
  // UNIMPLEMENTED: `what` needs a host serving extension API `since`.
  KilnStatus Unserved(const char* what, const char* since) const {
    return Fail(KILN_STATUS_UNIMPLEMENTED, what,
                " needs a host serving extension API ", since,
                "; this host serves ", KILN_VERSION_MAJOR(host().abi_version),
                ".", KILN_VERSION_MINOR(host().abi_version),
                "; upgrade Kiln to run this op");
  }

  const KilnHostApi* host_;
  KilnOpaqueContext* context_;
  KilnOpaqueNode* node_;
};

#define KILN_SDK_RETURN_IF_ERROR(expr)                               \
  do {                                                               \
    const KilnStatus kiln_sdk_status_ = (expr);                      \
    if (kiln_sdk_status_ != KILN_STATUS_OK) return kiln_sdk_status_; \
  } while (0)

class PluginInstance;

namespace internal {

// Reports "C++ exception escaped <where>: <what>" as KILN_STATUS_INTERNAL.
inline KilnStatus ReportException(const KilnHostApi& host,
                                  KilnOpaqueContext* context, const char* what,
                                  const char* where = "a kernel callback") {
  std::string message = "C++ exception escaped ";
  message += where;
  message += ": ";
  message += what;
  host.report_error(context, KILN_STATUS_INTERNAL, message.c_str());
  return KILN_STATUS_INTERNAL;
}

// Runs `body` and converts any exception into KILN_STATUS_INTERNAL, reported
// as escaping `where` (read only on failure; must outlive the call).
template <typename Body>
KilnStatus Guard(const KilnHostApi& host, KilnOpaqueContext* context,
                 Body&& body,
                 const char* where = "a kernel callback") noexcept {
  try {
    return body();
  } catch (const std::exception& e) {
    return ReportException(host, context, e.what(), where);
  } catch (...) {
    return ReportException(host, context, "unknown exception", where);
  }
}

// What MakeKernel and MakeStatefulKernel put in user_data: the entry point
// replaces it, in each load instance's copy of the kernel, with that
// PluginInstance, through which the callbacks reach their host table.
inline void* InstanceBoundTag() {
  static char tag;
  return &tag;
}

inline const KilnHostApi& HostOf(void* user_data);

}  // namespace internal

// Kernel functions: KilnStatus Fn(KernelContext&).
using KernelFn = KilnStatus (*)(KernelContext&);

// A stateless kernel from a prepare (may be nullptr) and an invoke function.
// Its callbacks run only through a descriptor the entry point returned
// (KILN_DEFINE_PLUGIN), which binds them to their load instance.
// It sets KILN_KERNEL_FLAG_STATE_PER_SHAPE_SIGNATURE: without node state,
// all a prepare leaves behind is the output shapes, which a host that keeps
// plans per input signature restores itself, so it need not call prepare
// again when shapes return to ones it has prepared (hosts before extension
// API 1.2 ignore the flag). A kernel whose prepare has effects beyond
// sizing its outputs clears it: kernel.flags = 0.
template <KernelFn Prepare, KernelFn Invoke>
KilnKernel MakeKernel(int32_t builtin_code, int32_t min_version,
                      int32_t max_version, const char* custom_name = nullptr) {
  KilnKernel k;
  std::memset(&k, 0, sizeof(k));
  k.struct_size = KILN_KERNEL_STRUCT_SIZE;
  k.builtin_code = builtin_code;
  k.custom_name = custom_name;
  k.min_version = min_version;
  k.max_version = max_version;
  k.flags = KILN_KERNEL_FLAG_STATE_PER_SHAPE_SIGNATURE;
  k.user_data = internal::InstanceBoundTag();
  if (Prepare != nullptr) {
    k.prepare = [](void* user_data, void*, KilnOpaqueContext* c,
                   KilnOpaqueNode* n) -> KilnStatus {
      const KilnHostApi& host = internal::HostOf(user_data);
      return internal::Guard(host, c, [&] {
        KernelContext k(host, c, n);
        return Prepare(k);
      });
    };
  }
  k.invoke = [](void* user_data, void*, KilnOpaqueContext* c,
                KilnOpaqueNode* n) -> KilnStatus {
    const KilnHostApi& host = internal::HostOf(user_data);
    return internal::Guard(host, c, [&] {
      KernelContext k(host, c, n);
      return Invoke(k);
    });
  };
  return k;
}

// A kernel with per-node state of type State (default-constructed at init,
// destroyed at free). Functions: KilnStatus Fn(KernelContext&, State&).
// Its flags are 0: the host prepares the one state again after every shape
// change. Wrap it in StatePerShapeSignature when the state is per shape.
template <typename State, KilnStatus (*Prepare)(KernelContext&, State&),
          KilnStatus (*Invoke)(KernelContext&, State&)>
KilnKernel MakeStatefulKernel(int32_t builtin_code, int32_t min_version,
                              int32_t max_version,
                              const char* custom_name = nullptr) {
  KilnKernel k;
  std::memset(&k, 0, sizeof(k));
  k.struct_size = KILN_KERNEL_STRUCT_SIZE;
  k.builtin_code = builtin_code;
  k.custom_name = custom_name;
  k.min_version = min_version;
  k.max_version = max_version;
  k.user_data = internal::InstanceBoundTag();
  k.init = [](void* user_data, KilnOpaqueContext* c, KilnOpaqueNode*,
              void** state) -> KilnStatus {
    return internal::Guard(internal::HostOf(user_data), c, [&] {
      *state = new State();
      return KILN_STATUS_OK;
    });
  };
  k.free = [](void*, void* state) { delete static_cast<State*>(state); };
  k.prepare = [](void* user_data, void* state, KilnOpaqueContext* c,
                 KilnOpaqueNode* n) -> KilnStatus {
    const KilnHostApi& host = internal::HostOf(user_data);
    return internal::Guard(host, c, [&] {
      KernelContext k(host, c, n);
      return Prepare(k, *static_cast<State*>(state));
    });
  };
  k.invoke = [](void* user_data, void* state, KilnOpaqueContext* c,
                KilnOpaqueNode* n) -> KilnStatus {
    const KilnHostApi& host = internal::HostOf(user_data);
    return internal::Guard(host, c, [&] {
      KernelContext k(host, c, n);
      return Invoke(k, *static_cast<State*>(state));
    });
  };
  return k;
}

// Sets KILN_KERNEL_FLAG_STATE_PER_SHAPE_SIGNATURE on `kernel`: the host may
// keep one node state per input signature (each made by init and prepared
// once) and switch among them without calling prepare again. Correct when
// everything prepare puts into the state depends only on the node (options,
// constant tensors) and the shapes it was prepared for, and invoke needs
// nothing from a previous prepare of another shape. Each state holds its
// own copy of whatever prepare builds (e.g. packed weights), once per
// cached signature.
//   def.AddKernel(sdk::StatePerShapeSignature(
//       sdk::MakeStatefulKernel<ConvState, ConvPrepare, ConvInvoke>(...)));
inline KilnKernel StatePerShapeSignature(KilnKernel kernel) {
  kernel.flags |= KILN_KERNEL_FLAG_STATE_PER_SHAPE_SIGNATURE;
  return kernel;
}

// Owns the storage behind the plugin's template descriptor. Keep it in a
// function-local static. The entry point (KILN_DEFINE_PLUGIN) hands each
// load instance its own copy of the descriptor (PluginInstance); the
// template itself never reaches the host.
class PluginDefinition {
 public:
  // The optional lifecycle hooks of the descriptor (kiln_plugin.h), called
  // with the load instance's descriptor: PluginInstance::Of(self) gives the
  // instance. Called by hosts serving extension API 1.2 or newer only.
  using InitializeFn = KilnStatus (*)(const KilnPluginDescriptor* self,
                                      const KilnPluginInstanceInfo* info);
  using ShutdownFn = void (*)(const KilnPluginDescriptor* self);

  PluginDefinition(const char* name, const char* version)
      : name_(name), version_(version) {}

  PluginDefinition& MinHostAbiVersion(uint32_t version) {
    min_host_abi_version_ = version;
    return *this;
  }
  PluginDefinition& BadHostVersion(uint32_t runtime_version) {
    bad_hosts_.push_back(runtime_version);
    return *this;
  }
  PluginDefinition& AddKernel(const KilnKernel& kernel) {
    kernels_.push_back(kernel);
    return *this;
  }
  PluginDefinition& Delegate(const KilnDelegateInterface* delegate) {
    delegate_ = delegate;
    return *this;
  }
  PluginDefinition& Extensions(const KilnExtensionBase* chain) {
    extensions_ = chain;
    return *this;
  }
  // After the SDK has bound the instance, `fn` may refuse the host: report
  // why with info->api->log and return non-OK.
  PluginDefinition& OnInitialize(InitializeFn fn) {
    initialize_ = fn;
    return *this;
  }
  // Before the SDK frees the instance.
  PluginDefinition& OnShutdown(ShutdownFn fn) {
    shutdown_ = fn;
    return *this;
  }

  // The template descriptor. Finalises on first call; the definition must
  // not change afterwards.
  const KilnPluginDescriptor* descriptor() {
    if (!built_) {
      kernel_ptrs_.clear();
      for (const KilnKernel& k : kernels_) kernel_ptrs_.push_back(&k);
      std::memset(&descriptor_, 0, sizeof(descriptor_));
      descriptor_.struct_size = KILN_PLUGIN_DESCRIPTOR_STRUCT_SIZE;
      descriptor_.abi_version = KILN_EXT_API_VERSION;
      descriptor_.min_host_abi_version = min_host_abi_version_;
      descriptor_.name = name_;
      descriptor_.version = version_;
      descriptor_.bad_host_versions =
          bad_hosts_.empty() ? nullptr : bad_hosts_.data();
      descriptor_.num_bad_host_versions =
          static_cast<uint32_t>(bad_hosts_.size());
      descriptor_.kernels =
          kernel_ptrs_.empty() ? nullptr : kernel_ptrs_.data();
      descriptor_.num_kernels = static_cast<uint32_t>(kernel_ptrs_.size());
      descriptor_.delegate = delegate_;
      descriptor_.extensions = extensions_;
      descriptor_.initialize = initialize_;
      descriptor_.shutdown = shutdown_;
      built_ = true;
    }
    return &descriptor_;
  }

 private:
  const char* name_;
  const char* version_;
  uint32_t min_host_abi_version_ = KILN_MAKE_VERSION(1, 0, 0);
  std::vector<uint32_t> bad_hosts_;
  std::vector<KilnKernel> kernels_;
  std::vector<const KilnKernel*> kernel_ptrs_;
  const KilnDelegateInterface* delegate_ = nullptr;
  const KilnExtensionBase* extensions_ = nullptr;
  InitializeFn initialize_ = nullptr;
  ShutdownFn shutdown_ = nullptr;
  KilnPluginDescriptor descriptor_{};
  bool built_ = false;
};

namespace internal {

// Delegate interfaces whose callbacks expect their PluginInstance as
// user_data: DelegateDefinition's (kiln/sdk/delegate.h), registered when
// made. Guarded by BoundDelegatesMutex() (taken after EntryMutex() when
// both are held).
inline std::set<const KilnDelegateInterface*>& InstanceBoundDelegates() {
  static std::set<const KilnDelegateInterface*> interfaces;
  return interfaces;
}
inline std::mutex& BoundDelegatesMutex() {
  static std::mutex mutex;
  return mutex;
}
inline void RegisterInstanceBoundDelegate(const KilnDelegateInterface* iface) {
  std::lock_guard<std::mutex> lock(BoundDelegatesMutex());
  InstanceBoundDelegates().insert(iface);
}
inline bool IsInstanceBoundDelegate(const KilnDelegateInterface* iface) {
  std::lock_guard<std::mutex> lock(BoundDelegatesMutex());
  return InstanceBoundDelegates().count(iface) > 0;
}

// Guards the entry point and the instances.
inline std::mutex& EntryMutex() {
  static std::mutex mutex;
  return mutex;
}

}  // namespace internal

// One load instance of this plugin (kiln_plugin.h): the host table and
// extension API version of one interpreter (or capped host level), and the
// instance's own copy of the descriptor, whose SDK kernels and delegate carry
// this object as user_data. Made by the entry point. A host serving
// extension API 1.2 or newer calls initialize (the negotiated version and
// its table replace the entry-time ones) and shutdown (which destroys it);
// older hosts never call shutdown, so entry calls with the same host table
// share one instance, kept until the library is unloaded: nothing leaks per
// interpreter.
class PluginInstance {
 public:
  PluginInstance(const PluginInstance&) = delete;
  PluginInstance& operator=(const PluginInstance&) = delete;

  // The instance whose descriptor is `self`; null for any other pointer.
  static const PluginInstance* Of(const KilnPluginDescriptor* self) {
    std::lock_guard<std::mutex> lock(internal::EntryMutex());
    auto it = Registry().find(self);
    return it == Registry().end() ? nullptr : it->second.get();
  }

  // The host table of this instance; valid until its shutdown.
  const KilnHostApi& host() const { return *api_; }
  // The extension API version it runs at: the negotiated version once
  // initialize ran, before that (and on hosts older than 1.2) the host's.
  uint32_t abi_version() const { return abi_version_; }
  // The host's Kiln release (KILN_MAKE_VERSION).
  uint32_t runtime_version() const { return runtime_version_; }
  template <typename T>
  bool HostHas(T KilnHostApi::*field) const {
    return sdk::HostHas(*api_, field);
  }
  // Logs through the host (no callback context) at KILN_LOG_* severity.
  void Log(int32_t severity, const std::string& message) const {
    api_->log(nullptr, severity, message.c_str());
  }
  // The user_data the definition's delegate interface had (DelegateDefinition
  // keeps itself there); null without a delegate.
  void* delegate_definition() const { return delegate_definition_; }
  const KilnPluginDescriptor* descriptor() const { return &descriptor_; }

  // The entry point: this load instance's descriptor made from `tmpl`, or
  // null when `host` is unusable. Serialized: hosts may load the same
  // plugin from several threads at once (dlopen hands them one library).
  static const KilnPluginDescriptor* Enter(const KilnHostInfo* host,
                                           const KilnPluginDescriptor* tmpl) {
    std::lock_guard<std::mutex> lock(internal::EntryMutex());
    // Whether this host will call shutdown for the descriptor.
    const bool has_lifecycle =
        host->abi_version >= KILN_MAKE_VERSION(1, 2, 0) &&
        KILN_STRUCT_HAS_FIELD(KilnPluginDescriptor, tmpl->struct_size,
                              shutdown);
    if (!has_lifecycle) {
      for (const auto& [descriptor, instance] : Registry()) {
        if (instance->shared_ && instance->entry_api_ == host->api) {
          return descriptor;
        }
      }
    }
    std::unique_ptr<PluginInstance> instance(new PluginInstance(*host));
    instance->shared_ = !has_lifecycle;
    instance->Bind(*tmpl);
    const KilnPluginDescriptor* d = &instance->descriptor_;
    Registry()[d] = std::move(instance);
    return d;
  }

 private:
  using InstanceMap =
      std::map<const KilnPluginDescriptor*, std::unique_ptr<PluginInstance>>;
  // Every live instance by its descriptor. Guarded by EntryMutex().
  static InstanceMap& Registry() {
    static InstanceMap instances;
    return instances;
  }

  explicit PluginInstance(const KilnHostInfo& host)
      : api_(host.api),
        entry_api_(host.api),
        abi_version_(host.abi_version),
        runtime_version_(host.runtime_version) {}

  // Copies the template descriptor, binding the SDK's kernels and delegate
  // to this instance and wrapping the template's lifecycle hooks.
  void Bind(const KilnPluginDescriptor& tmpl) {
    descriptor_ = tmpl;
    template_ = &tmpl;
    kernels_.reserve(tmpl.num_kernels);
    for (uint32_t i = 0; i < tmpl.num_kernels; ++i) {
      const KilnKernel* k = tmpl.kernels[i];
      if (k != nullptr && k->user_data == internal::InstanceBoundTag()) {
        kernels_.push_back(*k);
        kernels_.back().user_data = this;
        k = &kernels_.back();
      }
      kernel_ptrs_.push_back(k);
    }
    descriptor_.kernels = kernel_ptrs_.empty() ? nullptr : kernel_ptrs_.data();
    if (tmpl.delegate != nullptr &&
        internal::IsInstanceBoundDelegate(tmpl.delegate)) {
      delegate_ = *tmpl.delegate;
      delegate_definition_ = tmpl.delegate->user_data;
      delegate_.user_data = this;
      descriptor_.delegate = &delegate_;
    }
    descriptor_.initialize = &Initialize;
    descriptor_.shutdown = &Shutdown;
  }

  static KilnStatus Initialize(const KilnPluginDescriptor* self,
                               const KilnPluginInstanceInfo* info) {
    PluginInstance* instance = nullptr;
    {
      std::lock_guard<std::mutex> lock(internal::EntryMutex());
      auto it = Registry().find(self);
      if (it == Registry().end()) return KILN_STATUS_INTERNAL;
      instance = it->second.get();
    }
    if (info != nullptr &&
        info->struct_size >= KILN_PLUGIN_INSTANCE_INFO_STRUCT_SIZE &&
        info->api != nullptr) {
      instance->api_ = info->api;
      instance->abi_version_ = info->abi_version;
    }
    if (instance->template_->initialize == nullptr) return KILN_STATUS_OK;
    try {
      return instance->template_->initialize(self, info);
    } catch (...) {
      instance->Log(KILN_LOG_ERROR, "C++ exception escaped initialize");
      return KILN_STATUS_INTERNAL;
    }
  }

  static void Shutdown(const KilnPluginDescriptor* self) {
    const KilnPluginDescriptor* tmpl = nullptr;
    {
      std::lock_guard<std::mutex> lock(internal::EntryMutex());
      auto it = Registry().find(self);
      if (it == Registry().end() || it->second->shared_) return;
      tmpl = it->second->template_;
    }
    if (tmpl->shutdown != nullptr) {
      try {
        tmpl->shutdown(self);
      } catch (...) {
      }
    }
    std::lock_guard<std::mutex> lock(internal::EntryMutex());
    Registry().erase(self);
  }

  const KilnHostApi* api_;
  const KilnHostApi* entry_api_;  // the key of a shared instance
  // Made for a host that never calls shutdown (older than 1.2): shared by
  // every entry call with entry_api_, freed when the library is unloaded.
  bool shared_ = false;
  uint32_t abi_version_;
  uint32_t runtime_version_;
  const KilnPluginDescriptor* template_ = nullptr;
  KilnPluginDescriptor descriptor_{};
  std::vector<KilnKernel> kernels_;
  std::vector<const KilnKernel*> kernel_ptrs_;
  KilnDelegateInterface delegate_{};
  void* delegate_definition_ = nullptr;
};

namespace internal {

inline const KilnHostApi& HostOf(void* user_data) {
  return static_cast<const PluginInstance*>(user_data)->host();
}

// What the entry point of KILN_DEFINE_PLUGIN does: accepts any KilnHostInfo
// at least as large as extension API 1.0's (reading only the fields it
// declares), asks `describe` for the template descriptor once per entry
// call, and returns this load instance's copy of it. Null for an unusable
// host or when `describe` throws or returns null.
inline const KilnPluginDescriptor* Enter(
    const KilnHostInfo* host, const KilnPluginDescriptor* (*describe)()) {
  if (host == nullptr || host->struct_size < KILN_HOST_INFO_STRUCT_SIZE_1_0 ||
      host->api == nullptr ||
      host->api->struct_size < KILN_HOST_API_STRUCT_SIZE_1_0) {
    return nullptr;
  }
  const KilnPluginDescriptor* tmpl = nullptr;
  try {
    std::lock_guard<std::mutex> lock(EntryMutex());
    tmpl = describe();
  } catch (...) {
    return nullptr;
  }
  if (tmpl == nullptr) return nullptr;
  try {
    return PluginInstance::Enter(host, tmpl);
  } catch (...) {
    return nullptr;
  }
}

}  // namespace internal
}  // namespace kiln::sdk

// Defines the plugin's single exported entry symbol. `describe` is a
// function returning the plugin's template descriptor (see
// PluginDefinition).
#define KILN_DEFINE_PLUGIN(describe)                      \
  extern "C" __attribute__((visibility("default")))       \
  const KilnPluginDescriptor*                             \
  KilnPluginEntry(const KilnHostInfo* host) {             \
    return ::kiln::sdk::internal::Enter(host, &describe); \
  }

// Defines KernelContext::ExpectInputs/ExpectOutputs/ExpectType.
#include "kiln/sdk/checks.h"  // IWYU pragma: export

#endif  // KILN_SDK_PLUGIN_H_
