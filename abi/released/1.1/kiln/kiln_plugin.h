/* Kiln plugin entry point and descriptor.
 *
 * A plugin is a shared library that exports exactly one symbol,
 * KILN_PLUGIN_ENTRY_SYMBOL ("KilnPluginEntry"), of type KilnPluginEntryFn.
 * Everything else in the library is hidden (see sdk/cmake). The plugin does
 * not link against libkiln.
 *
 * Loading sequence (host side, docs/abi-policy.md has the normative rules):
 *   1. dlopen(path, RTLD_NOW | RTLD_LOCAL); dlsym(KILN_PLUGIN_ENTRY_SYMBOL).
 *   2. entry(&host_info) returns the plugin's descriptor (or NULL to refuse).
 *   3. The host validates the descriptor and negotiates: it accepts iff
 *        major(plugin.abi_version) == major(host abi_version),
 *        host abi_version      >= plugin.min_host_abi_version,
 *        plugin.abi_version    >= host min_plugin_abi_version,
 *        the host's runtime version is not in plugin.bad_host_versions.
 *   4. On refusal the host dlcloses the library; no other callback runs.
 */
#ifndef KILN_KILN_PLUGIN_H_
#define KILN_KILN_PLUGIN_H_

#include "kiln/kiln_common.h"
#include "kiln/kiln_extension.h"
#include "kiln/kiln_version.h"

KILN_EXTERN_C_BEGIN

#define KILN_PLUGIN_ENTRY_SYMBOL "KilnPluginEntry"

/* Head of every optional capability struct, in a singly linked chain.
 * Capabilities are found by id, "kiln.<name>/<revision>" or
 * "<vendor>.<name>/<revision>"; an unknown id is skipped. */
typedef struct KilnExtensionBase {
  uint32_t struct_size; /* size of the whole capability struct */
  const char* id;
  const struct KilnExtensionBase* next;
} KilnExtensionBase;
#define KILN_EXTENSION_BASE_STRUCT_SIZE \
  KILN_STRUCT_SIZE(KilnExtensionBase, next)

/* What the host tells a plugin at entry. Valid only during the entry call,
 * except `api`, which stays valid until the plugin is unloaded. */
typedef struct KilnHostInfo {
  uint32_t struct_size; /* KILN_HOST_INFO_STRUCT_SIZE */
  /* Kiln runtime release of the host (KILN_MAKE_VERSION). */
  uint32_t runtime_version;
  /* Newest extension API version this host serves to this plugin. */
  uint32_t abi_version;
  /* Oldest plugin extension API version this host accepts. */
  uint32_t min_plugin_abi_version;
  /* Host services; api->struct_size matches abi_version. */
  const KilnHostApi* api;
} KilnHostInfo;
#define KILN_HOST_INFO_STRUCT_SIZE KILN_STRUCT_SIZE(KilnHostInfo, api)

/* What a plugin declares. Returned by the entry point; must stay valid and
 * unchanged until the plugin is unloaded (normally a static object). All
 * strings are NUL-terminated UTF-8. */
typedef struct KilnPluginDescriptor {
  uint32_t struct_size; /* KILN_PLUGIN_DESCRIPTOR_STRUCT_SIZE */
  /* Extension API version the plugin was built against
   * (KILN_EXT_API_VERSION at build time). */
  uint32_t abi_version;
  /* Oldest host extension API version the plugin can run on. */
  uint32_t min_host_abi_version;
  /* Identifier, vendor_name style: lower case, digits and '_' only
   * (e.g. "acme_npu"). Required. */
  const char* name;
  /* The plugin's own version, semver "MAJOR.MINOR.PATCH". Required. */
  const char* version;
  /* Kiln runtime releases (KILN_MAKE_VERSION) known to mishandle this
   * plugin; the host refuses to load it if it is one of them. */
  const uint32_t* bad_host_versions;
  uint32_t num_bad_host_versions;
  /* Kernels this plugin implements. No two may cover the same op and
   * version. */
  const KilnKernel* const* kernels;
  uint32_t num_kernels;
  /* Optional delegate (NULL when the plugin has none). */
  const KilnDelegateInterface* delegate;
  /* Optional capability chain (NULL when none). */
  const KilnExtensionBase* extensions;
} KilnPluginDescriptor;
#define KILN_PLUGIN_DESCRIPTOR_STRUCT_SIZE \
  KILN_STRUCT_SIZE(KilnPluginDescriptor, extensions)

/* The single exported symbol. `host` is never NULL. Returns the descriptor,
 * or NULL when the plugin refuses this host (it should log why through
 * host->api->log first). Called once per load, on the loading thread. */
typedef const KilnPluginDescriptor* (*KilnPluginEntryFn)(
    const KilnHostInfo* host);

/* Size discipline: each *_STRUCT_SIZE names the struct's last field. If a
 * field is appended without moving last_field these fail to compile. */
KILN_STATIC_ASSERT(KILN_KERNEL_STRUCT_SIZE == sizeof(KilnKernel),
                   kernel_size_names_last_field);
KILN_STATIC_ASSERT(KILN_DELEGATE_INTERFACE_STRUCT_SIZE ==
                       sizeof(KilnDelegateInterface),
                   delegate_size_names_last_field);
KILN_STATIC_ASSERT(KILN_HOST_API_STRUCT_SIZE == sizeof(KilnHostApi),
                   host_api_size_names_last_field);
KILN_STATIC_ASSERT(KILN_QUANTIZATION_PARAMS_STRUCT_SIZE ==
                       sizeof(KilnQuantizationParams),
                   quantization_params_size_names_last_field);
KILN_STATIC_ASSERT(KILN_EXTENSION_BASE_STRUCT_SIZE ==
                       sizeof(KilnExtensionBase),
                   extension_base_size_names_last_field);
KILN_STATIC_ASSERT(KILN_HOST_INFO_STRUCT_SIZE == sizeof(KilnHostInfo),
                   host_info_size_names_last_field);
KILN_STATIC_ASSERT(KILN_PLUGIN_DESCRIPTOR_STRUCT_SIZE ==
                       sizeof(KilnPluginDescriptor),
                   descriptor_size_names_last_field);

KILN_EXTERN_C_END

#endif /* KILN_KILN_PLUGIN_H_ */
