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
#include <mutex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "kiln/kiln_plugin.h"

namespace kiln::sdk {

// The host table handed to this plugin at entry; null before entry. The SDK
// stores it per plugin library (symbols are hidden, so each plugin has its
// own copy).
inline const KilnHostApi*& HostApiSlot() {
  static const KilnHostApi* api = nullptr;
  return api;
}
inline const KilnHostApi& Host() { return *HostApiSlot(); }

// True when the host's table contains `field` (a pointer-to-member of
// KilnHostApi), i.e. the host serves the minor version that added it.
template <typename T>
bool HostHas(T KilnHostApi::*field) {
  const KilnHostApi* api = HostApiSlot();
  if (api == nullptr) return false;
  const auto offset = reinterpret_cast<std::uintptr_t>(
      &(static_cast<const KilnHostApi*>(nullptr)->*field));
  return api->struct_size >= offset + sizeof(T);
}

inline const char* TypeName(KilnTensorType type) {
  return KilnTensorTypeName(type);
}

// A non-owning view of a host tensor. Cheap to copy. A default-constructed
// (or omitted optional) tensor has present() == false.
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(KilnOpaqueTensor* raw) : raw_(raw) {}

  bool present() const { return raw_ != nullptr; }
  KilnOpaqueTensor* raw() const { return raw_; }
  KilnTensorType type() const { return Host().tensor_type(raw_); }
  int32_t rank() const { return Host().tensor_rank(raw_); }
  int32_t dim(int32_t axis) const { return Host().tensor_dim(raw_, axis); }
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
  uint64_t byte_size() const { return Host().tensor_byte_size(raw_); }
  template <typename T>
  T* data() const {
    return static_cast<T*>(Host().tensor_data(raw_));
  }
  const char* name() const { return Host().tensor_name(raw_); }
  bool is_constant() const { return Host().tensor_is_constant(raw_) != 0; }

 private:
  KilnOpaqueTensor* raw_ = nullptr;
};

// Everything a kernel callback needs: the node, its tensors and options, and
// error reporting. Valid only for the duration of one callback. Every member
// but Resize leaves the view and the model unchanged and is const, so the
// checks of kiln/sdk/checks.h also run on a delegate's const GraphNode.
class KernelContext {
 public:
  KernelContext(KilnOpaqueContext* context, KilnOpaqueNode* node)
      : context_(context), node_(node) {}

  KilnOpaqueContext* raw_context() const { return context_; }
  KilnOpaqueNode* raw_node() const { return node_; }

  int32_t builtin_code() const { return Host().node_builtin_code(node_); }
  const char* custom_name() const { return Host().node_custom_name(node_); }
  int32_t op_version() const { return Host().node_op_version(node_); }

  int32_t num_inputs() const { return Host().node_num_inputs(node_); }
  int32_t num_outputs() const { return Host().node_num_outputs(node_); }
  Tensor input(int32_t i) const {
    return Tensor(Host().node_input(context_, node_, i));
  }
  Tensor output(int32_t i) const {
    return Tensor(Host().node_output(context_, node_, i));
  }

  int64_t OptionInt(uint32_t key, int64_t fallback) const {
    int64_t v = fallback;
    return Host().node_option_int(node_, key, &v) == KILN_STATUS_OK ? v
                                                                    : fallback;
  }
  float OptionFloat(uint32_t key, float fallback) const {
    float v = fallback;
    return Host().node_option_float(node_, key, &v) == KILN_STATUS_OK
               ? v
               : fallback;
  }
  // Empty when the option is absent.
  std::vector<int32_t> OptionIntArray(uint32_t key) const {
    const int32_t* values = nullptr;
    int32_t count = 0;
    if (Host().node_option_int_array(node_, key, &values, &count) !=
            KILN_STATUS_OK ||
        values == nullptr) {
      return {};
    }
    return std::vector<int32_t>(values, values + count);
  }
  std::pair<const uint8_t*, uint64_t> CustomOptions() const {
    const uint8_t* data = nullptr;
    uint64_t size = 0;
    if (Host().node_custom_options(node_, &data, &size) != KILN_STATUS_OK) {
      return {nullptr, 0};
    }
    return {data, size};
  }

  // Reads a tensor's quantization parameters (extension API 1.1). On a host
  // older than 1.1 this reports which host function is missing and returns
  // KILN_STATUS_UNIMPLEMENTED; *params is then untouched.
  KilnStatus Quantization(const Tensor& tensor,
                          KilnQuantizationParams* params) const {
    if (!HostHas(&KilnHostApi::tensor_quantization)) {
      return Fail(KILN_STATUS_UNIMPLEMENTED,
                  "reading quantization parameters needs a host serving "
                  "extension API 1.1 (KilnHostApi.tensor_quantization); this "
                  "host serves ",
                  KILN_VERSION_MAJOR(Host().abi_version), ".",
                  KILN_VERSION_MINOR(Host().abi_version),
                  "; upgrade Kiln to run this op");
    }
    params->struct_size = KILN_QUANTIZATION_PARAMS_STRUCT_SIZE;
    const KilnStatus s = Host().tensor_quantization(tensor.raw(), params);
    if (s != KILN_STATUS_OK) {
      return Fail(s, "tensor_quantization failed for tensor '", tensor.name(),
                  "'");
    }
    return KILN_STATUS_OK;
  }

  KilnStatus Resize(const Tensor& tensor, const std::vector<int32_t>& dims) {
    return Host().tensor_resize(context_, tensor.raw(),
                                static_cast<int32_t>(dims.size()), dims.data());
  }

  // Reports an error built from the streamed parts and returns `code`, so a
  // kernel can write: return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "...", x);
  template <typename... Parts>
  KilnStatus Fail(KilnStatus code, const Parts&... parts) const {
    std::ostringstream out;
    (out << ... << parts);
    Host().report_error(context_, code, out.str().c_str());
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
  KilnOpaqueContext* context_;
  KilnOpaqueNode* node_;
};

#define KILN_SDK_RETURN_IF_ERROR(expr)                               \
  do {                                                               \
    const KilnStatus kiln_sdk_status_ = (expr);                      \
    if (kiln_sdk_status_ != KILN_STATUS_OK) return kiln_sdk_status_; \
  } while (0)

namespace internal {

// Reports "C++ exception escaped <where>: <what>" as KILN_STATUS_INTERNAL.
inline KilnStatus ReportException(KilnOpaqueContext* context, const char* what,
                                  const char* where = "a kernel callback") {
  std::string message = "C++ exception escaped ";
  message += where;
  message += ": ";
  message += what;
  Host().report_error(context, KILN_STATUS_INTERNAL, message.c_str());
  return KILN_STATUS_INTERNAL;
}

// Runs `body` and converts any exception into KILN_STATUS_INTERNAL, reported
// as escaping `where` (read only on failure; must outlive the call).
template <typename Body>
KilnStatus Guard(KilnOpaqueContext* context, Body&& body,
                 const char* where = "a kernel callback") noexcept {
  try {
    return body();
  } catch (const std::exception& e) {
    return ReportException(context, e.what(), where);
  } catch (...) {
    return ReportException(context, "unknown exception", where);
  }
}

}  // namespace internal

// Kernel functions: KilnStatus Fn(KernelContext&).
using KernelFn = KilnStatus (*)(KernelContext&);

// A stateless kernel from a prepare (may be nullptr) and an invoke function.
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
  if (Prepare != nullptr) {
    k.prepare = [](void*, void*, KilnOpaqueContext* c,
                   KilnOpaqueNode* n) -> KilnStatus {
      return internal::Guard(c, [&] {
        KernelContext k(c, n);
        return Prepare(k);
      });
    };
  }
  k.invoke = [](void*, void*, KilnOpaqueContext* c,
                KilnOpaqueNode* n) -> KilnStatus {
    return internal::Guard(c, [&] {
      KernelContext k(c, n);
      return Invoke(k);
    });
  };
  return k;
}

// A kernel with per-node state of type State (default-constructed at init,
// destroyed at free). Functions: KilnStatus Fn(KernelContext&, State&).
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
  k.init = [](void*, KilnOpaqueContext* c, KilnOpaqueNode*,
              void** state) -> KilnStatus {
    return internal::Guard(c, [&] {
      *state = new State();
      return KILN_STATUS_OK;
    });
  };
  k.free = [](void*, void* state) { delete static_cast<State*>(state); };
  k.prepare = [](void*, void* state, KilnOpaqueContext* c,
                 KilnOpaqueNode* n) -> KilnStatus {
    return internal::Guard(c, [&] {
      KernelContext k(c, n);
      return Prepare(k, *static_cast<State*>(state));
    });
  };
  k.invoke = [](void*, void* state, KilnOpaqueContext* c,
                KilnOpaqueNode* n) -> KilnStatus {
    return internal::Guard(c, [&] {
      KernelContext k(c, n);
      return Invoke(k, *static_cast<State*>(state));
    });
  };
  return k;
}

// Owns the storage behind a KilnPluginDescriptor. Keep it in a function-local
// static so the descriptor outlives every host call.
class PluginDefinition {
 public:
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

  // Finalises on first call; the definition must not change afterwards.
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
  KilnPluginDescriptor descriptor_{};
  bool built_ = false;
};

namespace internal {

// Hosts may load the same plugin from several threads at once (each
// interpreter loads its plugins; dlopen hands them one library), so entry is
// serialized: the descriptor is built once and the host table slot is
// written under the lock.
inline const KilnPluginDescriptor* Enter(
    const KilnHostInfo* host, const KilnPluginDescriptor* (*describe)()) {
  if (host == nullptr || host->struct_size < KILN_HOST_INFO_STRUCT_SIZE ||
      host->api == nullptr) {
    return nullptr;
  }
  static std::mutex entry_mutex;
  std::lock_guard<std::mutex> lock(entry_mutex);
  HostApiSlot() = host->api;
  try {
    return describe();
  } catch (...) {
    return nullptr;
  }
}

}  // namespace internal
}  // namespace kiln::sdk

// Defines the plugin's single exported entry symbol. `describe` is a
// function returning the plugin's descriptor (see PluginDefinition).
#define KILN_DEFINE_PLUGIN(describe)                      \
  extern "C" __attribute__((visibility("default")))       \
  const KilnPluginDescriptor*                             \
  KilnPluginEntry(const KilnHostInfo* host) {             \
    return ::kiln::sdk::internal::Enter(host, &describe); \
  }

// Defines KernelContext::ExpectInputs/ExpectOutputs/ExpectType.
#include "kiln/sdk/checks.h"  // IWYU pragma: export

#endif  // KILN_SDK_PLUGIN_H_
