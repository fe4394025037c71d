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
 *   4. On refusal the host dlcloses the library; no other callback runs
 *      (except shutdown, extension API 1.2).
 *   5. (1.2) The host calls descriptor->initialize with the negotiated
 *      version and this instance's host table, then uses the plugin, then
 *      calls descriptor->shutdown once the instance's last callback returned.
 *
 * Load instances (normative since extension API 1.2): the host runs steps
 * 2-5 once per load instance — every interpreter that uses the plugin, each
 * with the host level (extension API version) it serves, capped or not —
 * even when dlopen returns a library that is already loaded. Each entry
 * call carries that instance's own host table. A plugin keeps per-instance
 * state (its host table, the negotiated version) in the descriptor it
 * returns for that call, reaching it through the kernels' and the
 * delegate's user_data, never in a process-global slot that the next load
 * would overwrite.
 *
 * Lifecycle (1.2): initialize and shutdown are called by a host that offers
 * the instance extension API 1.2 or newer (KilnHostInfo.abi_version >= 1.2,
 * as seen at entry), for a descriptor of the host's major version whose
 * struct_size covers them. A host offering less — an older host, or a newer
 * one capped to an older level — behaves exactly as a host of that level:
 * it never calls them, and keeps every descriptor until the library is
 * unloaded. A plugin therefore knows at entry whether its descriptor will
 * be shut down, and may share one descriptor among the entry calls that
 * will not be (e.g. per host table), so that nothing leaks per interpreter.
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
 * except `api`, which stays valid until this load instance's shutdown (hosts
 * older than 1.2: until the plugin is unloaded). A reader accepts any
 * struct_size at least KILN_HOST_INFO_STRUCT_SIZE_1_0 and reads only the
 * fields it covers. */
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
#define KILN_HOST_INFO_STRUCT_SIZE_1_0 KILN_STRUCT_SIZE(KilnHostInfo, api)
#define KILN_HOST_INFO_STRUCT_SIZE KILN_HOST_INFO_STRUCT_SIZE_1_0

/* What initialize receives (extension API 1.2): the outcome of negotiation
 * for one load instance. Valid only during the initialize call, except
 * `api`, valid until this instance's shutdown. */
typedef struct KilnPluginInstanceInfo {
  uint32_t struct_size; /* KILN_PLUGIN_INSTANCE_INFO_STRUCT_SIZE */
  /* The negotiated extension API version: min(host, plugin). Functions of
   * later versions are absent from `api`. */
  uint32_t abi_version;
  /* Kiln runtime release of the host (KILN_MAKE_VERSION). */
  uint32_t runtime_version;
  /* This instance's host services; api->struct_size matches abi_version. */
  const KilnHostApi* api;
} KilnPluginInstanceInfo;
#define KILN_PLUGIN_INSTANCE_INFO_STRUCT_SIZE \
  KILN_STRUCT_SIZE(KilnPluginInstanceInfo, api)

/* What a plugin declares. Returned by the entry point; must stay valid and
 * unchanged until this instance's shutdown returns (hosts older than 1.2,
 * which never call shutdown: until the plugin is unloaded). All strings are
 * NUL-terminated UTF-8 and live as long as the descriptor. */
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

  /* ---- Extension API 1.2 ---- */

  /* Optional. Called once per load instance (see Lifecycle above) after the
   * host accepted this descriptor and before any other callback of the
   * instance, on the loading thread. A non-OK status refuses the plugin for
   * this instance; the messages it logged through info->api->log are shown
   * with the refusal. */
  KilnStatus (*initialize)(const struct KilnPluginDescriptor* self,
                           const KilnPluginInstanceInfo* info);
  /* Optional. Called exactly once for every descriptor an entry call of a
   * host offering 1.2 or newer returned (see Lifecycle above), whether the
   * host then accepted it or refused it, after the instance's last callback
   * (kernels freed, delegate instances destroyed) and before the host's
   * dlclose, on the thread that releases the instance; it may free the
   * descriptor. Messages it logs while the host refuses the instance are
   * shown with the refusal. */
  void (*shutdown)(const struct KilnPluginDescriptor* self);
} KilnPluginDescriptor;
#define KILN_PLUGIN_DESCRIPTOR_STRUCT_SIZE_1_0 \
  KILN_STRUCT_SIZE(KilnPluginDescriptor, extensions)
#define KILN_PLUGIN_DESCRIPTOR_STRUCT_SIZE \
  KILN_STRUCT_SIZE(KilnPluginDescriptor, shutdown)

/* The single exported symbol. `host` is never NULL. Returns the descriptor,
 * or NULL when the plugin refuses this host (it should log why through
 * host->api->log first; the host shows those messages). Called once per
 * load instance (see above), on the loading thread; different threads may
 * call it concurrently for different instances. */
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
KILN_STATIC_ASSERT(KILN_DELEGATE_OP_SUPPORT_STRUCT_SIZE ==
                       sizeof(KilnDelegateOpSupport),
                   delegate_op_support_size_names_last_field);
KILN_STATIC_ASSERT(KILN_PLUGIN_INSTANCE_INFO_STRUCT_SIZE ==
                       sizeof(KilnPluginInstanceInfo),
                   plugin_instance_info_size_names_last_field);
KILN_STATIC_ASSERT(KILN_EXTENSION_BASE_STRUCT_SIZE == sizeof(KilnExtensionBase),
                   extension_base_size_names_last_field);
KILN_STATIC_ASSERT(KILN_HOST_INFO_STRUCT_SIZE == sizeof(KilnHostInfo),
                   host_info_size_names_last_field);
KILN_STATIC_ASSERT(KILN_PLUGIN_DESCRIPTOR_STRUCT_SIZE ==
                       sizeof(KilnPluginDescriptor),
                   descriptor_size_names_last_field);

KILN_EXTERN_C_END

#endif /* KILN_KILN_PLUGIN_H_ */
