// Example vendor plugin: the custom op CUSTOM 'Sinh' (version 1) on
// float32, y = sinh(x) elementwise, as used by tflite-testdata/custom_sinh.bin.
//
// Custom options are read the way TFLite custom ops read them: a FlexBuffers
// map in the node's custom options. The converter writes {"T": <dtype>} with
// T the TFLite TensorType of the input (0 = FLOAT32). An empty options buffer
// is accepted; an unreadable buffer, a non-map root, or a T naming another
// type is refused in prepare with the reason.
//
// Built with kiln_add_plugin: exports only KilnPluginEntry, links no libkiln.
#include <cmath>
#include <cstdint>
#include <string>

#include "flatbuffers/flexbuffers.h"
#include "kiln/sdk/checks.h"
#include "kiln/sdk/plugin.h"

namespace kiln_example {
namespace {

using kiln::sdk::Input;
using kiln::sdk::KernelContext;
using kiln::sdk::Output;
using kiln::sdk::Tensor;

constexpr char kOpName[] = "Sinh";

// Validates the custom options (see file comment).
KilnStatus CheckCustomOptions(KernelContext& k, KilnTensorType input_type) {
  const auto [data, size] = k.CustomOptions();
  if (data == nullptr || size == 0) return KILN_STATUS_OK;
  if (!flexbuffers::VerifyBuffer(data, static_cast<size_t>(size))) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "custom options of ", kOpName,
                  " (", size,
                  " bytes) are not a valid FlexBuffer; re-export the model");
  }
  const flexbuffers::Reference root =
      flexbuffers::GetRoot(data, static_cast<size_t>(size));
  if (root.IsNull()) return KILN_STATUS_OK;
  if (!root.IsMap()) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "custom options of ", kOpName,
                  " must be a FlexBuffers map, found FlexBuffers type ",
                  static_cast<int>(root.GetType()));
  }
  const flexbuffers::Reference t = root.AsMap()["T"];
  if (t.IsNull()) return KILN_STATUS_OK;
  if (!t.IsIntOrUint()) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "custom option T of ", kOpName,
                  " must be an integer TensorType");
  }
  const int64_t declared = t.AsInt64();
  if (declared != input_type) {
    return k.Fail(KILN_STATUS_UNIMPLEMENTED, "custom option T = ", declared,
                  " declares element type ",
                  kiln::sdk::TypeName(static_cast<KilnTensorType>(declared)),
                  " but input has type ", kiln::sdk::TypeName(input_type),
                  "; this plugin implements ", kOpName, " on FLOAT32 only");
  }
  return KILN_STATUS_OK;
}

KilnStatus SinhPrepare(KernelContext& k) {
  KILN_SDK_RETURN_IF_ERROR(kiln::sdk::ExpectArity(k, 1, 1));
  KILN_SDK_RETURN_IF_ERROR(CheckCustomOptions(k, k.input(0).type()));
  KILN_SDK_RETURN_IF_ERROR(
      kiln::sdk::ExpectType(k, Input(0), {KILN_TYPE_FLOAT32}));
  KILN_SDK_RETURN_IF_ERROR(
      kiln::sdk::ExpectType(k, Output(0), {KILN_TYPE_FLOAT32}));
  const Tensor in = k.input(0);
  if (in.rank() < 0) return KILN_STATUS_OK;  // shape not known yet
  return k.Resize(k.output(0), in.shape());
}

KilnStatus SinhInvoke(KernelContext& k) {
  KILN_SDK_RETURN_IF_ERROR(
      kiln::sdk::ExpectOutputShape(k, Output(0), k.input(0).shape()));
  const float* x = nullptr;
  float* y = nullptr;
  KILN_SDK_RETURN_IF_ERROR(kiln::sdk::BufferOf(k, Input(0), &x));
  KILN_SDK_RETURN_IF_ERROR(kiln::sdk::BufferOf(k, Output(0), &y));
  for (int64_t i = 0, n = k.input(0).num_elements(); i < n; ++i) {
    y[i] = std::sinh(x[i]);
  }
  return KILN_STATUS_OK;
}

const KilnPluginDescriptor* Describe() {
  static kiln::sdk::PluginDefinition def = [] {
    kiln::sdk::PluginDefinition d("example_sinh", "1.0.0");
    // CUSTOM 'Sinh' v1: the only version; float32 in, float32 out.
    d.AddKernel(kiln::sdk::MakeKernel<SinhPrepare, SinhInvoke>(KILN_OP_CUSTOM,
                                                               1, 1, kOpName));
    return d;
  }();
  return def.descriptor();
}

}  // namespace
}  // namespace kiln_example

KILN_DEFINE_PLUGIN(kiln_example::Describe)
