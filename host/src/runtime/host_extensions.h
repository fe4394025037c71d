// Host extensions: the services a plugin finds by id through
// KilnHostApi.get_host_extension (kiln_capabilities.h, "Host extensions").
//
// kHostExtensions in host_extensions.cc is the one place a host extension is
// registered: one row {id, the extension's static struct, the extension API
// version that first serves it}. The struct and its functions live in the
// file of the service they expose (each function takes the calling
// callback's KilnOpaqueContext, since get_host_extension has none).
// Internal to libkiln.
#ifndef KILN_HOST_RUNTIME_HOST_EXTENSIONS_H_
#define KILN_HOST_RUNTIME_HOST_EXTENSIONS_H_

#include <cstdint>
#include <vector>

#include "kiln/kiln_plugin.h"

namespace kiln {

struct HostExtensionEntry {
  const char* id;  // "kiln.<name>/<revision>", == extension->id
  // Static storage; starts with KilnExtensionBase.
  const KilnExtensionBase* extension;
  // The first extension API version whose hosts serve it (KILN_MAKE_VERSION);
  // a table of an older version (a capped interpreter) does not offer it.
  uint32_t since_abi_version;
};

// Every registered host extension, in registration order. Static storage.
const std::vector<HostExtensionEntry>& HostExtensions();

// The extension of `entries` registered under `id` and served at
// `abi_version`; null for an unknown or null id or a newer extension.
const void* FindHostExtension(const std::vector<HostExtensionEntry>& entries,
                              const char* id, uint32_t abi_version);

}  // namespace kiln

#endif  // KILN_HOST_RUNTIME_HOST_EXTENSIONS_H_
