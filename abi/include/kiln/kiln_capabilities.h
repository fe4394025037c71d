/* Optional capabilities found by id: those a plugin offers in its
 * descriptor's extension chain (KilnPluginDescriptor.extensions; extension
 * API 1.1), and host extensions a plugin asks for through
 * KilnHostApi.get_host_extension (extension API 1.2). Pure C.
 *
 * Every capability struct starts with KilnExtensionBase; a reader checks
 * base.struct_size (KILN_STRUCT_HAS_FIELD) before touching any field added
 * in a later revision of the same id. */
#ifndef KILN_KILN_CAPABILITIES_H_
#define KILN_KILN_CAPABILITIES_H_

#include "kiln/kiln_plugin.h"

KILN_EXTERN_C_BEGIN

/* ---- kiln.delegate_decline_reasons/1 ------------------------------------
 * Why a delegate instance did not claim a node. Any delegate may offer it;
 * the host uses it to explain, per node, why a node stays on the kernels
 * (e.g. in `kiln inspect --delegate`). */
#define KILN_DELEGATE_DECLINE_REASONS_EXTENSION_ID \
  "kiln.delegate_decline_reasons/1"

typedef struct KilnDelegateDeclineReasonsExtension {
  KilnExtensionBase base; /* base.id == KILN_DELEGATE_DECLINE_REASONS_... */
  /* The reason `delegate` declined node `node_index` (an index into the
   * subgraph's nodes) in its most recent KilnDelegateInterface.partition
   * call, e.g. "CONV_2D version 7 is newer than the versions 1..1 this
   * delegate implements". NULL when the node was claimed, or was not in the
   * execution plan of that call. The string is owned by the delegate and
   * valid until the next partition or destroy call on the instance. Called
   * right after partition, on the thread that drives the delegate. */
  const char* (*decline_reason)(void* delegate, int32_t node_index);
} KilnDelegateDeclineReasonsExtension;
#define KILN_DELEGATE_DECLINE_REASONS_EXTENSION_STRUCT_SIZE \
  KILN_STRUCT_SIZE(KilnDelegateDeclineReasonsExtension, decline_reason)

/* ---- Host extensions ----------------------------------------------------
 * Services a host offers through KilnHostApi.get_host_extension(id), each
 * from the extension API version its heading names on (kiln.profiler/1:
 * 1.2; kiln.parallel_for/1: 1.3). Older hosts, and instances capped below
 * that version, return NULL for its id. Each function takes the
 * KilnOpaqueContext of the callback it is called from, so the host knows
 * which interpreter and node it serves; call them only from inside a
 * callback. The structs are static: keep the pointer as long as the
 * plugin is loaded. */

/* kiln.profiler/1: events in the interpreter's profile (Chrome trace
 * events; `kiln bench --profile/--trace`). The host itself records init,
 * prepare and invoke of every node and partition; a plugin adds finer events
 * (e.g. an OpenCL kernel enqueue) nested inside them. */
#define KILN_PROFILER_HOST_EXTENSION_ID "kiln.profiler/1"

typedef struct KilnProfilerHostExtension {
  KilnExtensionBase base; /* base.id == KILN_PROFILER_HOST_EXTENSION_ID */
  /* Starts an event named `name` (copied) in `category` (copied; NULL:
   * "plugin"). Returns a token for end_event, or 0 when profiling is off
   * (then end_event(0) does nothing, so the pair costs one call each). */
  uint64_t (*begin_event)(KilnOpaqueContext* context, const char* name,
                          const char* category);
  /* Ends the event begun with `token` (events nest: end the newest first). */
  void (*end_event)(KilnOpaqueContext* context, uint64_t token);
} KilnProfilerHostExtension;
#define KILN_PROFILER_HOST_EXTENSION_STRUCT_SIZE \
  KILN_STRUCT_SIZE(KilnProfilerHostExtension, end_event)

KILN_STATIC_ASSERT(KILN_PROFILER_HOST_EXTENSION_STRUCT_SIZE ==
                       sizeof(KilnProfilerHostExtension),
                   profiler_host_extension_size_names_last_field);

/* ---- kiln.parallel_for/1 (extension API 1.3) -----------------------------
 * The interpreter's thread pool, shared by every plugin it runs, so that
 * kernels and delegates do not each start threads of their own.
 *
 * Pool: one per interpreter, of InterpreterOptions::num_threads threads
 * (KilnInterpreterOptionsSetNumThreads, `--threads N`; 0 counts as 1),
 * including the thread that calls parallel_for. The host starts the other
 * threads on the first parallel_for that can use them and joins them when
 * the interpreter is destroyed; an interpreter that never calls it has none.
 *
 * Threading and reentrancy:
 *   - Call both functions only from inside a kernel or delegate callback,
 *     with that callback's context, on the thread the host called it on, or
 *     from inside a task of a parallel_for of the same context (nested).
 *   - parallel_for returns when every task it started has returned. Tasks
 *     run on the calling thread and on the pool's threads, concurrently.
 *   - A nested parallel_for (called from a task, on any thread) never waits
 *     for the pool: it runs its whole range on the calling thread, as one
 *     task call with that thread's thread_index. So a kernel that runs on a
 *     pool thread may call parallel_for without deadlock.
 *   - Tasks must not call KilnHostApi functions (they are not thread-safe
 *     for one context); only this extension's functions. Read tensor data
 *     pointers and shapes before the call; a task writes only the outputs
 *     (or scratch) that its range owns.
 *   - Work is split into contiguous ranges of the index space [0, count);
 *     how many ranges, of what length, in what order and on which thread is
 *     unspecified and may differ between calls. For results that do not
 *     depend on the thread count, compute each item independently of the
 *     range it falls in (e.g. split a GEMM over output rows or channels).
 *
 * On a host or instance older than 1.3 get_host_extension returns NULL for
 * this id (hosts before 1.2 have no host extensions at all): check the
 * pointer and base.struct_size (KILN_STRUCT_HAS_FIELD), and run the work
 * serially on the calling thread instead. The C++ SDK's
 * kiln::sdk::ParallelFor (kiln/sdk/parallel.h) does exactly that. */
#define KILN_PARALLEL_FOR_HOST_EXTENSION_ID "kiln.parallel_for/1"

/* One range of a parallel_for: items [begin, end), 0 <= begin < end <=
 * count. thread_index (0 <= thread_index < num_threads(context)) names the
 * thread that runs the call: tasks running at the same time have different
 * indices, so it may pick a per-thread scratch buffer. Returns
 * KILN_STATUS_OK, or an error that parallel_for passes on. */
typedef KilnStatus (*KilnParallelForTask)(void* task_data, int64_t begin,
                                          int64_t end, int32_t thread_index);

typedef struct KilnParallelForHostExtension {
  KilnExtensionBase base; /* base.id == KILN_PARALLEL_FOR_HOST_EXTENSION_ID */
  /* The number of distinct thread_index values a parallel_for from
   * `context` may pass (>= 1): the interpreter's pool size, fixed for its
   * lifetime; 1 when the callback has no interpreter (e.g. a standalone
   * kernel test). Size per-thread scratch with it. */
  int32_t (*num_threads)(KilnOpaqueContext* context);
  /* Runs `task` over [0, count), split into ranges of at least min_range
   * items (the last may be shorter; min_range < 1 counts as 1), and returns
   * after all have returned. count <= 0 calls nothing and returns OK. When
   * a task returns an error, ranges not yet started are skipped and that
   * error is returned (the first one, when several fail); report the reason
   * through report_error after parallel_for returns. NULL task:
   * KILN_STATUS_INVALID_ARGUMENT. */
  KilnStatus (*parallel_for)(KilnOpaqueContext* context, int64_t count,
                             int64_t min_range, KilnParallelForTask task,
                             void* task_data);
} KilnParallelForHostExtension;
#define KILN_PARALLEL_FOR_HOST_EXTENSION_STRUCT_SIZE \
  KILN_STRUCT_SIZE(KilnParallelForHostExtension, parallel_for)

KILN_STATIC_ASSERT(KILN_PARALLEL_FOR_HOST_EXTENSION_STRUCT_SIZE ==
                       sizeof(KilnParallelForHostExtension),
                   parallel_for_host_extension_size_names_last_field);

KILN_EXTERN_C_END

#endif /* KILN_KILN_CAPABILITIES_H_ */
