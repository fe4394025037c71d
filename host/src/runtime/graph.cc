#include "runtime/graph.h"

#include <cstring>

#include "kiln/kiln_builtin_ops.h"

namespace kiln {

size_t ElementSize(KilnTensorType type) {
  switch (type) {
    case KILN_TYPE_FLOAT32:
    case KILN_TYPE_INT32:
    case KILN_TYPE_UINT32:
      return 4;
    case KILN_TYPE_FLOAT16:
    case KILN_TYPE_INT16:
    case KILN_TYPE_UINT16:
    case KILN_TYPE_BFLOAT16:
      return 2;
    case KILN_TYPE_UINT8:
    case KILN_TYPE_INT8:
    case KILN_TYPE_BOOL:
      return 1;
    case KILN_TYPE_INT64:
    case KILN_TYPE_FLOAT64:
    case KILN_TYPE_UINT64:
    case KILN_TYPE_COMPLEX64:
      return 8;
    case KILN_TYPE_COMPLEX128:
      return 16;
    case KILN_TYPE_RESOURCE:
    case KILN_TYPE_VARIANT:
      return 4;  // a resource id
    default:
      return 0;  // STRING, INT4 (packed) and unknown types
  }
}

int64_t TensorState::NumElements() const {
  int64_t n = 1;
  for (int32_t d : shape) n *= d < 0 ? 0 : d;
  return n;
}

size_t TensorState::RequiredBytes() const {
  const KilnTensorType type = ElementType();
  if (type == KILN_TYPE_INT4)
    return static_cast<size_t>((NumElements() + 1) / 2);
  return static_cast<size_t>(NumElements()) * ElementSize(type);
}

void TensorState::AllocateOwned(size_t n) {
  owned.assign(n, 0);
  storage = TensorStorage::kOwned;
  data = owned.data();
  bytes = n;
}

const OptionValue* NodeDesc::FindOption(uint32_t key) const {
  for (const auto& [k, v] : options) {
    if (k == key) return &v;
  }
  return nullptr;
}

void NodeDesc::SetOption(uint32_t key, OptionValue value) {
  for (auto& [k, v] : options) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  options.emplace_back(key, std::move(value));
}

void NodeDesc::SetInt(uint32_t key, int64_t v) {
  OptionValue o;
  o.kind = OptionValue::Kind::kInt;
  o.i = v;
  SetOption(key, std::move(o));
}

void NodeDesc::SetFloat(uint32_t key, float v) {
  OptionValue o;
  o.kind = OptionValue::Kind::kFloat;
  o.f = v;
  SetOption(key, std::move(o));
}

void NodeDesc::SetIntArray(uint32_t key, std::vector<int32_t> v) {
  OptionValue o;
  o.kind = OptionValue::Kind::kIntArray;
  o.array = std::move(v);
  SetOption(key, std::move(o));
}

void NodeDesc::SetString(uint32_t key, std::string v) {
  OptionValue o;
  o.kind = OptionValue::Kind::kString;
  o.s = std::move(v);
  SetOption(key, std::move(o));
}

std::string NodeDesc::OpName() const {
  if (builtin_code == KILN_OP_CUSTOM) return "CUSTOM '" + custom_name + "'";
  return BuiltinOpName(builtin_code);
}

const char* TypeName(KilnTensorType type) { return KilnTensorTypeName(type); }

}  // namespace kiln
