// Definitions of the opaque application C API types, shared by the C API
// implementation files. Internal to libkiln.
#ifndef KILN_HOST_C_API_C_API_INTERNAL_H_
#define KILN_HOST_C_API_C_API_INTERNAL_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "kiln/kiln_c_api.h"
#include "plugin/plugin_loader.h"

struct KilnError {
  KilnStatus code = KILN_STATUS_UNKNOWN;
  std::string message;
};

struct KilnDelegateRequest {
  std::string name;
  std::string settings;       // serialized bytes
  std::string text_settings;  // text format, used when non-empty
  bool is_text = false;
};

struct KilnInterpreterOptions {
  kiln::PluginSearchConfig plugins;
  std::vector<KilnDelegateRequest> delegates;
};

struct KilnPluginProbe {
  std::vector<kiln::PluginLoadRecord> records;
};

namespace kiln {

// Converts a status to a caller-owned KilnError (NULL for OK).
KilnError* ToKilnError(const absl::Status& status);
KilnError* MakeKilnError(KilnStatus code, std::string message);

}  // namespace kiln

#endif  // KILN_HOST_C_API_C_API_INTERNAL_H_
