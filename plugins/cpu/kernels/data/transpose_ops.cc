// TRANSPOSE, SPACE_TO_DEPTH and DEPTH_TO_SPACE: permutations of elements,
// each expressed as per-output-dimension offset maps (CopyWithDimMaps).
#include <vector>

#include "kernels/data/block_transpose.h"
#include "kernels/data/data_common.h"

namespace kiln::cpu::data {
namespace {

using sdk::KernelContext;
using sdk::Tensor;

struct PermutePlan : PlanBase {
  // One map per dim of an output view with the same element order as the
  // output (possibly of higher rank than the output itself).
  std::vector<std::vector<int64_t>> maps;
  // TRANSPOSE as a batched block transpose (maps left empty) when it is one.
  bool is_block_transpose = false;
  BlockTranspose block_transpose;
};

KilnStatus RunPermute(KernelContext& k, const PermutePlan& plan) {
  const Tensor in = k.input(0), out = k.output(0);
  const void* src = nullptr;
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, sdk::Input(0), &src));
  if (in.num_elements() == 0) return KILN_STATUS_OK;
  if (plan.is_block_transpose) {
    RunBlockTranspose(plan.block_transpose, sdk::TypeByteSize(in.type()), src,
                      out.data<void>());
    return KILN_STATUS_OK;
  }
  CopyWithDimMaps(plan.maps, 0, sdk::TypeByteSize(in.type()), src,
                  out.data<void>(), nullptr);
  return KILN_STATUS_OK;
}

// ---- TRANSPOSE -----------------------------------------------------------

KilnStatus PlanTranspose(KernelContext& k, PermutePlan& plan) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectInputCount(k, 2, 2));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectOutputCount(k, 1));
  KILN_SDK_RETURN_IF_ERROR(ExpectMovableInOut(k));
  const Tensor in = k.input(0), perm_tensor = k.input(1);
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectRankAtMost(k, sdk::Input(0), kMaxRank));
  std::vector<int64_t> perm;
  KILN_SDK_RETURN_IF_ERROR(
      ReadIndexValues(k, sdk::Input(1, "permutation"), plan, &perm));
  if (!plan.ready) return KILN_STATUS_OK;
  const Shape in_shape = in.shape();
  const int rank = static_cast<int>(in_shape.size());
  if (static_cast<int>(perm.size()) != rank) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "permutation '",
                  perm_tensor.name(), "' has ", perm.size(),
                  " entries but input '", in.name(), "' has rank ", rank);
  }
  std::vector<bool> seen(perm.size(), false);
  Shape out_shape(perm.size());
  for (int i = 0; i < rank; ++i) {
    int axis = 0;
    KILN_SDK_RETURN_IF_ERROR(
        sdk::NormalizeAxis(k, "permutation entry", perm[i], rank, &axis));
    if (seen[axis]) {
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "permutation '",
                    perm_tensor.name(), "' names dimension ", axis,
                    " twice; it must be a permutation of 0..", rank - 1);
    }
    seen[axis] = true;
    perm[i] = axis;
    out_shape[i] = in_shape[axis];
  }
  plan.output_shapes = {out_shape};
  plan.is_block_transpose = MakeBlockTranspose(
      in_shape.data(), perm.data(), perm.size(), &plan.block_transpose);
  if (plan.is_block_transpose) return KILN_STATUS_OK;
  const std::vector<int64_t> strides = Strides(in_shape);
  plan.maps.resize(perm.size());
  for (int i = 0; i < rank; ++i) {
    plan.maps[i] = Arithmetic(in_shape[perm[i]], strides[perm[i]]);
  }
  return KILN_STATUS_OK;
}

// ---- SPACE_TO_DEPTH / DEPTH_TO_SPACE (NHWC) ------------------------------

KilnStatus ReadBlockSize(KernelContext& k, int32_t* block) {
  const int64_t b = k.OptionInt(KILN_OPTION_BLOCK_SIZE, 0);
  if (b < 1 || b > 65536) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "block_size ", b,
                  " is invalid; it must be >= 1");
  }
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectRank(k, sdk::Input(0), 4));
  *block = static_cast<int32_t>(b);
  return KILN_STATUS_OK;
}

KilnStatus PlanSpaceToDepth(KernelContext& k, PermutePlan& plan) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectInputCount(k, 1, 1));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectOutputCount(k, 1));
  KILN_SDK_RETURN_IF_ERROR(ExpectMovableInOut(k));
  const Tensor in = k.input(0);
  int32_t b = 0;
  KILN_SDK_RETURN_IF_ERROR(ReadBlockSize(k, &b));
  const Shape s = in.shape();
  const int32_t n = s[0], h = s[1], w = s[2], c = s[3];
  if (h % b != 0 || w % b != 0) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "input '", in.name(),
                  "' height ", h, " and width ", w,
                  " must be multiples of block_size ", b);
  }
  const std::vector<int64_t> st = Strides(s);
  // Output [N, H/b, W/b, b*b*C] viewed as [N, H/b, W/b, by, bx, C].
  plan.maps = {Arithmetic(n, st[0]),         Arithmetic(h / b, st[1] * b),
               Arithmetic(w / b, st[2] * b), Arithmetic(b, st[1]),
               Arithmetic(b, st[2]),         Arithmetic(c, 1)};
  plan.output_shapes = {{n, h / b, w / b, c * b * b}};
  return KILN_STATUS_OK;
}

KilnStatus PlanDepthToSpace(KernelContext& k, PermutePlan& plan) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectInputCount(k, 1, 1));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectOutputCount(k, 1));
  KILN_SDK_RETURN_IF_ERROR(ExpectMovableInOut(k));
  const Tensor in = k.input(0);
  int32_t b = 0;
  KILN_SDK_RETURN_IF_ERROR(ReadBlockSize(k, &b));
  const Shape s = in.shape();
  const int32_t n = s[0], h = s[1], w = s[2], c = s[3];
  if (c % (b * b) != 0) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "input '", in.name(),
                  "' depth ", c,
                  " must be a multiple of block_size^2 = ", b * b);
  }
  const int32_t oc = c / (b * b);
  const std::vector<int64_t> st = Strides(s);
  // Output [N, H*b, W*b, C/b^2] viewed as [N, H, by, W, bx, C/b^2]; input
  // channel = (by * b + bx) * C/b^2 + c.
  plan.maps = {Arithmetic(n, st[0]),
               Arithmetic(h, st[1]),
               Arithmetic(b, int64_t{b} * oc),
               Arithmetic(w, st[2]),
               Arithmetic(b, oc),
               Arithmetic(oc, 1)};
  plan.output_shapes = {{n, h * b, w * b, oc}};
  return KILN_STATUS_OK;
}

}  // namespace

void RegisterTransposeKernels(sdk::PluginDefinition& def) {
  // TRANSPOSE v1 float/uint8/int32/int64, v2 int8, v3 bool, v4 rank 5,
  // v5 int16, v6 rank 6. (v7 INT4 and v8 rank > 6 / BFLOAT16: not supported.)
  def.AddKernel(KeptPlanKernel<PermutePlan, PlanTranspose, RunPermute>(
      KILN_OP_TRANSPOSE, 1, 6));
  // SPACE_TO_DEPTH / DEPTH_TO_SPACE v1 float/uint8/int32/int64, v2 int8.
  def.AddKernel(PlannedKernel<PermutePlan, PlanSpaceToDepth, RunPermute>(
      KILN_OP_SPACE_TO_DEPTH, 1, 2));
  def.AddKernel(PlannedKernel<PermutePlan, PlanDepthToSpace, RunPermute>(
      KILN_OP_DEPTH_TO_SPACE, 1, 2));
}

}  // namespace kiln::cpu::data
