// Dynamic-range ("hybrid") kernels: float activations and output, int8
// weights with float scales. As LiteRT's hybrid kernels do, the activations
// are quantized to int8 on the fly (per row, per batch or per image), the
// products summed exactly in int32 and the sums scaled back to float.
//
// The float steps (scale of a row, rounding, the order of the scale
// products) follow LiteRT's x86-64 builds, which quantize through the
// NEON-on-SSE tensor utilities, so that results agree with LiteRT to the
// last bit or within a rounding of a float product (see docs of each op).
#ifndef KILN_PLUGINS_CPU_KERNELS_NN_HYBRID_H_
#define KILN_PLUGINS_CPU_KERNELS_NN_HYBRID_H_

#include <cstdint>
#include <vector>

#include "kernels/nn/conv_geometry.h"
#include "kernels/nn/int_gemm.h"
#include "kernels/nn/nn_common.h"
#include "kernels/nn/quantized_common.h"

namespace kiln::cpu::nn {

// Quantizes n floats to int8 as LiteRT's Symmetric/AsymmetricQuantizeFloats:
// symmetric: scale = max|x| / 127, q in [-127, 127], zero point 0;
// asymmetric: the range [min(0, x), max(0, x)] over [-128, 127] with a
// nudged zero point. All-zero input: scale 1, q = 0.
void QuantizeHybridRow(const float* x, int32_t n, bool asymmetric, int8_t* q,
                       float* scale, int32_t* zero_point);

// True when all n values are 0 (LiteRT's hybrid FULLY_CONNECTED skips the
// product then).
bool AllZero(const float* x, int64_t n);

// The scales of int8 hybrid weights, one per output channel (a per-tensor
// scale repeated). `per_channel`: the model has more than one scale.
struct HybridWeights {
  std::vector<float> scales;
  bool per_channel = false;
};

// Reads the quantization of int8 `weights` with `channels` output channels
// along `axis`. LiteRT's hybrid kernels ignore weight zero points; so does
// this (they are 0 in converter output).
KilnStatus ReadHybridWeights(KernelContext& k, sdk::Operand weights,
                             int32_t channels, int32_t axis,
                             HybridWeights* out);

// Fails unless output 0 is float32 and `bias`, when present, is float32 of
// shape [channels].
KilnStatus ExpectHybridFloatTensors(KernelContext& k, sdk::Operand bias,
                                    int32_t channels);

// The buffers of a hybrid node at invoke (bias null when absent); fails
// when one is missing.
struct HybridBuffers {
  const float* input = nullptr;
  const int8_t* weights = nullptr;
  const float* bias = nullptr;
  float* output = nullptr;
};
KilnStatus ReadHybridBuffers(KernelContext& k, const ConvOperands& ops,
                             HybridBuffers* out);

// Sum of each of `rows` rows of `depth` int8 values.
void WeightRowSums(const int8_t* w, int32_t rows, int32_t depth,
                   std::vector<int32_t>* out);

// ---- FULLY_CONNECTED (versions 3, 9 and 12) -----------------------------

struct HybridFullyConnectedState {
  int32_t rows = 0, depth = 0, units = 0;
  bool asymmetric = false;  // asymmetric_quantize_inputs
  int64_t activation = KILN_ACTIVATION_NONE;
  HybridWeights weights;
  PackedInt16Matrix packed;
  std::vector<int32_t> row_sums;  // per unit, for asymmetric inputs
  bool pack_in_invoke = false;    // weights not constant
  int32_t chunk_rows = 0;
  std::vector<int8_t> quantized;        // one row
  std::vector<int16_t> lhs;             // chunk_rows x packed.k_padded()
  std::vector<float> row_scale;         // per chunk row
  std::vector<int32_t> row_zero_point;  // per chunk row
  IntGemmScratch scratch;
};

KilnStatus HybridFullyConnectedPrepare(KernelContext& k,
                                       HybridFullyConnectedState& s);
KilnStatus HybridFullyConnectedInvoke(KernelContext& k,
                                      HybridFullyConnectedState& s);

// ---- CONV_2D (versions 2 and 5) --------------------------------------------

// LiteRT quantizes each input image as a whole: symmetric when the filter
// has one scale (or all its scales are equal), asymmetric otherwise.
struct HybridConvState {
  ConvGeometry g;
  HybridWeights weights;
  bool per_channel = false;  // the filter's scales differ
  float clamp_lo = 0.f, clamp_hi = 0.f;
  PackedInt16Matrix packed;
  bool pack_in_invoke = false;  // filter not constant
  int32_t chunk_rows = 0;
  std::vector<int8_t> image;    // one quantized input image
  std::vector<int16_t> im2col;  // chunk_rows x packed.k_padded()
  IntGemmScratch scratch;       // chunk_rows x out_c
};

KilnStatus HybridConvPrepare(KernelContext& k, HybridConvState& s);
KilnStatus HybridConvInvoke(KernelContext& k, HybridConvState& s);

// ---- DEPTHWISE_CONV_2D (versions 4 and 6) -----------------------------------

struct HybridDepthwiseState {
  ConvGeometry g;
  HybridWeights weights;
  float clamp_lo = 0.f, clamp_hi = 0.f;
  std::vector<int16_t> filter;  // taps x out_c
  bool pack_in_invoke = false;
  std::vector<int8_t> quantized;  // one input image
  std::vector<int16_t> image;     // the same, zero point removed
  std::vector<int32_t> acc;       // out_c
};

KilnStatus HybridDepthwisePrepare(KernelContext& k, HybridDepthwiseState& s);
KilnStatus HybridDepthwiseInvoke(KernelContext& k, HybridDepthwiseState& s);

// ---- TRANSPOSE_CONV (version 2 with a float input) --------------------------

// LiteRT (reference_ops::HybridTransposeConv) quantizes each input image
// asymmetrically and scatters every product as a float term,
// float(w * (q - z)) * filter_scale[c] * s, into the output in input order;
// Kiln keeps that order, so the float sums agree bit for bit.
struct HybridTransposeConvState {
  ConvGeometry g;
  bool shaped = false;  // output_shape values known
  HybridWeights weights;
  float clamp_lo = 0.f, clamp_hi = 0.f;
  std::vector<int16_t> filter;  // [tap][in_c][out_c]
  bool pack_in_invoke = false;
  std::vector<int8_t> quantized;  // one input image
  std::vector<float> terms;       // taps x out_c, one input value's
};

KilnStatus HybridTransposeConvPrepare(KernelContext& k,
                                      HybridTransposeConvState& s);
KilnStatus HybridTransposeConvInvoke(KernelContext& k,
                                     HybridTransposeConvState& s);

}  // namespace kiln::cpu::nn

#endif  // KILN_PLUGINS_CPU_KERNELS_NN_HYBRID_H_
