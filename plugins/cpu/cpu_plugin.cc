// Kiln's CPU kernels, shipped as a plugin through the extension API like any
// vendor's.
#include "kernels/registry.h"
#include "kiln/sdk/plugin.h"

namespace kiln::cpu {
namespace {

const KilnPluginDescriptor* Describe() {
  static sdk::PluginDefinition def = [] {
    sdk::PluginDefinition d("kiln_cpu", KILN_RUNTIME_VERSION_STRING);
    RegisterElementwiseKernels(d);
    RegisterNeuralNetKernels(d);
    RegisterDataMovementKernels(d);
    return d;
  }();
  return def.descriptor();
}

}  // namespace
}  // namespace kiln::cpu

KILN_DEFINE_PLUGIN(kiln::cpu::Describe)
