// WHERE with one input (TFLite's where.cc): the coordinates of the
// condition's non-zero elements, as an INT64 tensor [num_true, rank] in
// row-major order. The output's shape depends on the condition's values: a
// constant condition sizes it in prepare; otherwise prepare leaves it
// unresized and the host prepares the node again at invoke, when the values
// are there (the data_common.h contract), as LiteRT makes the output
// dynamic.
//
// Versions (TFLite's op_version.cc): v1 a BOOL condition; v2 FLOAT32, INT64,
// INT32, INT8, UINT8 or UINT32, compared with zero as stored (an INT8 or
// UINT8 condition's codes, not their real values; NaN counts as non-zero).
#include <cstdint>
#include <vector>

#include "kernels/data/data_common.h"

namespace kiln::cpu::data {
namespace {

using sdk::KernelContext;
using sdk::Tensor;

constexpr sdk::Operand kCondition = sdk::Input(0, "condition");
constexpr sdk::TypeSet kConditionTypes{
    KILN_TYPE_BOOL, KILN_TYPE_FLOAT32, KILN_TYPE_INT64, KILN_TYPE_INT32,
    KILN_TYPE_INT8, KILN_TYPE_UINT8,   KILN_TYPE_UINT32};

// Calls fn(const T* values) with the condition's elements read as their
// type (BOOL as bytes).
template <typename Fn>
void WithConditionValues(KilnTensorType type, const void* data, Fn&& fn) {
  switch (type) {
    case KILN_TYPE_FLOAT32:
      return fn(static_cast<const float*>(data));
    case KILN_TYPE_INT64:
      return fn(static_cast<const int64_t*>(data));
    case KILN_TYPE_INT32:
      return fn(static_cast<const int32_t*>(data));
    case KILN_TYPE_INT8:
      return fn(static_cast<const int8_t*>(data));
    case KILN_TYPE_UINT32:
      return fn(static_cast<const uint32_t*>(data));
    default:  // BOOL, UINT8
      return fn(static_cast<const uint8_t*>(data));
  }
}

struct WherePlan : PlanBase {
  const void* condition = nullptr;  // null when it has no elements
};

KilnStatus PlanWhere(KernelContext& k, WherePlan& plan) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectInputCount(k, 1, 1));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectOutputCount(k, 1));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectType(k, kCondition, kConditionTypes));
  // LiteRT's prepare makes the output INT64 whatever the model declares.
  if (k.output(0).type() != KILN_TYPE_INT64) {
    KILN_SDK_RETURN_IF_ERROR(k.SetType(k.output(0), KILN_TYPE_INT64));
  }
  const Tensor cond = k.input(0);
  const int32_t rank = cond.rank();
  if (rank == 0) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, sdk::Describe(k, kCondition),
                  " is a scalar; WHERE needs a condition of rank >= 1 (LiteRT "
                  "refuses a scalar too)");
  }
  const int64_t n = cond.num_elements();
  int64_t count = 0;
  if (n > 0) {
    plan.condition = cond.data<void>();
    if (plan.condition == nullptr) {
      plan.NotReady(sdk::Describe(k, kCondition) + " has no data");
      return KILN_STATUS_OK;
    }
    const uint64_t need =
        static_cast<uint64_t>(n) * sdk::TypeByteSize(cond.type());
    if (cond.byte_size() < need) {
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT, sdk::Describe(k, kCondition),
                    " holds ", cond.byte_size(), " bytes, fewer than its ", n,
                    " elements need");
    }
    WithConditionValues(cond.type(), plan.condition, [&](const auto* v) {
      for (int64_t i = 0; i < n; ++i) count += v[i] != 0 ? 1 : 0;
    });
  }
  if (count > INT32_MAX) {
    return k.Fail(KILN_STATUS_RESOURCE_EXHAUSTED, "WHERE: ", count,
                  " non-zero elements do not fit an int32 dimension");
  }
  plan.output_shapes = {{static_cast<int32_t>(count), rank}};
  return KILN_STATUS_OK;
}

KilnStatus RunWhere(KernelContext& k, const WherePlan& plan) {
  if (plan.output_shapes[0][0] == 0) return KILN_STATUS_OK;
  int64_t* out = nullptr;
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, sdk::Output(0), &out));
  const Tensor cond = k.input(0);
  const Shape shape = cond.shape();
  const int64_t n = NumElements(shape);
  std::vector<int64_t> index(shape.size(), 0);
  WithConditionValues(cond.type(), plan.condition, [&](const auto* v) {
    for (int64_t i = 0; i < n; ++i) {
      if (v[i] != 0) {
        for (int64_t c : index) *out++ = c;
      }
      // Next row-major multi-index.
      for (size_t d = shape.size(); d-- > 0;) {
        if (++index[d] < shape[d]) break;
        index[d] = 0;
      }
    }
  });
  return KILN_STATUS_OK;
}

}  // namespace

void RegisterWhereKernels(sdk::PluginDefinition& def) {
  def.AddKernel(
      PlannedKernel<WherePlan, PlanWhere, RunWhere>(KILN_OP_WHERE, 1, 2));
}

}  // namespace kiln::cpu::data
