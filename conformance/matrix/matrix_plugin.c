/* One source for every plugin of the extension API version matrix
 * (conformance/README.md). Each build picks the headers it compiles against
 * (the frozen 1.0 copy or the current ones) and defines:
 *   KILN_MATRIX_PLUGIN_NAME   descriptor name (string literal)
 *   KILN_MATRIX_EXPECT_MINOR  extension API minor the headers must have
 *   KILN_MATRIX_QUANT_MODE    how the op gets its quantization parameters:
 *     0 from the node's custom options only (works on any 1.x host);
 *     1 from KilnHostApi.tensor_quantization, min_host_abi_version 1.1;
 *     2 from tensor_quantization when the host has it, min_host 1.0, and a
 *       precise failure naming the missing host function otherwise;
 *     3 like 2, but falling back to the custom options.
 *   KILN_MATRIX_NEXT_MAJOR    if defined, the plugin claims extension API 2.0
 *                             by redefining the version macros.
 *
 * The op, CUSTOM "KilnMatrixDequantize" version 1: input 0 is an INT8 tensor
 * with per-tensor quantization (scale, zero_point), output 0 a FLOAT32 tensor
 * of the same shape with y = scale * (q - zero_point). The custom options,
 * when present, are 8 bytes: float scale, int32 zero_point (host order).
 * Written in C to show the ABI needs no C++. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kiln/kiln_plugin.h"

#if !defined(KILN_MATRIX_PLUGIN_NAME) || !defined(KILN_MATRIX_EXPECT_MINOR) || \
    !defined(KILN_MATRIX_QUANT_MODE)
#error \
    "define KILN_MATRIX_PLUGIN_NAME, KILN_MATRIX_EXPECT_MINOR, KILN_MATRIX_QUANT_MODE"
#endif

/* Proves the build used the headers it was meant to (include order). */
#if KILN_EXT_API_VERSION_MINOR != KILN_MATRIX_EXPECT_MINOR
#error "matrix plugin compiled against the wrong extension API headers"
#endif

#if KILN_MATRIX_QUANT_MODE != 0 && !defined(KILN_HOST_API_STRUCT_SIZE_1_1)
#error "quantization modes 1..3 need the extension API 1.1 headers"
#endif

#ifdef KILN_MATRIX_NEXT_MAJOR
#undef KILN_EXT_API_VERSION_MAJOR
#define KILN_EXT_API_VERSION_MAJOR 2
#undef KILN_EXT_API_VERSION_MINOR
#define KILN_EXT_API_VERSION_MINOR 0
#undef KILN_EXT_API_VERSION_PATCH
#define KILN_EXT_API_VERSION_PATCH 0
#endif

#define KILN_MATRIX_OP_NAME "KilnMatrixDequantize"
#define EXPORT __attribute__((visibility("default")))

/* Set at entry; valid until the plugin is unloaded. */
static const KilnHostApi* g_api;

static KilnStatus Fail(KilnOpaqueContext* context, KilnStatus code,
                       const char* message) {
  g_api->report_error(context, code, message);
  return code;
}

#if KILN_MATRIX_QUANT_MODE == 0 || KILN_MATRIX_QUANT_MODE == 3
/* Reads scale and zero point from the custom options. */
static KilnStatus ParamsFromOptions(KilnOpaqueContext* context,
                                    const KilnOpaqueNode* node, float* scale,
                                    int32_t* zero_point) {
  const uint8_t* data = NULL;
  uint64_t size = 0;
  if (g_api->node_custom_options(node, &data, &size) != KILN_STATUS_OK ||
      data == NULL || size != 8) {
    return Fail(context, KILN_STATUS_INVALID_ARGUMENT,
                KILN_MATRIX_OP_NAME
                " needs 8 bytes of custom options (float scale, int32 "
                "zero_point) on this host");
  }
  memcpy(scale, data, 4);
  memcpy(zero_point, data + 4, 4);
  return KILN_STATUS_OK;
}
#endif

#if KILN_MATRIX_QUANT_MODE != 0
static int HostHasTensorQuantization(void) {
  return KILN_STRUCT_HAS_FIELD(KilnHostApi, g_api->struct_size,
                               tensor_quantization) &&
         g_api->tensor_quantization != NULL;
}

static KilnStatus ParamsFromTensor(KilnOpaqueContext* context,
                                   const KilnOpaqueTensor* tensor, float* scale,
                                   int32_t* zero_point) {
  KilnQuantizationParams params;
  memset(&params, 0, sizeof(params));
  params.struct_size = KILN_QUANTIZATION_PARAMS_STRUCT_SIZE;
  if (g_api->tensor_quantization(tensor, &params) != KILN_STATUS_OK) {
    return Fail(context, KILN_STATUS_INTERNAL,
                "KilnHostApi.tensor_quantization failed for input 0");
  }
  if (params.num_channels != 1) {
    return Fail(context, KILN_STATUS_INVALID_ARGUMENT,
                KILN_MATRIX_OP_NAME
                " needs input 0 quantized per tensor (1 scale)");
  }
  *scale = params.scales[0];
  *zero_point = (int32_t)params.zero_points[0];
  return KILN_STATUS_OK;
}
#endif

static KilnStatus Params(KilnOpaqueContext* context, KilnOpaqueNode* node,
                         float* scale, int32_t* zero_point) {
#if KILN_MATRIX_QUANT_MODE == 0
  return ParamsFromOptions(context, node, scale, zero_point);
#else
  const KilnOpaqueTensor* input = g_api->node_input(context, node, 0);
  if (HostHasTensorQuantization()) {
    return ParamsFromTensor(context, input, scale, zero_point);
  }
#if KILN_MATRIX_QUANT_MODE == 3
  return ParamsFromOptions(context, node, scale, zero_point);
#else
  {
    char message[256];
    snprintf(message, sizeof(message),
             KILN_MATRIX_OP_NAME
             " reads quantization through KilnHostApi.tensor_quantization "
             "(extension API 1.1), which this host (extension API %u.%u) "
             "does not serve; upgrade Kiln",
             (unsigned)KILN_VERSION_MAJOR(g_api->abi_version),
             (unsigned)KILN_VERSION_MINOR(g_api->abi_version));
    return Fail(context, KILN_STATUS_UNIMPLEMENTED, message);
  }
#endif
#endif
}

static KilnStatus Prepare(void* user_data, void* state,
                          KilnOpaqueContext* context, KilnOpaqueNode* node) {
  const KilnOpaqueTensor* input;
  KilnOpaqueTensor* output;
  int32_t dims[8];
  int32_t rank, i;
  float scale;
  int32_t zero_point;
  KilnStatus status;
  (void)user_data;
  (void)state;
  if (g_api->node_num_inputs(node) != 1 || g_api->node_num_outputs(node) != 1) {
    return Fail(context, KILN_STATUS_INVALID_ARGUMENT,
                KILN_MATRIX_OP_NAME " takes 1 input and 1 output");
  }
  input = g_api->node_input(context, node, 0);
  output = g_api->node_output(context, node, 0);
  if (g_api->tensor_type(input) != KILN_TYPE_INT8 ||
      g_api->tensor_type(output) != KILN_TYPE_FLOAT32) {
    return Fail(context, KILN_STATUS_INVALID_ARGUMENT,
                KILN_MATRIX_OP_NAME " maps INT8 input 0 to FLOAT32 output 0");
  }
  status = Params(context, node, &scale, &zero_point);
  if (status != KILN_STATUS_OK) return status;
  rank = g_api->tensor_rank(input);
  if (rank < 0 || rank > 8) {
    return Fail(context, KILN_STATUS_INVALID_ARGUMENT,
                KILN_MATRIX_OP_NAME " supports rank 0..8");
  }
  for (i = 0; i < rank; ++i) dims[i] = g_api->tensor_dim(input, i);
  return g_api->tensor_resize(context, output, rank, dims);
}

static KilnStatus Invoke(void* user_data, void* state,
                         KilnOpaqueContext* context, KilnOpaqueNode* node) {
  const KilnOpaqueTensor* input = g_api->node_input(context, node, 0);
  const KilnOpaqueTensor* output = g_api->node_output(context, node, 0);
  const int8_t* q = (const int8_t*)g_api->tensor_data(input);
  float* y = (float*)g_api->tensor_data(output);
  const uint64_t count = g_api->tensor_byte_size(input);
  float scale;
  int32_t zero_point;
  uint64_t i;
  KilnStatus status;
  (void)user_data;
  (void)state;
  status = Params(context, node, &scale, &zero_point);
  if (status != KILN_STATUS_OK) return status;
  if (g_api->tensor_byte_size(output) != count * sizeof(float)) {
    return Fail(context, KILN_STATUS_INTERNAL,
                KILN_MATRIX_OP_NAME " output size does not match input");
  }
  for (i = 0; i < count; ++i)
    y[i] = scale * (float)((int32_t)q[i] - zero_point);
  return KILN_STATUS_OK;
}

static const KilnKernel kKernel = {KILN_KERNEL_STRUCT_SIZE,
                                   KILN_OP_CUSTOM,
                                   KILN_MATRIX_OP_NAME,
                                   1,
                                   1,
                                   NULL,
                                   NULL,
                                   NULL,
                                   Prepare,
                                   Invoke};
static const KilnKernel* const kKernels[1] = {&kKernel};
static KilnPluginDescriptor g_descriptor;

EXPORT const KilnPluginDescriptor* KilnPluginEntry(const KilnHostInfo* host) {
  if (host == NULL || host->api == NULL) return NULL;
  g_api = host->api;
  memset(&g_descriptor, 0, sizeof(g_descriptor));
  g_descriptor.struct_size = KILN_PLUGIN_DESCRIPTOR_STRUCT_SIZE;
  g_descriptor.abi_version = KILN_EXT_API_VERSION;
#if defined(KILN_MATRIX_NEXT_MAJOR)
  g_descriptor.min_host_abi_version = KILN_MAKE_VERSION(2, 0, 0);
#elif KILN_MATRIX_QUANT_MODE == 1
  g_descriptor.min_host_abi_version = KILN_MAKE_VERSION(1, 1, 0);
#else
  g_descriptor.min_host_abi_version = KILN_MAKE_VERSION(1, 0, 0);
#endif
  g_descriptor.name = KILN_MATRIX_PLUGIN_NAME;
  g_descriptor.version = "1.0.0";
  g_descriptor.kernels = kKernels;
  g_descriptor.num_kernels = 1;
  return &g_descriptor;
}
