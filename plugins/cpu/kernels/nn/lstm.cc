// LSTM and UNIDIRECTIONAL_SEQUENCE_LSTM: TFLite's full LSTM cell
// (lstm_eval.cc) with its optional parts: CIFG (no input gate), peephole
// connections, projection (with or without bias), layer normalization of
// the gates, cell and projection clipping, time-major or batch-major
// sequences. The output and cell states (inputs 18 and 19) are variable
// tensors: the kernel reads and updates them in place, so they carry over
// from one invoke to the next, as in TFLite.
//
// float32 (LSTM v1, UNIDIRECTIONAL_SEQUENCE_LSTM v1), and hybrid (LSTM v3/v4,
// UNIDIRECTIONAL_SEQUENCE_LSTM v2/v3): int8 weight matrices and peephole
// weights with per-tensor scales, float biases, layer-norm coefficients and
// states; the input, the output state and the hidden state before the
// projection are quantized per batch row and time step, symmetrically or
// (asymmetric_quantize_inputs) asymmetrically, as LiteRT's hybrid kernel.
//
// Full integer (int8 input, LSTM v1/v2, UNIDIRECTIONAL_SEQUENCE_LSTM
// v1/v2 as converters write them): lstm_integer.cc, bit-exact with
// LiteRT's EvalInteger8x8_16.
//
// Not implemented (refused in prepare naming the cause): the BASIC kernel
// type (LSTM v2 with kernel_type BASIC), diagonal recurrent weights
// (UNIDIRECTIONAL_SEQUENCE_LSTM v4, not declared), the integer 8x8_8 form
// (12 intermediates) and int16 activations (LSTM v5, not declared).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "kernels/nn/hybrid.h"
#include "kernels/nn/lstm_integer.h"
#include "kernels/nn/nn_common.h"
#include "kernels/registry.h"

namespace kiln::cpu::nn {
namespace {

constexpr const char* kRoles[] = {
    "input",
    "input_to_input_weights",
    "input_to_forget_weights",
    "input_to_cell_weights",
    "input_to_output_weights",
    "recurrent_to_input_weights",
    "recurrent_to_forget_weights",
    "recurrent_to_cell_weights",
    "recurrent_to_output_weights",
    "cell_to_input_weights",
    "cell_to_forget_weights",
    "cell_to_output_weights",
    "input_gate_bias",
    "forget_gate_bias",
    "cell_gate_bias",
    "output_gate_bias",
    "projection_weights",
    "projection_bias",
    "output_state",
    "cell_state",
    "input_layer_norm_coefficients",
    "forget_layer_norm_coefficients",
    "cell_layer_norm_coefficients",
    "output_layer_norm_coefficients",
};

// The shape of weight, bias or coefficient operand `index`.
std::vector<int32_t> OperandShape(int32_t index, int32_t n_cell,
                                  int32_t n_input, int32_t n_output) {
  if (index <= kInputToOutputWeights) return {n_cell, n_input};
  if (index <= kRecurrentToOutputWeights) return {n_cell, n_output};
  if (index == kProjectionWeights) return {n_output, n_cell};
  if (index == kProjectionBias) return {n_output};
  return {n_cell};
}

// The forget, cell and output gates' weights and biases are never optional.
bool IsRequired(int32_t index) {
  switch (index) {
    case kInputToForgetWeights:
    case kInputToCellWeights:
    case kInputToOutputWeights:
    case kRecurrentToForgetWeights:
    case kRecurrentToCellWeights:
    case kRecurrentToOutputWeights:
    case kForgetGateBias:
    case kCellGateBias:
    case kOutputGateBias:
      return true;
    default:
      return false;
  }
}

constexpr int kGates = kLstmGates;

struct LstmState : LstmLayout {
  int64_t activation = KILN_ACTIVATION_TANH;
  // Full integer: int8 input, weights and output state, int16 cell state.
  bool integer = false;
  IntegerLstm integer_lstm;
  // Hybrid: int8 weight matrices and peephole weights (per-tensor scales),
  // float activations quantized per batch row on the fly.
  bool hybrid = false, asymmetric = false;
  float scale[kOutputLayerNorm + 1] = {};  // of each int8 operand
  std::vector<float> gates;                // kGates * n_cell, one batch row
  std::vector<float> hidden;  // n_cell: output gate * activation(cell)
  // Hybrid scratch: the quantized input, state and hidden rows, the
  // dequantized peephole weights and each matrix's row sums (asymmetric).
  std::vector<int8_t> q_input, q_state, q_hidden;
  std::vector<float> peephole_weights[kGates];
  std::vector<int32_t> row_sums[kOutputLayerNorm + 1];
};

// The operands that are int8 in a hybrid LSTM.
bool IsHybridWeight(int32_t index) {
  return (index >= kInputToInputWeights && index <= kCellToOutputWeights) ||
         index == kProjectionWeights;
}

std::string InputText(const KernelContext& k, int32_t index) {
  return sdk::Describe(k, sdk::Input(index));
}

// Reads float option `key`, which a host before extension API 1.3 does not
// serve for these ops: then the kernel cannot know the model's value.
KilnStatus ReadFloatOption(const KernelContext& k, uint32_t key,
                           const char* name, float* value) {
  if (k.host().node_option_float(k.raw_node(), key, value) == KILN_STATUS_OK) {
    return KILN_STATUS_OK;
  }
  return k.Fail(KILN_STATUS_UNIMPLEMENTED, sdk::OpName(k),
                ": the host does not provide option ", name,
                " (extension API 1.3); run the model with a Kiln host that "
                "serves extension API 1.3 or later");
}

KilnStatus ReadOptions(KernelContext& k, LstmState& s) {
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ReadFusedActivation(k, KILN_TYPE_FLOAT32, &s.activation));
  // The integer cell always uses tanh (LiteRT ignores the option there).
  if (!s.integer && (s.activation == KILN_ACTIVATION_NONE ||
                     s.activation == KILN_ACTIVATION_SIGN_BIT)) {
    // TFLite's cell output with NONE reads a scratch buffer it never wrote.
    return k.Fail(KILN_STATUS_UNIMPLEMENTED, sdk::OpName(k),
                  ": fused activation ", sdk::ActivationName(s.activation),
                  " is not supported; the cell supports TANH, RELU, "
                  "RELU_N1_TO_1 and RELU6");
  }
  KILN_SDK_RETURN_IF_ERROR(
      ReadFloatOption(k, KILN_OPTION_CELL_CLIP, "cell_clip", &s.cell_clip));
  KILN_SDK_RETURN_IF_ERROR(
      ReadFloatOption(k, KILN_OPTION_PROJ_CLIP, "proj_clip", &s.proj_clip));
  if (!(s.cell_clip >= 0.f) || !(s.proj_clip >= 0.f)) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, sdk::OpName(k), ": cell_clip (",
                  s.cell_clip, ") and proj_clip (", s.proj_clip,
                  ") must be >= 0 (0: no clipping)");
  }
  s.sequence = k.builtin_code() == KILN_OP_UNIDIRECTIONAL_SEQUENCE_LSTM;
  if (s.sequence) {
    s.time_major = k.OptionInt(KILN_OPTION_TIME_MAJOR, 0) != 0;
    if (k.OptionInt(KILN_OPTION_DIAGONAL_RECURRENT_TENSORS, 0) != 0) {
      return k.Fail(KILN_STATUS_UNIMPLEMENTED, sdk::OpName(k),
                    ": diagonal_recurrent_tensors (version 4) is not "
                    "implemented");
    }
  } else if (k.OptionInt(KILN_OPTION_LSTM_KERNEL_TYPE, 0) != 0) {
    return k.Fail(KILN_STATUS_UNIMPLEMENTED, sdk::OpName(k),
                  ": the BASIC kernel type (LSTM version 2) is not "
                  "implemented; only the FULL kernel is");
  }
  return KILN_STATUS_OK;
}

// The element type of operand `index` in a full-integer LSTM: int8 weight
// matrices (one scale, zero point 0), int16 peephole and layer-norm
// weights, int32 biases.
KilnStatus CheckIntegerOperand(const KernelContext& k, int32_t index,
                               const sdk::Operand& o) {
  const bool matrix =
      (index >= kInputToInputWeights && index <= kRecurrentToOutputWeights) ||
      index == kProjectionWeights;
  const bool int16 =
      (index >= kCellToInputWeights && index <= kCellToOutputWeights) ||
      index >= kInputLayerNorm;
  const KilnTensorType type = matrix  ? KILN_TYPE_INT8
                              : int16 ? KILN_TYPE_INT16
                                      : KILN_TYPE_INT32;
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectType(
      k, o, {type},
      "a full-integer LSTM has int8 weight matrices, int16 peephole and "
      "layer-norm weights and int32 biases"));
  if (type == KILN_TYPE_INT32) return KILN_STATUS_OK;
  sdk::TensorQuantization q;
  return sdk::ReadQuantization(k, o, sdk::kPerTensorSymmetric, &q);
}

// Optional operand `index`: absent, or a tensor of shape `shape` and the
// type of its role (float32, hybrid or integer).
KilnStatus CheckOperand(const KernelContext& k, LstmState& s, int32_t index,
                        const std::vector<int32_t>& shape, bool required,
                        const char* role) {
  const Tensor t = k.input(index);
  if (!t.present()) {
    if (!required) return KILN_STATUS_OK;
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, InputText(k, index),
                  " is missing; ", sdk::OpName(k), " requires the ", role);
  }
  const sdk::Operand o = sdk::Input(index, role);
  if (s.integer) {
    KILN_SDK_RETURN_IF_ERROR(CheckIntegerOperand(k, index, o));
  } else if (s.hybrid && IsHybridWeight(index)) {
    KILN_SDK_RETURN_IF_ERROR(sdk::ExpectType(
        k, o, {KILN_TYPE_INT8},
        "a hybrid LSTM has int8 weight matrices and peephole weights"));
    sdk::TensorQuantization q;
    KILN_SDK_RETURN_IF_ERROR(
        sdk::ReadQuantization(k, o, sdk::kPerTensorSymmetric, &q));
    s.scale[index] = q.scales[0];
  } else {
    KILN_SDK_RETURN_IF_ERROR(sdk::ExpectType(
        k, o, {KILN_TYPE_FLOAT32},
        s.hybrid ? "a hybrid LSTM has float32 biases and layer-norm "
                   "coefficients"
                 : "integer LSTMs are not implemented; int8 weights need a "
                   "float32 input (hybrid)"));
  }
  return sdk::ExpectShape(k, o, shape);
}

// All of `indices` present or all absent; *present says which.
KilnStatus AllOrNone(const KernelContext& k, const std::vector<int32_t>& ix,
                     const char* what, bool* present) {
  int count = 0;
  for (const int32_t i : ix) count += k.input(i).present() ? 1 : 0;
  *present = count > 0;
  if (count == 0 || count == static_cast<int>(ix.size())) {
    return KILN_STATUS_OK;
  }
  return k.Fail(
      KILN_STATUS_INVALID_ARGUMENT, sdk::OpName(k), ": the ", what,
      " operands (inputs",
      [&] {
        std::string s;
        for (const int32_t i : ix) s += " " + std::to_string(i);
        return s;
      }(),
      ") must be all present or all omitted");
}

// A per-gate operand group (peephole weights, layer-norm coefficients):
// all present or all omitted, and no input-gate member under CIFG.
KilnStatus GateGroup(const KernelContext& k, bool cifg, int32_t input_gate,
                     std::vector<int32_t> others, const char* what,
                     bool* present) {
  if (cifg && k.input(input_gate).present()) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, InputText(k, input_gate),
                  " is given but the LSTM has no input gate (CIFG)");
  }
  if (!cifg) others.insert(others.begin(), input_gate);
  return AllOrNone(k, others, what, present);
}

// Sequence, batch, input, cell and output sizes and whether the weights are
// hybrid (int8), from the input and the forget-gate weights.
KilnStatus ReadSizes(KernelContext& k, LstmState& s) {
  std::vector<int32_t> in_shape;
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectType(
      k, sdk::Input(kInput), {KILN_TYPE_FLOAT32, KILN_TYPE_INT8},
      "float32 (float or hybrid LSTM) or int8 (full-integer LSTM)"));
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectRank(k, sdk::Input(kInput), s.sequence ? 3 : 2));
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectKnownShape(k, sdk::Input(kInput), &in_shape));
  if (s.sequence) {
    s.n_time = in_shape[s.time_major ? 0 : 1];
    s.n_batch = in_shape[s.time_major ? 1 : 0];
  } else {
    s.n_time = 1;
    s.n_batch = in_shape[0];
  }
  s.n_input = in_shape.back();
  std::vector<int32_t> w;
  if (s.integer) {
    KILN_SDK_RETURN_IF_ERROR(sdk::ExpectType(
        k, sdk::Input(kInputToForgetWeights, "input_to_forget_weights"),
        {KILN_TYPE_INT8}, "an int8 input needs int8 weights"));
  } else {
    KILN_SDK_RETURN_IF_ERROR(sdk::ExpectType(
        k, sdk::Input(kInputToForgetWeights, "input_to_forget_weights"),
        {KILN_TYPE_FLOAT32, KILN_TYPE_INT8}));
  }
  s.hybrid =
      !s.integer && k.input(kInputToForgetWeights).type() == KILN_TYPE_INT8;
  s.asymmetric =
      s.hybrid && k.OptionInt(KILN_OPTION_ASYMMETRIC_QUANTIZE_INPUTS, 0) != 0;
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectRank(k, sdk::Input(kInputToForgetWeights), 2));
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectKnownShape(k, sdk::Input(kInputToForgetWeights), &w));
  s.n_cell = w[0];
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectRank(k, sdk::Input(kRecurrentToForgetWeights), 2));
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectKnownShape(k, sdk::Input(kRecurrentToForgetWeights), &w));
  s.n_output = w[1];
  if (s.n_cell <= 0 || s.n_output <= 0) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, sdk::OpName(k),
                  ": the weights give ", s.n_cell, " cells and ", s.n_output,
                  " outputs; both must be positive");
  }
  return KILN_STATUS_OK;
}

// Which optional parts the node has (input gate, peephole, projection,
// layer norm), and every weight, bias and coefficient checked against the
// sizes.
KilnStatus ReadParts(KernelContext& k, LstmState& s) {
  const int32_t n_cell = s.n_cell, n_input = s.n_input, n_out = s.n_output;
  bool has_input_gate = false;
  KILN_SDK_RETURN_IF_ERROR(AllOrNone(
      k, {kInputToInputWeights, kRecurrentToInputWeights, kInputGateBias},
      "input gate", &has_input_gate));
  s.cifg = !has_input_gate;
  KILN_SDK_RETURN_IF_ERROR(GateGroup(
      k, s.cifg, kCellToInputWeights,
      {kCellToForgetWeights, kCellToOutputWeights}, "peephole", &s.peephole));
  s.projection = k.input(kProjectionWeights).present();
  s.projection_bias = k.input(kProjectionBias).present();
  if (s.projection_bias && !s.projection) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, InputText(k, kProjectionBias),
                  " is given without projection weights (input 16)");
  }
  if (!s.projection && n_out != n_cell) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, sdk::OpName(k),
                  ": without projection weights the output size (", n_out,
                  ", from the recurrent weights) must equal the cell count (",
                  n_cell, ")");
  }

  s.layer_norm = false;
  if (k.num_inputs() == 24) {
    KILN_SDK_RETURN_IF_ERROR(
        GateGroup(k, s.cifg, kInputLayerNorm,
                  {kForgetLayerNorm, kCellLayerNorm, kOutputLayerNorm},
                  "layer norm", &s.layer_norm));
  }
  // Every weight, bias and coefficient: float32 of its shape when present.
  for (int32_t i = kInputToInputWeights; i < k.num_inputs(); ++i) {
    if (i == kOutputState || i == kCellState) continue;
    KILN_SDK_RETURN_IF_ERROR(
        CheckOperand(k, s, i, OperandShape(i, n_cell, n_input, n_out),
                     IsRequired(i), kRoles[i]));
  }

  return KILN_STATUS_OK;
}

// The states: variable tensors the kernel updates in place.
KilnStatus CheckStates(KernelContext& k, const LstmState& s) {
  const int32_t n_cell = s.n_cell, n_out = s.n_output;
  for (const auto& [index, role, size] :
       {std::tuple{kOutputState, "output_state", n_out},
        {kCellState, "cell_state", n_cell}}) {
    const sdk::Operand o = sdk::Input(index, role);
    const KilnTensorType type = !s.integer              ? KILN_TYPE_FLOAT32
                                : index == kOutputState ? KILN_TYPE_INT8
                                                        : KILN_TYPE_INT16;
    KILN_SDK_RETURN_IF_ERROR(sdk::ExpectType(k, o, {type}));
    const Tensor t = k.input(index);
    if (t.is_constant()) {
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT, InputText(k, index),
                    " is a constant; the LSTM state must be a variable "
                    "tensor");
    }
    KILN_SDK_RETURN_IF_ERROR(sdk::ExpectKnownShape(k, o));
    if (t.num_elements() != static_cast<int64_t>(s.n_batch) * size) {
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT, InputText(k, index),
                    " has shape ", sdk::ShapeString(t.shape()), "; ",
                    sdk::OpName(k), " needs ", s.n_batch, " x ", size,
                    " values (batch x ",
                    index == kOutputState ? "outputs" : "cells", ")");
    }
  }
  return KILN_STATUS_OK;
}

KilnStatus ReadShapes(KernelContext& k, LstmState& s) {
  KILN_SDK_RETURN_IF_ERROR(ReadSizes(k, s));
  KILN_SDK_RETURN_IF_ERROR(ReadParts(k, s));
  return CheckStates(k, s);
}

KilnStatus LstmPrepare(KernelContext& k, LstmState& s) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectInputCount(k, 20, 24));
  if (k.num_inputs() != 20 && k.num_inputs() != 24) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, sdk::OpName(k),
                  " expects 20 inputs, or 24 with layer normalization; the "
                  "node has ",
                  k.num_inputs());
  }
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectOutputCount(k, 1));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectPresent(k, sdk::Input(kInput)));
  s.integer = k.input(kInput).type() == KILN_TYPE_INT8;
  KILN_SDK_RETURN_IF_ERROR(ReadOptions(k, s));
  KILN_SDK_RETURN_IF_ERROR(ReadShapes(k, s));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectType(
      k, sdk::Output(0), {s.integer ? KILN_TYPE_INT8 : KILN_TYPE_FLOAT32}));
  std::vector<int32_t> out_shape = k.input(kInput).shape();
  out_shape.back() = s.n_output;
  if (s.integer) {
    KILN_SDK_RETURN_IF_ERROR(PrepareIntegerLstm(k, s, &s.integer_lstm));
    return k.Resize(k.output(0), out_shape);
  }
  s.gates.assign(static_cast<size_t>(kGates) * s.n_cell, 0.f);
  s.hidden.assign(static_cast<size_t>(s.n_cell), 0.f);
  if (s.hybrid) {
    s.q_input.assign(static_cast<size_t>(s.n_input), 0);
    s.q_state.assign(static_cast<size_t>(s.n_output), 0);
    s.q_hidden.assign(static_cast<size_t>(s.n_cell), 0);
  }
  return k.Resize(k.output(0), out_shape);
}

const float* Data(const KernelContext& k, int32_t index) {
  const Tensor t = k.input(index);
  return t.present() ? t.data<float>() : nullptr;
}

// result[r] += sum_c m[r][c] * v[c] for r < rows (TFLite's
// MatrixBatchVectorMultiplyAccumulate for one batch row).
void MatVecAccumulate(const float* m, int32_t rows, int32_t cols,
                      const float* v, float* result) {
  for (int32_t r = 0; r < rows; ++r) {
    const float* row = m + static_cast<int64_t>(r) * cols;
    float dot = 0.f;
    for (int32_t c = 0; c < cols; ++c) dot += row[c] * v[c];
    result[r] += dot;
  }
}

// In place: (x - mean) / sqrt(variance + 1e-8) (TFLite's
// MeanStddevNormalization).
void MeanStddevNormalize(float* x, int32_t n) {
  float sum = 0.f;
  for (int32_t i = 0; i < n; ++i) sum += x[i];
  const float mean = sum / static_cast<float>(n);
  float sum_diff_sq = 0.f;
  for (int32_t i = 0; i < n; ++i) {
    const float d = x[i] - mean;
    sum_diff_sq += d * d;
  }
  const float variance = sum_diff_sq / static_cast<float>(n);
  const float stddev_inv = 1.f / std::sqrt(variance + 1e-8f);
  for (int32_t i = 0; i < n; ++i) x[i] = (x[i] - mean) * stddev_inv;
}

void Clip(float* x, int32_t n, float clip) {
  for (int32_t i = 0; i < n; ++i) x[i] = std::max(-clip, std::min(clip, x[i]));
}

// A weight matrix: float32, or int8 with its scale (hybrid).
struct Matrix {
  const float* f = nullptr;
  const int8_t* q = nullptr;
  float scale = 0.f;
  const int32_t* row_sums = nullptr;  // asymmetric inputs only
  bool present() const { return f != nullptr || q != nullptr; }
};

// A float row as the hybrid products see it: quantized, or all zero (then
// LiteRT skips the product).
struct QuantizedRow {
  const int8_t* q = nullptr;
  float scale = 0.f;
  int32_t zero_point = 0;
  bool zero = true;
};

QuantizedRow QuantizeRow(const float* x, int32_t n, bool asymmetric,
                         int8_t* q) {
  QuantizedRow r;
  r.zero = AllZero(x, n);
  if (r.zero) return r;
  QuantizeHybridRow(x, n, asymmetric, q, &r.scale, &r.zero_point);
  r.q = q;
  return r;
}

// result[r] += m[r] . v: in float, or (hybrid) the int32 product of the
// quantized row scaled by its scale times the weights' (LiteRT's hybrid
// MatrixBatchVectorMultiplyAccumulate).
void Accumulate(const Matrix& m, int32_t rows, int32_t cols, const float* v,
                const QuantizedRow& qv, float* result) {
  if (m.f != nullptr) {
    MatVecAccumulate(m.f, rows, cols, v, result);
    return;
  }
  if (qv.zero) return;
  const float scale = qv.scale * m.scale;
  for (int32_t r = 0; r < rows; ++r) {
    const int8_t* row = m.q + static_cast<int64_t>(r) * cols;
    int32_t dot = 0;
    for (int32_t c = 0; c < cols; ++c) {
      dot += int32_t{row[c]} * int32_t{qv.q[c]};
    }
    if (qv.zero_point != 0) dot -= m.row_sums[r] * qv.zero_point;
    result[r] += static_cast<float>(dot) * scale;
  }
}

// The weights of one invoke (valid for that call only).
struct LstmWeights {
  Matrix input_to[kGates];
  Matrix recurrent_to[kGates];
  const float* cell_to[kGates];  // peephole; [kCellGate] unused
  const float* bias[kGates];
  const float* layer_norm[kGates];
  Matrix projection;
  const float* projection_bias;
};

// One time step for one batch row: reads x (n_input), h (n_output) and c
// (n_cell), updates c, writes the new output to `out` and to h.
void LstmStep(LstmState& s, const LstmWeights& w, const float* x, float* h,
              float* c, float* out) {
  const int32_t n_cell = s.n_cell;
  float* gates = s.gates.data();
  float* hidden = s.hidden.data();
  QuantizedRow qx, qh;
  if (s.hybrid) {
    qx = QuantizeRow(x, s.n_input, s.asymmetric, s.q_input.data());
    qh = QuantizeRow(h, s.n_output, s.asymmetric, s.q_state.data());
  }
  for (int g = 0; g < kGates; ++g) {
    if (g == kInputGate && s.cifg) continue;
    float* gate = gates + static_cast<int64_t>(g) * n_cell;
    // The output gate's peephole reads the updated cell, so it is finished
    // after the cell update below.
    for (int32_t i = 0; i < n_cell; ++i) {
      gate[i] = s.layer_norm ? 0.f : w.bias[g][i];
    }
    Accumulate(w.input_to[g], n_cell, s.n_input, x, qx, gate);
    Accumulate(w.recurrent_to[g], n_cell, s.n_output, h, qh, gate);
  }
  auto finish_gate = [&](int g) {
    float* gate = gates + static_cast<int64_t>(g) * n_cell;
    if (s.peephole && g != kCellGate) {
      for (int32_t i = 0; i < n_cell; ++i) gate[i] += w.cell_to[g][i] * c[i];
    }
    if (s.layer_norm) {
      MeanStddevNormalize(gate, n_cell);
      for (int32_t i = 0; i < n_cell; ++i) {
        gate[i] = gate[i] * w.layer_norm[g][i] + w.bias[g][i];
      }
    }
    if (g == kCellGate) {
      ApplyActivationInPlace(s.activation, gate, n_cell);
    } else {
      for (int32_t i = 0; i < n_cell; ++i) {
        gate[i] = 1.f / (1.f + std::exp(-gate[i]));
      }
    }
    return gate;
  };
  const float* input_gate = s.cifg ? nullptr : finish_gate(kInputGate);
  const float* forget_gate = finish_gate(kForgetGate);
  const float* cell_gate = finish_gate(kCellGate);
  for (int32_t i = 0; i < n_cell; ++i) {
    const float in = s.cifg ? 1.f - forget_gate[i] : input_gate[i];
    c[i] = c[i] * forget_gate[i] + cell_gate[i] * in;
  }
  if (s.cell_clip > 0.f) Clip(c, n_cell, s.cell_clip);
  const float* output_gate = finish_gate(kOutputGate);
  for (int32_t i = 0; i < n_cell; ++i) hidden[i] = c[i];
  ApplyActivationInPlace(s.activation, hidden, n_cell);
  for (int32_t i = 0; i < n_cell; ++i) hidden[i] *= output_gate[i];
  if (s.projection) {
    for (int32_t i = 0; i < s.n_output; ++i) {
      h[i] = s.projection_bias ? w.projection_bias[i] : 0.f;
    }
    QuantizedRow qhidden;
    if (s.hybrid) {
      qhidden = QuantizeRow(hidden, n_cell, s.asymmetric, s.q_hidden.data());
    }
    Accumulate(w.projection, s.n_output, n_cell, hidden, qhidden, h);
    if (s.proj_clip > 0.f) Clip(h, s.n_output, s.proj_clip);
  } else {
    for (int32_t i = 0; i < s.n_output; ++i) h[i] = hidden[i];
  }
  for (int32_t i = 0; i < s.n_output; ++i) out[i] = h[i];
}

// Matrix operand `index` at invoke; for int8 weights with asymmetric
// inputs, its row sums are computed into the state.
Matrix MatrixOf(const KernelContext& k, LstmState& s, int32_t index) {
  Matrix m;
  const Tensor t = k.input(index);
  if (!t.present()) return m;
  if (t.type() != KILN_TYPE_INT8) {
    m.f = t.data<float>();
    return m;
  }
  m.q = t.data<int8_t>();
  m.scale = s.scale[index];
  if (s.asymmetric && m.q != nullptr) {
    const int32_t rows = t.dim(0), cols = t.dim(1);
    std::vector<int32_t>& sums = s.row_sums[index];
    sums.assign(static_cast<size_t>(rows), 0);
    for (int32_t r = 0; r < rows; ++r) {
      for (int32_t c = 0; c < cols; ++c) {
        sums[static_cast<size_t>(r)] += m.q[static_cast<int64_t>(r) * cols + c];
      }
    }
    m.row_sums = sums.data();
  }
  return m;
}

// Peephole operand `index` as floats (hybrid: int8 times its scale, as
// LiteRT's VectorScalarMultiply).
const float* PeepholeOf(const KernelContext& k, LstmState& s, int32_t index,
                        int gate) {
  const Tensor t = k.input(index);
  if (!t.present() || t.type() != KILN_TYPE_INT8) return Data(k, index);
  const int8_t* q = t.data<int8_t>();
  if (q == nullptr) return nullptr;
  std::vector<float>& f = s.peephole_weights[gate];
  f.resize(static_cast<size_t>(s.n_cell));
  for (int32_t i = 0; i < s.n_cell; ++i) {
    f[static_cast<size_t>(i)] = s.scale[index] * static_cast<float>(q[i]);
  }
  return f.data();
}

KilnStatus LstmInvoke(KernelContext& k, LstmState& s) {
  if (s.integer) return InvokeIntegerLstm(k, s, s.integer_lstm);
  LstmWeights w{};
  for (int g = 0; g < kGates; ++g) {
    w.input_to[g] = MatrixOf(k, s, kInputToInputWeights + g);
    w.recurrent_to[g] = MatrixOf(k, s, kRecurrentToInputWeights + g);
    w.bias[g] = Data(k, kInputGateBias + g);
    w.layer_norm[g] = s.layer_norm ? Data(k, kInputLayerNorm + g) : nullptr;
  }
  w.cell_to[kInputGate] = PeepholeOf(k, s, kCellToInputWeights, kInputGate);
  w.cell_to[kForgetGate] = PeepholeOf(k, s, kCellToForgetWeights, kForgetGate);
  w.cell_to[kCellGate] = nullptr;
  w.cell_to[kOutputGate] = PeepholeOf(k, s, kCellToOutputWeights, kOutputGate);
  w.projection = MatrixOf(k, s, kProjectionWeights);
  w.projection_bias = Data(k, kProjectionBias);
  for (int g = s.cifg ? 1 : 0; g < kGates; ++g) {
    if (!w.input_to[g].present() || !w.recurrent_to[g].present() ||
        w.bias[g] == nullptr || (s.layer_norm && w.layer_norm[g] == nullptr) ||
        (s.peephole && g != kCellGate && w.cell_to[g] == nullptr)) {
      return k.Fail(KILN_STATUS_FAILED_PRECONDITION, sdk::OpName(k),
                    ": a weight, bias or coefficient tensor of gate ", g,
                    " has no data at invoke");
    }
  }
  const float* input = Data(k, kInput);
  float* h = k.input(kOutputState).data<float>();
  float* c = k.input(kCellState).data<float>();
  float* out = k.output(0).data<float>();
  if ((s.projection && !w.projection.present()) ||
      (s.projection_bias && w.projection_bias == nullptr) ||
      (input == nullptr && s.n_input > 0) || h == nullptr || c == nullptr ||
      out == nullptr) {
    if (static_cast<int64_t>(s.n_batch) * s.n_time == 0) return KILN_STATUS_OK;
    return k.Fail(KILN_STATUS_FAILED_PRECONDITION, sdk::OpName(k),
                  ": the input, a state, the projection or the output has "
                  "no data at invoke");
  }
  const LstmRowStrides r = RowStrides(s);
  for (int32_t t = 0; t < s.n_time; ++t) {
    for (int32_t b = 0; b < s.n_batch; ++b) {
      LstmStep(s, w, input + t * r.in_step + b * r.in_batch,
               h + static_cast<int64_t>(b) * s.n_output,
               c + static_cast<int64_t>(b) * s.n_cell,
               out + t * r.out_step + b * r.out_batch);
    }
  }
  return KILN_STATUS_OK;
}

}  // namespace

void RegisterLstmKernels(sdk::PluginDefinition& def) {
  // LSTM v1: float32 with the FULL kernel; v2: the FULL kernel (float or
  // full integer; the BASIC kernel type, also v2, is refused in prepare);
  // v3: hybrid (int8 weights, float activations); v4: hybrid with
  // asymmetric_quantize_inputs. UNIDIRECTIONAL_SEQUENCE_LSTM v1: float32;
  // v2, v3: hybrid, symmetric and asymmetric. A full-integer (int8 input)
  // LSTM runs at any of these versions: TFLite's op_version gives it 1 (its
  // quantizer writes 2), and the kernel dispatches on the tensor types, as
  // LiteRT's. Not declared: LSTM v5 (int16 activations),
  // UNIDIRECTIONAL_SEQUENCE_LSTM v4 (diagonal recurrent weights). The node
  // state holds only what prepare derives from the options, shapes and
  // constant weights (the recurrent state lives in the variable tensors),
  // so one per input signature is correct.
  for (const auto& [code, min_version, max_version] :
       {std::tuple{KILN_OP_LSTM, 1, 4},
        {KILN_OP_UNIDIRECTIONAL_SEQUENCE_LSTM, 1, 3}}) {
    def.AddKernel(sdk::StatePerShapeSignature(
        sdk::MakeStatefulKernel<LstmState, LstmPrepare, LstmInvoke>(
            code, min_version, max_version)));
  }
}

}  // namespace kiln::cpu::nn
