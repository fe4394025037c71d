// OpenCL C sources of the delegate's kernels, grouped into programs that are
// built (and cached) separately so a partition compiles only what it uses.
//
// All tensors are NHWC buffers of `store_t` (float, or half when the program
// is built with -DKILN_FP16_STORAGE); arithmetic is always float.
#ifndef KILN_PLUGINS_OPENCL_KERNEL_SOURCES_H_
#define KILN_PLUGINS_OPENCL_KERNEL_SOURCES_H_

#include <string>

namespace kiln::opencl {

enum class ProgramGroup { kElementwise, kConvolution, kPoolSoftmax };
inline constexpr int kNumProgramGroups = 3;

const char* ProgramGroupName(ProgramGroup group);
// The complete source of a group's program (shared prelude included).
std::string ProgramSource(ProgramGroup group);

// Activation codes understood by the kernels' activate(): the TFLite fused
// activation codes 0..4, plus kActivationLogistic for standalone LOGISTIC.
inline constexpr int kActivationLogistic = 100;

}  // namespace kiln::opencl

#endif  // KILN_PLUGINS_OPENCL_KERNEL_SOURCES_H_
