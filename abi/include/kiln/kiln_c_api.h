/* Kiln application C API: load models, configure plugins and delegates,
 * run inference, query versions. Exported by libkiln.
 *
 * Errors: every function that can fail returns KilnError*, NULL on success.
 * The caller owns a returned error and releases it with KilnErrorDestroy.
 * Unless stated otherwise, out-params are set to NULL/0 on failure.
 *
 * Threading: a KilnModel is immutable after creation and may be shared by
 * any number of interpreters on any threads. A KilnInterpreter (and its
 * signature runners and tensors) must be used by one thread at a time;
 * only KilnInterpreterCancel may be called from another thread meanwhile.
 * KilnInterpreterOptions may be destroyed once interpreters are created.
 */
#ifndef KILN_KILN_C_API_H_
#define KILN_KILN_C_API_H_

#include "kiln/kiln_common.h"
#include "kiln/kiln_version.h"

KILN_EXTERN_C_BEGIN

typedef struct KilnError KilnError;
typedef struct KilnModel KilnModel;
typedef struct KilnInterpreterOptions KilnInterpreterOptions;
typedef struct KilnInterpreter KilnInterpreter;
typedef struct KilnTensor KilnTensor;
typedef struct KilnSignatureRunner KilnSignatureRunner;
typedef struct KilnPluginProbe KilnPluginProbe;

/* ---- Errors ---- */
KILN_API_EXPORT KilnStatus KilnErrorCode(const KilnError* error);
/* Human-readable message; owned by `error`. */
KILN_API_EXPORT const char* KilnErrorMessage(const KilnError* error);
KILN_API_EXPORT void KilnErrorDestroy(KilnError* error);

/* ---- Versions ---- */
KILN_API_EXPORT uint32_t KilnRuntimeVersion(void);
KILN_API_EXPORT const char* KilnRuntimeVersionString(void);
KILN_API_EXPORT uint32_t KilnCApiVersion(void);
KILN_API_EXPORT const char* KilnCApiVersionString(void);
KILN_API_EXPORT uint32_t KilnExtensionApiVersion(void);
KILN_API_EXPORT const char* KilnExtensionApiVersionString(void);
KILN_API_EXPORT uint32_t KilnModelSchemaVersion(void);

typedef struct KilnVersionInfo {
  /* In: set by the caller to KILN_VERSION_INFO_STRUCT_SIZE (or the size of
   * its own, older definition). The library fills only fields inside it. */
  uint32_t struct_size;
  uint32_t runtime_version;    /* KILN_MAKE_VERSION encoding */
  uint32_t c_api_version;
  uint32_t ext_api_version;    /* newest extension API served */
  uint32_t min_ext_api_version; /* oldest plugin extension API accepted */
  uint32_t model_schema_version;
} KilnVersionInfo;
#define KILN_VERSION_INFO_STRUCT_SIZE \
  KILN_STRUCT_SIZE(KilnVersionInfo, model_schema_version)
KILN_STATIC_ASSERT(KILN_VERSION_INFO_STRUCT_SIZE == sizeof(KilnVersionInfo),
                   version_info_size_names_last_field);

/* Fills `info` up to info->struct_size. Fails with INVALID_ARGUMENT when
 * info is NULL or struct_size is smaller than the 1.0 struct. */
KILN_API_EXPORT KilnError* KilnGetVersionInfo(KilnVersionInfo* info);

/* ---- Models ---- */
/* Memory-maps, verifies and validates a .tflite model. The file may be
 * changed or removed afterwards only if the platform keeps mappings valid. */
KILN_API_EXPORT KilnError* KilnModelCreateFromFile(const char* path,
                                                   KilnModel** model);
/* Like KilnModelCreateFromFile over caller-owned bytes. The buffer is not
 * copied and must outlive the model and every interpreter made from it. */
KILN_API_EXPORT KilnError* KilnModelCreateFromBuffer(const void* data,
                                                     size_t size,
                                                     KilnModel** model);
/* The model is reference-counted by its interpreters: destroying it while
 * interpreters exist is safe. NULL is ignored. */
KILN_API_EXPORT void KilnModelDestroy(KilnModel* model);

/* ---- Interpreter options ---- */
KILN_API_EXPORT KilnInterpreterOptions* KilnInterpreterOptionsCreate(void);
KILN_API_EXPORT void KilnInterpreterOptionsDestroy(
    KilnInterpreterOptions* options);
/* Plugins load in this order: explicit paths (in the order added), then
 * every *.so in each added directory (directories in the order added), then
 * the installed default plugin directory (unless disabled). When several
 * plugins implement a node's op version, the first in this order runs it;
 * inside one directory Kiln's own plugins come first, then the others by
 * plugin name and version (never by file name). A plugin whose name is
 * already loaded is skipped with a warning. A plugin that fails to load is
 * reported and skipped; the others still load. */
KILN_API_EXPORT void KilnInterpreterOptionsAddPluginPath(
    KilnInterpreterOptions* options, const char* path);
KILN_API_EXPORT void KilnInterpreterOptionsAddPluginDirectory(
    KilnInterpreterOptions* options, const char* directory);
/* enabled = 0 skips the installed default plugin directory (and the
 * KILN_PLUGIN_PATH environment variable, a ':'-separated directory list
 * searched just before it). */
KILN_API_EXPORT void KilnInterpreterOptionsSetUseDefaultPlugins(
    KilnInterpreterOptions* options, int32_t enabled);
/* Serve plugins at most this extension API version (KILN_MAKE_VERSION);
 * 0 = newest. For testing plugins against older hosts. */
KILN_API_EXPORT KilnError* KilnInterpreterOptionsSetMaxExtensionApiVersion(
    KilnInterpreterOptions* options, uint32_t abi_version);
/* Applies the delegate named `name` (KilnDelegateInterface.name) with
 * serialized Protocol Buffers settings (may be NULL/0). Copied. */
KILN_API_EXPORT void KilnInterpreterOptionsAddDelegate(
    KilnInterpreterOptions* options, const char* name,
    const void* settings, size_t settings_size);
/* Same, with settings in Protocol Buffers text format. */
KILN_API_EXPORT void KilnInterpreterOptionsAddDelegateTextSettings(
    KilnInterpreterOptions* options, const char* name,
    const char* text_settings);

/* ---- Plugin probing (what `kiln version` shows) ---- */
/* Loads every plugin `options` selects (options may be NULL: defaults) and
 * records each one's negotiation result. Owned by the caller. */
KILN_API_EXPORT KilnError* KilnPluginProbeCreate(
    const KilnInterpreterOptions* options, KilnPluginProbe** probe);
KILN_API_EXPORT void KilnPluginProbeDestroy(KilnPluginProbe* probe);
KILN_API_EXPORT int32_t KilnPluginProbeCount(const KilnPluginProbe* probe);
/* Strings are owned by the probe; "" when unknown (e.g. no descriptor). */
KILN_API_EXPORT const char* KilnPluginProbePath(const KilnPluginProbe* probe,
                                               int32_t index);
KILN_API_EXPORT const char* KilnPluginProbeName(const KilnPluginProbe* probe,
                                               int32_t index);
KILN_API_EXPORT const char* KilnPluginProbePluginVersion(
    const KilnPluginProbe* probe, int32_t index);
/* Extension API version the plugin was built against (0 when unknown). */
KILN_API_EXPORT uint32_t KilnPluginProbeAbiVersion(
    const KilnPluginProbe* probe, int32_t index);
/* Negotiated extension API version, 0 when refused. */
KILN_API_EXPORT uint32_t KilnPluginProbeNegotiatedVersion(
    const KilnPluginProbe* probe, int32_t index);
/* 1 if loaded, 0 if refused; RefusalReason is "" when loaded. */
KILN_API_EXPORT int32_t KilnPluginProbeLoaded(const KilnPluginProbe* probe,
                                             int32_t index);
KILN_API_EXPORT const char* KilnPluginProbeRefusalReason(
    const KilnPluginProbe* probe, int32_t index);

/* ---- Interpreter ---- */
/* Loads plugins, resolves every node to a kernel and applies delegates.
 * Fails if a node's op/version is covered by no loaded plugin; the message
 * names the node, op, version, available ranges and plugins. `options` may
 * be NULL. The interpreter keeps the model alive. */
KILN_API_EXPORT KilnError* KilnInterpreterCreate(
    const KilnModel* model, const KilnInterpreterOptions* options,
    KilnInterpreter** interpreter);
KILN_API_EXPORT void KilnInterpreterDestroy(KilnInterpreter* interpreter);
/* Plans memory and prepares every node of the main subgraph. Needed after
 * creation and after any input resize. */
KILN_API_EXPORT KilnError* KilnInterpreterAllocateTensors(
    KilnInterpreter* interpreter);
KILN_API_EXPORT KilnError* KilnInterpreterInvoke(KilnInterpreter* interpreter);
KILN_API_EXPORT int32_t KilnInterpreterInputCount(
    const KilnInterpreter* interpreter);
KILN_API_EXPORT int32_t KilnInterpreterOutputCount(
    const KilnInterpreter* interpreter);
/* Tensors are owned by the interpreter; NULL when index is out of range. */
KILN_API_EXPORT KilnTensor* KilnInterpreterInput(KilnInterpreter* interpreter,
                                                 int32_t index);
KILN_API_EXPORT const KilnTensor* KilnInterpreterOutput(
    const KilnInterpreter* interpreter, int32_t index);
KILN_API_EXPORT KilnError* KilnInterpreterResizeInput(
    KilnInterpreter* interpreter, int32_t index, const int32_t* dims,
    int32_t rank);
/* Bytes of the activation arena after the last AllocateTensors. */
KILN_API_EXPORT uint64_t KilnInterpreterArenaBytes(
    const KilnInterpreter* interpreter);

/* ---- Tensors ---- */
KILN_API_EXPORT KilnTensorType KilnTensorGetType(const KilnTensor* tensor);
KILN_API_EXPORT int32_t KilnTensorNumDims(const KilnTensor* tensor);
KILN_API_EXPORT int32_t KilnTensorDim(const KilnTensor* tensor, int32_t axis);
KILN_API_EXPORT size_t KilnTensorByteSize(const KilnTensor* tensor);
/* NULL before AllocateTensors. Owned by the interpreter. */
KILN_API_EXPORT void* KilnTensorData(const KilnTensor* tensor);
KILN_API_EXPORT const char* KilnTensorName(const KilnTensor* tensor);
/* Quantization (scale, zero point) of a per-tensor quantized tensor;
 * returns 0 and leaves the out-params untouched when not quantized. */
KILN_API_EXPORT int32_t KilnTensorQuantization(const KilnTensor* tensor,
                                               float* scale,
                                               int64_t* zero_point);
/* Copies exactly KilnTensorByteSize bytes; INVALID_ARGUMENT otherwise. */
KILN_API_EXPORT KilnError* KilnTensorCopyFromBuffer(KilnTensor* tensor,
                                                    const void* data,
                                                    size_t size);
KILN_API_EXPORT KilnError* KilnTensorCopyToBuffer(const KilnTensor* tensor,
                                                  void* data, size_t size);

/* ---- Signatures ---- */
KILN_API_EXPORT int32_t KilnInterpreterSignatureCount(
    const KilnInterpreter* interpreter);
/* Owned by the interpreter; NULL when out of range. */
KILN_API_EXPORT const char* KilnInterpreterSignatureKey(
    const KilnInterpreter* interpreter, int32_t index);
/* Owned by the interpreter, valid until it is destroyed. NOT_FOUND names the
 * available keys. */
KILN_API_EXPORT KilnError* KilnInterpreterGetSignatureRunner(
    KilnInterpreter* interpreter, const char* signature_key,
    KilnSignatureRunner** runner);
KILN_API_EXPORT int32_t KilnSignatureRunnerInputCount(
    const KilnSignatureRunner* runner);
KILN_API_EXPORT const char* KilnSignatureRunnerInputName(
    const KilnSignatureRunner* runner, int32_t index);
KILN_API_EXPORT int32_t KilnSignatureRunnerOutputCount(
    const KilnSignatureRunner* runner);
KILN_API_EXPORT const char* KilnSignatureRunnerOutputName(
    const KilnSignatureRunner* runner, int32_t index);
/* NULL when no input/output has that name. */
KILN_API_EXPORT KilnTensor* KilnSignatureRunnerInput(
    KilnSignatureRunner* runner, const char* name);
KILN_API_EXPORT const KilnTensor* KilnSignatureRunnerOutput(
    const KilnSignatureRunner* runner, const char* name);
KILN_API_EXPORT KilnError* KilnSignatureRunnerResizeInput(
    KilnSignatureRunner* runner, const char* name, const int32_t* dims,
    int32_t rank);
KILN_API_EXPORT KilnError* KilnSignatureRunnerAllocateTensors(
    KilnSignatureRunner* runner);
KILN_API_EXPORT KilnError* KilnSignatureRunnerInvoke(
    KilnSignatureRunner* runner);

/* ==== Added in application C API 1.1 ==== */

/* ---- Default plugin directory ---- */
/* The installed default plugin directory of this libkiln, found at run time
 * relative to where libkiln itself is installed (<libdir>/kiln/plugins),
 * never from a configure-time prefix. Owned by libkiln; valid while it is
 * loaded. The directory may not exist (see the origin). */
KILN_API_EXPORT const char* KilnDefaultPluginDirectory(void);
/* How KilnDefaultPluginDirectory was derived, for diagnostics, e.g.
 * "beside libkiln (/usr/lib/x86_64-linux-gnu/libkiln.so.1)"; it ends with
 * "; this directory does not exist" when it is missing. Owned by libkiln. */
KILN_API_EXPORT const char* KilnDefaultPluginDirectoryOrigin(void);

/* ---- Plugins an interpreter considered ---- */
/* Every plugin candidate the interpreter considered and its negotiation
 * outcome, in load order, as a probe read with the KilnPluginProbe*
 * functions. Owned by the caller (KilnPluginProbeDestroy); it may outlive
 * the interpreter. */
KILN_API_EXPORT KilnError* KilnInterpreterGetPluginProbe(
    const KilnInterpreter* interpreter, KilnPluginProbe** probe);

/* ---- Tensors of the main subgraph by tensor index ---- */
/* Number of tensors of the main subgraph (0 when interpreter is NULL). */
KILN_API_EXPORT int32_t
KilnInterpreterTensorCount(const KilnInterpreter* interpreter);
/* The tensor with this index in the main subgraph (the index a .tflite file
 * and LiteRT use); owned by the interpreter; NULL when out of range. Inputs
 * and outputs are the same objects KilnInterpreterInput/Output return. */
KILN_API_EXPORT KilnTensor* KilnInterpreterTensor(KilnInterpreter* interpreter,
                                                  int32_t tensor_index);
/* Tensor index of the main subgraph's input/output number `index`; -1 when
 * out of range. */
KILN_API_EXPORT int32_t KilnInterpreterInputTensorIndex(
    const KilnInterpreter* interpreter, int32_t index);
KILN_API_EXPORT int32_t KilnInterpreterOutputTensorIndex(
    const KilnInterpreter* interpreter, int32_t index);
/* Tensor index (in the signature's subgraph) of the signature input/output
 * called `name`; -1 when there is none. */
KILN_API_EXPORT int32_t KilnSignatureRunnerInputTensorIndex(
    const KilnSignatureRunner* runner, const char* name);
KILN_API_EXPORT int32_t KilnSignatureRunnerOutputTensorIndex(
    const KilnSignatureRunner* runner, const char* name);

/* ---- Tensor details ---- */
/* The model's shape signature: the shape with -1 for every dimension meant
 * to vary (resizable). Equals the model's shape when the model gives no
 * signature; unchanged by resizing. NumDims is -1 when the rank is unknown;
 * Dim is -1 when axis is out of range. */
KILN_API_EXPORT int32_t
KilnTensorShapeSignatureNumDims(const KilnTensor* tensor);
KILN_API_EXPORT int32_t KilnTensorShapeSignatureDim(const KilnTensor* tensor,
                                                    int32_t axis);

/* Full quantization parameters of a tensor: per-tensor (one scale) or
 * per-channel along quantized_dimension. */
typedef struct KilnTensorQuantizationInfo {
  /* In: set by the caller to KILN_TENSOR_QUANTIZATION_INFO_STRUCT_SIZE (or
   * the size of its own, older definition). */
  uint32_t struct_size;
  int32_t num_scales;      /* 0: not quantized */
  int32_t num_zero_points; /* 0 or num_scales */
  int32_t quantized_dimension;
  /* num_scales / num_zero_points entries (NULL when 0), owned by the
   * interpreter, valid until it is destroyed. */
  const float* scales;
  const int64_t* zero_points;
} KilnTensorQuantizationInfo;
#define KILN_TENSOR_QUANTIZATION_INFO_STRUCT_SIZE \
  KILN_STRUCT_SIZE(KilnTensorQuantizationInfo, zero_points)
KILN_STATIC_ASSERT(KILN_TENSOR_QUANTIZATION_INFO_STRUCT_SIZE ==
                       sizeof(KilnTensorQuantizationInfo),
                   tensor_quantization_info_size_names_last_field);

/* Fills `info` up to info->struct_size. INVALID_ARGUMENT when tensor or
 * info is NULL or struct_size is smaller than the 1.1 struct. */
KILN_API_EXPORT KilnError* KilnTensorGetQuantizationInfo(
    const KilnTensor* tensor, KilnTensorQuantizationInfo* info);

/* ---- Nodes (what `kiln inspect` shows for a created interpreter) ---- */
/* Subgraphs of the model; nodes of one subgraph as in the model (partition
 * nodes a delegate adds are not counted). 0 when out of range. */
KILN_API_EXPORT int32_t
KilnInterpreterSubgraphCount(const KilnInterpreter* interpreter);
KILN_API_EXPORT int32_t
KilnInterpreterNodeCount(const KilnInterpreter* interpreter, int32_t subgraph);

typedef struct KilnNodeInfo {
  /* In: set by the caller to KILN_NODE_INFO_STRUCT_SIZE (or the size of its
   * own, older definition). */
  uint32_t struct_size;
  int32_t index;          /* node index in its subgraph */
  int32_t version;        /* operator version */
  int32_t host_intrinsic; /* 1 when the host itself runs the op */
  int32_t delegated;      /* 1 when a delegate runs the node now */
  int32_t partition_node; /* the delegate's partition node, or -1 */
  /* Strings owned by the interpreter, valid until it is destroyed. */
  const char* op;             /* e.g. "CONV_2D", "CUSTOM 'Sinh'" */
  const char* plugin_path;    /* kernel plugin; "" for host ops */
  const char* delegate_name;  /* "" unless delegated */
  const char* decline_reason; /* why requested delegates left it, or "" */
} KilnNodeInfo;
#define KILN_NODE_INFO_STRUCT_SIZE \
  KILN_STRUCT_SIZE(KilnNodeInfo, decline_reason)
KILN_STATIC_ASSERT(KILN_NODE_INFO_STRUCT_SIZE == sizeof(KilnNodeInfo),
                   node_info_size_names_last_field);

/* Fills `info` up to info->struct_size for node `node` of `subgraph`.
 * INVALID_ARGUMENT for NULL arguments or a struct_size smaller than the 1.1
 * struct; OUT_OF_RANGE for a subgraph or node that does not exist. */
KILN_API_EXPORT KilnError* KilnInterpreterGetNodeInfo(
    const KilnInterpreter* interpreter, int32_t subgraph, int32_t node,
    KilnNodeInfo* info);

/* Warnings the interpreter issued so far (a delegate skipped or fallen back
 * to the kernels), also printed on stderr. Strings owned by the
 * interpreter, valid until it is destroyed; NULL when out of range. */
KILN_API_EXPORT int32_t
KilnInterpreterWarningCount(const KilnInterpreter* interpreter);
KILN_API_EXPORT const char* KilnInterpreterWarning(
    const KilnInterpreter* interpreter, int32_t index);

/* ==== Added in application C API 1.2 ==== */

/* ---- Plugin file security ----
 * Before loading a plugin the host refuses a file that other users could
 * have replaced: a file or directory writable by every user (a directory
 * with the sticky bit excepted), or one owned by a user other than the
 * caller (effective uid) or root, as ld.so and the Vulkan loader do.
 * allow != 0 turns these checks off for interpreters created with these
 * options; the checks that the file is a complete ELF shared object for
 * this machine always run. Default 0. */
KILN_API_EXPORT void KilnInterpreterOptionsSetAllowInsecurePlugins(
    KilnInterpreterOptions* options, int32_t allow);

/* ---- Profiling ---- */
/* enabled != 0: interpreters created with these options record profile
 * events from their creation on (delegate create and partition, kernel
 * init), as KilnInterpreterSetProfiling(interpreter, 1) does afterwards. */
KILN_API_EXPORT void KilnInterpreterOptionsSetProfiling(
    KilnInterpreterOptions* options, int32_t enabled);
/* Starts (enabled != 0) or stops recording profile events: one per plugin
 * callback the interpreter makes (kernel init, prepare and invoke; delegate
 * create, partition, partition_init, partition_prepare, partition_invoke;
 * buffer-handle copies), one per node the host runs itself, one per
 * AllocateTensors and per Invoke, plus the events plugins add through the
 * host extension kiln.profiler/1. Per Invoke there is exactly one event of
 * category "invoke" or "partition_invoke" per node executed. Off, nothing
 * is recorded (one pointer test per call). Events recorded are kept until
 * KilnInterpreterClearProfile. */
KILN_API_EXPORT void KilnInterpreterSetProfiling(KilnInterpreter* interpreter,
                                                int32_t enabled);

/* One profile event. Times are microseconds since profiling was first
 * enabled on the interpreter. */
typedef struct KilnProfileEvent {
  /* In: set by the caller to KILN_PROFILE_EVENT_STRUCT_SIZE (or the size of
   * its own, older definition). */
  uint32_t struct_size;
  int32_t run;       /* Invoke number (0-based) it belongs to, -1 outside */
  int32_t subgraph;  /* -1 when none */
  int32_t node;      /* node index (partition node for partitions), or -1 */
  int32_t op_version;  /* 0 when no node */
  int32_t from_plugin; /* 1 when a plugin added it (kiln.profiler/1) */
  uint32_t thread;     /* small number per thread, in order of first use */
  int32_t depth;       /* events enclosing it on its thread */
  double begin_us;
  double duration_us;
  /* Strings owned by the interpreter, valid until the next
   * KilnInterpreterProfileEventCount or KilnInterpreterClearProfile, or
   * until it is destroyed; "" when unknown. */
  const char* name;     /* "CONV_2D", "DELEGATE opencl", "Invoke", ... */
  const char* category; /* "invoke", "partition_invoke", "prepare", ... */
  const char* op;       /* the node's op, "DELEGATE" for partitions */
  const char* plugin_path;
  const char* delegate_name;
} KilnProfileEvent;
#define KILN_PROFILE_EVENT_STRUCT_SIZE \
  KILN_STRUCT_SIZE(KilnProfileEvent, delegate_name)
KILN_STATIC_ASSERT(KILN_PROFILE_EVENT_STRUCT_SIZE == sizeof(KilnProfileEvent),
                   profile_event_size_names_last_field);

/* Takes a snapshot of the events recorded so far (in begin order; events
 * still open end now) and returns how many it holds (0 when interpreter is
 * NULL). KilnInterpreterGetProfileEvent reads that snapshot. */
KILN_API_EXPORT int32_t
KilnInterpreterProfileEventCount(KilnInterpreter* interpreter);
/* Fills `event` up to event->struct_size with event `index` of the latest
 * snapshot. INVALID_ARGUMENT for NULL arguments or a struct_size smaller
 * than the 1.2 struct; OUT_OF_RANGE for an index outside the snapshot. */
KILN_API_EXPORT KilnError* KilnInterpreterGetProfileEvent(
    const KilnInterpreter* interpreter, int32_t index, KilnProfileEvent* event);
/* Forgets every event recorded (and the snapshot); Invoke numbers restart
 * at 0. */
KILN_API_EXPORT void KilnInterpreterClearProfile(KilnInterpreter* interpreter);
/* Writes the events recorded so far to `path` as Chrome trace-event JSON
 * ({"traceEvents": [...]}, complete events with ts/dur in microseconds and
 * args naming subgraph, node, op, version, plugin and delegate), which
 * Perfetto (ui.perfetto.dev) and chrome://tracing open. */
KILN_API_EXPORT KilnError* KilnInterpreterWriteProfileTrace(
    const KilnInterpreter* interpreter, const char* path);

/* ---- Delegate capabilities ---- */
/* The instance of the delegate `delegate_name` this interpreter applied and
 * the capability `extension_id` its plugin offers (a struct starting with
 * KilnExtensionBase, kiln/kiln_plugin.h), e.g. "kiln.opencl_buffers/1" to
 * reach the OpenCL context behind its buffer handles. Both pointers stay
 * valid until the interpreter is destroyed. NOT_FOUND when no such delegate
 * is active or its plugin offers no such capability (the message lists
 * what exists). */
KILN_API_EXPORT KilnError* KilnInterpreterGetDelegateExtension(
    const KilnInterpreter* interpreter, const char* delegate_name,
    const char* extension_id, void** delegate, const void** extension);

/* ---- Delegate buffer handles ---- */
/* Binds `buffer_handle`, a KilnBufferHandle (kiln/kiln_extension.h) of the
 * delegate `delegate_name` that this interpreter applied, to `tensor`, an
 * input or output of the main subgraph or of a signature. What a handle is
 * the delegate documents (OpenCL: a cl_mem of the delegate's context,
 * kiln/opencl/opencl_delegate.h). For an input the buffer holds the value:
 * fill it on the device, or write the tensor with KilnTensorCopyFromBuffer
 * (the host then copies it into the buffer before the delegate reads it).
 * An output is written into the buffer by Invoke; the host copies it to
 * host memory only when KilnTensorData, KilnTensorCopyToBuffer or
 * KilnTensorSyncToHost asks. So a model the delegate runs whole makes no
 * host copy of bound tensors. Passing -1 (KILN_INVALID_BUFFER_HANDLE)
 * unbinds; the host data then holds the tensor's value. The application
 * keeps the memory alive while it is bound; the binding lasts across
 * Invoke and AllocateTensors unless the tensor's size changes (it is then
 * released with a warning). FAILED_PRECONDITION when no such delegate is
 * active or it does not implement buffer handles; INVALID_ARGUMENT for a
 * tensor that is not an input or output of this interpreter. */
KILN_API_EXPORT KilnError* KilnInterpreterSetTensorBufferHandle(
    KilnInterpreter* interpreter, KilnTensor* tensor, const char* delegate_name,
    int64_t buffer_handle);
/* Explicit synchronisation point: makes the tensor's host data current,
 * copying from the delegate buffer bound to it when that holds the newer
 * value. KilnTensorData and KilnTensorCopyToBuffer do the same on their own
 * (since C API 1.2; KilnTensorData returns NULL when the copy fails, this
 * function says why). */
KILN_API_EXPORT KilnError* KilnTensorSyncToHost(const KilnTensor* tensor);

/* ---- Plan cache ----
 * AllocateTensors keeps what it prepared for each input signature (the
 * shapes and types of a subgraph's inputs), so that resizing back to shapes
 * already prepared costs no kernel or delegate prepare and no memory
 * planning for plugins that allow it (extension API 1.2 flags); others are
 * prepared again as before. At most `max_plans` signatures per subgraph are
 * kept, least recently used evicted first. 0 turns the cache off. Default
 * 4. INVALID_ARGUMENT when options is NULL or max_plans is negative. */
KILN_API_EXPORT KilnError* KilnInterpreterOptionsSetPlanCacheSize(
    KilnInterpreterOptions* options, int32_t max_plans);

/* ---- Default delegates and threads ----
 * enabled != 0 (the default): when no delegate is added, an interpreter
 * applies the default delegate "xnnpack" if a loaded plugin provides it
 * (as LiteRT applies XNNPACK by default); when its plugin was found but
 * could not load, the interpreter warns why (KilnInterpreterWarning) and
 * runs on kernel plugins. enabled = 0: only the added delegates. Adding a
 * delegate named "none" also turns the default off. */
KILN_API_EXPORT void KilnInterpreterOptionsSetUseDefaultDelegates(
    KilnInterpreterOptions* options, int32_t enabled);
/* Threads the default delegate (and an added "xnnpack" delegate whose
 * settings name no num_threads) may use; 0 = its default, one thread. Also
 * the size of the interpreter's thread pool that kernel plugins share
 * through the host extension kiln.parallel_for/1 (0 counts as 1).
 * INVALID_ARGUMENT when options is NULL or num_threads is negative. */
KILN_API_EXPORT KilnError* KilnInterpreterOptionsSetNumThreads(
    KilnInterpreterOptions* options, int32_t num_threads);

typedef struct KilnPlanCacheStats {
  /* In: set by the caller to KILN_PLAN_CACHE_STATS_STRUCT_SIZE. */
  uint32_t struct_size;
  int32_t max_plans; /* per subgraph, as configured; 0: off */
  /* Since the interpreter was created, over all subgraphs: */
  uint64_t hits;      /* AllocateTensors that restored a cached plan */
  uint64_t misses;    /* AllocateTensors that prepared (all, when off) */
  uint64_t evictions; /* plans dropped to stay within max_plans */
  /* Held now: */
  uint64_t plans;
  /* Host memory of the held plans (tensor shapes, arena layouts). The
   * plugin states they hold are opaque to the host and not included. */
  uint64_t bytes;
  uint64_t plugin_states; /* node and partition states held */
} KilnPlanCacheStats;
#define KILN_PLAN_CACHE_STATS_STRUCT_SIZE \
  KILN_STRUCT_SIZE(KilnPlanCacheStats, plugin_states)
KILN_STATIC_ASSERT(KILN_PLAN_CACHE_STATS_STRUCT_SIZE ==
                       sizeof(KilnPlanCacheStats),
                   plan_cache_stats_size_names_last_field);

/* Fills `stats` up to stats->struct_size. INVALID_ARGUMENT for NULL
 * arguments or a struct_size smaller than this struct. */
KILN_API_EXPORT KilnError* KilnInterpreterGetPlanCacheStats(
    const KilnInterpreter* interpreter, KilnPlanCacheStats* stats);

/* ---- Limits for models from untrusted sources (docs/security.md) ---- */
/* Bytes of tensor memory an interpreter may plan and allocate: any one
 * tensor, and the activation arenas of all its subgraphs together. A model
 * that needs more is refused with RESOURCE_EXHAUSTED, the message naming
 * the tensor and the limit: at KilnInterpreterCreate (declared shapes),
 * resize, KilnInterpreterAllocateTensors or, for tensors sized while
 * running, KilnInterpreterInvoke. 0 restores the default, 4 GiB
 * (4294967296). INVALID_ARGUMENT when options is NULL. */
KILN_API_EXPORT KilnError* KilnInterpreterOptionsSetMaxArenaBytes(
    KilnInterpreterOptions* options, uint64_t max_bytes);
/* Iterations one WHILE node may run in one Invoke; a loop that would run
 * more fails the Invoke with RESOURCE_EXHAUSTED naming the node. 0 (the
 * default): no limit. INVALID_ARGUMENT when options is NULL. */
KILN_API_EXPORT KilnError* KilnInterpreterOptionsSetMaxWhileIterations(
    KilnInterpreterOptions* options, uint64_t max_iterations);
/* Wall-clock limit of one Invoke, in milliseconds: past it the Invoke stops
 * before its next node or WHILE iteration and returns DEADLINE_EXCEEDED
 * naming where it stopped. 0 (the default): no limit. INVALID_ARGUMENT when
 * options is NULL or timeout_ms is negative. */
KILN_API_EXPORT KilnError* KilnInterpreterOptionsSetInvokeTimeout(
    KilnInterpreterOptions* options, int64_t timeout_ms);
/* Stops the Invoke in progress on `interpreter` (KilnInterpreterInvoke or
 * KilnSignatureRunnerInvoke, any subgraph) before its next node or WHILE
 * iteration: that Invoke returns CANCELLED. A node already running
 * finishes first. Has no effect on Invokes that start after it returns (a
 * call while nothing runs does nothing). The interpreter stays usable: the
 * next Invoke runs the model from the start.
 * Thread-safety: the one function that may be called from another thread
 * while the interpreter runs; not concurrently with KilnInterpreterDestroy.
 * NULL is ignored. */
KILN_API_EXPORT void KilnInterpreterCancel(KilnInterpreter* interpreter);

KILN_EXTERN_C_END

#endif /* KILN_KILN_C_API_H_ */
