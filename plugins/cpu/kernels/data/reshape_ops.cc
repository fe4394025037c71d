// RESHAPE, SQUEEZE, EXPAND_DIMS and SHAPE: ops that change only the shape,
// so invoke is one copy of the bytes.
#include <cstring>

#include "kernels/data/data_common.h"

namespace kiln::cpu::data {
namespace {

using sdk::KernelContext;
using sdk::Tensor;

KilnStatus RunCopy(KernelContext& k, const PlanBase&) {
  const Tensor in = k.input(0), out = k.output(0);
  const void* src = nullptr;
  KILN_SDK_RETURN_IF_ERROR(sdk::BufferOf(k, sdk::Input(0), &src));
  const size_t bytes =
      static_cast<size_t>(in.num_elements()) * sdk::TypeByteSize(in.type());
  void* dst = out.data<void>();
  if (bytes > 0 && dst != src) std::memmove(dst, src, bytes);
  return KILN_STATUS_OK;
}

// ---- RESHAPE -------------------------------------------------------------

KilnStatus PlanReshape(KernelContext& k, PlanBase& plan) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectInputCount(k, 1, 2));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectOutputCount(k, 1));
  const Tensor in = k.input(0);
  if (in.present() && in.type() == KILN_TYPE_STRING) {
    return k.Fail(KILN_STATUS_UNIMPLEMENTED, "RESHAPE of STRING tensor '",
                  in.name(),
                  "' is not supported by the CPU plugin: the extension API "
                  "gives kernels no way to allocate variable-length string "
                  "outputs");
  }
  KILN_SDK_RETURN_IF_ERROR(ExpectMovableInOut(k));

  // The shape comes from a 1-D shape input when there is one, else from the
  // new_shape option (TFLite's rule).
  std::vector<int64_t> requested;
  const Tensor shape_input = k.num_inputs() == 2 ? k.input(1) : Tensor();
  if (shape_input.present() && shape_input.rank() == 1) {
    KILN_SDK_RETURN_IF_ERROR(
        ReadIndexValues(k, sdk::Input(1, "shape"), plan, &requested));
    if (!plan.ready) return KILN_STATUS_OK;
  } else {
    const std::vector<int32_t> option = k.OptionIntArray(KILN_OPTION_NEW_SHAPE);
    if (shape_input.present() && option.empty()) {
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "shape input '",
                    shape_input.name(), "' must be 1-D, got rank ",
                    shape_input.rank(), ", and there is no new_shape option");
    }
    // Legacy converters wrote new_shape [0] for a scalar.
    if (!(option.size() == 1 && option[0] == 0)) {
      requested.assign(option.begin(), option.end());
    }
  }

  const int64_t input_elements = in.num_elements();
  Shape shape(requested.size());
  int stretch = -1;
  int64_t known = 1;
  for (size_t i = 0; i < requested.size(); ++i) {
    const int64_t d = requested[i];
    if (d == -1) {
      if (stretch >= 0) {
        return k.Fail(KILN_STATUS_INVALID_ARGUMENT,
                      "new shape has more than one -1 dimension");
      }
      stretch = static_cast<int>(i);
      continue;
    }
    if (d < 0 || d > INT32_MAX) {
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "new shape dimension ", i,
                    " is ", d, "; dimensions must be >= 0 (or one -1)");
    }
    shape[i] = static_cast<int32_t>(d);
    known *= d;
  }
  if (stretch >= 0) {
    if (known == 0 || input_elements % known != 0) {
      return k.Fail(KILN_STATUS_INVALID_ARGUMENT,
                    "cannot infer the -1 "
                    "dimension: input '",
                    in.name(), "' has ", input_elements,
                    " elements, not a multiple of the other dimensions' "
                    "product ",
                    known);
    }
    shape[static_cast<size_t>(stretch)] =
        static_cast<int32_t>(input_elements / known);
    known = input_elements;
  }
  if (known != input_elements) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "cannot reshape input '",
                  in.name(), "' of shape ", ShapeString(in.shape()), " (",
                  input_elements, " elements) to ", ShapeString(shape), " (",
                  known, " elements)");
  }
  plan.output_shapes = {shape};
  return KILN_STATUS_OK;
}

// ---- SQUEEZE -------------------------------------------------------------

KilnStatus PlanSqueeze(KernelContext& k, PlanBase& plan) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectInputCount(k, 1, 1));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectOutputCount(k, 1));
  KILN_SDK_RETURN_IF_ERROR(ExpectMovableInOut(k));
  const Shape in_shape = k.input(0).shape();
  const int rank = static_cast<int>(in_shape.size());
  std::vector<bool> drop(in_shape.size(), false);
  const std::vector<int32_t> dims = k.OptionIntArray(KILN_OPTION_SQUEEZE_DIMS);
  if (dims.empty()) {
    for (int i = 0; i < rank; ++i) drop[i] = in_shape[i] == 1;
  } else {
    for (const int32_t d : dims) {
      int axis = 0;
      KILN_SDK_RETURN_IF_ERROR(
          sdk::NormalizeAxis(k, "squeeze dim", d, rank, &axis));
      if (in_shape[axis] != 1) {
        return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "cannot squeeze dim ", d,
                      " of input shape ", ShapeString(in_shape),
                      ": its size is ", in_shape[axis], ", not 1");
      }
      drop[axis] = true;
    }
  }
  Shape out;
  for (int i = 0; i < rank; ++i) {
    if (!drop[i]) out.push_back(in_shape[i]);
  }
  plan.output_shapes = {out};
  return KILN_STATUS_OK;
}

// ---- EXPAND_DIMS ---------------------------------------------------------

KilnStatus PlanExpandDims(KernelContext& k, PlanBase& plan) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectInputCount(k, 2, 2));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectOutputCount(k, 1));
  KILN_SDK_RETURN_IF_ERROR(ExpectMovableInOut(k));
  constexpr sdk::Operand kAxis = sdk::Input(1, "axis");
  std::vector<int64_t> axis_values;
  KILN_SDK_RETURN_IF_ERROR(ReadIndexValues(k, kAxis, plan, &axis_values));
  if (!plan.ready) return KILN_STATUS_OK;
  if (axis_values.size() != 1) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, sdk::Describe(k, kAxis),
                  " must hold exactly one value, has ", axis_values.size());
  }
  Shape shape = k.input(0).shape();
  int axis = 0;
  KILN_SDK_RETURN_IF_ERROR(sdk::NormalizeAxis(
      k, "axis", axis_values[0], static_cast<int>(shape.size()) + 1, &axis));
  shape.insert(shape.begin() + axis, 1);
  plan.output_shapes = {shape};
  return KILN_STATUS_OK;
}

// ---- SHAPE ---------------------------------------------------------------

KilnStatus PlanShape(KernelContext& k, PlanBase& plan) {
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectInputCount(k, 1, 1));
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectOutputCount(k, 1));
  const Tensor out = k.output(0);
  KILN_SDK_RETURN_IF_ERROR(sdk::ExpectPresent(k, sdk::Input(0)));
  KILN_SDK_RETURN_IF_ERROR(
      sdk::ExpectType(k, sdk::Output(0), sdk::kIndexTypes));
  const int64_t out_type = k.OptionInt(KILN_OPTION_OUTPUT_TYPE, out.type());
  if (out_type != out.type()) {
    return k.Fail(KILN_STATUS_INVALID_ARGUMENT, "out_type option ",
                  sdk::TypeName(static_cast<KilnTensorType>(out_type)),
                  " does not match output '", out.name(), "' of type ",
                  sdk::TypeName(out.type()));
  }
  plan.output_shapes = {{k.input(0).rank()}};
  return KILN_STATUS_OK;
}

KilnStatus RunShape(KernelContext& k, const PlanBase&) {
  const Shape shape = k.input(0).shape();
  const Tensor out = k.output(0);
  for (size_t i = 0; i < shape.size(); ++i) {
    if (out.type() == KILN_TYPE_INT64) {
      out.data<int64_t>()[i] = shape[i];
    } else {
      out.data<int32_t>()[i] = shape[i];
    }
  }
  return KILN_STATUS_OK;
}

}  // namespace

void RegisterReshapeKernels(sdk::PluginDefinition& def) {
  // RESHAPE v1: the only version; any element type (no STRING).
  def.AddKernel(
      KeptPlanKernel<PlanBase, PlanReshape, RunCopy>(KILN_OP_RESHAPE, 1, 1));
  // SQUEEZE v1: numeric/bool types. (v2 adds STRING: not supported.)
  def.AddKernel(
      PlannedKernel<PlanBase, PlanSqueeze, RunCopy>(KILN_OP_SQUEEZE, 1, 1));
  // EXPAND_DIMS v1: the only version.
  def.AddKernel(PlannedKernel<PlanBase, PlanExpandDims, RunCopy>(
      KILN_OP_EXPAND_DIMS, 1, 1));
  // SHAPE v1: the only version; out_type INT32 or INT64.
  def.AddKernel(
      PlannedKernel<PlanBase, PlanShape, RunShape>(KILN_OP_SHAPE, 1, 1));
}

}  // namespace kiln::cpu::data
