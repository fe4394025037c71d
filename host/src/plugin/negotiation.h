// Extension API version negotiation between the host and one plugin.
// Pure functions over plain values; no I/O.
#ifndef KILN_HOST_PLUGIN_NEGOTIATION_H_
#define KILN_HOST_PLUGIN_NEGOTIATION_H_

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

// What this host offers (possibly capped below its newest version).
struct HostOffer {
  uint32_t runtime_version = 0;      // Kiln release
  uint32_t max_abi_version = 0;      // newest extension API served
  uint32_t min_plugin_abi_version = 0;
};

// The version fields of a plugin's descriptor.
struct PluginVersions {
  uint32_t abi_version = 0;          // built against
  uint32_t min_host_abi_version = 0;
  std::vector<uint32_t> bad_host_versions;  // Kiln releases
};

struct Negotiation {
  bool accepted = false;
  uint32_t version = 0;   // negotiated extension API version when accepted
  std::string reason;     // why refused, with what to do; empty if accepted
};

// TensorFlow's producer/consumer rule plus a same-major requirement:
// accept iff major(plugin) == major(host), host >= plugin.min_host,
// plugin >= host.min_plugin, and host release not in plugin's bad list.
// The negotiated version is min(host max, plugin abi_version).
Negotiation Negotiate(const HostOffer& host, const PluginVersions& plugin);

// "1.2.3"
std::string VersionString(uint32_t packed);

}  // namespace kiln

#endif  // KILN_HOST_PLUGIN_NEGOTIATION_H_
