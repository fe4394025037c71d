#include "kernels/registry.h"

namespace kiln::cpu {

void RegisterDataMovementKernels(sdk::PluginDefinition&) {}

}  // namespace kiln::cpu
