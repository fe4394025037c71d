// The data-movement kernel group: reshape-like ops, transpose, concat/split,
// slicing, gather/scatter, tile/broadcast, padding, space/depth, WHERE. Each
// op's claimed op-version range (and what each version means) is commented
// where it is registered, in the file that implements it.
#include "kernels/data/data_common.h"
#include "kernels/registry.h"

namespace kiln::cpu {

void RegisterDataMovementKernels(sdk::PluginDefinition& def) {
  data::RegisterReshapeKernels(def);
  data::RegisterTransposeKernels(def);
  data::RegisterConcatSplitKernels(def);
  data::RegisterSliceKernels(def);
  data::RegisterGatherScatterKernels(def);
  data::RegisterTilePadKernels(def);
  data::RegisterWhereKernels(def);
}

}  // namespace kiln::cpu
