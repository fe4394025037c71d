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
#include "kiln/sdk/plugin.h"

namespace kiln_example {
namespace {

using kiln::sdk::KernelContext;
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
  KILN_SDK_RETURN_IF_ERROR(k.ExpectInputs(1, 1));
  KILN_SDK_RETURN_IF_ERROR(k.ExpectOutputs(1));
  const Tensor in = k.input(0), out = k.output(0);
  if (!in.present()) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "input is missing");
  }
  KILN_SDK_RETURN_IF_ERROR(CheckCustomOptions(k, in.type()));
  if (in.type() != KILN_TYPE_FLOAT32) {
    return k.Fail(KILN_STATUS_UNIMPLEMENTED, "input '", in.name(),
                  "' has type ", kiln::sdk::TypeName(in.type()), "; ", kOpName,
                  " is implemented for FLOAT32 only");
  }
  KILN_SDK_RETURN_IF_ERROR(k.ExpectType("output", out, KILN_TYPE_FLOAT32));
  if (in.rank() < 0) return KILN_STATUS_OK;  // shape not known yet
  return k.Resize(out, in.shape());
}

KilnStatus SinhInvoke(KernelContext& k) {
  const Tensor in = k.input(0), out = k.output(0);
  const int64_t n = in.num_elements();
  if (out.shape() != in.shape()) {
    return k.Fail(KILN_STATUS_FAILED_PRECONDITION, "output '", out.name(),
                  "' does not have the input's shape; prepare must run after "
                  "the input shape changes");
  }
  if (n == 0) return KILN_STATUS_OK;
  const float* x = in.data<float>();
  float* y = out.data<float>();
  const uint64_t bytes = static_cast<uint64_t>(n) * sizeof(float);
  if (x == nullptr || y == nullptr || in.byte_size() < bytes ||
      out.byte_size() < bytes) {
    return k.Fail(KILN_STATUS_FAILED_PRECONDITION,
                  "input or output buffer missing or too small at invoke");
  }
  for (int64_t i = 0; i < n; ++i) y[i] = std::sinh(x[i]);
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
