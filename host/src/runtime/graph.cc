#include "runtime/graph.h"

#include <cstring>
#include <limits>

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

namespace {
constexpr uint64_t kMaxCheckedSize =
    static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
}  // namespace

std::optional<uint64_t> CheckedElementCount(const int32_t* dims, size_t rank) {
  uint64_t n = 1;
  for (size_t i = 0; i < rank; ++i) {
    if (dims[i] < 0) return std::nullopt;
    if (__builtin_mul_overflow(n, static_cast<uint64_t>(dims[i]), &n) ||
        n > kMaxCheckedSize) {
      return std::nullopt;
    }
  }
  return n;
}

std::optional<uint64_t> CheckedElementCount(const std::vector<int32_t>& shape) {
  return CheckedElementCount(shape.data(), shape.size());
}

std::optional<uint64_t> CheckedByteSize(KilnTensorType type,
                                        const std::vector<int32_t>& shape) {
  const std::optional<uint64_t> count = CheckedElementCount(shape);
  if (!count) return std::nullopt;
  if (type == KILN_TYPE_INT4) return *count / 2 + *count % 2;
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(*count, uint64_t{ElementSize(type)}, &bytes) ||
      bytes > kMaxCheckedSize) {
    return std::nullopt;
  }
  return bytes;
}

int64_t TensorState::NumElements() const {
  int64_t n = 1;
  for (int32_t d : shape) {
    if (__builtin_mul_overflow(n, d < 0 ? 0 : d, &n)) {
      return std::numeric_limits<int64_t>::max();
    }
  }
  return n;
}

size_t TensorState::RequiredBytes() const {
  const int64_t count = NumElements();
  const KilnTensorType type = ElementType();
  if (type == KILN_TYPE_INT4) return static_cast<size_t>(count / 2 + count % 2);
  size_t bytes = 0;
  if (count == std::numeric_limits<int64_t>::max() ||
      __builtin_mul_overflow(static_cast<size_t>(count), ElementSize(type),
                             &bytes)) {
    return std::numeric_limits<size_t>::max();
  }
  return bytes;
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
