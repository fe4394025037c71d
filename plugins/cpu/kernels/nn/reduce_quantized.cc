#include "kernels/nn/reduce_quantized.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/nn/quantized_common.h"

namespace kiln::cpu::nn {
namespace {

// Visits the input elements in row-major order as fn(input index, output
// index, first), `first` when every reduced coordinate is 0 (TFLite's
// IsFirstReduction: the order its reducers see the values in).
template <typename Fn>
void ForEachReduced(const ReducePlan& plan, Fn&& fn) {
  const size_t rank = plan.in_shape.size();
  const int64_t total = DimProduct(plan.in_shape, 0, rank);
  if (total == 0) return;
  std::vector<int64_t> out_stride(rank, 0);
  int64_t stride = 1;
  for (size_t d = rank; d-- > 0;) {
    if (!plan.reduced[d]) {
      out_stride[d] = stride;
      stride *= plan.in_shape[d];
    }
  }
  std::vector<int32_t> idx(rank, 0);
  int64_t o = 0;
  int32_t nonzero_reduced = 0;  // reduced coordinates that are not 0
  for (int64_t i = 0; i < total; ++i) {
    fn(i, o, nonzero_reduced == 0);
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < plan.in_shape[d]) {
        o += out_stride[d];
        if (plan.reduced[d] && idx[d] == 1) ++nonzero_reduced;
        break;
      }
      o -= out_stride[d] * (plan.in_shape[d] - 1);
      if (plan.reduced[d] && plan.in_shape[d] > 1) --nonzero_reduced;
      idx[d] = 0;
    }
  }
}

int64_t ReducedCount(const ReducePlan& plan) {
  int64_t n = 1;
  for (size_t d = 0; d < plan.in_shape.size(); ++d) {
    if (plan.reduced[d]) n *= plan.in_shape[d];
  }
  return n;
}

struct Legacy {
  float scale = 0.f;
  int32_t zero_point = 0;
};
Legacy LegacyOf(KernelContext& k, const Tensor& t) {
  KilnQuantizationParams q{};
  Legacy l;
  if (k.Quantization(t, &q) == KILN_STATUS_OK && q.num_channels == 1) {
    l.scale = q.scales[0];
    l.zero_point = static_cast<int32_t>(q.zero_points[0]);
  }
  return l;
}

// The input as [outer, reduced, inner] blocks when the reduced dimensions
// (ignoring those of extent 1) are adjacent; false otherwise.
struct ReduceBlocks {
  int64_t outer = 1, reduced = 1, inner = 1;
};
bool AdjacentReducedDims(const ReducePlan& plan, ReduceBlocks* b) {
  *b = ReduceBlocks{};
  int stage = 0;  // 0: before the reduced dims, 1: inside, 2: after
  for (size_t d = 0; d < plan.in_shape.size(); ++d) {
    const int64_t extent = plan.in_shape[d];
    if (extent == 1) continue;
    if (plan.reduced[d]) {
      if (stage == 2) return false;
      stage = 1;
      b->reduced *= extent;
    } else {
      if (stage == 1) stage = 2;
      (stage == 0 ? b->outer : b->inner) *= extent;
    }
  }
  return true;
}

// sum[o * inner + i] = the wrapping int32 sum of in[(o * reduced + r) *
// inner + i] over r: the same sums ForEachReduced forms, in contiguous
// passes.
template <typename T>
void SumBlocks(const ReduceBlocks& b, const T* in, int32_t* sum) {
  for (int64_t o = 0; o < b.outer; ++o) {
    const T* block = in + o * b.reduced * b.inner;
    if (b.inner == 1) {
      uint32_t total = 0;
      for (int64_t r = 0; r < b.reduced; ++r) {
        total += static_cast<uint32_t>(static_cast<int32_t>(block[r]));
      }
      sum[o] = static_cast<int32_t>(total);
      continue;
    }
    uint32_t* acc = reinterpret_cast<uint32_t*>(sum + o * b.inner);
    for (int64_t r = 0; r < b.reduced; ++r) {
      const T* row = block + r * b.inner;
      for (int64_t i = 0; i < b.inner; ++i) {
        acc[i] += static_cast<uint32_t>(static_cast<int32_t>(row[i]));
      }
    }
  }
}

// TFLite's QuantizedMeanOrSum.
template <typename T>
void MeanOrSum(const ReducePlan& plan, const T* in, T* out, int64_t outputs,
               QuantizedMultiplier m, int32_t in_zp, int32_t out_zp,
               bool mean) {
  std::vector<int32_t> sum(static_cast<size_t>(outputs), 0);
  ReduceBlocks blocks;
  if (AdjacentReducedDims(plan, &blocks)) {
    SumBlocks(blocks, in, sum.data());
  } else {
    ForEachReduced(plan, [&](int64_t i, int64_t o, bool) {
      sum[static_cast<size_t>(o)] =
          WrappingAdd(sum[static_cast<size_t>(o)], in[i]);
    });
  }
  std::fill(out, out + outputs, T{0});
  const int64_t n = ReducedCount(plan);
  if (n == 0 || DimProduct(plan.in_shape, 0, plan.in_shape.size()) == 0) {
    return;
  }
  if (mean) {
    int shift = 63 - __builtin_clzll(static_cast<uint64_t>(n));
    shift = std::min({shift, 32, 31 + m.shift});
    m.multiplier =
        static_cast<int32_t>((static_cast<int64_t>(m.multiplier) << shift) / n);
    m.shift -= shift;
  }
  for (int64_t o = 0; o < outputs; ++o) {
    const int32_t shifted =
        static_cast<int32_t>(sum[static_cast<size_t>(o)] - int64_t{in_zp} * n);
    const int32_t v = MultiplyByQuantizedMultiplier(shifted, m) + out_zp;
    out[o] = static_cast<T>(std::min<int32_t>(
        std::numeric_limits<T>::max(),
        std::max<int32_t>(std::numeric_limits<T>::lowest(), v)));
  }
}

// TFLite's QuantizedReduceProd: each product rescaled by
// input_scale / output_scale^(1/n).
template <typename T>
void QuantizedProd(const ReducePlan& plan, const T* in, T* out, int64_t outputs,
                   QuantizedMultiplier m, int32_t in_zp, int32_t out_zp) {
  std::vector<int32_t> prod(static_cast<size_t>(outputs), 0);
  ForEachReduced(plan, [&](int64_t i, int64_t o, bool first) {
    int32_t& p = prod[static_cast<size_t>(o)];
    const int32_t x = static_cast<int32_t>(in[i]) - in_zp;
    p = first ? x : MultiplyByQuantizedMultiplier(int64_t{p} * x, m);
  });
  for (int64_t o = 0; o < outputs; ++o) {
    const int32_t v = MultiplyByQuantizedMultiplier(
                          int64_t{prod[static_cast<size_t>(o)]}, m) +
                      out_zp;
    out[o] = static_cast<T>(std::min<int32_t>(
        std::numeric_limits<T>::max(),
        std::max<int32_t>(std::numeric_limits<T>::lowest(), v)));
  }
}

// MAX / MIN on raw values; unquantized PROD with wrapping products.
template <typename T>
void RawReduce(ReduceKind kind, const ReducePlan& plan, const T* in, T* out,
               int64_t outputs) {
  const T init = kind == ReduceKind::kMax   ? std::numeric_limits<T>::lowest()
                 : kind == ReduceKind::kMin ? std::numeric_limits<T>::max()
                                            : T{1};
  std::fill(out, out + outputs, init);
  ForEachReduced(plan, [&](int64_t i, int64_t o, bool) {
    T& v = out[o];
    if (kind == ReduceKind::kMax) {
      v = std::max(v, in[i]);
    } else if (kind == ReduceKind::kMin) {
      v = std::min(v, in[i]);
    } else {
      v = static_cast<T>(static_cast<uint32_t>(v) *
                         static_cast<uint32_t>(in[i]));
    }
  });
}

}  // namespace

bool IsQuantizedReduceType(KilnTensorType type) {
  IntScheme scheme;
  return IntSchemeOf(type, &scheme);
}

KilnStatus QuantizedReduceCheck(KernelContext& k, const char* op,
                                ReduceKind kind) {
  const Tensor input = k.input(0), out = k.output(0);
  const Legacy lin = LegacyOf(k, input), lout = LegacyOf(k, out);
  if (input.type() == KILN_TYPE_INT16 &&
      (lin.zero_point != 0 || lout.zero_point != 0)) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op,
                  ": int16 input and output must have zero point 0 (input "
                  "has ",
                  lin.zero_point, ", output ", lout.zero_point, ")");
  }
  if (kind == ReduceKind::kMax || kind == ReduceKind::kMin) {
    if (lin.scale != lout.scale || lin.zero_point != lout.zero_point) {
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, ": input '", input.name(),
                    "' and output '", out.name(),
                    "' must have the same quantization (TFLite compares raw "
                    "values)");
    }
    return KILN_STATUS_OK;
  }
  TensorQuantization q;
  if (kind == ReduceKind::kProd) {
    KilnQuantizationParams p{};
    KILN_SDK_RETURN_IF_ERROR(k.Quantization(input, &p));
    if (p.num_channels == 0) return KILN_STATUS_OK;  // raw integer product
    if (input.type() == KILN_TYPE_UINT8) {
      return k.Fail(KILN_STATUS_UNIMPLEMENTED, op, ": quantized UINT8 input '",
                    input.name(),
                    "' is not supported (TFLite supports int8 and int16)");
    }
  }
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ReadQuantization(k, sdk::Input(0), sdk::kPerTensor, &q));
  return sdk::ReadQuantization(k, sdk::Output(0), sdk::kPerTensor, &q);
}

KilnStatus QuantizedReduceRun(KernelContext& k, const char* op, ReduceKind kind,
                              const ReducePlan& plan) {
  KILN_SDK_RETURN_IF_ERROR(QuantizedReduceCheck(k, op, kind));
  const Tensor input = k.input(0), out = k.output(0);
  const int64_t outputs = DimProduct(plan.out_shape, 0, plan.out_shape.size());
  if ((input.data<void>() == nullptr && input.num_elements() > 0) ||
      (out.data<void>() == nullptr && outputs > 0)) {
    return k.Fail(KILN_STATUS_FAILED_PRECONDITION, op,
                  ": input or output has no data at invoke");
  }
  const Legacy lin = LegacyOf(k, input), lout = LegacyOf(k, out);
  IntScheme scheme = IntScheme::kInt8;
  IntSchemeOf(input.type(), &scheme);
  ForScheme(scheme, [&](auto tag) {
    using T = decltype(tag);
    const T* in = input.data<T>();
    T* o = out.data<T>();
    if (kind == ReduceKind::kMean || kind == ReduceKind::kSum) {
      MeanOrSum(plan, in, o, outputs,
                QuantizeMultiplier(static_cast<double>(lin.scale) /
                                   static_cast<double>(lout.scale)),
                lin.zero_point, lout.zero_point, kind == ReduceKind::kMean);
    } else if (kind == ReduceKind::kProd && lin.scale != 0.f) {
      const int64_t n = ReducedCount(plan);
      const double scaling = n == 0
                                 ? 0.0
                                 : static_cast<double>(lin.scale) /
                                       std::pow(static_cast<double>(lout.scale),
                                                1.0 / static_cast<double>(n));
      QuantizedProd(plan, in, o, outputs, QuantizeMultiplier(scaling),
                    lin.zero_point, lout.zero_point);
    } else {
      RawReduce(kind, plan, in, o, outputs);
    }
  });
  return KILN_STATUS_OK;
}

}  // namespace kiln::cpu::nn
