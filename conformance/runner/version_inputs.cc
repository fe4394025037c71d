#include "version_inputs.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"

namespace kiln::conformance {
namespace {

// What a version changes in the version-1 case.
enum class Change {
  kQuantized,  // every float tensor -> `type`, quantized per tensor
  kPlain,      // every float tensor -> `type`, the values times 8, rounded
  kHybrid,     // weights (input 1) int8 symmetric per tensor; the rest float
  kHybridPerChannel,   // the same with one scale per output channel
  kAsymmetricHybrid,   // kHybrid with asymmetric_quantize_inputs
  kInteger,            // activations `type`, int8 weights (per channel for
                       // convolutions), int32 (int8) / int64 (int16) bias
  kBroadcastRank5,     // binary: operands of rank 5 and 3, broadcast
  kRank5,              // PAD: an input of rank 5
  kDilation,           // dilation factors 2
  kKeepNumDims,        // FULLY_CONNECTED: rank-3 input, keep_num_dims
  kNoBias,             // FULLY_CONNECTED: two inputs
  kQuantizeOutput,     // QUANTIZE: float -> quantized `type`
  kDequantizeInput,    // DEQUANTIZE: quantized `type` -> float
  kFirstVersion,       // the first version TFLite registers: v1 inputs
  kHalfPixelCenters,   // RESIZE_*: half_pixel_centers
  kBool,               // every float tensor -> BOOL (x > 0)
  kMulRescale,         // MUL int8 with input1_scale * input2_scale /
                       // output_scale >= 1
  kRank6,              // TRANSPOSE: an input of rank 6
  kEllipsisNewAxis,    // STRIDED_SLICE: ellipsis_mask and new_axis_mask
  kOffset,             // STRIDED_SLICE: offset (end relative to begin)
  kBatchDims,          // GATHER: batch_dims 1
  kIndicesInt16,       // GATHER / GATHER_ND: int16 indices
  kCastTo,             // CAST: output `type`
  kTransposeConvInt8,  // TRANSPOSE_CONV: int8 activations, int8 weights
                       // per channel
  kBias,               // TRANSPOSE_CONV: a bias input
  kFusedRelu,          // TRANSPOSE_CONV: a bias and a fused RELU
  kSameInputs,         // the version-1 case already has what this version
                       // introduced (FLOOR_DIV v2: float32)
  kSparseWeights,      // FULLY_CONNECTED: weights stored sparse (CSR)
};

struct VersionInputs {
  int32_t op;
  int32_t version;
  Change change;
  KilnTensorType type = KILN_TYPE_FLOAT32;
  bool per_channel = false;  // kQuantizeOutput / kDequantizeInput
};

constexpr KilnTensorType kI8 = KILN_TYPE_INT8, kI16 = KILN_TYPE_INT16;
constexpr Change kQ = Change::kQuantized;

// From TFLite's op versioning; only what the generators can produce. Ops
// not listed get version-1 inputs at every version (RESHAPE, for one, has
// no version that changes its inputs).
constexpr VersionInputs kVersionInputs[] = {
    {KILN_OP_ABS, 2, kQ, kI8},
    {KILN_OP_ABS, 3, kQ, kI16},
    {KILN_OP_ABS, 4, Change::kPlain, kI16},
    {KILN_OP_ABS, 5, Change::kPlain, KILN_TYPE_INT32},
    {KILN_OP_RELU, 2, kQ, kI8},
    {KILN_OP_RELU, 3, kQ, kI16},
    {KILN_OP_RELU6, 2, kQ, kI8},
    {KILN_OP_RELU6, 3, kQ, kI16},
    {KILN_OP_MUL, 2, kQ, kI8},
    {KILN_OP_MUL, 3, Change::kMulRescale, kI8},
    {KILN_OP_MUL, 4, kQ, kI16},
    {KILN_OP_MUL, 5, Change::kPlain, KILN_TYPE_INT64},
    {KILN_OP_ADD, 2, kQ, kI8},
    {KILN_OP_ADD, 3, kQ, kI16},  // general scales: pot_scale_int16 false
    {KILN_OP_ADD, 4, Change::kPlain, KILN_TYPE_INT64},
    {KILN_OP_ADD, 5, Change::kPlain, kI16},
    {KILN_OP_SUB, 2, kQ, kI8},
    {KILN_OP_SUB, 3, Change::kBroadcastRank5},
    {KILN_OP_SUB, 4, Change::kPlain, KILN_TYPE_INT64},
    {KILN_OP_SUB, 5, kQ, kI16},  // pot_scale_int16 false
    {KILN_OP_MAXIMUM, 2, kQ, kI8},
    {KILN_OP_MAXIMUM, 3, Change::kBroadcastRank5},
    {KILN_OP_MAXIMUM, 4, kQ, kI16},
    {KILN_OP_MINIMUM, 2, kQ, kI8},
    {KILN_OP_MINIMUM, 3, Change::kBroadcastRank5},
    {KILN_OP_MINIMUM, 4, kQ, kI16},
    {KILN_OP_DIV, 2, Change::kBroadcastRank5},
    {KILN_OP_FLOOR_DIV, 2, Change::kSameInputs},
    {KILN_OP_FLOOR_DIV, 3, Change::kPlain, kI16},
    {KILN_OP_FLOOR_MOD, 2, Change::kPlain, kI16},
    {KILN_OP_CAST, 2, Change::kCastTo, KILN_TYPE_UINT32},
    {KILN_OP_CAST, 3, Change::kCastTo, kI8},
    {KILN_OP_CAST, 4, Change::kCastTo, KILN_TYPE_UINT16},
    {KILN_OP_CAST, 5, Change::kCastTo, KILN_TYPE_FLOAT64},
    {KILN_OP_TRANSPOSE_CONV, 2, Change::kTransposeConvInt8, kI8},
    {KILN_OP_TRANSPOSE_CONV, 3, Change::kBias},
    {KILN_OP_TRANSPOSE_CONV, 4, Change::kFusedRelu},
    {KILN_OP_BATCH_MATMUL, 4, Change::kAsymmetricHybrid},
    {KILN_OP_CONV_2D, 2, Change::kHybrid},
    {KILN_OP_CONV_2D, 3, Change::kInteger, kI8},
    {KILN_OP_CONV_2D, 4, Change::kInteger, kI16},
    {KILN_OP_CONV_2D, 5, Change::kHybridPerChannel},
    {KILN_OP_DEPTHWISE_CONV_2D, 2, Change::kDilation},
    {KILN_OP_DEPTHWISE_CONV_2D, 3, Change::kInteger, kI8},
    {KILN_OP_DEPTHWISE_CONV_2D, 4, Change::kHybrid},
    {KILN_OP_DEPTHWISE_CONV_2D, 5, Change::kInteger, kI16},
    {KILN_OP_DEPTHWISE_CONV_2D, 6, Change::kHybridPerChannel},
    {KILN_OP_FULLY_CONNECTED, 3, Change::kHybrid},
    {KILN_OP_FULLY_CONNECTED, 4, Change::kInteger, kI8},
    {KILN_OP_FULLY_CONNECTED, 5, Change::kKeepNumDims},
    {KILN_OP_FULLY_CONNECTED, 6, Change::kNoBias},
    {KILN_OP_FULLY_CONNECTED, 7, Change::kInteger, kI16},
    {KILN_OP_FULLY_CONNECTED, 8, Change::kSparseWeights},
    {KILN_OP_FULLY_CONNECTED, 9, Change::kAsymmetricHybrid},
    {KILN_OP_FULLY_CONNECTED, 12, Change::kHybridPerChannel},
    {KILN_OP_SOFTMAX, 2, kQ, kI8},
    {KILN_OP_SOFTMAX, 3, kQ, kI16},
    {KILN_OP_LOGISTIC, 2, kQ, kI8},
    {KILN_OP_LOGISTIC, 3, kQ, kI16},
    {KILN_OP_TANH, 2, kQ, kI8},
    {KILN_OP_TANH, 3, kQ, kI16},
    {KILN_OP_CONCATENATION, 2, kQ, kI8},
    {KILN_OP_CONCATENATION, 3, kQ, kI16},
    {KILN_OP_AVERAGE_POOL_2D, 2, kQ, kI8},
    {KILN_OP_AVERAGE_POOL_2D, 3, kQ, kI16},
    {KILN_OP_MAX_POOL_2D, 2, kQ, kI8},
    {KILN_OP_MAX_POOL_2D, 3, kQ, kI16},
    {KILN_OP_MEAN, 2, kQ, kI8},
    {KILN_OP_MEAN, 3, kQ, kI16},
    {KILN_OP_REDUCE_MAX, 2, kQ, kI8},
    {KILN_OP_REDUCE_MAX, 3, kQ, kI16},
    {KILN_OP_REDUCE_MIN, 2, kQ, kI8},
    {KILN_OP_REDUCE_MIN, 3, kQ, kI16},
    {KILN_OP_PAD, 2, kQ, kI8},
    {KILN_OP_PAD, 3, kQ, kI16},
    {KILN_OP_PAD, 4, Change::kRank5},
    {KILN_OP_PAD, 5, Change::kBool},
    {KILN_OP_PADV2, 2, kQ, kI8},
    {KILN_OP_PADV2, 3, kQ, kI16},
    {KILN_OP_PADV2, 4, Change::kRank5},
    {KILN_OP_PADV2, 5, Change::kBool},
    {KILN_OP_MIRROR_PAD, 2, kQ, kI8},
    {KILN_OP_MIRROR_PAD, 3, kQ, kI16},
    {KILN_OP_QUANTIZE, 1, Change::kQuantizeOutput, kI8},
    {KILN_OP_QUANTIZE, 2, Change::kQuantizeOutput, kI16},
    {KILN_OP_QUANTIZE, 3, Change::kQuantizeOutput, kI8, true},
    {KILN_OP_DEQUANTIZE, 1, Change::kDequantizeInput, KILN_TYPE_UINT8},
    {KILN_OP_DEQUANTIZE, 2, Change::kDequantizeInput, kI8},
    {KILN_OP_DEQUANTIZE, 3, Change::kDequantizeInput, kI16},
    {KILN_OP_DEQUANTIZE, 5, Change::kDequantizeInput, kI8, true},
    {KILN_OP_EXP, 2, kQ, kI8},
    {KILN_OP_LOG, 2, kQ, kI8},
    {KILN_OP_RSQRT, 2, kQ, kI8},
    {KILN_OP_RSQRT, 3, kQ, kI16},
    {KILN_OP_SIGN, 2, Change::kPlain, KILN_TYPE_INT32},
    {KILN_OP_LEAKY_RELU, 2, kQ, kI16},
    {KILN_OP_GELU, 2, kQ, kI8},
    {KILN_OP_L2_NORMALIZATION, 2, kQ, kI8},
    {KILN_OP_LOG_SOFTMAX, 2, kQ, kI8},
    {KILN_OP_SQUARED_DIFFERENCE, 2, kQ, kI8},
    {KILN_OP_LESS, 2, kQ, kI8},
    {KILN_OP_LESS, 3, kQ, kI16},
    {KILN_OP_GREATER_EQUAL, 2, kQ, kI8},
    {KILN_OP_GREATER_EQUAL, 3, kQ, kI16},
    {KILN_OP_LESS_EQUAL, 2, kQ, kI8},
    {KILN_OP_GREATER, 2, kQ, kI8},
    {KILN_OP_NOT_EQUAL, 2, kQ, kI8},
    {KILN_OP_EQUAL, 2, kQ, kI8},
    {KILN_OP_EQUAL, 4, kQ, kI16},
    {KILN_OP_SUM, 2, kQ, kI8},
    {KILN_OP_REDUCE_PROD, 2, kQ, kI8},
    {KILN_OP_ARG_MAX, 2, kQ, kI8},
    {KILN_OP_ARG_MAX, 3, Change::kBool},
    {KILN_OP_ARG_MIN, 2, kQ, kI8},
    {KILN_OP_ARG_MIN, 3, Change::kBool},
    {KILN_OP_BATCH_MATMUL, 2, kQ, kI8},
    {KILN_OP_BATCH_MATMUL, 3, kQ, kI16},
    {KILN_OP_TRANSPOSE, 2, kQ, kI8},
    {KILN_OP_TRANSPOSE, 3, Change::kBool},
    {KILN_OP_TRANSPOSE, 4, Change::kRank5},
    {KILN_OP_TRANSPOSE, 5, kQ, kI16},
    {KILN_OP_TRANSPOSE, 6, Change::kRank6},
    {KILN_OP_GATHER, 2, kQ, kI8},
    {KILN_OP_GATHER, 3, Change::kBool},
    {KILN_OP_GATHER, 4, kQ, kI16},
    {KILN_OP_GATHER, 5, Change::kBatchDims},
    {KILN_OP_GATHER, 6, Change::kIndicesInt16},
    {KILN_OP_GATHER_ND, 3, kQ, kI16},
    {KILN_OP_GATHER_ND, 4, Change::kIndicesInt16},
    {KILN_OP_GATHER_ND, 5, Change::kBool},
    {KILN_OP_SLICE, 2, kQ, kI8},
    {KILN_OP_SLICE, 4, kQ, kI16},
    {KILN_OP_SLICE, 5, Change::kRank5},
    {KILN_OP_STRIDED_SLICE, 2, kQ, kI8},
    {KILN_OP_STRIDED_SLICE, 3, Change::kBool},
    {KILN_OP_STRIDED_SLICE, 4, Change::kRank5},
    {KILN_OP_STRIDED_SLICE, 6, Change::kEllipsisNewAxis},
    {KILN_OP_STRIDED_SLICE, 8, Change::kOffset},
    {KILN_OP_SPLIT, 2, kQ, kI8},
    {KILN_OP_SPLIT_V, 2, kQ, kI8},
    {KILN_OP_SPLIT, 3, Change::kPlain, KILN_TYPE_INT32},
    {KILN_OP_SPLIT, 4, kQ, kI16},
    {KILN_OP_PACK, 2, kQ, kI8},
    {KILN_OP_PACK, 3, kQ, kI16},
    {KILN_OP_UNPACK, 2, kQ, kI8},
    {KILN_OP_UNPACK, 3, Change::kBool},
    {KILN_OP_UNPACK, 4, kQ, kI16},
    {KILN_OP_SPACE_TO_DEPTH, 2, kQ, kI8},
    {KILN_OP_DEPTH_TO_SPACE, 2, kQ, kI8},
    {KILN_OP_RESIZE_BILINEAR, 2, kQ, kI8},
    {KILN_OP_RESIZE_BILINEAR, 3, Change::kHalfPixelCenters},
    {KILN_OP_RESIZE_BILINEAR, 4, kQ, kI16},
    {KILN_OP_RESIZE_NEAREST_NEIGHBOR, 2, kQ, kI8},
    {KILN_OP_RESIZE_NEAREST_NEIGHBOR, 3, Change::kHalfPixelCenters},
    {KILN_OP_RESIZE_NEAREST_NEIGHBOR, 4, kQ, kI16},
    {KILN_OP_REVERSE_V2, 3, kQ, kI8},
    {KILN_OP_TILE, 3, kQ, kI8},
    {KILN_OP_BROADCAST_TO, 2, Change::kFirstVersion},
    {KILN_OP_BROADCAST_TO, 3, kQ, kI8},
};

// Declared versions the generators cannot make version-true inputs for,
// and why. VersionInputsTest fails for a version the in-tree CPU plugin
// declares that is neither in kVersionInputs nor here, so a new gap is a
// visible edit of this list.
struct VersionGap {
  int32_t op;
  int32_t first, last;
  const char* why;
};
constexpr VersionGap kVersionGaps[] = {
    {KILN_OP_LSTM, 1, 5, "no input generator for LSTM at any version"},
    {KILN_OP_UNIDIRECTIONAL_SEQUENCE_LSTM, 1, 5,
     "no input generator for UNIDIRECTIONAL_SEQUENCE_LSTM at any version"},
    {KILN_OP_CONV_3D, 1, 1, "no input generator for CONV_3D at any version"},
    {KILN_OP_DENSIFY, 1, 1,
     "no input generator for DENSIFY (its input is a sparse constant) at any "
     "version"},
    {KILN_OP_SCATTER_ND, 1, 1,
     "no input generator for SCATTER_ND at any version"},
    {KILN_OP_WHERE, 1, 2,
     "no input generator for WHERE (data-dependent output shape) at any "
     "version"},
};

const VersionInputs* Find(int32_t op, int32_t version) {
  const VersionInputs* best = nullptr;
  for (const VersionInputs& v : kVersionInputs) {
    if (v.op == op && v.version <= version &&
        (best == nullptr || v.version > best->version)) {
      best = &v;
    }
  }
  return best;
}

double QMax(KilnTensorType type) {
  switch (type) {
    case KILN_TYPE_INT8:
      return 127;
    case KILN_TYPE_UINT8:
      return 255;
    default:
      return 32767;
  }
}

std::vector<float> Values(const GeneratedTensor& t) {
  std::vector<float> v(t.type == KILN_TYPE_FLOAT32 ? t.bytes.size() / 4 : 0);
  if (!v.empty()) std::memcpy(v.data(), t.bytes.data(), v.size() * 4);
  return v;
}

float MaxAbs(const std::vector<float>& v) {
  float m = 0;
  for (float x : v) m = std::max(m, std::fabs(x));
  return m;
}

template <typename T>
std::vector<uint8_t> Encode(const std::vector<float>& values,
                            const std::vector<float>& scales,
                            const std::vector<int64_t>& zero_points,
                            size_t inner, size_t channels) {
  std::vector<uint8_t> out(values.size() * sizeof(T));
  const double lo = static_cast<double>(std::numeric_limits<T>::min());
  const double hi = static_cast<double>(std::numeric_limits<T>::max());
  for (size_t i = 0; i < values.size(); ++i) {
    const size_t c = scales.size() > 1 ? (i / inner) % channels : 0;
    const double q = std::round(static_cast<double>(values[i]) / scales[c]) +
                     static_cast<double>(zero_points[c]);
    const T v = static_cast<T>(std::min(hi, std::max(lo, q)));
    std::memcpy(out.data() + i * sizeof(T), &v, sizeof(T));
  }
  return out;
}

// Stores `values` in `t` as `type` with the given quantization (per
// channel along `dim` when there are several scales; an empty `values`
// leaves an output without data).
void Store(GeneratedTensor& t, const std::vector<float>& values,
           KilnTensorType type, std::vector<float> scales,
           std::vector<int64_t> zero_points, int32_t dim = 0) {
  t.type = type;
  t.quantization.scales = scales;
  t.quantization.zero_points = zero_points;
  t.quantization.quantized_dimension = dim;
  if (values.empty()) {
    t.bytes.clear();
    return;
  }
  if (type == KILN_TYPE_FLOAT32) {  // not quantized: the values as they are
    const auto* bytes = reinterpret_cast<const uint8_t*>(values.data());
    t.bytes.assign(bytes, bytes + values.size() * sizeof(float));
    return;
  }
  size_t inner = 1;
  for (size_t d = static_cast<size_t>(dim) + 1; d < t.shape.size(); ++d) {
    inner *= static_cast<size_t>(t.shape[d]);
  }
  const size_t channels = scales.size();
  switch (type) {
    case KILN_TYPE_INT8:
      t.bytes = Encode<int8_t>(values, scales, zero_points, inner, channels);
      break;
    case KILN_TYPE_UINT8:
      t.bytes = Encode<uint8_t>(values, scales, zero_points, inner, channels);
      break;
    case KILN_TYPE_INT16:
      t.bytes = Encode<int16_t>(values, scales, zero_points, inner, channels);
      break;
    case KILN_TYPE_INT32:
      t.bytes = Encode<int32_t>(values, scales, zero_points, inner, channels);
      break;
    default:
      t.bytes = Encode<int64_t>(values, scales, zero_points, inner, channels);
      break;
  }
}

// Per-tensor symmetric quantization of `t` to `type` (scale max|x| / qmax).
float QuantizeSymmetric(GeneratedTensor& t, KilnTensorType type) {
  const std::vector<float> v = Values(t);
  const float scale =
      std::max(MaxAbs(v), 1e-3f) / static_cast<float>(QMax(type));
  Store(t, v, type, {scale}, {0});
  return scale;
}

// Symmetric int8 quantization with one scale per index of `dim`.
std::vector<float> QuantizePerChannel(GeneratedTensor& t, int32_t dim) {
  const std::vector<float> v = Values(t);
  const size_t channels =
      static_cast<size_t>(t.shape[static_cast<size_t>(dim)]);
  size_t inner = 1;
  for (size_t d = static_cast<size_t>(dim) + 1; d < t.shape.size(); ++d) {
    inner *= static_cast<size_t>(t.shape[d]);
  }
  std::vector<float> max_abs(channels, 1e-3f);
  for (size_t i = 0; i < v.size(); ++i) {
    float& m = max_abs[(i / inner) % channels];
    m = std::max(m, std::fabs(v[i]));
  }
  std::vector<float> scales;
  for (float m : max_abs) scales.push_back(m / 127.f);
  Store(t, v, KILN_TYPE_INT8, scales, std::vector<int64_t>(channels, 0), dim);
  return scales;
}

void SetOption(GeneratedCase* c, uint32_t key, int64_t value) {
  for (auto& [k, o] : c->options) {
    if (k == key) {
      o.kind = OptionValue::Kind::kInt;
      o.i = value;
      return;
    }
  }
  OptionValue o;
  o.kind = OptionValue::Kind::kInt;
  o.i = value;
  c->options.emplace_back(key, o);
}

GeneratedTensor& Input(GeneratedCase* c, size_t i) {
  return c->tensors[static_cast<size_t>(c->inputs[i])];
}
GeneratedTensor& Output(GeneratedCase* c) {
  return c->tensors[static_cast<size_t>(c->outputs[0])];
}

// The quantization of a quantized output whose range the op fixes (TFLite
// requires these), else none.
bool FixedOutput(int32_t op, KilnTensorType type, float* scale,
                 int64_t* zero_point) {
  const bool i8 = type == KILN_TYPE_INT8;
  switch (op) {
    case KILN_OP_SOFTMAX:
    case KILN_OP_LOGISTIC:
      *scale = i8 ? 1.f / 256 : 1.f / 32768;
      *zero_point = i8 ? -128 : 0;
      return true;
    case KILN_OP_TANH:
      *scale = i8 ? 1.f / 128 : 1.f / 32768;
      *zero_point = 0;
      return true;
    case KILN_OP_L2_NORMALIZATION:
      *scale = 1.f / 128;
      *zero_point = 0;
      return i8;
    case KILN_OP_LOG_SOFTMAX:
      *scale = 16.f / 256;
      *zero_point = 127;
      return i8;
    default:
      return false;
  }
}

// Ops whose quantized kernels need the inputs and the output on one scale.
bool SharedScale(int32_t op) {
  for (int32_t o : {KILN_OP_CONCATENATION, KILN_OP_MAXIMUM, KILN_OP_MINIMUM,
                    KILN_OP_PAD, KILN_OP_PADV2, KILN_OP_AVERAGE_POOL_2D,
                    KILN_OP_MAX_POOL_2D, KILN_OP_REDUCE_MAX, KILN_OP_REDUCE_MIN,
                    KILN_OP_PACK, KILN_OP_MIRROR_PAD}) {
    if (o == op) return true;
  }
  return false;
}

// The range a quantized output covers: outputs of a fused RELU6 [0, 6];
// accumulating ops a few standard deviations of their sums; otherwise the
// widest input.
float OutputRange(int32_t op, float widest) {
  switch (op) {
    case KILN_OP_MUL:
    case KILN_OP_ADD:
    case KILN_OP_SUB:
    case KILN_OP_CONV_2D:
      return 6.f;
    case KILN_OP_DEPTHWISE_CONV_2D:
      return 4.f;
    case KILN_OP_FULLY_CONNECTED:
      return 3.f;
    case KILN_OP_BATCH_MATMUL:
      return 2.f;
    case KILN_OP_EXP:
      return 20.f;
    case KILN_OP_LOG:
      return 2.5f;
    case KILN_OP_RSQRT:
      return 3.2f;
    case KILN_OP_SUM:
      return 18.f;
    case KILN_OP_SQUARED_DIFFERENCE:
      return 36.f;
    case KILN_OP_REDUCE_PROD:
      return 16.f;
    default:
      return widest;
  }
}

void Quantized(const VersionInputs& v, int32_t op, GeneratedCase* c) {
  const double qmax = QMax(v.type);
  float widest = 0;
  for (int32_t i : c->inputs) {
    if (i >= 0) widest = std::max(widest, MaxAbs(Values(c->tensors[i])));
  }
  for (size_t i = 0; i < c->inputs.size(); ++i) {
    if (c->inputs[i] < 0 || Input(c, i).type != KILN_TYPE_FLOAT32) continue;
    GeneratedTensor& t = Input(c, i);
    const std::vector<float> values = Values(t);
    const float scale = static_cast<float>(
        (SharedScale(op) ? widest : std::max(MaxAbs(values), 1e-3f)) / qmax);
    Store(t, values, v.type, {scale}, {0});
  }
  for (int32_t o : c->outputs) {
    GeneratedTensor& t = c->tensors[static_cast<size_t>(o)];
    if (t.type != KILN_TYPE_FLOAT32) continue;
    float scale = static_cast<float>(OutputRange(op, widest) / qmax);
    int64_t zero_point = 0;
    FixedOutput(op, v.type, &scale, &zero_point);
    Store(t, {}, v.type, {scale}, {zero_point});
  }
  if (v.type == KILN_TYPE_INT16 && (op == KILN_OP_ADD || op == KILN_OP_SUB)) {
    SetOption(c, KILN_OPTION_POT_SCALE_INT16, 0);
  }
}

void Plain(const VersionInputs& v, GeneratedCase* c) {
  for (GeneratedTensor& t : c->tensors) {
    if (t.type != KILN_TYPE_FLOAT32) continue;
    Store(t, Values(t), v.type, {1.f / 8}, {0});
    t.quantization = Quantization();  // plain integers
  }
}

// The axis of the output channels of a convolution's weights.
int32_t ChannelAxis(int32_t op) {
  return op == KILN_OP_DEPTHWISE_CONV_2D ? 3 : 0;
}

void Hybrid(const VersionInputs& v, int32_t op, GeneratedCase* c) {
  GeneratedTensor& w = Input(c, 1);
  if (v.change == Change::kHybridPerChannel) {
    QuantizePerChannel(w, ChannelAxis(op));
  } else {
    QuantizeSymmetric(w, KILN_TYPE_INT8);
  }
  w.constant = true;  // BATCH_MATMUL's hybrid kernel needs constant weights
  if (op == KILN_OP_DEPTHWISE_CONV_2D &&
      v.change != Change::kHybridPerChannel) {
    // LiteRT's hybrid depthwise kernel reads one scale per output channel
    // (it read past a single scale, a wrong reference for channels > 0):
    // the one scale, repeated per channel.
    const int32_t axis = ChannelAxis(op);
    const size_t channels = static_cast<size_t>(w.shape[axis]);
    w.quantization.scales.assign(channels, w.quantization.scales[0]);
    w.quantization.zero_points.assign(channels, 0);
    w.quantization.quantized_dimension = axis;
  }
  if (v.change == Change::kAsymmetricHybrid) {
    SetOption(c, KILN_OPTION_ASYMMETRIC_QUANTIZE_INPUTS, 1);
  }
}

void Integer(const VersionInputs& v, int32_t op, GeneratedCase* c) {
  const float in_scale = QuantizeSymmetric(Input(c, 0), v.type);
  std::vector<float> w_scales;
  if (op == KILN_OP_FULLY_CONNECTED) {
    w_scales = {QuantizeSymmetric(Input(c, 1), KILN_TYPE_INT8)};
  } else {
    w_scales = QuantizePerChannel(Input(c, 1), ChannelAxis(op));
  }
  if (c->inputs.size() > 2 && c->inputs[2] >= 0) {
    GeneratedTensor& bias = Input(c, 2);
    std::vector<float> scales;
    for (float s : w_scales) scales.push_back(in_scale * s);
    Store(bias, Values(bias),
          v.type == KILN_TYPE_INT8 ? KILN_TYPE_INT32 : KILN_TYPE_INT64, scales,
          std::vector<int64_t>(scales.size(), 0));
  }
  Store(Output(c), {}, v.type,
        {static_cast<float>(OutputRange(op, 0) / QMax(v.type))}, {0});
}

// A quantized QUANTIZE output / DEQUANTIZE input: per tensor with a zero
// point (uint8 128, int8 2, int16 0), or per channel along the last axis.
void QuantizeDequantize(const VersionInputs& v, GeneratedCase* c) {
  GeneratedTensor& t =
      v.change == Change::kQuantizeOutput ? Output(c) : Input(c, 0);
  const std::vector<float> values = Values(Input(c, 0));
  const float widest = MaxAbs(values) * 1.07f;
  if (v.per_channel) {
    const int32_t dim = static_cast<int32_t>(Input(c, 0).shape.size()) - 1;
    const size_t n = static_cast<size_t>(Input(c, 0).shape.back());
    std::vector<float> scales;
    for (size_t i = 0; i < n; ++i) {
      scales.push_back(widest * (1.f + 0.25f * static_cast<float>(i)) / 127);
    }
    if (v.change == Change::kQuantizeOutput) t.shape = Input(c, 0).shape;
    Store(t,
          v.change == Change::kQuantizeOutput ? std::vector<float>() : values,
          v.type, scales, std::vector<int64_t>(n, 0), dim);
    return;
  }
  const int64_t zero_point = v.type == KILN_TYPE_UINT8  ? 128
                             : v.type == KILN_TYPE_INT8 ? 2
                                                        : 0;
  const float scale = static_cast<float>(
      widest / (v.type == KILN_TYPE_UINT8 ? 127 : QMax(v.type)));
  Store(t, v.change == Change::kQuantizeOutput ? std::vector<float>() : values,
        v.type, {scale}, {zero_point});
}

void Reshape(GeneratedCase* c, size_t input, std::vector<int32_t> shape) {
  Input(c, input).shape = std::move(shape);
}

void SetInt32s(GeneratedTensor& t, std::vector<int32_t> shape,
               const std::vector<int32_t>& values) {
  t.shape = std::move(shape);
  const auto* bytes = reinterpret_cast<const uint8_t*>(values.data());
  t.bytes.assign(bytes, bytes + values.size() * sizeof(int32_t));
}

// Every float tensor becomes BOOL (x > 0); an output stays without data.
void ToBool(GeneratedCase* c) {
  for (GeneratedTensor& t : c->tensors) {
    if (t.type != KILN_TYPE_FLOAT32) continue;
    const std::vector<float> v = Values(t);
    t.type = KILN_TYPE_BOOL;
    t.quantization = Quantization();
    t.bytes.clear();
    for (float x : v) t.bytes.push_back(x > 0 ? 1 : 0);
  }
}

// Rank 5 (rank 6 for TRANSPOSE v6) with the same elements: PAD / PADV2
// [2,3] -> [1,2,1,3,1] with the paddings of the two real axes kept;
// TRANSPOSE [2,3,4] -> [2,3,1,4,1] (v6: [2,1,3,1,4,1]) with a permutation
// that moves every axis; SLICE [3,4] -> [3,1,2,1,2]; STRIDED_SLICE
// [4,5] -> [2,2,5,1,1] (2 and 2 strided on two axes).
void HigherRank(int32_t op, bool rank6, GeneratedCase* c) {
  switch (op) {
    case KILN_OP_TRANSPOSE:
      if (rank6) {
        Reshape(c, 0, {2, 1, 3, 1, 4, 1});
        SetInt32s(Input(c, 1), {6}, {4, 0, 5, 2, 3, 1});
      } else {
        Reshape(c, 0, {2, 3, 1, 4, 1});
        SetInt32s(Input(c, 1), {5}, {3, 0, 4, 1, 2});
      }
      return;
    case KILN_OP_SLICE:
      Reshape(c, 0, {3, 1, 2, 1, 2});
      SetInt32s(Input(c, 1), {5}, {1, 0, 0, 0, 1});
      SetInt32s(Input(c, 2), {5}, {2, 1, -1, 1, 1});
      return;
    case KILN_OP_STRIDED_SLICE:
      Reshape(c, 0, {2, 2, 5, 1, 1});
      SetInt32s(Input(c, 1), {5}, {0, 1, 1, 0, 0});
      SetInt32s(Input(c, 2), {5}, {2, 2, 5, 1, 1});
      SetInt32s(Input(c, 3), {5}, {1, 1, 2, 1, 1});
      return;
    default: {
      // PAD / PADV2: [2,3] -> [1,2,1,3,1], the paddings of the two real
      // axes kept.
      Reshape(c, 0, {1, 2, 1, 3, 1});
      GeneratedTensor& pads = Input(c, 1);
      std::vector<int32_t> p(4);
      std::memcpy(p.data(), pads.bytes.data(), sizeof(int32_t) * 4);
      SetInt32s(pads, {5, 2}, {0, 0, p[0], p[1], 0, 1, p[2], p[3], 1, 0});
      return;
    }
  }
}

// STRIDED_SLICE on [4,5]: v6 `...`, a new axis, then 1:5:2 on the last axis
// (output [4,1,2]); v8 offset: end {4,3} relative to begin {0,1}, strides
// {2,2} (output [2,2]; without the offset [2,1]).
void StridedSliceOptions(Change change, GeneratedCase* c) {
  if (change == Change::kEllipsisNewAxis) {
    SetInt32s(Input(c, 1), {3}, {0, 0, 1});
    SetInt32s(Input(c, 2), {3}, {0, 0, 5});
    SetInt32s(Input(c, 3), {3}, {1, 1, 2});
    SetOption(c, KILN_OPTION_ELLIPSIS_MASK, 1);
    SetOption(c, KILN_OPTION_NEW_AXIS_MASK, 2);
    return;
  }
  SetInt32s(Input(c, 1), {2}, {0, 1});
  SetInt32s(Input(c, 2), {2}, {4, 3});
  SetInt32s(Input(c, 3), {2}, {2, 2});
  SetOption(c, KILN_OPTION_OFFSET, 1);
}

// GATHER with batch_dims 1: params [2,4,3] (from the [4,3] case's values,
// the second batch negated), indices [2,2], axis 1: output [2,2,3].
void BatchDims(GeneratedCase* c) {
  GeneratedTensor& x = Input(c, 0);
  std::vector<float> v = Values(x);
  const size_t n = v.size();
  for (size_t i = 0; i < n; ++i) v.push_back(-v[i]);
  x.shape = {2, 4, 3};
  Store(x, v, KILN_TYPE_FLOAT32, {}, {});
  SetInt32s(Input(c, 1), {2, 2}, {3, 1, 0, 2});
  SetOption(c, KILN_OPTION_AXIS, 1);
  SetOption(c, KILN_OPTION_BATCH_DIMS, 1);
}

void IndicesInt16(GeneratedCase* c) {
  GeneratedTensor& indices = Input(c, 1);
  std::vector<int32_t> v(indices.bytes.size() / sizeof(int32_t));
  std::memcpy(v.data(), indices.bytes.data(), indices.bytes.size());
  indices.type = KILN_TYPE_INT16;
  indices.bytes.clear();
  for (int32_t i : v) {
    const int16_t x = static_cast<int16_t>(i);
    const auto* b = reinterpret_cast<const uint8_t*>(&x);
    indices.bytes.insert(indices.bytes.end(), b, b + sizeof(x));
  }
}

// CAST float32 -> `type`; unsigned outputs from |x| (a negative float cast
// to an unsigned type is undefined).
void CastTo(KilnTensorType type, GeneratedCase* c) {
  GeneratedTensor& x = Input(c, 0);
  if (type == KILN_TYPE_UINT32 || type == KILN_TYPE_UINT16) {
    std::vector<float> v = Values(x);
    for (float& f : v) f = std::fabs(f);
    Store(x, v, KILN_TYPE_FLOAT32, {}, {});
  }
  Output(c).type = type;
  SetOption(c, KILN_OPTION_OUT_DATA_TYPE, type);
}

// TRANSPOSE_CONV (inputs: output shape, weights [O,H,W,I], input).
void TransposeConv(Change change, GeneratedCase* c) {
  if (change == Change::kTransposeConvInt8) {
    QuantizeSymmetric(Input(c, 2), KILN_TYPE_INT8);
    QuantizePerChannel(Input(c, 1), 0);
    Store(Output(c), {}, KILN_TYPE_INT8, {4.f / 127}, {0});
    return;
  }
  GeneratedTensor bias;
  bias.shape = {Input(c, 1).shape[0]};
  bias.constant = true;
  std::vector<float> b;
  for (int32_t i = 0; i < bias.shape[0]; ++i) b.push_back(0.25f - 0.5f * i);
  Store(bias, b, KILN_TYPE_FLOAT32, {}, {});
  c->tensors.push_back(std::move(bias));
  c->inputs.push_back(static_cast<int32_t>(c->tensors.size() - 1));
  if (change == Change::kFusedRelu) {
    SetOption(c, KILN_OPTION_FUSED_ACTIVATION, KILN_ACTIVATION_RELU);
  }
}

// MUL int8 whose rescale input1_scale * input2_scale / output_scale is
// >= 1 (TFLite's v3): inputs on a coarse scale of 0.25 (x in [-4, 4], y in
// [-2, 2]: 16 and 8 steps), output scale 0.05 (rescale 1.25; RELU6 output
// [0, 6] in 120 steps).
void MulRescale(GeneratedCase* c) {
  for (size_t i = 0; i < 2; ++i) {
    Store(Input(c, i), Values(Input(c, i)), KILN_TYPE_INT8, {0.25f}, {0});
  }
  Store(Output(c), {}, KILN_TYPE_INT8, {0.05f}, {0});
}

// FULLY_CONNECTED v8: about 40% of the weights zero, the rest stored as
// TFLite sparse data (rows DENSE, columns SPARSE_CSR) in the case model;
// the kernel sees the dense weights Kiln's loader makes of them.
void SparseWeights(GeneratedCase* c) {
  GeneratedTensor& w = Input(c, 1);
  std::vector<float> v = Values(w);
  const size_t cols = static_cast<size_t>(w.shape[1]);
  for (size_t i = 0; i < v.size(); ++i) {
    if ((i / cols * 7 + i % cols * 3) % 5 < 2) v[i] = 0;
  }
  Store(w, v, KILN_TYPE_FLOAT32, {}, {});
  w.sparse_csr = true;
}

// The changes of the inputs' types, quantization or tensors; false for
// any other change.
bool ApplyTypeChange(const VersionInputs& v, int32_t op, GeneratedCase* c) {
  switch (v.change) {
    case Change::kQuantized:
      Quantized(v, op, c);
      return true;
    case Change::kPlain:
      Plain(v, c);
      return true;
    case Change::kHybrid:
    case Change::kHybridPerChannel:
    case Change::kAsymmetricHybrid:
      Hybrid(v, op, c);
      return true;
    case Change::kInteger:
      Integer(v, op, c);
      return true;
    case Change::kQuantizeOutput:
    case Change::kDequantizeInput:
      QuantizeDequantize(v, c);
      return true;
    case Change::kBool:
      ToBool(c);
      return true;
    case Change::kMulRescale:
      MulRescale(c);
      return true;
    case Change::kIndicesInt16:
      IndicesInt16(c);
      return true;
    case Change::kCastTo:
      CastTo(v.type, c);
      return true;
    case Change::kTransposeConvInt8:
    case Change::kBias:
    case Change::kFusedRelu:
      TransposeConv(v.change, c);
      return true;
    case Change::kSparseWeights:
      SparseWeights(c);
      return true;
    default:
      return false;
  }
}

// The changes of the inputs' shapes or the op's options (the type changes
// are ApplyTypeChange's).
void ApplyShapeOrOption(const VersionInputs& v, int32_t op, GeneratedCase* c) {
  switch (v.change) {
    case Change::kBroadcastRank5:
      // [2,3,4] with [3,1] -> [2,1,3,2,2] with [3,1,1]: the same values,
      // broadcast over two axes of a rank-5 output.
      // (A same-shape variant's second operand keeps the first's shape.)
      Reshape(c, 1,
              Input(c, 1).shape == Input(c, 0).shape
                  ? std::vector<int32_t>{2, 1, 3, 2, 2}
                  : std::vector<int32_t>{3, 1, 1});
      Reshape(c, 0, {2, 1, 3, 2, 2});
      break;
    case Change::kRank5:
    case Change::kRank6:
      HigherRank(op, v.change == Change::kRank6, c);
      break;
    case Change::kDilation:
      SetOption(c, KILN_OPTION_DILATION_W, 2);
      SetOption(c, KILN_OPTION_DILATION_H, 2);
      break;
    case Change::kKeepNumDims: {
      std::vector<int32_t> shape = Input(c, 0).shape;
      shape.insert(shape.begin(), 1);
      Reshape(c, 0, shape);
      SetOption(c, KILN_OPTION_KEEP_NUM_DIMS, 1);
      break;
    }
    case Change::kNoBias:
      c->inputs.resize(2);
      break;
    case Change::kHalfPixelCenters:
      SetOption(c, KILN_OPTION_HALF_PIXEL_CENTERS, 1);
      break;
    case Change::kEllipsisNewAxis:
    case Change::kOffset:
      StridedSliceOptions(v.change, c);
      break;
    case Change::kBatchDims:
      BatchDims(c);
      break;
    default:  // kFirstVersion, kSameInputs: the inputs as generated.
      break;
  }
}

void Apply(const VersionInputs& v, int32_t op, GeneratedCase* c) {
  if (!ApplyTypeChange(v, op, c)) ApplyShapeOrOption(v, op, c);
  c->exercises_version = v.version;
}

// The name of each change whose name does not depend on the type.
struct FixedChangeName {
  Change change;
  const char* name;
};
constexpr FixedChangeName kFixedChangeNames[] = {
    {Change::kHybrid, "hybrid: float activations, int8 weights per tensor"},
    {Change::kHybridPerChannel,
     "hybrid: float activations, int8 weights per channel"},
    {Change::kAsymmetricHybrid, "hybrid with asymmetric_quantize_inputs"},
    {Change::kBroadcastRank5, "broadcast of rank 5"},
    {Change::kRank5, "input of rank 5"},
    {Change::kDilation, "dilation 2"},
    {Change::kKeepNumDims, "keep_num_dims"},
    {Change::kNoBias, "no bias"},
    {Change::kFirstVersion,
     "the first version TFLite registers; version-1 inputs"},
    {Change::kHalfPixelCenters, "half_pixel_centers"},
    {Change::kBool, "bool"},
    {Change::kMulRescale,
     "int8 with input1_scale * input2_scale / output_scale >= 1"},
    {Change::kRank6, "input of rank 6"},
    {Change::kEllipsisNewAxis, "ellipsis_mask and new_axis_mask"},
    {Change::kOffset, "offset (end relative to begin)"},
    {Change::kBatchDims, "batch_dims 1"},
    {Change::kIndicesInt16, "int16 indices"},
    {Change::kTransposeConvInt8, "int8 activations, int8 weights per channel"},
    {Change::kBias, "bias input"},
    {Change::kFusedRelu, "bias and fused RELU"},
    {Change::kSparseWeights, "sparse weights (rows DENSE, columns SPARSE_CSR)"},
    {Change::kSameInputs,
     "float32 (TFLite's v1 is int32; the version-1 case is float already)"},
};

std::string ChangeName(const VersionInputs& v) {
  const std::string type = TypeName(v.type);
  switch (v.change) {
    case Change::kQuantized:
      return absl::StrCat(type, " (quantized per tensor)");
    case Change::kPlain:
      return absl::StrCat(type, " (not quantized)");
    case Change::kInteger:
      return absl::StrCat(type, " activations, int8 weights, ",
                          v.type == KILN_TYPE_INT8 ? "int32" : "int64",
                          " bias");
    case Change::kQuantizeOutput:
      return absl::StrCat("float -> ", type,
                          v.per_channel ? " per channel" : "");
    case Change::kDequantizeInput:
      return absl::StrCat(type, v.per_channel ? " per channel" : "",
                          " -> float");
    case Change::kCastTo:
      return absl::StrCat("float32 -> ", type);
    default:
      break;
  }
  for (const FixedChangeName& f : kFixedChangeNames) {
    if (f.change == v.change) return f.name;
  }
  return "";
}

}  // namespace

void ApplyVersionInputs(int32_t builtin_code, int32_t version,
                        GeneratedCase* c) {
  if (const VersionInputs* v = Find(builtin_code, version)) {
    Apply(*v, builtin_code, c);
  }
}

int32_t InputVersion(int32_t builtin_code, int32_t version) {
  const VersionInputs* v = Find(builtin_code, version);
  return v == nullptr ? 1 : v->version;
}

std::vector<int32_t> InputVersions(int32_t builtin_code) {
  std::vector<int32_t> out = {1};
  for (const VersionInputs& v : kVersionInputs) {
    if (v.op == builtin_code && v.version != 1) out.push_back(v.version);
  }
  return out;
}

bool HasVersionInputs(int32_t builtin_code, int32_t version) {
  const VersionInputs* v = Find(builtin_code, version);
  return v != nullptr && v->version == version;
}

const char* VersionInputsGap(int32_t builtin_code, int32_t version) {
  for (const VersionGap& g : kVersionGaps) {
    if (g.op == builtin_code && g.first <= version && version <= g.last) {
      return g.why;
    }
  }
  return nullptr;
}

std::vector<std::string> DescribeVersionInputs() {
  std::vector<std::string> out;
  for (const VersionInputs& v : kVersionInputs) {
    out.push_back(absl::StrCat(BuiltinOpName(v.op), " v", v.version, ": ",
                               ChangeName(v)));
  }
  return out;
}

}  // namespace kiln::conformance
