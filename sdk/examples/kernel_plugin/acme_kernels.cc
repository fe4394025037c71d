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
#include "kiln/sdk/checks.h"
#include "kiln/sdk/plugin.h"

namespace acme {
namespace {

using kiln::sdk::Input;
using kiln::sdk::KernelContext;
using kiln::sdk::Output;
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
  KILN_SDK_RETURN_IF_ERROR(kiln::sdk::ExpectArity(k, 1, 1));
  KILN_SDK_RETURN_IF_ERROR(
      kiln::sdk::ExpectType(k, Input(0), {KILN_TYPE_FLOAT32}));
  KILN_SDK_RETURN_IF_ERROR(
      kiln::sdk::ExpectType(k, Output(0), {KILN_TYPE_FLOAT32}));
  KILN_SDK_RETURN_IF_ERROR(ParseSoftSignOptions(k, &options));
  return k.Resize(k.output(0), k.input(0).shape());
}

KilnStatus SoftSignInvoke(KernelContext& k, SoftSignOptions& options) {
  const float* x = nullptr;
  float* y = nullptr;
  KILN_SDK_RETURN_IF_ERROR(kiln::sdk::BufferOf(k, Input(0), &x));
  KILN_SDK_RETURN_IF_ERROR(kiln::sdk::BufferOf(k, Output(0), &y));
  const int64_t n = k.input(0).num_elements();
  for (int64_t i = 0; i < n; ++i) {
    y[i] = x[i] / (options.alpha + std::fabs(x[i]));
  }
  return KILN_STATUS_OK;
}

// ---- RELU (builtin override, op versions 1..2) ---------------------------

// FLOAT32 (version 1) and per-tensor quantized INT8/UINT8 (version 2).
constexpr kiln::sdk::TypeSet kReluTypes{KILN_TYPE_FLOAT32, KILN_TYPE_INT8,
                                        KILN_TYPE_UINT8};

// Quantized RELU reads per-tensor scales and zero points, which needs
// extension API 1.1 (KilnHostApi.tensor_quantization): ReadQuantization
// fails this node with a message naming the missing host function on an
// older host; the plugin itself still loads there (min host 1.0) and
// float32 RELU keeps working.
KilnStatus ReluPrepare(KernelContext& k) {
  KILN_SDK_RETURN_IF_ERROR(kiln::sdk::ExpectArity(k, 1, 1));
  KILN_SDK_RETURN_IF_ERROR(kiln::sdk::ExpectType(k, Input(0), kReluTypes));
  KILN_SDK_RETURN_IF_ERROR(kiln::sdk::ExpectSameType(k, Output(0), Input(0)));
  if (k.input(0).type() != KILN_TYPE_FLOAT32) {
    kiln::sdk::TensorQuantization q;
    KILN_SDK_RETURN_IF_ERROR(
        kiln::sdk::ReadQuantization(k, Input(0), kiln::sdk::kPerTensor, &q));
    KILN_SDK_RETURN_IF_ERROR(
        kiln::sdk::ReadQuantization(k, Output(0), kiln::sdk::kPerTensor, &q));
  }
  return k.Resize(k.output(0), k.input(0).shape());
}

template <typename T>
void QuantizedRelu(const T* x, T* y, int64_t n,
                   const kiln::sdk::TensorQuantization& in,
                   const kiln::sdk::TensorQuantization& out) {
  constexpr int64_t kLow = std::numeric_limits<T>::min();
  constexpr int64_t kHigh = std::numeric_limits<T>::max();
  const float in_scale = in.scales[0], out_scale = out.scales[0];
  const int64_t in_zero = in.zero_points[0], out_zero = out.zero_points[0];
  for (int64_t i = 0; i < n; ++i) {
    const float real =
        std::max(0.0f, in_scale * static_cast<float>(x[i] - in_zero));
    const int64_t q =
        static_cast<int64_t>(std::lround(real / out_scale)) + out_zero;
    y[i] = static_cast<T>(std::clamp(q, kLow, kHigh));
  }
}

KilnStatus ReluInvoke(KernelContext& k) {
  const KilnTensorType type = k.input(0).type();
  const int64_t n = k.input(0).num_elements();
  const void* x = nullptr;
  void* y = nullptr;
  KILN_SDK_RETURN_IF_ERROR(kiln::sdk::BufferOf(k, Input(0), &x));
  KILN_SDK_RETURN_IF_ERROR(kiln::sdk::BufferOf(k, Output(0), &y));
  if (type == KILN_TYPE_FLOAT32) {
    const float* xf = static_cast<const float*>(x);
    float* yf = static_cast<float*>(y);
    for (int64_t i = 0; i < n; ++i) yf[i] = std::max(0.0f, xf[i]);
    return KILN_STATUS_OK;
  }
  kiln::sdk::TensorQuantization qin, qout;
  KILN_SDK_RETURN_IF_ERROR(
      kiln::sdk::ReadQuantization(k, Input(0), kiln::sdk::kPerTensor, &qin));
  KILN_SDK_RETURN_IF_ERROR(
      kiln::sdk::ReadQuantization(k, Output(0), kiln::sdk::kPerTensor, &qout));
  if (type == KILN_TYPE_INT8) {
    QuantizedRelu(static_cast<const int8_t*>(x), static_cast<int8_t*>(y), n,
                  qin, qout);
  } else {
    QuantizedRelu(static_cast<const uint8_t*>(x), static_cast<uint8_t*>(y), n,
                  qin, qout);
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
