#include "kernels/nn/pooling_quantized.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "kernels/nn/quantized_common.h"

namespace kiln::cpu::nn {
namespace {

// Visits the in-image taps of output pixel (oy, ox): fn(pixel pointer).
template <typename T, typename Fn>
int32_t ForEachTap(const PoolGeometry& g, const T* image, int32_t oy,
                   int32_t ox, Fn&& fn) {
  const int32_t y0 = oy * g.window.stride_h - g.pad_h;
  const int32_t x0 = ox * g.window.stride_w - g.pad_w;
  const int32_t ys = std::max(0, y0), ye = std::min(g.in_h, y0 + g.filter_h);
  const int32_t xs = std::max(0, x0), xe = std::min(g.in_w, x0 + g.filter_w);
  for (int32_t iy = ys; iy < ye; ++iy) {
    for (int32_t ix = xs; ix < xe; ++ix) {
      fn(image + (static_cast<int64_t>(iy) * g.in_w + ix) * g.channels);
    }
  }
  return std::max(0, ye - ys) * std::max(0, xe - xs);
}

// Acc: int32 suffices for 8-bit values, int64 for int16 (as TFLite).
template <typename T, typename Acc>
bool AveragePool(const PoolGeometry& g, int32_t lo, int32_t hi, const T* in,
                 T* out, std::vector<Acc>& acc) {
  const int32_t c = g.channels;
  for (int32_t b = 0; b < g.batches; ++b) {
    const T* image = in + static_cast<int64_t>(b) * g.in_h * g.in_w * c;
    for (int32_t oy = 0; oy < g.out_h; ++oy) {
      for (int32_t ox = 0; ox < g.out_w; ++ox) {
        std::fill(acc.begin(), acc.end(), Acc{0});
        const Acc count = ForEachTap(g, image, oy, ox, [&](const T* x) {
          for (int32_t i = 0; i < c; ++i) acc[static_cast<size_t>(i)] += x[i];
        });
        if (count == 0) return false;
        T* dst =
            out + ((static_cast<int64_t>(b) * g.out_h + oy) * g.out_w + ox) * c;
        for (int32_t i = 0; i < c; ++i) {
          const Acc a = acc[static_cast<size_t>(i)];
          const Acc avg =
              a > 0 ? (a + count / 2) / count : (a - count / 2) / count;
          dst[i] = static_cast<T>(std::min<Acc>(hi, std::max<Acc>(lo, avg)));
        }
      }
    }
  }
  return true;
}

template <typename T>
void MaxPool(const PoolGeometry& g, int32_t lo, int32_t hi, const T* in,
             T* out) {
  const int32_t c = g.channels;
  for (int32_t b = 0; b < g.batches; ++b) {
    const T* image = in + static_cast<int64_t>(b) * g.in_h * g.in_w * c;
    for (int32_t oy = 0; oy < g.out_h; ++oy) {
      for (int32_t ox = 0; ox < g.out_w; ++ox) {
        T* dst =
            out + ((static_cast<int64_t>(b) * g.out_h + oy) * g.out_w + ox) * c;
        std::fill(dst, dst + c, std::numeric_limits<T>::lowest());
        ForEachTap(g, image, oy, ox, [&](const T* x) {
          for (int32_t i = 0; i < c; ++i) dst[i] = std::max(dst[i], x[i]);
        });
        for (int32_t i = 0; i < c; ++i) {
          dst[i] = static_cast<T>(
              std::min<int32_t>(hi, std::max<int32_t>(lo, dst[i])));
        }
      }
    }
  }
}

}  // namespace

KilnStatus QuantizedPoolBounds(KernelContext& k, const char* op,
                               const PoolGeometry& g, int32_t* lo,
                               int32_t* hi) {
  const Tensor input = k.input(0), out = k.output(0);
  IntScheme scheme = IntScheme::kInt8;
  if (!IntSchemeOf(input.type(), &scheme)) {
    return k.Fail(KILN_STATUS_UNIMPLEMENTED, op, " input '", input.name(),
                  "' has type ", sdk::TypeName(input.type()),
                  "; this CPU kernel supports FLOAT32, INT8, UINT8 and INT16");
  }
  TensorQuantization qout;
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ReadQuantization(k, sdk::Output(0), sdk::kPerTensor, &qout));
  if (!QuantizedActivationBounds(g.activation, qout.scales[0],
                                 qout.zero_points[0],
                                 std::numeric_limits<int32_t>::min(),
                                 std::numeric_limits<int32_t>::max(), lo, hi)) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op,
                  ": the fused activation's bounds overflow int32 at output '",
                  out.name(), "' (TFLite refuses this node too)");
  }
  ForScheme(scheme, [&](auto tag) {
    using T = decltype(tag);
    *lo = std::max<int32_t>(*lo, std::numeric_limits<T>::lowest());
    *hi = std::min<int32_t>(*hi, std::numeric_limits<T>::max());
  });
  return KILN_STATUS_OK;
}

KilnStatus QuantizedPoolInvoke(KernelContext& k, const char* op, bool max,
                               const PoolGeometry& g) {
  const Tensor input = k.input(0), out = k.output(0);
  int32_t lo = 0, hi = 0;
  KILN_SDK_RETURN_IF_ERROR(QuantizedPoolBounds(k, op, g, &lo, &hi));
  IntScheme scheme = IntScheme::kInt8;
  IntSchemeOf(input.type(), &scheme);
  if (input.data<void>() == nullptr || out.data<void>() == nullptr) {
    return k.Fail(KILN_STATUS_FAILED_PRECONDITION, op,
                  ": input or output has no data at invoke");
  }
  bool ok = true;
  ForScheme(scheme, [&](auto tag) {
    using T = decltype(tag);
    if (max) {
      MaxPool(g, lo, hi, input.data<T>(), out.data<T>());
    } else if constexpr (sizeof(T) == 2) {
      std::vector<int64_t> acc(static_cast<size_t>(g.channels));
      ok = AveragePool(g, lo, hi, input.data<T>(), out.data<T>(), acc);
    } else {
      std::vector<int32_t> acc(static_cast<size_t>(g.channels));
      ok = AveragePool(g, lo, hi, input.data<T>(), out.data<T>(), acc);
    }
  });
  if (!ok) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op,
                  ": an averaging window covers no input element (padding "
                  "larger than the filter)");
  }
  return KILN_STATUS_OK;
}

}  // namespace kiln::cpu::nn
