/* Kiln extension API: what kernel and delegate plugins see of the host.
 *
 * Plugins never link against libkiln. Every host service reaches a plugin as a
 * function pointer in KilnHostApi, handed over at the plugin's entry point
 * (kiln_plugin.h). All host objects are opaque handles.
 *
 * Compatibility rules (normative text: docs/abi-policy.md):
 *   - Every struct crossing the boundary starts with uint32_t struct_size.
 *   - Within major version 1, fields are only appended. Each "Extension API
 *     1.N" marker below starts the fields added in that minor version.
 *   - A reader touches only fields inside the struct_size the writer
 *     declared (KILN_STRUCT_HAS_FIELD).
 *   - No C enums, no C++ types, no exceptions cross the boundary.
 *
 * Threading: the host calls a plugin's callbacks for one interpreter from one
 * thread at a time. Different interpreters may call the same plugin
 * concurrently, so plugin-global state must be thread-safe. Host API
 * functions are safe to call from any thread for objects that the calling
 * callback was handed.
 */
#ifndef KILN_KILN_EXTENSION_H_
#define KILN_KILN_EXTENSION_H_

#include "kiln/kiln_builtin_ops.h"
#include "kiln/kiln_common.h"
#include "kiln/kiln_version.h"

KILN_EXTERN_C_BEGIN

/* Opaque host objects. Lifetimes:
 *   KilnOpaqueContext: valid for the duration of the callback it is passed
 *     to; never store it.
 *   KilnOpaqueNode: a kernel's node is valid from its init until its free;
 *     a partition node from partition_init until partition_free. Node
 *     handles a delegate obtains from a context (context_node) are valid
 *     until that delegate instance is destroyed.
 *   KilnOpaqueTensor: handles from node_input/node_output/context_tensor
 *     are valid as long as the node (or delegate instance) they were
 *     obtained through; the tensor's data pointer is valid only during the
 *     prepare/invoke call that read it (the arena may move between calls).
 * Strings and arrays the host returns (tensor_name, node_custom_name, option
 * arrays, node_delegated_nodes, context_execution_plan) are owned by the
 * host and valid as long as the handle they were read from, unless a
 * function says otherwise. */
typedef struct KilnOpaqueContext KilnOpaqueContext;
typedef struct KilnOpaqueNode KilnOpaqueNode;
typedef struct KilnOpaqueTensor KilnOpaqueTensor;

/* ---- Builtin operator options ----------------------------------------
 * Options are read by key through KilnHostApi.node_option_*. Keys are
 * append-only; a key an op does not have reads as KILN_STATUS_NOT_FOUND.
 * Value kinds: I = integer, F = float, A = int32 array. Integer encodings
 * are the TFLite schema's (padding: 0 SAME, 1 VALID; activation below). */
#define KILN_OPTION_FUSED_ACTIVATION 1            /* I: KILN_ACTIVATION_* */
#define KILN_OPTION_PADDING 2                     /* I: KILN_PADDING_* */
#define KILN_OPTION_STRIDE_W 3                    /* I */
#define KILN_OPTION_STRIDE_H 4                    /* I */
#define KILN_OPTION_DILATION_W 5                  /* I, default 1 */
#define KILN_OPTION_DILATION_H 6                  /* I, default 1 */
#define KILN_OPTION_DEPTH_MULTIPLIER 7            /* I */
#define KILN_OPTION_FILTER_W 8                    /* I */
#define KILN_OPTION_FILTER_H 9                    /* I */
#define KILN_OPTION_KEEP_NUM_DIMS 10              /* I: bool */
#define KILN_OPTION_WEIGHTS_FORMAT 11             /* I */
#define KILN_OPTION_ASYMMETRIC_QUANTIZE_INPUTS 12 /* I: bool */
#define KILN_OPTION_BETA 13                       /* F */
#define KILN_OPTION_AXIS 14                       /* I */
#define KILN_OPTION_KEEP_DIMS 15                  /* I: bool */
#define KILN_OPTION_NEW_SHAPE 16                  /* A */
#define KILN_OPTION_SQUEEZE_DIMS 17               /* A */
#define KILN_OPTION_BEGIN_MASK 18                 /* I */
#define KILN_OPTION_END_MASK 19                   /* I */
#define KILN_OPTION_ELLIPSIS_MASK 20              /* I */
#define KILN_OPTION_NEW_AXIS_MASK 21              /* I */
#define KILN_OPTION_SHRINK_AXIS_MASK 22           /* I */
#define KILN_OPTION_OFFSET 23                     /* I: bool */
#define KILN_OPTION_BATCH_DIMS 24                 /* I */
#define KILN_OPTION_NUM_SPLITS 25                 /* I */
#define KILN_OPTION_VALUES_COUNT 26               /* I */
#define KILN_OPTION_NUM 27                        /* I */
#define KILN_OPTION_ADJ_X 28                      /* I: bool */
#define KILN_OPTION_ADJ_Y 29                      /* I: bool */
#define KILN_OPTION_ALIGN_CORNERS 30              /* I: bool */
#define KILN_OPTION_HALF_PIXEL_CENTERS 31         /* I: bool */
#define KILN_OPTION_ALPHA 32                      /* F */
#define KILN_OPTION_OUTPUT_TYPE 33                /* I: KILN_TYPE_* */
#define KILN_OPTION_IN_DATA_TYPE 34               /* I: KILN_TYPE_* */
#define KILN_OPTION_OUT_DATA_TYPE 35              /* I: KILN_TYPE_* */
#define KILN_OPTION_MIRROR_PAD_MODE 36 /* I: 0 REFLECT, 1 SYMMETRIC */
#define KILN_OPTION_BLOCK_SIZE 37      /* I */
#define KILN_OPTION_APPROXIMATE 38     /* I: bool */
#define KILN_OPTION_POT_SCALE_INT16 39 /* I: bool */
/* Extension API 1.3: LSTMOptions / UnidirectionalSequenceLSTMOptions. */
#define KILN_OPTION_CELL_CLIP 40                  /* F: 0 = no clipping */
#define KILN_OPTION_PROJ_CLIP 41                  /* F: 0 = no clipping */
#define KILN_OPTION_LSTM_KERNEL_TYPE 42           /* I: 0 FULL, 1 BASIC */
#define KILN_OPTION_TIME_MAJOR 43                 /* I: bool */
#define KILN_OPTION_DIAGONAL_RECURRENT_TENSORS 44 /* I: bool */
/* Extension API 1.3: Conv3DOptions' depth stride and dilation (its other
 * fields read through the 2-D keys: padding, stride/dilation W and H, fused
 * activation). 40-44 are LSTMOptions' keys. */
#define KILN_OPTION_STRIDE_D 45   /* I */
#define KILN_OPTION_DILATION_D 46 /* I, default 1 */

#define KILN_PADDING_SAME 0
#define KILN_PADDING_VALID 1

#define KILN_ACTIVATION_NONE 0
#define KILN_ACTIVATION_RELU 1
#define KILN_ACTIVATION_RELU_N1_TO_1 2
#define KILN_ACTIVATION_RELU6 3
#define KILN_ACTIVATION_TANH 4
#define KILN_ACTIVATION_SIGN_BIT 5

/* ---- Kernels ------------------------------------------------------------
 * A kernel implements one operator for an inclusive range of op versions.
 * The host calls, per node: init once, prepare after every shape change,
 * invoke per inference, free once. All calls for one node come from one
 * thread at a time. Callbacks must not throw or longjmp across the boundary.
 * On failure a callback returns a non-OK status and should first call
 * KilnHostApi.report_error with the reason; the host adds the node, op and
 * plugin path. */
typedef struct KilnKernel {
  uint32_t struct_size; /* KILN_KERNEL_STRUCT_SIZE */
  /* KILN_OP_* code; KILN_OP_CUSTOM together with custom_name. */
  int32_t builtin_code;
  /* Custom op name (NUL-terminated, static) or NULL for builtin ops. */
  const char* custom_name;
  /* Inclusive op-version range whose semantics this kernel implements;
   * 1 <= min_version <= max_version. */
  int32_t min_version;
  int32_t max_version;
  /* Passed back unchanged as the first argument of every callback. */
  void* user_data;
  /* Optional. Creates per-node state in *node_state (NULL allowed). On
   * failure *node_state is ignored and free is not called. */
  KilnStatus (*init)(void* user_data, KilnOpaqueContext* context,
                     KilnOpaqueNode* node, void** node_state);
  /* Optional. Releases node_state; called once for every successful init. */
  void (*free)(void* user_data, void* node_state);
  /* Optional. Validates types and shapes and sizes the outputs through
   * KilnHostApi.tensor_resize. */
  KilnStatus (*prepare)(void* user_data, void* node_state,
                        KilnOpaqueContext* context, KilnOpaqueNode* node);
  /* Required. Computes the outputs. */
  KilnStatus (*invoke)(void* user_data, void* node_state,
                       KilnOpaqueContext* context, KilnOpaqueNode* node);

  /* ---- Extension API 1.2 ---- */

  /* KILN_KERNEL_FLAG_* bits; 0 for none. Hosts older than 1.2 never read
   * it. */
  uint64_t flags;
} KilnKernel;
#define KILN_KERNEL_STRUCT_SIZE_1_0 KILN_STRUCT_SIZE(KilnKernel, invoke)
#define KILN_KERNEL_STRUCT_SIZE KILN_STRUCT_SIZE(KilnKernel, flags)

/* The host may keep one node state per input-shape signature it has
 * prepared (init + prepare each), and switch among them without calling
 * prepare again; a state is only ever invoked with the shapes it was
 * prepared for. Without the flag the host keeps one state and calls prepare
 * after every shape change (the 1.0/1.1 behaviour). (Extension API 1.2) */
#define KILN_KERNEL_FLAG_STATE_PER_SHAPE_SIGNATURE ((uint64_t)1)

/* An opaque reference to memory a delegate owns (e.g. an OpenCL buffer),
 * bound to a tensor. Values are the owning delegate's own; the host only
 * stores and compares them. (Extension API 1.2) */
typedef int64_t KilnBufferHandle;
#define KILN_INVALID_BUFFER_HANDLE ((KilnBufferHandle)-1)

/* One row of what a delegate declares it can claim (extension API 1.2). The
 * host refuses a claim of a node whose op, version or tensor types no row
 * covers. */
typedef struct KilnDelegateOpSupport {
  uint32_t struct_size; /* KILN_DELEGATE_OP_SUPPORT_STRUCT_SIZE */
  /* KILN_OP_* code; KILN_OP_CUSTOM together with custom_name. */
  int32_t builtin_code;
  /* Custom op name (static) or NULL for builtin ops. */
  const char* custom_name;
  /* Inclusive op-version range the delegate may claim. */
  int32_t min_version;
  int32_t max_version;
  /* KILN_TYPE_* values every input and output tensor of a claimed node must
   * have (omitted optional inputs excepted); num_tensor_types == 0 (and
   * tensor_types NULL) accepts any type. */
  uint32_t num_tensor_types;
  const int32_t* tensor_types;
} KilnDelegateOpSupport;
#define KILN_DELEGATE_OP_SUPPORT_STRUCT_SIZE \
  KILN_STRUCT_SIZE(KilnDelegateOpSupport, tensor_types)

/* ---- Delegates -----------------------------------------------------------
 * A delegate claims sets of nodes of a subgraph and runs each maximal
 * connected set (a "partition") as one node. It must refuse every node whose
 * op version exceeds what its implementation supports. */
typedef struct KilnDelegateInterface {
  uint32_t struct_size; /* KILN_DELEGATE_INTERFACE_STRUCT_SIZE */
  /* Short name users select it by, e.g. "opencl". Static string. */
  const char* name;
  /* Fully qualified Protocol Buffers message name of the settings this
   * delegate parses (e.g. "kiln.delegates.OpenClSettings"), or NULL. Static
   * string. Since 1.2, a type other than "kiln.DelegateSettings" names the
   * message carried in kiln.DelegateSettings.vendor_settings. */
  const char* settings_type;
  void* user_data;
  /* Required. Creates a delegate instance from serialized settings (may be
   * NULL/0: defaults; the buffer is valid only during this call, so copy
   * what the instance keeps). A delegate that cannot run here (no device)
   * returns KILN_STATUS_UNAVAILABLE with the reason via report_error. On
   * failure *delegate is ignored. */
  KilnStatus (*create)(void* user_data, KilnOpaqueContext* context,
                       const uint8_t* settings, uint64_t settings_size,
                       void** delegate);
  /* Required. Destroys an instance made by create. */
  void (*destroy)(void* user_data, void* delegate);
  /* Required. Inspects the subgraph in `context` (execution plan, nodes,
   * op versions) and calls KilnHostApi.context_delegate_nodes with the nodes
   * it claims. Claiming nothing is success. */
  KilnStatus (*partition)(void* delegate, KilnOpaqueContext* context);
  /* The kernel of one partition node. The partition's inputs and outputs are
   * the node's inputs and outputs; KilnHostApi.node_delegated_nodes lists the
   * original nodes. init and invoke are required, prepare and free optional.
   * If init, prepare or invoke fails, the host warns once and runs the
   * partition's original nodes on kernel plugins instead. */
  KilnStatus (*partition_init)(void* delegate, KilnOpaqueContext* context,
                               KilnOpaqueNode* partition, void** state);
  void (*partition_free)(void* delegate, void* state);
  KilnStatus (*partition_prepare)(void* delegate, void* state,
                                  KilnOpaqueContext* context,
                                  KilnOpaqueNode* partition);
  KilnStatus (*partition_invoke)(void* delegate, void* state,
                                 KilnOpaqueContext* context,
                                 KilnOpaqueNode* partition);

  /* ---- Extension API 1.2 ---- */

  /* What this delegate may claim: num_supported_ops rows, static, checked
   * when the plugin loads (a malformed row refuses the plugin). A 1.2 host
   * refuses a claim that no row covers: creating the interpreter fails,
   * naming the delegate, its plugin, the node, op, version and offending
   * type. NULL/0 declares nothing: the host then accepts any claim, as
   * 1.0/1.1 hosts do, and reports the delegate as undeclared. */
  const KilnDelegateOpSupport* const* supported_ops;
  uint32_t num_supported_ops;
  /* KILN_DELEGATE_FLAG_* bits; 0 for none. */
  uint32_t flags;
  /* A serialized google.protobuf.FileDescriptorSet that defines
   * settings_type (and what it imports), static; NULL/0 when the delegate
   * has no settings message of its own. Checked when the plugin loads (a set
   * that does not define settings_type refuses the plugin). With it the
   * host parses a user's text or binary settings of that type into the
   * binary message the delegate receives in create, inside
   * kiln.DelegateSettings.vendor_settings. */
  const uint8_t* settings_descriptor_set;
  uint64_t settings_descriptor_set_size;
  /* Buffer handles (optional, all three or none). The host calls them on
   * the thread that drives the delegate, between other callbacks.
   * copy_from_buffer_handle: copies the contents of `handle` into the host
   *   memory of `tensor` (tensor_data), before a reader that is not a
   *   partition of this delegate instance (a kernel, another delegate, the
   *   application) reads a tensor whose host data is stale.
   * copy_to_buffer_handle: copies the host memory of `tensor` into
   *   `handle`, before a partition of this delegate reads a tensor whose
   *   host data was written after the handle was bound (e.g. an input the
   *   application set).
   * free_buffer_handle: the host no longer refers to `handle` (the tensor
   *   was rebound, resized or destroyed); called at most once per bound
   *   handle, before destroy. */
  KilnStatus (*copy_from_buffer_handle)(void* delegate,
                                        KilnOpaqueContext* context,
                                        KilnBufferHandle handle,
                                        KilnOpaqueTensor* tensor);
  KilnStatus (*copy_to_buffer_handle)(void* delegate,
                                      KilnOpaqueContext* context,
                                      KilnBufferHandle handle,
                                      KilnOpaqueTensor* tensor);
  void (*free_buffer_handle)(void* delegate, KilnBufferHandle handle);
} KilnDelegateInterface;
#define KILN_DELEGATE_INTERFACE_STRUCT_SIZE_1_0 \
  KILN_STRUCT_SIZE(KilnDelegateInterface, partition_invoke)
#define KILN_DELEGATE_INTERFACE_STRUCT_SIZE \
  KILN_STRUCT_SIZE(KilnDelegateInterface, free_buffer_handle)

/* The host may keep one partition state per input-shape signature it has
 * prepared (partition_init + partition_prepare each), and switch among them
 * without calling partition_prepare again; a state is only ever invoked with
 * the shapes it was prepared for. Without the flag the host keeps one state
 * and calls partition_prepare after every shape change. (Extension API
 * 1.2) */
#define KILN_DELEGATE_FLAG_STATE_PER_SHAPE_SIGNATURE ((uint32_t)1)

/* Quantization parameters of a tensor (extension API 1.1).
 * real_value = scale * (quantized_value - zero_point). Per-tensor
 * quantization has num_channels == 1; per-channel quantization has one scale
 * and zero point per index of dimension quantized_dimension; blockwise
 * quantization (1.3, block_size > 0) has one per block, described below. */
typedef struct KilnQuantizationParams {
  /* In: the caller's KILN_QUANTIZATION_PARAMS_STRUCT_SIZE. The host fills
   * only fields inside it. */
  uint32_t struct_size;
  /* Number of scales and zero points; 0 when the tensor is not quantized. */
  int32_t num_channels;
  int32_t quantized_dimension;
  /* Arrays of num_channels entries, owned by the host and valid as long as
   * the tensor handle. NULL when num_channels is 0. */
  const float* scales;
  const int64_t* zero_points;

  /* ---- Extension API 1.3 ---- */

  /* 0 unless the tensor is quantized blockwise (a model's
   * BlockwiseQuantization details, as ai-edge-quantizer writes for INT4
   * FULLY_CONNECTED weights). Blockwise tensors have rank 2, [rows, cols]
   * (the host refuses other ranks at load), and cols is a multiple of
   * block_size: each row is split into cols / block_size blocks of block_size
   * consecutive elements, each block with its own scale and zero point.
   * Then quantized_dimension is 0 (one row of blocks per index of dimension
   * 0), block_dimension is 1 (the dimension the blocks run along),
   * num_channels is rows * (cols / block_size), and scales and zero_points
   * are laid out row-major over [rows, cols / block_size]: element (r, c)
   * has scale scales[r * (cols / block_size) + c / block_size]. The host
   * converts the model's scale tensor (FLOAT16 or FLOAT32) to float32 once
   * at load; zero_points are all 0 when the model gives none (symmetric).
   * block_dimension is 0 when block_size is 0. */
  int32_t block_size;
  int32_t block_dimension;
} KilnQuantizationParams;
/* Size of the struct in each minor version that changed it. A blockwise
 * tensor is reported only to callers whose struct_size holds
 * block_dimension (see KilnHostApi.tensor_quantization). */
#define KILN_QUANTIZATION_PARAMS_STRUCT_SIZE_1_1 \
  KILN_STRUCT_SIZE(KilnQuantizationParams, zero_points)
#define KILN_QUANTIZATION_PARAMS_STRUCT_SIZE_1_3 \
  KILN_STRUCT_SIZE(KilnQuantizationParams, block_dimension)
#define KILN_QUANTIZATION_PARAMS_STRUCT_SIZE \
  KILN_QUANTIZATION_PARAMS_STRUCT_SIZE_1_3

/* ---- Host services -------------------------------------------------------
 * The table the host hands a plugin at entry (and, negotiated, at
 * initialize): one per load instance, sized for the version that instance
 * serves. Valid until that instance's shutdown (hosts older than 1.2: until
 * the plugin is unloaded). Check KILN_STRUCT_HAS_FIELD(KilnHostApi, api->struct_size, f)
 * before calling any function added after the plugin's minimum host version.
 * Unless stated otherwise, a function given an index out of range returns
 * NULL, -1, or KILN_STATUS_OUT_OF_RANGE. */
typedef struct KilnHostApi {
  uint32_t struct_size; /* KILN_HOST_API_STRUCT_SIZE of the host's version */
  /* Extension API version of this table (KILN_MAKE_VERSION). */
  uint32_t abi_version;

  /* ---- Extension API 1.0 ---- */

  /* Records an error for the current callback. The host prefixes it with the
   * subgraph, node, op and plugin. `message` is copied. */
  void (*report_error)(KilnOpaqueContext* context, KilnStatus code,
                       const char* message);
  /* Logs a message at KILN_LOG_* severity; `message` is copied. context may
   * be NULL. The host prints what reaches its log level (default: warnings
   * and errors) and keeps every message logged during the entry point and
   * initialize (1.2) with the plugin's load record, quoted on refusal. */
  void (*log)(KilnOpaqueContext* context, int32_t severity,
              const char* message);

  /* Tensors. */
  KilnTensorType (*tensor_type)(const KilnOpaqueTensor* tensor);
  /* Rank, or -1 when unknown. */
  int32_t (*tensor_rank)(const KilnOpaqueTensor* tensor);
  /* Extent of one dimension (-1: dynamic, not yet known). */
  int32_t (*tensor_dim)(const KilnOpaqueTensor* tensor, int32_t axis);
  uint64_t (*tensor_byte_size)(const KilnOpaqueTensor* tensor);
  /* Data buffer, or NULL before allocation. Writable for non-constant
   * tensors. Owned by the host. */
  void* (*tensor_data)(const KilnOpaqueTensor* tensor);
  /* Name (owned by the host; "" when the model gives none). */
  const char* (*tensor_name)(const KilnOpaqueTensor* tensor);
  /* 1 if the tensor's values come from the model (weights), else 0. */
  int32_t (*tensor_is_constant)(const KilnOpaqueTensor* tensor);
  /* Sets the shape of an output tensor during prepare. dims is copied. */
  KilnStatus (*tensor_resize)(KilnOpaqueContext* context,
                              KilnOpaqueTensor* tensor, int32_t rank,
                              const int32_t* dims);

  /* Nodes. */
  int32_t (*node_builtin_code)(const KilnOpaqueNode* node);
  /* Custom op name or NULL for builtin ops. Owned by the host. */
  const char* (*node_custom_name)(const KilnOpaqueNode* node);
  int32_t (*node_op_version)(const KilnOpaqueNode* node);
  int32_t (*node_num_inputs)(const KilnOpaqueNode* node);
  /* NULL for an omitted optional input (index -1 in the model). */
  KilnOpaqueTensor* (*node_input)(KilnOpaqueContext* context,
                                  const KilnOpaqueNode* node, int32_t index);
  int32_t (*node_num_outputs)(const KilnOpaqueNode* node);
  KilnOpaqueTensor* (*node_output)(KilnOpaqueContext* context,
                                   const KilnOpaqueNode* node, int32_t index);
  /* Option readers (keys: KILN_OPTION_*). On KILN_STATUS_NOT_FOUND the
   * out-params are untouched. Array pointers stay valid as long as the
   * node. */
  KilnStatus (*node_option_int)(const KilnOpaqueNode* node, uint32_t key,
                                int64_t* value);
  KilnStatus (*node_option_float)(const KilnOpaqueNode* node, uint32_t key,
                                  float* value);
  KilnStatus (*node_option_int_array)(const KilnOpaqueNode* node, uint32_t key,
                                      const int32_t** values, int32_t* count);
  /* Raw custom options (FlexBuffers for converter-made custom ops). On a
   * node without them, *data is NULL and *size 0. Valid as long as the node. */
  KilnStatus (*node_custom_options)(const KilnOpaqueNode* node,
                                    const uint8_t** data, uint64_t* size);

  /* Subgraph view (for delegates). */
  /* Node indices in execution order; valid for the callback. */
  KilnStatus (*context_execution_plan)(KilnOpaqueContext* context,
                                       const int32_t** node_indices,
                                       int32_t* count);
  KilnOpaqueNode* (*context_node)(KilnOpaqueContext* context,
                                  int32_t node_index);
  int32_t (*context_num_tensors)(KilnOpaqueContext* context);
  KilnOpaqueTensor* (*context_tensor)(KilnOpaqueContext* context,
                                      int32_t tensor_index);
  /* Only inside KilnDelegateInterface.partition: claims nodes for the
   * calling delegate. The host splits them into maximal connected sets that
   * keep execution order valid. node_indices is copied. */
  KilnStatus (*context_delegate_nodes)(KilnOpaqueContext* context,
                                       const int32_t* node_indices,
                                       int32_t count);
  /* For a partition node: the original node indices it replaced. */
  KilnStatus (*node_delegated_nodes)(const KilnOpaqueNode* partition,
                                     const int32_t** node_indices,
                                     int32_t* count);
  /* Tensor index of node input/output `index` (-1 when omitted). */
  int32_t (*node_input_index)(const KilnOpaqueNode* node, int32_t index);
  int32_t (*node_output_index)(const KilnOpaqueNode* node, int32_t index);

  /* Optional host capabilities by id ("kiln.<name>/<revision>"); NULL when
   * the host does not offer it (and for a NULL id). The returned struct
   * starts with KilnExtensionBase, is static, owned by the host, and stays
   * valid until the plugin is unloaded. The table of an instance at
   * extension API 1.N offers only the host extensions of 1.N and earlier:
   * kiln_capabilities.h ("Host extensions") lists each id with the version
   * that introduced it; 1.0/1.1 tables offer none. */
  const void* (*get_host_extension)(const char* id);

  /* ---- Extension API 1.1 ---- */

  /* Fills `params` (up to params->struct_size) with the tensor's
   * quantization. Returns INVALID_ARGUMENT if params is NULL or its
   * struct_size is smaller than the 1.1 struct; on failure params is
   * untouched. A tensor that is not quantized yields num_channels == 0.
   * (1.3) A blockwise-quantized tensor with a struct_size that does not hold
   * block_dimension (a caller built for 1.1 or 1.2, which would read the
   * block scales as per-channel scales) returns UNIMPLEMENTED, params
   * untouched; hosts older than 1.3 do not read blockwise quantization and
   * report such a tensor as not quantized (num_channels == 0). */
  KilnStatus (*tensor_quantization)(const KilnOpaqueTensor* tensor,
                                    KilnQuantizationParams* params);

  /* ---- Extension API 1.2 ---- */

  /* Only a delegate, during partition_prepare or partition_invoke, for an
   * input or output tensor of that partition: binds `handle` (memory the
   * calling delegate instance owns) to `tensor`. host_data_stale != 0 says
   * the handle holds a newer value than tensor_data (the delegate wrote the
   * device copy only); the host then calls copy_from_buffer_handle before a
   * reader outside this delegate instance needs the host copy. Binding
   * KILN_INVALID_BUFFER_HANDLE unbinds. A handle previously bound to the
   * tensor is released through free_buffer_handle unless it is the same
   * handle. FAILED_PRECONDITION outside those callbacks or for a delegate
   * without buffer-handle callbacks. */
  KilnStatus (*tensor_set_buffer_handle)(KilnOpaqueContext* context,
                                         KilnOpaqueTensor* tensor,
                                         KilnBufferHandle handle,
                                         int32_t host_data_stale);
  /* The handle bound to `tensor` if the calling delegate instance owns it,
   * else KILN_INVALID_BUFFER_HANDLE (then tensor_data is current). Valid
   * for the current callback. */
  KilnBufferHandle (*tensor_buffer_handle)(KilnOpaqueContext* context,
                                           const KilnOpaqueTensor* tensor);
  /* Only during KilnKernel.prepare, on an output of the node being prepared
   * that is neither constant, a variable, a string tensor nor a subgraph
   * input: sets its element type (as TFLite's ADD does with
   * `output->type = input->type` for models that declare a quantized add's
   * output FLOAT32) to a fixed-size KILN_TYPE_* (not STRING, RESOURCE or
   * VARIANT). tensor_type and the host's memory planning then use it until
   * the node is prepared again. FAILED_PRECONDITION otherwise, with the
   * reason through report_error. */
  KilnStatus (*tensor_set_type)(KilnOpaqueContext* context,
                                KilnOpaqueTensor* tensor, KilnTensorType type);

  /* ---- Extension API 1.3 ---- */

  /* Number of the node's intermediate tensors (the model operator's
   * `intermediates`: scratch tensors whose quantization carries scales a
   * kernel needs, such as a quantized LSTM's gate and hidden-state scales);
   * 0 when it has none, -1 for a NULL node. */
  int32_t (*node_num_intermediates)(const KilnOpaqueNode* node);
  /* Intermediate tensor `index` of the node; NULL when index is out of
   * range or the model omits it (index -1). Lifetime as node_input. */
  KilnOpaqueTensor* (*node_intermediate)(KilnOpaqueContext* context,
                                         const KilnOpaqueNode* node,
                                         int32_t index);
} KilnHostApi;
/* Size of the host table in each released minor version. */
#define KILN_HOST_API_STRUCT_SIZE_1_0 \
  KILN_STRUCT_SIZE(KilnHostApi, get_host_extension)
#define KILN_HOST_API_STRUCT_SIZE_1_1 \
  KILN_STRUCT_SIZE(KilnHostApi, tensor_quantization)
#define KILN_HOST_API_STRUCT_SIZE_1_2 \
  KILN_STRUCT_SIZE(KilnHostApi, tensor_set_type)
/* 1.3 appends node_num_intermediates and node_intermediate. */
#define KILN_HOST_API_STRUCT_SIZE_1_3 \
  KILN_STRUCT_SIZE(KilnHostApi, node_intermediate)
#define KILN_HOST_API_STRUCT_SIZE KILN_HOST_API_STRUCT_SIZE_1_3

KILN_EXTERN_C_END

#endif /* KILN_KILN_EXTENSION_H_ */
