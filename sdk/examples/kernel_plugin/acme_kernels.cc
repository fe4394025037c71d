// Example Kiln kernel plugin "acme_kernels":
//   - CUSTOM op "acme.SoftSign" (op version 1), float32:
//       y = x / (alpha + |x|), alpha from the node's FlexBuffers custom
//       options map {"alpha": float} (default 1.0, must be > 0);
//   - builtin RELU, op versions 1..2: float32 (version 1) and per-tensor
//     quantized int8/uint8 (version 2). Version 3 (int16) is not
//     implemented, so it is not declared: the host refuses RELU v3 nodes
//     for this plugin instead of running them wrongly.
//
// The plugin exports only KilnPluginEntry (KILN_DEFINE_PLUGIN) and links no
// libkiln; kiln_add_plugin enforces both.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "flatbuffers/flexbuffers.h"
#include "kiln/sdk/plugin.h"

namespace acme {
namespace {

using kiln::sdk::KernelContext;
using kiln::sdk::Tensor;

// ---- acme.SoftSign -------------------------------------------------------

// Per-node state: the parsed custom options. Created at init, destroyed at
// free, used by one thread at a time (the host's per-node contract).
struct SoftSignOptions {
  float alpha = 1.0f;
};

// Reads {"alpha": float} from the node's custom options. A node without
// custom options uses the defaults.
KilnStatus ParseSoftSignOptions(KernelContext& k, SoftSignOptions* options) {
  const auto [data, size] = k.CustomOptions();
  if (data == nullptr || size == 0) return KILN_STATUS_OK;
  // Verify before reading: custom options come from an untrusted model.
  std::vector<uint8_t> reuse_tracker;
  if (!flexbuffers::VerifyBuffer(data, static_cast<size_t>(size),
                                 &reuse_tracker)) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT,
                  "custom options are not a valid FlexBuffer (", size,
                  " bytes)");
  }
  const flexbuffers::Reference root =
      flexbuffers::GetRoot(data, static_cast<size_t>(size));
  if (!root.IsMap()) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT,
                  "custom options must be a FlexBuffers map like "
                  "{\"alpha\": 1.0}");
  }
  const flexbuffers::Reference alpha = root.AsMap()["alpha"];
  if (alpha.IsNull()) return KILN_STATUS_OK;
  if (!alpha.IsNumeric()) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT,
                  "custom option 'alpha' must be a number");
  }
  options->alpha = alpha.AsFloat();
  if (!(options->alpha > 0.0f) || !std::isfinite(options->alpha)) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "custom option 'alpha' is ",
                  options->alpha, "; it must be a finite number > 0");
  }
  return KILN_STATUS_OK;
}

KilnStatus SoftSignPrepare(KernelContext& k, SoftSignOptions& options) {
  KILN_SDK_RETURN_IF_ERROR(k.ExpectInputs(1, 1));
  KILN_SDK_RETURN_IF_ERROR(k.ExpectOutputs(1));
  const Tensor in = k.input(0), out = k.output(0);
  KILN_SDK_RETURN_IF_ERROR(k.ExpectType("input 0", in, KILN_TYPE_FLOAT32));
  KILN_SDK_RETURN_IF_ERROR(k.ExpectType("output 0", out, KILN_TYPE_FLOAT32));
  KILN_SDK_RETURN_IF_ERROR(ParseSoftSignOptions(k, &options));
  return k.Resize(out, in.shape());
}

KilnStatus SoftSignInvoke(KernelContext& k, SoftSignOptions& options) {
  const Tensor in = k.input(0), out = k.output(0);
  const float* x = in.data<float>();
  float* y = out.data<float>();
  const int64_t n = in.num_elements();
  for (int64_t i = 0; i < n; ++i) {
    y[i] = x[i] / (options.alpha + std::fabs(x[i]));
  }
  return KILN_STATUS_OK;
}

// ---- RELU (builtin override, op versions 1..2) ---------------------------

bool IsQuantizedRelu(KilnTensorType type) {
  return type == KILN_TYPE_INT8 || type == KILN_TYPE_UINT8;
}

// Per-tensor scale and zero point. Needs extension API 1.1
// (KilnHostApi.tensor_quantization): KernelContext::Quantization checks
// with kiln::sdk::HostHas and fails this node with a message naming the
// missing host function on an older host; the plugin itself still loads
// there (min host 1.0) and float32 RELU keeps working.
KilnStatus PerTensorQuantization(KernelContext& k, const Tensor& t,
                                 float* scale, int64_t* zero_point) {
  KilnQuantizationParams params;
  KILN_SDK_RETURN_IF_ERROR(k.Quantization(t, &params));
  if (params.num_channels != 1) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "tensor '", t.name(),
                  "' must be quantized per tensor (got ", params.num_channels,
                  " channels)");
  }
  *scale = params.scales[0];
  *zero_point = params.zero_points[0];
  return KILN_STATUS_OK;
}

KilnStatus ReluPrepare(KernelContext& k) {
  KILN_SDK_RETURN_IF_ERROR(k.ExpectInputs(1, 1));
  KILN_SDK_RETURN_IF_ERROR(k.ExpectOutputs(1));
  const Tensor in = k.input(0), out = k.output(0);
  if (!in.present() || !out.present()) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "input or output is missing");
  }
  const KilnTensorType type = in.type();
  if (type != KILN_TYPE_FLOAT32 && !IsQuantizedRelu(type)) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "input type ",
                  kiln::sdk::TypeName(type),
                  " is not supported (FLOAT32, INT8, UINT8)");
  }
  KILN_SDK_RETURN_IF_ERROR(k.ExpectType("output 0", out, type));
  if (IsQuantizedRelu(type)) {
    float scale = 0;
    int64_t zero_point = 0;
    KILN_SDK_RETURN_IF_ERROR(PerTensorQuantization(k, in, &scale, &zero_point));
    KILN_SDK_RETURN_IF_ERROR(
        PerTensorQuantization(k, out, &scale, &zero_point));
  }
  return k.Resize(out, in.shape());
}

template <typename T>
void QuantizedRelu(const T* x, T* y, int64_t n, float in_scale, int64_t in_zero,
                   float out_scale, int64_t out_zero) {
  constexpr int64_t kLow = std::numeric_limits<T>::min();
  constexpr int64_t kHigh = std::numeric_limits<T>::max();
  for (int64_t i = 0; i < n; ++i) {
    const float real =
        std::max(0.0f, in_scale * static_cast<float>(x[i] - in_zero));
    const int64_t q =
        static_cast<int64_t>(std::lround(real / out_scale)) + out_zero;
    y[i] = static_cast<T>(std::clamp(q, kLow, kHigh));
  }
}

KilnStatus ReluInvoke(KernelContext& k) {
  const Tensor in = k.input(0), out = k.output(0);
  const int64_t n = in.num_elements();
  if (in.type() == KILN_TYPE_FLOAT32) {
    const float* x = in.data<float>();
    float* y = out.data<float>();
    for (int64_t i = 0; i < n; ++i) y[i] = std::max(0.0f, x[i]);
    return KILN_STATUS_OK;
  }
  float in_scale = 0, out_scale = 0;
  int64_t in_zero = 0, out_zero = 0;
  KILN_SDK_RETURN_IF_ERROR(PerTensorQuantization(k, in, &in_scale, &in_zero));
  KILN_SDK_RETURN_IF_ERROR(
      PerTensorQuantization(k, out, &out_scale, &out_zero));
  if (in.type() == KILN_TYPE_INT8) {
    QuantizedRelu(in.data<int8_t>(), out.data<int8_t>(), n, in_scale, in_zero,
                  out_scale, out_zero);
  } else {
    QuantizedRelu(in.data<uint8_t>(), out.data<uint8_t>(), n, in_scale, in_zero,
                  out_scale, out_zero);
  }
  return KILN_STATUS_OK;
}

const KilnPluginDescriptor* Describe() {
  static kiln::sdk::PluginDefinition definition =
      kiln::sdk::PluginDefinition("acme_kernels", "1.0.0")
          // Runs on every 1.x host; quantized RELU needs 1.1 (see above).
          .MinHostAbiVersion(KILN_MAKE_VERSION(1, 0, 0))
          .AddKernel(
              kiln::sdk::MakeStatefulKernel<SoftSignOptions, SoftSignPrepare,
                                            SoftSignInvoke>(
                  KILN_OP_CUSTOM, /*min_version=*/1, /*max_version=*/1,
                  "acme.SoftSign"))
          .AddKernel(kiln::sdk::MakeKernel<ReluPrepare, ReluInvoke>(
              KILN_OP_RELU, /*min_version=*/1, /*max_version=*/2));
  return definition.descriptor();
}

}  // namespace
}  // namespace acme

KILN_DEFINE_PLUGIN(acme::Describe)
