#include "kernels/nn/hybrid.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/nn/hybrid_quantize.h"

namespace kiln::cpu::nn {
namespace {

// LiteRT quantizes blocks of 8 values with vector code that rounds as
// trunc(x + 0.5) / trunc(x - 0.5) in float (its NEON RoundToNearest off
// AArch64), and the remaining values with std::round.
constexpr int32_t kVectorBlock = 8;

inline int32_t RoundVectorLane(float x) {
  return static_cast<int32_t>(x < 0.f ? x + -0.5f : x + 0.5f);
}

inline int32_t RoundScalar(float x) {
  return static_cast<int32_t>(std::round(x));
}

const HybridQuantizeKernels& VectorKernels() {
  static const HybridQuantizeKernels kernels = HybridQuantizeKernelsAvx2();
  return kernels;
}

// Folds x[0, n) into *lo and *hi.
void MinMax(const float* x, int32_t n, float* lo, float* hi) {
  if (VectorKernels().min_max != nullptr) {
    VectorKernels().min_max(x, n, lo, hi);
    return;
  }
  for (int32_t i = 0; i < n; ++i) {
    *lo = std::min(*lo, x[i]);
    *hi = std::max(*hi, x[i]);
  }
}

// q[i] = clamp(round(inv * x[i]) + zero_point, qmin, 127), rounding as
// LiteRT does: blocks of 8 as its vector code, the rest with std::round.
void RoundRow(const float* x, int32_t n, float inv, int32_t zero_point,
              int32_t qmin, int8_t* q) {
  const int32_t block_end = n & ~(kVectorBlock - 1);
  int32_t i = 0;
  if (VectorKernels().round_blocks != nullptr) {
    VectorKernels().round_blocks(x, block_end, inv, zero_point, qmin, q);
    i = block_end;
  }
  for (; i < n; ++i) {
    const float v = inv * x[i];
    const int32_t r =
        (i < block_end ? RoundVectorLane(v) : RoundScalar(v)) + zero_point;
    q[i] = static_cast<int8_t>(std::min(127, std::max(qmin, r)));
  }
}

void SymmetricRow(const float* x, int32_t n, int8_t* q, float* scale) {
  float lo = x[0], hi = x[0];
  MinMax(x, n, &lo, &hi);
  const float range = std::max(std::abs(lo), std::abs(hi));
  if (range == 0.f) {
    std::memset(q, 0, static_cast<size_t>(n));
    *scale = 1.f;
    return;
  }
  *scale = range / 127.f;
  RoundRow(x, n, 127.f / range, 0, -127, q);
}

void AsymmetricRow(const float* x, int32_t n, int8_t* q, float* scale,
                   int32_t* zero_point) {
  float rmin = 0.f, rmax = 0.f;
  MinMax(x, n, &rmin, &rmax);
  if (rmin == rmax) {
    std::memset(q, 0, static_cast<size_t>(n));
    *scale = 1.f;
    *zero_point = 0;
    return;
  }
  constexpr double kQMin = -128.0, kQMax = 127.0;
  // The range difference is taken in float, the rest in double.
  const double s = static_cast<double>(rmax - rmin) / (kQMax - kQMin);
  const double zp_from_min = kQMin - rmin / s;
  const double zp_from_max = kQMax - rmax / s;
  const double err_min = std::abs(kQMin) + std::abs(rmin / s);
  const double err_max = std::abs(kQMax) + std::abs(rmax / s);
  const double zp = err_min < err_max ? zp_from_min : zp_from_max;
  int32_t nudged = 0;
  if (zp <= kQMin) {
    nudged = -128;
  } else if (zp >= kQMax) {
    nudged = 127;
  } else {
    nudged = static_cast<int32_t>(std::round(zp));
  }
  *scale = static_cast<float>(s);
  *zero_point = nudged;
  RoundRow(x, n, static_cast<float>(1.0 / static_cast<double>(*scale)), nudged,
           -128, q);
}

}  // namespace

void QuantizeHybridRow(const float* x, int32_t n, bool asymmetric, int8_t* q,
                       float* scale, int32_t* zero_point) {
  if (asymmetric) {
    AsymmetricRow(x, n, q, scale, zero_point);
  } else {
    SymmetricRow(x, n, q, scale);
    *zero_point = 0;
  }
}

bool AllZero(const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if (x[i] != 0.f) return false;
  }
  return true;
}

KilnStatus ReadHybridWeights(KernelContext& k, sdk::Operand weights,
                             int32_t channels, int32_t axis,
                             HybridWeights* out) {
  sdk::TensorQuantization q;
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ReadQuantization(k, weights, sdk::PerChannel(axis), &q));
  out->per_channel = q.scales.size() > 1;
  if (out->per_channel) {
    out->scales = q.scales;
  } else {
    out->scales.assign(static_cast<size_t>(channels), q.scales[0]);
  }
  return KILN_STATUS_OK;
}

KilnStatus ExpectHybridFloatTensors(KernelContext& k, sdk::Operand bias,
                                    int32_t channels) {
  constexpr const char* kNote =
      "with int8 weights and a float32 input (hybrid), the output and bias "
      "are float32";
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectType(k, sdk::Output(0), {KILN_TYPE_FLOAT32}, kNote));
  if (!OperandPresent(k, bias)) return KILN_STATUS_OK;
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectType(k, bias, {KILN_TYPE_FLOAT32}, kNote));
  return sdk::ExpectShape(k, bias, {channels}, "one value per output channel");
}

KilnStatus ReadHybridBuffers(KernelContext& k, const ConvOperands& ops,
                             HybridBuffers* out) {
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, ops.input, &out->input));
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, ops.filter, &out->weights));
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, ops.output, &out->output));
  out->bias = nullptr;
  if (!OperandPresent(k, ops.bias)) return KILN_STATUS_OK;
  return sdk::BufferOf(k, ops.bias, &out->bias);
}

void WeightRowSums(const int8_t* w, int32_t rows, int32_t depth,
                   std::vector<int32_t>* out) {
  out->assign(static_cast<size_t>(rows), 0);
  for (int32_t r = 0; r < rows; ++r) {
    int32_t sum = 0;
    const int8_t* row = w + static_cast<int64_t>(r) * depth;
    for (int32_t d = 0; d < depth; ++d) sum += row[d];
    (*out)[static_cast<size_t>(r)] = sum;
  }
}

}  // namespace kiln::cpu::nn
