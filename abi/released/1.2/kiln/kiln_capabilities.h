/* Optional capabilities found by id: those a plugin offers in its
 * descriptor's extension chain (KilnPluginDescriptor.extensions; extension
 * API 1.1), and host extensions a plugin asks for through
 * KilnHostApi.get_host_extension (extension API 1.2). Pure C.
 *
 * Every capability struct starts with KilnExtensionBase; a reader checks
 * base.struct_size (KILN_STRUCT_HAS_FIELD) before touching any field added
 * in a later revision of the same id. */
#ifndef KILN_KILN_CAPABILITIES_H_
#define KILN_KILN_CAPABILITIES_H_

#include "kiln/kiln_plugin.h"

KILN_EXTERN_C_BEGIN

/* ---- kiln.delegate_decline_reasons/1 ------------------------------------
 * Why a delegate instance did not claim a node. Any delegate may offer it;
 * the host uses it to explain, per node, why a node stays on the kernels
 * (e.g. in `kiln inspect --delegate`). */
#define KILN_DELEGATE_DECLINE_REASONS_EXTENSION_ID \
  "kiln.delegate_decline_reasons/1"

typedef struct KilnDelegateDeclineReasonsExtension {
  KilnExtensionBase base; /* base.id == KILN_DELEGATE_DECLINE_REASONS_... */
  /* The reason `delegate` declined node `node_index` (an index into the
   * subgraph's nodes) in its most recent KilnDelegateInterface.partition
   * call, e.g. "CONV_2D version 7 is newer than the versions 1..1 this
   * delegate implements". NULL when the node was claimed, or was not in the
   * execution plan of that call. The string is owned by the delegate and
   * valid until the next partition or destroy call on the instance. Called
   * right after partition, on the thread that drives the delegate. */
  const char* (*decline_reason)(void* delegate, int32_t node_index);
} KilnDelegateDeclineReasonsExtension;
#define KILN_DELEGATE_DECLINE_REASONS_EXTENSION_STRUCT_SIZE \
  KILN_STRUCT_SIZE(KilnDelegateDeclineReasonsExtension, decline_reason)

/* ---- Host extensions ----------------------------------------------------
 * Services a host offers through KilnHostApi.get_host_extension(id), each
 * from extension API 1.2 on (older hosts, and instances capped below 1.2,
 * return NULL for every id). Each function takes the
 * KilnOpaqueContext of the callback it is called from, so the host knows
 * which interpreter and node it serves; call them only from inside a
 * callback. The structs are static: keep the pointer as long as the
 * plugin is loaded. */

/* kiln.profiler/1: events in the interpreter's profile (Chrome trace
 * events; `kiln bench --profile/--trace`). The host itself records init,
 * prepare and invoke of every node and partition; a plugin adds finer events
 * (e.g. an OpenCL kernel enqueue) nested inside them. */
#define KILN_PROFILER_HOST_EXTENSION_ID "kiln.profiler/1"

typedef struct KilnProfilerHostExtension {
  KilnExtensionBase base; /* base.id == KILN_PROFILER_HOST_EXTENSION_ID */
  /* Starts an event named `name` (copied) in `category` (copied; NULL:
   * "plugin"). Returns a token for end_event, or 0 when profiling is off
   * (then end_event(0) does nothing, so the pair costs one call each). */
  uint64_t (*begin_event)(KilnOpaqueContext* context, const char* name,
                          const char* category);
  /* Ends the event begun with `token` (events nest: end the newest first). */
  void (*end_event)(KilnOpaqueContext* context, uint64_t token);
} KilnProfilerHostExtension;
#define KILN_PROFILER_HOST_EXTENSION_STRUCT_SIZE \
  KILN_STRUCT_SIZE(KilnProfilerHostExtension, end_event)

KILN_STATIC_ASSERT(KILN_PROFILER_HOST_EXTENSION_STRUCT_SIZE ==
                       sizeof(KilnProfilerHostExtension),
                   profiler_host_extension_size_names_last_field);

KILN_EXTERN_C_END

#endif /* KILN_KILN_CAPABILITIES_H_ */
