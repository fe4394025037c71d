#include "kernels/data/data_common.h"

#include <algorithm>
#include <cstring>

namespace kiln::cpu::data {

int64_t NumElements(const Shape& shape) {
  return DimProduct(shape, 0, shape.size());
}

int64_t DimProduct(const Shape& shape, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end; ++i) n *= shape[i];
  return n;
}

std::vector<int64_t> Arithmetic(int64_t count, int64_t step) {
  std::vector<int64_t> v(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) v[static_cast<size_t>(i)] = i * step;
  return v;
}

std::vector<int64_t> Strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) {
    strides[i - 1] = strides[i] * shape[i];
  }
  return strides;
}

KilnStatus ExpectMovableInOut(sdk::KernelContext& k, sdk::Operand in) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectType(k, in, kMovableTypes));
  return sdk::ExpectSameType(k, sdk::Output(0), in);
}

KilnStatus ReadIndexValues(sdk::KernelContext& k, sdk::Operand o,
                           PlanBase& plan, std::vector<int64_t>* values,
                           sdk::TypeSet allowed) {
  bool ready = true;
  KILN_SDK_RETURN_IF_ERROR(sdk::ReadIntegers(k, o, values, &ready, allowed));
  if (!ready && plan.ready) plan.NotReady(sdk::Describe(k, o) + " has no data");
  return KILN_STATUS_OK;
}

void CheckInputShapesKnown(sdk::KernelContext& k, PlanBase& plan) {
  for (int32_t i = 0; i < k.num_inputs(); ++i) {
    const sdk::Tensor t = k.input(i);
    if (t.present() && !sdk::HasKnownShape(t)) {
      plan.NotReady("the shape of input " + std::to_string(i) + " '" +
                    t.name() + "' is not known");
      return;
    }
  }
}

bool ParametersConstant(sdk::KernelContext& k) {
  for (int32_t i = 1; i < k.num_inputs(); ++i) {
    const sdk::Tensor t = k.input(i);
    if (t.present() && !t.is_constant()) return false;
  }
  return true;
}

std::vector<Shape> InputShapes(sdk::KernelContext& k) {
  std::vector<Shape> shapes;
  for (int32_t i = 0; i < k.num_inputs(); ++i) {
    const sdk::Tensor t = k.input(i);
    shapes.push_back(t.present() ? t.shape() : Shape{-1});
  }
  return shapes;
}

bool InputShapesAre(sdk::KernelContext& k, const std::vector<Shape>& shapes) {
  if (static_cast<size_t>(k.num_inputs()) != shapes.size()) return false;
  for (int32_t i = 0; i < k.num_inputs(); ++i) {
    const sdk::Tensor t = k.input(i);
    const Shape& want = shapes[static_cast<size_t>(i)];
    if (!t.present()) {
      if (want != Shape{-1}) return false;
      continue;
    }
    if (t.rank() != static_cast<int32_t>(want.size())) return false;
    for (int32_t d = 0; d < t.rank(); ++d) {
      if (t.dim(d) != want[static_cast<size_t>(d)]) return false;
    }
  }
  return true;
}

namespace {

// The step of `map` when it is start, start + step, ... with every entry
// >= 0 (no fill); 0 otherwise.
int64_t ArithmeticStep(const std::vector<int64_t>& map) {
  if (map.empty() || map[0] < 0) return 0;
  const int64_t step = map.size() > 1 ? map[1] - map[0] : 1;
  if (step <= 0) return 0;
  for (size_t i = 1; i < map.size(); ++i) {
    if (map[i] != map[0] + static_cast<int64_t>(i) * step) return 0;
  }
  return step;
}

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
  // A kept innermost axis (TRANSPOSE with the last axis last, SLICE, PAD's
  // inner rows): each row is one block copy; a strided one (TRANSPOSE
  // moving the last axis) reads without the map.
  const int64_t step = ArithmeticStep(inner);
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
    } else if (step == 1) {
      out = std::copy_n(in + row + inner[0], inner.size(), out);
    } else if (step > 1) {
      const T* src = in + row + inner[0];
      const int64_t count = static_cast<int64_t>(inner.size());
      for (int64_t i = 0; i < count; ++i) *out++ = src[i * step];
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
    KILN_SDK_RETURN_IF_ERROR(sdk::ExpectPresent(k, sdk::Output(i)));
    const sdk::Tensor out = k.output(i);
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
    KILN_SDK_RETURN_IF_ERROR(sdk::ExpectOutputShape(
        k, sdk::Output(i), plan.output_shapes[static_cast<size_t>(i)]));
    void* data = nullptr;
    KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, sdk::Output(i), &data));
  }
  return KILN_STATUS_OK;
}

}  // namespace kiln::cpu::data
