#include "kernels/nn/softmax_quantized.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/nn/parallel.h"

namespace kiln::cpu::nn {
namespace {

constexpr const char* kOp = "SOFTMAX";
constexpr int kScaledDiffIntegerBits = kSoftmaxScaledDiffIntegerBits;
constexpr int kAccumulationIntegerBits = kSoftmaxAccumulationIntegerBits;

// The fixed output quantization TFLite requires (scale within `tolerance`
// times itself).
KilnStatus CheckOutputQuantization(KernelContext& k, const Tensor& out,
                                   const TensorQuantization& q, int32_t zp,
                                   float scale, float tolerance = 0.001f) {
  if (q.zero_points[0] != zp ||
      std::abs(q.scales[0] - scale) > tolerance * scale) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT,
                  sdk::Describe(k, sdk::Output(0)), " has scale ", q.scales[0],
                  " and zero point ", q.zero_points[0], "; a quantized ",
                  sdk::TypeName(out.type()), " ", sdk::OpName(k),
                  " output needs scale ", scale, " and zero point ", zp,
                  " (as TFLite requires)");
  }
  return KILN_STATUS_OK;
}

// Rows of the last axis: *rows x *depth; false when there are none.
bool LastAxisRows(const Tensor& input, int64_t* rows, int32_t* depth) {
  const std::vector<int32_t> shape = input.shape();
  *depth = shape.empty() ? 1 : shape.back();
  if (*depth == 0) return false;
  *rows = DimProduct(shape, 0, shape.size()) / *depth;
  return true;
}

// int8 / uint8 input and output of one type, per-tensor quantization, any
// rank >= 1; reads the input quantization and checks the output's.
KilnStatus PrepareFixedOutput(KernelContext& k, float out_scale,
                              int32_t int8_zp, int32_t uint8_zp,
                              float tolerance, TensorQuantization* qin) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectArity(k, 1, 1));
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectType(k, sdk::Input(0), {KILN_TYPE_INT8, KILN_TYPE_UINT8}));
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectSameType(k, sdk::Output(0), sdk::Input(0)));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectKnownShape(k, sdk::Input(0)));
  const Tensor input = k.input(0), out = k.output(0);
  if (input.rank() < 1) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, sdk::Describe(k, sdk::Input(0)),
                  " must have rank >= 1 (the op normalises the last axis)");
  }
  TensorQuantization qout;
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ReadQuantization(k, sdk::Input(0), sdk::kPerTensor, qin));
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ReadQuantization(k, sdk::Output(0), sdk::kPerTensor, &qout));
  KILN_SDK_RETURN_IF_ERROR(CheckOutputQuantization(
      k, out, qout, input.type() == KILN_TYPE_INT8 ? int8_zp : uint8_zp,
      out_scale, tolerance));
  return k.Resize(out, input.shape());
}

// Runs run(T{}) with T the 8-bit storage type of `type`.
// Runs `rows_kernel(in, out, rows, depth)` on input 0 and output 0, both
// int8 or both uint8, viewed as rows along the last axis.
template <typename Fn>
KilnStatus RunOn8BitRows(KernelContext& k, Fn&& rows_kernel) {
  const Tensor input = k.input(0);
  int64_t rows = 0;
  int32_t depth = 0;
  if (!LastAxisRows(input, &rows, &depth)) return KILN_STATUS_OK;
  void* in = nullptr;
  void* out = nullptr;
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, sdk::Input(0), &in));
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, sdk::Output(0), &out));
  if (input.type() == KILN_TYPE_INT8) {
    rows_kernel(static_cast<const int8_t*>(in), static_cast<int8_t*>(out), rows,
                depth);
  } else {
    rows_kernel(static_cast<const uint8_t*>(in), static_cast<uint8_t*>(out),
                rows, depth);
  }
  return KILN_STATUS_OK;
}

// TFLite's LogSoftmaxQuantized (reference_integer_ops / reference_ops), with
// the per-difference steps looked up (softmax_exp_table.h).
template <typename T>
void LogSoftmax8(const QuantizedLogSoftmaxState& s, const T* in, T* out,
                 int64_t rows, int32_t depth) {
  using Accum = Fixed32<kAccumulationIntegerBits>;
  constexpr int kOutputIntegerBits = 4;
  constexpr int32_t kMin = std::numeric_limits<T>::min();
  constexpr int32_t kMax = std::numeric_limits<T>::max();
  constexpr int32_t kZeroPoint = kMax;  // 127 or 255: output range [-16, 0]
  const int32_t* scaled_table = s.scaled_table.data();
  const int32_t* exp_accum = s.exp_accum_table.data();
  for (int64_t r = 0; r < rows; ++r) {
    const T* x = in + r * depth;
    T* y = out + r * depth;
    const int32_t max_in_row = *std::max_element(x, x + depth);
    // x[c] + offset: the table index of x[c]'s difference to the maximum.
    const int32_t offset = kSoftmaxMaxDiff - max_in_row;
    Accum sum = Accum::FromRaw(0);
    for (int32_t c = 0; c < depth; ++c) {
      sum = sum + Accum::FromRaw(exp_accum[x[c] + offset]);
    }
    const int32_t log_sum =
        LogXForXGreaterThanOrEqualTo1<kScaledDiffIntegerBits>(sum).raw;
    const int32_t adjusted_diff_min = std::max(
        s.diff_min - 1,
        MultiplyByQuantizedMultiplier(
            static_cast<int32_t>(static_cast<uint32_t>(log_sum) + 0x80000000u),
            s.reverse_multiplier));
    for (int32_t c = 0; c < depth; ++c) {
      const int32_t diff = static_cast<int32_t>(x[c]) - max_in_row;
      if (diff <= adjusted_diff_min) {
        y[c] = static_cast<T>(kMin);
        continue;
      }
      const int32_t v = RoundingDivideByPOT(
                            scaled_table[x[c] + offset] - log_sum,
                            31 - kScaledDiffIntegerBits - kOutputIntegerBits) +
                        kZeroPoint;
      y[c] = static_cast<T>(std::max(std::min(v, kMax), kMin));
    }
  }
}

// TFLite's L2Normalization (int8: reference_integer_ops, uint8:
// reference_ops).
template <typename T>
void L2Norm8(int32_t zero_point, const T* in, T* out, int64_t rows,
             int32_t depth) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* x = in + r * depth;
    T* y = out + r * depth;
    // TFLite sums in int32; a row long enough to overflow wraps here
    // (defined) instead of being undefined behaviour.
    uint32_t squares = 0;
    for (int32_t c = 0; c < depth; ++c) {
      const int32_t d = x[c] - zero_point;
      squares += static_cast<uint32_t>(d * d);
    }
    const QuantizedMultiplier inv =
        InvSqrtQuantizedMultiplier(static_cast<int32_t>(squares), -1);
    for (int32_t c = 0; c < depth; ++c) {
      const int32_t d = x[c] - zero_point;
      int32_t v = 0;
      if constexpr (std::is_same_v<T, int8_t>) {
        // Output in 1/128 steps: the shift gains 7.
        v = MultiplyByQuantizedMultiplier(
            d, QuantizedMultiplier{inv.multiplier, inv.shift + 7});
      } else {
        v = 128 + RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(
                                          128 * d, inv.multiplier),
                                      -inv.shift);
      }
      y[c] = static_cast<T>(std::max<int32_t>(
          std::numeric_limits<T>::min(),
          std::min<int32_t>(std::numeric_limits<T>::max(), v)));
    }
  }
}

KilnStatus CheckTypes(KernelContext& k, const Tensor& input,
                      const Tensor& out) {
  const KilnTensorType in = input.type(), o = out.type();
  const bool ok =
      (in == KILN_TYPE_INT8 && (o == KILN_TYPE_INT8 || o == KILN_TYPE_INT16)) ||
      (in == KILN_TYPE_UINT8 &&
       (o == KILN_TYPE_UINT8 || o == KILN_TYPE_INT16)) ||
      (in == KILN_TYPE_INT16 && o == KILN_TYPE_INT16);
  if (!ok) {
    return k.Fail(KILN_STATUS_UNIMPLEMENTED, kOp, ": input '", input.name(),
                  "' of type ", sdk::TypeName(in), " and output '", out.name(),
                  "' of type ", sdk::TypeName(o),
                  " are not a supported pair (INT8 or UINT8 to the same type "
                  "or INT16; INT16 to INT16)");
  }
  return KILN_STATUS_OK;
}

double Exp(double x) { return std::exp(x); }
double OneOverOnePlusX(double x) { return 1.0 / (1.0 + x); }

KilnStatus PrepareInt16(KernelContext& k, const TensorQuantization& qin,
                        float beta, QuantizedSoftmaxState& s) {
  const Tensor input = k.input(0);
  if (qin.zero_points[0] != 0) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, kOp, ": input '", input.name(),
                  "' has zero point ", qin.zero_points[0],
                  "; int16 activations must be symmetric (zero point 0)");
  }
  constexpr double kRange = 65535.0;
  s.exp_lut.assign(513, 0);
  s.reciprocal_lut.assign(513, 0);
  PopulateInt16Lut(10.0 / kRange, 32767, 2.0 / kRange, 0, &Exp,
                   s.exp_lut.data());
  PopulateInt16Lut(1.0 / kRange, -32768, 2.0 / kRange, 0, &OneOverOnePlusX,
                   s.reciprocal_lut.data());
  // TFLite multiplies the float scale by the float beta first.
  const float scale_beta = qin.scales[0] * beta;
  s.input_multiplier =
      QuantizeMultiplier(static_cast<double>(scale_beta) / (10.0 / kRange));
  return KILN_STATUS_OK;
}

// TFLite's reference Softmax<In, Out> for 8-bit input, with the fixed-point
// exp of each difference looked up (softmax_exp_table.h: differences below
// diff_min have exp 0, so they add nothing and output the minimum).
template <typename In, typename Out>
void Softmax8(const QuantizedSoftmaxState& s, const In* in, Out* out,
              int64_t rows, int32_t depth) {
  using Accum = Fixed32<kAccumulationIntegerBits>;
  constexpr int32_t kOutMin = std::numeric_limits<Out>::min();
  constexpr int32_t kOutMax = std::numeric_limits<Out>::max();
  const int32_t* exp_table = s.exp_table.data();
  const int32_t* exp_accum = s.exp_accum_table.data();
  for (int64_t r = 0; r < rows; ++r) {
    const In* x = in + r * depth;
    Out* y = out + r * depth;
    In max_in_row = std::numeric_limits<In>::min();
    for (int32_t c = 0; c < depth; ++c) max_in_row = std::max(max_in_row, x[c]);
    // x[c] + offset: the table index of x[c]'s difference to the maximum.
    const int32_t offset = kSoftmaxMaxDiff - max_in_row;
    Accum sum = Accum::FromRaw(0);
    for (int32_t c = 0; c < depth; ++c) {
      sum = sum + Accum::FromRaw(exp_accum[x[c] + offset]);
    }
    int num_bits_over_unit = 0;
    const int32_t shifted_scale =
        GetReciprocal(sum.raw, kAccumulationIntegerBits, &num_bits_over_unit);
    const int exponent =
        std::min(31, std::max(0, num_bits_over_unit + 31 -
                                     static_cast<int>(sizeof(Out) * 8)));
    for (int32_t c = 0; c < depth; ++c) {
      const int32_t unsat =
          RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(
                                  shifted_scale, exp_table[x[c] + offset]),
                              exponent);
      y[c] = static_cast<Out>(
          std::max(kOutMin, std::min(kOutMax, unsat + kOutMin)));
    }
  }
}

// TFLite's optimized_ops::Softmax<In, Out> over the float table (x86-64
// build: uint8 outputs round by adding 0.5 and truncating, others with
// std::round).
template <typename In, typename Out>
void Softmax8FloatTable(const QuantizedSoftmaxState& s, const In* in, Out* out,
                        int64_t rows, int32_t depth) {
  constexpr int32_t kOutMin = std::numeric_limits<Out>::min();
  constexpr int32_t kOutMax = std::numeric_limits<Out>::max();
  for (int64_t r = 0; r < rows; ++r) {
    const In* x = in + r * depth;
    Out* y = out + r * depth;
    int32_t max_in_row = std::numeric_limits<In>::min();
    for (int32_t c = 0; c < depth; ++c) {
      max_in_row = std::max(max_in_row, static_cast<int32_t>(x[c]));
    }
    const float* table = s.float_table.data() + (255 - max_in_row);
    float sum_exp = 0.f;
    for (int32_t c = 0; c < depth; ++c) sum_exp += table[x[c]];
    const float inv_sum_exp = 1.f / (sum_exp * s.output_scale);
    for (int32_t c = 0; c < depth; ++c) {
      const float prob = table[x[c]] * inv_sum_exp;
      const int32_t rounded = std::is_same_v<Out, uint8_t>
                                  ? static_cast<int32_t>(prob + 0.5f)
                                  : static_cast<int32_t>(std::round(prob));
      y[c] = static_cast<Out>(
          std::max(kOutMin, std::min(kOutMax, rounded + s.output_zero_point)));
    }
  }
}

void PrepareFloatTable(const TensorQuantization& qin,
                       const TensorQuantization& qout, float beta,
                       QuantizedSoftmaxState& s) {
  const float scale = -qin.scales[0] * beta;
  s.float_table.assign(256, 0.f);
  for (int32_t v = 0; v <= 255; ++v) {
    s.float_table[static_cast<size_t>(255 - v)] =
        std::exp(scale * static_cast<float>(v));
  }
  s.output_scale = qout.scales[0];
  s.output_zero_point = qout.zero_points[0];
}

const Softmax8RowKernels& RowKernels() {
  static const Softmax8RowKernels kernels = Softmax8RowKernelsAvx2();
  return kernels;
}

template <typename In, typename Out>
void Softmax8Any(const QuantizedSoftmaxState& s, const In* in, Out* out,
                 int64_t rows, int32_t depth) {
  if constexpr (std::is_same_v<In, Out>) {
    void (*rows_kernel)(const QuantizedSoftmaxState&, const In*, In*, int64_t,
                        int32_t) = nullptr;
    if constexpr (std::is_same_v<In, int8_t>) {
      rows_kernel = RowKernels().int8;
    } else {
      rows_kernel = RowKernels().uint8;
    }
    if (rows_kernel != nullptr && s.float_table.empty()) {
      rows_kernel(s, in, out, rows, depth);
      return;
    }
  }
  if (s.float_table.empty()) {
    Softmax8(s, in, out, rows, depth);
  } else {
    Softmax8FloatTable(s, in, out, rows, depth);
  }
}

// Fills s.pair_table by running the row kernel on one row of every
// difference x[1] - x[0] in [-255, 255].
template <typename In, typename Out>
void FillPairTable(QuantizedSoftmaxState& s) {
  constexpr int32_t kDiffs = 511;
  constexpr int32_t kMin = std::numeric_limits<In>::min();
  std::vector<In> in(2 * kDiffs);
  std::vector<Out> out(2 * kDiffs);
  for (int32_t i = 0; i < kDiffs; ++i) {
    const int32_t d = i - 255;
    in[2 * i] = static_cast<In>(kMin + std::max(0, -d));
    in[2 * i + 1] = static_cast<In>(kMin + std::max(0, d));
  }
  if (s.float_table.empty()) {
    Softmax8(s, in.data(), out.data(), kDiffs, 2);
  } else {
    Softmax8FloatTable(s, in.data(), out.data(), kDiffs, 2);
  }
  s.pair_table.resize(out.size() * sizeof(Out));
  std::memcpy(s.pair_table.data(), out.data(), s.pair_table.size());
}

// Rows of 2 through s.pair_table.
template <typename In, typename Out>
void Softmax8Pairs(const QuantizedSoftmaxState& s, const In* in, Out* out,
                   int64_t rows) {
  const uint8_t* table = s.pair_table.data();
  constexpr size_t kPair = 2 * sizeof(Out);
  for (int64_t r = 0; r < rows; ++r) {
    const int32_t i = static_cast<int32_t>(in[2 * r + 1]) - in[2 * r] + 255;
    std::memcpy(out + 2 * r, table + i * kPair, kPair);
  }
}

template <typename In, typename Out>
void Softmax8Rows(const QuantizedSoftmaxState& s, const In* in, Out* out,
                  int64_t rows, int32_t depth) {
  if (depth == 2 && !s.pair_table.empty()) {
    Softmax8Pairs(s, in, out, rows);
  } else {
    Softmax8Any(s, in, out, rows, depth);
  }
}

// The pair table of an 8-bit input whose last axis is 2 (none otherwise).
void PreparePairTable(const Tensor& input, QuantizedSoftmaxState& s) {
  s.pair_table.clear();
  if (input.rank() < 1 || input.dim(input.rank() - 1) != 2) return;
  if (s.input_type == KILN_TYPE_INT8) {
    if (s.output_type == KILN_TYPE_INT8) {
      FillPairTable<int8_t, int8_t>(s);
    } else {
      FillPairTable<int8_t, int16_t>(s);
    }
  } else if (s.input_type == KILN_TYPE_UINT8) {
    if (s.output_type == KILN_TYPE_UINT8) {
      FillPairTable<uint8_t, uint8_t>(s);
    } else {
      FillPairTable<uint8_t, int16_t>(s);
    }
  }
}

// Runs rows(in, out, count, depth) over the rows of the last axis, split
// across the pool.
template <typename In, typename Out, typename Fn>
KilnStatus SplitRows(KernelContext& k, const In* in, Out* out, int64_t rows,
                     int32_t depth, Fn&& fn, int64_t row_cost = 0) {
  return ParallelRows(k, rows, row_cost > 0 ? row_cost : int64_t{4} * depth,
                      [&](int64_t begin, int64_t end, int32_t) {
                        fn(in + begin * depth, out + begin * depth, end - begin,
                           depth);
                      });
}

void Softmax16(const QuantizedSoftmaxState& s, const int16_t* in, int16_t* out,
               int64_t rows, int32_t depth) {
  for (int64_t r = 0; r < rows; ++r) {
    const int16_t* x = in + r * depth;
    int16_t* y = out + r * depth;
    int16_t max_in_row = std::numeric_limits<int16_t>::min();
    for (int32_t c = 0; c < depth; ++c) max_in_row = std::max(max_in_row, x[c]);
    int32_t sum = 0;  // Q16.15
    for (int32_t c = 0; c < depth; ++c) {
      const int32_t scaled = MultiplyByQuantizedMultiplier(
          static_cast<int32_t>(x[c]) - max_in_row, s.input_multiplier);
      const int32_t centered =
          std::min(32767, std::max(-32768, scaled + 32767));
      y[c] = Int16LutLookup(static_cast<int16_t>(centered), s.exp_lut.data());
      sum += y[c];
    }
    const int headroom_plus_one =
        sum == 0 ? 32 : __builtin_clz(static_cast<uint32_t>(sum));
    const int32_t shifted_sum = static_cast<int32_t>(
        ((static_cast<int64_t>(sum) << (headroom_plus_one - 1)) + (1 << 13)) >>
        14);
    const int32_t centered_sum = std::min(
        32767, std::max(-32768, shifted_sum - ((1 << 15) + (1 << 16))));
    const int64_t reciprocal = Int16LutLookup(
        static_cast<int16_t>(centered_sum), s.reciprocal_lut.data());
    const int right_shift = 31 - headroom_plus_one;
    const int64_t round = int64_t{1} << (right_shift - 1);
    for (int32_t c = 0; c < depth; ++c) {
      const int32_t v =
          static_cast<int32_t>((y[c] * reciprocal + round) >> right_shift);
      y[c] = static_cast<int16_t>(std::min(32767, std::max(0, v)));
    }
  }
}

}  // namespace

KilnStatus QuantizedSoftmaxPrepare(KernelContext& k, QuantizedSoftmaxState& s) {
  const Tensor input = k.input(0), out = k.output(0);
  KILN_SDK_RETURN_IF_ERROR(CheckTypes(k, input, out));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectKnownShape(k, sdk::Input(0)));
  if (input.rank() < 1) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, kOp, ": input '", input.name(),
                  "' must have rank >= 1 (the op normalises the last axis)");
  }
  s.input_type = input.type();
  s.output_type = out.type();
  TensorQuantization qin, qout;
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ReadQuantization(k, sdk::Input(0), sdk::kPerTensor, &qin));
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ReadQuantization(k, sdk::Output(0), sdk::kPerTensor, &qout));
  if (s.output_type == KILN_TYPE_INT8) {
    KILN_SDK_RETURN_IF_ERROR(
        CheckOutputQuantization(k, out, qout, -128, 1.f / 256));
  } else if (s.output_type == KILN_TYPE_INT16 &&
             s.input_type == KILN_TYPE_INT16) {
    KILN_SDK_RETURN_IF_ERROR(
        CheckOutputQuantization(k, out, qout, 0, 1.f / 32768));
  }
  const float beta = k.OptionFloat(KILN_OPTION_BETA, 1.f);
  if (s.input_type == KILN_TYPE_INT16) {
    KILN_SDK_RETURN_IF_ERROR(PrepareInt16(k, qin, beta, s));
  } else {
    s.float_table.clear();
    if (PreprocessSoftmaxScaling(beta, qin.scales[0], kScaledDiffIntegerBits,
                                 &s.input_multiplier)) {
      s.diff_min = -CalculateInputRadius(kScaledDiffIntegerBits,
                                         s.input_multiplier.shift);
      FillSoftmaxExpTables(s.input_multiplier, s.diff_min, &s.exp_table,
                           &s.exp_accum_table);
    } else {
      PrepareFloatTable(qin, qout, beta, s);  // see softmax_quantized.h
    }
    PreparePairTable(input, s);
  }
  return k.Resize(out, input.shape());
}

KilnStatus QuantizedSoftmaxInvoke(KernelContext& k,
                                  const QuantizedSoftmaxState& s) {
  const Tensor input = k.input(0), out = k.output(0);
  const std::vector<int32_t> shape = input.shape();
  const int32_t depth = shape.empty() ? 1 : shape.back();
  if (depth == 0) return KILN_STATUS_OK;
  const int64_t rows = DimProduct(shape, 0, shape.size()) / depth;
  if (input.data<void>() == nullptr || out.data<void>() == nullptr) {
    return k.Fail(KILN_STATUS_FAILED_PRECONDITION, kOp,
                  ": input or output has no data at invoke");
  }
  const auto run8 = [&](const auto* in, auto* o, int64_t n, int32_t d) {
    Softmax8Rows(s, in, o, n, d);
  };
  // A pair-table row is one lookup: split only very many of them.
  const int64_t cost = depth == 2 && !s.pair_table.empty() ? 1 : 0;
  if (s.input_type == KILN_TYPE_INT16) {
    return SplitRows(k, input.data<int16_t>(), out.data<int16_t>(), rows, depth,
                     [&](const int16_t* in, int16_t* o, int64_t n, int32_t d) {
                       Softmax16(s, in, o, n, d);
                     });
  }
  if (s.input_type == KILN_TYPE_INT8) {
    if (s.output_type == KILN_TYPE_INT8) {
      return SplitRows(k, input.data<int8_t>(), out.data<int8_t>(), rows, depth,
                       run8, cost);
    }
    return SplitRows(k, input.data<int8_t>(), out.data<int16_t>(), rows, depth,
                     run8, cost);
  }
  if (s.output_type == KILN_TYPE_UINT8) {
    return SplitRows(k, input.data<uint8_t>(), out.data<uint8_t>(), rows, depth,
                     run8, cost);
  }
  return SplitRows(k, input.data<uint8_t>(), out.data<int16_t>(), rows, depth,
                   run8, cost);
}

KilnStatus QuantizedLogSoftmaxPrepare(KernelContext& k,
                                      QuantizedLogSoftmaxState& s) {
  TensorQuantization qin;
  // TFLite requires the output scale to be exactly 16 / 256.
  KILN_SDK_RETURN_IF_ERROR(
      PrepareFixedOutput(k, 16.f / 256, 127, 255, 0.f, &qin));
  // TFLite's reference kernel aborts unless the multiplier is at least 2
  // (shift >= 1): its inverse must then be below one.
  if (!PreprocessSoftmaxScaling(1.0, qin.scales[0], kScaledDiffIntegerBits,
                                &s.input_multiplier) ||
      s.input_multiplier.shift < 1) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, sdk::Describe(k, sdk::Input(0)),
                  " has scale ", qin.scales[0],
                  ", too small for TFLite's fixed-point LOG_SOFTMAX (its "
                  "reference kernel aborts on it)");
  }
  // TFLite's PreprocessLogSoftmaxScalingExp: the inverse of the input
  // multiplier, below one.
  const double reverse =
      static_cast<double>(int64_t{1} << (31 - s.input_multiplier.shift)) /
      static_cast<double>(s.input_multiplier.multiplier);
  s.reverse_multiplier = QuantizeMultiplier(reverse);
  s.diff_min =
      -CalculateInputRadius(kScaledDiffIntegerBits, s.input_multiplier.shift);
  FillLogSoftmaxTables(s.input_multiplier, s.diff_min, &s.scaled_table,
                       &s.exp_accum_table);
  return KILN_STATUS_OK;
}

KilnStatus QuantizedLogSoftmaxInvoke(KernelContext& k,
                                     const QuantizedLogSoftmaxState& s) {
  return RunOn8BitRows(
      k, [&](const auto* in, auto* out, int64_t rows, int32_t depth) {
        LogSoftmax8(s, in, out, rows, depth);
      });
}

KilnStatus QuantizedL2NormPrepare(KernelContext& k, int32_t* input_zero_point) {
  TensorQuantization qin;
  // TFLite requires the output scale to be exactly 1 / 128.
  KILN_SDK_RETURN_IF_ERROR(PrepareFixedOutput(k, 1.f / 128, 0, 128, 0.f, &qin));
  *input_zero_point = qin.zero_points[0];
  return KILN_STATUS_OK;
}

KilnStatus QuantizedL2NormInvoke(KernelContext& k, int32_t input_zero_point) {
  return RunOn8BitRows(
      k, [&](const auto* in, auto* out, int64_t rows, int32_t depth) {
        L2Norm8(input_zero_point, in, out, rows, depth);
      });
}

}  // namespace kiln::cpu::nn
