// Quantization bookkeeping shared by the integer kernels of the nn group
// (convolutions, fully connected, batch matmul): which integer scheme a node
// uses, its zero-point offsets, per-output-channel requantization multipliers
// and output clamp, derived exactly as TFLite's kernels derive them.
#ifndef KILN_PLUGINS_CPU_KERNELS_NN_QUANTIZED_COMMON_H_
#define KILN_PLUGINS_CPU_KERNELS_NN_QUANTIZED_COMMON_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/nn/int_gemm.h"
#include "kernels/nn/nn_common.h"
#include "kernels/quantization_util.h"

namespace kiln::cpu::nn {

// The integer schemes of TFLite's quantized kernels, named by activation
// type: int8 (int8 weights, int32 bias), uint8 (uint8 weights, int32 bias,
// per-tensor only) and int16x8 (int16 activations with zero point 0, int8
// weights, int64 bias).
enum class IntScheme { kInt8, kUint8, kInt16 };

// The scheme whose activation type is `type`; false for other types.
bool IntSchemeOf(KilnTensorType type, IntScheme* scheme);

// How one op derives its requantization (the rules differ between TFLite's
// kernels).
struct RequantRules {
  const char* op = "";
  // Output channels (the per-channel dimension of the filter) and the
  // filter dimension that per-channel scales run along.
  int32_t channels = 0;
  int32_t filter_axis = 0;
  int64_t activation = KILN_ACTIVATION_NONE;
  // int8 filters may have a non-zero zero point (it is applied when
  // `use_filter_offset`, ignored otherwise: TFLite's per-channel kernels
  // assume 0). False: refused, as CONV_2D does.
  bool int8_filter_zero_point_allowed = false;
  bool use_filter_offset = false;
  // Per-tensor multipliers use float(input_scale * filter_scale) / output
  // (TFLite's GetQuantizedConvolutionMultipler, with its bias-scale check)
  // instead of the per-channel double product.
  bool per_tensor_float_product = false;
  // Requantize in double, round(acc * input_scale * filter_scale /
  // output_scale), as TFLite's reference FULLY_CONNECTED kernels do, instead
  // of with the fixed-point multiplier.
  bool requant_in_double = false;
  // Refuse TANH / SIGN_BIT (FULLY_CONNECTED) instead of ignoring them.
  bool refuse_non_clamp_activation = false;
  // uint8 filters may be per-channel (TFLite allows it only for some ops).
  bool uint8_per_channel = false;
};

// The rules of TFLite's convolution kernels (CONV_2D, DEPTHWISE_CONV_2D,
// TRANSPOSE_CONV): per-channel filters along `filter_axis`, per-tensor
// multipliers of uint8 from the float product, the fused activation as a
// clamp. `int8_filter_zero_point_allowed` as in RequantRules.
RequantRules ConvolutionRules(const char* op, IntScheme scheme,
                              int32_t channels, int32_t filter_axis,
                              int64_t activation,
                              bool int8_filter_zero_point_allowed);

// Integer parameters of one node:
//   acc = sum (w + filter_offset) * (x + input_offset) + bias[c]
//   out = clamp(MultiplyByQuantizedMultiplier(acc, multipliers[c])
//               + output_offset, act_min, act_max)
// The fixed-point multipliers of a ChannelRequant split into lanes, one
// entry per output channel: multiplier, max(shift, 0), max(-shift, 0).
struct RequantLanes {
  std::vector<int32_t> multiplier, left_shift, right_shift;
};

struct ChannelRequant {
  IntScheme scheme = IntScheme::kInt8;
  int32_t input_offset = 0, filter_offset = 0, output_offset = 0;
  int32_t act_min = 0, act_max = 0;
  std::vector<QuantizedMultiplier> multipliers;  // one per output channel
  // RequantRules::requant_in_double: the real multipliers, one per channel.
  bool requant_in_double = false;
  std::vector<double> real_multipliers;
  // int16x8 without an int32 bias: TFLite accumulates in int64 and
  // requantizes with the 64-bit MultiplyByQuantizedMultiplier.
  bool wide_accumulator = false;
  RequantLanes lanes;  // `multipliers` as lanes (RequantizeRows)
};

// The operands of a convolution-like node.
struct ConvOperands {
  sdk::Operand input = sdk::Input(0);
  sdk::Operand filter = sdk::Input(1, "filter");
  sdk::Operand bias = sdk::Input(2, "bias");
  sdk::Operand output = sdk::Output(0);
};
inline constexpr ConvOperands kConvOperands{};
// TRANSPOSE_CONV: (output_shape, filter, input, optional bias).
inline constexpr ConvOperands kTransposeConvOperands{
    sdk::Input(2), sdk::Input(1, "filter"), sdk::Input(3, "bias"),
    sdk::Output(0)};

// True when optional input `o` is given.
inline bool OperandPresent(const KernelContext& k, sdk::Operand o) {
  return o.is_output ? o.index < k.num_outputs() && k.output(o.index).present()
                     : o.index < k.num_inputs() && k.input(o.index).present();
}

// Checks the types and quantization of the operands `ops` (input, filter,
// optional bias, output) for `scheme` and fills *out. Refuses, with a
// message naming the op and tensor, exactly what TFLite's kernels refuse
// (filter and bias types, int16 zero points, channel counts, activation
// bounds overflowing int32).
KilnStatus PrepareChannelRequant(KernelContext& k, const RequantRules& rules,
                                 IntScheme scheme, const ConvOperands& ops,
                                 ChannelRequant* out);

// round(acc * m) in double as TFLite's reference kernels compute it: a
// result outside int32 becomes INT32_MIN, what the x86 conversion those
// kernels rely on yields.
inline int32_t RoundToInt32LikeTflite(double scaled) {
  const double r = std::round(scaled);
  return r >= -2147483648.0 && r < 2147483648.0
             ? static_cast<int32_t>(r)
             : std::numeric_limits<int32_t>::min();
}

// Scales an accumulator of output channel `c` to the output type's range.
template <typename Acc>
int32_t RequantizeChannel(Acc acc, int32_t c, const ChannelRequant& p) {
  const size_t i = static_cast<size_t>(c);
  const int32_t v =
      (p.requant_in_double
           ? RoundToInt32LikeTflite(static_cast<double>(acc) *
                                    p.real_multipliers[i])
           : MultiplyByQuantizedMultiplier(acc, p.multipliers[i])) +
      p.output_offset;
  return std::min(p.act_max, std::max(p.act_min, v));
}

// Sets q.lanes from q.multipliers (PrepareChannelRequant does it; a kernel
// that sets the multipliers itself calls it after).
void FillRequantLanes(ChannelRequant& q);

// Bias values of output channel c as the accumulator type (0 without bias).
struct BiasView {
  const int32_t* i32 = nullptr;
  const int64_t* i64 = nullptr;
  int64_t at(int32_t c) const {
    return i64 != nullptr ? i64[c] : (i32 != nullptr ? i32[c] : 0);
  }
};
// Reads the bias data of `bias` (absent: all zero). Fails when a present
// bias has no data at invoke.
KilnStatus ReadBias(KernelContext& k, sdk::Operand bias, BiasView* out);

// The tensors of a conv-like node at invoke (operands `ops`), with their
// buffers checked to hold their elements.
struct ConvLikeBuffers {
  Tensor input, filter, output;
  BiasView bias;
};
KilnStatus ReadConvLikeBuffers(KernelContext& k, const ConvOperands& ops,
                               ConvLikeBuffers* out);

// Calls run(T{}) with T the storage type of `scheme` (int8_t, uint8_t or
// int16_t).
template <typename Fn>
void ForScheme(IntScheme scheme, Fn&& run) {
  switch (scheme) {
    case IntScheme::kInt8:
      run(int8_t{});
      return;
    case IntScheme::kUint8:
      run(uint8_t{});
      return;
    case IntScheme::kInt16:
      run(int16_t{});
      return;
  }
}

// Wrapping int32 addition (TFLite's int32 accumulators wrap on overflow).
inline int32_t WrappingAdd(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) +
                              static_cast<uint32_t>(b));
}

// Converts the integers at `src` to int16 with `offset` added (x +
// input_offset fits int16 for every scheme).
template <typename T>
void ToInt16WithOffset(const T* src, int64_t n, int32_t offset, int16_t* dst) {
  for (int64_t i = 0; i < n; ++i) {
    dst[i] = static_cast<int16_t>(static_cast<int32_t>(src[i]) + offset);
  }
}

// Accumulator scratch of RequantizedGemm, sized for `rows` x `n` outputs.
struct IntGemmScratch {
  std::vector<int32_t> acc;
  std::vector<int64_t> acc64;
  void Reserve(int32_t rows, int32_t n, bool wide) {
    acc.assign(static_cast<size_t>(rows) * n, 0);
    acc64.assign(wide ? acc.size() : 0, 0);
  }
};

// out[r][c] = RequantizeChannel(A[r] . W[c] + bias[c], c) for r < rows:
// A is int16 with row stride w.k_padded() (offsets folded in, pad column
// zero); out has row stride ldo. `wide` accumulates in int64 (int16x8 with
// an int64 bias, as TFLite's 64-bit accumulator), else in wrapping int32.
// scratch must be reserved for at least `rows` rows.
template <typename T>
void RequantizedGemm(const int16_t* a, int32_t rows, const PackedInt16Matrix& w,
                     const BiasView& bias, const ChannelRequant& q, bool wide,
                     IntGemmScratch& scratch, T* out, int64_t ldo);

}  // namespace kiln::cpu::nn

#endif  // KILN_PLUGINS_CPU_KERNELS_NN_QUANTIZED_COMMON_H_
