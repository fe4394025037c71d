#include "model/model_checks.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "kiln/kiln_builtin_ops.h"
#include "model/model.h"
#include "model/op_options.h"
#include "model/sparsity.h"
#include "runtime/graph.h"

namespace kiln {
namespace {

// What to do about a file that breaks the format's rules.
constexpr char kReexport[] =
    "The file is corrupt or was written by a broken tool; re-export it with "
    "the TFLite/LiteRT converter.";

constexpr int32_t kLastKnownTensorType = KILN_TYPE_BFLOAT16;

template <typename T>
int Size(const flatbuffers::Vector<T>* v) {
  return v ? static_cast<int>(v->size()) : 0;
}

std::string ShapeString(const flatbuffers::Vector<int32_t>* shape) {
  if (shape == nullptr) return "[]";
  return absl::StrCat("[", absl::StrJoin(shape->begin(), shape->end(), ","),
                      "]");
}

// Number of elements of `shape`; nullopt if a dim is negative or the count
// overflows.
std::optional<uint64_t> ElementCount(
    const flatbuffers::Vector<int32_t>* shape) {
  uint64_t count = 1;
  if (shape == nullptr) return count;
  for (int32_t d : *shape) {
    if (d < 0) return std::nullopt;
    if (d != 0 && count > UINT64_MAX / static_cast<uint64_t>(d) / 16) {
      return std::nullopt;
    }
    count *= static_cast<uint64_t>(d);
  }
  return count;
}

// True when [offset, offset+size) lies inside a file of `file_size` bytes.
bool InsideFile(uint64_t offset, uint64_t size, size_t file_size) {
  return offset <= file_size && size <= file_size - offset;
}

int32_t ReadInt32(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

class Checker {
 public:
  Checker(const fb::Model& model, const uint8_t* file, size_t file_size,
          const std::string& source)
      : model_(model), file_(file), file_size_(file_size), source_(source) {}

  absl::Status Run() {
    const int num_subgraphs = Size(model_.subgraphs());
    if (num_subgraphs == 0) {
      return Error(
          "the model has no subgraphs; a model needs at least its main "
          "subgraph (subgraph 0). ",
          kReexport);
    }
    KILN_RETURN_IF_ERROR(CheckBuffers());
    KILN_RETURN_IF_ERROR(CheckOperatorCodes());
    for (int i = 0; i < num_subgraphs; ++i) {
      KILN_RETURN_IF_ERROR(CheckSubgraph(i));
    }
    KILN_RETURN_IF_ERROR(CheckSubgraphCalls());
    KILN_RETURN_IF_ERROR(CheckSignatures());
    return CheckMetadata();
  }

 private:
  template <typename... Args>
  absl::Status Error(const Args&... args) const {
    return absl::InvalidArgumentError(absl::StrCat(source_, ": ", args...));
  }

  int NumBuffers() const { return Size(model_.buffers()); }

  absl::Status CheckBuffers() const {
    for (int i = 0; i < NumBuffers(); ++i) {
      const fb::Buffer* buffer = model_.buffers()->Get(i);
      if (buffer->data() == nullptr && buffer->offset() > 1 &&
          !InsideFile(buffer->offset(), buffer->size(), file_size_)) {
        return Error("buffer ", i, " points to external data at file offset ",
                     buffer->offset(), " with ", buffer->size(),
                     " bytes, past the end of the ", file_size_,
                     "-byte file. The file is truncated (copy or download it "
                     "again) or its weights were written to another file.");
      }
    }
    return absl::OkStatus();
  }

  absl::Status CheckOperatorCodes() const {
    const auto* codes = model_.operator_codes();
    for (int i = 0; i < Size(codes); ++i) {
      const fb::OperatorCode* code = codes->Get(i);
      const int32_t op = OpCodeOf(*code);
      if (op < 0) {
        return Error("operator code ", i, " has invalid builtin code ", op,
                     ". ", kReexport);
      }
      if (op == KILN_OP_CUSTOM && (code->custom_code() == nullptr ||
                                   code->custom_code()->size() == 0)) {
        return Error("operator code ", i,
                     " is CUSTOM but has no custom_code naming the op. ",
                     kReexport);
      }
      if (code->version() < 1) {
        return Error("operator code ", i, " (", BuiltinOpName(op),
                     ") has version ", code->version(),
                     "; op versions start at 1. ", kReexport);
      }
    }
    return absl::OkStatus();
  }

  absl::Status CheckTensor(int si, const fb::SubGraph* sg, int ti) const {
    const fb::Tensor* t = sg->tensors()->Get(ti);
    const std::string where =
        absl::StrCat(SubgraphLabel(si, sg), ", ", TensorLabel(ti, t), ": ");
    const int32_t type = static_cast<int32_t>(t->type());
    if (type < 0 || type > kLastKnownTensorType) {
      return Error(where, "unknown tensor type ", type,
                   "; this Kiln knows types 0..", kLastKnownTensorType,
                   ". The model may need a newer Kiln release.");
    }
    if (t->buffer() >= static_cast<uint32_t>(std::max(NumBuffers(), 1))) {
      return Error(where, "refers to buffer ", t->buffer(),
                   " but the model has ", NumBuffers(), " buffers. ",
                   kReexport);
    }
    if (t->external_buffer() != 0) {
      return Error(where, "keeps its data in external buffer ",
                   t->external_buffer(),
                   " (a separate weights file); Kiln does not support external "
                   "buffer groups yet. Convert the model with its weights "
                   "inside the .tflite file.");
    }
    KILN_RETURN_IF_ERROR(CheckTensorShape(where, t, type));
    KILN_RETURN_IF_ERROR(CheckQuantization(where, t));
    KILN_RETURN_IF_ERROR(CheckBlockwise(where, sg, t));
    const std::optional<ByteSpan> bytes =
        ConstantBufferBytes(model_, t->buffer(), file_);
    if (!bytes) {
      if (t->sparsity() == nullptr) return absl::OkStatus();
      return Error(where,
                   "has sparsity parameters but no constant data; "
                   "only constants can be sparse. ",
                   kReexport);
    }
    return CheckConstantData(where, t, type, *bytes);
  }

  // A tensor's shape: no negative dimension (as LiteRT, whose loader sizes
  // every tensor from `shape`; dynamic dimensions are -1 in
  // `shape_signature` only), a byte size within 64 bits.
  absl::Status CheckTensorShape(const std::string& where, const fb::Tensor* t,
                                int32_t type) const {
    if (t->shape() == nullptr) return absl::OkStatus();
    std::vector<int32_t> dims;
    for (int32_t d : *t->shape()) {
      if (d < 0) {
        return Error(where, "has invalid dimension ", d, " in shape ",
                     ShapeString(t->shape()),
                     "; `shape` holds concrete sizes (a dynamic dimension "
                     "is -1 in `shape_signature` and 1 in `shape`). ",
                     kReexport);
      }
      dims.push_back(d);
    }
    // Sizes wrapping around made the runtime write past small buffers.
    if (!CheckedByteSize(static_cast<KilnTensorType>(type), dims)) {
      return Error(where, "has shape ", ShapeString(t->shape()), " of ",
                   TypeName(static_cast<KilnTensorType>(type)),
                   ", whose size in bytes does not fit in 64 bits. ",
                   kReexport);
    }
    return absl::OkStatus();
  }

  // A tensor's constant data: not a variable, a valid sparse layout or as
  // many bytes as its shape and type need.
  absl::Status CheckConstantData(const std::string& where, const fb::Tensor* t,
                                 int32_t type, ByteSpan bytes) const {
    if (t->is_variable()) {
      return Error(
          where, "is a variable tensor but also has constant data in buffer ",
          t->buffer(), "; variables get their initial value from an operator. ",
          kReexport);
    }
    if (t->sparsity() != nullptr) {
      const absl::StatusOr<SparseLayout> layout =
          ReadSparseLayout(*t, bytes.size);
      if (layout.ok()) return absl::OkStatus();
      return Error(where, "sparse constant: ", layout.status().message(), ". ",
                   kReexport);
    }
    const std::optional<uint64_t> count = ElementCount(t->shape());
    if (!count) {
      return Error(where, "is a constant with shape ", ShapeString(t->shape()),
                   ", which has a dynamic (-1) or too large dimension. ",
                   kReexport);
    }
    if (type == KILN_TYPE_STRING) return CheckStringData(where, bytes, *count);
    const uint64_t needed =
        type == KILN_TYPE_INT4
            ? (*count + 1) / 2
            : *count * ElementSize(static_cast<KilnTensorType>(type));
    if (bytes.size != needed) {
      return Error(where, "constant data has ", bytes.size, " bytes but shape ",
                   ShapeString(t->shape()), " of ",
                   TypeName(static_cast<KilnTensorType>(type)), " needs ",
                   needed, " bytes. ", kReexport);
    }
    return absl::OkStatus();
  }

  // String tensor layout: int32 n, int32 offsets[n+1], then the bytes.
  absl::Status CheckStringData(const std::string& where, ByteSpan bytes,
                               uint64_t count) const {
    if (bytes.size < 4) {
      return Error(where, "string constant has ", bytes.size,
                   " bytes, too few for its 4-byte string count. ", kReexport);
    }
    const int32_t n = ReadInt32(bytes.data);
    const uint64_t header = 4 * (static_cast<uint64_t>(n) + 2);
    if (n < 0 || header > bytes.size) {
      return Error(where, "string constant declares ", n,
                   " strings, which does not fit its ", bytes.size, " bytes. ",
                   kReexport);
    }
    if (static_cast<uint64_t>(n) != count) {
      return Error(where, "string constant holds ", n,
                   " strings but its shape has ", count, " elements. ",
                   kReexport);
    }
    int64_t previous = static_cast<int64_t>(header);
    for (int32_t i = 0; i <= n; ++i) {
      const int32_t offset = ReadInt32(bytes.data + 4 * (i + 1));
      if (offset < previous || static_cast<uint64_t>(offset) > bytes.size) {
        return Error(where, "string constant offset ", i, " is ", offset,
                     "; offsets must be non-decreasing, start after the ",
                     header, "-byte header and end within the ", bytes.size,
                     " bytes. ", kReexport);
      }
      previous = offset;
    }
    return absl::OkStatus();
  }

  absl::Status CheckQuantization(const std::string& where,
                                 const fb::Tensor* t) const {
    const fb::QuantizationParameters* q = t->quantization();
    if (q == nullptr || Size(q->scale()) == 0) return absl::OkStatus();
    const int scales = Size(q->scale());
    if (Size(q->zero_point()) != scales) {
      return Error(where, "quantization has ", scales, " scales but ",
                   Size(q->zero_point()),
                   " zero points; they must have the same length. ", kReexport);
    }
    if (scales == 1) return absl::OkStatus();
    const int rank = Size(t->shape());
    const int32_t dim = q->quantized_dimension();
    if (dim < 0 || dim >= rank) {
      return Error(where, "per-channel quantization uses dimension ", dim,
                   " but the tensor has rank ", rank, ". ", kReexport);
    }
    const int32_t channels = t->shape()->Get(dim);
    if (channels >= 0 && channels != scales) {
      return Error(where, "per-channel quantization has ", scales,
                   " scales but dimension ", dim, " of shape ",
                   ShapeString(t->shape()), " has ", channels,
                   " entries; they must match. ", kReexport);
    }
    return absl::OkStatus();
  }

  // BlockwiseQuantization details (kiln_extension.h, KilnQuantizationParams):
  // a rank-2 tensor [rows, cols] without per-tensor scales, block_size > 0
  // dividing cols, a constant FLOAT16 or FLOAT32 scale tensor [rows,
  // cols / block_size] and an optional (-1) constant integer zero-point
  // tensor of the same shape.
  absl::Status CheckBlockwise(const std::string& where, const fb::SubGraph* sg,
                              const fb::Tensor* t) const {
    const fb::QuantizationParameters* q = t->quantization();
    const fb::BlockwiseQuantization* b =
        q != nullptr ? q->details_as_BlockwiseQuantization() : nullptr;
    if (b == nullptr) return absl::OkStatus();
    const std::string what = absl::StrCat(where, "blockwise quantization ");
    if (Size(q->scale()) > 0) {
      return Error(what, "comes with ", Size(q->scale()),
                   " per-tensor or per-channel scales as well; a tensor has "
                   "one or the other. ",
                   kReexport);
    }
    const int rank = Size(t->shape());
    if (rank != 2 || t->shape()->Get(0) < 0 || t->shape()->Get(1) < 0) {
      return Error(what, "on a tensor of shape ", ShapeString(t->shape()),
                   "; Kiln reads it on rank-2 tensors [rows, cols] with known "
                   "dimensions (FULLY_CONNECTED weights) only. Quantize this "
                   "tensor per channel instead.");
    }
    const int32_t rows = t->shape()->Get(0), cols = t->shape()->Get(1);
    const int32_t block = b->block_size();
    if (block <= 0 || cols % block != 0) {
      return Error(what, "has block_size ", block,
                   ", which must be positive and divide the last dimension ",
                   cols, " of shape ", ShapeString(t->shape()), ". ",
                   kReexport);
    }
    const auto* block_shape = b->block_shape();
    if (Size(block_shape) > 0 &&
        !(Size(block_shape) == 2 && block_shape->Get(0) == 1 &&
          block_shape->Get(1) == block)) {
      return Error(what, "has block_shape ", ShapeString(block_shape),
                   "; Kiln reads blocks of block_size along the last "
                   "dimension only ([1, ",
                   block, "]). Quantize with blocks along the last dimension.");
    }
    const std::vector<int32_t> grid = {rows, cols / block};
    KILN_RETURN_IF_ERROR(CheckBlockParameters(
        what + "scales", sg, b->scales(), grid,
        {KILN_TYPE_FLOAT16, KILN_TYPE_FLOAT32}, "FLOAT16 or FLOAT32"));
    if (b->zero_points() == -1) return absl::OkStatus();
    return CheckBlockParameters(
        what + "zero_points", sg, b->zero_points(), grid,
        {KILN_TYPE_INT8, KILN_TYPE_INT16, KILN_TYPE_INT32, KILN_TYPE_INT64},
        "INT8, INT16, INT32 or INT64 (or -1 for none)");
  }

  // Tensor `index`, named by the blockwise field `field`: in the subgraph, a
  // dense constant of one of `types` with shape `grid` and its bytes.
  absl::Status CheckBlockParameters(const std::string& field,
                                    const fb::SubGraph* sg, int32_t index,
                                    const std::vector<int32_t>& grid,
                                    std::initializer_list<KilnTensorType> types,
                                    const char* type_names) const {
    const int num_tensors = Size(sg->tensors());
    if (index < 0 || index >= num_tensors) {
      return Error(field, " is tensor ", index, " but the subgraph has ",
                   num_tensors, " tensors. ", kReexport);
    }
    const fb::Tensor* p = sg->tensors()->Get(index);
    const auto type = static_cast<KilnTensorType>(p->type());
    if (std::find(types.begin(), types.end(), type) == types.end()) {
      return Error(field, " is tensor ", index, " of type ", TypeName(type),
                   "; it must be ", type_names, ". ", kReexport);
    }
    const std::vector<int32_t> shape =
        p->shape() != nullptr
            ? std::vector<int32_t>(p->shape()->begin(), p->shape()->end())
            : std::vector<int32_t>{};
    if (shape != grid) {
      return Error(field, " is tensor ", index, " of shape ",
                   ShapeString(p->shape()), "; it must be [", grid[0], ",",
                   grid[1], "] (rows, cols / block_size). ", kReexport);
    }
    const std::optional<ByteSpan> bytes =
        p->buffer() < static_cast<uint32_t>(NumBuffers())
            ? ConstantBufferBytes(model_, p->buffer(), file_)
            : std::nullopt;
    const uint64_t needed =
        static_cast<uint64_t>(grid[0]) * grid[1] * ElementSize(type);
    if (!bytes || p->sparsity() != nullptr || p->is_variable() ||
        bytes->size != needed) {
      return Error(field, " is tensor ", index,
                   ", which must be a dense constant of ", needed,
                   " bytes (its values are read at load). ", kReexport);
    }
    return absl::OkStatus();
  }

  absl::Status CheckSubgraph(int si) const {
    const fb::SubGraph* sg = model_.subgraphs()->Get(si);
    KILN_RETURN_IF_ERROR(CheckSubgraphTensors(si, sg));
    const int num_ops = Size(sg->operators());
    std::vector<int32_t> writer(Size(sg->tensors()), -1);
    std::vector<std::string> op_labels(num_ops);
    for (int oi = 0; oi < num_ops; ++oi) {
      KILN_ASSIGN_OR_RETURN(op_labels[oi], OperatorLabel(si, sg, oi));
      KILN_RETURN_IF_ERROR(CheckOperator(sg, oi, op_labels[oi], writer));
    }
    return CheckExecutionOrder(si, sg, op_labels, writer);
  }

  // Every tensor, and the subgraph's input and output tensor indices.
  absl::Status CheckSubgraphTensors(int si, const fb::SubGraph* sg) const {
    const int num_tensors = Size(sg->tensors());
    for (int ti = 0; ti < num_tensors; ++ti) {
      KILN_RETURN_IF_ERROR(CheckTensor(si, sg, ti));
    }
    for (const auto& [list, what] : {std::pair{sg->inputs(), "input"},
                                     std::pair{sg->outputs(), "output"}}) {
      for (int i = 0; i < Size(list); ++i) {
        const int32_t index = list->Get(i);
        if (index < 0 || index >= num_tensors) {
          return Error(SubgraphLabel(si, sg), ": ", what, " ", i, " is tensor ",
                       index, " but the subgraph has ", num_tensors,
                       " tensors. ", kReexport);
        }
      }
    }
    return absl::OkStatus();
  }

  // "subgraph 0, operator 3 (CUSTOM 'Sinh'): ", once the operator's code
  // index is known to be valid.
  absl::StatusOr<std::string> OperatorLabel(int si, const fb::SubGraph* sg,
                                            int oi) const {
    const fb::Operator* op = sg->operators()->Get(oi);
    const int num_codes = Size(model_.operator_codes());
    if (op->opcode_index() >= static_cast<uint32_t>(num_codes)) {
      return Error(SubgraphLabel(si, sg), ", operator ", oi,
                   ": uses operator code ", op->opcode_index(),
                   " but the model has ", num_codes, " operator codes. ",
                   kReexport);
    }
    const fb::OperatorCode* code =
        model_.operator_codes()->Get(op->opcode_index());
    const int32_t op_code = OpCodeOf(*code);
    std::string label = absl::StrCat(SubgraphLabel(si, sg), ", operator ", oi,
                                     " (", BuiltinOpName(op_code));
    if (op_code == KILN_OP_CUSTOM) {
      absl::StrAppend(&label, " '", code->custom_code()->str(), "'");
    }
    absl::StrAppend(&label, "): ");
    return label;
  }

  // One operator: its options table, tensor indices, outputs (never a
  // constant, never a tensor an earlier operator writes; recorded in
  // `writer`) and custom options inside the file.
  absl::Status CheckOperator(const fb::SubGraph* sg, int oi,
                             const std::string& op_label,
                             std::vector<int32_t>& writer) const {
    const fb::Operator* op = sg->operators()->Get(oi);
    const int num_tensors = Size(sg->tensors());
    KILN_RETURN_IF_ERROR(CheckOptions(
        op_label, op,
        OpCodeOf(*model_.operator_codes()->Get(op->opcode_index()))));
    for (const auto& [list, what] :
         {std::pair{op->inputs(), "input"}, std::pair{op->outputs(), "output"},
          std::pair{op->intermediates(), "intermediate"}}) {
      for (int i = 0; i < Size(list); ++i) {
        const int32_t index = list->Get(i);
        if (index < -1 || index >= num_tensors) {
          return Error(op_label, what, " ", i, " is tensor ", index,
                       " but the subgraph has ", num_tensors, " tensors. ",
                       kReexport);
        }
      }
    }
    for (int i = 0; i < Size(op->outputs()); ++i) {
      const int32_t index = op->outputs()->Get(i);
      if (index < 0) continue;
      const fb::Tensor* t = sg->tensors()->Get(index);
      if (ConstantBufferBytes(model_, t->buffer(), file_)) {
        return Error(op_label, "output ", i, " is ", TensorLabel(index, t),
                     ", a constant; operators cannot write constants. ",
                     kReexport);
      }
      if (writer[index] >= 0) {
        return Error(op_label, "output ", i, " is ", TensorLabel(index, t),
                     ", which operator ", writer[index],
                     " already writes; each tensor has at most one "
                     "producer. ",
                     kReexport);
      }
      writer[index] = oi;
    }
    if (op->large_custom_options_offset() > 1 &&
        !InsideFile(op->large_custom_options_offset(),
                    op->large_custom_options_size(), file_size_)) {
      return Error(op_label, "custom options at file offset ",
                   op->large_custom_options_offset(), " with ",
                   op->large_custom_options_size(),
                   " bytes lie past the end of the ", file_size_,
                   "-byte file. The file is truncated; copy or download it "
                   "again.");
    }
    return absl::OkStatus();
  }

  // Execution order: no operator reads a tensor that the same or a later
  // operator writes (unless it is a constant, subgraph input or variable),
  // and every subgraph output is written or preset. A tensor no operator
  // writes may be read: TFLite loads such models (the corpus has two) and
  // they fail later, at allocation or prepare, where the runtime can say
  // why. `writer`: the operator writing each tensor, -1 for none.
  absl::Status CheckExecutionOrder(int si, const fb::SubGraph* sg,
                                   const std::vector<std::string>& op_labels,
                                   const std::vector<int32_t>& writer) const {
    const int num_tensors = Size(sg->tensors());
    std::vector<bool> preset(num_tensors, false);
    for (int ti = 0; ti < num_tensors; ++ti) {
      const fb::Tensor* t = sg->tensors()->Get(ti);
      preset[ti] =
          t->is_variable() || ConstantBufferBytes(model_, t->buffer(), file_);
    }
    for (int i = 0; i < Size(sg->inputs()); ++i) {
      preset[sg->inputs()->Get(i)] = true;
    }
    for (int oi = 0; oi < Size(sg->operators()); ++oi) {
      const fb::Operator* op = sg->operators()->Get(oi);
      for (int i = 0; i < Size(op->inputs()); ++i) {
        const int32_t index = op->inputs()->Get(i);
        if (index < 0 || preset[index] || writer[index] < oi) continue;
        return Error(op_labels[oi], "input ", i, " reads ",
                     TensorLabel(index, sg->tensors()->Get(index)),
                     " before operator ", writer[index],
                     " writes it. Operators must be stored in execution "
                     "order. ",
                     kReexport);
      }
    }
    for (int i = 0; i < Size(sg->outputs()); ++i) {
      const int32_t index = sg->outputs()->Get(i);
      if (!preset[index] && writer[index] < 0) {
        return Error(SubgraphLabel(si, sg), ": output ", i, " is ",
                     TensorLabel(index, sg->tensors()->Get(index)),
                     ", which no operator writes and which is not a constant, "
                     "an input or a variable. ",
                     kReexport);
      }
    }
    return absl::OkStatus();
  }

  // The options union of a mapped op must be its own table (or absent);
  // control-flow ops must have theirs.
  absl::Status CheckOptions(const std::string& op_label, const fb::Operator* op,
                            int32_t op_code) const {
    const OpOptionsLayout* layout = FindOpOptionsLayout(op_code);
    if (layout == nullptr) return absl::OkStatus();
    const uint8_t type =
        layout->in_options_2
            ? static_cast<uint8_t>(op->builtin_options_2_type())
            : static_cast<uint8_t>(op->builtin_options_type());
    const bool needs_options =
        op_code == KILN_OP_WHILE || op_code == KILN_OP_IF ||
        op_code == KILN_OP_CALL_ONCE || op_code == KILN_OP_STABLEHLO_COMPOSITE;
    if ((type == 0 && needs_options) ||
        (type != 0 && type != layout->union_type)) {
      return Error(op_label, "has options table type ", static_cast<int>(type),
                   " but this op needs ", layout->table_name, " (type ",
                   static_cast<int>(layout->union_type), "). ", kReexport);
    }
    return absl::OkStatus();
  }

  struct Call {
    int from;
    int to;
    std::string how;  // "WHILE body, operator 3"
  };

  // The subgraphs control-flow operator `op` (builtin `code`) runs, as
  // (index, role) pairs; none for other ops. False when its options are
  // missing or of another type (they read as null): *options_name then
  // names the options it needs.
  static bool CalledSubgraphs(
      const fb::Operator& op, int32_t code,
      std::vector<std::pair<int32_t, const char*>>* targets,
      const char** options_name) {
    if (code == KILN_OP_WHILE) {
      *options_name = "WhileOptions";
      const auto* o = op.builtin_options_as_WhileOptions();
      if (o == nullptr) return false;
      *targets = {{o->cond_subgraph_index(), "WHILE cond"},
                  {o->body_subgraph_index(), "WHILE body"}};
    } else if (code == KILN_OP_IF) {
      *options_name = "IfOptions";
      const auto* o = op.builtin_options_as_IfOptions();
      if (o == nullptr) return false;
      *targets = {{o->then_subgraph_index(), "IF then"},
                  {o->else_subgraph_index(), "IF else"}};
    } else if (code == KILN_OP_CALL_ONCE) {
      *options_name = "CallOnceOptions";
      const auto* o = op.builtin_options_as_CallOnceOptions();
      if (o == nullptr) return false;
      *targets = {{o->init_subgraph_index(), "CALL_ONCE init"}};
    } else if (code == KILN_OP_STABLEHLO_COMPOSITE) {
      *options_name = "StableHLOCompositeOptions";
      const auto* o = op.builtin_options_2_as_StableHLOCompositeOptions();
      if (o == nullptr) return false;
      *targets = {{o->decomposition_subgraph_index(),
                   "STABLEHLO_COMPOSITE decomposition"}};
    }
    return true;
  }

  absl::Status CheckSubgraphCalls() const {
    const int n = Size(model_.subgraphs());
    std::vector<std::vector<Call>> calls(n);
    for (int si = 0; si < n; ++si) {
      const fb::SubGraph* sg = model_.subgraphs()->Get(si);
      for (int oi = 0; oi < Size(sg->operators()); ++oi) {
        const fb::Operator* op = sg->operators()->Get(oi);
        const int32_t code =
            OpCodeOf(*model_.operator_codes()->Get(op->opcode_index()));
        std::vector<std::pair<int32_t, const char*>> targets;
        const char* options_name = "";
        if (!CalledSubgraphs(*op, code, &targets, &options_name)) {
          return Error(SubgraphLabel(si, sg), ", operator ", oi, " (",
                       BuiltinOpName(code), ") has no ", options_name,
                       " (the options that name the subgraphs it runs). ",
                       kReexport);
        }
        for (const auto& [target, what] : targets) {
          if (target < 0 || target >= n) {
            return Error(SubgraphLabel(si, sg), ", operator ", oi, " (",
                         BuiltinOpName(code), "): ", what, " subgraph is ",
                         target, " but the model has ", n, " subgraphs. ",
                         kReexport);
          }
          calls[si].push_back(
              {si, target, absl::StrCat(what, ", operator ", oi)});
        }
      }
    }
    // Depth-first search for a cycle.
    enum : uint8_t { kNew, kOnStack, kDone };
    std::vector<uint8_t> state(n, kNew);
    std::vector<const Call*> path;
    std::function<absl::Status(int)> visit = [&](int s) -> absl::Status {
      state[s] = kOnStack;
      for (const Call& call : calls[s]) {
        path.push_back(&call);
        if (state[call.to] == kOnStack) {
          std::string cycle;
          bool in_cycle = false;
          for (const Call* c : path) {
            if (c->from == call.to) in_cycle = true;
            if (!in_cycle) continue;
            absl::StrAppend(&cycle, "subgraph ", c->from, " -(", c->how,
                            ")-> ");
          }
          absl::StrAppend(&cycle, "subgraph ", call.to);
          return Error("subgraphs call themselves recursively: ", cycle,
                       ". Control-flow subgraphs must form a hierarchy "
                       "without cycles. ",
                       kReexport);
        }
        if (state[call.to] == kNew) {
          KILN_RETURN_IF_ERROR(visit(call.to));
        }
        path.pop_back();
      }
      state[s] = kDone;
      return absl::OkStatus();
    };
    for (int s = 0; s < n; ++s) {
      if (state[s] != kNew) continue;
      KILN_RETURN_IF_ERROR(visit(s));
    }
    return absl::OkStatus();
  }

  absl::Status CheckSignatures() const {
    const auto* defs = model_.signature_defs();
    const int n = Size(model_.subgraphs());
    for (int i = 0; i < Size(defs); ++i) {
      const fb::SignatureDef* def = defs->Get(i);
      if (def->signature_key() == nullptr) {
        return Error("signature ", i, " has no signature key. ", kReexport);
      }
      const std::string label =
          absl::StrCat("signature '", def->signature_key()->str(), "'");
      if (def->subgraph_index() >= static_cast<uint32_t>(n)) {
        return Error(label, " refers to subgraph ", def->subgraph_index(),
                     " but the model has ", n, " subgraphs. ", kReexport);
      }
      const fb::SubGraph* sg = model_.subgraphs()->Get(def->subgraph_index());
      for (const auto& [list, what] : {std::pair{def->inputs(), "input"},
                                       std::pair{def->outputs(), "output"}}) {
        for (int j = 0; j < Size(list); ++j) {
          const fb::TensorMap* map = list->Get(j);
          if (map->tensor_index() >=
              static_cast<uint32_t>(Size(sg->tensors()))) {
            return Error(label, " ", what, " '",
                         map->name() ? map->name()->str() : "", "' is tensor ",
                         map->tensor_index(), " but ",
                         SubgraphLabel(def->subgraph_index(), sg), " has ",
                         Size(sg->tensors()), " tensors. ", kReexport);
          }
        }
      }
    }
    return absl::OkStatus();
  }

  absl::Status CheckMetadata() const {
    const auto* metadata = model_.metadata();
    for (int i = 0; i < Size(metadata); ++i) {
      const fb::Metadata* m = metadata->Get(i);
      if (m->buffer() >= static_cast<uint32_t>(NumBuffers())) {
        return Error("metadata ", i, " ('", m->name() ? m->name()->str() : "",
                     "') refers to buffer ", m->buffer(), " but the model has ",
                     NumBuffers(), " buffers. ", kReexport);
      }
    }
    return absl::OkStatus();
  }

  const fb::Model& model_;
  const uint8_t* file_;
  size_t file_size_;
  const std::string& source_;
};

}  // namespace

int32_t OpCodeOf(const fb::OperatorCode& code) {
  return std::max<int32_t>(code.builtin_code(), code.deprecated_builtin_code());
}

std::optional<ByteSpan> ConstantBufferBytes(const fb::Model& model,
                                            uint32_t index,
                                            const uint8_t* file) {
  if (index == 0 || model.buffers() == nullptr ||
      index >= model.buffers()->size()) {
    return std::nullopt;
  }
  const fb::Buffer* buffer = model.buffers()->Get(index);
  if (buffer->data() != nullptr) {
    return ByteSpan{buffer->data()->data(), buffer->data()->size()};
  }
  if (buffer->offset() > 1) {
    return ByteSpan{file + buffer->offset(), buffer->size()};
  }
  return std::nullopt;
}

std::string SubgraphLabel(int index, const fb::SubGraph* subgraph) {
  if (subgraph != nullptr && subgraph->name() != nullptr &&
      subgraph->name()->size() > 0) {
    return absl::StrCat("subgraph ", index, " ('", subgraph->name()->str(),
                        "')");
  }
  return absl::StrCat("subgraph ", index);
}

std::string TensorLabel(int index, const fb::Tensor* tensor) {
  if (tensor != nullptr && tensor->name() != nullptr &&
      tensor->name()->size() > 0) {
    return absl::StrCat("tensor ", index, " ('", tensor->name()->str(), "')");
  }
  return absl::StrCat("tensor ", index);
}

absl::Status CheckModel(const fb::Model& model, const uint8_t* file,
                        size_t file_size, const std::string& source) {
  return Checker(model, file, file_size, source).Run();
}

namespace {

absl::Status ConstantInputError(const Model& model, const std::string& where,
                                const Graph& g, int32_t index) {
  const Tensor& t = g.tensors[static_cast<size_t>(index)];
  return absl::InvalidArgumentError(absl::StrCat(
      "model '", model.source(), "': ", where, " is tensor ", index,
      t.name.empty() ? "" : absl::StrCat(" ('", t.name, "')"),
      ", a constant: an input receives values when the model runs, and a "
      "constant's data is read-only model memory. Kiln does not run models "
      "with constant inputs. ",
      kReexport));
}

}  // namespace

absl::Status CheckNoConstantInputs(const Model& model) {
  for (int si = 0; si < model.num_subgraphs(); ++si) {
    const Graph& g = model.graph(si);
    for (size_t i = 0; i < g.inputs.size(); ++i) {
      if (!g.tensors[static_cast<size_t>(g.inputs[i])].is_constant()) continue;
      const std::string label =
          g.name.empty() ? absl::StrCat("subgraph ", si)
                         : absl::StrCat("subgraph ", si, " ('", g.name, "')");
      return ConstantInputError(model, absl::StrCat(label, ": input ", i), g,
                                g.inputs[i]);
    }
  }
  for (const Signature& sig : model.signatures()) {
    const Graph& g = model.graph(sig.subgraph_index);
    for (const SignatureTensor& in : sig.inputs) {
      if (!g.tensors[static_cast<size_t>(in.tensor_index)].is_constant()) {
        continue;
      }
      return ConstantInputError(
          model,
          absl::StrCat("signature '", sig.key, "' input '", in.name, "'"), g,
          in.tensor_index);
    }
  }
  return absl::OkStatus();
}

}  // namespace kiln
