#include "ops.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>

#include "kiln/sdk/checks.h"

namespace kiln::opencl {
namespace {

using Shape = std::vector<int32_t>;

int64_t NumElements(const Shape& s) {
  int64_t n = 1;
  for (int32_t d : s) n *= d;
  return n;
}

// Right-aligns `s` in 4 dimensions, padding with leading 1s.
cl_int4 Pad4(const Shape& s) {
  cl_int4 v = {{1, 1, 1, 1}};
  const size_t offset = 4 - s.size();
  for (size_t i = 0; i < s.size(); ++i) v.s[offset + i] = s[i];
  return v;
}

cl_int4 Int4(cl_int a, cl_int b, cl_int c, cl_int d) {
  cl_int4 v = {{a, b, c, d}};
  return v;
}

KernelArg TensorArg(int32_t tensor) {
  KernelArg a;
  a.kind = KernelArg::Kind::kTensor;
  a.tensor = tensor;
  return a;
}
KernelArg IntArg(cl_int i) {
  KernelArg a;
  a.kind = KernelArg::Kind::kInt;
  a.i = i;
  return a;
}
KernelArg FloatArg(cl_float f) {
  KernelArg a;
  a.kind = KernelArg::Kind::kFloat;
  a.f = f;
  return a;
}
KernelArg Int4Arg(cl_int4 v) {
  KernelArg a;
  a.kind = KernelArg::Kind::kInt4;
  a.v = v;
  return a;
}

using sdk::NodeSupport;

using sdk::Input;
using sdk::Output;

// A delegated node with the checks every op shares. Every Unsupported
// reason names the op; operand checks use kiln/sdk/checks.h's words ("ADD
// input 1 (tensor 'b') has type INT32; supports FLOAT32 (...)").
class NodeReader : public sdk::GraphNode {
 public:
  NodeReader(const sdk::GraphNode& node, const ShapeLookup& shape_of)
      : sdk::GraphNode(node), shape_of_(shape_of) {}

  // Unsupported for a reason about the node as a whole: "OP: <parts>".
  template <typename... Parts>
  NodeSupport Unsupported(const Parts&... parts) const {
    return NodeSupport::Unsupported(sdk::OpName(*this), ": ", parts...);
  }

  // False when the option is absent; a present empty array is read.
  bool ReadIntArrayOption(uint32_t key, Shape* out) const {
    const int32_t* values = nullptr;
    int32_t count = 0;
    if (host().node_option_int_array(raw_node(), key, &values, &count) !=
            KILN_STATUS_OK ||
        (values == nullptr && count > 0)) {
      return false;
    }
    out->assign(values, values + count);
    return true;
  }

  // Subgraph tensor index of operand `o`; -1 when omitted.
  int32_t IndexOf(sdk::Operand o) const {
    return o.is_output ? output_index(o.index) : input_index(o.index);
  }

  // Operand `o` is present and float32.
  NodeSupport Float32(sdk::Operand o) const {
    const sdk::Tensor t = sdk::TensorOf(*this, o);
    if (!t.present()) {
      return NodeSupport::Unsupported(sdk::Describe(*this, o), " is missing");
    }
    if (t.type() == KILN_TYPE_FLOAT32) return NodeSupport::Supported();
    return NodeSupport::Unsupported(sdk::UnsupportedTypeMessage(
        sdk::Describe(*this, o), t.type(), {KILN_TYPE_FLOAT32},
        "the OpenCL delegate runs float32 only"));
  }

  // A float32 data tensor with a static shape of rank <= 4 and no zero-sized
  // dimension.
  NodeSupport FloatTensor(sdk::Operand o, Shape* shape) const {
    KILN_SDK_RETURN_IF_UNSUPPORTED(Float32(o));
    const std::string subject = sdk::Describe(*this, o);
    if (!shape_of_(IndexOf(o), shape)) {
      return NodeSupport::Unsupported(
          subject,
          " has a dynamic or unknown shape; the OpenCL delegate needs static "
          "shapes");
    }
    if (shape->size() > 4) {
      return NodeSupport::Unsupported(
          subject, " has rank ", shape->size(),
          "; the OpenCL delegate supports rank <= 4");
    }
    for (int32_t d : *shape) {
      if (d <= 0) {
        return NodeSupport::Unsupported(subject, " has shape ",
                                        sdk::ShapeString(*shape),
                                        " with an empty or unknown dimension");
      }
    }
    if (NumElements(*shape) > std::numeric_limits<int32_t>::max() / 4) {
      return NodeSupport::Unsupported(subject,
                                      " is too large for 32-bit indexing");
    }
    return NodeSupport::Supported();
  }

  // A constant int32 tensor read on the host (shape, axes, paddings).
  // *values stays empty when the data is not readable yet (then the check
  // is repeated at prepare).
  NodeSupport ConstInt32Tensor(sdk::Operand o, Shape* dims,
                               std::vector<int32_t>* values,
                               bool* readable) const {
    const sdk::Tensor t = sdk::TensorOf(*this, o);
    const std::string subject = sdk::Describe(*this, o);
    if (!t.present()) return NodeSupport::Unsupported(subject, " is missing");
    if (t.type() != KILN_TYPE_INT32) {
      return NodeSupport::Unsupported(
          sdk::UnsupportedTypeMessage(subject, t.type(), {KILN_TYPE_INT32}));
    }
    if (!t.is_constant()) {
      return NodeSupport::Unsupported(
          subject,
          " is not constant; the OpenCL delegate needs it at prepare "
          "time");
    }
    if (t.rank() < 0) {
      return NodeSupport::Unsupported(subject, " has an unknown rank");
    }
    *dims = t.shape();
    const void* data = t.data<const void>();
    *readable = data != nullptr;
    values->clear();
    if (data != nullptr) {
      const size_t n = static_cast<size_t>(NumElements(*dims));
      if (t.byte_size() < n * sizeof(int32_t)) {
        return NodeSupport::Unsupported(
            subject, " holds fewer bytes than its shape needs");
      }
      values->resize(n);
      std::memcpy(values->data(), data, n * sizeof(int32_t));
    }
    return NodeSupport::Supported();
  }

  // The fused activation as the kernels' `act` argument (the
  // KILN_ACTIVATION_* value); SIGN_BIT is not implemented.
  NodeSupport Activation(int* act) const {
    const int64_t a =
        OptionInt(KILN_OPTION_FUSED_ACTIVATION, KILN_ACTIVATION_NONE);
    if (!sdk::IsKnownActivation(a) || a == KILN_ACTIVATION_SIGN_BIT) {
      return Unsupported(
          "fused activation ", a, " (", sdk::ActivationName(a),
          ") is not supported (NONE, RELU, RELU_N1_TO_1, RELU6 and TANH are)");
    }
    *act = static_cast<int>(a);
    return NodeSupport::Supported();
  }

  // Between `min_inputs` and `max_inputs` inputs and one present output.
  NodeSupport Counts(int32_t min_inputs, int32_t max_inputs) const {
    const char* op = sdk::OpName(*this);
    if (num_inputs() < min_inputs || num_inputs() > max_inputs) {
      return NodeSupport::Unsupported(sdk::CountMismatchMessage(
          op, min_inputs, max_inputs, num_inputs(), "input"));
    }
    if (num_outputs() != 1) {
      return NodeSupport::Unsupported(
          sdk::CountMismatchMessage(op, 1, 1, num_outputs(), "output"));
    }
    if (output_index(0) < 0) {
      return NodeSupport::Unsupported(sdk::Describe(*this, Output(0)),
                                      " is missing");
    }
    return NodeSupport::Supported();
  }

  // The output tensor's own (model) shape, when static.
  bool ModelOutputShape(Shape* shape) const {
    return StaticShape(tensor(output_index(0)), shape);
  }

 private:
  const ShapeLookup& shape_of_;
};

NodeSupport CheckPadding(const NodeReader& r, int64_t padding) {
  if (padding != KILN_PADDING_SAME && padding != KILN_PADDING_VALID) {
    return r.Unsupported("padding " + std::to_string(padding) +
                         " is neither SAME nor VALID");
  }
  return NodeSupport::Supported();
}

// TFLite's output size and leading padding for one spatial axis.
bool SpatialGeometry(int64_t padding, int32_t in, int32_t filter,
                     int32_t stride, int32_t dilation, int32_t* out,
                     int32_t* pad_before) {
  const int32_t effective = (filter - 1) * dilation + 1;
  *out = padding == KILN_PADDING_SAME ? (in + stride - 1) / stride
                                      : (in - effective + stride) / stride;
  if (*out <= 0) return false;
  const int32_t total = std::max((*out - 1) * stride + effective - in, 0);
  *pad_before = padding == KILN_PADDING_SAME ? total / 2 : 0;
  return true;
}

NodeSupport PlanBinary(const NodeReader& r, int op, NodePlan* plan) {
  KILN_SDK_RETURN_IF_UNSUPPORTED(r.Counts(2, 2));
  Shape a, b;
  KILN_SDK_RETURN_IF_UNSUPPORTED(r.FloatTensor(Input(0), &a));
  KILN_SDK_RETURN_IF_UNSUPPORTED(r.FloatTensor(Input(1), &b));
  KILN_SDK_RETURN_IF_UNSUPPORTED(r.Float32(Output(0)));
  int act = 0;
  KILN_SDK_RETURN_IF_UNSUPPORTED(r.Activation(&act));
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  cl_int4 stride_a = Int4(0, 0, 0, 0), stride_b = Int4(0, 0, 0, 0);
  int32_t step_a = 1, step_b = 1;
  for (size_t k = 0; k < rank; ++k) {  // k counts from the last axis
    const int32_t da = k < a.size() ? a[a.size() - 1 - k] : 1;
    const int32_t db = k < b.size() ? b[b.size() - 1 - k] : 1;
    if (da != db && da != 1 && db != 1) {
      return r.Unsupported("input shapes " + sdk::ShapeString(a) + " and " +
                           sdk::ShapeString(b) +
                           " cannot be broadcast together");
    }
    out[rank - 1 - k] = std::max(da, db);
    stride_a.s[3 - k] = da == 1 ? 0 : step_a;
    stride_b.s[3 - k] = db == 1 ? 0 : step_b;
    step_a *= da;
    step_b *= db;
  }
  plan->output_shape = out;
  Launch l;
  l.group = ProgramGroup::kElementwise;
  l.kernel = "binary_op";
  l.args = {TensorArg(r.input_index(0)),
            TensorArg(r.input_index(1)),
            TensorArg(r.output_index(0)),
            Int4Arg(Pad4(out)),
            Int4Arg(stride_a),
            Int4Arg(stride_b),
            IntArg(op),
            IntArg(act)};
  l.global = {static_cast<size_t>(NumElements(out))};
  plan->launches.push_back(l);
  return NodeSupport::Supported();
}

NodeSupport PlanUnary(const NodeReader& r, int act, NodePlan* plan) {
  KILN_SDK_RETURN_IF_UNSUPPORTED(r.Counts(1, 1));
  Shape in;
  KILN_SDK_RETURN_IF_UNSUPPORTED(r.FloatTensor(Input(0), &in));
  KILN_SDK_RETURN_IF_UNSUPPORTED(r.Float32(Output(0)));
  plan->output_shape = in;
  Launch l;
  l.kernel = "unary_activation";
  l.args = {TensorArg(r.input_index(0)), TensorArg(r.output_index(0)),
            IntArg(act)};
  l.global = {static_cast<size_t>(NumElements(in))};
  plan->launches.push_back(l);
  return NodeSupport::Supported();
}

NodeSupport OptionalBias(const NodeReader& r, int32_t units, int32_t* bias) {
  *bias = r.num_inputs() > 2 ? r.input_index(2) : -1;
  if (*bias < 0) return NodeSupport::Supported();
  Shape b;
  KILN_SDK_RETURN_IF_UNSUPPORTED(r.FloatTensor(Input(2, "bias"), &b));
  if (NumElements(b) != units) {
    return r.Unsupported("bias has shape " + sdk::ShapeString(b) +
                         ", expected " + std::to_string(units) + " elements");
  }
  return NodeSupport::Supported();
}

NodeSupport PlanConv(const NodeReader& r, bool depthwise, NodePlan* plan) {
  KILN_SDK_RETURN_IF_UNSUPPORTED(r.Counts(2, 3));
  Shape in, filter;
  KILN_SDK_RETURN_IF_UNSUPPORTED(r.FloatTensor(Input(0), &in));
  KILN_SDK_RETURN_IF_UNSUPPORTED(r.FloatTensor(Input(1, "filter"), &filter));
  KILN_SDK_RETURN_IF_UNSUPPORTED(r.Float32(Output(0)));
  if (in.size() != 4 || filter.size() != 4) {
    return r.Unsupported("input " + sdk::ShapeString(in) + " and filter " +
                         sdk::ShapeString(filter) + " must both have rank 4");
  }
  int act = 0;
  KILN_SDK_RETURN_IF_UNSUPPORTED(r.Activation(&act));
  const int64_t padding = r.OptionInt(KILN_OPTION_PADDING, KILN_PADDING_SAME);
  KILN_SDK_RETURN_IF_UNSUPPORTED(CheckPadding(r, padding));
  const int64_t sw = r.OptionInt(KILN_OPTION_STRIDE_W, 1);
  const int64_t sh = r.OptionInt(KILN_OPTION_STRIDE_H, 1);
  const int64_t dw = r.OptionInt(KILN_OPTION_DILATION_W, 1);
  const int64_t dh = r.OptionInt(KILN_OPTION_DILATION_H, 1);
  if (sw < 1 || sh < 1 || dw < 1 || dh < 1 || sw > 1 << 16 || sh > 1 << 16 ||
      dw > 1 << 16 || dh > 1 << 16) {
    return r.Unsupported("strides (" + std::to_string(sh) + "," +
                         std::to_string(sw) + ") and dilations (" +
                         std::to_string(dh) + "," + std::to_string(dw) +
                         ") must be positive");
  }
  const int32_t out_c = filter[depthwise ? 3 : 0];
  int32_t multiplier = 1;
  if (depthwise) {
    if (filter[0] != 1 || out_c % in[3] != 0) {
      return r.Unsupported("depthwise filter " + sdk::ShapeString(filter) +
                           " does not match input " + sdk::ShapeString(in) +
                           " (expected [1, h, w, channels * multiplier])");
    }
    multiplier = out_c / in[3];
  } else if (filter[3] != in[3]) {
    return r.Unsupported(
        "filter " + sdk::ShapeString(filter) + " has " +
        std::to_string(filter[3]) + " input channels but the input " +
        sdk::ShapeString(in) + " has " + std::to_string(in[3]) +
        " (grouped convolution is not implemented)");
  }
  int32_t bias = -1;
  KILN_SDK_RETURN_IF_UNSUPPORTED(OptionalBias(r, out_c, &bias));
  int32_t out_h = 0, out_w = 0, pad_top = 0, pad_left = 0;
  if (!SpatialGeometry(padding, in[1], filter[1], static_cast<int32_t>(sh),
                       static_cast<int32_t>(dh), &out_h, &pad_top) ||
      !SpatialGeometry(padding, in[2], filter[2], static_cast<int32_t>(sw),
                       static_cast<int32_t>(dw), &out_w, &pad_left)) {
    return r.Unsupported("the filter " + sdk::ShapeString(filter) +
                         " does not fit in the input " + sdk::ShapeString(in) +
                         " with VALID padding");
  }
  plan->output_shape = {in[0], out_h, out_w, out_c};
  Launch l;
  l.group = ProgramGroup::kConvolution;
  l.kernel = depthwise ? "depthwise_conv2d" : "conv2d";
  l.args = {TensorArg(r.input_index(0)),
            TensorArg(r.input_index(1)),
            TensorArg(bias),
            TensorArg(r.output_index(0)),
            Int4Arg(Pad4(in)),
            Int4Arg(Pad4(plan->output_shape)),
            Int4Arg(Int4(filter[1], filter[2], static_cast<cl_int>(sh),
                         static_cast<cl_int>(sw))),
            Int4Arg(Int4(static_cast<cl_int>(dh), static_cast<cl_int>(dw),
                         pad_top, pad_left))};
  if (depthwise) l.args.push_back(IntArg(multiplier));
  l.args.push_back(IntArg(bias >= 0 ? 1 : 0));
  l.args.push_back(IntArg(act));
  l.global = {static_cast<size_t>(out_c), static_cast<size_t>(out_w),
              static_cast<size_t>(in[0]) * static_cast<size_t>(out_h)};
  plan->launches.push_back(l);
  return NodeSupport::Supported();
}

NodeSupport PlanFullyConnected(const NodeReader& r, NodePlan* plan) {
  KILN_SDK_RETURN_IF_UNSUPPORTED(r.Counts(2, 3));
  Shape in, weights;
  KILN_SDK_RETURN_IF_UNSUPPORTED(r.FloatTensor(Input(0), &in));
  KILN_SDK_RETURN_IF_UNSUPPORTED(r.FloatTensor(Input(1, "weights"), &weights));
  KILN_SDK_RETURN_IF_UNSUPPORTED(r.Float32(Output(0)));
  int act = 0;
  KILN_SDK_RETURN_IF_UNSUPPORTED(r.Activation(&act));
  if (r.OptionInt(KILN_OPTION_WEIGHTS_FORMAT, 0) != 0) {
    return r.Unsupported(
        "weights format " +
        std::to_string(r.OptionInt(KILN_OPTION_WEIGHTS_FORMAT, 0)) +
        " is not DEFAULT");
  }
  if (weights.size() != 2) {
    return r.Unsupported("weights " + sdk::ShapeString(weights) +
                         " must have rank 2");
  }
  const int32_t units = weights[0], depth = weights[1];
  const int64_t n = NumElements(in);
  if (n % depth != 0) {
    return r.Unsupported("input " + sdk::ShapeString(in) + " has " +
                         std::to_string(n) +
                         " elements, not a multiple of the weights' depth " +
                         std::to_string(depth));
  }
  int32_t bias = -1;
  KILN_SDK_RETURN_IF_UNSUPPORTED(OptionalBias(r, units, &bias));
  const int32_t rows = static_cast<int32_t>(n / depth);
  if (r.OptionInt(KILN_OPTION_KEEP_NUM_DIMS, 0) != 0) {
    if (in.empty() || in.back() != depth) {
      return r.Unsupported(
          "keep_num_dims needs the input's last dimension to equal the "
          "weights' depth " +
          std::to_string(depth));
    }
    plan->output_shape = in;
    plan->output_shape.back() = units;
  } else {
    plan->output_shape = {rows, units};
  }
  Launch l;
  l.group = ProgramGroup::kConvolution;
  l.kernel = "fully_connected";
  l.args = {TensorArg(r.input_index(0)),
            TensorArg(r.input_index(1)),
            TensorArg(bias),
            TensorArg(r.output_index(0)),
            IntArg(depth),
            IntArg(units),
            IntArg(bias >= 0 ? 1 : 0),
            IntArg(act)};
  l.global = {static_cast<size_t>(units), static_cast<size_t>(rows)};
  plan->launches.push_back(l);
  return NodeSupport::Supported();
}

NodeSupport PlanPool(const NodeReader& r, bool is_max, NodePlan* plan) {
  KILN_SDK_RETURN_IF_UNSUPPORTED(r.Counts(1, 1));
  Shape in;
  KILN_SDK_RETURN_IF_UNSUPPORTED(r.FloatTensor(Input(0), &in));
  KILN_SDK_RETURN_IF_UNSUPPORTED(r.Float32(Output(0)));
  if (in.size() != 4)
    return r.Unsupported("input " + sdk::ShapeString(in) + " must have rank 4");
  int act = 0;
  KILN_SDK_RETURN_IF_UNSUPPORTED(r.Activation(&act));
  const int64_t padding = r.OptionInt(KILN_OPTION_PADDING, KILN_PADDING_SAME);
  KILN_SDK_RETURN_IF_UNSUPPORTED(CheckPadding(r, padding));
  const int64_t sw = r.OptionInt(KILN_OPTION_STRIDE_W, 1);
  const int64_t sh = r.OptionInt(KILN_OPTION_STRIDE_H, 1);
  const int64_t fw = r.OptionInt(KILN_OPTION_FILTER_W, 1);
  const int64_t fh = r.OptionInt(KILN_OPTION_FILTER_H, 1);
  if (sw < 1 || sh < 1 || fw < 1 || fh < 1 || sw > 1 << 16 || sh > 1 << 16 ||
      fw > 1 << 16 || fh > 1 << 16) {
    return r.Unsupported("filter and stride sizes must be positive");
  }
  int32_t out_h = 0, out_w = 0, pad_top = 0, pad_left = 0;
  if (!SpatialGeometry(padding, in[1], static_cast<int32_t>(fh),
                       static_cast<int32_t>(sh), 1, &out_h, &pad_top) ||
      !SpatialGeometry(padding, in[2], static_cast<int32_t>(fw),
                       static_cast<int32_t>(sw), 1, &out_w, &pad_left)) {
    return r.Unsupported("the pooling window does not fit in the input " +
                         sdk::ShapeString(in));
  }
  plan->output_shape = {in[0], out_h, out_w, in[3]};
  Launch l;
  l.group = ProgramGroup::kPoolSoftmax;
  l.kernel = "pool2d";
  l.args = {TensorArg(r.input_index(0)),
            TensorArg(r.output_index(0)),
            Int4Arg(Pad4(in)),
            Int4Arg(Pad4(plan->output_shape)),
            Int4Arg(Int4(static_cast<cl_int>(fh), static_cast<cl_int>(fw),
                         static_cast<cl_int>(sh), static_cast<cl_int>(sw))),
            Int4Arg(Int4(pad_top, pad_left, 0, 0)),
            IntArg(is_max ? 1 : 0),
            IntArg(act)};
  l.global = {static_cast<size_t>(in[3]), static_cast<size_t>(out_w),
              static_cast<size_t>(in[0]) * static_cast<size_t>(out_h)};
  plan->launches.push_back(l);
  return NodeSupport::Supported();
}

NodeSupport PlanSoftmax(const NodeReader& r, NodePlan* plan) {
  KILN_SDK_RETURN_IF_UNSUPPORTED(r.Counts(1, 1));
  Shape in;
  KILN_SDK_RETURN_IF_UNSUPPORTED(r.FloatTensor(Input(0), &in));
  KILN_SDK_RETURN_IF_UNSUPPORTED(r.Float32(Output(0)));
  if (in.empty())
    return r.Unsupported("a scalar input has no axis to normalise");
  const float beta = r.OptionFloat(KILN_OPTION_BETA, 1.0f);
  plan->output_shape = in;
  Launch l;
  l.group = ProgramGroup::kPoolSoftmax;
  l.kernel = "softmax_rows";
  l.args = {TensorArg(r.input_index(0)), TensorArg(r.output_index(0)),
            IntArg(in.back()), FloatArg(beta)};
  l.global = {static_cast<size_t>(NumElements(in) / in.back())};
  plan->launches.push_back(l);
  return NodeSupport::Supported();
}

NodeSupport PlanReshape(const NodeReader& r, NodePlan* plan) {
  KILN_SDK_RETURN_IF_UNSUPPORTED(r.Counts(1, 2));
  Shape in;
  KILN_SDK_RETURN_IF_UNSUPPORTED(r.FloatTensor(Input(0), &in));
  KILN_SDK_RETURN_IF_UNSUPPORTED(r.Float32(Output(0)));
  Shape target;
  bool known = false;
  if (r.num_inputs() > 1 && r.input_index(1) >= 0) {
    Shape dims;
    bool readable = false;
    KILN_SDK_RETURN_IF_UNSUPPORTED(
        r.ConstInt32Tensor(Input(1, "shape"), &dims, &target, &readable));
    known = readable;
  }
  if (!known) known = r.ReadIntArrayOption(KILN_OPTION_NEW_SHAPE, &target);
  if (!known) known = r.ModelOutputShape(&target);
  if (!known)
    return r.Unsupported("the target shape is not known before invoke");
  int64_t product = 1;
  int unknown_axis = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == -1 && unknown_axis < 0) {
      unknown_axis = static_cast<int>(i);
    } else if (target[i] <= 0) {
      return r.Unsupported("target shape " + sdk::ShapeString(target) +
                           " is invalid");
    } else {
      product *= target[i];
    }
  }
  const int64_t n = NumElements(in);
  if (unknown_axis >= 0) {
    if (n % product != 0) {
      return r.Unsupported("target shape " + sdk::ShapeString(target) +
                           " does not fit " + std::to_string(n) + " elements");
    }
    target[static_cast<size_t>(unknown_axis)] =
        static_cast<int32_t>(n / product);
    product = n;
  }
  if (product != n || target.size() > 4) {
    return r.Unsupported("target shape " + sdk::ShapeString(target) +
                         " does not match input " + sdk::ShapeString(in) +
                         (target.size() > 4 ? " or has rank > 4" : ""));
  }
  plan->output_shape = target;
  Launch l;
  l.copy_from = r.input_index(0);
  l.copy_to = r.output_index(0);
  l.copy_elements = static_cast<size_t>(n);
  plan->launches.push_back(l);
  return NodeSupport::Supported();
}

NodeSupport PlanConcatenation(const NodeReader& r, NodePlan* plan) {
  const int32_t count = r.num_inputs();
  KILN_SDK_RETURN_IF_UNSUPPORTED(r.Counts(1, 1 << 16));
  KILN_SDK_RETURN_IF_UNSUPPORTED(r.Float32(Output(0)));
  int act = 0;
  KILN_SDK_RETURN_IF_UNSUPPORTED(r.Activation(&act));
  std::vector<Shape> shapes(static_cast<size_t>(count));
  for (int32_t i = 0; i < count; ++i) {
    KILN_SDK_RETURN_IF_UNSUPPORTED(r.FloatTensor(Input(i), &shapes[i]));
  }
  const int64_t rank = static_cast<int64_t>(shapes[0].size());
  int64_t axis = r.OptionInt(KILN_OPTION_AXIS, 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) {
    return r.Unsupported("axis " +
                         std::to_string(r.OptionInt(KILN_OPTION_AXIS, 0)) +
                         " is out of range for rank " + std::to_string(rank));
  }
  Shape out = shapes[0];
  out[static_cast<size_t>(axis)] = 0;
  for (const Shape& s : shapes) {
    if (static_cast<int64_t>(s.size()) != rank) {
      return r.Unsupported("inputs have different ranks");
    }
    for (int64_t d = 0; d < rank; ++d) {
      if (d != axis &&
          s[static_cast<size_t>(d)] != shapes[0][static_cast<size_t>(d)]) {
        return r.Unsupported("input shapes " + sdk::ShapeString(shapes[0]) +
                             " and " + sdk::ShapeString(s) +
                             " differ outside axis " + std::to_string(axis));
      }
    }
    out[static_cast<size_t>(axis)] += s[static_cast<size_t>(axis)];
  }
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= out[static_cast<size_t>(d)];
  for (int64_t d = axis + 1; d < rank; ++d)
    inner *= out[static_cast<size_t>(d)];
  const int64_t dst_inner = out[static_cast<size_t>(axis)] * inner;
  int64_t offset = 0;
  for (int32_t i = 0; i < count; ++i) {
    const int64_t src_inner = shapes[i][static_cast<size_t>(axis)] * inner;
    Launch l;
    l.kernel = "concat_part";
    l.args = {TensorArg(r.input_index(i)),
              TensorArg(r.output_index(0)),
              IntArg(static_cast<cl_int>(src_inner)),
              IntArg(static_cast<cl_int>(dst_inner)),
              IntArg(static_cast<cl_int>(offset)),
              IntArg(act)};
    l.global = {static_cast<size_t>(src_inner), static_cast<size_t>(outer)};
    plan->launches.push_back(l);
    offset += src_inner;
  }
  plan->output_shape = out;
  return NodeSupport::Supported();
}

NodeSupport PlanMean(const NodeReader& r, NodePlan* plan) {
  KILN_SDK_RETURN_IF_UNSUPPORTED(r.Counts(2, 2));
  Shape in, axes_dims;
  std::vector<int32_t> axes;
  bool readable = false;
  KILN_SDK_RETURN_IF_UNSUPPORTED(r.FloatTensor(Input(0), &in));
  KILN_SDK_RETURN_IF_UNSUPPORTED(r.Float32(Output(0)));
  KILN_SDK_RETURN_IF_UNSUPPORTED(
      r.ConstInt32Tensor(Input(1, "axes"), &axes_dims, &axes, &readable));
  if (!readable) {
    // Shape-only plan; the axes are checked again at prepare.
    plan->output_shape.clear();
    return NodeSupport::Supported();
  }
  const int32_t rank = static_cast<int32_t>(in.size());
  std::vector<bool> reduced(in.size(), false);
  for (int32_t a : axes) {
    const int32_t axis = a < 0 ? a + rank : a;
    if (axis < 0 || axis >= rank) {
      return r.Unsupported("axis " + std::to_string(a) +
                           " is out of range for rank " + std::to_string(rank));
    }
    reduced[static_cast<size_t>(axis)] = true;
  }
  const bool keep_dims = r.OptionInt(KILN_OPTION_KEEP_DIMS, 0) != 0;
  Shape kept(in.size()), out;
  cl_int4 reduce = Int4(0, 0, 0, 0);
  int64_t count = 1;
  for (size_t d = 0; d < in.size(); ++d) {
    kept[d] = reduced[d] ? 1 : in[d];
    if (reduced[d]) {
      reduce.s[4 - in.size() + d] = 1;
      count *= in[d];
    }
    if (!reduced[d] || keep_dims) out.push_back(kept[d]);
  }
  plan->output_shape = out;
  Launch l;
  l.kernel = "mean_reduce";
  l.args = {TensorArg(r.input_index(0)),
            TensorArg(r.output_index(0)),
            Int4Arg(Pad4(in)),
            Int4Arg(Pad4(kept)),
            Int4Arg(reduce),
            FloatArg(1.0f / static_cast<float>(count))};
  l.global = {static_cast<size_t>(NumElements(kept))};
  plan->launches.push_back(l);
  return NodeSupport::Supported();
}

NodeSupport PlanPad(const NodeReader& r, NodePlan* plan) {
  KILN_SDK_RETURN_IF_UNSUPPORTED(r.Counts(2, 2));
  Shape in, pad_dims;
  std::vector<int32_t> pads;
  bool readable = false;
  KILN_SDK_RETURN_IF_UNSUPPORTED(r.FloatTensor(Input(0), &in));
  KILN_SDK_RETURN_IF_UNSUPPORTED(r.Float32(Output(0)));
  KILN_SDK_RETURN_IF_UNSUPPORTED(
      r.ConstInt32Tensor(Input(1, "paddings"), &pad_dims, &pads, &readable));
  if (pad_dims.size() != 2 || pad_dims[0] != static_cast<int32_t>(in.size()) ||
      pad_dims[1] != 2) {
    return r.Unsupported(
        "paddings have shape ", sdk::ShapeString(pad_dims), ", expected ",
        sdk::ShapeString({static_cast<int32_t>(in.size()), 2}));
  }
  if (!readable) {
    plan->output_shape.clear();
    return NodeSupport::Supported();
  }
  Shape out(in.size());
  cl_int4 before = Int4(0, 0, 0, 0);
  for (size_t d = 0; d < in.size(); ++d) {
    const int32_t lo = pads[2 * d], hi = pads[2 * d + 1];
    if (lo < 0 || hi < 0)
      return r.Unsupported("negative paddings are not supported");
    out[d] = in[d] + lo + hi;
    before.s[4 - in.size() + d] = lo;
  }
  plan->output_shape = out;
  Launch l;
  l.kernel = "pad_constant";
  l.args = {TensorArg(r.input_index(0)), TensorArg(r.output_index(0)),
            Int4Arg(Pad4(in)), Int4Arg(Pad4(out)), Int4Arg(before)};
  l.global = {static_cast<size_t>(NumElements(out))};
  plan->launches.push_back(l);
  return NodeSupport::Supported();
}

}  // namespace

const std::vector<OpSupport>& SupportedOps() {
  // Max versions: the newest version whose float32 semantics the kernels
  // implement. Versions above 1 of most ops only add integer types, which
  // the type checks refuse; DEPTHWISE_CONV_2D v2 adds dilation;
  // FULLY_CONNECTED v5 adds keep_num_dims. CONV_2D v2..v5 are hybrid or
  // integer and v6 is grouped convolution, which is not implemented.
  static const std::vector<OpSupport> ops = {
      {KILN_OP_ADD, 1, 2},
      {KILN_OP_SUB, 1, 2},
      {KILN_OP_MUL, 1, 2},
      {KILN_OP_RELU, 1, 2},
      {KILN_OP_RELU6, 1, 2},
      {KILN_OP_LOGISTIC, 1, 2},
      {KILN_OP_TANH, 1, 2},
      {KILN_OP_CONV_2D, 1, 1},
      {KILN_OP_DEPTHWISE_CONV_2D, 1, 2},
      {KILN_OP_FULLY_CONNECTED, 1, 5},
      {KILN_OP_MAX_POOL_2D, 1, 2},
      {KILN_OP_AVERAGE_POOL_2D, 1, 2},
      {KILN_OP_SOFTMAX, 1, 2},
      {KILN_OP_RESHAPE, 1, 1, {KILN_TYPE_FLOAT32, KILN_TYPE_INT32}},
      {KILN_OP_CONCATENATION, 1, 2},
      {KILN_OP_MEAN, 1, 2, {KILN_TYPE_FLOAT32, KILN_TYPE_INT32}},
      {KILN_OP_PAD, 1, 2, {KILN_TYPE_FLOAT32, KILN_TYPE_INT32}},
  };
  return ops;
}

const OpSupport* FindOpSupport(int32_t builtin_code) {
  for (const OpSupport& op : SupportedOps()) {
    if (op.builtin_code == builtin_code) return &op;
  }
  return nullptr;
}

bool StaticShape(const sdk::Tensor& tensor, std::vector<int32_t>* shape) {
  if (!tensor.present() || !sdk::HasKnownShape(tensor)) return false;
  *shape = tensor.shape();
  return true;
}

namespace {

// Whether the delegate implements the node's op at its version.
NodeSupport CheckOp(const sdk::GraphNode& node) {
  const int32_t code = node.builtin_code();
  const OpSupport* op = FindOpSupport(code);
  if (op == nullptr) {
    if (code == KILN_OP_CUSTOM) {
      const char* name = node.custom_name();
      return NodeSupport::Unsupported(
          "custom op '", name != nullptr ? name : "",
          "' is not implemented by the OpenCL delegate");
    }
    return NodeSupport::Unsupported(
        KilnBuiltinOpName(code), " is not implemented by the OpenCL delegate");
  }
  const int32_t version = node.op_version();
  if (version < op->min_version || version > op->max_version) {
    return NodeSupport::Unsupported(
        KilnBuiltinOpName(code), " version ", version,
        " is outside the versions ", op->min_version, "..", op->max_version,
        " whose semantics the OpenCL delegate implements");
  }
  return NodeSupport::Supported();
}

// The launches of a node whose op CheckOp accepted.
NodeSupport PlanOp(int32_t code, const NodeReader& r, NodePlan* plan) {
  switch (code) {
    case KILN_OP_ADD:
      return PlanBinary(r, 0, plan);
    case KILN_OP_SUB:
      return PlanBinary(r, 1, plan);
    case KILN_OP_MUL:
      return PlanBinary(r, 2, plan);
    case KILN_OP_RELU:
      return PlanUnary(r, KILN_ACTIVATION_RELU, plan);
    case KILN_OP_RELU6:
      return PlanUnary(r, KILN_ACTIVATION_RELU6, plan);
    case KILN_OP_TANH:
      return PlanUnary(r, KILN_ACTIVATION_TANH, plan);
    case KILN_OP_LOGISTIC:
      return PlanUnary(r, kActivationLogistic, plan);
    case KILN_OP_CONV_2D:
      return PlanConv(r, false, plan);
    case KILN_OP_DEPTHWISE_CONV_2D:
      return PlanConv(r, true, plan);
    case KILN_OP_FULLY_CONNECTED:
      return PlanFullyConnected(r, plan);
    case KILN_OP_MAX_POOL_2D:
      return PlanPool(r, true, plan);
    case KILN_OP_AVERAGE_POOL_2D:
      return PlanPool(r, false, plan);
    case KILN_OP_SOFTMAX:
      return PlanSoftmax(r, plan);
    case KILN_OP_RESHAPE:
      return PlanReshape(r, plan);
    case KILN_OP_CONCATENATION:
      return PlanConcatenation(r, plan);
    case KILN_OP_MEAN:
      return PlanMean(r, plan);
    case KILN_OP_PAD:
      return PlanPad(r, plan);
    default:
      return r.Unsupported("not implemented");
  }
}

}  // namespace

NodeSupport PlanNode(const sdk::GraphNode& node, const ShapeLookup& shape_of,
                     NodePlan* plan) {
  *plan = NodePlan();
  KILN_SDK_RETURN_IF_UNSUPPORTED(CheckOp(node));
  const NodeReader r(node, shape_of);
  plan->output_tensor = r.num_outputs() > 0 ? r.output_index(0) : -1;
  return PlanOp(node.builtin_code(), r, plan);
}

}  // namespace kiln::opencl
