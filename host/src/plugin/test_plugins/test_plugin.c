/* One source for every purpose-built test plugin of the loader tests. Each
 * build defines exactly one KILN_TEST_PLUGIN_<VARIANT> macro; each variant
 * breaks one rule so the loader's refusal message for it can be asserted.
 * Written in plain C to prove the ABI needs no C++. */
#include <stddef.h>
#include <string.h>

#include "kiln/kiln_plugin.h"

#define EXPORT __attribute__((visibility("default")))

static KilnStatus Invoke(void* user_data, void* state,
                         KilnOpaqueContext* context, KilnOpaqueNode* node) {
  (void)user_data;
  (void)state;
  (void)context;
  (void)node;
  return KILN_STATUS_OK;
}

static KilnKernel kernel_a = {KILN_KERNEL_STRUCT_SIZE, KILN_OP_ADD, NULL, 1, 2,
                              NULL, NULL, NULL, NULL, Invoke};
static KilnKernel kernel_b = {KILN_KERNEL_STRUCT_SIZE, KILN_OP_MUL, NULL, 1, 3,
                              NULL, NULL, NULL, NULL, Invoke};
static const KilnKernel* kernels[2];
static const uint32_t bad_hosts[1] = {KILN_RUNTIME_VERSION};

static KilnStatus Create(void* u, KilnOpaqueContext* c, const uint8_t* s,
                         uint64_t n, void** d) {
  (void)u; (void)c; (void)s; (void)n;
  *d = NULL;
  return KILN_STATUS_OK;
}
static void Destroy(void* u, void* d) { (void)u; (void)d; }
static KilnStatus Partition(void* d, KilnOpaqueContext* c) {
  (void)d; (void)c;
  return KILN_STATUS_OK;
}
static KilnStatus PartitionInit(void* d, KilnOpaqueContext* c,
                                KilnOpaqueNode* n, void** s) {
  (void)d; (void)c; (void)n;
  *s = NULL;
  return KILN_STATUS_OK;
}
static KilnStatus PartitionInvoke(void* d, void* s, KilnOpaqueContext* c,
                                  KilnOpaqueNode* n) {
  (void)d; (void)s; (void)c; (void)n;
  return KILN_STATUS_OK;
}
static KilnDelegateInterface delegate = {
    KILN_DELEGATE_INTERFACE_STRUCT_SIZE, "test_delegate", NULL, NULL, Create,
    Destroy, Partition, PartitionInit, NULL, NULL, PartitionInvoke};

/* Extension API 1.2 delegate declarations. */
static const KilnHostApi* host_api;
/* Claims every node of the execution plan, declared or not. */
static KilnStatus ClaimAll(void* d, KilnOpaqueContext* c) {
  const int32_t* plan = NULL;
  int32_t count = 0;
  (void)d;
  if (host_api->context_execution_plan(c, &plan, &count) != KILN_STATUS_OK) {
    return KILN_STATUS_INTERNAL;
  }
  return host_api->context_delegate_nodes(c, plan, count);
}
static const int32_t float32_only[1] = {KILN_TYPE_FLOAT32};
static KilnDelegateOpSupport add_v1 = {KILN_DELEGATE_OP_SUPPORT_STRUCT_SIZE,
                                       KILN_OP_ADD, NULL, 1, 1, 1,
                                       float32_only};
static const KilnDelegateOpSupport* declared_ops[1] = {&add_v1};
static const uint8_t not_a_descriptor_set[4] = {0xff, 0xff, 0xff, 0xff};
static void FreeBufferHandle(void* d, KilnBufferHandle h) {
  (void)d;
  (void)h;
}

static KilnPluginDescriptor descriptor;

#ifndef KILN_TEST_PLUGIN_NO_ENTRY
EXPORT const KilnPluginDescriptor* KilnPluginEntry(const KilnHostInfo* host) {
  (void)host;
  memset(&descriptor, 0, sizeof(descriptor));
  kernels[0] = &kernel_a;
  kernels[1] = &kernel_b;
  descriptor.struct_size = KILN_PLUGIN_DESCRIPTOR_STRUCT_SIZE;
  descriptor.abi_version = KILN_EXT_API_VERSION;
  descriptor.min_host_abi_version = KILN_MAKE_VERSION(1, 0, 0);
  descriptor.name = "test_plugin";
  descriptor.version = "1.2.3";
  descriptor.kernels = kernels;
  descriptor.num_kernels = 2;
#if defined(KILN_TEST_PLUGIN_WRONG_MAJOR)
  descriptor.abi_version = KILN_MAKE_VERSION(KILN_EXT_API_VERSION_MAJOR + 1, 0, 0);
  descriptor.min_host_abi_version = descriptor.abi_version;
#elif defined(KILN_TEST_PLUGIN_OLD_MAJOR)
  descriptor.abi_version = KILN_MAKE_VERSION(0, 9, 0);
  descriptor.min_host_abi_version = descriptor.abi_version;
#elif defined(KILN_TEST_PLUGIN_STRUCT_TOO_SMALL)
  descriptor.struct_size = (uint32_t)offsetof(KilnPluginDescriptor, kernels);
#elif defined(KILN_TEST_PLUGIN_DESCRIPTOR_HEADER_ONLY)
  descriptor.struct_size = 6;
#elif defined(KILN_TEST_PLUGIN_NULL_INVOKE)
  kernel_b.invoke = NULL;
#elif defined(KILN_TEST_PLUGIN_NULL_DELEGATE_CREATE)
  delegate.create = NULL;
  descriptor.delegate = &delegate;
#elif defined(KILN_TEST_PLUGIN_INVERTED_RANGE)
  kernel_b.min_version = 4;
  kernel_b.max_version = 2;
#elif defined(KILN_TEST_PLUGIN_OVERLAPPING_RANGE)
  kernel_b.builtin_code = KILN_OP_ADD;
  kernel_b.min_version = 2;
  kernel_b.max_version = 5;
#elif defined(KILN_TEST_PLUGIN_NEEDS_NEWER_HOST)
  descriptor.abi_version = KILN_MAKE_VERSION(KILN_EXT_API_VERSION_MAJOR, 1000, 0);
  descriptor.min_host_abi_version = descriptor.abi_version;
#elif defined(KILN_TEST_PLUGIN_BAD_HOST)
  descriptor.bad_host_versions = bad_hosts;
  descriptor.num_bad_host_versions = 1;
#elif defined(KILN_TEST_PLUGIN_NULL_NAME)
  descriptor.name = NULL;
#elif defined(KILN_TEST_PLUGIN_BAD_NAME)
  descriptor.name = "Test Plugin!";
#elif defined(KILN_TEST_PLUGIN_BAD_SEMVER)
  descriptor.version = "v1";
#elif defined(KILN_TEST_PLUGIN_MIN_HOST_ABOVE_OWN)
  descriptor.min_host_abi_version = KILN_MAKE_VERSION(1, 1000, 0);
#elif defined(KILN_TEST_PLUGIN_ENTRY_RETURNS_NULL)
  return NULL;
#elif defined(KILN_TEST_PLUGIN_CUSTOM_WITHOUT_NAME)
  kernel_b.builtin_code = KILN_OP_CUSTOM;
#elif defined(KILN_TEST_PLUGIN_NO_KERNELS)
  descriptor.kernels = NULL;
  descriptor.num_kernels = 0;
#elif defined(KILN_TEST_PLUGIN_GOOD)
  descriptor.delegate = &delegate;
#elif defined(KILN_TEST_PLUGIN_CLAIMS_UNDECLARED)
  /* Declares float32 ADD version 1, claims everything. */
  host_api = host->api;
  delegate.partition = ClaimAll;
  delegate.supported_ops = declared_ops;
  delegate.num_supported_ops = 1;
  descriptor.delegate = &delegate;
#elif defined(KILN_TEST_PLUGIN_CLAIMS_ALL_UNDECLARED)
  /* Declares nothing, claims everything: accepted as before 1.2. */
  host_api = host->api;
  delegate.partition = ClaimAll;
  descriptor.delegate = &delegate;
#elif defined(KILN_TEST_PLUGIN_BAD_OP_SUPPORT)
  add_v1.min_version = 3;
  delegate.supported_ops = declared_ops;
  delegate.num_supported_ops = 1;
  descriptor.delegate = &delegate;
#elif defined(KILN_TEST_PLUGIN_BAD_DESCRIPTOR_SET)
  delegate.settings_type = "acme.Settings";
  delegate.settings_descriptor_set = not_a_descriptor_set;
  delegate.settings_descriptor_set_size = sizeof(not_a_descriptor_set);
  descriptor.delegate = &delegate;
#elif defined(KILN_TEST_PLUGIN_HALF_BUFFER_HANDLES)
  delegate.free_buffer_handle = FreeBufferHandle;
  descriptor.delegate = &delegate;
#else
#error "define one KILN_TEST_PLUGIN_<VARIANT>"
#endif
  return &descriptor;
}
#else
/* Exports something, but not the entry point. */
EXPORT int NotTheKilnEntry(void) { return 0; }
#endif
