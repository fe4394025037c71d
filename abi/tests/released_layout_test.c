/* Compile-time layout checks of the structs of one released extension API
 * version (abi/released/<version>/layout.inc). Built twice per version:
 * against the frozen copy (offsets and sizes must match exactly) and against
 * the current headers (every released offset must be unchanged; structs may
 * only have grown at the end). */
#include <stdint.h>

#include "kiln/kiln_c_api.h"
#include "kiln/kiln_plugin.h"
#ifdef KILN_LAYOUT_HAS_CAPABILITIES /* extension API 1.1 and later */
#include "kiln/kiln_capabilities.h"
#endif

#define KILN_CAT2(a, b) a##b
#define KILN_CAT(a, b) KILN_CAT2(a, b)
#define KILN_CHECK_OFFSET(type, field, offset)                  \
  KILN_STATIC_ASSERT(offsetof(type, field) == (offset),        \
                     KILN_CAT(offset_##type##_##field##_line, __LINE__))
#ifdef KILN_LAYOUT_FROZEN_COPY
#define KILN_CHECK_SIZE(type, size) \
  KILN_STATIC_ASSERT(sizeof(type) == (size), size_##type)
#else
#define KILN_CHECK_SIZE(type, size) \
  KILN_STATIC_ASSERT(sizeof(type) >= (size), size_##type)
#endif

#if UINTPTR_MAX == 0xffffffffffffffffu
#include "layout.inc"
#endif

int main(void) { return 0; }
