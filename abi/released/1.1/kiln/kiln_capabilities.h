/* Optional capabilities a plugin may offer in its descriptor's extension
 * chain (KilnPluginDescriptor.extensions), found by id. Added in extension
 * API 1.1. Pure C.
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

KILN_EXTERN_C_END

#endif /* KILN_KILN_CAPABILITIES_H_ */
