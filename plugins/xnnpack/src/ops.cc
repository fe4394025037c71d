#include "ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <utility>

namespace kiln::xnnpack {
namespace {

using sdk::GraphNode;
using sdk::NodeSupport;
using sdk::NodeView;
using sdk::Tensor;
using sdk::TypeSet;

constexpr TypeSet kF32{KILN_TYPE_FLOAT32};
constexpr TypeSet kF32Q8{KILN_TYPE_FLOAT32, KILN_TYPE_INT8, KILN_TYPE_UINT8};
// Convolutions and fully connected: quantized ones add int32 biases.
constexpr TypeSet kF32Q8Bias{KILN_TYPE_FLOAT32, KILN_TYPE_INT8, KILN_TYPE_UINT8,
                             KILN_TYPE_INT32};
// Ops with an integer index operand (axes, paddings, sizes, shapes).
constexpr TypeSet kF32Index{KILN_TYPE_FLOAT32, KILN_TYPE_INT32,
                            KILN_TYPE_INT64};
constexpr TypeSet kF32Q8Index{KILN_TYPE_FLOAT32, KILN_TYPE_INT8,
                              KILN_TYPE_UINT8, KILN_TYPE_INT32,
                              KILN_TYPE_INT64};

const char* OpName(const NodeView& node) { return sdk::OpName(node); }

int64_t Activation(const NodeView& node) {
  return node.OptionInt(KILN_OPTION_FUSED_ACTIVATION, KILN_ACTIVATION_NONE);
}

// The clamp range of a fused activation (NONE, RELU, RELU_N1_TO_1, RELU6).
void ActivationRange(int64_t activation, float* lo, float* hi) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  *lo = -kInf;
  *hi = kInf;
  switch (activation) {
    case KILN_ACTIVATION_RELU:
      *lo = 0;
      break;
    case KILN_ACTIVATION_RELU_N1_TO_1:
      *lo = -1;
      *hi = 1;
      break;
    case KILN_ACTIVATION_RELU6:
      *lo = 0;
      *hi = 6;
      break;
    default:
      break;
  }
}

std::vector<size_t> Dims(const Tensor& t) {
  std::vector<size_t> dims;
  for (int32_t d : t.shape()) dims.push_back(static_cast<size_t>(d));
  return dims;
}

// TFLite's explicit padding for SAME/VALID (ComputePaddingHeightWidth):
// the output of a window of `extent` (dilated) sliding with `stride` over
// `in`, and the padding before/after it.
void Padding(int64_t padding, int32_t in, int32_t stride, int32_t dilation,
             int32_t filter, uint32_t* before, uint32_t* after) {
  const int32_t extent = (filter - 1) * dilation + 1;
  const int32_t out = padding == KILN_PADDING_SAME
                          ? (in + stride - 1) / stride
                          : (in - extent + stride) / stride;
  const int32_t total = std::max((out - 1) * stride + extent - in, 0);
  *before = static_cast<uint32_t>(total / 2);
  *after = static_cast<uint32_t>(total - total / 2);
}

bool ReadConstantInts(const Tensor& t, std::vector<int64_t>* values) {
  values->clear();
  if (!t.present() || !t.is_constant()) return false;
  const int64_t n = t.num_elements();
  const void* raw = t.data<void>();
  if (n > 0 && raw == nullptr) return false;
  for (int64_t i = 0; i < n; ++i) {
    if (t.type() == KILN_TYPE_INT32) {
      values->push_back(static_cast<const int32_t*>(raw)[i]);
    } else if (t.type() == KILN_TYPE_INT64) {
      values->push_back(static_cast<const int64_t*>(raw)[i]);
    } else {
      return false;
    }
  }
  return true;
}

struct Quant {
  int32_t channels = 0;  // 0: not quantized
  int32_t axis = 0;
  std::vector<float> scales;
  std::vector<int64_t> zero_points;
};

Quant ReadQuant(const NodeView& node, const Tensor& t) {
  Quant q;
  KilnQuantizationParams params{};
  if (node.Quantization(t, &params) != KILN_STATUS_OK) return q;
  q.channels = params.num_channels;
  q.axis = params.quantized_dimension;
  for (int32_t i = 0; i < params.num_channels; ++i) {
    q.scales.push_back(params.scales[i]);
    q.zero_points.push_back(params.zero_points[i]);
  }
  return q;
}

// ---- Support checks --------------------------------------------------------

// The element type every float or 8-bit operand shares (the output's).
KilnTensorType DataType(const NodeView& node) {
  return node.output(0).present() ? node.output(0).type() : -1;
}

bool IsQuantized8(KilnTensorType t) {
  return t == KILN_TYPE_INT8 || t == KILN_TYPE_UINT8;
}

// Operand `t` (a data operand) has the node's data type and, when that is
// quantized, one scale and zero point.
NodeSupport CheckData(const NodeView& node, const Tensor& t, const char* what) {
  const KilnTensorType type = DataType(node);
  if (!t.present()) {
    return NodeSupport::Unsupported(OpName(node), " ", what, " is missing");
  }
  if (t.type() != type) {
    return NodeSupport::Unsupported(
        OpName(node), " ", what, " has type ", KilnTensorTypeName(t.type()),
        " but the output has ", KilnTensorTypeName(type),
        "; XNNPACK needs one type");
  }
  if (type != KILN_TYPE_FLOAT32 && !IsQuantized8(type)) {
    return NodeSupport::Unsupported(OpName(node), " on ",
                                    KilnTensorTypeName(type),
                                    " tensors is not run by XNNPACK");
  }
  if (IsQuantized8(type)) {
    const Quant q = ReadQuant(node, t);
    if (q.channels != 1) {
      return NodeSupport::Unsupported(
          OpName(node), " ", what,
          q.channels == 0 ? " is not quantized"
                          : " is quantized per channel; XNNPACK takes one "
                            "scale and zero point for activations");
    }
    if (!(q.scales[0] > 0) || !std::isfinite(q.scales[0])) {
      return NodeSupport::Unsupported(OpName(node), " ", what,
                                      " has a non-positive scale");
    }
  }
  return NodeSupport::Supported();
}

NodeSupport FloatOnly(const NodeView& node) {
  if (DataType(node) != KILN_TYPE_FLOAT32) {
    return NodeSupport::Unsupported(
        OpName(node), " on ", KilnTensorTypeName(DataType(node)),
        " tensors has no XNNPACK subgraph node in this libXNNPACK (float32 "
        "only)");
  }
  return NodeSupport::Supported();
}

NodeSupport ClampActivation(const NodeView& node) {
  const int64_t act = Activation(node);
  if (!sdk::IsClampActivation(act)) {
    return NodeSupport::Unsupported(
        OpName(node), " fused activation ", sdk::ActivationName(act),
        " is not a clamp; XNNPACK fuses NONE, RELU, RELU_N1_TO_1 and RELU6");
  }
  return NodeSupport::Supported();
}

// An 8-bit node whose output has its input 0's scale and zero point (float32
// nodes pass).
NodeSupport SameQuantization(const NodeView& node) {
  if (!IsQuantized8(DataType(node))) return NodeSupport::Supported();
  const Quant in = ReadQuant(node, node.input(0)),
              out = ReadQuant(node, node.output(0));
  if (in.scales != out.scales || in.zero_points != out.zero_points) {
    return NodeSupport::Unsupported(OpName(node),
                                    " input and output quantization differ");
  }
  return NodeSupport::Supported();
}

NodeSupport ExpectRank(const NodeView& node, const Tensor& t, const char* what,
                       int32_t rank) {
  if (t.rank() != rank) {
    return NodeSupport::Unsupported(OpName(node), " ", what, " has rank ",
                                    t.rank(), "; XNNPACK needs rank ", rank);
  }
  return NodeSupport::Supported();
}

NodeSupport ExpectConstant(const NodeView& node, const Tensor& t,
                           const char* what) {
  if (!t.present() || !t.is_constant()) {
    return NodeSupport::Unsupported(
        OpName(node), " ", what,
        " is not a constant; XNNPACK packs it once and needs its values at "
        "prepare");
  }
  return NodeSupport::Supported();
}

// Filter and bias of a quantized convolution or fully connected node:
// int8 filter per tensor or per channel along `channel_axis` (-1: per
// tensor only), zero points 0, an int32 bias or none (zeros are defined
// then, as TFLite adds none).
NodeSupport CheckQuantizedWeights(const NodeView& node, const Tensor& filter,
                                  const Tensor& bias, int32_t channel_axis) {
  const KilnTensorType type = DataType(node);
  if (filter.type() != type) {
    return NodeSupport::Unsupported(
        OpName(node), " filter has type ", KilnTensorTypeName(filter.type()),
        " with ", KilnTensorTypeName(type),
        " activations; XNNPACK needs the same 8-bit type (no hybrid "
        "weights)");
  }
  const Quant q = ReadQuant(node, filter);
  if (q.channels == 0) {
    return NodeSupport::Unsupported(OpName(node), " filter is not quantized");
  }
  if (q.channels > 1) {
    if (channel_axis < 0 || type != KILN_TYPE_INT8) {
      return NodeSupport::Unsupported(
          OpName(node),
          " filter is quantized per channel, which this libXNNPACK's subgraph "
          "API runs only for int8 CONV_2D, DEPTHWISE_CONV_2D and "
          "FULLY_CONNECTED");
    }
    if (q.axis != channel_axis) {
      return NodeSupport::Unsupported(
          OpName(node), " filter is quantized along dimension ", q.axis,
          ", XNNPACK needs dimension ", channel_axis);
    }
  }
  if (type == KILN_TYPE_INT8) {
    for (int64_t zp : q.zero_points) {
      if (zp != 0) {
        return NodeSupport::Unsupported(
            OpName(node), " int8 filter has zero point ", zp,
            "; XNNPACK needs symmetric (zero point 0) int8 filters");
      }
    }
  }
  if (bias.present() && bias.type() != KILN_TYPE_INT32) {
    return NodeSupport::Unsupported(OpName(node), " bias has type ",
                                    KilnTensorTypeName(bias.type()),
                                    "; quantized XNNPACK nodes need int32");
  }
  return NodeSupport::Supported();
}

NodeSupport CheckWeighted(const GraphNode& node, int32_t filter_index,
                          int32_t bias_index, int32_t channel_axis) {
  const Tensor filter = node.input(filter_index);
  const Tensor bias =
      bias_index < node.num_inputs() ? node.input(bias_index) : Tensor();
  KILN_SDK_RETURN_IF_UNSUPPORTED(ExpectConstant(node, filter, "filter"));
  if (bias.present()) {
    KILN_SDK_RETURN_IF_UNSUPPORTED(ExpectConstant(node, bias, "bias"));
  }
  const KilnTensorType type = DataType(node);
  if (type == KILN_TYPE_FLOAT32) {
    if (filter.type() != KILN_TYPE_FLOAT32 ||
        (bias.present() && bias.type() != KILN_TYPE_FLOAT32)) {
      return NodeSupport::Unsupported(
          OpName(node),
          " has float32 activations with non-float32 weights (hybrid or "
          "dynamic-range quantization), which this libXNNPACK does not run");
    }
    return NodeSupport::Supported();
  }
  return CheckQuantizedWeights(node, filter, bias, channel_axis);
}

NodeSupport CheckConv(const GraphNode& node, bool depthwise) {
  const Tensor input = node.input(0), filter = node.input(1);
  KILN_SDK_RETURN_IF_UNSUPPORTED(CheckData(node, input, "input"));
  KILN_SDK_RETURN_IF_UNSUPPORTED(CheckData(node, node.output(0), "output"));
  KILN_SDK_RETURN_IF_UNSUPPORTED(ExpectRank(node, input, "input", 4));
  KILN_SDK_RETURN_IF_UNSUPPORTED(ExpectRank(node, filter, "filter", 4));
  KILN_SDK_RETURN_IF_UNSUPPORTED(ClampActivation(node));
  KILN_SDK_RETURN_IF_UNSUPPORTED(CheckWeighted(node, 1, 2, depthwise ? 3 : 0));
  const int32_t channels = input.dim(3), filter_in = filter.dim(3);
  if (depthwise) {
    if (filter.dim(0) != 1) {
      return NodeSupport::Unsupported(OpName(node),
                                      " filter's first dimension is ",
                                      filter.dim(0), ", not 1");
    }
    if (channels <= 0 || filter_in % channels != 0) {
      return NodeSupport::Unsupported(
          OpName(node), " output channels ", filter_in,
          " are not a multiple of the input channels ", channels);
    }
  } else if (channels <= 0 || filter_in <= 0 || channels % filter_in != 0 ||
             filter.dim(0) % (channels / filter_in) != 0) {
    return NodeSupport::Unsupported(
        OpName(node), " input channels ", channels,
        " do not split into groups of the filter's ", filter_in, " channels");
  }
  return NodeSupport::Supported();
}

NodeSupport CheckFullyConnected(const GraphNode& node) {
  const Tensor input = node.input(0), filter = node.input(1);
  KILN_SDK_RETURN_IF_UNSUPPORTED(CheckData(node, input, "input"));
  KILN_SDK_RETURN_IF_UNSUPPORTED(CheckData(node, node.output(0), "output"));
  KILN_SDK_RETURN_IF_UNSUPPORTED(ClampActivation(node));
  if (node.OptionInt(KILN_OPTION_WEIGHTS_FORMAT, 0) != 0) {
    return NodeSupport::Unsupported(
        OpName(node), " has shuffled weights, which XNNPACK does not read");
  }
  KILN_SDK_RETURN_IF_UNSUPPORTED(ExpectRank(node, filter, "filter", 2));
  // Per-channel int8 filters along the output channels: defined as a 1x1
  // convolution (XNNPACK's subgraph FULLY_CONNECTED takes per-tensor
  // filters only).
  KILN_SDK_RETURN_IF_UNSUPPORTED(CheckWeighted(node, 1, 2, 0));
  // An input whose last dimension differs is flattened to [-1, input
  // channels] as TFLite does (DefineNode adds the reshape), unless
  // keep_num_dims asks to keep its dimensions.
  const int32_t rank = input.rank();
  if (rank > 0 && node.OptionInt(KILN_OPTION_KEEP_NUM_DIMS, 0) != 0 &&
      input.dim(rank - 1) != filter.dim(1)) {
    return NodeSupport::Unsupported(
        OpName(node),
        " keeps its input's dimensions but the last one is "
        "not the filter's ",
        filter.dim(1), " input channels");
  }
  return NodeSupport::Supported();
}

NodeSupport CheckTransposeConv(const GraphNode& node) {
  const Tensor shape = node.input(0), filter = node.input(1),
               input = node.input(2);
  KILN_SDK_RETURN_IF_UNSUPPORTED(FloatOnly(node));
  KILN_SDK_RETURN_IF_UNSUPPORTED(CheckData(node, input, "input"));
  KILN_SDK_RETURN_IF_UNSUPPORTED(ExpectConstant(node, shape, "output shape"));
  KILN_SDK_RETURN_IF_UNSUPPORTED(ExpectRank(node, input, "input", 4));
  KILN_SDK_RETURN_IF_UNSUPPORTED(ExpectRank(node, filter, "filter", 4));
  KILN_SDK_RETURN_IF_UNSUPPORTED(ClampActivation(node));
  KILN_SDK_RETURN_IF_UNSUPPORTED(CheckWeighted(node, 1, 3, -1));
  if (input.dim(3) != filter.dim(3)) {
    return NodeSupport::Unsupported(OpName(node),
                                    " filter's input channels differ from "
                                    "the input's");
  }
  return NodeSupport::Supported();
}

NodeSupport CheckPool(const GraphNode& node, bool average) {
  const Tensor input = node.input(0);
  KILN_SDK_RETURN_IF_UNSUPPORTED(CheckData(node, input, "input"));
  KILN_SDK_RETURN_IF_UNSUPPORTED(CheckData(node, node.output(0), "output"));
  KILN_SDK_RETURN_IF_UNSUPPORTED(ExpectRank(node, input, "input", 4));
  KILN_SDK_RETURN_IF_UNSUPPORTED(ClampActivation(node));
  if (average) KILN_SDK_RETURN_IF_UNSUPPORTED(FloatOnly(node));
  const int64_t fh = node.OptionInt(KILN_OPTION_FILTER_H, 0),
                fw = node.OptionInt(KILN_OPTION_FILTER_W, 0);
  if (fh * fw <= 1) {
    return NodeSupport::Unsupported(
        OpName(node), " has a ", fh, "x", fw,
        " window, which XNNPACK's pooling does not accept");
  }
  if (!average) KILN_SDK_RETURN_IF_UNSUPPORTED(SameQuantization(node));
  return NodeSupport::Supported();
}

NodeSupport CheckBinary(const GraphNode& node, bool quantized_ok) {
  if (!quantized_ok) KILN_SDK_RETURN_IF_UNSUPPORTED(FloatOnly(node));
  KILN_SDK_RETURN_IF_UNSUPPORTED(CheckData(node, node.input(0), "input 0"));
  KILN_SDK_RETURN_IF_UNSUPPORTED(CheckData(node, node.input(1), "input 1"));
  KILN_SDK_RETURN_IF_UNSUPPORTED(CheckData(node, node.output(0), "output"));
  KILN_SDK_RETURN_IF_UNSUPPORTED(ClampActivation(node));
  for (int32_t i = 0; i < 2; ++i) {
    const int32_t rank = node.input(i).rank();
    if (rank < 0 || rank > XNN_MAX_TENSOR_DIMS) {
      return NodeSupport::Unsupported(OpName(node), " input ", i, " has rank ",
                                      rank, "; XNNPACK broadcasts up to rank ",
                                      XNN_MAX_TENSOR_DIMS);
    }
  }
  if (IsQuantized8(DataType(node))) {
    const float a = ReadQuant(node, node.input(0)).scales[0],
                b = ReadQuant(node, node.input(1)).scales[0],
                out = ReadQuant(node, node.output(0)).scales[0];
    // XNNPACK's quantized add/subtract and multiply accept these scale
    // ratios only.
    const bool mul = node.builtin_code() == KILN_OP_MUL;
    const float lo = mul ? 0x1.0p-16f : 0x1.0p-10f;
    const bool ok = mul ? (a * b / out >= lo && a * b / out < 256.0f)
                        : (a / out >= lo && a / out < 256.0f && b / out >= lo &&
                           b / out < 256.0f);
    if (!ok) {
      return NodeSupport::Unsupported(
          OpName(node),
          " input/output scale ratio is outside the range XNNPACK's "
          "quantized kernels accept");
    }
  }
  return NodeSupport::Supported();
}

NodeSupport CheckUnaryFloat(const GraphNode& node) {
  KILN_SDK_RETURN_IF_UNSUPPORTED(FloatOnly(node));
  KILN_SDK_RETURN_IF_UNSUPPORTED(CheckData(node, node.input(0), "input"));
  return NodeSupport::Supported();
}

// The axes a MEAN reduces when they are one run of adjacent dimensions
// [*first, *last] of its input (any order, repeats and negative axes as
// TFLite allows); false otherwise.
bool ReducedRange(const GraphNode& node, int32_t* first, int32_t* last) {
  const int32_t rank = node.input(0).rank();
  std::vector<int64_t> axes;
  if (rank < 1 || !ReadConstantInts(node.input(1), &axes) || axes.empty()) {
    return false;
  }
  std::set<int64_t> set;
  for (int64_t a : axes) {
    if (a < -rank || a >= rank) return false;
    set.insert(a < 0 ? a + rank : a);
  }
  *first = static_cast<int32_t>(*set.begin());
  *last = static_cast<int32_t>(*set.rbegin());
  return *last - *first + 1 == static_cast<int32_t>(set.size());
}

NodeSupport CheckMean(const GraphNode& node) {
  const Tensor input = node.input(0);
  KILN_SDK_RETURN_IF_UNSUPPORTED(CheckData(node, input, "input"));
  KILN_SDK_RETURN_IF_UNSUPPORTED(CheckData(node, node.output(0), "output"));
  if (input.rank() > XNN_MAX_TENSOR_DIMS) {
    return NodeSupport::Unsupported(OpName(node), " input has rank ",
                                    input.rank(), "; XNNPACK takes up to ",
                                    XNN_MAX_TENSOR_DIMS);
  }
  int32_t first = 0, last = 0;
  if (!ReducedRange(node, &first, &last)) {
    return NodeSupport::Unsupported(
        OpName(node),
        " axes are not a constant run of adjacent dimensions; XNNPACK runs "
        "MEAN only as global average pooling (over height and width, or "
        "adjacent dimensions reshaped to them)");
  }
  return NodeSupport::Supported();
}

NodeSupport CheckPad(const GraphNode& node) {
  const Tensor input = node.input(0);
  KILN_SDK_RETURN_IF_UNSUPPORTED(CheckData(node, input, "input"));
  KILN_SDK_RETURN_IF_UNSUPPORTED(CheckData(node, node.output(0), "output"));
  KILN_SDK_RETURN_IF_UNSUPPORTED(SameQuantization(node));
  std::vector<int64_t> pads;
  if (!ReadConstantInts(node.input(1), &pads) ||
      static_cast<int64_t>(pads.size()) != 2 * input.rank()) {
    return NodeSupport::Unsupported(
        OpName(node), " paddings are not a constant [rank, 2] tensor");
  }
  for (int64_t p : pads) {
    if (p < 0) {
      return NodeSupport::Unsupported(OpName(node), " has negative padding");
    }
  }
  if (node.num_inputs() > 2 && node.input(2).present()) {
    KILN_SDK_RETURN_IF_UNSUPPORTED(FloatOnly(node));
    KILN_SDK_RETURN_IF_UNSUPPORTED(
        ExpectConstant(node, node.input(2), "constant value"));
  }
  return NodeSupport::Supported();
}

NodeSupport CheckResizeBilinear(const GraphNode& node) {
  // 8-bit too (XNNPACK's s8/u8 bilinear kernels, 11-bit fractions where
  // TFLite's integer kernel uses 10: within one quantum, as LiteRT's
  // XNNPACK path), with one quantization in and out as TFLite requires.
  KILN_SDK_RETURN_IF_UNSUPPORTED(CheckData(node, node.input(0), "input"));
  KILN_SDK_RETURN_IF_UNSUPPORTED(CheckData(node, node.output(0), "output"));
  KILN_SDK_RETURN_IF_UNSUPPORTED(SameQuantization(node));
  KILN_SDK_RETURN_IF_UNSUPPORTED(ExpectRank(node, node.input(0), "input", 4));
  std::vector<int64_t> size;
  if (!ReadConstantInts(node.input(1), &size) || size.size() != 2) {
    return NodeSupport::Unsupported(OpName(node),
                                    " size is not a constant of 2 values");
  }
  if (node.OptionInt(KILN_OPTION_ALIGN_CORNERS, 0) != 0 &&
      node.OptionInt(KILN_OPTION_HALF_PIXEL_CENTERS, 0) != 0) {
    return NodeSupport::Unsupported(
        OpName(node), " sets both align_corners and half_pixel_centers");
  }
  return NodeSupport::Supported();
}

NodeSupport CheckPrelu(const GraphNode& node) {
  KILN_SDK_RETURN_IF_UNSUPPORTED(CheckUnaryFloat(node));
  const Tensor input = node.input(0), alpha = node.input(1);
  KILN_SDK_RETURN_IF_UNSUPPORTED(ExpectConstant(node, alpha, "alpha"));
  const int32_t rank = input.rank();
  if (rank < 1 || alpha.type() != KILN_TYPE_FLOAT32 ||
      alpha.num_elements() != input.dim(rank - 1) ||
      (alpha.rank() > 0 &&
       alpha.dim(alpha.rank() - 1) != input.dim(rank - 1))) {
    return NodeSupport::Unsupported(
        OpName(node),
        " alpha is not one float32 slope per channel (last dimension), the "
        "only form XNNPACK's PReLU takes");
  }
  return NodeSupport::Supported();
}

NodeSupport CheckReshape(const GraphNode& node) {
  KILN_SDK_RETURN_IF_UNSUPPORTED(CheckData(node, node.input(0), "input"));
  const Tensor out = node.output(0);
  if (out.rank() < 0 || out.rank() > XNN_MAX_TENSOR_DIMS) {
    return NodeSupport::Unsupported(OpName(node), " output rank ", out.rank(),
                                    " is beyond XNNPACK's ",
                                    XNN_MAX_TENSOR_DIMS);
  }
  if (node.num_inputs() > 1 && node.input(1).present() &&
      !node.input(1).is_constant()) {
    return NodeSupport::Unsupported(
        OpName(node),
        " new shape is computed at run time; XNNPACK reshapes to a shape "
        "fixed when the runtime is built");
  }
  for (int32_t i = 0; i < out.rank(); ++i) {
    if (out.dim(i) < 0) {
      return NodeSupport::Unsupported(OpName(node),
                                      " output shape is not static");
    }
  }
  return SameQuantization(node);
}

NodeSupport CheckSoftmax(const GraphNode& node) {
  KILN_SDK_RETURN_IF_UNSUPPORTED(CheckUnaryFloat(node));
  const float beta = node.OptionFloat(KILN_OPTION_BETA, 1.0f);
  if (beta != 1.0f) {
    return NodeSupport::Unsupported(OpName(node), " beta is ", beta,
                                    "; XNNPACK's softmax has beta 1");
  }
  return NodeSupport::Supported();
}

// The op-specific checks of a node whose op and version are supported.
NodeSupport CheckOp(const GraphNode& node) {
  switch (node.builtin_code()) {
    case KILN_OP_CONV_2D:
      return CheckConv(node, /*depthwise=*/false);
    case KILN_OP_DEPTHWISE_CONV_2D:
      return CheckConv(node, /*depthwise=*/true);
    case KILN_OP_FULLY_CONNECTED:
      return CheckFullyConnected(node);
    case KILN_OP_TRANSPOSE_CONV:
      return CheckTransposeConv(node);
    case KILN_OP_MAX_POOL_2D:
      return CheckPool(node, /*average=*/false);
    case KILN_OP_AVERAGE_POOL_2D:
      return CheckPool(node, /*average=*/true);
    case KILN_OP_ADD:
    case KILN_OP_SUB:
    case KILN_OP_MUL:
      return CheckBinary(node, /*quantized_ok=*/true);
    case KILN_OP_DIV:
    case KILN_OP_MAXIMUM:
    case KILN_OP_MINIMUM:
    case KILN_OP_SQUARED_DIFFERENCE:
      return CheckBinary(node, /*quantized_ok=*/false);
    case KILN_OP_MEAN:
      return CheckMean(node);
    case KILN_OP_PAD:
    case KILN_OP_PADV2:
      return CheckPad(node);
    case KILN_OP_RESIZE_BILINEAR:
      return CheckResizeBilinear(node);
    case KILN_OP_PRELU:
      return CheckPrelu(node);
    case KILN_OP_RESHAPE:
      return CheckReshape(node);
    case KILN_OP_SOFTMAX:
      return CheckSoftmax(node);
    case KILN_OP_DEPTH_TO_SPACE:
      KILN_SDK_RETURN_IF_UNSUPPORTED(CheckUnaryFloat(node));
      return ExpectRank(node, node.input(0), "input", 4);
    default:
      return CheckUnaryFloat(node);
  }
}

}  // namespace

const std::vector<OpSupport>& SupportedOps() {
  static const std::vector<OpSupport> ops = {
      {KILN_OP_ABS, 1, 1, kF32},
      {KILN_OP_ADD, 1, 2, kF32Q8},
      {KILN_OP_AVERAGE_POOL_2D, 1, 1, kF32},
      {KILN_OP_CEIL, 1, 1, kF32},
      {KILN_OP_CONV_2D, 1, 5, kF32Q8Bias},
      {KILN_OP_DEPTH_TO_SPACE, 1, 1, kF32},
      {KILN_OP_DEPTHWISE_CONV_2D, 1, 3, kF32Q8Bias},
      {KILN_OP_DIV, 1, 1, kF32},
      {KILN_OP_ELU, 1, 1, kF32},
      {KILN_OP_FLOOR, 1, 1, kF32},
      {KILN_OP_FULLY_CONNECTED, 1, 9, kF32Q8Bias},
      {KILN_OP_HARD_SWISH, 1, 1, kF32},
      {KILN_OP_LEAKY_RELU, 1, 1, kF32},
      {KILN_OP_LOGISTIC, 1, 1, kF32},
      {KILN_OP_MAX_POOL_2D, 1, 2, kF32Q8},
      {KILN_OP_MAXIMUM, 1, 1, kF32},
      {KILN_OP_MEAN, 1, 2, kF32Q8Index},
      {KILN_OP_MINIMUM, 1, 1, kF32},
      {KILN_OP_MUL, 1, 2, kF32Q8},
      {KILN_OP_NEG, 1, 1, kF32},
      {KILN_OP_PAD, 1, 2, kF32Q8Index},
      {KILN_OP_PADV2, 1, 1, kF32Index},
      {KILN_OP_PRELU, 1, 1, kF32},
      {KILN_OP_RELU, 1, 1, kF32},
      {KILN_OP_RELU6, 1, 1, kF32},
      {KILN_OP_RELU_N1_TO_1, 1, 1, kF32},
      {KILN_OP_RESHAPE, 1, 1, kF32Q8Index},
      {KILN_OP_RESIZE_BILINEAR, 1, 3, kF32Q8Index},
      {KILN_OP_ROUND, 1, 1, kF32},
      {KILN_OP_SOFTMAX, 1, 2, kF32},
      {KILN_OP_SQRT, 1, 1, kF32},
      {KILN_OP_SQUARE, 1, 1, kF32},
      {KILN_OP_SQUARED_DIFFERENCE, 1, 2, kF32},
      {KILN_OP_SUB, 1, 2, kF32Q8},
      {KILN_OP_TRANSPOSE_CONV, 1, 3, kF32Index},
  };
  return ops;
}

NodeSupport Supports(const GraphNode& node) {
  const int32_t code = node.builtin_code();
  const OpSupport* row = nullptr;
  for (const OpSupport& op : SupportedOps()) {
    if (op.builtin_code == code) row = &op;
  }
  if (row == nullptr) {
    return NodeSupport::Unsupported(
        OpName(node),
        " has no node in the subgraph API of the libXNNPACK this plugin was "
        "built with");
  }
  if (node.op_version() < row->min_version ||
      node.op_version() > row->max_version) {
    return NodeSupport::Unsupported(
        OpName(node), " version ", node.op_version(),
        " is outside the versions ", row->min_version, "..", row->max_version,
        " the xnnpack delegate implements");
  }
  if (node.num_outputs() != 1 || !node.output(0).present()) {
    return NodeSupport::Unsupported(OpName(node), " must have one output");
  }
  return CheckOp(node);
}

// ---- Subgraph definition ---------------------------------------------------

KilnStatus SubgraphBuilder::Check(const NodeView& node, xnn_status status,
                                  const char* what) {
  if (status == xnn_status_success) return KILN_STATUS_OK;
  return node.Fail(KILN_STATUS_INTERNAL, "XNNPACK ", what, " failed for ",
                   OpName(node), " (xnn_status ", static_cast<int>(status),
                   "); the partition runs on kernel plugins instead");
}

KilnStatus SubgraphBuilder::DefineValue(const NodeView& node, const Tensor& t,
                                        const std::vector<size_t>& dims,
                                        const void* data, uint32_t external_id,
                                        uint32_t flags, uint32_t* id) {
  xnn_status s = xnn_status_success;
  switch (t.type()) {
    case KILN_TYPE_FLOAT32:
      s = xnn_define_tensor_value(subgraph_, xnn_datatype_fp32, dims.size(),
                                  dims.data(), data, external_id, flags, id);
      break;
    case KILN_TYPE_INT8:
    case KILN_TYPE_UINT8:
    case KILN_TYPE_INT32: {
      const Quant q = ReadQuant(node, t);
      if (q.channels == 0) {
        return node.Fail(KILN_STATUS_INTERNAL, "tensor '", t.name(), "' of ",
                         OpName(node), " is not quantized");
      }
      if (q.channels > 1) {
        scales_.push_back(q.scales);
        s = xnn_define_channelwise_quantized_tensor_value(
            subgraph_,
            t.type() == KILN_TYPE_INT32 ? xnn_datatype_qcint32
                                        : xnn_datatype_qcint8,
            scales_.back().data(), dims.size(), static_cast<size_t>(q.axis),
            dims.data(), data, external_id, flags, id);
      } else {
        const xnn_datatype type =
            t.type() == KILN_TYPE_INT8    ? xnn_datatype_qint8
            : t.type() == KILN_TYPE_UINT8 ? xnn_datatype_quint8
                                          : xnn_datatype_qint32;
        s = xnn_define_quantized_tensor_value(
            subgraph_, type, static_cast<int32_t>(q.zero_points[0]),
            q.scales[0], dims.size(), dims.data(), data, external_id, flags,
            id);
      }
      break;
    }
    default:
      return node.Fail(KILN_STATUS_INTERNAL, "tensor '", t.name(), "' of ",
                       OpName(node), " has type ", KilnTensorTypeName(t.type()),
                       ", which the xnnpack delegate does not define");
  }
  return Check(node, s, "value definition");
}

KilnStatus SubgraphBuilder::Value(const NodeView& node, int32_t index,
                                  uint32_t* id, bool weights,
                                  const std::vector<size_t>* dims_as) {
  *id = XNN_INVALID_VALUE_ID;
  if (index < 0) return KILN_STATUS_OK;  // omitted optional input
  auto it = values_.find(index);
  if (it != values_.end() && dims_as == nullptr) {
    if (lent_[index] && !weights) {
      return node.Fail(KILN_STATUS_UNIMPLEMENTED, "constant tensor '",
                       node.tensor(index).name(),
                       "' is both weights and an operand in one partition");
    }
    *id = it->second;
    return KILN_STATUS_OK;
  }
  const Tensor t = node.tensor(index);
  const std::vector<size_t> dims =
      dims_as != nullptr && weights && t.is_constant() ? *dims_as : Dims(t);
  const void* data = nullptr;
  uint32_t external_id = XNN_INVALID_VALUE_ID, flags = 0;
  if (t.is_constant()) {
    const uint8_t* bytes = t.data<uint8_t>();
    if (bytes == nullptr && t.byte_size() > 0) {
      return node.Fail(KILN_STATUS_INTERNAL, "constant tensor '", t.name(),
                       "' has no data at prepare");
    }
    if (weights) {
      // Packed by xnn_create_runtime_v2 within this callback.
      data = bytes;
      lent_[index] = true;
    } else {
      // A copy: XNNPACK reads other static values during every invoke, and
      // the host's pointer is valid only during this callback. XNNPACK's
      // vector kernels may read 16 bytes past the end.
      static_data_->emplace_back(bytes, bytes + t.byte_size());
      static_data_->back().resize(static_data_->back().size() + 16);
      data = static_data_->back().data();
    }
  } else if (auto e = external_.find(index); e != external_.end()) {
    external_id = e->second.id;
    flags = e->second.flags;
  }
  KILN_SDK_RETURN_IF_ERROR(
      DefineValue(node, t, dims, data, external_id, flags, id));
  if (dims_as == nullptr) values_[index] = *id;
  return KILN_STATUS_OK;
}

KilnStatus SubgraphBuilder::Bias(const GraphNode& node, int32_t bias_index,
                                 size_t channels, uint32_t* id) {
  if (!IsQuantized8(DataType(node)) ||
      (bias_index < node.num_inputs() && node.input(bias_index).present())) {
    return Input(node, bias_index, id, /*weights=*/true);
  }
  const Quant in = ReadQuant(node, node.input(0)),
              filter = ReadQuant(node, node.input(1));
  std::vector<float> scales;
  for (float f : filter.scales) scales.push_back(in.scales[0] * f);
  // Zeros: read while XNNPACK packs the weights, kept with the constants.
  static_data_->emplace_back(channels * sizeof(int32_t) + 16, 0);
  const void* zeros = static_data_->back().data();
  const size_t dims[1] = {channels};
  xnn_status s = xnn_status_success;
  if (scales.size() > 1) {
    scales_.push_back(scales);
    s = xnn_define_channelwise_quantized_tensor_value(
        subgraph_, xnn_datatype_qcint32, scales_.back().data(), 1, 0, dims,
        zeros, XNN_INVALID_VALUE_ID, 0, id);
  } else {
    s = xnn_define_quantized_tensor_value(subgraph_, xnn_datatype_qint32, 0,
                                          scales.at(0), 1, dims, zeros,
                                          XNN_INVALID_VALUE_ID, 0, id);
  }
  return Check(node, s, "zero bias definition");
}

KilnStatus SubgraphBuilder::InternalValue(const NodeView& node, int32_t like,
                                          const std::vector<size_t>& dims,
                                          uint32_t* id) {
  return DefineValue(node, node.tensor(like), dims, nullptr,
                     XNN_INVALID_VALUE_ID, 0, id);
}

KilnStatus SubgraphBuilder::Input(const GraphNode& node, int32_t i,
                                  uint32_t* id, bool weights) {
  return Value(node, i < node.num_inputs() ? node.input_index(i) : -1, id,
               weights);
}

KilnStatus SubgraphBuilder::DefineConv(const GraphNode& node, const NodeOut& o,
                                       xnn_status* s) {
  uint32_t a = 0, b = 0, c = 0;
  KILN_SDK_RETURN_IF_ERROR(Input(node, 0, &a));
  KILN_SDK_RETURN_IF_ERROR(Input(node, 1, &b, /*weights=*/true));
  const Tensor input = node.input(0), filter = node.input(1);
  const bool depthwise = node.builtin_code() == KILN_OP_DEPTHWISE_CONV_2D;
  KILN_SDK_RETURN_IF_ERROR(
      Bias(node, 2, static_cast<size_t>(filter.dim(depthwise ? 3 : 0)), &c));
  const int64_t padding =
      node.OptionInt(KILN_OPTION_PADDING, KILN_PADDING_SAME);
  const int32_t
      sh = static_cast<int32_t>(node.OptionInt(KILN_OPTION_STRIDE_H, 1)),
      sw = static_cast<int32_t>(node.OptionInt(KILN_OPTION_STRIDE_W, 1)),
      dh = static_cast<int32_t>(node.OptionInt(KILN_OPTION_DILATION_H, 1)),
      dw = static_cast<int32_t>(node.OptionInt(KILN_OPTION_DILATION_W, 1));
  const int32_t kh = filter.dim(1), kw = filter.dim(2);
  uint32_t top = 0, bottom = 0, left = 0, right = 0;
  Padding(padding, input.dim(1), sh, dh, kh, &top, &bottom);
  Padding(padding, input.dim(2), sw, dw, kw, &left, &right);
  const size_t channels = static_cast<size_t>(input.dim(3));
  if (!depthwise) {
    const size_t group_in = static_cast<size_t>(filter.dim(3));
    const size_t groups = channels / group_in;
    *s = xnn_define_convolution_2d(subgraph_, top, right, bottom, left, kh, kw,
                                   sh, sw, dh, dw,
                                   static_cast<uint32_t>(groups), group_in,
                                   static_cast<size_t>(filter.dim(0)) / groups,
                                   o.lo, o.hi, a, b, c, o.out, 0);
  } else {
    const uint32_t multiplier =
        static_cast<uint32_t>(filter.dim(3) / input.dim(3));
    *s = xnn_define_depthwise_convolution_2d(
        subgraph_, top, right, bottom, left, kh, kw, sh, sw, dh, dw, multiplier,
        channels, o.lo, o.hi, a, b, c, o.out, 0);
  }
  return KILN_STATUS_OK;
}

KilnStatus SubgraphBuilder::DefineFullyConnected(const GraphNode& node,
                                                 const NodeOut& o,
                                                 xnn_status* s) {
  uint32_t a = 0, b = 0, c = 0;
  const Tensor input = node.input(0);
  const int64_t channels = node.input(1).dim(1);
  KILN_SDK_RETURN_IF_ERROR(Input(node, 0, &a));
  // TFLite flattens the input to [elements / channels, channels].
  const int64_t n = input.num_elements();
  if (channels <= 0 || n % channels != 0) {
    return node.Fail(KILN_STATUS_INVALID_ARGUMENT, OpName(node), " input of ",
                     n, " elements does not split into rows of ", channels,
                     " input channels");
  }
  if (ReadQuant(node, node.input(1)).channels > 1) {
    return DefineChannelwiseFullyConnected(
        node, o, a, static_cast<size_t>(n / channels), s);
  }
  if (input.rank() < 1 || input.dim(input.rank() - 1) != channels) {
    const std::vector<size_t> rows = {static_cast<size_t>(n / channels),
                                      static_cast<size_t>(channels)};
    uint32_t flat = 0;
    KILN_SDK_RETURN_IF_ERROR(
        InternalValue(node, node.input_index(0), rows, &flat));
    KILN_SDK_RETURN_IF_ERROR(
        Check(node,
              xnn_define_static_reshape(subgraph_, rows.size(), rows.data(), a,
                                        flat, 0),
              "node definition"));
    a = flat;
  }
  const Tensor filter = node.input(1);
  KILN_SDK_RETURN_IF_ERROR(Input(node, 1, &b, /*weights=*/true));
  KILN_SDK_RETURN_IF_ERROR(
      Bias(node, 2, static_cast<size_t>(filter.dim(0)), &c));
  *s = xnn_define_fully_connected(subgraph_, o.lo, o.hi, a, b, c, o.out, 0);
  return KILN_STATUS_OK;
}

// [rows, K] x [N, K]^T is the 1x1 convolution of [rows, 1, 1, K] with the
// filter as [N, 1, 1, K] (the same bytes), with the same int32 accumulation
// and per-channel requantization; the output [rows, 1, 1, N] has the
// node's output's elements.
KilnStatus SubgraphBuilder::DefineChannelwiseFullyConnected(
    const GraphNode& node, const NodeOut& o, uint32_t input, size_t rows,
    xnn_status* s) {
  const Tensor filter = node.input(1);
  const size_t n = static_cast<size_t>(filter.dim(0)),
               k = static_cast<size_t>(filter.dim(1));
  const std::vector<size_t> in_dims = {rows, 1, 1, k},
                            filter_dims = {n, 1, 1, k},
                            out_dims = {rows, 1, 1, n};
  uint32_t in4 = 0, b = 0, c = 0, out4 = 0;
  KILN_SDK_RETURN_IF_ERROR(
      InternalValue(node, node.input_index(0), in_dims, &in4));
  KILN_SDK_RETURN_IF_ERROR(Check(
      node,
      xnn_define_static_reshape(subgraph_, 4, in_dims.data(), input, in4, 0),
      "node definition"));
  KILN_SDK_RETURN_IF_ERROR(
      Value(node, node.input_index(1), &b, /*weights=*/true, &filter_dims));
  KILN_SDK_RETURN_IF_ERROR(Bias(node, 2, n, &c));
  KILN_SDK_RETURN_IF_ERROR(
      InternalValue(node, node.output_index(0), out_dims, &out4));
  KILN_SDK_RETURN_IF_ERROR(
      Check(node,
            xnn_define_convolution_2d(subgraph_, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1,
                                      1, k, n, o.lo, o.hi, in4, b, c, out4, 0),
            "node definition"));
  const std::vector<size_t> dims = Dims(node.output(0));
  *s = xnn_define_static_reshape(subgraph_, dims.size(), dims.data(), out4,
                                 o.out, 0);
  return KILN_STATUS_OK;
}

KilnStatus SubgraphBuilder::DefineTransposeConv(const GraphNode& node,
                                                const NodeOut& o,
                                                xnn_status* s) {
  uint32_t a = 0, b = 0, c = 0;
  KILN_SDK_RETURN_IF_ERROR(Input(node, 1, &b, /*weights=*/true));
  KILN_SDK_RETURN_IF_ERROR(Input(node, 2, &a));
  KILN_SDK_RETURN_IF_ERROR(Input(node, 3, &c, /*weights=*/true));
  const Tensor input = node.input(2), filter = node.input(1),
               output = node.output(0);
  const int64_t padding =
      node.OptionInt(KILN_OPTION_PADDING, KILN_PADDING_SAME);
  const int32_t st[2] = {
      static_cast<int32_t>(node.OptionInt(KILN_OPTION_STRIDE_H, 1)),
      static_cast<int32_t>(node.OptionInt(KILN_OPTION_STRIDE_W, 1))};
  uint32_t before[2], after[2], adjust[2];
  for (int axis = 0; axis < 2; ++axis) {
    const int32_t k = filter.dim(1 + axis), in_size = input.dim(1 + axis),
                  out_size = output.dim(1 + axis);
    uint32_t unused = 0;
    // TFLite pads a transposed convolution as the convolution from its
    // output back to its input.
    Padding(padding, out_size, st[axis], 1, k, &before[axis], &unused);
    const int64_t full = static_cast<int64_t>(in_size - 1) * st[axis] + k;
    const int64_t rest = full - out_size - before[axis];
    after[axis] = rest > 0 ? static_cast<uint32_t>(rest) : 0;
    adjust[axis] = rest < 0 ? static_cast<uint32_t>(-rest) : 0;
    if (adjust[axis] >= static_cast<uint32_t>(st[axis])) {
      return node.Fail(KILN_STATUS_UNIMPLEMENTED, OpName(node), " output size ",
                       out_size, " needs an adjustment of ", adjust[axis],
                       ", not below the stride XNNPACK requires");
    }
  }
  *s = xnn_define_deconvolution_2d(
      subgraph_, before[0], after[1], after[0], before[1], adjust[0], adjust[1],
      filter.dim(1), filter.dim(2), st[0], st[1], 1, 1, 1,
      static_cast<size_t>(filter.dim(3)), static_cast<size_t>(filter.dim(0)),
      o.lo, o.hi, a, b, c, o.out, 0);
  return KILN_STATUS_OK;
}

KilnStatus SubgraphBuilder::DefinePool(const GraphNode& node, const NodeOut& o,
                                       xnn_status* s) {
  uint32_t a = 0;
  KILN_SDK_RETURN_IF_ERROR(Input(node, 0, &a));
  const Tensor input = node.input(0);
  const int64_t padding =
      node.OptionInt(KILN_OPTION_PADDING, KILN_PADDING_SAME);
  const int32_t
      sh = static_cast<int32_t>(node.OptionInt(KILN_OPTION_STRIDE_H, 1)),
      sw = static_cast<int32_t>(node.OptionInt(KILN_OPTION_STRIDE_W, 1)),
      fh = static_cast<int32_t>(node.OptionInt(KILN_OPTION_FILTER_H, 1)),
      fw = static_cast<int32_t>(node.OptionInt(KILN_OPTION_FILTER_W, 1));
  uint32_t top = 0, bottom = 0, left = 0, right = 0;
  Padding(padding, input.dim(1), sh, 1, fh, &top, &bottom);
  Padding(padding, input.dim(2), sw, 1, fw, &left, &right);
  *s =
      node.builtin_code() == KILN_OP_MAX_POOL_2D
          ? xnn_define_max_pooling_2d(subgraph_, top, right, bottom, left, fh,
                                      fw, sh, sw, 1, 1, o.lo, o.hi, a, o.out, 0)
          : xnn_define_average_pooling_2d(subgraph_, top, right, bottom, left,
                                          fh, fw, sh, sw, o.lo, o.hi, a, o.out,
                                          0);
  return KILN_STATUS_OK;
}

// The binary arithmetic ops and PRELU: two operand inputs.
KilnStatus SubgraphBuilder::DefineBinary(const GraphNode& node,
                                         const NodeOut& o, xnn_status* s) {
  uint32_t a = 0, b = 0;
  KILN_SDK_RETURN_IF_ERROR(Input(node, 0, &a));
  KILN_SDK_RETURN_IF_ERROR(Input(node, 1, &b));
  switch (node.builtin_code()) {
    case KILN_OP_ADD:
      *s = xnn_define_add2(subgraph_, o.lo, o.hi, a, b, o.out, 0);
      break;
    case KILN_OP_SUB:
      *s = xnn_define_subtract(subgraph_, o.lo, o.hi, a, b, o.out, 0);
      break;
    case KILN_OP_MUL:
      *s = xnn_define_multiply2(subgraph_, o.lo, o.hi, a, b, o.out, 0);
      break;
    case KILN_OP_DIV:
      *s = xnn_define_divide(subgraph_, o.lo, o.hi, a, b, o.out, 0);
      break;
    case KILN_OP_MAXIMUM:
      *s = xnn_define_maximum2(subgraph_, a, b, o.out, 0);
      break;
    case KILN_OP_MINIMUM:
      *s = xnn_define_minimum2(subgraph_, a, b, o.out, 0);
      break;
    case KILN_OP_PRELU:
      *s = xnn_define_prelu(subgraph_, a, b, o.out, 0);
      break;
    default:
      *s = xnn_define_squared_difference(subgraph_, a, b, o.out, 0);
      break;
  }
  return KILN_STATUS_OK;
}

KilnStatus SubgraphBuilder::DefineMean(const GraphNode& node, const NodeOut& o,
                                       xnn_status* s) {
  uint32_t a = 0;
  KILN_SDK_RETURN_IF_ERROR(Input(node, 0, &a));
  const Tensor input = node.input(0);
  int32_t first = 0, last = 0;
  ReducedRange(node, &first, &last);
  const bool spatial = input.rank() == 4 && first == 1 && last == 2;
  if (spatial && node.OptionInt(KILN_OPTION_KEEP_DIMS, 0) != 0) {
    *s = xnn_define_global_average_pooling_2d(
        subgraph_, -std::numeric_limits<float>::infinity(),
        std::numeric_limits<float>::infinity(), a, o.out, 0);
    return KILN_STATUS_OK;
  }
  // [before, reduced, after] elements: the input as [before, reduced, 1,
  // after] (a 4-D input over height and width already is), pooled to
  // [before, 1, 1, after], then shaped as the output.
  size_t before = 1, reduced = 1, after = 1;
  for (int32_t i = 0; i < input.rank(); ++i) {
    const size_t d = static_cast<size_t>(input.dim(i));
    (i < first ? before : i <= last ? reduced : after) *= d;
  }
  if (!spatial) {
    const std::vector<size_t> as4 = {before, reduced, 1, after};
    uint32_t shaped = 0;
    KILN_SDK_RETURN_IF_ERROR(
        InternalValue(node, node.input_index(0), as4, &shaped));
    KILN_SDK_RETURN_IF_ERROR(Check(
        node, xnn_define_static_reshape(subgraph_, 4, as4.data(), a, shaped, 0),
        "node definition"));
    a = shaped;
  }
  uint32_t pooled = 0;
  const std::vector<size_t> dims = {before, 1, 1, after};
  KILN_SDK_RETURN_IF_ERROR(
      InternalValue(node, node.output_index(0), dims, &pooled));
  KILN_SDK_RETURN_IF_ERROR(
      Check(node,
            xnn_define_global_average_pooling_2d(
                subgraph_, -std::numeric_limits<float>::infinity(),
                std::numeric_limits<float>::infinity(), a, pooled, 0),
            "node definition"));
  const std::vector<size_t> out_dims = Dims(node.output(0));
  *s = xnn_define_static_reshape(subgraph_, out_dims.size(), out_dims.data(),
                                 pooled, o.out, 0);
  return KILN_STATUS_OK;
}

KilnStatus SubgraphBuilder::DefinePad(const GraphNode& node, const NodeOut& o,
                                      xnn_status* s) {
  uint32_t a = 0;
  KILN_SDK_RETURN_IF_ERROR(Input(node, 0, &a));
  std::vector<int64_t> pads;
  ReadConstantInts(node.input(1), &pads);
  std::vector<size_t> pre, post;
  for (size_t i = 0; i + 1 < pads.size(); i += 2) {
    pre.push_back(static_cast<size_t>(pads[i]));
    post.push_back(static_cast<size_t>(pads[i + 1]));
  }
  float value = 0;
  if (node.num_inputs() > 2 && node.input(2).present()) {
    value = *node.input(2).data<float>();
  }
  *s = xnn_define_static_constant_pad(subgraph_, pre.data(), post.data(), value,
                                      a, o.out, 0);
  return KILN_STATUS_OK;
}

KilnStatus SubgraphBuilder::DefineResizeBilinear(const GraphNode& node,
                                                 const NodeOut& o,
                                                 xnn_status* s) {
  uint32_t a = 0;
  KILN_SDK_RETURN_IF_ERROR(Input(node, 0, &a));
  const Tensor output = node.output(0);
  uint32_t flags = 0;
  if (node.OptionInt(KILN_OPTION_ALIGN_CORNERS, 0) != 0) {
    flags = XNN_FLAG_ALIGN_CORNERS;
  } else if (node.OptionInt(KILN_OPTION_HALF_PIXEL_CENTERS, 0) == 0) {
    flags = XNN_FLAG_TENSORFLOW_LEGACY_MODE;
  }
  *s = xnn_define_static_resize_bilinear_2d(
      subgraph_, static_cast<size_t>(output.dim(1)),
      static_cast<size_t>(output.dim(2)), a, o.out, flags);
  return KILN_STATUS_OK;
}

// The ops with one operand input: elementwise, softmax, reshape and
// depth-to-space.
KilnStatus SubgraphBuilder::DefineUnary(const GraphNode& node, const NodeOut& o,
                                        xnn_status* s) {
  uint32_t a = 0;
  KILN_SDK_RETURN_IF_ERROR(Input(node, 0, &a));
  switch (node.builtin_code()) {
    case KILN_OP_RESHAPE: {
      const std::vector<size_t> dims = Dims(node.output(0));
      *s = xnn_define_static_reshape(subgraph_, dims.size(), dims.data(), a,
                                     o.out, 0);
      break;
    }
    case KILN_OP_SOFTMAX:
      *s = xnn_define_softmax(subgraph_, a, o.out, 0);
      break;
    case KILN_OP_DEPTH_TO_SPACE:
      *s = xnn_define_depth_to_space(
          subgraph_, a, o.out,
          static_cast<uint32_t>(node.OptionInt(KILN_OPTION_BLOCK_SIZE, 1)), 0);
      break;
    case KILN_OP_RELU:
      *s = xnn_define_clamp(subgraph_, 0, o.hi, a, o.out, 0);
      break;
    case KILN_OP_RELU6:
      *s = xnn_define_clamp(subgraph_, 0, 6, a, o.out, 0);
      break;
    case KILN_OP_RELU_N1_TO_1:
      *s = xnn_define_clamp(subgraph_, -1, 1, a, o.out, 0);
      break;
    case KILN_OP_LOGISTIC:
      *s = xnn_define_sigmoid(subgraph_, a, o.out, 0);
      break;
    case KILN_OP_HARD_SWISH:
      *s = xnn_define_hardswish(subgraph_, a, o.out, 0);
      break;
    case KILN_OP_LEAKY_RELU:
      *s = xnn_define_leaky_relu(
          subgraph_, node.OptionFloat(KILN_OPTION_ALPHA, 0.2f), a, o.out, 0);
      break;
    case KILN_OP_ELU:
      *s = xnn_define_elu(subgraph_, 1.0f, a, o.out, 0);
      break;
    case KILN_OP_ABS:
      *s = xnn_define_abs(subgraph_, a, o.out, 0);
      break;
    case KILN_OP_NEG:
      *s = xnn_define_negate(subgraph_, a, o.out, 0);
      break;
    case KILN_OP_FLOOR:
      *s = xnn_define_floor(subgraph_, a, o.out, 0);
      break;
    case KILN_OP_CEIL:
      *s = xnn_define_ceiling(subgraph_, a, o.out, 0);
      break;
    case KILN_OP_ROUND:
      *s = xnn_define_bankers_rounding(subgraph_, a, o.out, 0);
      break;
    case KILN_OP_SQUARE:
      *s = xnn_define_square(subgraph_, a, o.out, 0);
      break;
    case KILN_OP_SQRT:
      *s = xnn_define_square_root(subgraph_, a, o.out, 0);
      break;
    default:
      return node.Fail(KILN_STATUS_INTERNAL, OpName(node),
                       " was claimed but has no XNNPACK definition");
  }
  return KILN_STATUS_OK;
}

KilnStatus SubgraphBuilder::DefineNode(const GraphNode& node,
                                       const sdk::PartitionContext& reporter) {
  (void)reporter;
  NodeOut o;
  ActivationRange(Activation(node), &o.lo, &o.hi);
  KILN_SDK_RETURN_IF_ERROR(Value(node, node.output_index(0), &o.out));
  xnn_status s = xnn_status_success;
  KilnStatus status = KILN_STATUS_OK;
  switch (node.builtin_code()) {
    case KILN_OP_CONV_2D:
    case KILN_OP_DEPTHWISE_CONV_2D:
      status = DefineConv(node, o, &s);
      break;
    case KILN_OP_FULLY_CONNECTED:
      status = DefineFullyConnected(node, o, &s);
      break;
    case KILN_OP_TRANSPOSE_CONV:
      status = DefineTransposeConv(node, o, &s);
      break;
    case KILN_OP_MAX_POOL_2D:
    case KILN_OP_AVERAGE_POOL_2D:
      status = DefinePool(node, o, &s);
      break;
    case KILN_OP_ADD:
    case KILN_OP_SUB:
    case KILN_OP_MUL:
    case KILN_OP_DIV:
    case KILN_OP_MAXIMUM:
    case KILN_OP_MINIMUM:
    case KILN_OP_SQUARED_DIFFERENCE:
    case KILN_OP_PRELU:
      status = DefineBinary(node, o, &s);
      break;
    case KILN_OP_MEAN:
      status = DefineMean(node, o, &s);
      break;
    case KILN_OP_PAD:
    case KILN_OP_PADV2:
      status = DefinePad(node, o, &s);
      break;
    case KILN_OP_RESIZE_BILINEAR:
      status = DefineResizeBilinear(node, o, &s);
      break;
    default:
      status = DefineUnary(node, o, &s);
      break;
  }
  KILN_SDK_RETURN_IF_ERROR(status);
  return Check(node, s, "node definition");
}

}  // namespace kiln::xnnpack
