#include "plugin/negotiation.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "kiln/kiln_version.h"

namespace kiln {

std::string VersionString(uint32_t v) {
  return absl::StrCat(KILN_VERSION_MAJOR(v), ".", KILN_VERSION_MINOR(v), ".",
                      KILN_VERSION_PATCH(v));
}

namespace {
std::string MajorMinor(uint32_t v) {
  return absl::StrCat(KILN_VERSION_MAJOR(v), ".", KILN_VERSION_MINOR(v));
}
}  // namespace

Negotiation Negotiate(const HostOffer& host, const PluginVersions& plugin) {
  Negotiation n;
  const std::string host_range =
      absl::StrCat(MajorMinor(host.min_plugin_abi_version), " to ",
                   MajorMinor(host.max_abi_version));
  const uint32_t plugin_major = KILN_VERSION_MAJOR(plugin.abi_version);
  const uint32_t host_major = KILN_VERSION_MAJOR(host.max_abi_version);
  if (plugin_major > host_major) {
    n.reason = absl::StrCat(
        "plugin was built for extension API ", MajorMinor(plugin.abi_version),
        ", a newer major version than this host serves (", host_range,
        "); use a build of the plugin for extension API ", host_major,
        ".x, or a Kiln release that supports extension API ", plugin_major,
        ".x");
    return n;
  }
  if (plugin_major < KILN_VERSION_MAJOR(host.min_plugin_abi_version)) {
    n.reason = absl::StrCat(
        "plugin was built for extension API ", MajorMinor(plugin.abi_version),
        ", an old major version this host no longer serves (", host_range,
        "); rebuild the plugin against the current Kiln SDK");
    return n;
  }
  if (plugin.abi_version < host.min_plugin_abi_version) {
    n.reason = absl::StrCat(
        "plugin was built for extension API ", MajorMinor(plugin.abi_version),
        ", older than the oldest this host accepts (", host_range,
        "); rebuild the plugin against the current Kiln SDK");
    return n;
  }
  if (plugin.min_host_abi_version > plugin.abi_version) {
    n.reason = absl::StrCat(
        "descriptor is inconsistent: min_host_abi_version ",
        MajorMinor(plugin.min_host_abi_version),
        " is newer than its own abi_version ", MajorMinor(plugin.abi_version),
        "; fix the plugin's descriptor");
    return n;
  }
  if (host.max_abi_version < plugin.min_host_abi_version) {
    n.reason = absl::StrCat(
        "plugin requires a host serving extension API ",
        MajorMinor(plugin.min_host_abi_version), " or newer; this host serves ",
        host_range, "; upgrade Kiln, or use a build of the plugin whose "
        "min_host_abi_version is at most ", MajorMinor(host.max_abi_version));
    return n;
  }
  if (std::find(plugin.bad_host_versions.begin(),
                plugin.bad_host_versions.end(),
                host.runtime_version) != plugin.bad_host_versions.end()) {
    n.reason = absl::StrCat("plugin lists this Kiln release (",
                            VersionString(host.runtime_version),
                            ") as known-bad in bad_host_versions; use another "
                            "Kiln release or a newer build of the plugin");
    return n;
  }
  n.accepted = true;
  n.version = std::min(host.max_abi_version, plugin.abi_version);
  return n;
}

}  // namespace kiln
