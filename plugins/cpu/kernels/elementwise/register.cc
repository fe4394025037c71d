#include "kernels/registry.h"

namespace kiln::cpu {

// Defined in this folder; each adds one family of kernels.
void RegisterBinaryArithmetic(sdk::PluginDefinition& def);
void RegisterComparisonAndLogical(sdk::PluginDefinition& def);
void RegisterUnary(sdk::PluginDefinition& def);
void RegisterCast(sdk::PluginDefinition& def);
void RegisterQuantization(sdk::PluginDefinition& def);

void RegisterElementwiseKernels(sdk::PluginDefinition& def) {
  RegisterBinaryArithmetic(def);
  RegisterComparisonAndLogical(def);
  RegisterUnary(def);
  RegisterCast(def);
  RegisterQuantization(def);
}

}  // namespace kiln::cpu
