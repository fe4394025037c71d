// CONCATENATION, PACK, SPLIT, SPLIT_V and UNPACK: block copies along one
// axis.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/data/data_common.h"
#include "kernels/nn/parallel.h"

namespace kiln::cpu::data {
namespace {

using sdk::KernelContext;
using sdk::Tensor;

// ---- CONCATENATION / PACK --------------------------------------------------

struct JoinPlan : PlanBase {
  int axis = 0;  // in the output
  // CONCATENATION of UINT8 inputs quantized unlike the output: LiteRT
  // requantizes each of them in float (ConcatenationWithScaling).
  bool requantize = false;
  std::vector<float> scales;         // per input
  std::vector<int32_t> zero_points;  // per input
  float output_scale = 1.f;
  int32_t output_zero_point = 0;
};

// CONCATENATION's quantization rules, as LiteRT's Prepare: INT8 inputs
// share the output's scale and zero point; INT16 ones have zero point 0
// (their scales may differ: values are copied as stored); UINT8 ones are
// requantized to the output's when they differ.
KilnStatus PlanConcatQuantization(KernelContext& k, JoinPlan& plan) {
  const KilnTensorType type = k.output(0).type();
  if (type == KILN_TYPE_INT8) {
    for (int32_t i = 0; i < k.num_inputs(); ++i) {
      KILN_SDK_RETURN_IF_ERROR(sdk::ExpectSameQuantization(
          k, sdk::Input(i), sdk::Output(0),
          "LiteRT's int8 CONCATENATION does not requantize either"));
    }
    return KILN_STATUS_OK;
  }
  if (type != KILN_TYPE_INT16 && type != KILN_TYPE_UINT8) {
    return KILN_STATUS_OK;
  }
  const sdk::QuantizationRule rule{sdk::QuantizationRule::kPerTensorOnly,
                                   /*symmetric=*/type == KILN_TYPE_INT16};
  sdk::TensorQuantization q;
  KILN_SDK_RETURN_IF_ERROR(sdk::ReadQuantization(k, sdk::Output(0), rule, &q));
  plan.output_scale = q.scales[0];
  plan.output_zero_point = q.zero_points[0];
  plan.scales.clear();
  plan.zero_points.clear();
  for (int32_t i = 0; i < k.num_inputs(); ++i) {
    KILN_SDK_RETURN_IF_ERROR(sdk::ReadQuantization(k, sdk::Input(i), rule, &q));
    plan.scales.push_back(q.scales[0]);
    plan.zero_points.push_back(q.zero_points[0]);
    plan.requantize |= q.scales[0] != plan.output_scale ||
                       q.zero_points[0] != plan.output_zero_point;
  }
  plan.requantize &= type == KILN_TYPE_UINT8;
  return KILN_STATUS_OK;
}

// Checks that every input has input 0's type and that the output has it too
// (and, when `same_quantization`, the same quantization for quantized
// types).
KilnStatus CheckJoinTypes(KernelContext& k, bool same_quantization) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectType(k, sdk::Input(0), kMovableTypes));
  for (int32_t i = 1; i < k.num_inputs(); ++i) {
    KILN_SDK_RETURN_IF_ERROR(
        sdk::ExpectSameType(k, sdk::Input(i), sdk::Input(0)));
  }
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectSameType(k, sdk::Output(0), sdk::Input(0)));
  if (same_quantization && sdk::kQuantizedTypes.contains(k.input(0).type())) {
    for (int32_t i = 0; i < k.num_inputs(); ++i) {
      KILN_SDK_RETURN_IF_ERROR(sdk::ExpectSameQuantization(
          k, sdk::Input(i), sdk::Output(0),
          "the CPU kernel only moves bytes and does not requantize"));
    }
  }
  return KILN_STATUS_OK;
}

KilnStatus PlanConcatenation(KernelContext& k, JoinPlan& plan) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectInputCount(k, 1, INT32_MAX));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectOutputCount(k, 1));
  KILN_SDK_RETURN_IF_ERROR(CheckJoinTypes(k, /*same_quantization=*/false));
  KILN_SDK_RETURN_IF_ERROR(PlanConcatQuantization(k, plan));
  const int64_t activation =
      k.OptionInt(KILN_OPTION_FUSED_ACTIVATION, KILN_ACTIVATION_NONE);
  if (activation != KILN_ACTIVATION_NONE) {
    return k.Fail(KILN_STATUS_UNIMPLEMENTED, sdk::OpName(k),
                  " with fused activation ", sdk::ActivationName(activation),
                  " is not supported (LiteRT refuses it too); apply the "
                  "activation as its own op");
  }
  Shape out_shape = k.input(0).shape();
  const int rank = static_cast<int>(out_shape.size());
  if (rank == 0) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT,
                  "cannot concatenate scalars (input 0 has rank 0)");
  }
  KILN_SDK_RETURN_IF_ERROR(sdk::NormalizeAxis(
      k, "axis", k.OptionInt(KILN_OPTION_AXIS, 0), rank, &plan.axis));
  for (int32_t i = 1; i < k.num_inputs(); ++i) {
    const Shape s = k.input(i).shape();
    bool compatible = static_cast<int>(s.size()) == rank;
    for (int d = 0; compatible && d < rank; ++d) {
      compatible = d == plan.axis || s[d] == out_shape[d];
    }
    if (!compatible) {
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "input ", i, " '",
                    k.input(i).name(), "' has shape ", ShapeString(s),
                    ", incompatible with input 0 shape ",
                    ShapeString(k.input(0).shape()),
                    " for concatenation along axis ", plan.axis);
    }
    out_shape[plan.axis] += s[plan.axis];
  }
  plan.output_shapes = {out_shape};
  return KILN_STATUS_OK;
}

KilnStatus PlanPack(KernelContext& k, JoinPlan& plan) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectInputCount(k, 1, INT32_MAX));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectOutputCount(k, 1));
  const int64_t count = k.OptionInt(KILN_OPTION_VALUES_COUNT, k.num_inputs());
  if (count != k.num_inputs()) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "values_count ", count,
                  " does not match the ", k.num_inputs(), " inputs");
  }
  KILN_SDK_RETURN_IF_ERROR(CheckJoinTypes(k, /*same_quantization=*/true));
  const Shape in_shape = k.input(0).shape();
  for (int32_t i = 1; i < k.num_inputs(); ++i) {
    if (k.input(i).shape() != in_shape) {
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "input ", i, " '",
                    k.input(i).name(), "' has shape ",
                    ShapeString(k.input(i).shape()),
                    "; PACK needs every input to have input 0's shape ",
                    ShapeString(in_shape));
    }
  }
  KILN_SDK_RETURN_IF_ERROR(
      sdk::NormalizeAxis(k, "axis", k.OptionInt(KILN_OPTION_AXIS, 0),
                         static_cast<int>(in_shape.size()) + 1, &plan.axis));
  Shape out_shape = in_shape;
  out_shape.insert(out_shape.begin() + plan.axis, k.num_inputs());
  plan.output_shapes = {out_shape};
  return KILN_STATUS_OK;
}

// UINT8 values of input i onto the output's quantization, as LiteRT's
// ConcatenationWithScaling: round(q * s + b) in float, s = in / out scale,
// b = -zero_point * s, plus the output zero point, clamped to [0, 255].
void Requantize(const JoinPlan& plan, size_t i, const uint8_t* from,
                uint8_t* to, size_t n) {
  if (plan.scales[i] == plan.output_scale &&
      plan.zero_points[i] == plan.output_zero_point) {
    std::memcpy(to, from, n);
    return;
  }
  const float inverse_output_scale = 1.f / plan.output_scale;
  const float scale = plan.scales[i] * inverse_output_scale;
  const float bias = static_cast<float>(-plan.zero_points[i]) * scale;
  for (size_t j = 0; j < n; ++j) {
    const int32_t value = static_cast<int32_t>(std::round(
                              static_cast<float>(from[j]) * scale + bias)) +
                          plan.output_zero_point;
    to[j] = static_cast<uint8_t>(std::max(0, std::min(255, value)));
  }
}

// memcpy, with short copies of whole 16-byte blocks (a concatenation along
// the channels of an image copies two short slabs a pixel) inlined.
inline void CopyBytes(const uint8_t* from, uint8_t* to, size_t n) {
  if (n > 256 || n % 16 != 0) {
    std::memcpy(to, from, n);
    return;
  }
  for (size_t j = 0; j < n; j += 16) std::memcpy(to + j, from + j, 16);
}

// Copies each input's slab of every outer index in turn. Input i contributes
// `dim_i * inner` elements per outer index (dim_i = 1 for PACK).
KilnStatus RunJoin(KernelContext& k, const JoinPlan& plan) {
  const Tensor out = k.output(0);
  const Shape& out_shape = plan.output_shapes[0];
  const size_t elem = sdk::TypeByteSize(out.type());
  const int64_t outer =
      DimProduct(out_shape, 0, static_cast<size_t>(plan.axis));
  const int64_t inner = DimProduct(
      out_shape, static_cast<size_t>(plan.axis) + 1, out_shape.size());
  const bool is_pack = k.builtin_code() == KILN_OP_PACK;
  std::vector<const uint8_t*> src(static_cast<size_t>(k.num_inputs()));
  std::vector<size_t> slab(src.size());
  for (int32_t i = 0; i < k.num_inputs(); ++i) {
    const Tensor in = k.input(i);
    const void* data = nullptr;
    KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, sdk::Input(i), &data));
    src[i] = static_cast<const uint8_t*>(data);
    const int64_t dim = is_pack ? 1 : in.dim(plan.axis);
    slab[i] = static_cast<size_t>(dim * inner) * elem;
  }
  size_t row_bytes = 0;
  for (const size_t b : slab) row_bytes += b;
  uint8_t* const dst = out.data<uint8_t>();
  // Outer slices split across the thread pool (each output byte is written
  // once, whatever the split).
  return nn::ParallelRows(
      k, outer, static_cast<int64_t>(row_bytes / 4),
      [&](int64_t begin, int64_t end, int32_t) {
        uint8_t* to = dst + static_cast<size_t>(begin) * row_bytes;
        for (int64_t o = begin; o < end; ++o) {
          for (size_t i = 0; i < src.size(); ++i) {
            const uint8_t* from = src[i] + static_cast<size_t>(o) * slab[i];
            if (plan.requantize) {
              Requantize(plan, i, from, to, slab[i]);
            } else {
              CopyBytes(from, to, slab[i]);
            }
            to += slab[i];
          }
        }
      });
}

// ---- SPLIT / SPLIT_V / UNPACK ----------------------------------------------

struct SplitPlan : PlanBase {
  int axis = 0;                // in the input
  int32_t data_input = 0;      // which input holds the data
  std::vector<int64_t> sizes;  // per output, along axis (1 for UNPACK)
};

KilnStatus CheckSplitTypes(KernelContext& k, sdk::Operand in) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectType(k, in, kMovableTypes));
  for (int32_t i = 0; i < k.num_outputs(); ++i) {
    KILN_SDK_RETURN_IF_ERROR(sdk::ExpectSameType(k, sdk::Output(i), in));
  }
  return KILN_STATUS_OK;
}

// Reads a one-value axis operand; marks the plan not ready when it has no
// data yet.
KilnStatus ReadAxisInput(KernelContext& k, sdk::Operand axis_input, int rank,
                         int* axis, SplitPlan& plan) {
  std::vector<int64_t> values;
  KILN_SDK_RETURN_IF_ERROR(ReadIndexValues(k, axis_input, plan, &values));
  if (!plan.ready) return KILN_STATUS_OK;
  if (values.size() != 1) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, sdk::Describe(k, axis_input),
                  " must hold one value, has ", values.size());
  }
  return sdk::NormalizeAxis(k, "axis", values[0], rank, axis);
}

void SetSplitShapes(const Shape& in_shape, SplitPlan& plan, bool drop_axis) {
  plan.output_shapes.clear();
  for (const int64_t size : plan.sizes) {
    Shape s = in_shape;
    if (drop_axis) {
      s.erase(s.begin() + plan.axis);
    } else {
      s[plan.axis] = static_cast<int32_t>(size);
    }
    plan.output_shapes.push_back(s);
  }
}

KilnStatus CheckNumSplits(KernelContext& k) {
  const int64_t num = k.OptionInt(KILN_OPTION_NUM_SPLITS, k.num_outputs());
  if (num != k.num_outputs()) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "num_splits ", num,
                  " does not match the node's ", k.num_outputs(), " outputs");
  }
  return KILN_STATUS_OK;
}

// SPLIT: inputs (axis, input) -- the axis comes first.
KilnStatus PlanSplit(KernelContext& k, SplitPlan& plan) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectInputCount(k, 2, 2));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectOutputCount(k, 1, INT32_MAX));
  KILN_SDK_RETURN_IF_ERROR(CheckNumSplits(k));
  plan.data_input = 1;
  const Tensor in = k.input(1);
  KILN_SDK_RETURN_IF_ERROR(CheckSplitTypes(k, sdk::Input(1)));
  const Shape in_shape = in.shape();
  KILN_SDK_RETURN_IF_ERROR(ReadAxisInput(k, sdk::Input(0, "axis"),
                                         static_cast<int>(in_shape.size()),
                                         &plan.axis, plan));
  if (!plan.ready) return KILN_STATUS_OK;
  const int32_t dim = in_shape[plan.axis];
  if (dim % k.num_outputs() != 0) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "dimension ", plan.axis,
                  " of input '", in.name(), "' has size ", dim,
                  ", not divisible into ", k.num_outputs(), " equal splits");
  }
  plan.sizes.assign(static_cast<size_t>(k.num_outputs()),
                    dim / k.num_outputs());
  SetSplitShapes(in_shape, plan, false);
  return KILN_STATUS_OK;
}

// SPLIT_V: inputs (input, size_splits, axis).
KilnStatus PlanSplitV(KernelContext& k, SplitPlan& plan) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectInputCount(k, 3, 3));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectOutputCount(k, 1, INT32_MAX));
  KILN_SDK_RETURN_IF_ERROR(CheckNumSplits(k));
  plan.data_input = 0;
  const Tensor in = k.input(0), sizes_tensor = k.input(1);
  KILN_SDK_RETURN_IF_ERROR(CheckSplitTypes(k, sdk::Input(0)));
  const Shape in_shape = in.shape();
  KILN_SDK_RETURN_IF_ERROR(ReadAxisInput(k, sdk::Input(2, "axis"),
                                         static_cast<int>(in_shape.size()),
                                         &plan.axis, plan));
  if (!plan.ready) return KILN_STATUS_OK;
  KILN_SDK_RETURN_IF_ERROR(
      ReadIndexValues(k, sdk::Input(1, "size_splits"), plan, &plan.sizes));
  if (!plan.ready) return KILN_STATUS_OK;
  if (static_cast<int32_t>(plan.sizes.size()) != k.num_outputs()) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "size_splits '",
                  sizes_tensor.name(), "' has ", plan.sizes.size(),
                  " entries but the node has ", k.num_outputs(), " outputs");
  }
  const int64_t dim = in_shape[plan.axis];
  int64_t total = 0;
  int stretch = -1;
  for (size_t i = 0; i < plan.sizes.size(); ++i) {
    if (plan.sizes[i] == -1 && stretch < 0) {
      stretch = static_cast<int>(i);
    } else if (plan.sizes[i] < 0) {
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "size_splits entry ", i,
                    " is ", plan.sizes[i],
                    "; sizes must be >= 0 with at most one -1");
    } else {
      total += plan.sizes[i];
    }
  }
  if (stretch >= 0 && total <= dim) plan.sizes[stretch] = dim - total;
  if ((stretch >= 0 && total > dim) || (stretch < 0 && total != dim)) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "size_splits sum to ", total,
                  " but dimension ", plan.axis, " of input '", in.name(),
                  "' has size ", dim);
  }
  SetSplitShapes(in_shape, plan, false);
  return KILN_STATUS_OK;
}

KilnStatus PlanUnpack(KernelContext& k, SplitPlan& plan) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectInputCount(k, 1, 1));
  plan.data_input = 0;
  const Tensor in = k.input(0);
  KILN_SDK_RETURN_IF_ERROR(CheckSplitTypes(k, sdk::Input(0)));
  const Shape in_shape = in.shape();
  KILN_SDK_RETURN_IF_ERROR(
      sdk::NormalizeAxis(k, "axis", k.OptionInt(KILN_OPTION_AXIS, 0),
                         static_cast<int>(in_shape.size()), &plan.axis));
  const int32_t dim = in_shape[plan.axis];
  const int64_t num = k.OptionInt(KILN_OPTION_NUM, dim);
  if (num != dim || k.num_outputs() != dim) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "UNPACK along axis ", plan.axis,
                  " of input '", in.name(), "' (size ", dim,
                  ") needs num = ", dim,
                  " and as many outputs; got num = ", num, " and ",
                  k.num_outputs(), " outputs");
  }
  plan.sizes.assign(static_cast<size_t>(dim), 1);
  SetSplitShapes(in_shape, plan, true);
  return KILN_STATUS_OK;
}

KilnStatus RunSplit(KernelContext& k, const SplitPlan& plan) {
  const Tensor in = k.input(plan.data_input);
  const void* data = nullptr;
  KILN_SDK_RETURN_IF_ERROR(
      sdk::BufferOf(k, sdk::Input(plan.data_input), &data));
  const Shape in_shape = in.shape();
  const size_t elem = sdk::TypeByteSize(in.type());
  const int64_t outer = DimProduct(in_shape, 0, static_cast<size_t>(plan.axis));
  const int64_t inner =
      DimProduct(in_shape, static_cast<size_t>(plan.axis) + 1, in_shape.size());
  const uint8_t* src = static_cast<const uint8_t*>(data);
  std::vector<uint8_t*> dst(plan.sizes.size());
  std::vector<size_t> slab(plan.sizes.size());
  for (size_t i = 0; i < plan.sizes.size(); ++i) {
    dst[i] = k.output(static_cast<int32_t>(i)).data<uint8_t>();
    slab[i] = static_cast<size_t>(plan.sizes[i] * inner) * elem;
  }
  for (int64_t o = 0; o < outer; ++o) {
    for (size_t i = 0; i < dst.size(); ++i) {
      if (slab[i] == 0) continue;
      std::memcpy(dst[i] + static_cast<size_t>(o) * slab[i], src, slab[i]);
      src += slab[i];
    }
  }
  return KILN_STATUS_OK;
}

}  // namespace

void RegisterConcatSplitKernels(sdk::PluginDefinition& def) {
  // CONCATENATION v1 float/uint8/int32/int64/bool, v2 int8, v3 int16.
  // (v4 UINT32 and v5 INT4: not supported.) UINT8 inputs are requantized to
  // the output's quantization; INT8 ones must share it; INT16 ones need zero
  // point 0 (all as LiteRT).
  def.AddKernel(PlannedKernel<JoinPlan, PlanConcatenation, RunJoin>(
      KILN_OP_CONCATENATION, 1, 3));
  // PACK v1 float/uint8/int32/int64/bool, v2 int8, v3 int16. (v4 UINT32: no.)
  def.AddKernel(PlannedKernel<JoinPlan, PlanPack, RunJoin>(KILN_OP_PACK, 1, 3));
  // SPLIT v1 float/uint8/int64/bool, v2 int8, v3 int32, v4 int16.
  def.AddKernel(
      PlannedKernel<SplitPlan, PlanSplit, RunSplit>(KILN_OP_SPLIT, 1, 4));
  // SPLIT_V v1 float/uint8/int16/int32/int64/bool, v2 int8.
  def.AddKernel(
      PlannedKernel<SplitPlan, PlanSplitV, RunSplit>(KILN_OP_SPLIT_V, 1, 2));
  // UNPACK v1 float/int32/int64, v2 int8/uint8, v3 bool, v4 int16.
  // (v5 FLOAT16/BFLOAT16: not supported.)
  def.AddKernel(
      PlannedKernel<SplitPlan, PlanUnpack, RunSplit>(KILN_OP_UNPACK, 1, 4));
}

}  // namespace kiln::cpu::data
