/* The test delegate's capability "kiln.test_delegate_buffers/1" (test
 * only): its fake device memory behind buffer handles, and a log of the
 * copies the host asked for, so tests can count them. Pure C. */
#ifndef KILN_HOST_INTERPRETER_TEST_PLUGINS_TEST_DELEGATE_BUFFERS_H_
#define KILN_HOST_INTERPRETER_TEST_PLUGINS_TEST_DELEGATE_BUFFERS_H_

#include "kiln/kiln_plugin.h"

KILN_EXTERN_C_BEGIN

#define KILN_TEST_DELEGATE_BUFFERS_ID "kiln.test_delegate_buffers/1"

typedef struct KilnTestDelegateBuffers {
  KilnExtensionBase base;
  /* A new buffer of `elements` floats (zeroed) in the instance's memory; its
   * handle. The application owns it: free_buffer_handle leaves it. */
  int64_t (*create_buffer)(void* delegate, uint64_t elements);
  /* The floats of buffer `handle`; NULL for an unknown handle. */
  float* (*buffer_data)(void* delegate, int64_t handle);
  /* One line per host request, in order: "from NAME", "to NAME" (copy_from/
   * copy_to_buffer_handle of tensor NAME) and "free" (free_buffer_handle).
   * Owned by the instance; valid until the next call. */
  const char* (*copy_log)(void* delegate);
  void (*clear_copy_log)(void* delegate);
} KilnTestDelegateBuffers;

KILN_EXTERN_C_END

#endif /* KILN_HOST_INTERPRETER_TEST_PLUGINS_TEST_DELEGATE_BUFFERS_H_ */
