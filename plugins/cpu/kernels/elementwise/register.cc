#include "kernels/registry.h"

namespace kiln::cpu {

void RegisterBinaryArithmetic(sdk::PluginDefinition& def);

void RegisterElementwiseKernels(sdk::PluginDefinition& def) {
  RegisterBinaryArithmetic(def);
}

}  // namespace kiln::cpu
