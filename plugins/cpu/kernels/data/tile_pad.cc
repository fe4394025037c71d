// TILE, BROADCAST_TO, PAD, PADV2 and MIRROR_PAD: each output dim reads its
// input dim through an index map (CopyWithDimMaps); padding entries are -1.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/data/data_common.h"

namespace kiln::cpu::data {
namespace {

using sdk::KernelContext;
using sdk::Tensor;

struct MapPlan : PlanBase {
  std::vector<std::vector<int64_t>> maps;
};

// Copies input 0 through the plan's maps; `fill` (element bytes, or null for
// zeros) goes where a map entry is negative.
KilnStatus RunMapped(KernelContext& k, const MapPlan& plan, const void* fill) {
  const Tensor in = k.input(0), out = k.output(0);
  const void* src = nullptr;
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, sdk::Input(0), &src));
  if (NumElements(plan.output_shapes[0]) == 0) return KILN_STATUS_OK;
  CopyWithDimMaps(plan.maps, 0, sdk::TypeByteSize(in.type()), src,
                  out.data<void>(), fill);
  return KILN_STATUS_OK;
}

KilnStatus RunCopyMaps(KernelContext& k, const MapPlan& plan) {
  return RunMapped(k, plan, nullptr);
}

// Sizes the output before the plan's per-dimension maps are built, so that
// the host refuses an output over its size limits (overflow, the
// interpreter's max_arena_bytes) before this kernel allocates maps as long
// as the output's dimensions; the maps (8 bytes per position along each
// dimension) may take at most the output's own size plus kMapSlackBytes,
// and never more than kMaxMapBytes (the host checks the output itself
// against max_arena_bytes only when it allocates, after prepare).
// False (and `status` set) when no maps are to be built: the resize or that
// bound failed, or the output is empty (RunMapped copies nothing then).
bool NeedsMaps(KernelContext& k, const Shape& out_shape, KilnStatus* status) {
  constexpr uint64_t kMapSlackBytes = uint64_t{64} << 20;
  constexpr uint64_t kMaxMapBytes = uint64_t{1} << 30;
  // At invoke the output already has the planned shape (prepare sized it;
  // CheckOutputsForInvoke refuses anything else), and resizing is refused.
  *status = k.output(0).shape() == out_shape ? KILN_STATUS_OK
                                             : k.Resize(k.output(0), out_shape);
  if (*status != KILN_STATUS_OK || NumElements(out_shape) == 0) return false;
  uint64_t map_bytes = 0;
  for (int32_t n : out_shape)
    map_bytes += uint64_t{8} * static_cast<uint32_t>(n);
  const uint64_t output_bytes = static_cast<uint64_t>(NumElements(out_shape)) *
                                sdk::TypeByteSize(k.output(0).type());
  if (map_bytes > output_bytes + kMapSlackBytes || map_bytes > kMaxMapBytes) {
    *status =
        k.Fail(KILN_STATUS_RESOURCE_EXHAUSTED, "output '", k.output(0).name(),
               "' of shape ", ShapeString(out_shape), " needs ", map_bytes,
               " bytes of index maps, more than its own size plus 64 MiB "
               "that this kernel allows");
    return false;
  }
  return true;
}

// ---- TILE ------------------------------------------------------------------

KilnStatus PlanTile(KernelContext& k, MapPlan& plan) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectInputCount(k, 2, 2));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectOutputCount(k, 1));
  KILN_SDK_RETURN_IF_ERROR(ExpectMovableInOut(k));
  std::vector<int64_t> multiples;
  KILN_SDK_RETURN_IF_ERROR(
      ReadIndexValues(k, sdk::Input(1, "multiples"), plan, &multiples));
  if (!plan.ready) return KILN_STATUS_OK;
  const Shape in_shape = k.input(0).shape();
  if (multiples.size() != in_shape.size()) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "multiples has ",
                  multiples.size(), " entries but input '", k.input(0).name(),
                  "' has rank ", in_shape.size());
  }
  const std::vector<int64_t> strides = Strides(in_shape);
  Shape out_shape;
  for (size_t d = 0; d < in_shape.size(); ++d) {
    const int64_t n = int64_t{in_shape[d]} * multiples[d];
    if (multiples[d] < 0 || n > INT32_MAX) {
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "multiple ", multiples[d],
                    " for dimension ", d, " is invalid");
    }
    out_shape.push_back(static_cast<int32_t>(n));
  }
  plan.output_shapes = {out_shape};
  KilnStatus status;
  if (!NeedsMaps(k, out_shape, &status)) return status;
  for (size_t d = 0; d < in_shape.size(); ++d) {
    std::vector<int64_t> map(static_cast<size_t>(out_shape[d]));
    for (size_t i = 0; i < map.size(); ++i) {
      map[i] = (static_cast<int64_t>(i) % in_shape[d]) * strides[d];
    }
    plan.maps.push_back(std::move(map));
  }
  return KILN_STATUS_OK;
}

// ---- BROADCAST_TO ----------------------------------------------------------

KilnStatus PlanBroadcastTo(KernelContext& k, MapPlan& plan) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectInputCount(k, 2, 2));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectOutputCount(k, 1));
  KILN_SDK_RETURN_IF_ERROR(ExpectMovableInOut(k));
  std::vector<int64_t> target;
  KILN_SDK_RETURN_IF_ERROR(
      ReadIndexValues(k, sdk::Input(1, "shape"), plan, &target));
  if (!plan.ready) return KILN_STATUS_OK;
  const Shape in_shape = k.input(0).shape();
  constexpr size_t kMaxBroadcastToRank = 8;
  if (target.size() < in_shape.size() || target.size() > kMaxBroadcastToRank) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "target shape has rank ",
                  target.size(), "; it must be between the input rank ",
                  in_shape.size(), " and ", kMaxBroadcastToRank);
  }
  const std::vector<int64_t> strides = Strides(in_shape);
  const size_t lead = target.size() - in_shape.size();
  Shape out_shape;
  for (size_t j = 0; j < target.size(); ++j) {
    const int64_t n = target[j];
    const int64_t d = j < lead ? 1 : in_shape[j - lead];
    if (n < 0 || n > INT32_MAX || (d != 1 && d != n)) {
      Shape target32(target.begin(), target.end());
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "cannot broadcast input '",
                    k.input(0).name(), "' of shape ", ShapeString(in_shape),
                    " to ", ShapeString(target32));
    }
    out_shape.push_back(static_cast<int32_t>(n));
  }
  plan.output_shapes = {out_shape};
  KilnStatus status;
  if (!NeedsMaps(k, out_shape, &status)) return status;
  for (size_t j = 0; j < target.size(); ++j) {
    const int64_t n = target[j];
    const int64_t d = j < lead ? 1 : in_shape[j - lead];
    std::vector<int64_t> map(static_cast<size_t>(n), 0);
    if (d != 1) {
      for (int64_t i = 0; i < n; ++i) {
        map[static_cast<size_t>(i)] = i * strides[j - lead];
      }
    }
    plan.maps.push_back(std::move(map));
  }
  return KILN_STATUS_OK;
}

// ---- PAD / PADV2 / MIRROR_PAD ----------------------------------------------

// Reads paddings of shape [rank, 2] into before/after per dim.
KilnStatus ReadPaddings(KernelContext& k, MapPlan& plan,
                        std::vector<int64_t>* before,
                        std::vector<int64_t>* after) {
  const Tensor in = k.input(0), paddings = k.input(1);
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectRankAtMost(k, sdk::Input(0), kMaxRank));
  const size_t rank = static_cast<size_t>(in.rank());
  if (!paddings.present() || paddings.rank() != 2 ||
      paddings.dim(0) != static_cast<int32_t>(rank) || paddings.dim(1) != 2) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "paddings must have shape [",
                  rank, ", 2] for input '", in.name(), "' of rank ", rank);
  }
  std::vector<int64_t> values;
  KILN_SDK_RETURN_IF_ERROR(
      ReadIndexValues(k, sdk::Input(1, "paddings"), plan, &values));
  if (!plan.ready) return KILN_STATUS_OK;
  before->resize(rank);
  after->resize(rank);
  for (size_t d = 0; d < rank; ++d) {
    (*before)[d] = values[2 * d];
    (*after)[d] = values[2 * d + 1];
    if ((*before)[d] < 0 || (*after)[d] < 0) {
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "paddings for dimension ", d,
                    " are [", (*before)[d], ", ", (*after)[d],
                    "]; they must be >= 0");
    }
    if (in.dim(static_cast<int32_t>(d)) + (*before)[d] + (*after)[d] >
        INT32_MAX) {
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "padded dimension ", d,
                    " is too large");
    }
  }
  return KILN_STATUS_OK;
}

bool IsQuantized(KilnTensorType type) {
  return type == KILN_TYPE_INT8 || type == KILN_TYPE_UINT8 ||
         type == KILN_TYPE_INT16;
}

KilnStatus PlanPad(KernelContext& k, MapPlan& plan) {
  const bool v2 = k.builtin_code() == KILN_OP_PADV2;
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectInputCount(k, 2, v2 ? 3 : 2));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectOutputCount(k, 1));
  KILN_SDK_RETURN_IF_ERROR(ExpectMovableInOut(k));
  const Tensor in = k.input(0);
  if (k.num_inputs() == 3 && k.input(2).present()) {
    const Tensor value = k.input(2);
    KILN_SDK_RETURN_IF_ERROR(sdk::ExpectSameType(
        k, sdk::Input(2, "constant_values"), sdk::Input(0)));
    if (value.num_elements() != 1) {
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "constant_values '",
                    value.name(), "' must hold one value, has ",
                    value.num_elements());
    }
    if (IsQuantized(in.type())) {
      KILN_SDK_RETURN_IF_ERROR(sdk::ExpectSameQuantization(
          k, sdk::Input(2, "constant_values"), sdk::Output(0),
          "LiteRT writes the value unchanged into the output"));
    }
  }
  std::vector<int64_t> before, after;
  KILN_SDK_RETURN_IF_ERROR(ReadPaddings(k, plan, &before, &after));
  if (!plan.ready) return KILN_STATUS_OK;
  const Shape in_shape = in.shape();
  const std::vector<int64_t> strides = Strides(in_shape);
  Shape out_shape;
  for (size_t d = 0; d < in_shape.size(); ++d) {
    const int64_t dim = in_shape[d];
    const int64_t n = dim + before[d] + after[d];
    out_shape.push_back(static_cast<int32_t>(n));
    std::vector<int64_t> map(static_cast<size_t>(n), -1);
    for (int64_t i = 0; i < dim; ++i) {
      map[static_cast<size_t>(before[d] + i)] = i * strides[d];
    }
    plan.maps.push_back(std::move(map));
  }
  plan.output_shapes = {out_shape};
  return KILN_STATUS_OK;
}

KilnStatus RunPad(KernelContext& k, const MapPlan& plan) {
  const Tensor in = k.input(0), out = k.output(0);
  uint8_t fill[8] = {};
  if (k.num_inputs() == 3 && k.input(2).present()) {
    const void* value = nullptr;
    KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, sdk::Input(2), &value));
    std::memcpy(fill, value, sdk::TypeByteSize(in.type()));
  } else if (IsQuantized(in.type())) {
    // Quantized zero is the output's zero point.
    KilnQuantizationParams q{};
    KILN_SDK_RETURN_IF_ERROR(k.Quantization(out, &q));
    if (q.num_channels > 0 && q.zero_points != nullptr) {
      const int64_t zp = q.zero_points[0];
      if (in.type() == KILN_TYPE_INT8) {
        const int8_t v = static_cast<int8_t>(zp);
        std::memcpy(fill, &v, 1);
      } else if (in.type() == KILN_TYPE_INT16) {
        const int16_t v = static_cast<int16_t>(zp);
        std::memcpy(fill, &v, sizeof(v));
      } else {
        const uint8_t v = static_cast<uint8_t>(zp);
        std::memcpy(fill, &v, 1);
      }
    }
  }
  return RunMapped(k, plan, fill);
}

KilnStatus PlanMirrorPad(KernelContext& k, MapPlan& plan) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectInputCount(k, 2, 2));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectOutputCount(k, 1));
  KILN_SDK_RETURN_IF_ERROR(ExpectMovableInOut(k));
  const int64_t mode = k.OptionInt(KILN_OPTION_MIRROR_PAD_MODE, 0);
  if (mode != 0 && mode != 1) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "unknown mirror pad mode ",
                  mode, "; expected 0 (REFLECT) or 1 (SYMMETRIC)");
  }
  const bool symmetric = mode == 1;
  std::vector<int64_t> before, after;
  KILN_SDK_RETURN_IF_ERROR(ReadPaddings(k, plan, &before, &after));
  if (!plan.ready) return KILN_STATUS_OK;
  const Shape in_shape = k.input(0).shape();
  const std::vector<int64_t> strides = Strides(in_shape);
  Shape out_shape;
  for (size_t d = 0; d < in_shape.size(); ++d) {
    const int64_t dim = in_shape[d];
    const int64_t limit = std::max<int64_t>(0, symmetric ? dim : dim - 1);
    if (before[d] > limit || after[d] > limit) {
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "paddings [", before[d], ", ",
                    after[d], "] for dimension ", d, " (size ", dim,
                    ") exceed ", limit, ", the most ",
                    symmetric ? "SYMMETRIC" : "REFLECT", " mode allows");
    }
    const int64_t n = dim + before[d] + after[d];
    out_shape.push_back(static_cast<int32_t>(n));
    std::vector<int64_t> map(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      int64_t j = i - before[d];
      if (j < 0) j = symmetric ? -j - 1 : -j;
      if (j >= dim) j = symmetric ? 2 * dim - 1 - j : 2 * dim - 2 - j;
      map[static_cast<size_t>(i)] = j * strides[d];
    }
    plan.maps.push_back(std::move(map));
  }
  plan.output_shapes = {out_shape};
  return KILN_STATUS_OK;
}

}  // namespace

void RegisterTilePadKernels(sdk::PluginDefinition& def) {
  // TILE v1 float/uint8/int16/int32/int64/bool, v3 int8. v2 (STRING) is not
  // claimed.
  def.AddKernel(
      PlannedKernel<MapPlan, PlanTile, RunCopyMaps>(KILN_OP_TILE, 1, 1));
  def.AddKernel(
      PlannedKernel<MapPlan, PlanTile, RunCopyMaps>(KILN_OP_TILE, 3, 3));
  // BROADCAST_TO v2 (v1 was withdrawn), v3 int8/int16. Output rank <= 8.
  def.AddKernel(PlannedKernel<MapPlan, PlanBroadcastTo, RunCopyMaps>(
      KILN_OP_BROADCAST_TO, 2, 3));
  // PAD / PADV2 v1 float/uint8/int32/int64, v2 int8, v3 int16, v4 rank 5
  // (6 also works), v5 bool. Quantized PAD pads with the output zero point;
  // PADV2's quantized pad value must share the output's quantization.
  def.AddKernel(PlannedKernel<MapPlan, PlanPad, RunPad>(KILN_OP_PAD, 1, 5));
  def.AddKernel(PlannedKernel<MapPlan, PlanPad, RunPad>(KILN_OP_PADV2, 1, 5));
  // MIRROR_PAD v1 float/uint8/int32/int64, v2 int8, v3 int16.
  def.AddKernel(PlannedKernel<MapPlan, PlanMirrorPad, RunCopyMaps>(
      KILN_OP_MIRROR_PAD, 1, 3));
}

}  // namespace kiln::cpu::data
