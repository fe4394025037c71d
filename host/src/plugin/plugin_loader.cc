#include "plugin/plugin_loader.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <system_error>
#include <tuple>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "plugin/plugin_file_check.h"
#include "runtime/graph.h"
#include "runtime/host_api.h"
#include "runtime/host_log.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

// Size of KilnPluginDescriptor in extension API 1.0 (frozen).
constexpr uint32_t kDescriptorSize_1_0 =
    KILN_STRUCT_SIZE(KilnPluginDescriptor, extensions);
// The three leading fields every major version keeps.
constexpr uint32_t kDescriptorVersionHeaderSize =
    KILN_STRUCT_SIZE(KilnPluginDescriptor, min_host_abi_version);
constexpr uint32_t kKernelSize_1_0 = KILN_STRUCT_SIZE(KilnKernel, invoke);
constexpr uint32_t kDelegateSize_1_0 =
    KILN_STRUCT_SIZE(KilnDelegateInterface, partition_invoke);
constexpr uint32_t kDescriptorSizeWithShutdown =
    KILN_STRUCT_SIZE(KilnPluginDescriptor, shutdown);
constexpr uint32_t kDescriptorSizeWithInitialize =
    KILN_STRUCT_SIZE(KilnPluginDescriptor, initialize);
// The first extension API whose hosts run initialize/shutdown.
constexpr uint32_t kLifecycleAbiVersion = KILN_MAKE_VERSION(1, 2, 0);
constexpr size_t kMaxNameLength = 64;
constexpr int kMaxExtensionChain = 64;

absl::Status Refuse(const std::string& path, const std::string& what) {
  return absl::FailedPreconditionError(
      absl::StrCat("plugin '", path, "' refused: ", what));
}

bool IsValidName(const char* name) {
  if (name == nullptr || name[0] == '\0') return false;
  const size_t n = std::strlen(name);
  if (n > kMaxNameLength) return false;
  for (size_t i = 0; i < n; ++i) {
    const char c = name[i];
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) {
      return false;
    }
  }
  return true;
}

// "MAJOR.MINOR.PATCH" with an optional "-prerelease" or "+build" suffix.
bool IsSemver(const char* v) {
  if (v == nullptr) return false;
  int parts = 0;
  const char* p = v;
  while (true) {
    if (*p < '0' || *p > '9') return false;
    while (*p >= '0' && *p <= '9') ++p;
    ++parts;
    if (parts == 3) break;
    if (*p != '.') return false;
    ++p;
  }
  return *p == '\0' || *p == '-' || *p == '+';
}

std::string KernelLabel(const KilnKernel* k, uint32_t index) {
  std::string op =
      k->builtin_code == KILN_OP_CUSTOM
          ? absl::StrCat("CUSTOM '", k->custom_name ? k->custom_name : "(null)",
                         "'")
          : BuiltinOpName(k->builtin_code);
  return absl::StrCat("kernels[", index, "] (", op, ")");
}

// The checks of one kernel on its own, as kernels[index]: struct size, op
// code and custom name, required functions, version range.
absl::Status ValidateKernel(const std::string& path, const KilnKernel* k,
                            uint32_t index) {
  if (k == nullptr) {
    return Refuse(
        path, absl::StrCat("descriptor field 'kernels[", index, "]' is NULL"));
  }
  if (k->struct_size < kKernelSize_1_0) {
    return Refuse(path, absl::StrCat("kernels[", index, "].struct_size is ",
                                     k->struct_size,
                                     ", smaller than the extension API 1.0 "
                                     "KilnKernel (",
                                     kKernelSize_1_0,
                                     " bytes); set it to "
                                     "KILN_KERNEL_STRUCT_SIZE"));
  }
  const std::string label = KernelLabel(k, index);
  const auto refuse = [&](auto&&... what) {
    return Refuse(path, absl::StrCat(label, ": ", what...));
  };
  if (k->builtin_code < 0) {
    return refuse("builtin_code ", k->builtin_code, " is negative");
  }
  if (k->builtin_code == KILN_OP_CUSTOM &&
      (k->custom_name == nullptr || k->custom_name[0] == '\0')) {
    return refuse(
        "builtin_code is KILN_OP_CUSTOM but custom_name is NULL or empty");
  }
  if (k->builtin_code != KILN_OP_CUSTOM && k->custom_name != nullptr) {
    return refuse("custom_name '", k->custom_name,
                  "' is set for a builtin op; set it only with "
                  "KILN_OP_CUSTOM");
  }
  if (k->invoke == nullptr) {
    return refuse(
        "function pointer 'invoke' is NULL; every kernel must implement "
        "invoke");
  }
  if (k->init != nullptr && k->free == nullptr) {
    return refuse("'init' is set but 'free' is NULL; node state would leak");
  }
  if (k->min_version < 1) {
    return refuse("min_version ", k->min_version,
                  " is invalid; op versions start at 1");
  }
  if (k->min_version > k->max_version) {
    return refuse("op-version range is inverted (min_version ", k->min_version,
                  " > max_version ", k->max_version, ")");
  }
  return absl::OkStatus();
}

absl::Status ValidateKernels(const std::string& path,
                             const KilnPluginDescriptor* d,
                             std::vector<const KilnKernel*>* out) {
  if (d->num_kernels > 0 && d->kernels == nullptr) {
    return Refuse(
        path, absl::StrCat("descriptor field 'kernels' is NULL but "
                           "num_kernels is ",
                           d->num_kernels, "; set kernels or num_kernels = 0"));
  }
  // (op, custom name) -> ranges seen, for the overlap check.
  std::map<std::pair<int32_t, std::string>,
           std::vector<std::pair<uint32_t, const KilnKernel*>>>
      ranges;
  for (uint32_t i = 0; i < d->num_kernels; ++i) {
    const KilnKernel* k = d->kernels[i];
    KILN_RETURN_IF_ERROR(ValidateKernel(path, k, i));
    auto key = std::make_pair(
        k->builtin_code,
        std::string(k->builtin_code == KILN_OP_CUSTOM ? k->custom_name : ""));
    for (const auto& [j, other] : ranges[key]) {
      if (k->min_version <= other->max_version &&
          other->min_version <= k->max_version) {
        return Refuse(path,
                      absl::StrCat(KernelLabel(k, i), ": op-version range ",
                                   k->min_version, "..", k->max_version,
                                   " overlaps kernels[", j, "] range ",
                                   other->min_version, "..", other->max_version,
                                   "; each op version must have one kernel"));
      }
    }
    ranges[key].emplace_back(i, k);
    out->push_back(k);
  }
  return absl::OkStatus();
}

absl::StatusOr<DelegateDeclaration> ValidateDelegate(
    const std::string& path, const KilnDelegateInterface* del) {
  if (del->struct_size < kDelegateSize_1_0) {
    return Refuse(path,
                  absl::StrCat("delegate.struct_size is ", del->struct_size,
                               ", smaller than the extension API 1.0 "
                               "KilnDelegateInterface (",
                               kDelegateSize_1_0, " bytes)"));
  }
  if (!IsValidName(del->name)) {
    return Refuse(path,
                  "delegate.name is NULL, empty or not made of "
                  "[a-z0-9_] (at most 64 characters)");
  }
  const std::pair<const char*, bool> required[] = {
      {"create", del->create != nullptr},
      {"destroy", del->destroy != nullptr},
      {"partition", del->partition != nullptr},
      {"partition_init", del->partition_init != nullptr},
      {"partition_invoke", del->partition_invoke != nullptr},
  };
  for (const auto& [field, present] : required) {
    if (!present) {
      return Refuse(path, absl::StrCat("function pointer 'delegate.", field,
                                       "' is NULL; it is required"));
    }
  }
  absl::StatusOr<DelegateDeclaration> declared = ReadDelegateDeclaration(*del);
  if (!declared.ok()) {
    return Refuse(path, std::string(declared.status().message()));
  }
  return declared;
}

absl::Status ValidateExtensions(const std::string& path,
                                const KilnExtensionBase* ext) {
  int count = 0;
  for (; ext != nullptr; ext = ext->next) {
    if (++count > kMaxExtensionChain) {
      return Refuse(path,
                    absl::StrCat("extension chain is longer than ",
                                 kMaxExtensionChain, " entries (a cycle?)"));
    }
    if (ext->struct_size < KILN_EXTENSION_BASE_STRUCT_SIZE ||
        ext->id == nullptr) {
      return Refuse(path, absl::StrCat("extensions entry ", count - 1,
                                       " has struct_size ", ext->struct_size,
                                       " or a NULL id"));
    }
  }
  return absl::OkStatus();
}

// dlopen()s the plugin file; the caller owns the handle.
absl::StatusOr<void*> OpenLibrary(const std::string& path,
                                  bool allow_insecure) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    return absl::NotFoundError(
        absl::StrCat("plugin '", path, "' not found; check the path"));
  }
  // Before dlopen: a truncated ELF kills the process with SIGBUS there.
  if (absl::Status checked = CheckPluginFile(path, allow_insecure);
      !checked.ok()) {
    return absl::Status(
        checked.code(),
        absl::StrCat("plugin '", path, "' refused: ", checked.message()));
  }
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    return absl::InvalidArgumentError(absl::StrCat(
        "plugin '", path,
        "' could not be loaded as a shared library (it is not one, is for "
        "another architecture, or a dependency is missing): ",
        err != nullptr ? err : "unknown dlopen error"));
  }
  return handle;
}

// Calls the plugin's entry point with the host's offer; the descriptor it
// returns (never null). `messages`: what the plugin logged so far.
absl::StatusOr<const KilnPluginDescriptor*> CallEntry(
    const std::string& path, void* handle, const HostOffer& offer,
    std::vector<std::string>* messages) {
  dlerror();
  void* symbol = dlsym(handle, KILN_PLUGIN_ENTRY_SYMBOL);
  if (symbol == nullptr) {
    return Refuse(path,
                  absl::StrCat("it does not export the entry symbol '",
                               KILN_PLUGIN_ENTRY_SYMBOL,
                               "'; define it with KILN_DEFINE_PLUGIN (C++ SDK) "
                               "or as extern \"C\" KilnPluginEntry"));
  }
  auto entry = reinterpret_cast<KilnPluginEntryFn>(symbol);
  KilnHostInfo info;
  std::memset(&info, 0, sizeof(info));
  info.struct_size = KILN_HOST_INFO_STRUCT_SIZE;
  info.runtime_version = offer.runtime_version;
  info.abi_version = offer.max_abi_version;
  info.min_plugin_abi_version = offer.min_plugin_abi_version;
  info.api = HostApiForVersion(offer.max_abi_version);
  const KilnPluginDescriptor* d = entry(&info);
  if (d == nullptr) {
    return Refuse(
        path, absl::StrCat(KILN_PLUGIN_ENTRY_SYMBOL,
                           " returned NULL: the plugin declined this host "
                           "(extension API ",
                           VersionString(offer.max_abi_version), ")",
                           messages->empty() ? "; it logged no reason" : ""));
  }
  return d;
}

// Reads the descriptor's version fields (into `rec` as far as they can be
// read) and negotiates the extension API version; refuses a descriptor too
// small for its major version or a plugin the negotiation rejects.
absl::StatusOr<Negotiation> NegotiateDescriptor(const std::string& path,
                                                const KilnPluginDescriptor* d,
                                                const HostOffer& offer,
                                                PluginLoadRecord& rec) {
  if (d->struct_size < kDescriptorVersionHeaderSize) {
    return Refuse(path,
                  absl::StrCat("descriptor struct_size is ", d->struct_size,
                               ", too small to hold even its version fields; "
                               "set struct_size = "
                               "KILN_PLUGIN_DESCRIPTOR_STRUCT_SIZE"));
  }
  rec.abi_version = d->abi_version;
  PluginVersions versions;
  versions.abi_version = d->abi_version;
  versions.min_host_abi_version = d->min_host_abi_version;
  // A different major's layout beyond the version header is unknown: decide
  // on the versions alone before reading anything else.
  if (KILN_VERSION_MAJOR(d->abi_version) !=
      KILN_VERSION_MAJOR(offer.max_abi_version)) {
    return Refuse(path, Negotiate(offer, versions).reason);
  }
  if (d->struct_size < kDescriptorSize_1_0) {
    return Refuse(path,
                  absl::StrCat("descriptor struct_size is ", d->struct_size,
                               ", smaller than the extension API 1.0 "
                               "KilnPluginDescriptor (",
                               kDescriptorSize_1_0,
                               " bytes); set struct_size = "
                               "KILN_PLUGIN_DESCRIPTOR_STRUCT_SIZE"));
  }
  if (d->name != nullptr) rec.name = d->name;
  if (d->version != nullptr) rec.version = d->version;
  if (d->num_bad_host_versions > 0 && d->bad_host_versions == nullptr) {
    return Refuse(path,
                  "descriptor field 'bad_host_versions' is NULL but "
                  "num_bad_host_versions is not 0");
  }
  for (uint32_t i = 0; i < d->num_bad_host_versions; ++i) {
    versions.bad_host_versions.push_back(d->bad_host_versions[i]);
  }
  Negotiation n = Negotiate(offer, versions);
  if (!n.accepted) return Refuse(path, n.reason);
  return n;
}

// The descriptor's name and version strings.
absl::Status ValidateIdentity(const std::string& path,
                              const KilnPluginDescriptor* d) {
  if (!IsValidName(d->name)) {
    return Refuse(path,
                  absl::StrCat("descriptor field 'name' ",
                               d->name == nullptr
                                   ? std::string("is NULL")
                                   : absl::StrCat("'", d->name, "' is invalid"),
                               "; use 1 to 64 characters of [a-z0-9_], e.g. "
                               "\"acme_npu\""));
  }
  if (!IsSemver(d->version)) {
    return Refuse(path, absl::StrCat("descriptor field 'version' ",
                                     d->version == nullptr
                                         ? std::string("is NULL")
                                         : absl::StrCat("'", d->version,
                                                        "' is not semver"),
                                     "; use \"MAJOR.MINOR.PATCH\""));
  }
  return absl::OkStatus();
}

}  // namespace

LoadInstanceCloser::LoadInstanceCloser(LoadInstanceCloser&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)),
      descriptor_(std::exchange(other.descriptor_, nullptr)),
      shutdown_(std::exchange(other.shutdown_, nullptr)) {}

LoadInstanceCloser& LoadInstanceCloser::operator=(
    LoadInstanceCloser&& other) noexcept {
  if (this != &other) {
    Close();
    handle_ = std::exchange(other.handle_, nullptr);
    descriptor_ = std::exchange(other.descriptor_, nullptr);
    shutdown_ = std::exchange(other.shutdown_, nullptr);
  }
  return *this;
}

void LoadInstanceCloser::Close() {
  if (shutdown_ != nullptr) std::exchange(shutdown_, nullptr)(descriptor_);
  descriptor_ = nullptr;
  if (handle_ != nullptr) dlclose(std::exchange(handle_, nullptr));
}

LoadedPlugin::~LoadedPlugin() = default;

std::string LoadedPlugin::Describe() const {
  return absl::StrCat(name_, " ", version_, " (", path_, ")");
}

absl::StatusOr<HostOffer> PluginLoader::MakeOffer(uint32_t max_abi_version) {
  HostOffer offer;
  offer.runtime_version = KILN_RUNTIME_VERSION;
  offer.min_plugin_abi_version = kMinPluginAbiVersion;
  offer.max_abi_version = kMaxPluginAbiVersion;
  if (max_abi_version != 0) {
    if (HostApiSizeForVersion(max_abi_version) == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot cap the extension API at ", VersionString(max_abi_version),
          ": this host serves ", VersionString(kMinPluginAbiVersion), " to ",
          VersionString(kMaxPluginAbiVersion)));
    }
    offer.max_abi_version = max_abi_version;
  }
  return offer;
}

namespace {

// Whether this load instance is owed initialize/shutdown: the host offered
// 1.2 or newer and the descriptor, of the host's major, is large enough.
bool RunsLifecycle(const KilnPluginDescriptor* d, const HostOffer& offer,
                   uint32_t needed_size) {
  return offer.max_abi_version >= kLifecycleAbiVersion &&
         d->struct_size >= needed_size &&
         KILN_VERSION_MAJOR(d->abi_version) ==
             KILN_VERSION_MAJOR(offer.max_abi_version);
}

// The checks of an accepted descriptor's contents, after negotiation.
absl::Status ValidateContents(const std::string& path,
                              const KilnPluginDescriptor* d,
                              const std::set<std::string>& taken_names,
                              std::vector<const KilnKernel*>* kernels,
                              DelegateDeclaration* delegate) {
  KILN_RETURN_IF_ERROR(ValidateIdentity(path, d));
  KILN_RETURN_IF_ERROR(ValidateKernels(path, d, kernels));
  if (d->delegate != nullptr) {
    KILN_ASSIGN_OR_RETURN(*delegate, ValidateDelegate(path, d->delegate));
  }
  KILN_RETURN_IF_ERROR(ValidateExtensions(path, d->extensions));
  if (kernels->empty() && d->delegate == nullptr) {
    return Refuse(path,
                  "it declares no kernels and no delegate; a plugin "
                  "must provide at least one");
  }
  if (taken_names.count(d->name) > 0) {
    return Refuse(path, absl::StrCat("a plugin named '", d->name,
                                     "' is already loaded from an earlier "
                                     "search location; remove one of them"));
  }
  return absl::OkStatus();
}

// Calls the descriptor's initialize, if it has one, for negotiated version
// `version`. `messages`: what the plugin logged so far.
absl::Status CallInitialize(const std::string& path,
                            const KilnPluginDescriptor* d,
                            const HostOffer& offer, uint32_t version,
                            std::vector<std::string>* messages) {
  if (!RunsLifecycle(d, offer, kDescriptorSizeWithInitialize) ||
      d->initialize == nullptr) {
    return absl::OkStatus();
  }
  KilnPluginInstanceInfo info;
  std::memset(&info, 0, sizeof(info));
  info.struct_size = KILN_PLUGIN_INSTANCE_INFO_STRUCT_SIZE;
  info.abi_version = version;
  info.runtime_version = offer.runtime_version;
  info.api = HostApiForVersion(version);
  const KilnStatus code = d->initialize(d, &info);
  if (code == KILN_STATUS_OK) return absl::OkStatus();
  const bool known =
      code > KILN_STATUS_OK && code <= KILN_STATUS_UNAUTHENTICATED;
  return Refuse(path,
                absl::StrCat("its initialize returned ",
                             known ? absl::StatusCodeToString(
                                         static_cast<absl::StatusCode>(code))
                                   : absl::StrCat("status ", code),
                             " for extension API ", VersionString(version),
                             messages->empty() ? "; it logged no reason" : ""));
}

// `status` with what the plugin logged appended to its message.
absl::Status WithPluginMessages(const absl::Status& status,
                                const std::vector<std::string>& messages) {
  if (status.ok() || messages.empty()) return status;
  return absl::Status(status.code(),
                      absl::StrCat(status.message(), ". The plugin logged: ",
                                   absl::StrJoin(messages, "; ")));
}

// A load instance whose descriptor was accepted and initialized.
struct AcceptedInstance {
  const KilnPluginDescriptor* descriptor = nullptr;
  uint32_t negotiated_version = 0;
  std::vector<const KilnKernel*> kernels;
  DelegateDeclaration delegate;
  LoadInstanceCloser closer;
};

absl::StatusOr<AcceptedInstance> LoadInstance(
    const std::string& path, const HostOffer& offer, PluginLoadRecord& rec,
    const std::set<std::string>& taken_names, bool allow_insecure) {
  KILN_ASSIGN_OR_RETURN(void* handle, OpenLibrary(path, allow_insecure));
  LoadInstanceCloser closer(handle);
  KILN_ASSIGN_OR_RETURN(const KilnPluginDescriptor* d,
                        CallEntry(path, handle, offer, &rec.messages));
  if (RunsLifecycle(d, offer, kDescriptorSizeWithShutdown)) {
    closer.SetShutdown(d, d->shutdown);
  }
  KILN_ASSIGN_OR_RETURN(
      ValidatedDescriptor valid,
      PluginLoader::ValidateDescriptor(path, d, offer, rec, taken_names));
  KILN_RETURN_IF_ERROR(
      CallInitialize(path, d, offer, valid.negotiated_version, &rec.messages));
  AcceptedInstance accepted;
  accepted.descriptor = d;
  accepted.negotiated_version = valid.negotiated_version;
  accepted.kernels = std::move(valid.kernels);
  accepted.delegate = std::move(valid.delegate);
  accepted.closer = std::move(closer);
  return accepted;
}

}  // namespace

absl::StatusOr<ValidatedDescriptor> PluginLoader::ValidateDescriptor(
    const std::string& path, const KilnPluginDescriptor* d,
    const HostOffer& offer, PluginLoadRecord& rec,
    const std::set<std::string>& taken_names) {
  KILN_ASSIGN_OR_RETURN(const Negotiation n,
                        NegotiateDescriptor(path, d, offer, rec));
  ValidatedDescriptor valid;
  valid.negotiated_version = n.version;
  KILN_RETURN_IF_ERROR(
      ValidateContents(path, d, taken_names, &valid.kernels, &valid.delegate));
  return valid;
}

absl::StatusOr<std::shared_ptr<LoadedPlugin>> PluginLoader::Load(
    const std::string& path, const HostOffer& offer, PluginLoadRecord* record,
    const std::set<std::string>& taken_names, bool allow_insecure) {
  PluginLoadRecord scratch;
  PluginLoadRecord& rec = record != nullptr ? *record : scratch;
  rec.path = path;
  absl::StatusOr<AcceptedInstance> accepted;
  {
    // Entry, initialize, and a refused instance's shutdown.
    const PluginLogCapture capture(&rec.messages);
    accepted = LoadInstance(path, offer, rec, taken_names, allow_insecure);
  }
  if (!accepted.ok()) {
    return WithPluginMessages(accepted.status(), rec.messages);
  }
  const KilnPluginDescriptor* d = accepted->descriptor;
  std::shared_ptr<LoadedPlugin> plugin(new LoadedPlugin());
  plugin->path_ = path;
  plugin->name_ = d->name;
  plugin->version_ = d->version;
  plugin->abi_version_ = d->abi_version;
  plugin->negotiated_version_ = accepted->negotiated_version;
  plugin->descriptor_ = d;
  plugin->kernels_ = std::move(accepted->kernels);
  plugin->delegate_ = d->delegate;
  plugin->delegate_declaration_ = std::move(accepted->delegate);
  plugin->closer_ = std::move(accepted->closer);
  return plugin;
}

namespace {

// Kiln's own plugins: in a directory they come before the other plugins.
bool IsKilnPluginFile(const std::string& path) {
  const std::string file = fs::path(path).filename().string();
  return file == "libkiln_cpu.so" || file == "libkiln_opencl.so" ||
         file == "libkiln_xnnpack.so";
}

// The files of one plugin directory in load order: Kiln's own plugins
// first, then the others by file name (the order only decides which of two
// plugins with the same name is refused as the duplicate; the priority of
// the loaded ones is set by PriorityOrder below).
std::vector<std::string> DirectoryPlugins(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (it->path().extension() == ".so" &&
        (it->is_regular_file(ec) || it->is_symlink(ec))) {
      files.push_back(it->path().string());
    }
  }
  std::sort(files.begin(), files.end(),
            [](const std::string& a, const std::string& b) {
              return std::make_pair(!IsKilnPluginFile(a), a) <
                     std::make_pair(!IsKilnPluginFile(b), b);
            });
  return files;
}

// Orders the records of one directory by priority: Kiln's own plugins,
// then the other loaded plugins by descriptor name and version (never by
// file name: renaming a file does not change what runs), then the refused.
void PriorityOrder(std::vector<PluginLoadRecord>::iterator begin,
                   std::vector<PluginLoadRecord>::iterator end) {
  const auto key = [](const PluginLoadRecord& r) {
    return std::make_tuple(r.plugin == nullptr, !IsKilnPluginFile(r.path),
                           r.name, r.version, r.path);
  };
  std::stable_sort(begin, end,
                   [&](const PluginLoadRecord& a, const PluginLoadRecord& b) {
                     return key(a) < key(b);
                   });
}

}  // namespace

std::vector<std::vector<std::string>> PluginLoader::CandidateLocations(
    const PluginSearchConfig& config) {
  std::vector<std::vector<std::string>> out;
  for (const std::string& path : config.paths) out.push_back({path});
  std::vector<std::string> dirs = config.directories;
  if (config.use_default_locations) {
    // secure_getenv: a setuid host ignores the caller's plugin path.
    if (const char* env = secure_getenv("KILN_PLUGIN_PATH"); env != nullptr) {
      for (absl::string_view d : absl::StrSplit(env, ':', absl::SkipEmpty())) {
        dirs.emplace_back(d);
      }
    }
    dirs.push_back(DefaultPluginDirectory());
  }
  std::set<std::string> seen_dirs;
  for (const std::string& dir : dirs) {
    std::error_code ec;
    const std::string key = fs::weakly_canonical(dir, ec).string();
    if (!seen_dirs.insert(ec ? dir : key).second) continue;
    out.push_back(DirectoryPlugins(dir));
  }
  return out;
}

std::vector<std::string> PluginLoader::Candidates(
    const PluginSearchConfig& config) {
  std::vector<std::string> out;
  for (const std::vector<std::string>& location : CandidateLocations(config)) {
    out.insert(out.end(), location.begin(), location.end());
  }
  return out;
}

std::vector<PluginLoadRecord> PluginLoader::LoadAll(
    const PluginSearchConfig& config) {
  std::vector<PluginLoadRecord> records;
  absl::StatusOr<HostOffer> offer = MakeOffer(config.max_abi_version);
  std::set<std::string> loaded_names;
  std::set<std::string> loaded_paths;
  const std::vector<std::vector<std::string>> locations =
      CandidateLocations(config);
  for (size_t location = 0; location < locations.size(); ++location) {
    const size_t first = records.size();
    for (const std::string& path : locations[location]) {
      std::error_code ec;
      const std::string canonical = fs::weakly_canonical(path, ec).string();
      if (!loaded_paths.insert(ec ? path : canonical).second) continue;
      PluginLoadRecord rec;
      rec.location = location;
      if (!offer.ok()) {
        rec.path = path;
        rec.refusal = std::string(offer.status().message());
        records.push_back(std::move(rec));
        continue;
      }
      absl::StatusOr<std::shared_ptr<LoadedPlugin>> plugin =
          Load(path, *offer, &rec, loaded_names, config.allow_insecure_plugins);
      if (!plugin.ok()) {
        rec.refusal = std::string(plugin.status().message());
      } else {
        loaded_names.insert((*plugin)->name());
        rec.plugin = *std::move(plugin);
      }
      records.push_back(std::move(rec));
    }
    PriorityOrder(records.begin() + static_cast<ptrdiff_t>(first),
                  records.end());
  }
  return records;
}

}  // namespace kiln
