#include "kernels/nn/softmax_exp_table.h"

namespace kiln::cpu::nn {
namespace {

using ScaledDiff = Fixed32<kSoftmaxScaledDiffIntegerBits>;

int32_t ToAccum(Fixed32<0> e) {
  return Rescale<kSoftmaxAccumulationIntegerBits>(e).raw;
}

}  // namespace

void FillSoftmaxExpTables(const QuantizedMultiplier& m, int32_t diff_min,
                          std::vector<int32_t>* exp,
                          std::vector<int32_t>* exp_accum) {
  exp->assign(kSoftmaxTableSize, 0);
  exp_accum->assign(kSoftmaxTableSize, 0);
  for (int32_t d = -kSoftmaxMaxDiff; d <= 0; ++d) {
    if (d < diff_min) continue;
    const Fixed32<0> e = ExpOnNegativeValues(
        ScaledDiff::FromRaw(MultiplyByQuantizedMultiplierGreaterThanOne(d, m)));
    (*exp)[static_cast<size_t>(kSoftmaxMaxDiff + d)] = e.raw;
    (*exp_accum)[static_cast<size_t>(kSoftmaxMaxDiff + d)] = ToAccum(e);
  }
}

void FillLogSoftmaxTables(const QuantizedMultiplier& m, int32_t diff_min,
                          std::vector<int32_t>* scaled,
                          std::vector<int32_t>* exp_accum) {
  scaled->assign(kSoftmaxTableSize, 0);
  exp_accum->assign(kSoftmaxTableSize, 0);
  for (int32_t d = -kSoftmaxMaxDiff; d <= 0; ++d) {
    const int32_t s = MultiplyByQuantizedMultiplier(d, m);
    (*scaled)[static_cast<size_t>(kSoftmaxMaxDiff + d)] = s;
    if (d < diff_min) continue;
    (*exp_accum)[static_cast<size_t>(kSoftmaxMaxDiff + d)] =
        ToAccum(ExpOnNegativeValues(ScaledDiff::FromRaw(s)));
  }
}

}  // namespace kiln::cpu::nn
