// A kernel whose float and integer implementations keep separate state:
// prepare picks one from the input type, invoke runs the one prepare chose.
#ifndef KILN_PLUGINS_CPU_KERNELS_NN_TYPE_DISPATCH_H_
#define KILN_PLUGINS_CPU_KERNELS_NN_TYPE_DISPATCH_H_

#include "kernels/nn/nn_common.h"
#include "kernels/nn/quantized_common.h"

namespace kiln::cpu::nn {

// A node's kernel state: the float kernel's or the integer kernel's.
template <typename FloatState, typename IntState>
struct DispatchState {
  bool integer = false;
  FloatState f;
  IntState q;
};

// Checks the node's arity ([kMinInputs, kMaxInputs] inputs, one output; by
// default [2, 3], the conv and fully connected family) and prepares the
// integer kernel when input kTypeInput has an integer scheme, else the float
// kernel.
template <typename FloatState, typename IntState,
          KilnStatus (*FloatPrepare)(KernelContext&, FloatState&),
          KilnStatus (*IntPrepare)(KernelContext&, IntScheme, IntState&),
          int kMinInputs = 2, int kMaxInputs = 3, int kTypeInput = 0>
KilnStatus DispatchPrepare(KernelContext& k,
                           DispatchState<FloatState, IntState>& s) {
  KILN_SDK_RETURN_IF_ERROR(k.ExpectInputs(kMinInputs, kMaxInputs));
  KILN_SDK_RETURN_IF_ERROR(k.ExpectOutputs(1));
  const Tensor input = k.input(kTypeInput);
  IntScheme scheme = IntScheme::kInt8;
  s.integer = input.present() && IntSchemeOf(input.type(), &scheme);
  return s.integer ? IntPrepare(k, scheme, s.q) : FloatPrepare(k, s.f);
}

template <typename FloatState, typename IntState,
          KilnStatus (*FloatInvoke)(KernelContext&, FloatState&),
          KilnStatus (*IntInvoke)(KernelContext&, IntState&)>
KilnStatus DispatchInvoke(KernelContext& k,
                          DispatchState<FloatState, IntState>& s) {
  return s.integer ? IntInvoke(k, s.q) : FloatInvoke(k, s.f);
}

}  // namespace kiln::cpu::nn

#endif  // KILN_PLUGINS_CPU_KERNELS_NN_TYPE_DISPATCH_H_
