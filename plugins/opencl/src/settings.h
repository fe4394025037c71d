// Options of the OpenCL delegate, from a kiln.DelegateSettings
// (abi/proto/kiln/delegate_settings.proto) that the SDK's delegate helper
// has decoded (kiln/sdk/delegate_settings.h).
//
// The plugin decodes the protobuf wire format itself, the common fields
// through the SDK and the OpenClSettings sub-message here: Debian's static
// libprotobuf(-lite).a is built as PIE, not PIC (local-exec TLS relocations
// in arena.o, PC32 relocations against stderr in common.o), so it cannot be
// linked into a shared module, and linking the shared libprotobuf would add
// a dependency that `kiln plugin validate` refuses (and version clashes with
// the application's own protobuf). The decoder handles exactly the fields
// below and skips unknown fields, as protobuf does; tests check it against
// bytes serialized by the real protobuf library.
//
// Option keys (DelegateSettings.options; a key overrides the typed field):
//   device=gpu|cpu|any        OpenClSettings.device_type (default any:
//                             prefer a GPU, else any device)
//   platform=SUBSTRING        OpenClSettings.platform_name_filter
//   device_name=SUBSTRING     OpenClSettings.device_name_filter
//   fp16=true|false           OpenClSettings.allow_fp16_storage
//   cache_dir=PATH|none       OpenClSettings.cache_dir
//   min_partition_size=N      DelegateSettings.min_partition_size
// Any other key is refused with a message naming it.
#ifndef KILN_PLUGINS_OPENCL_SETTINGS_H_
#define KILN_PLUGINS_OPENCL_SETTINGS_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "kiln/sdk/delegate_settings.h"

namespace kiln::opencl {

enum class DeviceKind { kAny, kGpu, kCpu };

struct DelegateOptions {
  DeviceKind device = DeviceKind::kAny;
  std::string platform_filter;     // substring of CL_PLATFORM_NAME, "" = any
  std::string device_name_filter;  // substring of CL_DEVICE_NAME, "" = any
  bool allow_fp16_storage = false;
  std::string cache_dir;  // "" = default directory, "none" = no disk cache
  int32_t min_partition_size = 1;
};

const char* DeviceKindName(DeviceKind kind);

// The options `settings` select (default-constructed settings: all
// defaults). Returns true and fills *options, or returns false with *error
// naming the bad field, key or value; *options is then unspecified.
bool ApplyDelegateSettings(const sdk::DelegateSettings& settings,
                           DelegateOptions* options, std::string* error);

// The directory of the compiled-program cache for a configured value: the
// value itself, or for "" $XDG_CACHE_HOME/kiln/opencl, else
// $HOME/.cache/kiln/opencl. Returns "" when the disk cache is off ("none",
// or no XDG_CACHE_HOME and no HOME).
std::string ResolveCacheDir(const std::string& configured);

}  // namespace kiln::opencl

#endif  // KILN_PLUGINS_OPENCL_SETTINGS_H_
