// SLICE and STRIDED_SLICE, both as offset maps over the output dims.
#include <algorithm>
#include <string>
#include <vector>

#include "kernels/data/data_common.h"

namespace kiln::cpu::data {
namespace {

using sdk::KernelContext;
using sdk::Tensor;

struct SlicePlan : PlanBase {
  int64_t base = 0;  // element offset of the first element read
  std::vector<std::vector<int64_t>> maps;
};

KilnStatus ExpectMovableInOutRankAtMost(KernelContext& k) {
  KILN_SDK_RETURN_IF_ERROR(ExpectMovableInOut(k));
  return sdk::ExpectRankAtMost(k, sdk::Input(0), kMaxRank);
}

// Reads a 1-D index operand; marks the plan not ready when it has no data.
KilnStatus ReadIndexInput(KernelContext& k, sdk::Operand o,
                          std::vector<int64_t>* values, SlicePlan& plan) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectRank(k, o, 1));
  return ReadIndexValues(k, o, plan, values);
}

KilnStatus RunSlice(KernelContext& k, const SlicePlan& plan) {
  const Tensor in = k.input(0), out = k.output(0);
  const void* src = nullptr;
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, sdk::Input(0), &src));
  if (NumElements(plan.output_shapes[0]) == 0) return KILN_STATUS_OK;
  CopyWithDimMaps(plan.maps, plan.base, sdk::TypeByteSize(in.type()), src,
                  out.data<void>(), nullptr);
  return KILN_STATUS_OK;
}

// ---- SLICE -----------------------------------------------------------------

KilnStatus PlanSlice(KernelContext& k, SlicePlan& plan) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectInputCount(k, 3, 3));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectOutputCount(k, 1));
  KILN_SDK_RETURN_IF_ERROR(ExpectMovableInOutRankAtMost(k));
  std::vector<int64_t> begin, size;
  KILN_SDK_RETURN_IF_ERROR(
      ReadIndexInput(k, sdk::Input(1, "begin"), &begin, plan));
  KILN_SDK_RETURN_IF_ERROR(
      ReadIndexInput(k, sdk::Input(2, "size"), &size, plan));
  if (!plan.ready) return KILN_STATUS_OK;
  const Tensor in = k.input(0);
  const Shape in_shape = in.shape();
  const size_t rank = in_shape.size();
  if (begin.size() != rank || size.size() != rank) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "begin and size must have ",
                  rank, " entries (the rank of input '", in.name(), "'), have ",
                  begin.size(), " and ", size.size());
  }
  const std::vector<int64_t> strides = Strides(in_shape);
  Shape out_shape(rank);
  plan.maps.resize(rank);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t dim = in_shape[d];
    const int64_t b = begin[d];
    const int64_t n = size[d] == -1 ? dim - b : size[d];
    if (b < 0 || b > dim || n < 0 || b + n > dim) {
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "slice of dimension ", d,
                    " (size ", dim, ") with begin ", b, " and size ", size[d],
                    " is out of bounds");
    }
    out_shape[d] = static_cast<int32_t>(n);
    plan.base += b * strides[d];
    plan.maps[d].resize(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) {
      plan.maps[d][static_cast<size_t>(j)] = j * strides[d];
    }
  }
  plan.output_shapes = {out_shape};
  return KILN_STATUS_OK;
}

// ---- STRIDED_SLICE ---------------------------------------------------------

bool Bit(int64_t mask, size_t i) { return i < 63 && ((mask >> i) & 1) != 0; }

// The slice spec of a STRIDED_SLICE node: one entry per begin/end/strides
// value, with the options' bit masks. Always holds an ellipsis entry (an
// implicit trailing one when the node has none).
struct StridedSliceSpec {
  std::vector<int64_t> begin, end, stride;
  int64_t begin_mask = 0, end_mask = 0, ellipsis_mask = 0;
  int64_t new_axis_mask = 0, shrink_mask = 0;
  bool offset = false;  // end is relative to begin (version 8)
  int64_t new_axes_after_ellipsis = 0;
  size_t size() const { return begin.size(); }
};

// Reads the spec; marks the plan not ready when an index input has no data.
KilnStatus ReadStridedSliceSpec(KernelContext& k, SlicePlan& plan,
                                StridedSliceSpec* spec) {
  KILN_SDK_RETURN_IF_ERROR(
      ReadIndexInput(k, sdk::Input(1, "begin"), &spec->begin, plan));
  KILN_SDK_RETURN_IF_ERROR(
      ReadIndexInput(k, sdk::Input(2, "end"), &spec->end, plan));
  KILN_SDK_RETURN_IF_ERROR(
      ReadIndexInput(k, sdk::Input(3, "strides"), &spec->stride, plan));
  if (!plan.ready) return KILN_STATUS_OK;
  const size_t n = spec->begin.size();
  if (n != spec->end.size() || n != spec->stride.size()) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT,
                  "begin, end and strides must have the same length, have ", n,
                  ", ", spec->end.size(), " and ", spec->stride.size());
  }
  if (n > 32) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "begin has ", n,
                  " entries; at most 32 are supported");
  }
  spec->begin_mask = k.OptionInt(KILN_OPTION_BEGIN_MASK, 0);
  spec->end_mask = k.OptionInt(KILN_OPTION_END_MASK, 0);
  spec->ellipsis_mask = k.OptionInt(KILN_OPTION_ELLIPSIS_MASK, 0);
  spec->new_axis_mask = k.OptionInt(KILN_OPTION_NEW_AXIS_MASK, 0);
  spec->shrink_mask = k.OptionInt(KILN_OPTION_SHRINK_AXIS_MASK, 0);
  spec->offset = k.OptionInt(KILN_OPTION_OFFSET, 0) != 0;
  int ellipsis_at = -1;
  for (size_t i = 0; i < n; ++i) {
    if (!Bit(spec->ellipsis_mask, i)) continue;
    if (ellipsis_at >= 0) {
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT,
                    "ellipsis_mask has more than one bit set");
    }
    ellipsis_at = static_cast<int>(i);
  }
  if (ellipsis_at < 0) {  // implicit trailing ellipsis
    ellipsis_at = static_cast<int>(n);
    spec->ellipsis_mask |= int64_t{1} << n;
    spec->begin.push_back(0);
    spec->end.push_back(0);
    spec->stride.push_back(1);
  }
  for (size_t i = static_cast<size_t>(ellipsis_at) + 1; i < spec->size(); ++i) {
    if (Bit(spec->new_axis_mask, i)) ++spec->new_axes_after_ellipsis;
  }
  return KILN_STATUS_OK;
}

// The output extent and the input offsets (in elements, stride
// `in_stride` per step) that strided spec entry `i` reads from an input
// dim of size `dim`; the entry's stride is non-zero.
std::vector<int64_t> StridedDimMap(const StridedSliceSpec& spec, size_t i,
                                   int64_t dim, int64_t in_stride) {
  const int64_t s = spec.stride[i];
  const int64_t lo = s > 0 ? 0 : -1;
  const int64_t hi = s > 0 ? dim : dim - 1;
  auto clamp = [&](int64_t x) { return x < lo ? lo : x > hi ? hi : x; };
  auto wrap = [&](int64_t x) { return x < 0 ? x + dim : x; };
  const int64_t start =
      Bit(spec.begin_mask, i) ? (s > 0 ? lo : hi) : clamp(wrap(spec.begin[i]));
  int64_t stop = 0;
  if (Bit(spec.end_mask, i)) {
    stop = s > 0 ? hi : lo;
  } else if (spec.offset) {
    stop = clamp(start + spec.end[i]);  // end is relative to begin
  } else {
    stop = clamp(wrap(spec.end[i]));
  }
  const int64_t count = s > 0
                            ? (stop > start ? (stop - start + s - 1) / s : 0)
                            : (start > stop ? (start - stop - s - 1) / -s : 0);
  std::vector<int64_t> map(static_cast<size_t>(count));
  for (int64_t j = 0; j < count; ++j) {
    map[static_cast<size_t>(j)] = (start + j * s) * in_stride;
  }
  return map;
}

// Plans spec entry `i`, which reads input dim `*dense` (or, for an
// ellipsis, every dim the other entries leave) and advances `*dense` past
// the dims it consumes.
KilnStatus PlanSpecEntry(KernelContext& k, const StridedSliceSpec& spec,
                         size_t i, int64_t* dense, SlicePlan& plan,
                         Shape* out_shape) {
  const Shape in_shape = k.input(0).shape();
  const int64_t rank = static_cast<int64_t>(in_shape.size());
  const std::vector<int64_t> in_strides = Strides(in_shape);
  if (Bit(spec.ellipsis_mask, i)) {
    const int64_t n = static_cast<int64_t>(spec.size());
    const int64_t next = std::min(
        rank - (n - static_cast<int64_t>(i)) + 1 + spec.new_axes_after_ellipsis,
        rank);
    for (; *dense < next; ++*dense) {
      out_shape->push_back(in_shape[*dense]);
      plan.maps.push_back(Arithmetic(in_shape[*dense], in_strides[*dense]));
    }
    return KILN_STATUS_OK;
  }
  if (Bit(spec.new_axis_mask, i)) {
    out_shape->push_back(1);
    plan.maps.push_back({0});
    return KILN_STATUS_OK;
  }
  if (*dense >= rank) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "slice spec entry ", i,
                  " indexes past the last dimension of input '",
                  k.input(0).name(), "' (rank ", rank, ")");
  }
  const int64_t dim = in_shape[*dense];
  if (spec.stride[i] == 0) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "stride ", i, " is 0");
  }
  if (Bit(spec.shrink_mask, i)) {
    const int64_t b = spec.begin[i] < 0 ? spec.begin[i] + dim : spec.begin[i];
    if (b < 0 || b >= dim) {
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "shrink index ",
                    spec.begin[i], " at spec entry ", i,
                    " is out of range for dimension ", *dense, " of size ",
                    dim);
    }
    plan.base += b * in_strides[*dense];
    ++*dense;
    return KILN_STATUS_OK;
  }
  plan.maps.push_back(StridedDimMap(spec, i, dim, in_strides[*dense]));
  out_shape->push_back(static_cast<int32_t>(plan.maps.back().size()));
  ++*dense;
  return KILN_STATUS_OK;
}

// TF's sparse-to-dense rule: spec entries map to input dims; one ellipsis
// expands to the dims the other entries leave; new-axis entries insert a
// size-1 output dim and consume no input dim; a spec without an ellipsis
// gets an implicit one at its end.
KilnStatus PlanStridedSlice(KernelContext& k, SlicePlan& plan) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectInputCount(k, 4, 4));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectOutputCount(k, 1));
  KILN_SDK_RETURN_IF_ERROR(ExpectMovableInOutRankAtMost(k));
  StridedSliceSpec spec;
  KILN_SDK_RETURN_IF_ERROR(ReadStridedSliceSpec(k, plan, &spec));
  if (!plan.ready) return KILN_STATUS_OK;
  Shape out_shape;
  plan.maps.clear();
  plan.base = 0;
  int64_t dense = 0;  // next input dim
  for (size_t i = 0; i < spec.size(); ++i) {
    KILN_SDK_RETURN_IF_ERROR(
        PlanSpecEntry(k, spec, i, &dense, plan, &out_shape));
  }
  plan.output_shapes = {out_shape};
  return KILN_STATUS_OK;
}

}  // namespace

void RegisterSliceKernels(sdk::PluginDefinition& def) {
  // SLICE v1 float/uint8/int32/int64/bool, v2 int8, v4 int16, v5 rank 5
  // (rank 6 also works). v3 (STRING) is not claimed; v6 UINT32 and v7 INT4
  // are not supported.
  def.AddKernel(
      PlannedKernel<SlicePlan, PlanSlice, RunSlice>(KILN_OP_SLICE, 1, 2));
  def.AddKernel(
      PlannedKernel<SlicePlan, PlanSlice, RunSlice>(KILN_OP_SLICE, 4, 5));
  // STRIDED_SLICE v1 float/uint8/int32/int64/int16, v2 int8, v3 bool,
  // v4 rank 5 (6 also works), v6 ellipsis_mask / new_axis_mask, v8 offset.
  // v5 (STRING) and v7 (UINT32) are not claimed.
  def.AddKernel(PlannedKernel<SlicePlan, PlanStridedSlice, RunSlice>(
      KILN_OP_STRIDED_SLICE, 1, 4));
  def.AddKernel(PlannedKernel<SlicePlan, PlanStridedSlice, RunSlice>(
      KILN_OP_STRIDED_SLICE, 6, 6));
  def.AddKernel(PlannedKernel<SlicePlan, PlanStridedSlice, RunSlice>(
      KILN_OP_STRIDED_SLICE, 8, 8));
}

}  // namespace kiln::cpu::data
