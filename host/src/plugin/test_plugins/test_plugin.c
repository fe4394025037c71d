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
#else
#error "define one KILN_TEST_PLUGIN_<VARIANT>"
#endif
  return &descriptor;
}
#else
/* Exports something, but not the entry point. */
EXPORT int NotTheKilnEntry(void) { return 0; }
#endif
