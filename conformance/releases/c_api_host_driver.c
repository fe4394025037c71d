/* Loads one plugin through a Kiln host's public C API and prints the
 * negotiation, for hosts whose CLI has no `kiln conformance` (the extension
 * API 1.0 host of release 0.1.0-ext1.0). Written against the C API as that
 * release published it (kiln/kiln_c_api.h at 09f8af6) and compiled against
 * the release's own headers and linked with its libkiln.so by
 * release_host_test.py, so the loader and negotiation are the old host's.
 * (That libkiln declares model loading and the interpreter but does not
 * export them yet; release_kernel_driver.cc runs the kernels there.)
 *
 *   c_api_host_driver PLUGIN.so
 *
 * Prints `host runtime R extension_api X.Y` and one `plugin NAME loaded L
 * built_for X.Y negotiated X.Y refusal "..."` line. Exit 0 when the probe
 * ran (whatever the negotiation), 1 with `error: MESSAGE` when it failed,
 * 2 on a usage error. */
#include <stdio.h>

#include "kiln/kiln_c_api.h"

static void PrintVersion(const char* what, uint32_t v) {
  printf(" %s %u.%u", what, (unsigned)KILN_VERSION_MAJOR(v),
         (unsigned)KILN_VERSION_MINOR(v));
}

int main(int argc, char** argv) {
  KilnInterpreterOptions* options;
  KilnPluginProbe* probe = NULL;
  KilnError* error;
  int32_t i;
  if (argc != 2) {
    fprintf(stderr, "usage: %s PLUGIN.so\n", argv[0]);
    return 2;
  }
  printf("host runtime %s", KilnRuntimeVersionString());
  PrintVersion("extension_api", KilnExtensionApiVersion());
  printf("\n");
  options = KilnInterpreterOptionsCreate();
  KilnInterpreterOptionsSetUseDefaultPlugins(options, 0);
  KilnInterpreterOptionsAddPluginPath(options, argv[1]);
  error = KilnPluginProbeCreate(options, &probe);
  KilnInterpreterOptionsDestroy(options);
  if (error != NULL) {
    printf("error: %s\n", KilnErrorMessage(error));
    KilnErrorDestroy(error);
    return 1;
  }
  for (i = 0; i < KilnPluginProbeCount(probe); ++i) {
    printf("plugin %s loaded %d", KilnPluginProbeName(probe, i),
           (int)KilnPluginProbeLoaded(probe, i));
    PrintVersion("built_for", KilnPluginProbeAbiVersion(probe, i));
    PrintVersion("negotiated", KilnPluginProbeNegotiatedVersion(probe, i));
    printf(" refusal \"%s\"\n", KilnPluginProbeRefusalReason(probe, i));
  }
  KilnPluginProbeDestroy(probe);
  return 0;
}
