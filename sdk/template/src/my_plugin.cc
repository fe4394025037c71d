// A Kiln kernel plugin with one kernel: CUSTOM op "my_vendor.Scale2",
// float32, y = 2 * x. Replace it with your own kernels.
#include "kiln/sdk/checks.h"
#include "kiln/sdk/plugin.h"

namespace my_vendor {
namespace {

using kiln::sdk::Input;
using kiln::sdk::KernelContext;
using kiln::sdk::Output;

// Validates the node and sizes the output. Called after every shape change.
// The checks (kiln/sdk/checks.h) report why a node is refused, e.g.
// "my_vendor.Scale2 input 0 (tensor 'x') has type INT8; supports FLOAT32".
KilnStatus Scale2Prepare(KernelContext& k) {
  KILN_SDK_RETURN_IF_ERROR(kiln::sdk::ExpectArity(k, 1, 1));
  KILN_SDK_RETURN_IF_ERROR(
      kiln::sdk::ExpectType(k, Input(0), {KILN_TYPE_FLOAT32}));
  KILN_SDK_RETURN_IF_ERROR(
      kiln::sdk::ExpectType(k, Output(0), {KILN_TYPE_FLOAT32}));
  return k.Resize(k.output(0), k.input(0).shape());
}

// Computes the output. Called once per inference.
KilnStatus Scale2Invoke(KernelContext& k) {
  const float* x = nullptr;
  float* y = nullptr;
  KILN_SDK_RETURN_IF_ERROR(kiln::sdk::BufferOf(k, Input(0), &x));
  KILN_SDK_RETURN_IF_ERROR(kiln::sdk::BufferOf(k, Output(0), &y));
  for (int64_t i = 0, n = k.input(0).num_elements(); i < n; ++i) {
    y[i] = 2.0f * x[i];
  }
  return KILN_STATUS_OK;
}

const KilnPluginDescriptor* Describe() {
  static kiln::sdk::PluginDefinition definition =
      // Name: [a-z0-9_], unique among installed plugins. Version: semver.
      kiln::sdk::PluginDefinition("my_vendor", "0.1.0")
          // Oldest host extension API this plugin needs.
          .MinHostAbiVersion(KILN_MAKE_VERSION(1, 0, 0))
          // Declare only the op versions whose semantics you implement.
          .AddKernel(kiln::sdk::MakeKernel<Scale2Prepare, Scale2Invoke>(
              KILN_OP_CUSTOM, /*min_version=*/1, /*max_version=*/1,
              "my_vendor.Scale2"));
  return definition.descriptor();
}

}  // namespace
}  // namespace my_vendor

KILN_DEFINE_PLUGIN(my_vendor::Describe)
