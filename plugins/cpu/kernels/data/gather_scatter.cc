// GATHER, GATHER_ND and SCATTER_ND. Index values are checked at invoke: an
// out-of-range index fails the invoke with a message naming it, never reads
// or writes out of bounds.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/data/data_common.h"

namespace kiln::cpu::data {
namespace {

using sdk::KernelContext;
using sdk::Tensor;

constexpr sdk::Operand kGatherIndices = sdk::Input(1, "indices");
constexpr sdk::TypeSet kGatherIndexTypes =
    sdk::kIndexTypes | sdk::TypeSet{KILN_TYPE_INT16};

// All values of index operand `o`, at invoke.
KilnStatus ReadIndicesAtInvoke(KernelContext& k, sdk::Operand o,
                               std::vector<int64_t>* values) {
  bool ready = true;
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ReadIntegers(k, o, values, &ready, kGatherIndexTypes));
  if (!ready) {
    return k.Fail(KILN_STATUS_FAILED_PRECONDITION, sdk::Describe(k, o),
                  " has no data at invoke");
  }
  return KILN_STATUS_OK;
}

// ---- GATHER ----------------------------------------------------------------

struct GatherPlan : PlanBase {
  int axis = 0;
  int batch_dims = 0;
};

KilnStatus PlanGather(KernelContext& k, GatherPlan& plan) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectInputCount(k, 2, 2));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectOutputCount(k, 1));
  const Tensor params = k.input(0), indices = k.input(1);
  KILN_SDK_RETURN_IF_ERROR(ExpectMovableInOut(k, sdk::Input(0, "params")));
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectType(k, kGatherIndices, kGatherIndexTypes));
  const Shape p = params.shape(), ix = indices.shape();
  const int p_rank = static_cast<int>(p.size());
  const int ix_rank = static_cast<int>(ix.size());
  if (p_rank == 0) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "params '", params.name(),
                  "' is a scalar; GATHER needs rank >= 1");
  }
  KILN_SDK_RETURN_IF_ERROR(sdk::NormalizeAxis(
      k, "axis", k.OptionInt(KILN_OPTION_AXIS, 0), p_rank, &plan.axis));
  int64_t batch_dims = k.OptionInt(KILN_OPTION_BATCH_DIMS, 0);
  if (batch_dims < 0) batch_dims += ix_rank;
  if (batch_dims < 0 || batch_dims > ix_rank || batch_dims > plan.axis) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "batch_dims ",
                  k.OptionInt(KILN_OPTION_BATCH_DIMS, 0),
                  " is invalid: it must be in [-", ix_rank, ", ", ix_rank,
                  "] (indices rank) and not exceed axis ", plan.axis);
  }
  plan.batch_dims = static_cast<int>(batch_dims);
  for (int d = 0; d < plan.batch_dims; ++d) {
    if (p[d] != ix[d]) {
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "batch dimension ", d,
                    " differs: params '", params.name(), "' has ", p[d],
                    ", indices '", indices.name(), "' have ", ix[d]);
    }
  }
  Shape out_shape(p.begin(), p.begin() + plan.axis);
  out_shape.insert(out_shape.end(), ix.begin() + plan.batch_dims, ix.end());
  out_shape.insert(out_shape.end(), p.begin() + plan.axis + 1, p.end());
  plan.output_shapes = {out_shape};
  return KILN_STATUS_OK;
}

KilnStatus RunGather(KernelContext& k, const GatherPlan& plan) {
  const Tensor params = k.input(0), indices = k.input(1), out = k.output(0);
  const Shape p = params.shape(), ix = indices.shape();
  std::vector<int64_t> index;
  KILN_SDK_RETURN_IF_ERROR(ReadIndicesAtInvoke(k, kGatherIndices, &index));
  const void* data = nullptr;
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, sdk::Input(0), &data));
  const size_t elem = sdk::TypeByteSize(params.type());
  const size_t bd = static_cast<size_t>(plan.batch_dims);
  const size_t axis = static_cast<size_t>(plan.axis);
  const int64_t batches = DimProduct(p, 0, bd);
  const int64_t outer = DimProduct(p, bd, axis);
  const int64_t axis_size = p[axis];
  const int64_t inner = DimProduct(p, axis + 1, p.size());
  const int64_t coords = DimProduct(ix, bd, ix.size());
  const size_t slab = static_cast<size_t>(inner) * elem;
  const uint8_t* src = static_cast<const uint8_t*>(data);
  uint8_t* dst = out.data<uint8_t>();
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t c = 0; c < coords; ++c) {
        const int64_t at = b * coords + c;
        const int64_t i = index[static_cast<size_t>(at)];
        if (i < 0 || i >= axis_size) {
          return k.Fail(KILN_STATUS_OUT_OF_RANGE, "index ", i, " at position ",
                        at, " of indices '", indices.name(),
                        "' is out of range [0, ", axis_size, ") for axis ",
                        plan.axis, " of params '", params.name(), "'");
        }
        if (slab == 0) continue;
        std::memcpy(
            dst,
            src + static_cast<size_t>((b * outer + o) * axis_size + i) * slab,
            slab);
        dst += slab;
      }
    }
  }
  return KILN_STATUS_OK;
}

// ---- GATHER_ND / SCATTER_ND common
// -------------------------------------------

struct NdPlan : PlanBase {
  int64_t tuples = 0;  // number of index tuples
  int64_t depth = 0;   // entries per tuple
  int64_t slice = 0;   // elements per gathered/scattered slice
};

// Element offset of index tuple `t` into a tensor of shape `shape`, or an
// error naming the bad coordinate.
KilnStatus TupleOffset(KernelContext& k, const std::vector<int64_t>& index,
                       int64_t t, int64_t depth, const Shape& shape,
                       const std::vector<int64_t>& strides,
                       const Tensor& indices, int64_t* offset) {
  *offset = 0;
  for (int64_t j = 0; j < depth; ++j) {
    const int64_t v = index[static_cast<size_t>(t * depth + j)];
    const int32_t dim = shape[static_cast<size_t>(j)];
    if (v < 0 || v >= dim) {
      return k.Fail(KILN_STATUS_OUT_OF_RANGE, "index tuple ", t,
                    " of indices '", indices.name(), "' has coordinate ", v,
                    " at position ", j, ", out of range [0, ", dim, ")");
    }
    *offset += v * strides[static_cast<size_t>(j)];
  }
  return KILN_STATUS_OK;
}

// ---- GATHER_ND -------------------------------------------------------------

KilnStatus PlanGatherNd(KernelContext& k, NdPlan& plan) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectInputCount(k, 2, 2));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectOutputCount(k, 1));
  const Tensor params = k.input(0), indices = k.input(1);
  KILN_SDK_RETURN_IF_ERROR(ExpectMovableInOut(k, sdk::Input(0, "params")));
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectType(k, kGatherIndices, kGatherIndexTypes));
  const Shape p = params.shape(), ix = indices.shape();
  if (ix.empty()) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "indices '", indices.name(),
                  "' must have rank >= 1");
  }
  plan.depth = ix.back();
  if (plan.depth > static_cast<int64_t>(p.size())) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "index depth ", plan.depth,
                  " (last dim of indices '", indices.name(),
                  "') exceeds the rank ", p.size(), " of params '",
                  params.name(), "'");
  }
  plan.tuples = DimProduct(ix, 0, ix.size() - 1);
  plan.slice = DimProduct(p, static_cast<size_t>(plan.depth), p.size());
  Shape out_shape(ix.begin(), ix.end() - 1);
  out_shape.insert(out_shape.end(), p.begin() + plan.depth, p.end());
  plan.output_shapes = {out_shape};
  return KILN_STATUS_OK;
}

KilnStatus RunGatherNd(KernelContext& k, const NdPlan& plan) {
  const Tensor params = k.input(0), indices = k.input(1), out = k.output(0);
  std::vector<int64_t> index;
  KILN_SDK_RETURN_IF_ERROR(ReadIndicesAtInvoke(k, kGatherIndices, &index));
  const void* data = nullptr;
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, sdk::Input(0), &data));
  const Shape p = params.shape();
  const std::vector<int64_t> strides = Strides(p);
  const size_t elem = sdk::TypeByteSize(params.type());
  const size_t slab = static_cast<size_t>(plan.slice) * elem;
  const uint8_t* src = static_cast<const uint8_t*>(data);
  uint8_t* dst = out.data<uint8_t>();
  for (int64_t t = 0; t < plan.tuples; ++t) {
    int64_t offset = 0;
    KILN_SDK_RETURN_IF_ERROR(
        TupleOffset(k, index, t, plan.depth, p, strides, indices, &offset));
    if (slab == 0) continue;
    std::memcpy(dst, src + static_cast<size_t>(offset) * elem, slab);
    dst += slab;
  }
  return KILN_STATUS_OK;
}

// ---- SCATTER_ND ------------------------------------------------------------

constexpr sdk::Operand kScatterIndices = sdk::Input(0, "indices");
constexpr sdk::Operand kUpdates = sdk::Input(1, "updates");

// Inputs (indices, updates, shape).
KilnStatus PlanScatterNd(KernelContext& k, NdPlan& plan) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectInputCount(k, 3, 3));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectOutputCount(k, 1));
  const Tensor indices = k.input(0);
  KILN_SDK_RETURN_IF_ERROR(ExpectMovableInOut(k, kUpdates));
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectType(k, kScatterIndices, sdk::kIndexTypes));
  std::vector<int64_t> shape_values;
  KILN_SDK_RETURN_IF_ERROR(
      ReadIndexValues(k, sdk::Input(2, "shape"), plan, &shape_values));
  if (!plan.ready) return KILN_STATUS_OK;
  Shape out_shape;
  for (const int64_t d : shape_values) {
    if (d < 0 || d > INT32_MAX) {
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT,
                    sdk::Describe(k, sdk::Input(2, "shape")),
                    " has invalid dimension ", d);
    }
    out_shape.push_back(static_cast<int32_t>(d));
  }
  const Shape ix = indices.shape();
  if (ix.empty()) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "indices '", indices.name(),
                  "' must have rank >= 1");
  }
  plan.depth = ix.back();
  if (plan.depth > static_cast<int64_t>(out_shape.size())) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "index depth ", plan.depth,
                  " exceeds the output rank ", out_shape.size());
  }
  Shape expected_updates(ix.begin(), ix.end() - 1);
  expected_updates.insert(expected_updates.end(),
                          out_shape.begin() + plan.depth, out_shape.end());
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectShape(
      k, kUpdates, expected_updates,
      "indices shape without its last dim, then the output shape after the "
      "index depth"));
  plan.tuples = DimProduct(ix, 0, ix.size() - 1);
  plan.slice =
      DimProduct(out_shape, static_cast<size_t>(plan.depth), out_shape.size());
  plan.output_shapes = {out_shape};
  return KILN_STATUS_OK;
}

// Adds src into dst; for BOOL (stored as bytes) adding is a logical or.
template <typename T, bool kLogicalOr>
void Accumulate(T* dst, const T* src, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if (kLogicalOr) {
      dst[i] = (dst[i] != 0 || src[i] != 0) ? 1 : 0;
    } else {
      dst[i] = static_cast<T>(dst[i] + src[i]);
    }
  }
}

template <typename T, bool kLogicalOr = false>
KilnStatus ScatterTyped(KernelContext& k, const NdPlan& plan,
                        const std::vector<int64_t>& index, const T* updates,
                        T* out) {
  const Shape& out_shape = plan.output_shapes[0];
  const std::vector<int64_t> strides = Strides(out_shape);
  std::fill_n(out, NumElements(out_shape), T{});
  for (int64_t t = 0; t < plan.tuples; ++t) {
    int64_t offset = 0;
    KILN_SDK_RETURN_IF_ERROR(TupleOffset(k, index, t, plan.depth, out_shape,
                                         strides, k.input(0), &offset));
    // Duplicate indices add up (TFLite semantics).
    Accumulate<T, kLogicalOr>(out + offset, updates + t * plan.slice,
                              plan.slice);
  }
  return KILN_STATUS_OK;
}

KilnStatus RunScatterNd(KernelContext& k, const NdPlan& plan) {
  const Tensor updates = k.input(1), out = k.output(0);
  std::vector<int64_t> index;
  KILN_SDK_RETURN_IF_ERROR(ReadIndicesAtInvoke(k, kScatterIndices, &index));
  const void* data = nullptr;
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, sdk::Input(1), &data));
  if (NumElements(plan.output_shapes[0]) == 0) return KILN_STATUS_OK;
  switch (updates.type()) {
    case KILN_TYPE_FLOAT32:
      return ScatterTyped(k, plan, index, static_cast<const float*>(data),
                          out.data<float>());
    case KILN_TYPE_INT32:
      return ScatterTyped(k, plan, index, static_cast<const int32_t*>(data),
                          out.data<int32_t>());
    case KILN_TYPE_INT64:
      return ScatterTyped(k, plan, index, static_cast<const int64_t*>(data),
                          out.data<int64_t>());
    case KILN_TYPE_INT16:
      return ScatterTyped(k, plan, index, static_cast<const int16_t*>(data),
                          out.data<int16_t>());
    case KILN_TYPE_INT8:
      return ScatterTyped(k, plan, index, static_cast<const int8_t*>(data),
                          out.data<int8_t>());
    case KILN_TYPE_UINT8:
      return ScatterTyped(k, plan, index, static_cast<const uint8_t*>(data),
                          out.data<uint8_t>());
    case KILN_TYPE_BOOL:
      return ScatterTyped<uint8_t, true>(k, plan, index,
                                         static_cast<const uint8_t*>(data),
                                         out.data<uint8_t>());
    default:
      return k.Fail(KILN_STATUS_INTERNAL, "unexpected SCATTER_ND type");
  }
}

}  // namespace

void RegisterGatherScatterKernels(sdk::PluginDefinition& def) {
  // GATHER v1 float/uint8/int32/int64, v2 int8, v3 bool, v4 int16 params,
  // v5 batch_dims, v6 int16 indices. (v7 INT4 params: not supported.)
  def.AddKernel(
      PlannedKernel<GatherPlan, PlanGather, RunGather>(KILN_OP_GATHER, 1, 6));
  // GATHER_ND v1 float/uint8/int8/int32/int64, v3 int16 params, v4 int16
  // indices, v5 bool. v2 (STRING params) is not claimed.
  def.AddKernel(PlannedKernel<NdPlan, PlanGatherNd, RunGatherNd>(
      KILN_OP_GATHER_ND, 1, 1));
  def.AddKernel(PlannedKernel<NdPlan, PlanGatherNd, RunGatherNd>(
      KILN_OP_GATHER_ND, 3, 5));
  // SCATTER_ND v1: the only version; duplicate indices accumulate.
  def.AddKernel(PlannedKernel<NdPlan, PlanScatterNd, RunScatterNd>(
      KILN_OP_SCATTER_ND, 1, 1));
}

}  // namespace kiln::cpu::data
