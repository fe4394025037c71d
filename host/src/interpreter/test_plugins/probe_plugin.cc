// A plugin that reports what its load instance sees, for the tests of
// per-instance negotiation (plugin_instances_test.cc). Built on the SDK like
// a vendor plugin, in three variants:
//   (default)                      minimum host 1.0
//   KILN_PROBE_MIN_HOST_1_1        minimum host 1.1
//   KILN_PROBE_REFUSES_INITIALIZE  its initialize logs why and refuses
// Its one kernel, custom op "KilnProbeHost" v1 (one float input, any shape;
// one float output sized [kProbeValues]), writes what the kernel's host
// table offers and the process-wide lifecycle counts:
//   [0] minor extension API version of the table the kernel reads through
//   [1] 1 when that table has tensor_quantization (1.1), else 0
//   [2] 1 when that table has tensor_set_type (1.2), else 0
//   [3] initialize calls so far   [4] shutdown calls so far
//   [5] 1 when get_host_extension answers NULL for an unknown id
// A second kernel, custom op "KilnProbeSetType" v1 (one input, one output of
// the input's shape), gives its output type INT32 during prepare
// (KilnHostApi.tensor_set_type) and writes 0, 1, 2, ...
#include <atomic>
#include <string>

#include "kiln/sdk/plugin.h"

namespace kiln::test_probe {
namespace {

constexpr int32_t kProbeValues = 6;

std::atomic<int> initialize_calls{0};
std::atomic<int> shutdown_calls{0};

KilnStatus ProbePrepare(sdk::KernelContext& k) {
  return k.Resize(k.output(0), {kProbeValues});
}

KilnStatus ProbeInvoke(sdk::KernelContext& k) {
  float* out = k.output(0).data<float>();
  if (out == nullptr) {
    return k.Fail(KILN_STATUS_FAILED_PRECONDITION, "output has no buffer");
  }
  const KilnHostApi& host = k.host();
  out[0] = static_cast<float>(KILN_VERSION_MINOR(host.abi_version));
  out[1] = k.HostHas(&KilnHostApi::tensor_quantization) ? 1.f : 0.f;
  out[2] = k.HostHas(&KilnHostApi::tensor_set_type) ? 1.f : 0.f;
  out[3] = static_cast<float>(initialize_calls.load());
  out[4] = static_cast<float>(shutdown_calls.load());
  out[5] =
      host.get_host_extension("kiln.test_unknown/1") == nullptr ? 1.f : 0.f;
  return KILN_STATUS_OK;
}

KilnStatus SetTypePrepare(sdk::KernelContext& k) {
  KILN_SDK_RETURN_IF_ERROR(k.SetType(k.output(0), KILN_TYPE_INT32));
  return k.Resize(k.output(0), k.input(0).shape());
}

KilnStatus SetTypeInvoke(sdk::KernelContext& k) {
  if (k.output(0).type() != KILN_TYPE_INT32) {
    return k.Fail(KILN_STATUS_INTERNAL, "the output lost its type");
  }
  int32_t* out = k.output(0).data<int32_t>();
  for (int64_t i = 0; i < k.output(0).num_elements(); ++i) {
    out[i] = static_cast<int32_t>(i);
  }
  return KILN_STATUS_OK;
}

KilnStatus Initialize(const KilnPluginDescriptor* self,
                      const KilnPluginInstanceInfo* info) {
  ++initialize_calls;
  const sdk::PluginInstance* instance = sdk::PluginInstance::Of(self);
  if (instance == nullptr || instance->abi_version() != info->abi_version) {
    info->api->log(nullptr, KILN_LOG_ERROR,
                   "probe: initialize did not find its instance");
    return KILN_STATUS_INTERNAL;
  }
#ifdef KILN_PROBE_REFUSES_INITIALIZE
  info->api->log(nullptr, KILN_LOG_ERROR,
                 "probe refuses: no probe device on this machine");
  return KILN_STATUS_UNAVAILABLE;
#else
  return KILN_STATUS_OK;
#endif
}

void Shutdown(const KilnPluginDescriptor* self) {
  ++shutdown_calls;
  const sdk::PluginInstance* instance = sdk::PluginInstance::Of(self);
  if (instance != nullptr) instance->Log(KILN_LOG_INFO, "probe: shutdown");
}

const KilnPluginDescriptor* Describe() {
  static sdk::PluginDefinition definition =
      sdk::PluginDefinition("kiln_test_probe", "1.0.0")
#ifdef KILN_PROBE_MIN_HOST_1_1
          .MinHostAbiVersion(KILN_MAKE_VERSION(1, 1, 0))
#endif
          .AddKernel(sdk::MakeKernel<ProbePrepare, ProbeInvoke>(
              KILN_OP_CUSTOM, 1, 1, "KilnProbeHost"))
          .AddKernel(sdk::MakeKernel<SetTypePrepare, SetTypeInvoke>(
              KILN_OP_CUSTOM, 1, 1, "KilnProbeSetType"))
          .OnInitialize(&Initialize)
          .OnShutdown(&Shutdown);
  return definition.descriptor();
}

}  // namespace
}  // namespace kiln::test_probe

KILN_DEFINE_PLUGIN(kiln::test_probe::Describe)
