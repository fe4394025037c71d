/* Smallest Kiln application: prints the versions libkiln reports. Built by
 * sdk/tests/out_of_tree_test.sh with pkg-config and with find_package(Kiln). */
#include <stdio.h>

#include "kiln/kiln_c_api.h"

int main(void) {
  KilnVersionInfo info;
  KilnError* error;
  info.struct_size = KILN_VERSION_INFO_STRUCT_SIZE;
  error = KilnGetVersionInfo(&info);
  if (error != NULL) {
    fprintf(stderr, "KilnGetVersionInfo failed: %s\n", KilnErrorMessage(error));
    KilnErrorDestroy(error);
    return 1;
  }
  printf("kiln runtime %s, C API %s, extension API %s\n",
         KilnRuntimeVersionString(), KilnCApiVersionString(),
         KilnExtensionApiVersionString());
  /* The header and the library must agree on the C API major version. */
  return KILN_VERSION_MAJOR(info.c_api_version) == KILN_C_API_VERSION_MAJOR ? 0
                                                                            : 1;
}
