#include "model/op_options.h"

#include <cmath>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "kiln/kiln_builtin_ops.h"
#include "kiln/kiln_extension.h"
#include "schema/kiln_model_generated.h"

namespace kiln {
namespace {

using Type = OptionFieldType;
using BO = fb::BuiltinOptions;
using BO2 = fb::BuiltinOptions2;

constexpr uint8_t U(BO t) { return static_cast<uint8_t>(t); }
constexpr uint8_t U2(BO2 t) { return static_cast<uint8_t>(t); }

// Field of schema table `Table` named by its VT_ constant.
#define KILN_FIELD(Table, VT, key, type, def) \
  OptionField { key, fb::Table::VT, Type::type, def }
#define KILN_ACTIVATION(Table)                    \
  KILN_FIELD(Table, VT_FUSED_ACTIVATION_FUNCTION, \
             KILN_OPTION_FUSED_ACTIVATION, kInt8, 0)

std::vector<OptionField> Pool2DFields() {
  return {
      KILN_FIELD(Pool2DOptions, VT_PADDING, KILN_OPTION_PADDING, kInt8, 0),
      KILN_FIELD(Pool2DOptions, VT_STRIDE_W, KILN_OPTION_STRIDE_W, kInt32, 0),
      KILN_FIELD(Pool2DOptions, VT_STRIDE_H, KILN_OPTION_STRIDE_H, kInt32, 0),
      KILN_FIELD(Pool2DOptions, VT_FILTER_WIDTH, KILN_OPTION_FILTER_W, kInt32,
                 0),
      KILN_FIELD(Pool2DOptions, VT_FILTER_HEIGHT, KILN_OPTION_FILTER_H, kInt32,
                 0),
      KILN_ACTIVATION(Pool2DOptions)};
}

std::vector<OptionField> ReducerFields() {
  return {KILN_FIELD(ReducerOptions, VT_KEEP_DIMS, KILN_OPTION_KEEP_DIMS, kBool,
                     0)};
}

std::vector<OpOptionsLayout> MakeLayouts() {
  std::vector<OpOptionsLayout> l;
  // ---- Arithmetic ----
  l.push_back({KILN_OP_ADD,
               false,
               U(BO::AddOptions),
               "AddOptions",
               {KILN_ACTIVATION(AddOptions),
                KILN_FIELD(AddOptions, VT_POT_SCALE_INT16,
                           KILN_OPTION_POT_SCALE_INT16, kBool, 1)}});
  l.push_back({KILN_OP_SUB,
               false,
               U(BO::SubOptions),
               "SubOptions",
               {KILN_ACTIVATION(SubOptions),
                KILN_FIELD(SubOptions, VT_POT_SCALE_INT16,
                           KILN_OPTION_POT_SCALE_INT16, kBool, 1)}});
  l.push_back({KILN_OP_MUL,
               false,
               U(BO::MulOptions),
               "MulOptions",
               {KILN_ACTIVATION(MulOptions)}});
  l.push_back({KILN_OP_DIV,
               false,
               U(BO::DivOptions),
               "DivOptions",
               {KILN_ACTIVATION(DivOptions)}});
  // ---- Convolution, pooling, dense ----
  l.push_back(
      {KILN_OP_CONV_2D,
       false,
       U(BO::Conv2DOptions),
       "Conv2DOptions",
       {KILN_FIELD(Conv2DOptions, VT_PADDING, KILN_OPTION_PADDING, kInt8, 0),
        KILN_FIELD(Conv2DOptions, VT_STRIDE_W, KILN_OPTION_STRIDE_W, kInt32, 0),
        KILN_FIELD(Conv2DOptions, VT_STRIDE_H, KILN_OPTION_STRIDE_H, kInt32, 0),
        KILN_ACTIVATION(Conv2DOptions),
        KILN_FIELD(Conv2DOptions, VT_DILATION_W_FACTOR, KILN_OPTION_DILATION_W,
                   kInt32, 1),
        KILN_FIELD(Conv2DOptions, VT_DILATION_H_FACTOR, KILN_OPTION_DILATION_H,
                   kInt32, 1)}});
  l.push_back(
      {KILN_OP_CONV_3D,
       false,
       U(BO::Conv3DOptions),
       "Conv3DOptions",
       {KILN_FIELD(Conv3DOptions, VT_PADDING, KILN_OPTION_PADDING, kInt8, 0),
        KILN_FIELD(Conv3DOptions, VT_STRIDE_D, KILN_OPTION_STRIDE_D, kInt32, 0),
        KILN_FIELD(Conv3DOptions, VT_STRIDE_W, KILN_OPTION_STRIDE_W, kInt32, 0),
        KILN_FIELD(Conv3DOptions, VT_STRIDE_H, KILN_OPTION_STRIDE_H, kInt32, 0),
        KILN_ACTIVATION(Conv3DOptions),
        KILN_FIELD(Conv3DOptions, VT_DILATION_D_FACTOR, KILN_OPTION_DILATION_D,
                   kInt32, 1),
        KILN_FIELD(Conv3DOptions, VT_DILATION_W_FACTOR, KILN_OPTION_DILATION_W,
                   kInt32, 1),
        KILN_FIELD(Conv3DOptions, VT_DILATION_H_FACTOR, KILN_OPTION_DILATION_H,
                   kInt32, 1)}});
  l.push_back({KILN_OP_DEPTHWISE_CONV_2D,
               false,
               U(BO::DepthwiseConv2DOptions),
               "DepthwiseConv2DOptions",
               {KILN_FIELD(DepthwiseConv2DOptions, VT_PADDING,
                           KILN_OPTION_PADDING, kInt8, 0),
                KILN_FIELD(DepthwiseConv2DOptions, VT_STRIDE_W,
                           KILN_OPTION_STRIDE_W, kInt32, 0),
                KILN_FIELD(DepthwiseConv2DOptions, VT_STRIDE_H,
                           KILN_OPTION_STRIDE_H, kInt32, 0),
                KILN_FIELD(DepthwiseConv2DOptions, VT_DEPTH_MULTIPLIER,
                           KILN_OPTION_DEPTH_MULTIPLIER, kInt32, 0),
                KILN_ACTIVATION(DepthwiseConv2DOptions),
                KILN_FIELD(DepthwiseConv2DOptions, VT_DILATION_W_FACTOR,
                           KILN_OPTION_DILATION_W, kInt32, 1),
                KILN_FIELD(DepthwiseConv2DOptions, VT_DILATION_H_FACTOR,
                           KILN_OPTION_DILATION_H, kInt32, 1)}});
  l.push_back({KILN_OP_TRANSPOSE_CONV,
               false,
               U(BO::TransposeConvOptions),
               "TransposeConvOptions",
               {KILN_FIELD(TransposeConvOptions, VT_PADDING,
                           KILN_OPTION_PADDING, kInt8, 0),
                KILN_FIELD(TransposeConvOptions, VT_STRIDE_W,
                           KILN_OPTION_STRIDE_W, kInt32, 0),
                KILN_FIELD(TransposeConvOptions, VT_STRIDE_H,
                           KILN_OPTION_STRIDE_H, kInt32, 0),
                KILN_ACTIVATION(TransposeConvOptions)}});
  for (int32_t code :
       {KILN_OP_AVERAGE_POOL_2D, KILN_OP_MAX_POOL_2D, KILN_OP_L2_POOL_2D}) {
    l.push_back(
        {code, false, U(BO::Pool2DOptions), "Pool2DOptions", Pool2DFields()});
  }
  l.push_back({KILN_OP_FULLY_CONNECTED,
               false,
               U(BO::FullyConnectedOptions),
               "FullyConnectedOptions",
               {KILN_ACTIVATION(FullyConnectedOptions),
                KILN_FIELD(FullyConnectedOptions, VT_WEIGHTS_FORMAT,
                           KILN_OPTION_WEIGHTS_FORMAT, kInt8, 0),
                KILN_FIELD(FullyConnectedOptions, VT_KEEP_NUM_DIMS,
                           KILN_OPTION_KEEP_NUM_DIMS, kBool, 0),
                KILN_FIELD(FullyConnectedOptions, VT_ASYMMETRIC_QUANTIZE_INPUTS,
                           KILN_OPTION_ASYMMETRIC_QUANTIZE_INPUTS, kBool, 0)}});
  l.push_back(
      {KILN_OP_BATCH_MATMUL,
       false,
       U(BO::BatchMatMulOptions),
       "BatchMatMulOptions",
       {KILN_FIELD(BatchMatMulOptions, VT_ADJ_X, KILN_OPTION_ADJ_X, kBool, 0),
        KILN_FIELD(BatchMatMulOptions, VT_ADJ_Y, KILN_OPTION_ADJ_Y, kBool, 0),
        KILN_FIELD(BatchMatMulOptions, VT_ASYMMETRIC_QUANTIZE_INPUTS,
                   KILN_OPTION_ASYMMETRIC_QUANTIZE_INPUTS, kBool, 0)}});
  // ---- Activations and normalization ----
  l.push_back(
      {KILN_OP_SOFTMAX,
       false,
       U(BO::SoftmaxOptions),
       "SoftmaxOptions",
       {KILN_FIELD(SoftmaxOptions, VT_BETA, KILN_OPTION_BETA, kFloat, 0)}});
  l.push_back(
      {KILN_OP_LEAKY_RELU,
       false,
       U(BO::LeakyReluOptions),
       "LeakyReluOptions",
       {KILN_FIELD(LeakyReluOptions, VT_ALPHA, KILN_OPTION_ALPHA, kFloat, 0)}});
  l.push_back({KILN_OP_GELU,
               false,
               U(BO::GeluOptions),
               "GeluOptions",
               {KILN_FIELD(GeluOptions, VT_APPROXIMATE, KILN_OPTION_APPROXIMATE,
                           kBool, 0)}});
  l.push_back({KILN_OP_L2_NORMALIZATION,
               false,
               U(BO::L2NormOptions),
               "L2NormOptions",
               {KILN_ACTIVATION(L2NormOptions)}});
  // ---- Recurrent ----
  l.push_back(
      {KILN_OP_LSTM,
       false,
       U(BO::LSTMOptions),
       "LSTMOptions",
       {KILN_ACTIVATION(LSTMOptions),
        KILN_FIELD(LSTMOptions, VT_CELL_CLIP, KILN_OPTION_CELL_CLIP, kFloat, 0),
        KILN_FIELD(LSTMOptions, VT_PROJ_CLIP, KILN_OPTION_PROJ_CLIP, kFloat, 0),
        KILN_FIELD(LSTMOptions, VT_KERNEL_TYPE, KILN_OPTION_LSTM_KERNEL_TYPE,
                   kInt8, 0),
        KILN_FIELD(LSTMOptions, VT_ASYMMETRIC_QUANTIZE_INPUTS,
                   KILN_OPTION_ASYMMETRIC_QUANTIZE_INPUTS, kBool, 0)}});
  l.push_back({KILN_OP_UNIDIRECTIONAL_SEQUENCE_LSTM,
               false,
               U(BO::UnidirectionalSequenceLSTMOptions),
               "UnidirectionalSequenceLSTMOptions",
               {KILN_ACTIVATION(UnidirectionalSequenceLSTMOptions),
                KILN_FIELD(UnidirectionalSequenceLSTMOptions, VT_CELL_CLIP,
                           KILN_OPTION_CELL_CLIP, kFloat, 0),
                KILN_FIELD(UnidirectionalSequenceLSTMOptions, VT_PROJ_CLIP,
                           KILN_OPTION_PROJ_CLIP, kFloat, 0),
                KILN_FIELD(UnidirectionalSequenceLSTMOptions, VT_TIME_MAJOR,
                           KILN_OPTION_TIME_MAJOR, kBool, 0),
                KILN_FIELD(UnidirectionalSequenceLSTMOptions,
                           VT_ASYMMETRIC_QUANTIZE_INPUTS,
                           KILN_OPTION_ASYMMETRIC_QUANTIZE_INPUTS, kBool, 0),
                KILN_FIELD(UnidirectionalSequenceLSTMOptions,
                           VT_DIAGONAL_RECURRENT_TENSORS,
                           KILN_OPTION_DIAGONAL_RECURRENT_TENSORS, kBool, 0)}});
  // ---- Shape and data movement ----
  l.push_back(
      {KILN_OP_CONCATENATION,
       false,
       U(BO::ConcatenationOptions),
       "ConcatenationOptions",
       {KILN_FIELD(ConcatenationOptions, VT_AXIS, KILN_OPTION_AXIS, kInt32, 0),
        KILN_ACTIVATION(ConcatenationOptions)}});
  l.push_back({KILN_OP_RESHAPE,
               false,
               U(BO::ReshapeOptions),
               "ReshapeOptions",
               {KILN_FIELD(ReshapeOptions, VT_NEW_SHAPE, KILN_OPTION_NEW_SHAPE,
                           kInt32Vector, 0)}});
  l.push_back({KILN_OP_SQUEEZE,
               false,
               U(BO::SqueezeOptions),
               "SqueezeOptions",
               {KILN_FIELD(SqueezeOptions, VT_SQUEEZE_DIMS,
                           KILN_OPTION_SQUEEZE_DIMS, kInt32Vector, 0)}});
  l.push_back({KILN_OP_STRIDED_SLICE,
               false,
               U(BO::StridedSliceOptions),
               "StridedSliceOptions",
               {KILN_FIELD(StridedSliceOptions, VT_BEGIN_MASK,
                           KILN_OPTION_BEGIN_MASK, kInt32, 0),
                KILN_FIELD(StridedSliceOptions, VT_END_MASK,
                           KILN_OPTION_END_MASK, kInt32, 0),
                KILN_FIELD(StridedSliceOptions, VT_ELLIPSIS_MASK,
                           KILN_OPTION_ELLIPSIS_MASK, kInt32, 0),
                KILN_FIELD(StridedSliceOptions, VT_NEW_AXIS_MASK,
                           KILN_OPTION_NEW_AXIS_MASK, kInt32, 0),
                KILN_FIELD(StridedSliceOptions, VT_SHRINK_AXIS_MASK,
                           KILN_OPTION_SHRINK_AXIS_MASK, kInt32, 0),
                KILN_FIELD(StridedSliceOptions, VT_OFFSET, KILN_OPTION_OFFSET,
                           kBool, 0)}});
  l.push_back({KILN_OP_GATHER,
               false,
               U(BO::GatherOptions),
               "GatherOptions",
               {KILN_FIELD(GatherOptions, VT_AXIS, KILN_OPTION_AXIS, kInt32, 0),
                KILN_FIELD(GatherOptions, VT_BATCH_DIMS, KILN_OPTION_BATCH_DIMS,
                           kInt32, 0)}});
  l.push_back({KILN_OP_SPLIT,
               false,
               U(BO::SplitOptions),
               "SplitOptions",
               {KILN_FIELD(SplitOptions, VT_NUM_SPLITS, KILN_OPTION_NUM_SPLITS,
                           kInt32, 0)}});
  l.push_back({KILN_OP_SPLIT_V,
               false,
               U(BO::SplitVOptions),
               "SplitVOptions",
               {KILN_FIELD(SplitVOptions, VT_NUM_SPLITS, KILN_OPTION_NUM_SPLITS,
                           kInt32, 0)}});
  l.push_back(
      {KILN_OP_PACK,
       false,
       U(BO::PackOptions),
       "PackOptions",
       {KILN_FIELD(PackOptions, VT_VALUES_COUNT, KILN_OPTION_VALUES_COUNT,
                   kInt32, 0),
        KILN_FIELD(PackOptions, VT_AXIS, KILN_OPTION_AXIS, kInt32, 0)}});
  l.push_back(
      {KILN_OP_UNPACK,
       false,
       U(BO::UnpackOptions),
       "UnpackOptions",
       {KILN_FIELD(UnpackOptions, VT_NUM, KILN_OPTION_NUM, kInt32, 0),
        KILN_FIELD(UnpackOptions, VT_AXIS, KILN_OPTION_AXIS, kInt32, 0)}});
  l.push_back({KILN_OP_RESIZE_BILINEAR,
               false,
               U(BO::ResizeBilinearOptions),
               "ResizeBilinearOptions",
               {KILN_FIELD(ResizeBilinearOptions, VT_ALIGN_CORNERS,
                           KILN_OPTION_ALIGN_CORNERS, kBool, 0),
                KILN_FIELD(ResizeBilinearOptions, VT_HALF_PIXEL_CENTERS,
                           KILN_OPTION_HALF_PIXEL_CENTERS, kBool, 0)}});
  l.push_back({KILN_OP_RESIZE_NEAREST_NEIGHBOR,
               false,
               U(BO::ResizeNearestNeighborOptions),
               "ResizeNearestNeighborOptions",
               {KILN_FIELD(ResizeNearestNeighborOptions, VT_ALIGN_CORNERS,
                           KILN_OPTION_ALIGN_CORNERS, kBool, 0),
                KILN_FIELD(ResizeNearestNeighborOptions, VT_HALF_PIXEL_CENTERS,
                           KILN_OPTION_HALF_PIXEL_CENTERS, kBool, 0)}});
  l.push_back({KILN_OP_MIRROR_PAD,
               false,
               U(BO::MirrorPadOptions),
               "MirrorPadOptions",
               {KILN_FIELD(MirrorPadOptions, VT_MODE,
                           KILN_OPTION_MIRROR_PAD_MODE, kInt8, 0)}});
  l.push_back({KILN_OP_SPACE_TO_DEPTH,
               false,
               U(BO::SpaceToDepthOptions),
               "SpaceToDepthOptions",
               {KILN_FIELD(SpaceToDepthOptions, VT_BLOCK_SIZE,
                           KILN_OPTION_BLOCK_SIZE, kInt32, 0)}});
  l.push_back({KILN_OP_DEPTH_TO_SPACE,
               false,
               U(BO::DepthToSpaceOptions),
               "DepthToSpaceOptions",
               {KILN_FIELD(DepthToSpaceOptions, VT_BLOCK_SIZE,
                           KILN_OPTION_BLOCK_SIZE, kInt32, 0)}});
  // ---- Reductions ----
  for (int32_t code :
       {KILN_OP_MEAN, KILN_OP_SUM, KILN_OP_REDUCE_PROD, KILN_OP_REDUCE_MAX,
        KILN_OP_REDUCE_MIN, KILN_OP_REDUCE_ANY, KILN_OP_REDUCE_ALL}) {
    l.push_back({code, false, U(BO::ReducerOptions), "ReducerOptions",
                 ReducerFields()});
  }
  // ---- Types ----
  l.push_back({KILN_OP_CAST,
               false,
               U(BO::CastOptions),
               "CastOptions",
               {KILN_FIELD(CastOptions, VT_IN_DATA_TYPE,
                           KILN_OPTION_IN_DATA_TYPE, kInt8, 0),
                KILN_FIELD(CastOptions, VT_OUT_DATA_TYPE,
                           KILN_OPTION_OUT_DATA_TYPE, kInt8, 0)}});
  l.push_back({KILN_OP_ARG_MAX,
               false,
               U(BO::ArgMaxOptions),
               "ArgMaxOptions",
               {KILN_FIELD(ArgMaxOptions, VT_OUTPUT_TYPE,
                           KILN_OPTION_OUTPUT_TYPE, kInt8, 0)}});
  l.push_back({KILN_OP_ARG_MIN,
               false,
               U(BO::ArgMinOptions),
               "ArgMinOptions",
               {KILN_FIELD(ArgMinOptions, VT_OUTPUT_TYPE,
                           KILN_OPTION_OUTPUT_TYPE, kInt8, 0)}});
  l.push_back({KILN_OP_SHAPE,
               false,
               U(BO::ShapeOptions),
               "ShapeOptions",
               {KILN_FIELD(ShapeOptions, VT_OUT_TYPE, KILN_OPTION_OUTPUT_TYPE,
                           kInt8, 0)}});
  // ---- Host-private: control flow and resources ----
  l.push_back({KILN_OP_WHILE,
               false,
               U(BO::WhileOptions),
               "WhileOptions",
               {KILN_FIELD(WhileOptions, VT_COND_SUBGRAPH_INDEX,
                           kHostOptionCondSubgraph, kInt32, 0),
                KILN_FIELD(WhileOptions, VT_BODY_SUBGRAPH_INDEX,
                           kHostOptionBodySubgraph, kInt32, 0)}});
  l.push_back({KILN_OP_IF,
               false,
               U(BO::IfOptions),
               "IfOptions",
               {KILN_FIELD(IfOptions, VT_THEN_SUBGRAPH_INDEX,
                           kHostOptionThenSubgraph, kInt32, 0),
                KILN_FIELD(IfOptions, VT_ELSE_SUBGRAPH_INDEX,
                           kHostOptionElseSubgraph, kInt32, 0)}});
  l.push_back({KILN_OP_CALL_ONCE,
               false,
               U(BO::CallOnceOptions),
               "CallOnceOptions",
               {KILN_FIELD(CallOnceOptions, VT_INIT_SUBGRAPH_INDEX,
                           kHostOptionInitSubgraph, kInt32, 0)}});
  l.push_back({KILN_OP_VAR_HANDLE,
               false,
               U(BO::VarHandleOptions),
               "VarHandleOptions",
               {KILN_FIELD(VarHandleOptions, VT_CONTAINER, kHostOptionContainer,
                           kString, 0),
                KILN_FIELD(VarHandleOptions, VT_SHARED_NAME,
                           kHostOptionSharedName, kString, 0)}});
  l.push_back(
      {KILN_OP_STABLEHLO_COMPOSITE,
       true,
       U2(BO2::StableHLOCompositeOptions),
       "StableHLOCompositeOptions",
       {KILN_FIELD(StableHLOCompositeOptions, VT_NAME, kHostOptionCompositeName,
                   kString, 0),
        KILN_FIELD(StableHLOCompositeOptions, VT_DECOMPOSITION_SUBGRAPH_INDEX,
                   kHostOptionDecompositionSubgraph, kInt32, 0),
        KILN_FIELD(StableHLOCompositeOptions, VT_VERSION,
                   kHostOptionCompositeVersion, kInt32, 0)},
       fb::StableHLOCompositeOptions::VT_COMPOSITE_ATTRIBUTES});
  return l;
}

#undef KILN_ACTIVATION
#undef KILN_FIELD

OptionValue::Kind KindOf(OptionFieldType type) {
  switch (type) {
    case Type::kFloat:
      return OptionValue::Kind::kFloat;
    case Type::kInt32Vector:
      return OptionValue::Kind::kIntArray;
    case Type::kString:
      return OptionValue::Kind::kString;
    default:
      return OptionValue::Kind::kInt;
  }
}

const char* KindName(OptionValue::Kind kind) {
  switch (kind) {
    case OptionValue::Kind::kInt:
      return "integer";
    case OptionValue::Kind::kFloat:
      return "float";
    case OptionValue::Kind::kIntArray:
      return "int32 array";
    case OptionValue::Kind::kString:
      return "string";
  }
  return "?";
}

}  // namespace

const std::vector<OpOptionsLayout>& AllOpOptionsLayouts() {
  static const std::vector<OpOptionsLayout>* layouts =
      new std::vector<OpOptionsLayout>(MakeLayouts());
  return *layouts;
}

const OpOptionsLayout* FindOpOptionsLayout(int32_t builtin_code) {
  for (const OpOptionsLayout& layout : AllOpOptionsLayouts()) {
    if (layout.builtin_code == builtin_code) return &layout;
  }
  return nullptr;
}

void ReadOpOptions(const OpOptionsLayout& layout,
                   const flatbuffers::Table* table, NodeDesc* node) {
  for (const OptionField& f : layout.fields) {
    const flatbuffers::voffset_t vt = f.vtable_offset;
    switch (f.type) {
      case Type::kBool:
        node->SetInt(f.key, table
                                ? table->GetField<uint8_t>(
                                      vt, static_cast<uint8_t>(f.default_value))
                                : static_cast<int64_t>(f.default_value));
        break;
      case Type::kInt8:
        node->SetInt(f.key, table
                                ? table->GetField<int8_t>(
                                      vt, static_cast<int8_t>(f.default_value))
                                : static_cast<int64_t>(f.default_value));
        break;
      case Type::kInt32:
        node->SetInt(f.key, table
                                ? table->GetField<int32_t>(
                                      vt, static_cast<int32_t>(f.default_value))
                                : static_cast<int64_t>(f.default_value));
        break;
      case Type::kFloat:
        node->SetFloat(f.key, table
                                  ? table->GetField<float>(
                                        vt, static_cast<float>(f.default_value))
                                  : static_cast<float>(f.default_value));
        break;
      case Type::kInt32Vector: {
        const auto* v =
            table ? table->GetPointer<const flatbuffers::Vector<int32_t>*>(vt)
                  : nullptr;
        if (v != nullptr) node->SetIntArray(f.key, {v->begin(), v->end()});
        break;
      }
      case Type::kString: {
        const auto* s =
            table ? table->GetPointer<const flatbuffers::String*>(vt) : nullptr;
        node->SetString(f.key, s ? s->str() : std::string());
        break;
      }
    }
  }
}

absl::StatusOr<flatbuffers::Offset<void>> WriteOpOptions(
    const OpOptionsLayout& layout,
    const std::vector<std::pair<uint32_t, OptionValue>>& options,
    flatbuffers::FlatBufferBuilder* fbb) {
  struct Pending {
    const OptionField* field;
    const OptionValue* value;
    flatbuffers::uoffset_t offset = 0;  // vectors and strings
  };
  std::vector<Pending> pending;
  for (const auto& [key, value] : options) {
    const OptionField* field = nullptr;
    for (const OptionField& f : layout.fields) {
      if (f.key == key) field = &f;
    }
    if (field == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "option ", OptionKeyName(key), " (key ", key, ") does not exist for ",
          BuiltinOpName(layout.builtin_code), " (", layout.table_name,
          "); remove it"));
    }
    if (value.kind != KindOf(field->type)) {
      return absl::InvalidArgumentError(
          absl::StrCat("option ", OptionKeyName(key), " of ",
                       BuiltinOpName(layout.builtin_code), " needs a ",
                       KindName(KindOf(field->type)), " value, got a ",
                       KindName(value.kind)));
    }
    int64_t lo = std::numeric_limits<int32_t>::min();
    int64_t hi = std::numeric_limits<int32_t>::max();
    if (field->type == Type::kInt8) lo = -128, hi = 127;
    if (field->type == Type::kBool) lo = 0, hi = 1;
    if (value.kind == OptionValue::Kind::kInt &&
        (value.i < lo || value.i > hi)) {
      return absl::InvalidArgumentError(
          absl::StrCat("option ", OptionKeyName(key), " of ",
                       BuiltinOpName(layout.builtin_code), " is ", value.i,
                       ", outside the field's range [", lo, ", ", hi, "]"));
    }
    pending.push_back({field, &value});
  }
  // Vectors and strings must be written before the table is started.
  for (Pending& p : pending) {
    if (p.field->type == Type::kInt32Vector) {
      p.offset = fbb->CreateVector(p.value->array).o;
    } else if (p.field->type == Type::kString) {
      p.offset = fbb->CreateString(p.value->s).o;
    }
  }
  const flatbuffers::uoffset_t start = fbb->StartTable();
  for (const Pending& p : pending) {
    const flatbuffers::voffset_t vt = p.field->vtable_offset;
    const double def = p.field->default_value;
    switch (p.field->type) {
      case Type::kBool:
        fbb->AddElement<uint8_t>(vt, static_cast<uint8_t>(p.value->i),
                                 static_cast<uint8_t>(def));
        break;
      case Type::kInt8:
        fbb->AddElement<int8_t>(vt, static_cast<int8_t>(p.value->i),
                                static_cast<int8_t>(def));
        break;
      case Type::kInt32:
        fbb->AddElement<int32_t>(vt, static_cast<int32_t>(p.value->i),
                                 static_cast<int32_t>(def));
        break;
      case Type::kFloat:
        fbb->AddElement<float>(vt, p.value->f, static_cast<float>(def));
        break;
      case Type::kInt32Vector:
      case Type::kString:
        fbb->AddOffset(vt, flatbuffers::Offset<void>(p.offset));
        break;
    }
  }
  return flatbuffers::Offset<void>(fbb->EndTable(start));
}

const char* OptionKeyName(uint32_t key) {
  switch (key) {
#define KILN_KEY_NAME(k) \
  case k:                \
    return #k;
    KILN_KEY_NAME(KILN_OPTION_FUSED_ACTIVATION)
    KILN_KEY_NAME(KILN_OPTION_PADDING)
    KILN_KEY_NAME(KILN_OPTION_STRIDE_W)
    KILN_KEY_NAME(KILN_OPTION_STRIDE_H)
    KILN_KEY_NAME(KILN_OPTION_DILATION_W)
    KILN_KEY_NAME(KILN_OPTION_DILATION_H)
    KILN_KEY_NAME(KILN_OPTION_DEPTH_MULTIPLIER)
    KILN_KEY_NAME(KILN_OPTION_FILTER_W)
    KILN_KEY_NAME(KILN_OPTION_FILTER_H)
    KILN_KEY_NAME(KILN_OPTION_KEEP_NUM_DIMS)
    KILN_KEY_NAME(KILN_OPTION_WEIGHTS_FORMAT)
    KILN_KEY_NAME(KILN_OPTION_ASYMMETRIC_QUANTIZE_INPUTS)
    KILN_KEY_NAME(KILN_OPTION_BETA)
    KILN_KEY_NAME(KILN_OPTION_AXIS)
    KILN_KEY_NAME(KILN_OPTION_KEEP_DIMS)
    KILN_KEY_NAME(KILN_OPTION_NEW_SHAPE)
    KILN_KEY_NAME(KILN_OPTION_SQUEEZE_DIMS)
    KILN_KEY_NAME(KILN_OPTION_BEGIN_MASK)
    KILN_KEY_NAME(KILN_OPTION_END_MASK)
    KILN_KEY_NAME(KILN_OPTION_ELLIPSIS_MASK)
    KILN_KEY_NAME(KILN_OPTION_NEW_AXIS_MASK)
    KILN_KEY_NAME(KILN_OPTION_SHRINK_AXIS_MASK)
    KILN_KEY_NAME(KILN_OPTION_OFFSET)
    KILN_KEY_NAME(KILN_OPTION_BATCH_DIMS)
    KILN_KEY_NAME(KILN_OPTION_NUM_SPLITS)
    KILN_KEY_NAME(KILN_OPTION_VALUES_COUNT)
    KILN_KEY_NAME(KILN_OPTION_NUM)
    KILN_KEY_NAME(KILN_OPTION_ADJ_X)
    KILN_KEY_NAME(KILN_OPTION_ADJ_Y)
    KILN_KEY_NAME(KILN_OPTION_ALIGN_CORNERS)
    KILN_KEY_NAME(KILN_OPTION_HALF_PIXEL_CENTERS)
    KILN_KEY_NAME(KILN_OPTION_ALPHA)
    KILN_KEY_NAME(KILN_OPTION_OUTPUT_TYPE)
    KILN_KEY_NAME(KILN_OPTION_IN_DATA_TYPE)
    KILN_KEY_NAME(KILN_OPTION_OUT_DATA_TYPE)
    KILN_KEY_NAME(KILN_OPTION_MIRROR_PAD_MODE)
    KILN_KEY_NAME(KILN_OPTION_BLOCK_SIZE)
    KILN_KEY_NAME(KILN_OPTION_APPROXIMATE)
    KILN_KEY_NAME(KILN_OPTION_POT_SCALE_INT16)
    KILN_KEY_NAME(KILN_OPTION_CELL_CLIP)
    KILN_KEY_NAME(KILN_OPTION_PROJ_CLIP)
    KILN_KEY_NAME(KILN_OPTION_LSTM_KERNEL_TYPE)
    KILN_KEY_NAME(KILN_OPTION_TIME_MAJOR)
    KILN_KEY_NAME(KILN_OPTION_DIAGONAL_RECURRENT_TENSORS)
    KILN_KEY_NAME(KILN_OPTION_STRIDE_D)
    KILN_KEY_NAME(KILN_OPTION_DILATION_D)
    KILN_KEY_NAME(kHostOptionCondSubgraph)
    KILN_KEY_NAME(kHostOptionBodySubgraph)
    KILN_KEY_NAME(kHostOptionThenSubgraph)
    KILN_KEY_NAME(kHostOptionElseSubgraph)
    KILN_KEY_NAME(kHostOptionInitSubgraph)
    KILN_KEY_NAME(kHostOptionDecompositionSubgraph)
    KILN_KEY_NAME(kHostOptionContainer)
    KILN_KEY_NAME(kHostOptionSharedName)
    KILN_KEY_NAME(kHostOptionCompositeName)
    KILN_KEY_NAME(kHostOptionCompositeVersion)
#undef KILN_KEY_NAME
    default:
      return "unknown option key";
  }
}

}  // namespace kiln
