// Each kernel file adds its kernels to the CPU plugin's definition.
#ifndef KILN_PLUGINS_CPU_KERNELS_REGISTRY_H_
#define KILN_PLUGINS_CPU_KERNELS_REGISTRY_H_

#include "kiln/sdk/plugin.h"

namespace kiln::cpu {

void RegisterBinaryArithmetic(sdk::PluginDefinition& def);

}  // namespace kiln::cpu

#endif  // KILN_PLUGINS_CPU_KERNELS_REGISTRY_H_
