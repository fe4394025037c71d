#include "kernels/nn/int_vec.h"

#include <cstring>

namespace kiln::cpu::nn {
namespace {

typedef int32_t Int32x8 __attribute__((vector_size(32)));
typedef int16_t Int16x8 __attribute__((vector_size(16)));

}  // namespace

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target_clones("avx2", "default")))
#endif
void MulAccInt16(int32_t* acc, const int16_t* x, const int16_t* w, int32_t n) {
  int32_t i = 0;
  for (; i + 8 <= n; i += 8) {
    Int16x8 xv, wv;
    Int32x8 av;
    std::memcpy(&xv, x + i, sizeof(xv));
    std::memcpy(&wv, w + i, sizeof(wv));
    std::memcpy(&av, acc + i, sizeof(av));
    av += __builtin_convertvector(xv, Int32x8) *
          __builtin_convertvector(wv, Int32x8);
    std::memcpy(acc + i, &av, sizeof(av));
  }
  for (; i < n; ++i) {
    acc[i] = static_cast<int32_t>(static_cast<uint32_t>(acc[i]) +
                                  static_cast<uint32_t>(x[i] * w[i]));
  }
}

}  // namespace kiln::cpu::nn
