#include "kernels/registry.h"

namespace kiln::cpu {

void RegisterNeuralNetKernels(sdk::PluginDefinition&) {}

}  // namespace kiln::cpu
