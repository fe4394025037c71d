#include "kernels/registry.h"

namespace kiln::cpu {
namespace nn {

void RegisterConvolutionKernels(sdk::PluginDefinition& def);
void RegisterConv3DKernels(sdk::PluginDefinition& def);
void RegisterDensifyKernels(sdk::PluginDefinition& def);
void RegisterFullyConnectedKernels(sdk::PluginDefinition& def);
void RegisterLstmKernels(sdk::PluginDefinition& def);
void RegisterPoolingKernels(sdk::PluginDefinition& def);
void RegisterResizeKernels(sdk::PluginDefinition& def);
void RegisterReductionKernels(sdk::PluginDefinition& def);

}  // namespace nn

void RegisterNeuralNetKernels(sdk::PluginDefinition& def) {
  nn::RegisterConvolutionKernels(def);
  nn::RegisterConv3DKernels(def);
  nn::RegisterDensifyKernels(def);
  nn::RegisterFullyConnectedKernels(def);
  nn::RegisterLstmKernels(def);
  nn::RegisterPoolingKernels(def);
  nn::RegisterResizeKernels(def);
  nn::RegisterReductionKernels(def);
}

}  // namespace kiln::cpu
