// Fuzz target: the host's checks of what a plugin hands it
// (plugin/plugin_loader.h, PluginLoader::ValidateDescriptor): a descriptor
// built from the input (struct sizes, versions, names, kernels with op
// codes and version ranges, a delegate with its supported-op rows, settings
// type and settings FileDescriptorSet, an extension chain that may loop),
// validated and negotiated against a host offer. Every pointer the harness
// builds is valid or NULL and every count matches its array: a plugin is
// trusted code, so only values, not wild pointers, are in scope.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "fuzz_input.h"
#include "kiln/kiln_extension.h"
#include "kiln/kiln_plugin.h"
#include "plugin/plugin_loader.h"
#include "runtime/host_api.h"

namespace {

using kiln::fuzz::FuzzInput;

constexpr uint32_t kVersions[] = {
    KILN_MAKE_VERSION(1, 0, 0), KILN_MAKE_VERSION(1, 1, 0),
    KILN_MAKE_VERSION(1, 2, 0), KILN_MAKE_VERSION(2, 0, 0),
    KILN_MAKE_VERSION(0, 9, 0)};

uint32_t Version(FuzzInput& in) {
  return in.Bool() ? kVersions[in.Below(5)] : in.Read<uint32_t>();
}

// A struct size: usually the full one, else a smaller or odd one.
uint32_t StructSize(FuzzInput& in, uint32_t full) {
  switch (in.Below(4)) {
    case 0:
      return in.Below(full + 16);
    default:
      return full;
  }
}

// Owns everything a fuzzed descriptor points to.
struct Storage {
  std::vector<std::unique_ptr<std::string>> strings;
  std::vector<std::unique_ptr<KilnKernel>> kernels;
  std::vector<const KilnKernel*> kernel_table;
  std::vector<uint32_t> bad_versions;
  std::vector<std::unique_ptr<std::vector<int32_t>>> type_lists;
  std::vector<std::unique_ptr<KilnDelegateOpSupport>> rows;
  std::vector<const KilnDelegateOpSupport*> row_table;
  std::vector<std::unique_ptr<KilnExtensionBase>> extensions;
  KilnDelegateInterface delegate{};
  std::string descriptor_set;

  // A NUL-terminated string from the input, or NULL.
  const char* CString(FuzzInput& in) {
    if (in.Below(8) == 0) return nullptr;
    strings.push_back(std::make_unique<std::string>(in.String(80)));
    return strings.back()->c_str();
  }
};

KilnStatus KernelInvoke(void*, void*, KilnOpaqueContext*, KilnOpaqueNode*) {
  return KILN_STATUS_INTERNAL;
}
KilnStatus KernelInit(void*, KilnOpaqueContext*, KilnOpaqueNode*, void**) {
  return KILN_STATUS_INTERNAL;
}
void KernelFree(void*, void*) {}
KilnStatus DelegateCreate(void*, KilnOpaqueContext*, const uint8_t*, uint64_t,
                          void**) {
  return KILN_STATUS_INTERNAL;
}
void DelegateDestroy(void*, void*) {}
KilnStatus DelegatePartition(void*, KilnOpaqueContext*) {
  return KILN_STATUS_INTERNAL;
}
KilnStatus PartitionInit(void*, KilnOpaqueContext*, KilnOpaqueNode*, void**) {
  return KILN_STATUS_INTERNAL;
}
KilnStatus PartitionInvoke(void*, void*, KilnOpaqueContext*, KilnOpaqueNode*) {
  return KILN_STATUS_INTERNAL;
}
KilnStatus CopyHandle(void*, KilnOpaqueContext*, KilnBufferHandle,
                      KilnOpaqueTensor*) {
  return KILN_STATUS_INTERNAL;
}
void FreeHandle(void*, KilnBufferHandle) {}

void AddKernels(FuzzInput& in, Storage& s, KilnPluginDescriptor& d) {
  const uint32_t n = in.Below(9);
  for (uint32_t i = 0; i < n; ++i) {
    if (in.Below(16) == 0) {
      s.kernel_table.push_back(nullptr);
      continue;
    }
    auto k = std::make_unique<KilnKernel>();
    k->struct_size = StructSize(in, KILN_KERNEL_STRUCT_SIZE);
    k->builtin_code =
        in.Bool() ? static_cast<int32_t>(in.Below(210)) : in.Read<int32_t>();
    k->custom_name = in.Bool() ? s.CString(in) : nullptr;
    k->min_version = static_cast<int32_t>(in.Below(5)) - 1;
    k->max_version = static_cast<int32_t>(in.Below(6)) - 1;
    k->invoke = in.Below(8) == 0 ? nullptr : KernelInvoke;
    k->init = in.Bool() ? KernelInit : nullptr;
    k->free = in.Bool() ? KernelFree : nullptr;
    k->flags = in.Read<uint64_t>();
    s.kernel_table.push_back(k.get());
    s.kernels.push_back(std::move(k));
  }
  d.kernels =
      s.kernel_table.empty() && in.Bool() ? nullptr : s.kernel_table.data();
  d.num_kernels = static_cast<uint32_t>(s.kernel_table.size());
}

void AddDelegate(FuzzInput& in, Storage& s, KilnPluginDescriptor& d) {
  KilnDelegateInterface& del = s.delegate;
  del.struct_size = StructSize(in, KILN_DELEGATE_INTERFACE_STRUCT_SIZE);
  del.name = s.CString(in);
  del.settings_type = in.Bool() ? s.CString(in) : nullptr;
  del.create = in.Below(8) == 0 ? nullptr : DelegateCreate;
  del.destroy = DelegateDestroy;
  del.partition = DelegatePartition;
  del.partition_init = PartitionInit;
  del.partition_invoke = PartitionInvoke;
  const uint32_t rows = in.Below(6);
  for (uint32_t i = 0; i < rows; ++i) {
    if (in.Below(16) == 0) {
      s.row_table.push_back(nullptr);
      continue;
    }
    auto r = std::make_unique<KilnDelegateOpSupport>();
    r->struct_size = StructSize(in, KILN_DELEGATE_OP_SUPPORT_STRUCT_SIZE);
    r->builtin_code =
        in.Bool() ? static_cast<int32_t>(in.Below(210)) : in.Read<int32_t>();
    r->custom_name = in.Bool() ? s.CString(in) : nullptr;
    r->min_version = static_cast<int32_t>(in.Below(5)) - 1;
    r->max_version = static_cast<int32_t>(in.Below(6)) - 1;
    auto types = std::make_unique<std::vector<int32_t>>();
    for (uint32_t t = in.Below(5); t > 0; --t) {
      types->push_back(static_cast<int32_t>(in.Below(20)) - 1);
    }
    r->num_tensor_types = static_cast<uint32_t>(types->size());
    r->tensor_types = types->empty() && in.Bool() ? nullptr : types->data();
    s.type_lists.push_back(std::move(types));
    s.row_table.push_back(r.get());
    s.rows.push_back(std::move(r));
  }
  del.supported_ops = s.row_table.empty() ? nullptr : s.row_table.data();
  del.num_supported_ops = static_cast<uint32_t>(s.row_table.size());
  del.flags = in.Read<uint32_t>();
  if (in.Bool()) {
    s.descriptor_set = in.String(255);
    del.settings_descriptor_set =
        reinterpret_cast<const uint8_t*>(s.descriptor_set.data());
    del.settings_descriptor_set_size = s.descriptor_set.size();
  }
  const uint8_t handles = in.Read<uint8_t>();
  del.copy_from_buffer_handle = (handles & 1) ? CopyHandle : nullptr;
  del.copy_to_buffer_handle = (handles & 2) ? CopyHandle : nullptr;
  del.free_buffer_handle = (handles & 4) ? FreeHandle : nullptr;
  d.delegate = &del;
}

void AddExtensions(FuzzInput& in, Storage& s, KilnPluginDescriptor& d) {
  const uint32_t n = in.Below(5);
  for (uint32_t i = 0; i < n; ++i) {
    auto e = std::make_unique<KilnExtensionBase>();
    e->struct_size = StructSize(in, KILN_EXTENSION_BASE_STRUCT_SIZE);
    e->id = s.CString(in);
    s.extensions.push_back(std::move(e));
  }
  for (size_t i = 0; i + 1 < s.extensions.size(); ++i) {
    s.extensions[i]->next = s.extensions[i + 1].get();
  }
  // Possibly a cycle back to an earlier entry.
  if (!s.extensions.empty() && in.Below(4) == 0) {
    s.extensions.back()->next =
        s.extensions[in.Below(static_cast<uint32_t>(s.extensions.size()))]
            .get();
  }
  d.extensions = s.extensions.empty() ? nullptr : s.extensions.front().get();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzInput in(data, size);
  absl::StatusOr<kiln::HostOffer> offer =
      kiln::PluginLoader::MakeOffer(in.Bool() ? 0 : kVersions[in.Below(3)]);
  if (!offer.ok()) return 0;
  Storage s;
  KilnPluginDescriptor d{};
  d.struct_size = StructSize(in, KILN_PLUGIN_DESCRIPTOR_STRUCT_SIZE);
  d.abi_version = Version(in);
  d.min_host_abi_version = Version(in);
  d.name = s.CString(in);
  d.version = s.CString(in);
  for (uint32_t n = in.Below(4); n > 0; --n) {
    s.bad_versions.push_back(Version(in));
  }
  d.bad_host_versions =
      s.bad_versions.empty() && in.Bool() ? nullptr : s.bad_versions.data();
  d.num_bad_host_versions = static_cast<uint32_t>(s.bad_versions.size());
  AddKernels(in, s, d);
  if (in.Bool()) AddDelegate(in, s, d);
  AddExtensions(in, s, d);
  std::set<std::string> taken;
  if (in.Bool()) taken.insert("kiln_cpu");
  kiln::PluginLoadRecord record;
  (void)kiln::PluginLoader::ValidateDescriptor("fuzz.so", &d, *offer, record,
                                               taken);
  return 0;
}
