// Kiln plugin SDK: the checks a kernel runs on its node and tensors, with one
// message template for every refusal.
//
// Each Expect*/Read* check reports through KernelContext::Fail and returns
// the status, so a kernel's prepare reads as a list:
//   KILN_SDK_RETURN_IF_ERROR(ExpectArity(k, 2, 1));
//   KILN_SDK_RETURN_IF_ERROR(ExpectType(k, Input(0), kAddTypes));
//   KILN_SDK_RETURN_IF_ERROR(ExpectSameType(k, Input(1), Input(0)));
// A message names the op, the operand and its tensor, what was found and
// what the kernel supports, e.g.
//   "ADD input 1 (tensor 'b') has type INT8; supports FLOAT32, INT32".
// The message builders (DescribeOperand, UnsupportedTypeMessage, ShapeString
// from kiln/sdk/shape_string.h, TypeSet::ToString) need no KernelContext, so a
// delegate's decline reasons use the same words.
//
// Status codes: a type, rank or quantization scheme the kernel does not
// implement is UNIMPLEMENTED; a node that contradicts itself (wrong arity,
// mismatched types or shapes, bad option or parameter values) is
// INVALID_ARGUMENT; a shape, value or buffer the host has not provided yet
// is FAILED_PRECONDITION.
//
// Header-only; included by kiln/sdk/plugin.h (which defines KernelContext).
#ifndef KILN_SDK_CHECKS_H_
#define KILN_SDK_CHECKS_H_

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "kiln/sdk/plugin.h"
#include "kiln/sdk/shape_string.h"  // IWYU pragma: export

namespace kiln::sdk {

// ---- Type sets ------------------------------------------------------------

// A set of tensor types, usable in constant expressions:
//   constexpr TypeSet kAddTypes{KILN_TYPE_FLOAT32, KILN_TYPE_INT32};
//   if constexpr (kAddTypes.contains(KILN_TYPE_INT32)) ...
// Holds the KILN_TYPE_* values 0..63; any other value is never contained.
class TypeSet {
 public:
  constexpr TypeSet() = default;
  constexpr TypeSet(std::initializer_list<KilnTensorType> types) {
    for (KilnTensorType t : types) bits_ |= Bit(t);
  }
  constexpr bool contains(KilnTensorType type) const {
    return (bits_ & Bit(type)) != 0;
  }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr TypeSet operator|(TypeSet other) const {
    return FromBits(bits_ | other.bits_);
  }
  constexpr bool operator==(TypeSet other) const {
    return bits_ == other.bits_;
  }
  // "FLOAT32, INT32, INT64": the members in KILN_TYPE_* order.
  std::string ToString() const {
    std::string s;
    for (KilnTensorType t = 0; t < 64; ++t) {
      if (!contains(t)) continue;
      if (!s.empty()) s += ", ";
      s += KilnTensorTypeName(t);
    }
    return s;
  }

 private:
  static constexpr uint64_t Bit(KilnTensorType t) {
    return t >= 0 && t < 64 ? uint64_t{1} << t : 0;
  }
  static constexpr TypeSet FromBits(uint64_t bits) {
    TypeSet s;
    s.bits_ = bits;
    return s;
  }
  uint64_t bits_ = 0;
};

// Sets many kernels share.
inline constexpr TypeSet kIndexTypes{KILN_TYPE_INT32, KILN_TYPE_INT64};
// Affine-quantized integer storage types.
inline constexpr TypeSet kQuantizedTypes{KILN_TYPE_UINT8, KILN_TYPE_INT8,
                                         KILN_TYPE_INT16};

// Bytes per element of `type`; 0 for types without a fixed element size
// (STRING, RESOURCE, VARIANT, packed INT4) and unknown values.
inline size_t TypeByteSize(KilnTensorType type) {
  switch (type) {
    case KILN_TYPE_BOOL:
    case KILN_TYPE_INT8:
    case KILN_TYPE_UINT8:
      return 1;
    case KILN_TYPE_FLOAT16:
    case KILN_TYPE_BFLOAT16:
    case KILN_TYPE_INT16:
    case KILN_TYPE_UINT16:
      return 2;
    case KILN_TYPE_FLOAT32:
    case KILN_TYPE_INT32:
    case KILN_TYPE_UINT32:
      return 4;
    case KILN_TYPE_FLOAT64:
    case KILN_TYPE_INT64:
    case KILN_TYPE_UINT64:
    case KILN_TYPE_COMPLEX64:
      return 8;
    case KILN_TYPE_COMPLEX128:
      return 16;
    default:
      return 0;
  }
}

// ---- Operands and message parts -------------------------------------------

// One tensor of a node: input or output `index`. `role` optionally says what
// the operand is for ("filter", "axis"); messages print it.
struct Operand {
  bool is_output = false;
  int32_t index = 0;
  const char* role = nullptr;
};
constexpr Operand Input(int32_t index, const char* role = nullptr) {
  return Operand{false, index, role};
}
constexpr Operand Output(int32_t index, const char* role = nullptr) {
  return Operand{true, index, role};
}

// "1 input", "3 inputs".
inline std::string CountOf(int64_t n, const char* noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

// "input 1 (tensor 'b')", "input 1 (filter, tensor 'w')", "output 0": the
// operand without its op. An empty or null tensor name is left out.
inline std::string OperandText(Operand o, const char* tensor_name) {
  std::string s = o.is_output ? "output " : "input ";
  s += std::to_string(o.index);
  const bool named = tensor_name != nullptr && tensor_name[0] != '\0';
  if (o.role != nullptr || named) {
    s += " (";
    if (o.role != nullptr) s += o.role;
    if (o.role != nullptr && named) s += ", ";
    if (named) s += std::string("tensor '") + tensor_name + "'";
    s += ")";
  }
  return s;
}

// "ADD input 1 (tensor 'b')": the subject of every operand message.
inline std::string DescribeOperand(const char* op, Operand o,
                                   const char* tensor_name) {
  return std::string(op != nullptr ? op : "op") + " " +
         OperandText(o, tensor_name);
}

// "<subject> has type INT8; supports FLOAT32, INT32 (<note>)".
inline std::string UnsupportedTypeMessage(const std::string& subject,
                                          KilnTensorType type,
                                          TypeSet supported,
                                          const char* note = nullptr) {
  std::string s = subject + " has type " + KilnTensorTypeName(type) +
                  "; supports " + supported.ToString();
  if (note != nullptr) s += std::string(" (") + note + ")";
  return s;
}

// The op the node runs: its custom name for CUSTOM ops, else the builtin
// name ("CONV_2D").
inline const char* OpName(const KernelContext& k) {
  const int32_t code = k.builtin_code();
  if (code == KILN_OP_CUSTOM) {
    const char* name = k.custom_name();
    return name != nullptr && name[0] != '\0' ? name : "CUSTOM";
  }
  return KilnBuiltinOpName(code);
}

inline Tensor TensorOf(const KernelContext& k, Operand o) {
  return o.is_output ? k.output(o.index) : k.input(o.index);
}

inline const char* TensorNameOf(const KernelContext& k, Operand o) {
  const Tensor t = TensorOf(k, o);
  return t.present() ? t.name() : nullptr;
}

// DescribeOperand for operand `o` of the node in `k`.
inline std::string Describe(const KernelContext& k, Operand o) {
  return DescribeOperand(OpName(k), o, TensorNameOf(k, o));
}

// ---- Arity ----------------------------------------------------------------

// "ADD expects 2 inputs, the node has 3", "CONV_2D expects 2 to 3 inputs,
// ...", "CONCATENATION expects at least 1 input, ..." (`max` INT32_MAX:
// no upper bound). `noun` is "input" or "output".
inline std::string CountMismatchMessage(const char* op, int32_t min,
                                        int32_t max, int32_t actual,
                                        const char* noun) {
  std::string expected;
  if (min == max) {
    expected = CountOf(min, noun);
  } else if (max == std::numeric_limits<int32_t>::max()) {
    expected = "at least " + CountOf(min, noun);
  } else {
    expected = std::to_string(min) + " to " + CountOf(max, noun);
  }
  return std::string(op != nullptr ? op : "op") + " expects " + expected +
         ", the node has " + std::to_string(actual);
}

// The node has between `min` and `max` inputs (present or omitted); `max`
// INT32_MAX means no upper bound.
inline KilnStatus ExpectInputCount(const KernelContext& k, int32_t min,
                                   int32_t max) {
  const int32_t n = k.num_inputs();
  if (n >= min && n <= max) return KILN_STATUS_OK;
  return k.Fail(KILN_STATUS_INVALID_ARGUMENT,
                CountMismatchMessage(OpName(k), min, max, n, "input"));
}

// The node has between `min` and `max` outputs, as ExpectInputCount.
inline KilnStatus ExpectOutputCount(const KernelContext& k, int32_t min,
                                    int32_t max) {
  const int32_t n = k.num_outputs();
  if (n >= min && n <= max) return KILN_STATUS_OK;
  return k.Fail(KILN_STATUS_INVALID_ARGUMENT,
                CountMismatchMessage(OpName(k), min, max, n, "output"));
}

// The node has exactly `count` outputs.
inline KilnStatus ExpectOutputCount(const KernelContext& k, int32_t count) {
  return ExpectOutputCount(k, count, count);
}

// Operand `o` is present (not omitted).
inline KilnStatus ExpectPresent(const KernelContext& k, Operand o) {
  if (TensorOf(k, o).present()) return KILN_STATUS_OK;
  return k.Fail(KILN_STATUS_INVALID_ARGUMENT, Describe(k, o), " is missing; ",
                OpName(k), " requires it");
}

// Exactly `inputs` inputs and `outputs` outputs, all present.
inline KilnStatus ExpectArity(const KernelContext& k, int32_t inputs,
                              int32_t outputs) {
  KILN_SDK_RETURN_IF_ERROR(ExpectInputCount(k, inputs, inputs));
  KILN_SDK_RETURN_IF_ERROR(ExpectOutputCount(k, outputs));
  for (int32_t i = 0; i < inputs; ++i) {
    KILN_SDK_RETURN_IF_ERROR(ExpectPresent(k, Input(i)));
  }
  for (int32_t i = 0; i < outputs; ++i) {
    KILN_SDK_RETURN_IF_ERROR(ExpectPresent(k, Output(i)));
  }
  return KILN_STATUS_OK;
}

// ---- Types ----------------------------------------------------------------

// Operand `o` is present and its type is in `supported`. `note` (optional)
// is appended in parentheses, e.g. "quantized CONV_2D is not implemented".
inline KilnStatus ExpectType(const KernelContext& k, Operand o,
                             TypeSet supported, const char* note = nullptr) {
  KILN_SDK_RETURN_IF_ERROR(ExpectPresent(k, o));
  const KilnTensorType type = TensorOf(k, o).type();
  if (supported.contains(type)) return KILN_STATUS_OK;
  return k.Fail(KILN_STATUS_UNIMPLEMENTED,
                UnsupportedTypeMessage(Describe(k, o), type, supported, note));
}

// Operand `o` is present and has the type of operand `reference`.
inline KilnStatus ExpectSameType(const KernelContext& k, Operand o,
                                 Operand reference) {
  KILN_SDK_RETURN_IF_ERROR(ExpectPresent(k, o));
  const Tensor t = TensorOf(k, o), ref = TensorOf(k, reference);
  if (t.type() == ref.type()) return KILN_STATUS_OK;
  return k.Fail(KILN_STATUS_INVALID_ARGUMENT, Describe(k, o), " has type ",
                KilnTensorTypeName(t.type()), " but ",
                OperandText(reference, TensorNameOf(k, reference)),
                " has type ", KilnTensorTypeName(ref.type()),
                "; they must match");
}

// ---- Shapes ---------------------------------------------------------------

// True when the tensor's rank and every dim are known (>= 0).
inline bool HasKnownShape(const Tensor& t) {
  const int32_t rank = t.rank();
  if (rank < 0) return false;
  for (int32_t i = 0; i < rank; ++i) {
    if (t.dim(i) < 0) return false;
  }
  return true;
}

// Operand `o` has a known rank and no unknown (negative) dim. *shape, when
// given, receives the shape (unspecified on failure).
inline KilnStatus ExpectKnownShape(const KernelContext& k, Operand o,
                                   std::vector<int32_t>* shape = nullptr) {
  KILN_SDK_RETURN_IF_ERROR(ExpectPresent(k, o));
  const Tensor t = TensorOf(k, o);
  if (t.rank() < 0) {
    return k.Fail(KILN_STATUS_FAILED_PRECONDITION, Describe(k, o),
                  " has unknown rank at prepare; resize the model inputs to "
                  "concrete shapes first");
  }
  const std::vector<int32_t> dims = t.shape();
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] < 0) {
      return k.Fail(KILN_STATUS_FAILED_PRECONDITION, Describe(k, o),
                    " has unknown extent in dimension ", d, " (shape ",
                    ShapeString(dims),
                    ") at prepare; resize the model inputs to concrete "
                    "shapes first");
    }
  }
  if (shape != nullptr) *shape = dims;
  return KILN_STATUS_OK;
}

// Operand `o` has a known shape of rank `rank`.
inline KilnStatus ExpectRank(const KernelContext& k, Operand o, int32_t rank) {
  std::vector<int32_t> shape;
  KILN_SDK_RETURN_IF_ERROR(ExpectKnownShape(k, o, &shape));
  if (static_cast<int32_t>(shape.size()) == rank) return KILN_STATUS_OK;
  return k.Fail(KILN_STATUS_INVALID_ARGUMENT, Describe(k, o), " has shape ",
                ShapeString(shape), "; ", OpName(k), " needs rank ", rank);
}

// Operand `o` has rank <= `max_rank` (an unknown rank passes).
inline KilnStatus ExpectRankAtMost(const KernelContext& k, Operand o,
                                   int32_t max_rank) {
  const int32_t rank = TensorOf(k, o).rank();
  if (rank <= max_rank) return KILN_STATUS_OK;
  return k.Fail(KILN_STATUS_UNIMPLEMENTED, Describe(k, o), " has rank ", rank,
                "; supports rank <= ", max_rank);
}

// Operand `o` has a known shape equal to `expected`. `why` (optional) says
// why, in parentheses ("one value per output channel").
inline KilnStatus ExpectShape(const KernelContext& k, Operand o,
                              const std::vector<int32_t>& expected,
                              const char* why = nullptr) {
  std::vector<int32_t> shape;
  KILN_SDK_RETURN_IF_ERROR(ExpectKnownShape(k, o, &shape));
  if (shape == expected) return KILN_STATUS_OK;
  return k.Fail(KILN_STATUS_INVALID_ARGUMENT, Describe(k, o), " has shape ",
                ShapeString(shape), "; ", OpName(k), " expects ",
                ShapeString(expected),
                why != nullptr ? std::string(" (") + why + ")" : "");
}

// At invoke, for outputs whose shape depends on input values: output `o`
// has shape `expected` (the host prepares the node again once those values
// are computed; a host that did not gets this error, not an overrun).
inline KilnStatus ExpectOutputShape(const KernelContext& k, Operand o,
                                    const std::vector<int32_t>& expected) {
  const Tensor t = TensorOf(k, o);
  if (t.rank() == static_cast<int32_t>(expected.size()) &&
      t.shape() == expected) {
    return KILN_STATUS_OK;
  }
  return k.Fail(KILN_STATUS_FAILED_PRECONDITION, Describe(k, o), " has shape ",
                ShapeString(t.shape()), " but its inputs give ",
                ShapeString(expected),
                "; the host must prepare the node again once the inputs' "
                "values or shapes change");
}

// ---- Buffers --------------------------------------------------------------

// At invoke: *data = operand `o`'s buffer, checked to hold num_elements()
// values of T (of the tensor's own element size when T is void). A tensor
// with no elements passes with *data possibly null.
template <typename T>
KilnStatus BufferOf(const KernelContext& k, Operand o, T** data) {
  const Tensor t = TensorOf(k, o);
  *data = t.present() ? t.data<T>() : nullptr;
  const int64_t n = t.present() ? t.num_elements() : 0;
  size_t element_bytes = 0;
  if constexpr (std::is_void_v<std::remove_const_t<T>>) {
    element_bytes = TypeByteSize(t.present() ? t.type() : -1);
  } else {
    element_bytes = sizeof(T);
  }
  const uint64_t need = static_cast<uint64_t>(n) * element_bytes;
  if (need == 0 || (*data != nullptr && t.byte_size() >= need)) {
    return KILN_STATUS_OK;
  }
  return k.Fail(KILN_STATUS_FAILED_PRECONDITION, Describe(k, o),
                " has no buffer of ", need,
                " bytes at invoke; the host must allocate it after prepare");
}

// ---- Index values ---------------------------------------------------------

namespace internal {

// values->size() elements of type T at `raw`, widened into *values.
template <typename T>
KilnStatus WidenInto(const void* raw, std::vector<int64_t>* values) {
  const T* typed = static_cast<const T*>(raw);
  for (size_t i = 0; i < values->size(); ++i) (*values)[i] = typed[i];
  return KILN_STATUS_OK;
}

}  // namespace internal

// Reads the integer values of operand `o` (an index-like tensor: axes,
// shape, permutation) into *values. Its type must be in `allowed` (integer
// types only). *ready is false, and OK is returned, when the values are not
// known yet (unknown shape, or no buffer and at least one element); an
// empty tensor is always ready.
inline KilnStatus ReadIntegers(const KernelContext& k, Operand o,
                               std::vector<int64_t>* values, bool* ready,
                               TypeSet allowed = kIndexTypes) {
  values->clear();
  *ready = true;
  KILN_SDK_RETURN_IF_ERROR(ExpectType(k, o, allowed));
  const Tensor t = TensorOf(k, o);
  if (!HasKnownShape(t)) {
    *ready = false;
    return KILN_STATUS_OK;
  }
  const int64_t n = t.num_elements();
  if (n == 0) return KILN_STATUS_OK;
  const void* raw = t.data<void>();
  if (raw == nullptr) {
    *ready = false;
    return KILN_STATUS_OK;
  }
  const KilnTensorType type = t.type();
  const uint64_t need = static_cast<uint64_t>(n) * TypeByteSize(type);
  if (t.byte_size() < need) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, Describe(k, o), " holds ",
                  t.byte_size(), " bytes, fewer than its ", n,
                  " elements need");
  }
  values->resize(static_cast<size_t>(n));
  switch (type) {
    case KILN_TYPE_INT64:
      return internal::WidenInto<int64_t>(raw, values);
    case KILN_TYPE_INT32:
      return internal::WidenInto<int32_t>(raw, values);
    case KILN_TYPE_INT16:
      return internal::WidenInto<int16_t>(raw, values);
    case KILN_TYPE_INT8:
      return internal::WidenInto<int8_t>(raw, values);
    case KILN_TYPE_UINT8:
      return internal::WidenInto<uint8_t>(raw, values);
    default:
      return k.Fail(KILN_STATUS_INTERNAL, Describe(k, o), " of type ",
                    KilnTensorTypeName(type), " cannot be read as integers");
  }
}

// Normalizes a possibly negative `axis` against `rank` (valid range
// [-rank, rank)). `what` names the value in the message ("axis",
// "squeeze dim").
inline KilnStatus NormalizeAxis(const KernelContext& k, const char* what,
                                int64_t axis, int32_t rank,
                                int32_t* normalized) {
  if (axis < -static_cast<int64_t>(rank) || axis >= rank) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, OpName(k), " ", what, " ", axis,
                  " is out of range [", -rank, ", ", rank, ") for rank ", rank);
  }
  *normalized = static_cast<int32_t>(axis < 0 ? axis + rank : axis);
  return KILN_STATUS_OK;
}

// ---- Fused activation -----------------------------------------------------

// "RELU6"; "UNKNOWN" for a value that is not a KILN_ACTIVATION_*.
inline const char* ActivationName(int64_t activation) {
  switch (activation) {
    case KILN_ACTIVATION_NONE:
      return "NONE";
    case KILN_ACTIVATION_RELU:
      return "RELU";
    case KILN_ACTIVATION_RELU_N1_TO_1:
      return "RELU_N1_TO_1";
    case KILN_ACTIVATION_RELU6:
      return "RELU6";
    case KILN_ACTIVATION_TANH:
      return "TANH";
    case KILN_ACTIVATION_SIGN_BIT:
      return "SIGN_BIT";
    default:
      return "UNKNOWN";
  }
}

// NONE, RELU, RELU_N1_TO_1 and RELU6: the activations that clamp, the only
// ones defined for integer and quantized outputs.
inline bool IsClampActivation(int64_t activation) {
  return activation == KILN_ACTIVATION_NONE ||
         activation == KILN_ACTIVATION_RELU ||
         activation == KILN_ACTIVATION_RELU_N1_TO_1 ||
         activation == KILN_ACTIVATION_RELU6;
}

inline bool IsKnownActivation(int64_t activation) {
  return IsClampActivation(activation) || activation == KILN_ACTIVATION_TANH ||
         activation == KILN_ACTIVATION_SIGN_BIT;
}

// Floating-point output types, on which every fused activation is defined.
inline constexpr TypeSet kFloatTypes{KILN_TYPE_FLOAT32, KILN_TYPE_FLOAT16,
                                     KILN_TYPE_FLOAT64, KILN_TYPE_BFLOAT16};

// Reads KILN_OPTION_FUSED_ACTIVATION (absent: NONE) into *activation. Fails
// on a value that is not a KILN_ACTIVATION_*, and on TANH or SIGN_BIT when
// `output_type` is not a floating-point type.
inline KilnStatus ReadFusedActivation(const KernelContext& k,
                                      KilnTensorType output_type,
                                      int64_t* activation) {
  *activation = k.OptionInt(KILN_OPTION_FUSED_ACTIVATION, KILN_ACTIVATION_NONE);
  if (!IsKnownActivation(*activation)) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, OpName(k),
                  " has unknown fused activation ", *activation,
                  "; expected NONE, RELU, RELU_N1_TO_1, RELU6, TANH or "
                  "SIGN_BIT");
  }
  if (kFloatTypes.contains(output_type) || IsClampActivation(*activation)) {
    return KILN_STATUS_OK;
  }
  return k.Fail(KILN_STATUS_INVALID_ARGUMENT, OpName(k), " fused activation ",
                ActivationName(*activation), " is not defined for ",
                KilnTensorTypeName(output_type),
                " outputs; integer and quantized outputs support NONE, RELU, "
                "RELU_N1_TO_1 and RELU6");
}

// ---- Quantization ---------------------------------------------------------

// Which quantization parameters a kernel accepts on an operand.
struct QuantizationRule {
  // kPerTensorOnly: one scale and zero point for the whole tensor. Else
  // per-channel parameters are accepted too, along this dimension (or along
  // any dimension, kAnyChannelAxis); their count must equal its extent.
  static constexpr int32_t kPerTensorOnly = -1;
  static constexpr int32_t kAnyChannelAxis = -2;
  int32_t channel_axis = kPerTensorOnly;
  // Every zero point must be 0 (e.g. int8 filters, int16 activations).
  bool symmetric = false;
};
inline constexpr QuantizationRule kPerTensor{};
inline constexpr QuantizationRule kPerTensorSymmetric{
    QuantizationRule::kPerTensorOnly, true};
constexpr QuantizationRule PerChannel(int32_t axis, bool symmetric = false) {
  return QuantizationRule{axis, symmetric};
}

// A tensor's validated affine quantization: real = scale * (q - zero_point).
struct TensorQuantization {
  std::vector<float> scales;         // finite and > 0; one per channel
  std::vector<int32_t> zero_points;  // in the storage type's range
  int32_t axis = 0;                  // quantized dimension (per-channel)
  bool per_tensor() const { return scales.size() == 1; }
  int32_t channels() const { return static_cast<int32_t>(scales.size()); }
};

namespace internal {

// The range a zero point of storage type `type` must lie in.
inline void ZeroPointRange(KilnTensorType type, int64_t* lo, int64_t* hi) {
  switch (type) {
    case KILN_TYPE_INT8:
      *lo = -128, *hi = 127;
      return;
    case KILN_TYPE_UINT8:
      *lo = 0, *hi = 255;
      return;
    case KILN_TYPE_INT16:
      *lo = -32768, *hi = 32767;
      return;
    default:
      *lo = std::numeric_limits<int32_t>::min();
      *hi = std::numeric_limits<int32_t>::max();
      return;
  }
}

// Checks the channel layout of `q` on tensor `t` against `rule`.
inline KilnStatus CheckQuantizationChannels(const KernelContext& k, Operand o,
                                            const Tensor& t,
                                            const KilnQuantizationParams& q,
                                            QuantizationRule rule) {
  if (q.num_channels == 1) return KILN_STATUS_OK;
  if (rule.channel_axis == QuantizationRule::kPerTensorOnly) {
    return k.Fail(KILN_STATUS_UNIMPLEMENTED, Describe(k, o), " has ",
                  q.num_channels,
                  " quantization channels; supports per-tensor quantization "
                  "only (one scale and zero point)");
  }
  const int32_t axis = q.quantized_dimension, rank = t.rank();
  if (axis < 0 || axis >= rank) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, Describe(k, o),
                  " has quantized_dimension ", axis, " outside its rank ",
                  rank);
  }
  if (rule.channel_axis >= 0 && axis != rule.channel_axis) {
    return k.Fail(KILN_STATUS_UNIMPLEMENTED, Describe(k, o), " has ",
                  q.num_channels, " quantization channels along dimension ",
                  axis,
                  "; supports 1 (per-tensor) or one per element of "
                  "dimension ",
                  rule.channel_axis, " (per-channel)");
  }
  if (t.dim(axis) != q.num_channels) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, Describe(k, o), " has ",
                  q.num_channels, " quantization channels along dimension ",
                  axis, " but that dimension has extent ", t.dim(axis));
  }
  return KILN_STATUS_OK;
}

// Checks every channel's scale and zero point of `q` against `rule`.
inline KilnStatus CheckQuantizationValues(const KernelContext& k, Operand o,
                                          const Tensor& t,
                                          const KilnQuantizationParams& q,
                                          QuantizationRule rule) {
  int64_t lo = 0, hi = 0;
  ZeroPointRange(t.type(), &lo, &hi);
  for (int32_t c = 0; c < q.num_channels; ++c) {
    const float scale = q.scales[c];
    const int64_t zero_point = q.zero_points[c];
    if (!(scale > 0.f) || !std::isfinite(scale)) {
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT, Describe(k, o), " has scale ",
                    scale, " at channel ", c,
                    "; quantization scales must be finite and positive");
    }
    if (zero_point < lo || zero_point > hi) {
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT, Describe(k, o),
                    " has zero point ", zero_point, " at channel ", c,
                    ", outside the ", KilnTensorTypeName(t.type()), " range [",
                    lo, ", ", hi, "]");
    }
    if (rule.symmetric && zero_point != 0) {
      return k.Fail(KILN_STATUS_UNIMPLEMENTED, Describe(k, o),
                    " has zero point ", zero_point, " at channel ", c,
                    "; it must be symmetric (zero point 0)");
    }
  }
  return KILN_STATUS_OK;
}

}  // namespace internal

// Reads and validates operand `o`'s quantization parameters (extension API
// 1.1) into *out: present, channel layout allowed by `rule`, scales finite
// and positive, zero points in the storage type's range (and 0 when
// `rule.symmetric`); blockwise quantization (1.3) is refused. *out is
// unspecified on failure.
inline KilnStatus ReadQuantization(const KernelContext& k, Operand o,
                                   QuantizationRule rule,
                                   TensorQuantization* out) {
  KILN_SDK_RETURN_IF_ERROR(ExpectPresent(k, o));
  const Tensor t = TensorOf(k, o);
  KilnQuantizationParams q{};
  KILN_SDK_RETURN_IF_ERROR(k.Quantization(t, &q));
  if (q.num_channels <= 0 || q.scales == nullptr || q.zero_points == nullptr) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, Describe(k, o), " has type ",
                  KilnTensorTypeName(t.type()),
                  " but no quantization parameters; ", OpName(k),
                  " needs its scale and zero point (re-export the model with "
                  "quantization parameters)");
  }
  KILN_SDK_RETURN_IF_ERROR(
      internal::CheckQuantizationChannels(k, o, t, q, rule));
  KILN_SDK_RETURN_IF_ERROR(internal::CheckQuantizationValues(k, o, t, q, rule));
  out->scales.assign(q.scales, q.scales + q.num_channels);
  out->zero_points.assign(q.zero_points, q.zero_points + q.num_channels);
  out->axis = q.num_channels == 1 ? 0 : q.quantized_dimension;
  return KILN_STATUS_OK;
}

// Operands `a` and `b` carry the same quantization parameters (scales and
// zero points), as kernels that move quantized values without requantizing
// need. `note` (optional) says why, in parentheses.
inline KilnStatus ExpectSameQuantization(const KernelContext& k, Operand a,
                                         Operand b,
                                         const char* note = nullptr) {
  KilnQuantizationParams qa{}, qb{};
  KILN_SDK_RETURN_IF_ERROR(k.Quantization(TensorOf(k, a), &qa));
  KILN_SDK_RETURN_IF_ERROR(k.Quantization(TensorOf(k, b), &qb));
  bool same = qa.num_channels == qb.num_channels;
  for (int32_t i = 0; same && i < qa.num_channels; ++i) {
    const int64_t za = qa.zero_points != nullptr ? qa.zero_points[i] : 0;
    const int64_t zb = qb.zero_points != nullptr ? qb.zero_points[i] : 0;
    same = qa.scales != nullptr && qb.scales != nullptr &&
           qa.scales[i] == qb.scales[i] && za == zb;
  }
  if (same) return KILN_STATUS_OK;
  return k.Fail(KILN_STATUS_UNIMPLEMENTED, Describe(k, a), " and ",
                OperandText(b, TensorNameOf(k, b)),
                " have different quantization parameters",
                note != nullptr ? std::string(" (") + note + ")" : "");
}

// ---- KernelContext's own checks (kept for existing plugins) ---------------

inline KilnStatus KernelContext::ExpectInputs(int32_t min, int32_t max) const {
  return ExpectInputCount(*this, min, max);
}

inline KilnStatus KernelContext::ExpectOutputs(int32_t count) const {
  return ExpectOutputCount(*this, count);
}

inline KilnStatus KernelContext::ExpectType(const char* what, const Tensor& t,
                                            KilnTensorType expected) const {
  std::string subject = std::string(OpName(*this)) + " " + what;
  if (t.present()) subject += std::string(" (tensor '") + t.name() + "')";
  if (!t.present()) {
    return Fail(KILN_STATUS_INVALID_ARGUMENT, subject, " is missing; ",
                OpName(*this), " requires it");
  }
  if (t.type() == expected) return KILN_STATUS_OK;
  return Fail(KILN_STATUS_UNIMPLEMENTED,
              UnsupportedTypeMessage(subject, t.type(), TypeSet{expected}));
}

}  // namespace kiln::sdk

#endif  // KILN_SDK_CHECKS_H_
