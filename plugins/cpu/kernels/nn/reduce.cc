// Reductions (MEAN, SUM, REDUCE_PROD/MAX/MIN/ANY/ALL) over an axis tensor,
// ARG_MAX / ARG_MIN and TOPK_V2. Integer reductions in reduce_quantized.h.
#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>
#include <type_traits>
#include <vector>

#include "kernels/elementwise/binary_float.h"
#include "kernels/nn/float_rows.h"
#include "kernels/nn/nn_common.h"
#include "kernels/nn/reduce_quantized.h"
#include "kernels/registry.h"

namespace kiln::cpu::nn {
namespace {

constexpr sdk::TypeSet kNumericTypes{KILN_TYPE_FLOAT32, KILN_TYPE_INT32,
                                     KILN_TYPE_INT64};

// ---- Reductions ----------------------------------------------------------

// Validates the node and, when the axis values are available, plans the
// reduction. plan->known is false when the axis input has no data yet.
KilnStatus PlanReduce(KernelContext& k, ReduceKind kind, ReducePlan* plan) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectInputCount(k, 2, 2));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectOutputCount(k, 1));
  const Tensor input = k.input(0);
  if (kind == ReduceKind::kAny || kind == ReduceKind::kAll) {
    KILN_SDK_RETURN_IF_ERROR(
        sdk::ExpectType(k, sdk::Input(0), {KILN_TYPE_BOOL}));
  } else {
    KILN_SDK_RETURN_IF_ERROR(sdk::ExpectType(
        k, sdk::Input(0), kNumericTypes | sdk::kQuantizedTypes));
  }
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectSameType(k, sdk::Output(0), sdk::Input(0)));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectKnownShape(k, sdk::Input(0)));
  if (IsQuantizedReduceType(input.type())) {
    KILN_SDK_RETURN_IF_ERROR(QuantizedReduceCheck(k, sdk::OpName(k), kind));
  }
  plan->in_shape = input.shape();
  const int32_t rank = static_cast<int32_t>(plan->in_shape.size());
  AxisList axes;
  KILN_SDK_RETURN_IF_ERROR(ReadAxes(k, sdk::Input(1, "axis"), rank, &axes));
  plan->known = axes.known;
  if (!axes.known) return KILN_STATUS_OK;
  plan->reduced.assign(static_cast<size_t>(rank), false);
  for (int32_t a : axes.axes) plan->reduced[static_cast<size_t>(a)] = true;
  const bool keep_dims = k.OptionInt(KILN_OPTION_KEEP_DIMS, 0) != 0;
  plan->out_shape.clear();
  for (int32_t d = 0; d < rank; ++d) {
    if (!plan->reduced[static_cast<size_t>(d)]) {
      plan->out_shape.push_back(plan->in_shape[static_cast<size_t>(d)]);
    } else if (keep_dims) {
      plan->out_shape.push_back(1);
    }
  }
  return KILN_STATUS_OK;
}

// The plan prepare made for one input shape signature. Invoke reuses it when
// the axis tensor is constant (nothing it depends on can change) and plans
// again otherwise.
struct ReduceState {
  ReducePlan plan;
  bool plan_is_static = false;
};

template <ReduceKind kKind>
KilnStatus ReducePrepare(KernelContext& k, ReduceState& s) {
  KILN_SDK_RETURN_IF_ERROR(PlanReduce(k, kKind, &s.plan));
  s.plan_is_static = s.plan.known && k.input(1).is_constant();
  if (!s.plan.known) return KILN_STATUS_OK;  // sized once the axes exist
  return k.Resize(k.output(0), s.plan.out_shape);
}

template <typename T, ReduceKind kKind>
struct Reducer {
  static T Identity() {
    if constexpr (kKind == ReduceKind::kProd || kKind == ReduceKind::kAll) {
      return T(1);
    } else if constexpr (kKind == ReduceKind::kMax) {
      return std::numeric_limits<T>::lowest();
    } else if constexpr (kKind == ReduceKind::kMin) {
      return std::numeric_limits<T>::max();
    } else {
      return T(0);
    }
  }
  static T Apply(T acc, T x) {
    if constexpr (kKind == ReduceKind::kProd) {
      return acc * x;
    } else if constexpr (kKind == ReduceKind::kMax) {
      return acc > x ? acc : x;
    } else if constexpr (kKind == ReduceKind::kMin) {
      return acc < x ? acc : x;
    } else if constexpr (kKind == ReduceKind::kAny) {
      return acc || x;
    } else if constexpr (kKind == ReduceKind::kAll) {
      return acc && x;
    } else {
      return acc + x;
    }
  }
};

// MEAN's last step: each of the n outputs over `count` (when positive).
template <typename T>
void DivideAll(T* out, int64_t n, int64_t count) {
  if (count <= 0) return;
  for (int64_t i = 0; i < n; ++i) {
    out[i] = static_cast<T>(out[i] / static_cast<T>(count));
  }
}

template <typename T, ReduceKind kKind>
void RunReduce(const ReducePlan& plan, const T* in, T* out) {
  using R = Reducer<T, kKind>;
  const int32_t rank = static_cast<int32_t>(plan.in_shape.size());
  int64_t out_count = 1;
  for (size_t d = 0; d < plan.in_shape.size(); ++d) {
    if (!plan.reduced[d]) out_count *= plan.in_shape[d];
  }
  std::fill(out, out + out_count, R::Identity());
  const int64_t total = DimProduct(plan.in_shape, 0, plan.in_shape.size());
  if (rank == 0) {
    if (total == 1) out[0] = in[0];
    return;
  }
  if (total == 0) return;
  const int32_t inner = plan.in_shape.back();
  const bool inner_reduced = plan.reduced.back();
  const int64_t rows = total / inner;
  if constexpr (std::is_same_v<T, float> &&
                (kKind == ReduceKind::kSum || kKind == ReduceKind::kMean)) {
    if (inner_reduced && out_count == rows) {  // only the last axis reduced
      // Each row added in order (bit for bit the loop below), eight rows
      // at a time.
      GetFloatRowKernels().sum_rows(in, rows, inner, out);
      if (kKind == ReduceKind::kMean) DivideAll(out, out_count, inner);
      return;
    }
  }
  // Output strides per input dim (0 for reduced dims).
  std::vector<int64_t> out_stride(static_cast<size_t>(rank), 0);
  int64_t stride = 1;
  for (int32_t d = rank - 1; d >= 0; --d) {
    if (!plan.reduced[static_cast<size_t>(d)]) {
      out_stride[static_cast<size_t>(d)] = stride;
      stride *= plan.in_shape[static_cast<size_t>(d)];
    }
  }
  std::vector<int32_t> idx(static_cast<size_t>(rank), 0);
  int64_t o = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const T* x = in + r * inner;
    if (inner_reduced) {
      T acc = out[o];
      for (int32_t i = 0; i < inner; ++i) acc = R::Apply(acc, x[i]);
      out[o] = acc;
    } else {
      T* y = out + o;
      for (int32_t i = 0; i < inner; ++i) y[i] = R::Apply(y[i], x[i]);
    }
    for (int32_t d = rank - 2; d >= 0; --d) {
      const size_t ud = static_cast<size_t>(d);
      if (++idx[ud] < plan.in_shape[ud]) {
        o += out_stride[ud];
        break;
      }
      o -= out_stride[ud] * (plan.in_shape[ud] - 1);
      idx[ud] = 0;
    }
  }
  if (kKind == ReduceKind::kMean) {
    DivideAll(out, out_count, out_count > 0 ? total / out_count : 0);
  }
}

// y[i] += x[i] for i < n: AVX2 rows (bit for bit the scalar additions)
// where the CPU has them.
void AddRow(const float* x, float* y, int64_t n) {
  static const elementwise::FloatBinaryRow kAdd =
      elementwise::FloatBinaryRowAvx2(elementwise::FloatBinaryOp::kAdd);
  if (kAdd != nullptr) {
    kAdd(y, 1, x, 1, y, n);
    return;
  }
  for (int64_t i = 0; i < n; ++i) y[i] += x[i];
}

// Float MEAN / SUM of `plan` when it reduces exactly one axis of an input
// with no empty dimension: row sums (the reduced axis innermost) or whole
// rows added in AVX2; false (nothing done) otherwise. Each output adds its
// values in input order from 0, as RunReduce does, so the values are the
// same.
template <ReduceKind kKind>
bool FloatOneAxisSum(const ReducePlan& plan, const float* x, float* y) {
  int64_t outer = 1, reduced = 1, inner = 1;
  int32_t reduced_axes = 0;
  for (size_t d = 0; d < plan.in_shape.size(); ++d) {
    const int32_t extent = plan.in_shape[d];
    if (extent <= 0) return false;
    if (plan.reduced[d]) {
      ++reduced_axes;
      reduced = extent;
    } else {
      (reduced_axes == 0 ? outer : inner) *= extent;
    }
  }
  if (reduced_axes != 1) return false;
  if (inner == 1) {
    GetFloatRowKernels().sum_rows(x, outer, reduced, y);
  } else {
    std::fill(y, y + outer * inner, 0.f);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t r = 0; r < reduced; ++r) {
        AddRow(x + (o * reduced + r) * inner, y + o * inner, inner);
      }
    }
  }
  if (kKind == ReduceKind::kMean) DivideAll(y, outer * inner, reduced);
  return true;
}

template <ReduceKind kKind>
KilnStatus ReduceInvoke(KernelContext& k, ReduceState& s) {
  const char* op = sdk::OpName(k);
  ReducePlan replanned;
  if (!s.plan_is_static) {
    KILN_SDK_RETURN_IF_ERROR(PlanReduce(k, kKind, &replanned));
  }
  const ReducePlan& plan = s.plan_is_static ? s.plan : replanned;
  if (!plan.known) {
    return k.Fail(KILN_STATUS_FAILED_PRECONDITION, op,
                  ": axis input has no values at invoke");
  }
  const Tensor input = k.input(0), out = k.output(0);
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectOutputShape(k, sdk::Output(0), plan.out_shape));
  if constexpr (kKind == ReduceKind::kSum || kKind == ReduceKind::kMean) {
    if (input.type() == KILN_TYPE_FLOAT32 &&
        FloatOneAxisSum<kKind>(plan, input.data<float>(), out.data<float>())) {
      return KILN_STATUS_OK;
    }
  }
  if constexpr (kKind == ReduceKind::kAny || kKind == ReduceKind::kAll) {
    RunReduce<bool, kKind>(plan, input.data<bool>(), out.data<bool>());
  } else if (IsQuantizedReduceType(input.type())) {
    return QuantizedReduceRun(k, op, kKind, plan);
  } else {
    switch (input.type()) {
      case KILN_TYPE_FLOAT32:
        RunReduce<float, kKind>(plan, input.data<float>(), out.data<float>());
        break;
      case KILN_TYPE_INT32:
        RunReduce<int32_t, kKind>(plan, input.data<int32_t>(),
                                  out.data<int32_t>());
        break;
      default:
        RunReduce<int64_t, kKind>(plan, input.data<int64_t>(),
                                  out.data<int64_t>());
        break;
    }
  }
  return KILN_STATUS_OK;
}

// The plan is per input shape, so each input signature keeps its own.
template <ReduceKind kKind>
KilnKernel ReduceKernel(int32_t op, int32_t min_version, int32_t max_version) {
  return sdk::StatePerShapeSignature(
      sdk::MakeStatefulKernel<ReduceState, ReducePrepare<kKind>,
                              ReduceInvoke<kKind>>(op, min_version,
                                                   max_version));
}

// ---- ARG_MAX / ARG_MIN ---------------------------------------------------

struct ArgPlan {
  bool known = false;
  int32_t axis = 0;
  std::vector<int32_t> out_shape;
};

KilnStatus PlanArg(KernelContext& k, const char* op, ArgPlan* plan) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectInputCount(k, 2, 2));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectOutputCount(k, 1));
  const Tensor input = k.input(0), axis = k.input(1), out = k.output(0);
  // Quantized inputs compare their stored values: a positive scale keeps
  // the order, as LiteRT assumes.
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectType(
      k, sdk::Input(0),
      kNumericTypes |
          sdk::TypeSet{KILN_TYPE_INT8, KILN_TYPE_UINT8, KILN_TYPE_BOOL}));
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectType(k, sdk::Output(0), sdk::kIndexTypes));
  const int64_t option_type =
      k.OptionInt(KILN_OPTION_OUTPUT_TYPE, static_cast<int64_t>(out.type()));
  if (option_type != out.type()) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, ": output_type option (",
                  sdk::TypeName(static_cast<KilnTensorType>(option_type)),
                  ") disagrees with output tensor '", out.name(), "' (",
                  sdk::TypeName(out.type()), ")");
  }
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectKnownShape(k, sdk::Input(0)));
  const std::vector<int32_t> shape = input.shape();
  const int32_t rank = static_cast<int32_t>(shape.size());
  if (rank < 1) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, ": input '", input.name(),
                  "' must have rank >= 1");
  }
  AxisList axes;
  KILN_SDK_RETURN_IF_ERROR(ReadAxes(k, sdk::Input(1, "axis"), rank, &axes));
  if (!axes.known) return KILN_STATUS_OK;
  if (axes.axes.size() != 1) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, ": axis input '",
                  axis.name(), "' must hold exactly one value, has ",
                  axes.axes.size());
  }
  plan->known = true;
  plan->axis = axes.axes[0];
  if (shape[static_cast<size_t>(plan->axis)] == 0) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, ": axis ", plan->axis,
                  " of input '", input.name(), "' ", ShapeString(shape),
                  " is empty");
  }
  plan->out_shape = shape;
  plan->out_shape.erase(plan->out_shape.begin() + plan->axis);
  return KILN_STATUS_OK;
}

template <bool kMax>
KilnStatus ArgPrepare(KernelContext& k) {
  ArgPlan plan;
  KILN_SDK_RETURN_IF_ERROR(PlanArg(k, sdk::OpName(k), &plan));
  if (!plan.known) return KILN_STATUS_OK;  // sized once the axis exists
  return k.Resize(k.output(0), plan.out_shape);
}

template <bool kMax, typename T, typename I>
void RunArg(const std::vector<int32_t>& shape, int32_t axis, const T* in,
            I* out) {
  const int64_t outer = DimProduct(shape, 0, static_cast<size_t>(axis));
  const int64_t n = shape[static_cast<size_t>(axis)];
  const int64_t inner =
      DimProduct(shape, static_cast<size_t>(axis) + 1, shape.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const T* x = in + o * n * inner + i;
      T best = x[0];
      int64_t best_index = 0;
      for (int64_t j = 1; j < n; ++j) {
        const T v = x[j * inner];
        if (kMax ? v > best : v < best) {
          best = v;
          best_index = j;
        }
      }
      out[o * inner + i] = static_cast<I>(best_index);
    }
  }
}

template <bool kMax, typename T>
void RunArgTyped(const Tensor& out, const std::vector<int32_t>& shape,
                 int32_t axis, const T* in) {
  if (out.type() == KILN_TYPE_INT32) {
    RunArg<kMax>(shape, axis, in, out.data<int32_t>());
  } else {
    RunArg<kMax>(shape, axis, in, out.data<int64_t>());
  }
}

template <bool kMax>
KilnStatus ArgInvoke(KernelContext& k) {
  const char* op = sdk::OpName(k);
  ArgPlan plan;
  KILN_SDK_RETURN_IF_ERROR(PlanArg(k, op, &plan));
  if (!plan.known) {
    return k.Fail(KILN_STATUS_FAILED_PRECONDITION, op,
                  ": axis input has no values at invoke");
  }
  const Tensor input = k.input(0), out = k.output(0);
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectOutputShape(k, sdk::Output(0), plan.out_shape));
  const std::vector<int32_t> shape = input.shape();
  switch (input.type()) {
    case KILN_TYPE_FLOAT32:
      RunArgTyped<kMax>(out, shape, plan.axis, input.data<float>());
      break;
    case KILN_TYPE_INT32:
      RunArgTyped<kMax>(out, shape, plan.axis, input.data<int32_t>());
      break;
    case KILN_TYPE_INT8:
      RunArgTyped<kMax>(out, shape, plan.axis, input.data<int8_t>());
      break;
    case KILN_TYPE_UINT8:
      RunArgTyped<kMax>(out, shape, plan.axis, input.data<uint8_t>());
      break;
    case KILN_TYPE_BOOL:
      RunArgTyped<kMax>(out, shape, plan.axis, input.data<bool>());
      break;
    default:
      RunArgTyped<kMax>(out, shape, plan.axis, input.data<int64_t>());
      break;
  }
  return KILN_STATUS_OK;
}

// ---- TOPK_V2 -------------------------------------------------------------

struct TopKState {
  std::vector<int32_t> order;  // one row's indices, sized in prepare
};

// Reads k; *known is false when the k input has no data yet.
KilnStatus ReadTopK(KernelContext& k, int32_t* top_k, bool* known) {
  const char* op = sdk::OpName(k);
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectInputCount(k, 2, 2));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectOutputCount(k, 2));
  const Tensor input = k.input(0), kt = k.input(1);
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectType(k, sdk::Input(0), kNumericTypes));
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectSameType(k, sdk::Output(0, "values"), sdk::Input(0)));
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectType(k, sdk::Output(1, "indices"), {KILN_TYPE_INT32}));
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectType(k, sdk::Input(1, "k"), {KILN_TYPE_INT32}));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectKnownShape(k, sdk::Input(0)));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectKnownShape(k, sdk::Input(1, "k")));
  if (input.rank() < 1) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, ": input '", input.name(),
                  "' must have rank >= 1");
  }
  if (kt.num_elements() != 1) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, ": k input '", kt.name(),
                  "' must hold one value, has shape ", ShapeString(kt.shape()));
  }
  const int32_t* kv = kt.data<int32_t>();
  *known = kv != nullptr;
  if (!*known) return KILN_STATUS_OK;
  *top_k = kv[0];
  const int32_t depth = input.dim(input.rank() - 1);
  if (*top_k < 0 || *top_k > depth) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, op, ": k = ", *top_k,
                  " must be in [0, ", depth,
                  "] (the size of the last dimension of input '", input.name(),
                  "')");
  }
  return KILN_STATUS_OK;
}

KilnStatus TopKPrepare(KernelContext& k, TopKState& s) {
  int32_t top_k = 0;
  bool known = false;
  KILN_SDK_RETURN_IF_ERROR(ReadTopK(k, &top_k, &known));
  const std::vector<int32_t> shape = k.input(0).shape();
  s.order.assign(static_cast<size_t>(shape.back()), 0);
  if (!known) return KILN_STATUS_OK;  // sized once k exists
  std::vector<int32_t> out_shape = shape;
  out_shape.back() = top_k;
  KILN_SDK_RETURN_IF_ERROR(k.Resize(k.output(0), out_shape));
  return k.Resize(k.output(1), out_shape);
}

template <typename T>
void RunTopK(const T* in, int64_t rows, int32_t depth, int32_t top_k,
             std::vector<int32_t>& order, T* values, int32_t* indices) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* x = in + r * depth;
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + top_k, order.end(),
                      [x](int32_t a, int32_t b) {
                        return x[a] > x[b] || (x[a] == x[b] && a < b);
                      });
    for (int32_t i = 0; i < top_k; ++i) {
      values[r * top_k + i] = x[order[static_cast<size_t>(i)]];
      indices[r * top_k + i] = order[static_cast<size_t>(i)];
    }
  }
}

KilnStatus TopKInvoke(KernelContext& k, TopKState& s) {
  const char* op = sdk::OpName(k);
  int32_t top_k = 0;
  bool known = false;
  KILN_SDK_RETURN_IF_ERROR(ReadTopK(k, &top_k, &known));
  if (!known) {
    return k.Fail(KILN_STATUS_FAILED_PRECONDITION, op,
                  ": k input has no value at invoke");
  }
  const Tensor input = k.input(0);
  const std::vector<int32_t> shape = input.shape();
  std::vector<int32_t> out_shape = shape;
  out_shape.back() = top_k;
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectOutputShape(k, sdk::Output(0), out_shape));
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectOutputShape(k, sdk::Output(1), out_shape));
  const int32_t depth = shape.back();
  if (s.order.size() != static_cast<size_t>(depth)) {
    return k.Fail(KILN_STATUS_FAILED_PRECONDITION, op,
                  ": input changed shape since prepare");
  }
  if (depth == 0) return KILN_STATUS_OK;
  const int64_t rows = DimProduct(shape, 0, shape.size()) / depth;
  int32_t* indices = k.output(1).data<int32_t>();
  switch (input.type()) {
    case KILN_TYPE_FLOAT32:
      RunTopK(input.data<float>(), rows, depth, top_k, s.order,
              k.output(0).data<float>(), indices);
      break;
    case KILN_TYPE_INT32:
      RunTopK(input.data<int32_t>(), rows, depth, top_k, s.order,
              k.output(0).data<int32_t>(), indices);
      break;
    default:
      RunTopK(input.data<int64_t>(), rows, depth, top_k, s.order,
              k.output(0).data<int64_t>(), indices);
      break;
  }
  return KILN_STATUS_OK;
}

}  // namespace

void RegisterReductionKernels(sdk::PluginDefinition& def) {
  // MEAN, REDUCE_MAX, REDUCE_MIN v1: float32/int32/int64 (and uint8); v2:
  // int8; v3: int16.
  def.AddKernel(ReduceKernel<ReduceKind::kMean>(KILN_OP_MEAN, 1, 3));
  def.AddKernel(ReduceKernel<ReduceKind::kMax>(KILN_OP_REDUCE_MAX, 1, 3));
  def.AddKernel(ReduceKernel<ReduceKind::kMin>(KILN_OP_REDUCE_MIN, 1, 3));
  // SUM v1: float32/int32/int64 (and uint8, int16); v2: int8. REDUCE_PROD
  // v1: float32/int32/int64; v2: int8 / int16 (quantized or not).
  def.AddKernel(ReduceKernel<ReduceKind::kSum>(KILN_OP_SUM, 1, 2));
  def.AddKernel(ReduceKernel<ReduceKind::kProd>(KILN_OP_REDUCE_PROD, 1, 2));
  // REDUCE_ANY, REDUCE_ALL v1: bool (the only version TFLite defines).
  def.AddKernel(ReduceKernel<ReduceKind::kAny>(KILN_OP_REDUCE_ANY, 1, 1));
  def.AddKernel(ReduceKernel<ReduceKind::kAll>(KILN_OP_REDUCE_ALL, 1, 1));
  // ARG_MAX, ARG_MIN v1: float32/int32/int64/uint8 input, v2: int8, v3:
  // bool; int32/int64 output. Ties give the first index.
  def.AddKernel(sdk::MakeKernel<ArgPrepare<true>, ArgInvoke<true>>(
      KILN_OP_ARG_MAX, 1, 3));
  def.AddKernel(sdk::MakeKernel<ArgPrepare<false>, ArgInvoke<false>>(
      KILN_OP_ARG_MIN, 1, 3));
  // TOPK_V2 v1: float32/int32/int64 input, int32 k and indices (v2 int8,
  // v3 int16 not implemented).
  def.AddKernel(sdk::StatePerShapeSignature(
      sdk::MakeStatefulKernel<TopKState, TopKPrepare, TopKInvoke>(
          KILN_OP_TOPK_V2, 1, 1)));
}

}  // namespace kiln::cpu::nn
