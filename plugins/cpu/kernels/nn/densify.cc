// DENSIFY v1 (float32, float16, int8, as LiteRT): the model loader already
// turned the sparse constant into a dense one (host/src/model/sparsity.h),
// so the kernel copies that constant to its output.
#include <cstring>

#include "kernels/nn/nn_common.h"
#include "kernels/registry.h"

namespace kiln::cpu::nn {
namespace {

constexpr const char* kOp = "DENSIFY";

KilnStatus DensifyPrepare(KernelContext& k) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectArity(k, 1, 1));
  const Tensor input = k.input(0);
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectType(k, sdk::Input(0),
                      {KILN_TYPE_FLOAT32, KILN_TYPE_FLOAT16, KILN_TYPE_INT8}));
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectSameType(k, sdk::Output(0), sdk::Input(0)));
  if (!input.is_constant()) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, kOp, ": input '", input.name(),
                  "' must be a constant (the sparse weights it densifies)");
  }
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectKnownShape(k, sdk::Input(0)));
  return k.Resize(k.output(0), input.shape());
}

KilnStatus DensifyInvoke(KernelContext& k) {
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectOutputShape(k, sdk::Output(0), k.input(0).shape()));
  const void* in = nullptr;
  void* out = nullptr;
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, sdk::Input(0), &in));
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, sdk::Output(0), &out));
  const Tensor input = k.input(0);
  const size_t bytes = static_cast<size_t>(input.num_elements()) *
                       sdk::TypeByteSize(input.type());
  if (bytes > 0) std::memcpy(out, in, bytes);
  return KILN_STATUS_OK;
}

}  // namespace

void RegisterDensifyKernels(sdk::PluginDefinition& def) {
  def.AddKernel(
      sdk::MakeKernel<DensifyPrepare, DensifyInvoke>(KILN_OP_DENSIFY, 1, 1));
}

}  // namespace kiln::cpu::nn
