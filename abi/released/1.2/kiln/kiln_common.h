/* Definitions shared by the application C API and the extension API.
 * Pure C; every type that crosses a boundary is fixed-width. */
#ifndef KILN_KILN_COMMON_H_
#define KILN_KILN_COMMON_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#define KILN_EXTERN_C_BEGIN extern "C" {
#define KILN_EXTERN_C_END }
#else
#define KILN_EXTERN_C_BEGIN
#define KILN_EXTERN_C_END
#endif

/* Symbol visibility for libkiln's exported application API. */
#if defined(_WIN32)
#define KILN_API_EXPORT __declspec(dllexport)
#else
#define KILN_API_EXPORT __attribute__((visibility("default")))
#endif

/* Compile-time assertion usable in C99 (typedef trick), C11 and C++. */
#if defined(__cplusplus)
#define KILN_STATIC_ASSERT(cond, name) static_assert(cond, #name)
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define KILN_STATIC_ASSERT(cond, name) _Static_assert(cond, #name)
#else
#define KILN_STATIC_ASSERT(cond, name) \
  typedef char kiln_static_assert_##name[(cond) ? 1 : -1]
#endif

/* Size of a struct up to and including last_field. Every boundary struct
 * defines TYPE_STRUCT_SIZE with this macro, naming its current last field,
 * and the header asserts it; appending a field means moving last_field. */
#define KILN_STRUCT_SIZE(type, last_field) \
  (offsetof(type, last_field) + sizeof(((type*)0)->last_field))

/* True when a struct whose declared size is `declared_size` contains
 * `field`. Readers use it before touching any field added after 1.0. */
#define KILN_STRUCT_HAS_FIELD(type, declared_size, field) \
  ((size_t)(declared_size) >= KILN_STRUCT_SIZE(type, field))

/* Status codes, numbered as absl::StatusCode. Stored as int32_t: new codes
 * may appear in a minor version; treat unknown codes as KILN_STATUS_UNKNOWN. */
typedef int32_t KilnStatus;
#define KILN_STATUS_OK 0
#define KILN_STATUS_CANCELLED 1
#define KILN_STATUS_UNKNOWN 2
#define KILN_STATUS_INVALID_ARGUMENT 3
#define KILN_STATUS_DEADLINE_EXCEEDED 4
#define KILN_STATUS_NOT_FOUND 5
#define KILN_STATUS_ALREADY_EXISTS 6
#define KILN_STATUS_PERMISSION_DENIED 7
#define KILN_STATUS_RESOURCE_EXHAUSTED 8
#define KILN_STATUS_FAILED_PRECONDITION 9
#define KILN_STATUS_ABORTED 10
#define KILN_STATUS_OUT_OF_RANGE 11
#define KILN_STATUS_UNIMPLEMENTED 12
#define KILN_STATUS_INTERNAL 13
#define KILN_STATUS_UNAVAILABLE 14
#define KILN_STATUS_DATA_LOSS 15
#define KILN_STATUS_UNAUTHENTICATED 16

/* Tensor element types; values equal the TFLite schema's TensorType. */
typedef int32_t KilnTensorType;
#define KILN_TYPE_FLOAT32 0
#define KILN_TYPE_FLOAT16 1
#define KILN_TYPE_INT32 2
#define KILN_TYPE_UINT8 3
#define KILN_TYPE_INT64 4
#define KILN_TYPE_STRING 5
#define KILN_TYPE_BOOL 6
#define KILN_TYPE_INT16 7
#define KILN_TYPE_COMPLEX64 8
#define KILN_TYPE_INT8 9
#define KILN_TYPE_FLOAT64 10
#define KILN_TYPE_COMPLEX128 11
#define KILN_TYPE_UINT64 12
#define KILN_TYPE_RESOURCE 13
#define KILN_TYPE_VARIANT 14
#define KILN_TYPE_UINT32 15
#define KILN_TYPE_UINT16 16
#define KILN_TYPE_INT4 17
#define KILN_TYPE_BFLOAT16 18

/* Name of a tensor type ("FLOAT32"), or "UNKNOWN_TYPE". Header-only (no
 * symbol), for plugins and hosts alike. Added in extension API 1.1. */
static inline const char* KilnTensorTypeName(KilnTensorType type) {
  switch (type) {
    case KILN_TYPE_FLOAT32:
      return "FLOAT32";
    case KILN_TYPE_FLOAT16:
      return "FLOAT16";
    case KILN_TYPE_INT32:
      return "INT32";
    case KILN_TYPE_UINT8:
      return "UINT8";
    case KILN_TYPE_INT64:
      return "INT64";
    case KILN_TYPE_STRING:
      return "STRING";
    case KILN_TYPE_BOOL:
      return "BOOL";
    case KILN_TYPE_INT16:
      return "INT16";
    case KILN_TYPE_COMPLEX64:
      return "COMPLEX64";
    case KILN_TYPE_INT8:
      return "INT8";
    case KILN_TYPE_FLOAT64:
      return "FLOAT64";
    case KILN_TYPE_COMPLEX128:
      return "COMPLEX128";
    case KILN_TYPE_UINT64:
      return "UINT64";
    case KILN_TYPE_RESOURCE:
      return "RESOURCE";
    case KILN_TYPE_VARIANT:
      return "VARIANT";
    case KILN_TYPE_UINT32:
      return "UINT32";
    case KILN_TYPE_UINT16:
      return "UINT16";
    case KILN_TYPE_INT4:
      return "INT4";
    case KILN_TYPE_BFLOAT16:
      return "BFLOAT16";
    default:
      return "UNKNOWN_TYPE";
  }
}

/* Log severities. */
#define KILN_LOG_INFO 0
#define KILN_LOG_WARNING 1
#define KILN_LOG_ERROR 2

#endif /* KILN_KILN_COMMON_H_ */
