/* A tiny shared library whose only purpose is to make every extension API
 * boundary type reachable from an exported function, so that libabigail's
 * abidw/abidiff can record and compare the extension API layout (the plugin
 * ABI has no library of its own: it is headers only). Built against the
 * current headers for the check and against abi/released/<version>/ for the
 * baseline (regenerate_baseline.sh). A new boundary struct that is not
 * reachable from a struct below (e.g. a capability fetched by id) needs an
 * anchor here. */
#include "kiln/kiln_c_api.h"
#include "kiln/kiln_extension.h"
#include "kiln/kiln_plugin.h"

#define KILN_ABI_ANCHOR(type)                                       \
  __attribute__((visibility("default"))) void KilnAbiAnchor_##type( \
      const type* value);                                           \
  void KilnAbiAnchor_##type(const type* value) { (void)value; }

KILN_ABI_ANCHOR(KilnKernel)
KILN_ABI_ANCHOR(KilnDelegateInterface)
KILN_ABI_ANCHOR(KilnHostApi)
KILN_ABI_ANCHOR(KilnExtensionBase)
KILN_ABI_ANCHOR(KilnHostInfo)
KILN_ABI_ANCHOR(KilnPluginDescriptor)
KILN_ABI_ANCHOR(KilnPluginEntryFn)
KILN_ABI_ANCHOR(KilnVersionInfo)
#ifdef KILN_QUANTIZATION_PARAMS_STRUCT_SIZE /* extension API 1.1 */
KILN_ABI_ANCHOR(KilnQuantizationParams)
#endif
#if __has_include("kiln/kiln_capabilities.h") /* extension API 1.1 */
#include "kiln/kiln_capabilities.h"
KILN_ABI_ANCHOR(KilnDelegateDeclineReasonsExtension)
#endif
#ifdef KILN_PROFILER_HOST_EXTENSION_ID /* extension API 1.2 */
KILN_ABI_ANCHOR(KilnProfilerHostExtension)
KILN_ABI_ANCHOR(KilnDelegateOpSupport)
KILN_ABI_ANCHOR(KilnPluginInstanceInfo)
#endif
#ifdef KILN_PARALLEL_FOR_HOST_EXTENSION_ID /* extension API 1.3 */
KILN_ABI_ANCHOR(KilnParallelForHostExtension)
#endif
