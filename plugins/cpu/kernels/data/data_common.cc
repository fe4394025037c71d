#include "kernels/data/data_common.h"

#include <algorithm>
#include <cstring>
#include <sstream>

namespace kiln::cpu::data {

size_t ElementBytes(KilnTensorType type) {
  switch (type) {
    case KILN_TYPE_FLOAT32:
    case KILN_TYPE_INT32:
      return 4;
    case KILN_TYPE_INT64:
      return 8;
    case KILN_TYPE_INT16:
      return 2;
    case KILN_TYPE_BOOL:
    case KILN_TYPE_INT8:
    case KILN_TYPE_UINT8:
      return 1;
    default:
      return 0;
  }
}

const char* SupportedTypeList() {
  return "FLOAT32, INT32, INT64, BOOL, INT8, UINT8, INT16";
}

int64_t NumElements(const Shape& shape) {
  int64_t n = 1;
  for (int32_t d : shape) n *= d;
  return n;
}

std::vector<int64_t> Strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) {
    strides[i - 1] = strides[i] * shape[i];
  }
  return strides;
}

std::string ShapeString(const Shape& shape) {
  std::ostringstream out;
  out << "[";
  for (size_t i = 0; i < shape.size(); ++i) out << (i ? ", " : "") << shape[i];
  out << "]";
  return out.str();
}

KilnStatus ExpectMovableType(sdk::KernelContext& k, const char* what,
                             const sdk::Tensor& t) {
  if (!t.present()) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, what, " is missing");
  }
  if (ElementBytes(t.type()) == 0) {
    return k.Fail(KILN_STATUS_UNIMPLEMENTED, what, " '", t.name(),
                  "' has type ", sdk::TypeName(t.type()),
                  ", which the CPU data-movement kernels do not support "
                  "(supported: ",
                  SupportedTypeList(),
                  "); convert the model to a supported type or use a "
                  "plugin that handles it");
  }
  return KILN_STATUS_OK;
}

KilnStatus ExpectSameType(sdk::KernelContext& k, const char* what,
                          const sdk::Tensor& t, KilnTensorType expected,
                          const char* reference_what) {
  if (!t.present()) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, what, " is missing");
  }
  if (t.type() != expected) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, what, " '", t.name(),
                  "' has type ", sdk::TypeName(t.type()), " but ",
                  reference_what, " has type ", sdk::TypeName(expected),
                  "; they must match");
  }
  return KILN_STATUS_OK;
}

KilnStatus ExpectRankAtMost(sdk::KernelContext& k, const char* what,
                            const sdk::Tensor& t, int max_rank) {
  if (t.rank() > max_rank) {
    return k.Fail(KILN_STATUS_UNIMPLEMENTED, what, " '", t.name(),
                  "' has rank ", t.rank(),
                  "; this kernel supports rank <= ", max_rank);
  }
  return KILN_STATUS_OK;
}

bool ShapeKnown(const sdk::Tensor& t) {
  const int32_t rank = t.rank();
  if (rank < 0) return false;
  for (int32_t i = 0; i < rank; ++i) {
    if (t.dim(i) < 0) return false;
  }
  return true;
}

void CheckInputShapesKnown(sdk::KernelContext& k, PlanBase& plan) {
  for (int32_t i = 0; i < k.num_inputs(); ++i) {
    const sdk::Tensor t = k.input(i);
    if (t.present() && !ShapeKnown(t)) {
      plan.NotReady("the shape of input " + std::to_string(i) + " '" +
                    t.name() + "' is not known");
      return;
    }
  }
}

KilnStatus ReadIntegers(sdk::KernelContext& k, const char* what,
                        const sdk::Tensor& t, std::vector<int64_t>* values,
                        bool* ready, bool allow_int16) {
  values->clear();
  *ready = true;
  if (!t.present()) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, what, " is missing");
  }
  const KilnTensorType type = t.type();
  if (type != KILN_TYPE_INT32 && type != KILN_TYPE_INT64 &&
      !(allow_int16 && type == KILN_TYPE_INT16)) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, what, " '", t.name(),
                  "' has type ", sdk::TypeName(type), "; expected INT32",
                  allow_int16 ? ", INT16" : "", " or INT64");
  }
  const int64_t n = t.num_elements();
  if (n == 0) return KILN_STATUS_OK;
  const void* raw = t.data<void>();
  if (raw == nullptr) {
    *ready = false;
    return KILN_STATUS_OK;
  }
  const size_t bytes = type == KILN_TYPE_INT64   ? 8
                       : type == KILN_TYPE_INT32 ? 4
                                                 : 2;
  if (t.byte_size() < static_cast<uint64_t>(n) * bytes) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, what, " '", t.name(),
                  "' holds ", t.byte_size(), " bytes, fewer than its ", n,
                  " elements need");
  }
  values->resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    if (type == KILN_TYPE_INT64) {
      (*values)[i] = static_cast<const int64_t*>(raw)[i];
    } else if (type == KILN_TYPE_INT32) {
      (*values)[i] = static_cast<const int32_t*>(raw)[i];
    } else {
      (*values)[i] = static_cast<const int16_t*>(raw)[i];
    }
  }
  return KILN_STATUS_OK;
}

KilnStatus InputData(sdk::KernelContext& k, const char* what,
                     const sdk::Tensor& t, const void** data) {
  *data = t.data<void>();
  const uint64_t need =
      static_cast<uint64_t>(t.num_elements()) * ElementBytes(t.type());
  if (need > 0 && (*data == nullptr || t.byte_size() < need)) {
    return k.Fail(KILN_STATUS_FAILED_PRECONDITION, what, " '", t.name(),
                  "' has no data of ", need, " bytes at invoke");
  }
  return KILN_STATUS_OK;
}

KilnStatus NormalizeAxis(sdk::KernelContext& k, const char* what, int64_t axis,
                         int rank, int* normalized) {
  if (axis < -rank || axis >= rank) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, what, " ", axis,
                  " is out of range [", -rank, ", ", rank, ") for rank ", rank);
  }
  *normalized = static_cast<int>(axis < 0 ? axis + rank : axis);
  return KILN_STATUS_OK;
}

KilnStatus ExpectSameQuantization(sdk::KernelContext& k, const char* what_a,
                                  const sdk::Tensor& a, const char* what_b,
                                  const sdk::Tensor& b) {
  KilnQuantizationParams qa{}, qb{};
  KILN_SDK_RETURN_IF_ERROR(k.Quantization(a, &qa));
  KILN_SDK_RETURN_IF_ERROR(k.Quantization(b, &qb));
  bool same = qa.num_channels == qb.num_channels;
  for (int32_t i = 0; same && i < qa.num_channels; ++i) {
    const int64_t za = qa.zero_points != nullptr ? qa.zero_points[i] : 0;
    const int64_t zb = qb.zero_points != nullptr ? qb.zero_points[i] : 0;
    same = qa.scales[i] == qb.scales[i] && za == zb;
  }
  if (!same) {
    return k.Fail(KILN_STATUS_UNIMPLEMENTED, what_a, " '", a.name(), "' and ",
                  what_b, " '", b.name(),
                  "' have different quantization parameters; the CPU kernel "
                  "only moves bytes and does not requantize");
  }
  return KILN_STATUS_OK;
}

namespace {

template <typename T>
void CopyMapped(const std::vector<std::vector<int64_t>>& maps, int64_t base,
                const T* in, T* out, T fill) {
  const size_t rank = maps.size();
  if (rank == 0) {
    *out = in[base];
    return;
  }
  for (const auto& m : maps) {
    if (m.empty()) return;
  }
  const std::vector<int64_t>& inner = maps[rank - 1];
  std::vector<size_t> index(rank - 1, 0);
  while (true) {
    int64_t row = base;
    bool row_is_fill = false;
    for (size_t d = 0; d + 1 < rank; ++d) {
      const int64_t v = maps[d][index[d]];
      if (v < 0) row_is_fill = true;
      row += v;
    }
    if (row_is_fill) {
      std::fill_n(out, inner.size(), fill);
      out += inner.size();
    } else {
      for (const int64_t v : inner) *out++ = v < 0 ? fill : in[row + v];
    }
    size_t d = rank - 1;
    while (true) {
      if (d == 0) return;
      --d;
      if (++index[d] < maps[d].size()) break;
      index[d] = 0;
    }
  }
}

template <typename T>
void CopyMappedTyped(const std::vector<std::vector<int64_t>>& maps,
                     int64_t base, const void* in, void* out,
                     const void* fill) {
  T fill_value{};
  if (fill != nullptr) std::memcpy(&fill_value, fill, sizeof(T));
  CopyMapped<T>(maps, base, static_cast<const T*>(in), static_cast<T*>(out),
                fill_value);
}

}  // namespace

void CopyWithDimMaps(const std::vector<std::vector<int64_t>>& maps,
                     int64_t base, size_t element_bytes, const void* in,
                     void* out, const void* fill) {
  switch (element_bytes) {
    case 1:
      return CopyMappedTyped<uint8_t>(maps, base, in, out, fill);
    case 2:
      return CopyMappedTyped<uint16_t>(maps, base, in, out, fill);
    case 4:
      return CopyMappedTyped<uint32_t>(maps, base, in, out, fill);
    case 8:
      return CopyMappedTyped<uint64_t>(maps, base, in, out, fill);
    default:
      return;
  }
}

KilnStatus ResizeOutputs(sdk::KernelContext& k, const PlanBase& plan) {
  if (static_cast<int32_t>(plan.output_shapes.size()) != k.num_outputs()) {
    return k.Fail(KILN_STATUS_INTERNAL, "planned ", plan.output_shapes.size(),
                  " outputs but the node has ", k.num_outputs());
  }
  for (int32_t i = 0; i < k.num_outputs(); ++i) {
    const sdk::Tensor out = k.output(i);
    if (!out.present()) {
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "output ", i, " is missing");
    }
    const Shape& shape = plan.output_shapes[static_cast<size_t>(i)];
    if (out.shape() == shape &&
        out.rank() == static_cast<int32_t>(shape.size())) {
      continue;
    }
    const KilnStatus s = k.Resize(out, shape);
    if (s != KILN_STATUS_OK) return s;
  }
  return KILN_STATUS_OK;
}

KilnStatus CheckOutputsForInvoke(sdk::KernelContext& k, const PlanBase& plan) {
  if (!plan.ready) {
    return k.Fail(KILN_STATUS_FAILED_PRECONDITION,
                  "cannot run: ", plan.not_ready_reason,
                  " at invoke; the host must prepare this node again once "
                  "its inputs are computed");
  }
  if (static_cast<int32_t>(plan.output_shapes.size()) != k.num_outputs()) {
    return k.Fail(KILN_STATUS_INTERNAL, "planned ", plan.output_shapes.size(),
                  " outputs but the node has ", k.num_outputs());
  }
  for (int32_t i = 0; i < k.num_outputs(); ++i) {
    const sdk::Tensor out = k.output(i);
    const Shape& shape = plan.output_shapes[static_cast<size_t>(i)];
    if (out.rank() != static_cast<int32_t>(shape.size()) ||
        out.shape() != shape) {
      return k.Fail(KILN_STATUS_FAILED_PRECONDITION, "output ", i, " '",
                    out.name(), "' has shape ", ShapeString(out.shape()),
                    " but its inputs give ", ShapeString(shape),
                    "; prepare must run again after input values or shapes "
                    "change");
    }
    const uint64_t need =
        static_cast<uint64_t>(NumElements(shape)) * ElementBytes(out.type());
    if (need > 0 && (out.data<void>() == nullptr || out.byte_size() < need)) {
      return k.Fail(KILN_STATUS_FAILED_PRECONDITION, "output ", i, " '",
                    out.name(), "' has no buffer of ", need,
                    " bytes at invoke");
    }
  }
  return KILN_STATUS_OK;
}

}  // namespace kiln::cpu::data
