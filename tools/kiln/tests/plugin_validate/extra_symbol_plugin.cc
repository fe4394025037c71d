// A plugin that `kiln plugin validate` must reject: besides KilnPluginEntry
// it exports acme_leaked_helper (built without kiln_add_plugin's version
// script). Otherwise valid, so the loader alone would accept it.
#include "kiln/sdk/plugin.h"

extern "C" __attribute__((visibility("default"))) int acme_leaked_helper() {
  return 42;
}

namespace {

KilnStatus Invoke(kiln::sdk::KernelContext&) { return KILN_STATUS_OK; }

const KilnPluginDescriptor* Describe() {
  static kiln::sdk::PluginDefinition definition =
      kiln::sdk::PluginDefinition("validate_extra_symbol", "1.0.0")
          .AddKernel(kiln::sdk::MakeKernel<nullptr, Invoke>(
              KILN_OP_CUSTOM, 1, 1, "test.ExtraSymbol"));
  return definition.descriptor();
}

}  // namespace

KILN_DEFINE_PLUGIN(Describe)
