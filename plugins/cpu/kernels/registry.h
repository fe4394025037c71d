// Each kernel group adds its kernels to the CPU plugin's definition. A group
// lives in its own folder under kernels/ and registers through one function.
#ifndef KILN_PLUGINS_CPU_KERNELS_REGISTRY_H_
#define KILN_PLUGINS_CPU_KERNELS_REGISTRY_H_

#include "kiln/sdk/plugin.h"

namespace kiln::cpu {

// kernels/elementwise: arithmetic, comparison, logical, unary math,
// activations, CAST, QUANTIZE, DEQUANTIZE.
void RegisterElementwiseKernels(sdk::PluginDefinition& def);
// kernels/nn: convolutions, fully connected, matmul, pooling, softmax,
// normalization, resize, reductions, arg/topk.
void RegisterNeuralNetKernels(sdk::PluginDefinition& def);
// kernels/data: reshape-like, transpose, concat/split, slicing, gather/
// scatter, tile/broadcast, padding, space/depth.
void RegisterDataMovementKernels(sdk::PluginDefinition& def);

}  // namespace kiln::cpu

#endif  // KILN_PLUGINS_CPU_KERNELS_REGISTRY_H_
