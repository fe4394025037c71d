// ADD and MUL on float32 with NumPy broadcasting (rank <= 6) and fused
// activation.
#include <vector>

#include "kernels/activation.h"
#include "kernels/broadcast.h"
#include "kernels/registry.h"

namespace kiln::cpu {
namespace {

using sdk::KernelContext;
using sdk::Tensor;

KilnStatus BinaryPrepare(KernelContext& k) {
  KILN_SDK_RETURN_IF_ERROR(k.ExpectInputs(2, 2));
  KILN_SDK_RETURN_IF_ERROR(k.ExpectOutputs(1));
  const Tensor a = k.input(0), b = k.input(1), out = k.output(0);
  KILN_SDK_RETURN_IF_ERROR(k.ExpectType("input 0", a, KILN_TYPE_FLOAT32));
  KILN_SDK_RETURN_IF_ERROR(k.ExpectType("input 1", b, KILN_TYPE_FLOAT32));
  KILN_SDK_RETURN_IF_ERROR(k.ExpectType("output 0", out, KILN_TYPE_FLOAT32));
  const int64_t act = k.OptionInt(KILN_OPTION_FUSED_ACTIVATION, 0);
  if (!IsSupportedActivation(act)) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "unknown fused activation ",
                  act);
  }
  std::vector<int32_t> shape;
  if (!BroadcastShapes(a.shape(), b.shape(), &shape)) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT,
                  "input shapes cannot be broadcast together (or rank > 6)");
  }
  return k.Resize(out, shape);
}

template <typename Op>
KilnStatus BinaryInvoke(KernelContext& k) {
  const Tensor a = k.input(0), b = k.input(1), out = k.output(0);
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  float* po = out.data<float>();
  const int64_t act = k.OptionInt(KILN_OPTION_FUSED_ACTIVATION, 0);
  ForEachBroadcast(a.shape(), b.shape(), out.shape(),
                   [&](int64_t o, int64_t ia, int64_t ib) {
                     po[o] = ApplyActivation(act, Op()(pa[ia], pb[ib]));
                   });
  return KILN_STATUS_OK;
}

struct AddOp {
  float operator()(float x, float y) const { return x + y; }
};
struct MulOp {
  float operator()(float x, float y) const { return x * y; }
};

}  // namespace

void RegisterBinaryArithmetic(sdk::PluginDefinition& def) {
  def.AddKernel(sdk::MakeKernel<BinaryPrepare, BinaryInvoke<AddOp>>(
      KILN_OP_ADD, 1, 1));
  def.AddKernel(sdk::MakeKernel<BinaryPrepare, BinaryInvoke<MulOp>>(
      KILN_OP_MUL, 1, 1));
}

}  // namespace kiln::cpu
