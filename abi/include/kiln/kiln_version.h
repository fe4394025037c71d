/* Kiln version numbers. Pure C; safe to include from C99, C11 and C++.
 *
 * Kiln has four independent version numbers. Never compare one with another:
 *   - Runtime release (KILN_RUNTIME_VERSION_*): the Kiln product release.
 *   - Application C API (KILN_C_API_VERSION_*): kiln_c_api.h, used by
 *     applications that load and run models.
 *   - Extension API (KILN_EXT_API_VERSION_*): the plugin ABI in
 *     kiln_extension.h / kiln_plugin.h, seen by kernel and delegate plugins.
 *     Its compatibility promise is in docs/abi-policy.md.
 *   - Model schema (KILN_MODEL_SCHEMA_VERSION): the TFLite FlatBuffer schema
 *     version that Kiln reads (Model.version).
 *
 * This header is the single definition of every number; CMake parses it. */
#ifndef KILN_KILN_VERSION_H_
#define KILN_KILN_VERSION_H_

#include <stdint.h>

/* Packs a version into one uint32_t that orders correctly with <, >, ==:
 * major in bits 22..31 (0..1023), minor in bits 12..21 (0..1023),
 * patch in bits 0..11 (0..4095). */
#define KILN_MAKE_VERSION(major, minor, patch)                          \
  ((((uint32_t)(major)) << 22) | (((uint32_t)(minor)) << 12) | \
   ((uint32_t)(patch)))
#define KILN_VERSION_MAJOR(v) (((uint32_t)(v)) >> 22)
#define KILN_VERSION_MINOR(v) ((((uint32_t)(v)) >> 12) & 0x3FFu)
#define KILN_VERSION_PATCH(v) (((uint32_t)(v)) & 0xFFFu)

/* Runtime release. */
#define KILN_RUNTIME_VERSION_MAJOR 0
#define KILN_RUNTIME_VERSION_MINOR 2
#define KILN_RUNTIME_VERSION_PATCH 0
#define KILN_RUNTIME_VERSION_STRING "0.2.0"

/* Application-facing C API (kiln_c_api.h). */
#define KILN_C_API_VERSION_MAJOR 1
#define KILN_C_API_VERSION_MINOR 2
#define KILN_C_API_VERSION_PATCH 0
#define KILN_C_API_VERSION_STRING "1.2.0"

/* Extension API: the plugin ABI. A plugin records the version it was built
 * against in KilnPluginDescriptor.abi_version. */
#define KILN_EXT_API_VERSION_MAJOR 1
#define KILN_EXT_API_VERSION_MINOR 3
#define KILN_EXT_API_VERSION_PATCH 0
#define KILN_EXT_API_VERSION_STRING "1.3.0"

/* TFLite FlatBuffer schema version read by Kiln (Model.version). */
#define KILN_MODEL_SCHEMA_VERSION 3

#define KILN_RUNTIME_VERSION                                 \
  KILN_MAKE_VERSION(KILN_RUNTIME_VERSION_MAJOR, KILN_RUNTIME_VERSION_MINOR, \
                    KILN_RUNTIME_VERSION_PATCH)
#define KILN_C_API_VERSION                                             \
  KILN_MAKE_VERSION(KILN_C_API_VERSION_MAJOR, KILN_C_API_VERSION_MINOR, \
                    KILN_C_API_VERSION_PATCH)
#define KILN_EXT_API_VERSION                                             \
  KILN_MAKE_VERSION(KILN_EXT_API_VERSION_MAJOR, KILN_EXT_API_VERSION_MINOR, \
                    KILN_EXT_API_VERSION_PATCH)

#endif /* KILN_KILN_VERSION_H_ */
