/* A plugin for the plan cache tests that counts its callbacks and checks the
 * host never invokes a state with shapes it was not prepared for. Plain C,
 * built twice:
 *   - against the frozen extension API 1.1 headers (no flags exist there):
 *     the host must prepare its single state after every shape change;
 *   - against the current headers with KILN_COUNTING_STATE_PER_SIGNATURE:
 *     it sets KILN_KERNEL_FLAG_STATE_PER_SHAPE_SIGNATURE and
 *     KILN_DELEGATE_FLAG_STATE_PER_SHAPE_SIGNATURE.
 * KILN_COUNTING_PLUGIN_NAME names the build.
 *
 * Kernels ADD v1 and MUL v1 (float32, both inputs of one shape): init makes
 * a state; prepare records the element count in it and sizes the output,
 * and fails (INVALID_ARGUMENT) when dimension 0 is 13; invoke fails unless
 * its state was prepared for the element count it is invoked with, then
 * computes.
 * Delegate "counting": claims every MUL v1 node; the same state discipline
 * per partition (one MUL per partition unless MULs are chained).
 * Capability KILN_TEST_CALL_COUNTS_EXTENSION_ID: the call counts. */
#include "counting_plugin.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "kiln/kiln_builtin_ops.h"
#include "kiln/kiln_plugin.h"

#ifndef KILN_COUNTING_PLUGIN_NAME
#error "define KILN_COUNTING_PLUGIN_NAME"
#endif

#define EXPORT __attribute__((visibility("default")))

static const KilnHostApi* g_api;
static KilnTestCallCounts g_counts;

/* What a node or partition state holds: the element count it was prepared
 * for (-1 before prepare). */
typedef struct State {
  int64_t prepared_elements;
} State;

static KilnStatus Fail(KilnOpaqueContext* context, KilnStatus code,
                       const char* message) {
  g_api->report_error(context, code, message);
  return code;
}

static int64_t Elements(const KilnOpaqueTensor* t) {
  int64_t n = 1;
  int32_t i;
  const int32_t rank = g_api->tensor_rank(t);
  for (i = 0; i < rank; ++i) n *= g_api->tensor_dim(t, i);
  return n;
}

/* Sizes `out` like `in`; fails for dimension 0 == 13. */
static KilnStatus SizeLike(KilnOpaqueContext* c, const KilnOpaqueTensor* in,
                           KilnOpaqueTensor* out) {
  int32_t dims[8];
  int32_t i;
  const int32_t rank = g_api->tensor_rank(in);
  if (rank < 0 || rank > 8)
    return Fail(c, KILN_STATUS_INVALID_ARGUMENT, "rank");
  for (i = 0; i < rank; ++i) dims[i] = g_api->tensor_dim(in, i);
  if (rank > 0 && dims[0] == 13) {
    return Fail(c, KILN_STATUS_INVALID_ARGUMENT,
                "dimension 0 is 13, which this test plugin refuses");
  }
  return g_api->tensor_resize(c, out, rank, dims);
}

static KilnStatus CheckPreparedFor(KilnOpaqueContext* c, const State* s,
                                   int64_t elements) {
  char message[160];
  if (s->prepared_elements == elements) return KILN_STATUS_OK;
  snprintf(message, sizeof(message),
           "state prepared for %lld elements is invoked with %lld",
           (long long)s->prepared_elements, (long long)elements);
  return Fail(c, KILN_STATUS_FAILED_PRECONDITION, message);
}

/* out = a (op) b elementwise over one node's tensors. */
static KilnStatus Compute(KilnOpaqueContext* c, const KilnOpaqueNode* node,
                          int multiply) {
  const KilnOpaqueTensor* a = g_api->node_input(c, node, 0);
  const KilnOpaqueTensor* b = g_api->node_input(c, node, 1);
  KilnOpaqueTensor* out = g_api->node_output(c, node, 0);
  const float* x = (const float*)g_api->tensor_data(a);
  const float* y = (const float*)g_api->tensor_data(b);
  float* z = (float*)g_api->tensor_data(out);
  const int64_t n = Elements(out);
  int64_t i;
  if (Elements(a) != n || Elements(b) != n) {
    return Fail(c, KILN_STATUS_INVALID_ARGUMENT, "shapes differ");
  }
  if (n > 0 && (x == NULL || y == NULL || z == NULL)) {
    return Fail(c, KILN_STATUS_INTERNAL, "tensor without data");
  }
  for (i = 0; i < n; ++i) z[i] = multiply ? x[i] * y[i] : x[i] + y[i];
  return KILN_STATUS_OK;
}

/* A new state in *state, counted in *inits. */
static KilnStatus NewState(KilnOpaqueContext* c, void** state, int64_t* inits) {
  State* s = (State*)malloc(sizeof(State));
  if (s == NULL) return Fail(c, KILN_STATUS_RESOURCE_EXHAUSTED, "malloc");
  s->prepared_elements = -1;
  *state = s;
  ++*inits;
  return KILN_STATUS_OK;
}

/* ---- Kernels ADD and MUL ---- */

static KilnStatus KernelInit(void* u, KilnOpaqueContext* c, KilnOpaqueNode* n,
                             void** state) {
  (void)u;
  (void)n;
  return NewState(c, state, &g_counts.kernel_init);
}

static void KernelFree(void* u, void* state) {
  (void)u;
  ++g_counts.kernel_free;
  free(state);
}

static KilnStatus KernelPrepare(void* u, void* state, KilnOpaqueContext* c,
                                KilnOpaqueNode* n) {
  const KilnOpaqueTensor* a = g_api->node_input(c, n, 0);
  (void)u;
  ++g_counts.kernel_prepare;
  ((State*)state)->prepared_elements = Elements(a);
  return SizeLike(c, a, g_api->node_output(c, n, 0));
}

static KilnStatus KernelInvoke(void* u, void* state, KilnOpaqueContext* c,
                               KilnOpaqueNode* n) {
  KilnStatus s;
  (void)u;
  ++g_counts.kernel_invoke;
  s = CheckPreparedFor(c, (const State*)state,
                       Elements(g_api->node_output(c, n, 0)));
  if (s != KILN_STATUS_OK) return s;
  return Compute(c, n, g_api->node_builtin_code(n) == KILN_OP_MUL);
}

#ifdef KILN_COUNTING_STATE_PER_SIGNATURE
#define KILN_COUNTING_KERNEL(code)                                           \
  {                                                                          \
    KILN_KERNEL_STRUCT_SIZE, code, NULL, 1, 1, NULL, KernelInit, KernelFree, \
        KernelPrepare, KernelInvoke,                                         \
        KILN_KERNEL_FLAG_STATE_PER_SHAPE_SIGNATURE                           \
  }
#else
#define KILN_COUNTING_KERNEL(code)                                           \
  {                                                                          \
    KILN_KERNEL_STRUCT_SIZE, code, NULL, 1, 1, NULL, KernelInit, KernelFree, \
        KernelPrepare, KernelInvoke                                          \
  }
#endif
static KilnKernel g_add = KILN_COUNTING_KERNEL(KILN_OP_ADD);
static KilnKernel g_mul = KILN_COUNTING_KERNEL(KILN_OP_MUL);
static const KilnKernel* g_kernels[2] = {&g_add, &g_mul};

/* ---- Delegate "counting" (claims MUL) ---- */

static KilnStatus Create(void* u, KilnOpaqueContext* c, const uint8_t* s,
                         uint64_t n, void** delegate) {
  (void)u;
  (void)c;
  (void)s;
  (void)n;
  *delegate = &g_counts; /* any non-null handle */
  return KILN_STATUS_OK;
}

static void Destroy(void* u, void* delegate) {
  (void)u;
  (void)delegate;
}

static KilnStatus Partition(void* delegate, KilnOpaqueContext* c) {
  const int32_t* plan = NULL;
  int32_t count = 0, i, claimed = 0;
  int32_t* nodes;
  KilnStatus status;
  (void)delegate;
  status = g_api->context_execution_plan(c, &plan, &count);
  if (status != KILN_STATUS_OK) return status;
  nodes = (int32_t*)malloc(sizeof(int32_t) * (size_t)(count > 0 ? count : 1));
  if (nodes == NULL) return Fail(c, KILN_STATUS_RESOURCE_EXHAUSTED, "malloc");
  for (i = 0; i < count; ++i) {
    const KilnOpaqueNode* node = g_api->context_node(c, plan[i]);
    if (g_api->node_builtin_code(node) == KILN_OP_MUL &&
        g_api->node_op_version(node) == 1) {
      nodes[claimed++] = plan[i];
    }
  }
  status = claimed > 0 ? g_api->context_delegate_nodes(c, nodes, claimed)
                       : KILN_STATUS_OK;
  free(nodes);
  return status;
}

static KilnStatus PartitionInit(void* d, KilnOpaqueContext* c,
                                KilnOpaqueNode* partition, void** state) {
  (void)d;
  (void)partition;
  return NewState(c, state, &g_counts.partition_init);
}

static void PartitionFree(void* d, void* state) {
  (void)d;
  ++g_counts.partition_free;
  free(state);
}

/* Calls fn(context, node) for every node the partition took over. */
static KilnStatus ForEachNode(KilnOpaqueContext* c, const KilnOpaqueNode* p,
                              KilnStatus (*fn)(KilnOpaqueContext*,
                                               const KilnOpaqueNode*)) {
  const int32_t* nodes = NULL;
  int32_t count = 0, i;
  KilnStatus status = g_api->node_delegated_nodes(p, &nodes, &count);
  for (i = 0; status == KILN_STATUS_OK && i < count; ++i) {
    status = fn(c, g_api->context_node(c, nodes[i]));
  }
  return status;
}

static KilnStatus SizeMul(KilnOpaqueContext* c, const KilnOpaqueNode* node) {
  return SizeLike(c, g_api->node_input(c, node, 0),
                  g_api->node_output(c, node, 0));
}

static KilnStatus ComputeMul(KilnOpaqueContext* c, const KilnOpaqueNode* node) {
  return Compute(c, node, 1);
}

static KilnStatus PartitionPrepare(void* d, void* state, KilnOpaqueContext* c,
                                   KilnOpaqueNode* partition) {
  (void)d;
  ++g_counts.partition_prepare;
  ((State*)state)->prepared_elements =
      Elements(g_api->node_input(c, partition, 0));
  return ForEachNode(c, partition, SizeMul);
}

static KilnStatus PartitionInvoke(void* d, void* state, KilnOpaqueContext* c,
                                  KilnOpaqueNode* partition) {
  KilnStatus s;
  (void)d;
  ++g_counts.partition_invoke;
  s = CheckPreparedFor(c, (const State*)state,
                       Elements(g_api->node_input(c, partition, 0)));
  return s != KILN_STATUS_OK ? s : ForEachNode(c, partition, ComputeMul);
}

static KilnDelegateInterface g_delegate;

/* ---- Capability and entry ---- */

static void ReadCounts(KilnTestCallCounts* counts) { *counts = g_counts; }

static void ResetCounts(void) {
  KilnTestCallCounts zero = {0, 0, 0, 0, 0, 0, 0, 0};
  g_counts = zero;
}

static const KilnTestCallCountsExtension g_counts_extension = {
    {KILN_STRUCT_SIZE(KilnTestCallCountsExtension, reset),
     KILN_TEST_CALL_COUNTS_EXTENSION_ID, NULL},
    ReadCounts,
    ResetCounts};

static KilnPluginDescriptor g_descriptor;

EXPORT const KilnPluginDescriptor* KilnPluginEntry(const KilnHostInfo* host) {
  KilnDelegateInterface d = {0};
  KilnPluginDescriptor desc = {0};
  g_api = host->api;
  d.struct_size = KILN_DELEGATE_INTERFACE_STRUCT_SIZE;
  d.name = "counting";
  d.create = Create;
  d.destroy = Destroy;
  d.partition = Partition;
  d.partition_init = PartitionInit;
  d.partition_free = PartitionFree;
  d.partition_prepare = PartitionPrepare;
  d.partition_invoke = PartitionInvoke;
#ifdef KILN_COUNTING_STATE_PER_SIGNATURE
  d.flags = KILN_DELEGATE_FLAG_STATE_PER_SHAPE_SIGNATURE;
#endif
  g_delegate = d;
  desc.struct_size = KILN_PLUGIN_DESCRIPTOR_STRUCT_SIZE;
  desc.abi_version = KILN_EXT_API_VERSION;
  desc.min_host_abi_version = KILN_MAKE_VERSION(1, 0, 0);
  desc.name = KILN_COUNTING_PLUGIN_NAME;
  desc.version = "1.0.0";
  desc.kernels = g_kernels;
  desc.num_kernels = 2;
  desc.delegate = &g_delegate;
  desc.extensions = &g_counts_extension.base;
  g_descriptor = desc;
  return &g_descriptor;
}
