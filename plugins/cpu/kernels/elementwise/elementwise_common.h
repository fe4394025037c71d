// Shared pieces of the elementwise kernel group: type checks with precise
// messages, registration over op-version ranges, float16 conversion.
// Internal to kernels/elementwise.
#ifndef KILN_PLUGINS_CPU_KERNELS_ELEMENTWISE_ELEMENTWISE_COMMON_H_
#define KILN_PLUGINS_CPU_KERNELS_ELEMENTWISE_ELEMENTWISE_COMMON_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "kernels/broadcast.h"
#include "kiln/sdk/plugin.h"

namespace kiln::cpu::elementwise {

// A view of a static array of tensor types an op accepts.
class TypeList {
 public:
  template <size_t N>
  constexpr TypeList(const KilnTensorType (&types)[N])  // NOLINT: implicit
      : data_(types), size_(N) {}
  constexpr const KilnTensorType* begin() const { return data_; }
  constexpr const KilnTensorType* end() const { return data_ + size_; }

 private:
  const KilnTensorType* data_;
  size_t size_;
};

constexpr bool Contains(TypeList types, KilnTensorType type) {
  for (KilnTensorType t : types) {
    if (t == type) return true;
  }
  return false;
}

// "FLOAT32, INT32, INT64"
inline std::string TypeListString(TypeList types) {
  std::string s;
  for (KilnTensorType t : types) {
    if (!s.empty()) s += ", ";
    s += sdk::TypeName(t);
  }
  return s;
}

// "[2,3]"
inline std::string ShapeString(const std::vector<int32_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ",";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

// "input 0 (tensor 'x')"
inline std::string Describe(const char* role, int32_t index,
                            const sdk::Tensor& t) {
  std::string s = std::string(role) + " " + std::to_string(index);
  if (t.present() && t.name() != nullptr && t.name()[0] != '\0') {
    s += std::string(" (tensor '") + t.name() + "')";
  }
  return s;
}

// Checks the node has `inputs` inputs and `outputs` outputs, all present.
inline KilnStatus ExpectArity(sdk::KernelContext& k, const char* op,
                              int32_t inputs, int32_t outputs) {
  if (k.num_inputs() != inputs || k.num_outputs() != outputs) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, " expects ", inputs,
                  " input(s) and ", outputs, " output(s), the node has ",
                  k.num_inputs(), " and ", k.num_outputs());
  }
  for (int32_t i = 0; i < inputs; ++i) {
    if (!k.input(i).present()) {
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "input ", i, " is omitted; ",
                    op, " requires it");
    }
  }
  for (int32_t i = 0; i < outputs; ++i) {
    if (!k.output(i).present()) {
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "output ", i, " is missing; ",
                    op, " requires it");
    }
  }
  return KILN_STATUS_OK;
}

// "input 1 (tensor 'b') has type INT8; ADD supports FLOAT32, INT32, INT64"
inline KilnStatus ExpectTypeIn(sdk::KernelContext& k, const char* op,
                               const char* role, int32_t index,
                               const sdk::Tensor& t, TypeList types) {
  if (Contains(types, t.type())) return KILN_STATUS_OK;
  return k.Fail(KILN_STATUS_INVALID_ARGUMENT, Describe(role, index, t),
                " has type ", sdk::TypeName(t.type()), "; ", op, " supports ",
                TypeListString(types));
}

// Checks tensor `t` has the same type as the reference tensor.
inline KilnStatus ExpectSameType(sdk::KernelContext& k, const char* op,
                                 const char* role, int32_t index,
                                 const sdk::Tensor& t, const char* ref_role,
                                 int32_t ref_index, const sdk::Tensor& ref) {
  if (t.type() == ref.type()) return KILN_STATUS_OK;
  return k.Fail(KILN_STATUS_INVALID_ARGUMENT, Describe(role, index, t),
                " has type ", sdk::TypeName(t.type()), " but ",
                Describe(ref_role, ref_index, ref), " has type ",
                sdk::TypeName(ref.type()), "; ", op,
                " needs them to be the same type");
}

// Reads a known shape: fails on unknown rank or a dynamic (negative) dim.
inline KilnStatus KnownShape(sdk::KernelContext& k, const char* role,
                             int32_t index, const sdk::Tensor& t,
                             std::vector<int32_t>* shape) {
  if (t.rank() < 0) {
    return k.Fail(KILN_STATUS_FAILED_PRECONDITION, Describe(role, index, t),
                  " has unknown rank at prepare; resize the input to a "
                  "concrete shape before running the model");
  }
  *shape = t.shape();
  for (size_t d = 0; d < shape->size(); ++d) {
    if ((*shape)[d] < 0) {
      return k.Fail(KILN_STATUS_FAILED_PRECONDITION, Describe(role, index, t),
                    " has unknown extent in dimension ", d,
                    " at prepare; resize the input to a concrete shape");
    }
  }
  return KILN_STATUS_OK;
}

// Fails when a tensor has no data at invoke (a host bug, never a crash here).
inline KilnStatus ExpectData(sdk::KernelContext& k, const char* role,
                             int32_t index, const sdk::Tensor& t,
                             const void* data) {
  if (data != nullptr || t.num_elements() == 0) return KILN_STATUS_OK;
  return k.Fail(KILN_STATUS_FAILED_PRECONDITION, Describe(role, index, t),
                " has no data buffer at invoke; the host must allocate it "
                "after prepare");
}

// Validates that inputs 0..num_inputs-1 broadcast together (NumPy rules,
// rank <= kMaxBroadcastRank), fills *plan for them and sizes output 0 to the
// broadcast shape. On failure *plan is unspecified and the output untouched.
inline KilnStatus PrepareBroadcast(sdk::KernelContext& k, const char* op,
                                   int32_t num_inputs, BroadcastPlan* plan) {
  std::vector<std::vector<int32_t>> shapes(static_cast<size_t>(num_inputs));
  std::vector<int32_t> out_shape;
  for (int32_t i = 0; i < num_inputs; ++i) {
    KILN_SDK_RETURN_IF_ERROR(
        KnownShape(k, "input", i, k.input(i), &shapes[static_cast<size_t>(i)]));
    const size_t rank = shapes[static_cast<size_t>(i)].size();
    if (rank > static_cast<size_t>(kMaxBroadcastRank)) {
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT,
                    Describe("input", i, k.input(i)), " has rank ", rank, "; ",
                    op, " broadcasts inputs of rank <= ", kMaxBroadcastRank);
    }
  }
  out_shape = shapes[0];
  for (int32_t i = 1; i < num_inputs; ++i) {
    std::vector<int32_t> next;
    if (!BroadcastShapes(out_shape, shapes[static_cast<size_t>(i)], &next)) {
      std::string all;
      for (int32_t j = 0; j < num_inputs; ++j) {
        if (j > 0) all += " and ";
        all += ShapeString(shapes[static_cast<size_t>(j)]);
      }
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, " input shapes ", all,
                    " cannot be broadcast together (NumPy rules: trailing "
                    "dimensions must be equal or 1)");
    }
    out_shape = std::move(next);
  }
  if (!MakeBroadcastPlan(shapes, out_shape, plan)) {
    return k.Fail(KILN_STATUS_INTERNAL, op,
                  ": could not plan the broadcast of shapes that do broadcast");
  }
  return k.Resize(k.output(0), out_shape);
}

// An inclusive op-version range.
struct VersionRange {
  int32_t min;
  int32_t max;
};

// Registers one stateless kernel per version range (ranges must not overlap).
template <sdk::KernelFn Prepare, sdk::KernelFn Invoke>
void AddKernelForVersions(sdk::PluginDefinition& def, int32_t builtin_code,
                          std::initializer_list<VersionRange> ranges) {
  for (const VersionRange& r : ranges) {
    def.AddKernel(sdk::MakeKernel<Prepare, Invoke>(builtin_code, r.min, r.max));
  }
}

// Registers one stateful kernel per version range.
template <typename State, KilnStatus (*Prepare)(sdk::KernelContext&, State&),
          KilnStatus (*Invoke)(sdk::KernelContext&, State&)>
void AddStatefulKernelForVersions(sdk::PluginDefinition& def,
                                  int32_t builtin_code,
                                  std::initializer_list<VersionRange> ranges) {
  for (const VersionRange& r : ranges) {
    def.AddKernel(sdk::MakeStatefulKernel<State, Prepare, Invoke>(
        builtin_code, r.min, r.max));
  }
}

// IEEE 754 binary16 <-> binary32. Float32 -> half rounds to nearest even;
// overflow gives infinity; NaN stays NaN.
inline float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1Fu;
  uint32_t mantissa = h & 0x3FFu;
  uint32_t bits;
  if (exponent == 0x1F) {
    bits = sign | 0x7F800000u | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {  // subnormal half: normalise
    uint32_t e = 113;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --e;
    }
    bits = sign | (e << 23) | ((mantissa & 0x3FFu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

inline uint16_t FloatToHalf(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs = bits & 0x7FFFFFFFu;
  if (abs >= 0x7F800000u) {  // inf or NaN
    return static_cast<uint16_t>(sign | 0x7C00u |
                                 (abs > 0x7F800000u ? 0x200u : 0u));
  }
  if (abs >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);
  if (abs < 0x38800000u) {               // result is subnormal or zero
    if (abs < 0x33000000u) return sign;  // below half of the smallest subnormal
    const uint32_t shift = 126 - (abs >> 23);  // 14..24
    const uint32_t mantissa = (abs & 0x7FFFFFu) | 0x800000u;
    uint32_t half = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = ((abs >> 13) - (112u << 10));
  const uint32_t rest = abs & 0x1FFFu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
  return static_cast<uint16_t>(sign | half);
}

}  // namespace kiln::cpu::elementwise

#endif  // KILN_PLUGINS_CPU_KERNELS_ELEMENTWISE_ELEMENTWISE_COMMON_H_
