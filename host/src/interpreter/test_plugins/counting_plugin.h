/* The capability through which the plan cache tests read how often the
 * counting plugin's callbacks ran (counting_plugin.c). Shared by the plugin
 * (C) and the tests (C++); not part of Kiln's ABI. */
#ifndef KILN_HOST_INTERPRETER_TEST_PLUGINS_COUNTING_PLUGIN_H_
#define KILN_HOST_INTERPRETER_TEST_PLUGINS_COUNTING_PLUGIN_H_

#include <stdint.h>

#include "kiln/kiln_plugin.h"

#define KILN_TEST_CALL_COUNTS_EXTENSION_ID "kiln_test.call_counts/1"

/* Calls since load or the last reset, over every node and partition. */
typedef struct KilnTestCallCounts {
  int64_t kernel_init, kernel_prepare, kernel_invoke, kernel_free;
  int64_t partition_init, partition_prepare, partition_invoke, partition_free;
} KilnTestCallCounts;

typedef struct KilnTestCallCountsExtension {
  KilnExtensionBase base; /* base.id == KILN_TEST_CALL_COUNTS_EXTENSION_ID */
  void (*read)(KilnTestCallCounts* counts);
  void (*reset)(void);
} KilnTestCallCountsExtension;

#endif /* KILN_HOST_INTERPRETER_TEST_PLUGINS_COUNTING_PLUGIN_H_ */
