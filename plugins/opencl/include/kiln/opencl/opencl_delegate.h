/* Capabilities of Kiln's OpenCL delegate plugin (libkiln_opencl.so), found in
 * its descriptor's extension chain (KilnPluginDescriptor.extensions) by id.
 *
 * Pure C. Every struct starts with KilnExtensionBase, whose struct_size the
 * reader checks (KILN_STRUCT_HAS_FIELD) before touching a field appended in a
 * later revision. The `delegate` argument of every function is an instance
 * returned by KilnDelegateInterface.create of the same plugin.
 *
 * The plugin also offers "kiln.delegate_decline_reasons/1", defined for any
 * delegate in kiln/kiln_capabilities.h.
 */
#ifndef KILN_OPENCL_OPENCL_DELEGATE_H_
#define KILN_OPENCL_OPENCL_DELEGATE_H_

#include "kiln/kiln_capabilities.h" /* kiln.delegate_decline_reasons/1 */
#include "kiln/kiln_plugin.h"

KILN_EXTERN_C_BEGIN

/* ---- kiln.opencl_stats/1 --------------------------------------------------
 * Device and compiled-program cache counters of an OpenCL delegate instance,
 * for tools, tests and benchmarks. */
#define KILN_OPENCL_STATS_EXTENSION_ID "kiln.opencl_stats/1"

typedef struct KilnOpenClStats {
  /* In: the caller's KILN_OPENCL_STATS_STRUCT_SIZE; the delegate fills only
   * fields inside it. */
  uint32_t struct_size;
  /* 1 when buffers between kernels are stored as fp16, else 0. */
  uint32_t fp16_storage;
  /* Programs compiled from OpenCL C source (cache misses). */
  uint64_t programs_built_from_source;
  /* Programs created from a verified on-disk binary. */
  uint64_t programs_loaded_from_disk_cache;
  /* Program requests served by the instance's in-memory cache. */
  uint64_t programs_reused_from_memory;
  /* On-disk cache files found corrupt, stale or rejected by the driver (they
   * are rebuilt and overwritten). */
  uint64_t cache_files_rejected;
  /* Cache files written (atomically: temporary file + rename). */
  uint64_t cache_files_written;
  /* ---- Appended with buffer handles (Kiln 0.2) ---- */
  /* Tensors copied from host memory to the device at invoke time: partition
   * inputs read from host memory, and copy_to_buffer_handle calls
   * (constants uploaded at prepare are not counted). */
  uint64_t tensor_uploads;
  /* Tensors copied from the device to host memory: partition outputs read
   * back (hosts without buffer handles), and copy_from_buffer_handle
   * calls. */
  uint64_t tensor_downloads;
} KilnOpenClStats;
/* The first revision's size, the smallest get_stats accepts. */
#define KILN_OPENCL_STATS_STRUCT_SIZE_1 \
  KILN_STRUCT_SIZE(KilnOpenClStats, cache_files_written)
#define KILN_OPENCL_STATS_STRUCT_SIZE \
  KILN_STRUCT_SIZE(KilnOpenClStats, tensor_downloads)

typedef struct KilnOpenClStatsExtension {
  KilnExtensionBase base; /* base.id == KILN_OPENCL_STATS_EXTENSION_ID */
  /* Fills `stats` up to stats->struct_size. Returns INVALID_ARGUMENT (stats
   * untouched) when delegate or stats is NULL or stats->struct_size is
   * smaller than KILN_OPENCL_STATS_STRUCT_SIZE_1. Thread-safe. */
  KilnStatus (*get_stats)(void* delegate, KilnOpenClStats* stats);
  /* "<device name> (<platform name>, <driver version>)" of the instance's
   * device. Owned by the delegate, valid until destroy. */
  const char* (*device_description)(void* delegate);
} KilnOpenClStatsExtension;
#define KILN_OPENCL_STATS_EXTENSION_STRUCT_SIZE \
  KILN_STRUCT_SIZE(KilnOpenClStatsExtension, device_description)

/* ---- kiln.opencl_buffers/1 ------------------------------------------------
 * The OpenCL objects behind the delegate's buffer handles (extension API
 * 1.2). A KilnBufferHandle of this delegate is a cl_mem of the instance's
 * context cast to an integer, (KilnBufferHandle)(intptr_t)mem, holding the
 * tensor's elements in the instance's storage format: float32, or IEEE
 * half when get_stats reports fp16_storage = 1. An application creates such
 * a buffer in the context below, binds it to an input or output tensor with
 * KilnInterpreterSetTensorBufferHandle (kiln/kiln_c_api.h) and keeps it
 * alive while bound; the delegate then reads the input from it and writes
 * the output into it, with no copy through host memory. The delegate
 * finishes its queue before each partition_invoke returns, so an output
 * buffer is complete when Invoke returns. Reach this capability with
 * KilnInterpreterGetDelegateExtension. */
#define KILN_OPENCL_BUFFERS_EXTENSION_ID "kiln.opencl_buffers/1"

typedef struct KilnOpenClBuffersExtension {
  KilnExtensionBase base; /* base.id == KILN_OPENCL_BUFFERS_EXTENSION_ID */
  /* The instance's cl_context and in-order cl_command_queue, as void*;
   * owned by the instance, valid until it is destroyed. */
  void* (*context)(void* delegate);
  void* (*command_queue)(void* delegate);
} KilnOpenClBuffersExtension;
#define KILN_OPENCL_BUFFERS_EXTENSION_STRUCT_SIZE \
  KILN_STRUCT_SIZE(KilnOpenClBuffersExtension, command_queue)

KILN_EXTERN_C_END

#endif /* KILN_OPENCL_OPENCL_DELEGATE_H_ */
