/* Compiles every public Kiln header in one translation unit (built as C99,
 * C11 and, through header_compile_test.cc, C++17, all with -pedantic -Werror)
 * and checks at run time the invariants a C compiler cannot. */
#include <stdio.h>
#include <string.h>

#include "kiln/kiln_builtin_ops.h"
#include "kiln/kiln_c_api.h"
#include "kiln/kiln_capabilities.h"
#include "kiln/kiln_common.h"
#include "kiln/kiln_extension.h"
#include "kiln/kiln_plugin.h"
#include "kiln/kiln_version.h"

static int failures = 0;

static void Check(int ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "FAILED: %s\n", what);
    ++failures;
  }
}

int main(void) {
  KilnKernel kernel;
  KilnHostApi api;
  KilnPluginDescriptor descriptor;
  /* The first fields of every struct are frozen across all versions. */
  Check(offsetof(KilnKernel, struct_size) == 0, "KilnKernel.struct_size first");
  Check(offsetof(KilnHostApi, struct_size) == 0,
        "KilnHostApi.struct_size first");
  Check(offsetof(KilnHostApi, abi_version) == 4,
        "KilnHostApi.abi_version second");
  Check(offsetof(KilnPluginDescriptor, struct_size) == 0,
        "KilnPluginDescriptor.struct_size first");
  Check(offsetof(KilnPluginDescriptor, abi_version) == 4,
        "KilnPluginDescriptor.abi_version second");
  Check(offsetof(KilnPluginDescriptor, min_host_abi_version) == 8,
        "KilnPluginDescriptor.min_host_abi_version third");
  Check(KILN_VERSION_MAJOR(KILN_MAKE_VERSION(3, 7, 9)) == 3, "version major");
  Check(KILN_VERSION_MINOR(KILN_MAKE_VERSION(3, 7, 9)) == 7, "version minor");
  Check(KILN_VERSION_PATCH(KILN_MAKE_VERSION(3, 7, 9)) == 9, "version patch");
  Check(KILN_MAKE_VERSION(1, 10, 0) > KILN_MAKE_VERSION(1, 9, 4095),
        "packed versions order");
  Check(KILN_STRUCT_HAS_FIELD(KilnHostApi, KILN_HOST_API_STRUCT_SIZE,
                              get_host_extension),
        "KILN_STRUCT_HAS_FIELD on own size");
  Check(!KILN_STRUCT_HAS_FIELD(KilnHostApi, KILN_HOST_API_STRUCT_SIZE_1_0,
                               tensor_quantization),
        "1.1 field is outside the 1.0 host table");
  Check(KILN_HOST_API_STRUCT_SIZE_1_0 < KILN_HOST_API_STRUCT_SIZE_1_1,
        "1.1 host table grew");
  Check(!KILN_STRUCT_HAS_FIELD(KilnHostApi, KILN_HOST_API_STRUCT_SIZE_1_2,
                               node_num_intermediates),
        "1.3 field is outside the 1.2 host table");
  Check(KILN_STRUCT_HAS_FIELD(KilnHostApi, KILN_HOST_API_STRUCT_SIZE_1_3,
                              node_intermediate),
        "the 1.3 host table ends at node_intermediate");
  Check(KILN_QUANTIZATION_PARAMS_STRUCT_SIZE ==
            KILN_QUANTIZATION_PARAMS_STRUCT_SIZE_1_3,
        "KilnQuantizationParams current size is 1.3's");
  Check(KILN_QUANTIZATION_PARAMS_STRUCT_SIZE_1_1 ==
            offsetof(KilnQuantizationParams, block_size),
        "1.3 KilnQuantizationParams fields start after 1.1's");
  Check(!KILN_STRUCT_HAS_FIELD(KilnQuantizationParams,
                               KILN_QUANTIZATION_PARAMS_STRUCT_SIZE_1_1,
                               block_dimension),
        "1.3 field is outside the 1.1 quantization struct");
  Check(!KILN_STRUCT_HAS_FIELD(KilnHostApi, 8, report_error),
        "KILN_STRUCT_HAS_FIELD on a truncated size");
  Check(KILN_OP_STABLEHLO_COMPOSITE == 206, "op codes follow the schema");
  Check(strcmp(KilnBuiltinOpName(KILN_OP_CONV_2D), "CONV_2D") == 0,
        "KilnBuiltinOpName names builtin codes");
  Check(strcmp(KilnBuiltinOpName(-1), "UNKNOWN") == 0,
        "KilnBuiltinOpName of an unknown code");
  Check(strcmp(KilnTensorTypeName(KILN_TYPE_BFLOAT16), "BFLOAT16") == 0,
        "KilnTensorTypeName names tensor types");
  Check(strcmp(KilnTensorTypeName(99), "UNKNOWN_TYPE") == 0,
        "KilnTensorTypeName of an unknown type");
  Check(KILN_STATUS_UNAUTHENTICATED == 16, "status codes follow absl");
  (void)kernel;
  (void)api;
  (void)descriptor;
  if (failures == 0) printf("header compile test: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
