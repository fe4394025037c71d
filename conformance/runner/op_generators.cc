#include "op_generators.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "version_inputs.h"

namespace kiln::conformance {
namespace {

// Builds one case; every helper appends a tensor and returns its index.
class CaseBuilder {
 public:
  CaseBuilder(std::string family, uint64_t seed) : rng_(seed) {
    case_.family = std::move(family);
  }

  int Floats(std::vector<int32_t> shape, float lo, float hi,
             bool constant = false, bool avoid_zero = false) {
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(static_cast<size_t>(Count(shape)));
    for (float& x : v) {
      x = dist(rng_);
      if (avoid_zero && std::fabs(x) < 0.25f) x = x < 0 ? -0.5f : 0.5f;
    }
    return Add(KILN_TYPE_FLOAT32, std::move(shape), v.data(),
               v.size() * sizeof(float), constant);
  }
  int Bools(std::vector<int32_t> shape) {
    std::bernoulli_distribution dist(0.5);
    std::vector<uint8_t> v(static_cast<size_t>(Count(shape)));
    for (uint8_t& x : v) x = dist(rng_) ? 1 : 0;
    return Add(KILN_TYPE_BOOL, std::move(shape), v.data(), v.size(), false);
  }
  int Int32s(std::vector<int32_t> shape, std::vector<int32_t> values) {
    return Add(KILN_TYPE_INT32, std::move(shape), values.data(),
               values.size() * sizeof(int32_t), true);
  }
  int Output(KilnTensorType type) {
    GeneratedTensor t;
    t.type = type;
    case_.tensors.push_back(std::move(t));
    return static_cast<int>(case_.tensors.size() - 1);
  }
  void Int(uint32_t key, int64_t v) {
    OptionValue o;
    o.kind = OptionValue::Kind::kInt;
    o.i = v;
    case_.options.emplace_back(key, o);
  }
  void Float(uint32_t key, float v) {
    OptionValue o;
    o.kind = OptionValue::Kind::kFloat;
    o.f = v;
    case_.options.emplace_back(key, o);
  }
  void IntArray(uint32_t key, std::vector<int32_t> v) {
    OptionValue o;
    o.kind = OptionValue::Kind::kIntArray;
    o.array = std::move(v);
    case_.options.emplace_back(key, o);
  }
  GeneratedCase Finish(std::vector<int32_t> inputs,
                       std::vector<int32_t> outputs) {
    case_.inputs = std::move(inputs);
    case_.outputs = std::move(outputs);
    return std::move(case_);
  }

 private:
  static int64_t Count(const std::vector<int32_t>& shape) {
    int64_t n = 1;
    for (int32_t d : shape) n *= d;
    return n;
  }
  int Add(KilnTensorType type, std::vector<int32_t> shape, const void* data,
          size_t bytes, bool constant) {
    GeneratedTensor t;
    t.type = type;
    t.shape = std::move(shape);
    t.bytes.resize(bytes);
    if (bytes > 0) std::memcpy(t.bytes.data(), data, bytes);
    t.constant = constant;
    case_.tensors.push_back(std::move(t));
    return static_cast<int>(case_.tensors.size() - 1);
  }

  std::mt19937_64 rng_;
  GeneratedCase case_;
};

bool In(int32_t op, std::initializer_list<int32_t> set) {
  for (int32_t x : set) {
    if (x == op) return true;
  }
  return false;
}

std::optional<GeneratedCase> Binary(int32_t op, uint64_t seed) {
  const bool comparison =
      In(op, {KILN_OP_LESS, KILN_OP_LESS_EQUAL, KILN_OP_GREATER,
              KILN_OP_GREATER_EQUAL, KILN_OP_EQUAL, KILN_OP_NOT_EQUAL});
  const bool logical = In(op, {KILN_OP_LOGICAL_AND, KILN_OP_LOGICAL_OR});
  const bool arithmetic = In(
      op, {KILN_OP_ADD, KILN_OP_SUB, KILN_OP_MUL, KILN_OP_DIV, KILN_OP_MAXIMUM,
           KILN_OP_MINIMUM, KILN_OP_POW, KILN_OP_SQUARED_DIFFERENCE,
           KILN_OP_FLOOR_DIV, KILN_OP_FLOOR_MOD, KILN_OP_ATAN2});
  if (!comparison && !logical && !arithmetic) return std::nullopt;
  CaseBuilder b("elementwise binary with broadcast", seed);
  int x, y;
  if (logical) {
    x = b.Bools({2, 3, 4});
    y = b.Bools({3, 1});
  } else if (op == KILN_OP_POW) {
    x = b.Floats({2, 3, 4}, 0.5f, 2.f);
    y = b.Floats({3, 1}, -2.f, 2.f);
  } else {
    const bool divides =
        In(op, {KILN_OP_DIV, KILN_OP_FLOOR_DIV, KILN_OP_FLOOR_MOD});
    x = b.Floats({2, 3, 4}, -4.f, 4.f);
    // LiteRT's ATAN2 does not broadcast.
    y = b.Floats(op == KILN_OP_ATAN2 ? std::vector<int32_t>{2, 3, 4}
                                     : std::vector<int32_t>{3, 1},
                 -2.f, 2.f, false, divides);
  }
  if (In(op, {KILN_OP_ADD, KILN_OP_SUB, KILN_OP_MUL, KILN_OP_DIV})) {
    b.Int(KILN_OPTION_FUSED_ACTIVATION, KILN_ACTIVATION_RELU6);
  }
  const int out =
      b.Output(comparison || logical ? KILN_TYPE_BOOL : KILN_TYPE_FLOAT32);
  return b.Finish({x, y}, {out});
}

std::optional<GeneratedCase> Unary(int32_t op, uint64_t seed) {
  const bool positive = In(op, {KILN_OP_LOG, KILN_OP_SQRT, KILN_OP_RSQRT});
  const bool boolean = op == KILN_OP_LOGICAL_NOT;
  if (!positive && !boolean &&
      !In(op,
          {KILN_OP_ABS,          KILN_OP_NEG,         KILN_OP_EXP,
           KILN_OP_SIN,          KILN_OP_COS,         KILN_OP_TANH,
           KILN_OP_LOGISTIC,     KILN_OP_RELU,        KILN_OP_RELU6,
           KILN_OP_RELU_N1_TO_1, KILN_OP_RELU_0_TO_1, KILN_OP_ELU,
           KILN_OP_FLOOR,        KILN_OP_CEIL,        KILN_OP_ROUND,
           KILN_OP_SQUARE,       KILN_OP_HARD_SWISH,  KILN_OP_LEAKY_RELU,
           KILN_OP_GELU,         KILN_OP_SIGN,        KILN_OP_SOFTMAX,
           KILN_OP_LOG_SOFTMAX,  KILN_OP_ZEROS_LIKE,  KILN_OP_L2_NORMALIZATION,
           KILN_OP_QUANTIZE,     KILN_OP_DEQUANTIZE})) {
    return std::nullopt;
  }
  CaseBuilder b("elementwise unary", seed);
  int x;
  if (boolean) {
    x = b.Bools({2, 3, 4});
  } else if (positive) {
    x = b.Floats({2, 3, 4}, 0.1f, 4.f);
  } else {
    x = b.Floats({2, 3, 4}, -3.f, 3.f);
  }
  if (op == KILN_OP_LEAKY_RELU) b.Float(KILN_OPTION_ALPHA, 0.2f);
  if (op == KILN_OP_SOFTMAX) b.Float(KILN_OPTION_BETA, 1.f);
  const int out = b.Output(boolean ? KILN_TYPE_BOOL : KILN_TYPE_FLOAT32);
  return b.Finish({x}, {out});
}

std::optional<GeneratedCase> ConvPoolFc(int32_t op, uint64_t seed) {
  CaseBuilder b("conv/pool/fully connected with options", seed);
  switch (op) {
    case KILN_OP_CONV_2D: {
      const int x = b.Floats({1, 5, 5, 3}, -1.f, 1.f);
      const int w = b.Floats({4, 3, 3, 3}, -1.f, 1.f, true);
      const int bias = b.Floats({4}, -1.f, 1.f, true);
      b.Int(KILN_OPTION_PADDING, KILN_PADDING_SAME);
      b.Int(KILN_OPTION_STRIDE_W, 2);
      b.Int(KILN_OPTION_STRIDE_H, 1);
      b.Int(KILN_OPTION_DILATION_W, 1);
      b.Int(KILN_OPTION_DILATION_H, 1);
      b.Int(KILN_OPTION_FUSED_ACTIVATION, KILN_ACTIVATION_RELU);
      return b.Finish({x, w, bias}, {b.Output(KILN_TYPE_FLOAT32)});
    }
    case KILN_OP_DEPTHWISE_CONV_2D: {
      const int x = b.Floats({1, 5, 5, 2}, -1.f, 1.f);
      const int w = b.Floats({1, 3, 3, 4}, -1.f, 1.f, true);
      const int bias = b.Floats({4}, -1.f, 1.f, true);
      b.Int(KILN_OPTION_PADDING, KILN_PADDING_VALID);
      b.Int(KILN_OPTION_STRIDE_W, 1);
      b.Int(KILN_OPTION_STRIDE_H, 1);
      b.Int(KILN_OPTION_DILATION_W, 1);
      b.Int(KILN_OPTION_DILATION_H, 1);
      b.Int(KILN_OPTION_DEPTH_MULTIPLIER, 2);
      b.Int(KILN_OPTION_FUSED_ACTIVATION, KILN_ACTIVATION_NONE);
      return b.Finish({x, w, bias}, {b.Output(KILN_TYPE_FLOAT32)});
    }
    case KILN_OP_FULLY_CONNECTED: {
      const int x = b.Floats({2, 6}, -1.f, 1.f);
      const int w = b.Floats({3, 6}, -1.f, 1.f, true);
      const int bias = b.Floats({3}, -1.f, 1.f, true);
      b.Int(KILN_OPTION_FUSED_ACTIVATION, KILN_ACTIVATION_NONE);
      b.Int(KILN_OPTION_WEIGHTS_FORMAT, 0);
      b.Int(KILN_OPTION_KEEP_NUM_DIMS, 0);
      return b.Finish({x, w, bias}, {b.Output(KILN_TYPE_FLOAT32)});
    }
    case KILN_OP_AVERAGE_POOL_2D:
    case KILN_OP_MAX_POOL_2D:
    case KILN_OP_L2_POOL_2D: {
      const int x = b.Floats({1, 6, 6, 2}, -1.f, 1.f);
      b.Int(KILN_OPTION_PADDING, KILN_PADDING_VALID);
      b.Int(KILN_OPTION_STRIDE_W, 2);
      b.Int(KILN_OPTION_STRIDE_H, 2);
      b.Int(KILN_OPTION_FILTER_W, 2);
      b.Int(KILN_OPTION_FILTER_H, 3);
      b.Int(KILN_OPTION_FUSED_ACTIVATION, KILN_ACTIVATION_NONE);
      return b.Finish({x}, {b.Output(KILN_TYPE_FLOAT32)});
    }
    case KILN_OP_BATCH_MATMUL: {
      const int x = b.Floats({2, 3, 4}, -1.f, 1.f);
      const int y = b.Floats({2, 4, 5}, -1.f, 1.f);
      b.Int(KILN_OPTION_ADJ_X, 0);
      b.Int(KILN_OPTION_ADJ_Y, 0);
      return b.Finish({x, y}, {b.Output(KILN_TYPE_FLOAT32)});
    }
    default:
      return std::nullopt;
  }
}

std::optional<GeneratedCase> Reduction(int32_t op, uint64_t seed) {
  const bool arg = In(op, {KILN_OP_ARG_MAX, KILN_OP_ARG_MIN});
  const bool boolean = In(op, {KILN_OP_REDUCE_ANY, KILN_OP_REDUCE_ALL});
  if (!arg && !boolean &&
      !In(op, {KILN_OP_MEAN, KILN_OP_SUM, KILN_OP_REDUCE_MAX,
               KILN_OP_REDUCE_MIN, KILN_OP_REDUCE_PROD})) {
    return std::nullopt;
  }
  CaseBuilder b("reduction with axis input", seed);
  const int x = boolean ? b.Bools({2, 3, 4}) : b.Floats({2, 3, 4}, 0.5f, 1.5f);
  if (arg) {
    const int axis = b.Int32s({1}, {2});
    b.Int(KILN_OPTION_OUTPUT_TYPE, KILN_TYPE_INT32);
    return b.Finish({x, axis}, {b.Output(KILN_TYPE_INT32)});
  }
  const int axis = b.Int32s({2}, {1, -1});
  b.Int(KILN_OPTION_KEEP_DIMS, 1);
  return b.Finish({x, axis},
                  {b.Output(boolean ? KILN_TYPE_BOOL : KILN_TYPE_FLOAT32)});
}

// Shape / data movement ops that keep every element: reshapes,
// transposes, tiling and broadcasting.
std::optional<GeneratedCase> Reshaping(int32_t op, uint64_t seed) {
  CaseBuilder b("shape / data movement", seed);
  switch (op) {
    case KILN_OP_RESHAPE: {
      const int x = b.Floats({2, 3, 4}, -1.f, 1.f);
      const int shape = b.Int32s({2}, {4, 6});
      b.IntArray(KILN_OPTION_NEW_SHAPE, {4, 6});
      return b.Finish({x, shape}, {b.Output(KILN_TYPE_FLOAT32)});
    }
    case KILN_OP_TRANSPOSE: {
      const int x = b.Floats({2, 3, 4}, -1.f, 1.f);
      const int perm = b.Int32s({3}, {2, 0, 1});
      return b.Finish({x, perm}, {b.Output(KILN_TYPE_FLOAT32)});
    }
    case KILN_OP_SQUEEZE: {
      const int x = b.Floats({1, 3, 1, 2}, -1.f, 1.f);
      b.IntArray(KILN_OPTION_SQUEEZE_DIMS, {0, 2});
      return b.Finish({x}, {b.Output(KILN_TYPE_FLOAT32)});
    }
    case KILN_OP_EXPAND_DIMS: {
      const int x = b.Floats({2, 3}, -1.f, 1.f);
      const int axis = b.Int32s({1}, {1});
      return b.Finish({x, axis}, {b.Output(KILN_TYPE_FLOAT32)});
    }
    case KILN_OP_TILE: {
      const int x = b.Floats({2, 3}, -1.f, 1.f);
      const int multiples = b.Int32s({2}, {2, 1});
      return b.Finish({x, multiples}, {b.Output(KILN_TYPE_FLOAT32)});
    }
    case KILN_OP_BROADCAST_TO: {
      const int x = b.Floats({3, 1}, -1.f, 1.f);
      const int shape = b.Int32s({3}, {2, 3, 4});
      return b.Finish({x, shape}, {b.Output(KILN_TYPE_FLOAT32)});
    }
    case KILN_OP_SHAPE: {
      const int x = b.Floats({2, 3, 4}, -1.f, 1.f);
      b.Int(KILN_OPTION_OUTPUT_TYPE, KILN_TYPE_INT32);
      return b.Finish({x}, {b.Output(KILN_TYPE_INT32)});
    }
    case KILN_OP_SPACE_TO_DEPTH:
    case KILN_OP_DEPTH_TO_SPACE: {
      const int x = op == KILN_OP_SPACE_TO_DEPTH
                        ? b.Floats({1, 4, 4, 2}, -1.f, 1.f)
                        : b.Floats({1, 2, 2, 8}, -1.f, 1.f);
      b.Int(KILN_OPTION_BLOCK_SIZE, 2);
      return b.Finish({x}, {b.Output(KILN_TYPE_FLOAT32)});
    }
    case KILN_OP_REVERSE_V2: {
      const int x = b.Floats({2, 3}, -1.f, 1.f);
      const int axis = b.Int32s({1}, {1});
      return b.Finish({x, axis}, {b.Output(KILN_TYPE_FLOAT32)});
    }
    default:
      return std::nullopt;
  }
}

// Shape / data movement ops that pad or cut out a region.
std::optional<GeneratedCase> PaddingAndSlicing(int32_t op, uint64_t seed) {
  CaseBuilder b("shape / data movement", seed);
  switch (op) {
    case KILN_OP_PAD: {
      const int x = b.Floats({2, 3}, -1.f, 1.f);
      const int pads = b.Int32s({2, 2}, {1, 0, 2, 1});
      return b.Finish({x, pads}, {b.Output(KILN_TYPE_FLOAT32)});
    }
    case KILN_OP_PADV2: {
      const int x = b.Floats({2, 3}, -1.f, 1.f);
      const int pads = b.Int32s({2, 2}, {1, 0, 2, 1});
      const int value = b.Floats({}, 0.5f, 0.5f, true);
      return b.Finish({x, pads, value}, {b.Output(KILN_TYPE_FLOAT32)});
    }
    case KILN_OP_MIRROR_PAD: {
      const int x = b.Floats({3, 4}, -1.f, 1.f);
      const int pads = b.Int32s({2, 2}, {1, 2, 2, 1});
      b.Int(KILN_OPTION_MIRROR_PAD_MODE, 0);
      return b.Finish({x, pads}, {b.Output(KILN_TYPE_FLOAT32)});
    }
    case KILN_OP_SLICE: {
      const int x = b.Floats({3, 4}, -1.f, 1.f);
      const int begin = b.Int32s({2}, {1, 1});
      const int size = b.Int32s({2}, {2, -1});
      return b.Finish({x, begin, size}, {b.Output(KILN_TYPE_FLOAT32)});
    }
    case KILN_OP_STRIDED_SLICE: {
      const int x = b.Floats({4, 5}, -1.f, 1.f);
      const int begin = b.Int32s({2}, {0, 1});
      const int end = b.Int32s({2}, {4, 5});
      const int strides = b.Int32s({2}, {2, 2});
      for (uint32_t key : {KILN_OPTION_BEGIN_MASK, KILN_OPTION_END_MASK,
                           KILN_OPTION_ELLIPSIS_MASK, KILN_OPTION_NEW_AXIS_MASK,
                           KILN_OPTION_SHRINK_AXIS_MASK}) {
        b.Int(key, 0);
      }
      return b.Finish({x, begin, end, strides}, {b.Output(KILN_TYPE_FLOAT32)});
    }
    default:
      return std::nullopt;
  }
}

// Shape / data movement ops that split tensors or join them.
std::optional<GeneratedCase> SplittingAndJoining(int32_t op, uint64_t seed) {
  CaseBuilder b("shape / data movement", seed);
  switch (op) {
    case KILN_OP_CONCATENATION: {
      const int x = b.Floats({2, 3}, -1.f, 1.f);
      const int y = b.Floats({2, 2}, -1.f, 1.f);
      b.Int(KILN_OPTION_AXIS, 1);
      b.Int(KILN_OPTION_FUSED_ACTIVATION, KILN_ACTIVATION_NONE);
      return b.Finish({x, y}, {b.Output(KILN_TYPE_FLOAT32)});
    }
    case KILN_OP_SPLIT: {
      const int axis = b.Int32s({}, {1});
      const int x = b.Floats({2, 4}, -1.f, 1.f);
      b.Int(KILN_OPTION_NUM_SPLITS, 2);
      return b.Finish({axis, x}, {b.Output(KILN_TYPE_FLOAT32),
                                  b.Output(KILN_TYPE_FLOAT32)});
    }
    case KILN_OP_SPLIT_V: {
      const int x = b.Floats({2, 4}, -1.f, 1.f);
      const int sizes = b.Int32s({2}, {1, 3});
      const int axis = b.Int32s({}, {1});
      b.Int(KILN_OPTION_NUM_SPLITS, 2);
      return b.Finish({x, sizes, axis}, {b.Output(KILN_TYPE_FLOAT32),
                                         b.Output(KILN_TYPE_FLOAT32)});
    }
    case KILN_OP_PACK: {
      const int x = b.Floats({2, 3}, -1.f, 1.f);
      const int y = b.Floats({2, 3}, -1.f, 1.f);
      b.Int(KILN_OPTION_VALUES_COUNT, 2);
      b.Int(KILN_OPTION_AXIS, 1);
      return b.Finish({x, y}, {b.Output(KILN_TYPE_FLOAT32)});
    }
    case KILN_OP_UNPACK: {
      const int x = b.Floats({2, 3}, -1.f, 1.f);
      b.Int(KILN_OPTION_NUM, 2);
      b.Int(KILN_OPTION_AXIS, 0);
      return b.Finish(
          {x}, {b.Output(KILN_TYPE_FLOAT32), b.Output(KILN_TYPE_FLOAT32)});
    }
    default:
      return std::nullopt;
  }
}

// Shape / data movement ops that pick elements by index, condition or
// rank.
std::optional<GeneratedCase> Selecting(int32_t op, uint64_t seed) {
  CaseBuilder b("shape / data movement", seed);
  switch (op) {
    case KILN_OP_GATHER: {
      const int x = b.Floats({4, 3}, -1.f, 1.f);
      const int indices = b.Int32s({2}, {3, 1});
      b.Int(KILN_OPTION_AXIS, 0);
      b.Int(KILN_OPTION_BATCH_DIMS, 0);
      return b.Finish({x, indices}, {b.Output(KILN_TYPE_FLOAT32)});
    }
    case KILN_OP_GATHER_ND: {
      const int x = b.Floats({3, 4}, -1.f, 1.f);
      const int indices = b.Int32s({2, 1}, {2, 0});
      return b.Finish({x, indices}, {b.Output(KILN_TYPE_FLOAT32)});
    }
    case KILN_OP_SELECT_V2: {
      const int cond = b.Bools({3, 1});
      const int x = b.Floats({2, 3, 4}, -1.f, 1.f);
      const int y = b.Floats({4}, -1.f, 1.f);
      return b.Finish({cond, x, y}, {b.Output(KILN_TYPE_FLOAT32)});
    }
    case KILN_OP_TOPK_V2: {
      const int x = b.Floats({2, 6}, -1.f, 1.f);
      const int k = b.Int32s({}, {3});
      return b.Finish({x, k},
                      {b.Output(KILN_TYPE_FLOAT32), b.Output(KILN_TYPE_INT32)});
    }
    default:
      return std::nullopt;
  }
}

// The remaining members of the shape / data movement family.
std::optional<GeneratedCase> OtherDataOps(int32_t op, uint64_t seed) {
  CaseBuilder b("shape / data movement", seed);
  switch (op) {
    case KILN_OP_PRELU: {
      const int x = b.Floats({2, 3, 4}, -1.f, 1.f);
      const int alpha = b.Floats({1, 1, 4}, 0.f, 0.5f, true);
      return b.Finish({x, alpha}, {b.Output(KILN_TYPE_FLOAT32)});
    }
    case KILN_OP_RESIZE_BILINEAR:
    case KILN_OP_RESIZE_NEAREST_NEIGHBOR: {
      const int x = b.Floats({1, 3, 3, 2}, -1.f, 1.f);
      const int size = b.Int32s({2}, {5, 4});
      b.Int(KILN_OPTION_ALIGN_CORNERS, 0);
      b.Int(KILN_OPTION_HALF_PIXEL_CENTERS, 0);
      return b.Finish({x, size}, {b.Output(KILN_TYPE_FLOAT32)});
    }
    case KILN_OP_TRANSPOSE_CONV: {
      const int shape = b.Int32s({4}, {1, 7, 7, 2});
      const int w = b.Floats({2, 3, 3, 3}, -1.f, 1.f, true);
      const int x = b.Floats({1, 3, 3, 3}, -1.f, 1.f);
      b.Int(KILN_OPTION_PADDING, KILN_PADDING_VALID);
      b.Int(KILN_OPTION_STRIDE_W, 2);
      b.Int(KILN_OPTION_STRIDE_H, 2);
      b.Int(KILN_OPTION_FUSED_ACTIVATION, KILN_ACTIVATION_NONE);
      return b.Finish({shape, w, x}, {b.Output(KILN_TYPE_FLOAT32)});
    }
    case KILN_OP_CAST: {
      const int x = b.Floats({2, 3}, -5.f, 5.f);
      b.Int(KILN_OPTION_IN_DATA_TYPE, KILN_TYPE_FLOAT32);
      b.Int(KILN_OPTION_OUT_DATA_TYPE, KILN_TYPE_INT32);
      return b.Finish({x}, {b.Output(KILN_TYPE_INT32)});
    }
    default:
      return std::nullopt;
  }
}

template <typename T>
std::vector<T> Elements(const Tensor& t) {
  std::vector<T> v(t.bytes / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), t.data, v.size() * sizeof(T));
  return v;
}

std::string ShapeString(const std::vector<int32_t>& s) {
  std::ostringstream o;
  o << "[";
  for (size_t i = 0; i < s.size(); ++i) o << (i ? "," : "") << s[i];
  o << "]";
  return o.str();
}

}  // namespace

// The version-1 case (defined below, after the op families).
absl::StatusOr<GeneratedCase> GenerateVersionOneCase(int32_t builtin_code,
                                                     uint64_t seed);

absl::StatusOr<GeneratedCase> GenerateCase(int32_t builtin_code, uint64_t seed,
                                           int32_t version) {
  absl::StatusOr<GeneratedCase> c = GenerateVersionOneCase(builtin_code, seed);
  if (c.ok()) ApplyVersionInputs(builtin_code, version, &*c);
  return c;
}

absl::StatusOr<GeneratedCase> GenerateVersionOneCase(int32_t builtin_code,
                                                     uint64_t seed) {
  const uint64_t s = seed * 1000003u + static_cast<uint64_t>(builtin_code);
  for (auto* family :
       {&Binary, &Unary, &ConvPoolFc, &Reduction, &Reshaping,
        &PaddingAndSlicing, &SplittingAndJoining, &Selecting, &OtherDataOps}) {
    if (std::optional<GeneratedCase> c = family(builtin_code, s)) {
      return *std::move(c);
    }
  }
  return absl::NotFoundError(builtin_code == KILN_OP_CUSTOM
                                 ? "no input generator for custom ops"
                                 : absl::StrCat("no input generator for op ",
                                                BuiltinOpName(builtin_code)));
}

std::vector<int> BuildNode(const GeneratedCase& c, int32_t builtin_code,
                           int32_t version, const std::string& custom_name,
                           SingleNodeRunner* runner) {
  std::vector<int> index;
  for (const GeneratedTensor& t : c.tensors) {
    index.push_back(t.bytes.empty() && !t.constant
                        ? runner->AddTensor(t.type, t.shape)
                        : runner->AddTensor(t.type, t.shape, t.bytes.data(),
                                            t.bytes.size(), t.constant));
  }
  for (size_t i = 0; i < c.tensors.size(); ++i) {
    runner->tensor(index[i]).quantization = c.tensors[i].quantization;
  }
  std::vector<int32_t> inputs, outputs;
  std::vector<int> output_index;
  for (int32_t i : c.inputs) inputs.push_back(index[static_cast<size_t>(i)]);
  for (int32_t i : c.outputs) {
    outputs.push_back(index[static_cast<size_t>(i)]);
    output_index.push_back(index[static_cast<size_t>(i)]);
  }
  runner->SetOp(builtin_code, version, inputs, outputs, custom_name);
  for (const auto& [key, value] : c.options)
    runner->node().SetOption(key, value);
  if (!c.custom_options.empty()) {
    runner->node().custom_options = c.custom_options.data();
    runner->node().custom_options_size = c.custom_options.size();
  }
  return output_index;
}

std::string CompareTensors(const Tensor& got, const Tensor& want) {
  if (got.type != want.type) {
    return absl::StrCat("output type ", TypeName(got.type), ", reference ",
                        TypeName(want.type));
  }
  if (got.shape != want.shape) {
    return absl::StrCat("output shape ", ShapeString(got.shape), ", reference ",
                        ShapeString(want.shape));
  }
  if (got.bytes != want.bytes) {
    return absl::StrCat("output holds ", got.bytes, " bytes, reference ",
                        want.bytes);
  }
  if (got.type == KILN_TYPE_FLOAT32) {
    const std::vector<float> a = Elements<float>(got),
                             b = Elements<float>(want);
    size_t bad = 0, first = 0;
    double worst = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      const bool both_nan = std::isnan(a[i]) && std::isnan(b[i]);
      const double diff = std::fabs(static_cast<double>(a[i]) - b[i]);
      if (both_nan) continue;
      if (!(diff <= kAbsTolerance + kRelTolerance * std::fabs(b[i]))) {
        if (bad++ == 0) first = i;
        if (!(diff <= worst)) worst = diff;
      }
    }
    if (bad == 0) return "";
    return absl::StrCat(
        bad, " of ", a.size(),
        " elements outside tolerance (|got-ref| <= ", kAbsTolerance, " + ",
        kRelTolerance, "*|ref|); first at flat index ", first, ": got ",
        a[first], ", reference ", b[first], "; max abs diff ", worst);
  }
  if (got.bytes > 0 && std::memcmp(got.data, want.data, got.bytes) != 0) {
    const auto* a = static_cast<const uint8_t*>(got.data);
    const auto* b = static_cast<const uint8_t*>(want.data);
    size_t i = 0;
    while (i < got.bytes && a[i] == b[i]) ++i;
    const size_t element = ElementSize(got.type);
    return absl::StrCat(
        "output differs from the reference (exact match "
        "required for ",
        TypeName(got.type), "); first at element ",
        element > 0 ? i / element : i);
  }
  return "";
}

}  // namespace kiln::conformance
