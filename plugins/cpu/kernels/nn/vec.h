// Row primitives on float spans, written with 4-lane vectors (GCC/Clang
// vector extension) because -O2 does not vectorise loops that need a scalar
// epilogue. Spans may be unaligned; in-place use (dst == src) is allowed
// where noted, other overlaps are not.
#ifndef KILN_PLUGINS_CPU_KERNELS_NN_VEC_H_
#define KILN_PLUGINS_CPU_KERNELS_NN_VEC_H_

#include <cstdint>
#include <cstring>

namespace kiln::cpu::nn::vec {

typedef float F4 __attribute__((vector_size(16)));

inline F4 Load(const float* p) {
  F4 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline void Store(float* p, F4 v) { std::memcpy(p, &v, sizeof(v)); }
inline F4 Splat(float x) { return F4{x, x, x, x}; }

// acc[i] += x[i] * w[i]
inline void MulAcc(float* acc, const float* x, const float* w, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    Store(acc + i, Load(acc + i) + Load(x + i) * Load(w + i));
  }
  for (; i < n; ++i) acc[i] += x[i] * w[i];
}

// acc[i] += s * x[i]
inline void ScaleAcc(float* acc, const float* x, float s, int64_t n) {
  const F4 vs = Splat(s);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) Store(acc + i, Load(acc + i) + vs * Load(x + i));
  for (; i < n; ++i) acc[i] += s * x[i];
}

// acc[i] += x[i]
inline void Acc(float* acc, const float* x, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) Store(acc + i, Load(acc + i) + Load(x + i));
  for (; i < n; ++i) acc[i] += x[i];
}

// acc[i] = max(acc[i], x[i])
inline void MaxAcc(float* acc, const float* x, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const F4 a = Load(acc + i), b = Load(x + i);
    Store(acc + i, a > b ? a : b);
  }
  for (; i < n; ++i) acc[i] = acc[i] > x[i] ? acc[i] : x[i];
}

// x[i] *= s (in place)
inline void Scale(float* x, float s, int64_t n) {
  const F4 vs = Splat(s);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) Store(x + i, Load(x + i) * vs);
  for (; i < n; ++i) x[i] *= s;
}

// x[i] = min(hi, max(lo, x[i])) (in place)
inline void Clamp(float* x, float lo, float hi, int64_t n) {
  const F4 vlo = Splat(lo), vhi = Splat(hi);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    F4 v = Load(x + i);
    v = v > vlo ? v : vlo;
    v = v < vhi ? v : vhi;
    Store(x + i, v);
  }
  for (; i < n; ++i) {
    const float v = x[i] > lo ? x[i] : lo;
    x[i] = v < hi ? v : hi;
  }
}

// dst[i] = value
inline void Fill(float* dst, float value, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = value;
}

}  // namespace kiln::cpu::nn::vec

#endif  // KILN_PLUGINS_CPU_KERNELS_NN_VEC_H_
