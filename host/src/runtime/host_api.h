// The KilnHostApi table libkiln hands to plugins.
#ifndef KILN_HOST_RUNTIME_HOST_API_H_
#define KILN_HOST_RUNTIME_HOST_API_H_

#include <cstdint>

#include "kiln/kiln_extension.h"

namespace kiln {

// Extension API range this host serves.
inline constexpr uint32_t kMinPluginAbiVersion = KILN_MAKE_VERSION(1, 0, 0);
inline constexpr uint32_t kMaxPluginAbiVersion = KILN_EXT_API_VERSION;

// The table for extension API `abi_version` (capped: its struct_size covers
// only the fields of that minor version). Returns nullptr for a version this
// host does not serve. Static storage; valid for the process lifetime.
const KilnHostApi* HostApiForVersion(uint32_t abi_version);

// Size of KilnHostApi in extension API `abi_version` (0 if not served).
uint32_t HostApiSizeForVersion(uint32_t abi_version);

}  // namespace kiln

#endif  // KILN_HOST_RUNTIME_HOST_API_H_
