// The full-integer LSTM cell of TFLite's lstm_eval.cc (EvalInteger8x8_16):
// int8 input, weights and output state, int16 cell state, int32 biases,
// int16 layer-norm and peephole weights, gates in int16 (Q3.12 into the
// activations, Q0.15 out). The effective scales come from the tensors'
// quantization and from the node's intermediate tensors (extension API
// 1.3): the four layer-norm inputs (0..3, only with layer normalization)
// and the hidden state (4). Every step is integer arithmetic identical to
// LiteRT's reference kernels (gemmlowp rounding, saturation, the int16
// fixed-point sigmoid and tanh, the integer layer normalization), so
// outputs and states agree bit for bit.
#ifndef KILN_PLUGINS_CPU_KERNELS_NN_LSTM_INTEGER_H_
#define KILN_PLUGINS_CPU_KERNELS_NN_LSTM_INTEGER_H_

#include <cstdint>
#include <vector>

#include "kernels/nn/nn_common.h"
#include "kernels/quantization_util.h"

namespace kiln::cpu::nn {

// Operand indices, as in TFLite's lstm_shared.h.
enum : int32_t {
  kInput = 0,
  kInputToInputWeights = 1,  // optional (CIFG when absent)
  kInputToForgetWeights = 2,
  kInputToCellWeights = 3,
  kInputToOutputWeights = 4,
  kRecurrentToInputWeights = 5,  // optional (CIFG when absent)
  kRecurrentToForgetWeights = 6,
  kRecurrentToCellWeights = 7,
  kRecurrentToOutputWeights = 8,
  kCellToInputWeights = 9,  // optional (peephole)
  kCellToForgetWeights = 10,
  kCellToOutputWeights = 11,
  kInputGateBias = 12,  // optional (CIFG when absent)
  kForgetGateBias = 13,
  kCellGateBias = 14,
  kOutputGateBias = 15,
  kProjectionWeights = 16,  // optional
  kProjectionBias = 17,     // optional
  kOutputState = 18,        // variable
  kCellState = 19,          // variable
  kInputLayerNorm = 20,     // optional (layer norm LSTM, inputs 20..23)
  kForgetLayerNorm = 21,
  kCellLayerNorm = 22,
  kOutputLayerNorm = 23,
};

// The four gates, in the order of their weight operands.
constexpr int kLstmGates = 4;
enum LstmGate {
  kInputGate = 0,
  kForgetGate = 1,
  kCellGate = 2,
  kOutputGate = 3
};

// Sizes and optional parts of an LSTM node, as its prepare reads them.
struct LstmLayout {
  bool sequence = false;  // UNIDIRECTIONAL_SEQUENCE_LSTM
  bool time_major = true;
  int32_t n_batch = 0, n_time = 1, n_input = 0, n_cell = 0, n_output = 0;
  bool cifg = false, peephole = false, layer_norm = false;
  bool projection = false, projection_bias = false;
  float cell_clip = 0.f, proj_clip = 0.f;
};

// Element offsets of row (batch b, step t) of the input and output:
// t * *_step + b * *_batch.
struct LstmRowStrides {
  int64_t in_step = 0, in_batch = 0, out_step = 0, out_batch = 0;
};
inline LstmRowStrides RowStrides(const LstmLayout& l) {
  LstmRowStrides r;
  r.in_step = l.time_major ? int64_t{l.n_batch} * l.n_input : l.n_input;
  r.in_batch = l.time_major ? l.n_input : int64_t{l.n_time} * l.n_input;
  r.out_step = l.time_major ? int64_t{l.n_batch} * l.n_output : l.n_output;
  r.out_batch = l.time_major ? l.n_output : int64_t{l.n_time} * l.n_output;
  return r;
}

// What prepare derives for the integer cell: multipliers, zero points,
// clips and the effective biases (zero point times weight row sums, plus
// the gate bias when there is no layer normalization).
struct IntegerLstm {
  QuantizedMultiplier input_to[kLstmGates], recurrent_to[kLstmGates];
  QuantizedMultiplier cell_to[kLstmGates];     // peephole
  QuantizedMultiplier layer_norm[kLstmGates];  // coefficient scales
  int32_t variance_guard[kLstmGates] = {};
  QuantizedMultiplier hidden, projection;
  // Subtracted from the requantized hidden state (see prepare).
  int32_t hidden_offset = 0;
  int32_t output_state_zero_point = 0;
  int32_t cell_scale_log2 = 0;  // the cell state's scale is 2^cell_scale_log2
  int16_t cell_clip = 0;        // 0: none
  int8_t proj_clip = 0;         // 0: none
  std::vector<int32_t> input_bias[kLstmGates], recurrent_bias[kLstmGates];
  std::vector<int32_t> projection_bias;
  // Scratch for one batch row.
  std::vector<int16_t> gates;  // kLstmGates * n_cell
  std::vector<int16_t> cell_tanh;
  std::vector<int8_t> hidden_q;
};

// Checks the integer operands' quantization, reads the intermediates and
// computes `s` as LiteRT's PopulateQuantizedLstmParams8x8_16 and
// PopulatePrecomputedZPTimesWeightsWithBias do. Refuses, naming the cause,
// what is not implemented (12 intermediates: the 8x8_8 kernel).
KilnStatus PrepareIntegerLstm(KernelContext& k, const LstmLayout& layout,
                              IntegerLstm* s);

// Runs the cell over every time step and batch row; the states (inputs 18
// and 19) are updated in place.
KilnStatus InvokeIntegerLstm(KernelContext& k, const LstmLayout& layout,
                             IntegerLstm& s);

}  // namespace kiln::cpu::nn

#endif  // KILN_PLUGINS_CPU_KERNELS_NN_LSTM_INTEGER_H_
