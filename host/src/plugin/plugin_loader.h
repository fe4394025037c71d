// Loads Kiln plugins (shared libraries exporting KilnPluginEntry), validates
// their descriptors and negotiates the extension API version.
//
// Search order and priority (documented for users in docs/host-guide.md and
// docs/security.md). Plugins load from search locations, highest priority
// first:
//   1. explicit plugin paths, in the order given (each its own location);
//   2. each configured directory, in the order given;
//   3. unless disabled: each directory in $KILN_PLUGIN_PATH (':'-separated,
//      read with secure_getenv), then the installed default plugin
//      directory (DefaultPluginDirectory).
// Inside one directory Kiln's own plugins (libkiln_cpu.so,
// libkiln_opencl.so, libkiln_xnnpack.so) come first, then the other loaded
// plugins ordered by descriptor name and version, never by file name. LoadAll returns the
// records in this priority order and a node runs on the first plugin in it
// that implements its op version. A plugin whose name is already loaded is
// refused as a duplicate. A refused plugin never stops the others.
//
// Before dlopen every file is checked (plugin_file_check.h): a complete ELF
// shared object for this machine and, unless insecure plugins are allowed,
// not replaceable by other users (owner, world-writable file or directory).
//
// Load instances (kiln_plugin.h): every Load is one load instance. The entry
// point runs with the table of the offered version; once the descriptor is
// accepted, a host offering extension API 1.2 or newer calls its initialize
// (negotiated version, the table of that version) and, for every descriptor
// the entry point returned, its shutdown: on refusal before the library is
// closed, else when the LoadedPlugin goes away. What the plugin logs while
// it loads (entry, initialize, a refused instance's shutdown) is kept in the
// PluginLoadRecord and quoted in the refusal.
#ifndef KILN_HOST_PLUGIN_PLUGIN_LOADER_H_
#define KILN_HOST_PLUGIN_PLUGIN_LOADER_H_

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kiln/kiln_plugin.h"
#include "plugin/delegate_declaration.h"
#include "plugin/negotiation.h"

namespace kiln {

// Closes a load instance: calls the descriptor's shutdown (when the instance
// is owed one), then dlcloses the library. Movable, not copyable.
class LoadInstanceCloser {
 public:
  LoadInstanceCloser() = default;
  explicit LoadInstanceCloser(void* handle) : handle_(handle) {}
  ~LoadInstanceCloser() { Close(); }
  LoadInstanceCloser(LoadInstanceCloser&& other) noexcept;
  LoadInstanceCloser& operator=(LoadInstanceCloser&& other) noexcept;
  LoadInstanceCloser(const LoadInstanceCloser&) = delete;
  LoadInstanceCloser& operator=(const LoadInstanceCloser&) = delete;

  // Shutdown to call with `descriptor` before closing (null: none).
  void SetShutdown(const KilnPluginDescriptor* descriptor,
                   void (*shutdown)(const KilnPluginDescriptor*)) {
    descriptor_ = descriptor;
    shutdown_ = shutdown;
  }
  void Close();

 private:
  void* handle_ = nullptr;
  const KilnPluginDescriptor* descriptor_ = nullptr;
  void (*shutdown_)(const KilnPluginDescriptor*) = nullptr;
};

// A plugin that was accepted: one load instance. Owns the library handle and
// the instance: shutdown and dlclose happen when the last reference goes
// away, so keep a shared_ptr for as long as any kernel, node state or
// delegate of the plugin is alive.
class LoadedPlugin {
 public:
  ~LoadedPlugin();
  LoadedPlugin(const LoadedPlugin&) = delete;
  LoadedPlugin& operator=(const LoadedPlugin&) = delete;

  const std::string& path() const { return path_; }
  const std::string& name() const { return name_; }
  const std::string& version() const { return version_; }
  uint32_t abi_version() const { return abi_version_; }
  uint32_t negotiated_version() const { return negotiated_version_; }
  const std::vector<const KilnKernel*>& kernels() const { return kernels_; }
  const KilnDelegateInterface* delegate() const { return delegate_; }
  // What the delegate declares (ops it may claim, settings message); empty
  // ("undeclared", no settings) without a delegate.
  const DelegateDeclaration& delegate_declaration() const {
    return delegate_declaration_;
  }
  const KilnPluginDescriptor* descriptor() const { return descriptor_; }
  // "name 1.2.0 (/path/libname.so)"
  std::string Describe() const;

 private:
  friend class PluginLoader;
  LoadedPlugin() = default;
  std::string path_, name_, version_;
  LoadInstanceCloser closer_;
  uint32_t abi_version_ = 0, negotiated_version_ = 0;
  const KilnPluginDescriptor* descriptor_ = nullptr;
  std::vector<const KilnKernel*> kernels_;
  const KilnDelegateInterface* delegate_ = nullptr;
  DelegateDeclaration delegate_declaration_;
};

// The outcome for one candidate path.
struct PluginLoadRecord {
  std::string path;
  std::shared_ptr<LoadedPlugin> plugin;  // null when refused
  // Filled as far as the descriptor could be read.
  std::string name, version;
  uint32_t abi_version = 0;
  std::string refusal;  // full message when refused, "" when loaded
  // What the plugin logged while it loaded (entry point, initialize, and
  // shutdown when refused), in order, each "<level>: <message>".
  std::vector<std::string> messages;
  // Index of the search location it came from (LoadAll; 0 = highest
  // priority).
  size_t location = 0;
};

struct PluginSearchConfig {
  std::vector<std::string> paths;
  std::vector<std::string> directories;
  bool use_default_locations = true;
  // Cap on the extension API version served; 0 = newest.
  uint32_t max_abi_version = 0;
  // Load plugins that other users could have replaced (plugin_file_check.h).
  bool allow_insecure_plugins = false;
};

// A descriptor that passed PluginLoader::ValidateDescriptor.
struct ValidatedDescriptor {
  uint32_t negotiated_version = 0;
  std::vector<const KilnKernel*> kernels;
  DelegateDeclaration delegate;
};

class PluginLoader {
 public:
  // The checks of a descriptor an entry point returned, before initialize:
  // version negotiation, then name, version string, kernels, delegate
  // declaration, extension chain and the duplicate-name check against
  // `taken_names`. `rec` receives the fields read before a refusal. (Part
  // of Load; public for the descriptor fuzz target.)
  static absl::StatusOr<ValidatedDescriptor> ValidateDescriptor(
      const std::string& path, const KilnPluginDescriptor* d,
      const HostOffer& offer, PluginLoadRecord& rec,
      const std::set<std::string>& taken_names);

  // Offer with max version capped to `max_abi_version` (0 = newest).
  // Fails if the cap is not a version this host can serve.
  static absl::StatusOr<HostOffer> MakeOffer(uint32_t max_abi_version);

  // Loads one plugin file as a new load instance. On failure the status
  // message says what failed, names the path (and symbol or field) and what
  // to do, and quotes what the plugin logged; the instance is shut down and
  // the library handle closed. `record`, when given, receives what was read
  // before refusal. A plugin whose name is in `taken_names` is refused as a
  // duplicate before its initialize runs. `allow_insecure`: skip the owner
  // and permission checks (the ELF checks always run).
  static absl::StatusOr<std::shared_ptr<LoadedPlugin>> Load(
      const std::string& path, const HostOffer& offer,
      PluginLoadRecord* record = nullptr,
      const std::set<std::string>& taken_names = {},
      bool allow_insecure = false);

  // Loads every candidate of `config`, in search order.
  static std::vector<PluginLoadRecord> LoadAll(
      const PluginSearchConfig& config);

  // Candidate file paths of `config`, in load order.
  static std::vector<std::string> Candidates(const PluginSearchConfig& config);
  // The same, one list per search location, highest priority first.
  static std::vector<std::vector<std::string>> CandidateLocations(
      const PluginSearchConfig& config);
};

// Installed default plugin directory, found relative to where the host code
// was loaded from (plugin/install_paths.h says how; never a configure-time
// absolute prefix).
std::string DefaultPluginDirectory();

}  // namespace kiln

#endif  // KILN_HOST_PLUGIN_PLUGIN_LOADER_H_
