// Application C API: errors, versions, options and plugin probing.
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "c_api/c_api_internal.h"
#include "runtime/host_api.h"

namespace kiln {

KilnError* MakeKilnError(KilnStatus code, std::string message) {
  auto* e = new KilnError();
  e->code = code;
  e->message = std::move(message);
  return e;
}

KilnError* ToKilnError(const absl::Status& status) {
  if (status.ok()) return nullptr;
  return MakeKilnError(static_cast<KilnStatus>(status.code()),
                       std::string(status.message()));
}

KilnError* CheckStruct(const void* info, uint32_t struct_size,
                       uint32_t min_size, const char* function,
                       const char* size_macro) {
  if (info == nullptr) {
    return MakeKilnError(KILN_STATUS_INVALID_ARGUMENT,
                         std::string(function) + ": info is NULL");
  }
  if (struct_size < min_size) {
    return MakeKilnError(KILN_STATUS_INVALID_ARGUMENT,
                         std::string(function) + ": info->struct_size is " +
                             std::to_string(struct_size) +
                             ", expected at least " + std::to_string(min_size) +
                             "; set it to " + size_macro);
  }
  return nullptr;
}

}  // namespace kiln

namespace {

const kiln::PluginLoadRecord* Record(const KilnPluginProbe* probe,
                                     int32_t index) {
  if (probe == nullptr || index < 0 ||
      static_cast<size_t>(index) >= probe->records.size()) {
    return nullptr;
  }
  return &probe->records[static_cast<size_t>(index)];
}

}  // namespace

extern "C" {

KilnStatus KilnErrorCode(const KilnError* error) {
  return error == nullptr ? KILN_STATUS_OK : error->code;
}
const char* KilnErrorMessage(const KilnError* error) {
  return error == nullptr ? "" : error->message.c_str();
}
void KilnErrorDestroy(KilnError* error) { delete error; }

uint32_t KilnRuntimeVersion(void) { return KILN_RUNTIME_VERSION; }
const char* KilnRuntimeVersionString(void) {
  return KILN_RUNTIME_VERSION_STRING;
}
uint32_t KilnCApiVersion(void) { return KILN_C_API_VERSION; }
const char* KilnCApiVersionString(void) { return KILN_C_API_VERSION_STRING; }
uint32_t KilnExtensionApiVersion(void) { return KILN_EXT_API_VERSION; }
const char* KilnExtensionApiVersionString(void) {
  return KILN_EXT_API_VERSION_STRING;
}
uint32_t KilnModelSchemaVersion(void) { return KILN_MODEL_SCHEMA_VERSION; }

KilnError* KilnGetVersionInfo(KilnVersionInfo* info) {
  constexpr uint32_t kSize_1_0 =
      KILN_STRUCT_SIZE(KilnVersionInfo, model_schema_version);
  if (info == nullptr) {
    return kiln::MakeKilnError(KILN_STATUS_INVALID_ARGUMENT,
                               "KilnGetVersionInfo: info is NULL");
  }
  if (info->struct_size < kSize_1_0) {
    return kiln::MakeKilnError(KILN_STATUS_INVALID_ARGUMENT,
                               "KilnGetVersionInfo: info->struct_size is " +
                                   std::to_string(info->struct_size) +
                                   ", expected at least " +
                                   std::to_string(kSize_1_0) +
                                   "; set it to KILN_VERSION_INFO_STRUCT_SIZE");
  }
  KilnVersionInfo full;
  std::memset(&full, 0, sizeof(full));
  full.runtime_version = KILN_RUNTIME_VERSION;
  full.c_api_version = KILN_C_API_VERSION;
  full.ext_api_version = kiln::kMaxPluginAbiVersion;
  full.min_ext_api_version = kiln::kMinPluginAbiVersion;
  full.model_schema_version = KILN_MODEL_SCHEMA_VERSION;
  const uint32_t caller_size = info->struct_size;
  const size_t n = caller_size < sizeof(full) ? caller_size : sizeof(full);
  std::memcpy(reinterpret_cast<char*>(info) + sizeof(uint32_t),
              reinterpret_cast<const char*>(&full) + sizeof(uint32_t),
              n - sizeof(uint32_t));
  return nullptr;
}

KilnInterpreterOptions* KilnInterpreterOptionsCreate(void) {
  return new KilnInterpreterOptions();
}
void KilnInterpreterOptionsDestroy(KilnInterpreterOptions* options) {
  delete options;
}
void KilnInterpreterOptionsAddPluginPath(KilnInterpreterOptions* options,
                                         const char* path) {
  if (options != nullptr && path != nullptr) {
    options->plugins.paths.emplace_back(path);
  }
}
void KilnInterpreterOptionsAddPluginDirectory(KilnInterpreterOptions* options,
                                              const char* directory) {
  if (options != nullptr && directory != nullptr) {
    options->plugins.directories.emplace_back(directory);
  }
}
void KilnInterpreterOptionsSetUseDefaultPlugins(KilnInterpreterOptions* options,
                                                int32_t enabled) {
  if (options != nullptr) options->plugins.use_default_locations = enabled != 0;
}
KilnError* KilnInterpreterOptionsSetMaxExtensionApiVersion(
    KilnInterpreterOptions* options, uint32_t abi_version) {
  if (options == nullptr) {
    return kiln::MakeKilnError(KILN_STATUS_INVALID_ARGUMENT, "options is NULL");
  }
  if (abi_version != 0) {
    absl::StatusOr<kiln::HostOffer> offer =
        kiln::PluginLoader::MakeOffer(abi_version);
    if (!offer.ok()) return kiln::ToKilnError(offer.status());
  }
  options->plugins.max_abi_version = abi_version;
  return nullptr;
}
void KilnInterpreterOptionsAddDelegate(KilnInterpreterOptions* options,
                                       const char* name, const void* settings,
                                       size_t settings_size) {
  if (options == nullptr || name == nullptr) return;
  KilnDelegateRequest r;
  r.name = name;
  if (settings != nullptr && settings_size > 0) {
    r.settings.assign(static_cast<const char*>(settings), settings_size);
  }
  options->delegates.push_back(std::move(r));
}
void KilnInterpreterOptionsAddDelegateTextSettings(
    KilnInterpreterOptions* options, const char* name,
    const char* text_settings) {
  if (options == nullptr || name == nullptr) return;
  KilnDelegateRequest r;
  r.name = name;
  r.is_text = true;
  if (text_settings != nullptr) r.text_settings = text_settings;
  options->delegates.push_back(std::move(r));
}

KilnError* KilnPluginProbeCreate(const KilnInterpreterOptions* options,
                                 KilnPluginProbe** probe) {
  if (probe == nullptr) {
    return kiln::MakeKilnError(KILN_STATUS_INVALID_ARGUMENT, "probe is NULL");
  }
  *probe = nullptr;
  kiln::PluginSearchConfig config;
  if (options != nullptr) config = options->plugins;
  auto p = std::make_unique<KilnPluginProbe>();
  p->records = kiln::PluginLoader::LoadAll(config);
  *probe = p.release();
  return nullptr;
}
void KilnPluginProbeDestroy(KilnPluginProbe* probe) { delete probe; }
int32_t KilnPluginProbeCount(const KilnPluginProbe* probe) {
  return probe == nullptr ? 0 : static_cast<int32_t>(probe->records.size());
}
const char* KilnPluginProbePath(const KilnPluginProbe* probe, int32_t index) {
  const kiln::PluginLoadRecord* r = Record(probe, index);
  return r == nullptr ? "" : r->path.c_str();
}
const char* KilnPluginProbeName(const KilnPluginProbe* probe, int32_t index) {
  const kiln::PluginLoadRecord* r = Record(probe, index);
  return r == nullptr ? "" : r->name.c_str();
}
const char* KilnPluginProbePluginVersion(const KilnPluginProbe* probe,
                                         int32_t index) {
  const kiln::PluginLoadRecord* r = Record(probe, index);
  return r == nullptr ? "" : r->version.c_str();
}
uint32_t KilnPluginProbeAbiVersion(const KilnPluginProbe* probe,
                                   int32_t index) {
  const kiln::PluginLoadRecord* r = Record(probe, index);
  return r == nullptr ? 0 : r->abi_version;
}
uint32_t KilnPluginProbeNegotiatedVersion(const KilnPluginProbe* probe,
                                          int32_t index) {
  const kiln::PluginLoadRecord* r = Record(probe, index);
  return r == nullptr || r->plugin == nullptr ? 0
                                              : r->plugin->negotiated_version();
}
int32_t KilnPluginProbeLoaded(const KilnPluginProbe* probe, int32_t index) {
  const kiln::PluginLoadRecord* r = Record(probe, index);
  return r != nullptr && r->plugin != nullptr ? 1 : 0;
}
const char* KilnPluginProbeRefusalReason(const KilnPluginProbe* probe,
                                         int32_t index) {
  const kiln::PluginLoadRecord* r = Record(probe, index);
  return r == nullptr ? "" : r->refusal.c_str();
}

}  // extern "C"
