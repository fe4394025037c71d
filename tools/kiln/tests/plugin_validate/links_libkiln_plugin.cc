// A plugin that `kiln plugin validate` must reject: it links libkiln and
// calls an application API function (KilnRuntimeVersion) instead of using
// KilnHostApi. Otherwise valid, so the loader alone would accept it.
#include "kiln/kiln_c_api.h"
#include "kiln/sdk/plugin.h"

namespace {

KilnStatus Invoke(kiln::sdk::KernelContext&) {
  return KilnRuntimeVersion() != 0 ? KILN_STATUS_OK : KILN_STATUS_INTERNAL;
}

const KilnPluginDescriptor* Describe() {
  static kiln::sdk::PluginDefinition definition =
      kiln::sdk::PluginDefinition("validate_links_libkiln", "1.0.0")
          .AddKernel(kiln::sdk::MakeKernel<nullptr, Invoke>(
              KILN_OP_CUSTOM, 1, 1, "test.LinksLibkiln"));
  return definition.descriptor();
}

}  // namespace

KILN_DEFINE_PLUGIN(Describe)
