// A kernel whose float, integer and hybrid implementations keep separate
// state: prepare picks one from the input and weight types, invoke runs the
// one prepare chose.
#ifndef KILN_PLUGINS_CPU_KERNELS_NN_TYPE_DISPATCH_H_
#define KILN_PLUGINS_CPU_KERNELS_NN_TYPE_DISPATCH_H_

#include "kernels/nn/nn_common.h"
#include "kernels/nn/quantized_common.h"

namespace kiln::cpu::nn {

enum class KernelVariant { kFloat, kInteger, kHybrid };

// The variant of a node whose activation input (`input`) and weights
// (`weights`) have these types: integer activations run the integer kernel,
// float activations with int8 weights the hybrid one, anything else the
// float kernel (which refuses what it does not support).
inline KernelVariant VariantOf(const Tensor& input, const Tensor& weights,
                               IntScheme* scheme) {
  if (input.present() && IntSchemeOf(input.type(), scheme)) {
    return KernelVariant::kInteger;
  }
  if (input.present() && input.type() == KILN_TYPE_FLOAT32 &&
      weights.present() && weights.type() == KILN_TYPE_INT8) {
    return KernelVariant::kHybrid;
  }
  return KernelVariant::kFloat;
}

// One op's three implementations, their prepare and invoke functions, its
// arity [kMinInputs, kMaxInputs], and which inputs are the activation input
// (kInput) and the weights (kWeights).
template <typename F, typename I, typename H,
          KilnStatus (*kFloatPrepare)(KernelContext&, F&),
          KilnStatus (*kFloatInvoke)(KernelContext&, F&),
          KilnStatus (*kIntPrepare)(KernelContext&, IntScheme, I&),
          KilnStatus (*kIntInvoke)(KernelContext&, I&),
          KilnStatus (*kHybridPrepare)(KernelContext&, H&),
          KilnStatus (*kHybridInvoke)(KernelContext&, H&), int kMinIn,
          int kMaxIn, int kInputIndex, int kWeightsIndex>
struct OpVariants {
  using FloatState = F;
  using IntState = I;
  using HybridState = H;
  static constexpr int kMinInputs = kMinIn, kMaxInputs = kMaxIn;
  static constexpr int kInput = kInputIndex, kWeights = kWeightsIndex;
  static KilnStatus FloatPrepare(KernelContext& k, F& s) {
    return kFloatPrepare(k, s);
  }
  static KilnStatus FloatInvoke(KernelContext& k, F& s) {
    return kFloatInvoke(k, s);
  }
  static KilnStatus IntPrepare(KernelContext& k, IntScheme scheme, I& s) {
    return kIntPrepare(k, scheme, s);
  }
  static KilnStatus IntInvoke(KernelContext& k, I& s) {
    return kIntInvoke(k, s);
  }
  static KilnStatus HybridPrepare(KernelContext& k, H& s) {
    return kHybridPrepare(k, s);
  }
  static KilnStatus HybridInvoke(KernelContext& k, H& s) {
    return kHybridInvoke(k, s);
  }
};

// The state of a node of an op described by an OpVariants.
template <typename Ops>
struct VariantState {
  KernelVariant variant = KernelVariant::kFloat;
  typename Ops::FloatState f;
  typename Ops::IntState q;
  typename Ops::HybridState h;
};

template <typename Ops>
KilnStatus VariantPrepare(KernelContext& k, VariantState<Ops>& s) {
  KILN_SDK_RETURN_IF_ERROR(k.ExpectInputs(Ops::kMinInputs, Ops::kMaxInputs));
  KILN_SDK_RETURN_IF_ERROR(k.ExpectOutputs(1));
  IntScheme scheme = IntScheme::kInt8;
  s.variant = VariantOf(k.input(Ops::kInput), k.input(Ops::kWeights), &scheme);
  switch (s.variant) {
    case KernelVariant::kInteger:
      return Ops::IntPrepare(k, scheme, s.q);
    case KernelVariant::kHybrid:
      return Ops::HybridPrepare(k, s.h);
    case KernelVariant::kFloat:
      break;
  }
  return Ops::FloatPrepare(k, s.f);
}

template <typename Ops>
KilnStatus VariantInvoke(KernelContext& k, VariantState<Ops>& s) {
  switch (s.variant) {
    case KernelVariant::kInteger:
      return Ops::IntInvoke(k, s.q);
    case KernelVariant::kHybrid:
      return Ops::HybridInvoke(k, s.h);
    case KernelVariant::kFloat:
      break;
  }
  return Ops::FloatInvoke(k, s.f);
}

// The kernel of an op described by an OpVariants, for versions
// [min_version, max_version].
template <typename Ops>
KilnKernel VariantKernel(int32_t op, int32_t min_version, int32_t max_version) {
  return sdk::MakeStatefulKernel<VariantState<Ops>, VariantPrepare<Ops>,
                                 VariantInvoke<Ops>>(op, min_version,
                                                     max_version);
}

}  // namespace kiln::cpu::nn

#endif  // KILN_PLUGINS_CPU_KERNELS_NN_TYPE_DISPATCH_H_
