#include "model/model_reader.h"

#include <sys/mman.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "kiln/kiln_builtin_ops.h"
#include "kiln/kiln_version.h"
#include "kiln/sdk/float16.h"
#include "model/model_checks.h"
#include "model/op_options.h"
#include "model/sparsity.h"
#include "schema/kiln_model_generated.h"

namespace kiln {
namespace {

constexpr size_t kHeaderBytes = 8;
constexpr char kMinRuntimeVersionKey[] = "min_runtime_version";

// Copies a verified vector of scalars. The FlatBuffers verifier checks the
// alignment of a vector's length field but not of its elements, so the 8-byte
// elements of an untrusted file (e.g. zero points) may be misaligned: they
// are copied bytewise, never loaded through a T*.
template <typename T>
std::vector<T> ToVector(const flatbuffers::Vector<T>* v) {
  static_assert(std::is_arithmetic_v<T>, "scalar vectors only");
  if (v == nullptr) return {};
#if FLATBUFFERS_LITTLEENDIAN
  std::vector<T> out(v->size());
  if (!out.empty()) std::memcpy(out.data(), v->Data(), out.size() * sizeof(T));
  return out;
#else
  return std::vector<T>(v->begin(), v->end());
#endif
}

std::string ToString(const flatbuffers::String* s) {
  return s ? s->str() : std::string();
}

// "TFL3" or, for unprintable bytes, their hex.
std::string DescribeIdentifier(const uint8_t* p) {
  bool printable = true;
  for (int i = 0; i < 4; ++i) printable &= std::isprint(p[i]) != 0;
  if (printable) return absl::StrCat("\"", std::string(p, p + 4), "\"");
  return absl::StrFormat("hex %02x %02x %02x %02x", p[0], p[1], p[2], p[3]);
}

// Alignment the element type needs for in-place access.
size_t RequiredAlignment(KilnTensorType type) {
  if (type == KILN_TYPE_STRING) return 4;
  return std::clamp<size_t>(ElementSize(type), 1, alignof(std::max_align_t));
}

class GraphBuilder {
 public:
  GraphBuilder(const fb::Model& fb_model, const uint8_t* file,
               const std::vector<OperatorCodeInfo>& op_codes,
               std::vector<std::unique_ptr<std::max_align_t[]>>* aligned_copies)
      : fb_model_(fb_model),
        file_(file),
        op_codes_(op_codes),
        aligned_copies_(aligned_copies) {}

  Graph Build(const fb::SubGraph& sg) {
    Graph graph;
    graph.name = ToString(sg.name());
    graph.inputs = ToVector(sg.inputs());
    graph.outputs = ToVector(sg.outputs());
    if (sg.tensors() != nullptr) {
      graph.tensors.reserve(sg.tensors()->size());
      for (const fb::Tensor* t : *sg.tensors()) {
        graph.tensors.push_back(BuildTensor(*t));
      }
      for (size_t i = 0; i < sg.tensors()->size(); ++i) {
        ReadBlockwise(*sg.tensors()->Get(i), &graph.tensors, i);
      }
    }
    if (sg.operators() != nullptr) {
      graph.nodes.reserve(sg.operators()->size());
      for (const fb::Operator* op : *sg.operators()) {
        const int32_t index = static_cast<int32_t>(graph.nodes.size());
        graph.nodes.push_back(BuildNode(*op, index));
        graph.execution_plan.push_back(index);
      }
    }
    return graph;
  }

 private:
  Tensor BuildTensor(const fb::Tensor& t) {
    Tensor tensor;
    tensor.name = ToString(t.name());
    tensor.type = static_cast<KilnTensorType>(t.type());
    tensor.shape = ToVector(t.shape());
    tensor.shape_signature = ToVector(t.shape_signature());
    tensor.is_variable = t.is_variable();
    const fb::QuantizationParameters* q = t.quantization();
    if (q != nullptr && q->scale() != nullptr && q->scale()->size() > 0) {
      tensor.quantization.scales = ToVector(q->scale());
      tensor.quantization.zero_points = ToVector(q->zero_point());
      tensor.quantization.quantized_dimension = q->quantized_dimension();
    }
    const std::optional<ByteSpan> bytes =
        ConstantBufferBytes(fb_model_, t.buffer(), file_);
    if (bytes && t.sparsity() != nullptr) {
      DensifyInto(t, *bytes, &tensor);
    } else if (bytes) {
      tensor.storage = TensorStorage::kConstant;
      tensor.has_rank = true;
      tensor.bytes = static_cast<size_t>(bytes->size);
      tensor.data = const_cast<uint8_t*>(AlignedBytes(*bytes, tensor.type));
    } else {
      tensor.has_rank = t.has_rank() || !tensor.shape.empty();
    }
    return tensor;
  }

  // Tensor `index`'s BlockwiseQuantization details (checked by
  // model_checks.cc): the block scales converted to float32 once, the zero
  // points widened to int64 (0 when the model gives none).
  static void ReadBlockwise(const fb::Tensor& t, std::vector<Tensor>* tensors,
                            size_t index) {
    const fb::QuantizationParameters* q = t.quantization();
    const fb::BlockwiseQuantization* b =
        q != nullptr ? q->details_as_BlockwiseQuantization() : nullptr;
    if (b == nullptr) return;
    const Tensor& scales = (*tensors)[b->scales()];
    const size_t blocks = scales.bytes / ElementSize(scales.type);
    const auto* scale_bytes = static_cast<const uint8_t*>(scales.data);
    Quantization& out = (*tensors)[index].quantization;
    out.block_size = b->block_size();
    out.quantized_dimension = 0;
    out.block_scales.resize(blocks);
    for (size_t i = 0; i < blocks; ++i) {
      if (scales.type == KILN_TYPE_FLOAT16) {
        uint16_t half;
        std::memcpy(&half, scale_bytes + 2 * i, sizeof half);
        out.block_scales[i] = sdk::HalfToFloat(half);
      } else {
        std::memcpy(&out.block_scales[i], scale_bytes + 4 * i, sizeof(float));
      }
    }
    out.block_zero_points.assign(blocks, 0);
    if (b->zero_points() < 0) return;
    const Tensor& zp = (*tensors)[b->zero_points()];
    const size_t width = ElementSize(zp.type);
    const auto* zp_bytes = static_cast<const uint8_t*>(zp.data);
    for (size_t i = 0; i < blocks; ++i) {
      out.block_zero_points[i] = ReadSignedInt(zp_bytes + width * i, width);
    }
  }

  // A little-endian signed integer of `width` (1, 2, 4 or 8) bytes.
  static int64_t ReadSignedInt(const uint8_t* p, size_t width) {
    switch (width) {
      case 1:
        return static_cast<int8_t>(*p);
      case 2: {
        int16_t v;
        std::memcpy(&v, p, sizeof v);
        return v;
      }
      case 4: {
        int32_t v;
        std::memcpy(&v, p, sizeof v);
        return v;
      }
      default: {
        int64_t v;
        std::memcpy(&v, p, sizeof v);
        return v;
      }
    }
  }

  // `bytes` itself, or an aligned copy owned by the model when the file
  // stores them misaligned for `type`.
  const uint8_t* AlignedBytes(ByteSpan bytes, KilnTensorType type) {
    const size_t alignment = RequiredAlignment(type);
    if (bytes.size == 0 ||
        reinterpret_cast<uintptr_t>(bytes.data) % alignment == 0) {
      return bytes.data;
    }
    uint8_t* copy = OwnedBytes(bytes.size);
    std::memcpy(copy, bytes.data, bytes.size);
    return copy;
  }

  // `size` zeroed, aligned bytes owned by the model.
  uint8_t* OwnedBytes(uint64_t size) {
    const size_t units = static_cast<size_t>(
        (size + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t));
    aligned_copies_->push_back(std::make_unique<std::max_align_t[]>(units));
    return reinterpret_cast<uint8_t*>(aligned_copies_->back().get());
  }

  // A sparse constant (its layout proven by CheckModel) becomes a dense
  // constant owned by the model.
  void DensifyInto(const fb::Tensor& t, ByteSpan bytes, Tensor* tensor) {
    const absl::StatusOr<SparseLayout> layout = ReadSparseLayout(t, bytes.size);
    const size_t element_size = ElementSize(tensor->type);
    const uint64_t dense_bytes = layout->dense_count * element_size;
    uint8_t* dense = OwnedBytes(dense_bytes);
    Densify(*layout, element_size, bytes.data, dense);
    tensor->storage = TensorStorage::kConstant;
    tensor->has_rank = true;
    tensor->bytes = static_cast<size_t>(dense_bytes);
    tensor->data = dense;
  }

  Node BuildNode(const fb::Operator& op, int32_t index) {
    const OperatorCodeInfo& code = op_codes_[op.opcode_index()];
    Node node;
    node.index = index;
    node.builtin_code = code.builtin_code;
    node.custom_name = code.custom_name;
    node.version = code.version;
    node.inputs = ToVector(op.inputs());
    node.outputs = ToVector(op.outputs());
    node.intermediates = ToVector(op.intermediates());
    if (op.custom_options() != nullptr) {
      node.custom_options = op.custom_options()->data();
      node.custom_options_size = op.custom_options()->size();
    } else if (op.large_custom_options_offset() > 1) {
      node.custom_options = file_ + op.large_custom_options_offset();
      node.custom_options_size = op.large_custom_options_size();
    }
    if (const OpOptionsLayout* layout =
            FindOpOptionsLayout(node.builtin_code)) {
      const void* table =
          layout->in_options_2 ? op.builtin_options_2() : op.builtin_options();
      const uint8_t type =
          layout->in_options_2
              ? static_cast<uint8_t>(op.builtin_options_2_type())
              : static_cast<uint8_t>(op.builtin_options_type());
      // CheckModel refused any other table type.
      const auto* options = type == layout->union_type
                                ? static_cast<const flatbuffers::Table*>(table)
                                : nullptr;
      ReadOpOptions(*layout, options, &node);
      if (options != nullptr && layout->bytes_as_custom_options != 0) {
        const auto* bytes =
            options->GetPointer<const flatbuffers::Vector<uint8_t>*>(
                layout->bytes_as_custom_options);
        if (bytes != nullptr) {
          node.custom_options = bytes->data();
          node.custom_options_size = bytes->size();
        }
      }
    }
    return node;
  }

  const fb::Model& fb_model_;
  const uint8_t* file_;
  const std::vector<OperatorCodeInfo>& op_codes_;
  std::vector<std::unique_ptr<std::max_align_t[]>>* aligned_copies_;
};

// The FlatBuffer model in `data` after the identifier, the FlatBuffers
// verifier and the schema-version check.
absl::StatusOr<const fb::Model*> VerifiedModel(const uint8_t* data, size_t size,
                                               const std::string& src) {
  if (size < kHeaderBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        src, ": is ", size,
        " bytes, too small to be a TFLite model (a model starts with an "
        "8-byte FlatBuffer header). The file is truncated or not a model."));
  }
  if (std::memcmp(data + 4, fb::ModelIdentifier(), 4) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        src,
        ": is not a TFLite model: bytes 4-7 should be the file "
        "identifier \"TFL3\" but are ",
        DescribeIdentifier(data + 4),
        ". Check that this is a .tflite file; if a converter wrote it, the "
        "conversion did not finish."));
  }
  // The FlatBuffer itself is < 2 GiB; external data may follow it.
  const size_t verify_size =
      std::min<size_t>(size, FLATBUFFERS_MAX_BUFFER_SIZE - 1);
  flatbuffers::Verifier verifier(data, verify_size);
  if (!fb::VerifyModelBuffer(verifier)) {
    return absl::InvalidArgumentError(absl::StrCat(
        src,
        ": failed FlatBuffers verification: the model's tables are "
        "malformed or point outside the ",
        size,
        "-byte file. The file is truncated or corrupt; copy, download or "
        "convert it again."));
  }
  const fb::Model* fb_model = fb::GetModel(data);
  if (fb_model->version() != KILN_MODEL_SCHEMA_VERSION) {
    return absl::InvalidArgumentError(absl::StrCat(
        src, ": uses TFLite schema version ", fb_model->version(),
        ", but Kiln reads only schema version ", KILN_MODEL_SCHEMA_VERSION,
        " (written by every TFLite/LiteRT converter since 2018). Convert the "
        "source model again with a current converter."));
  }
  return fb_model;
}

std::vector<OperatorCodeInfo> ReadOperatorCodes(const fb::Model& fb_model) {
  std::vector<OperatorCodeInfo> out;
  if (fb_model.operator_codes() == nullptr) return out;
  for (const fb::OperatorCode* c : *fb_model.operator_codes()) {
    OperatorCodeInfo info;
    info.builtin_code = OpCodeOf(*c);
    if (info.builtin_code == KILN_OP_CUSTOM) {
      info.custom_name = c->custom_code()->str();
    }
    info.version = c->version();
    out.push_back(std::move(info));
  }
  return out;
}

std::vector<Signature> ReadSignatures(const fb::Model& fb_model) {
  std::vector<Signature> out;
  if (fb_model.signature_defs() == nullptr) return out;
  for (const fb::SignatureDef* def : *fb_model.signature_defs()) {
    Signature sig;
    sig.key = def->signature_key()->str();
    sig.subgraph_index = static_cast<int32_t>(def->subgraph_index());
    for (const auto& [list, tensors] :
         {std::pair{def->inputs(), &sig.inputs},
          std::pair{def->outputs(), &sig.outputs}}) {
      if (list == nullptr) continue;
      for (const fb::TensorMap* map : *list) {
        tensors->push_back(
            {ToString(map->name()), static_cast<int32_t>(map->tensor_index())});
      }
    }
    out.push_back(std::move(sig));
  }
  return out;
}

std::vector<MetadataEntry> ReadMetadata(const fb::Model& fb_model,
                                        const uint8_t* file) {
  std::vector<MetadataEntry> out;
  if (fb_model.metadata() == nullptr) return out;
  for (const fb::Metadata* m : *fb_model.metadata()) {
    MetadataEntry entry;
    entry.name = ToString(m->name());
    if (std::optional<ByteSpan> bytes =
            ConstantBufferBytes(fb_model, m->buffer(), file)) {
      entry.data = bytes->data;
      entry.size = static_cast<size_t>(bytes->size);
    }
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace

absl::StatusOr<std::shared_ptr<const Model>> ModelReader::Read(
    const uint8_t* data, size_t size, std::string source, void* mapping,
    size_t mapping_size) {
  std::shared_ptr<Model> model(new Model());
  model->source_ = std::move(source);
  model->data_ = data;
  model->size_ = size;
  model->mapping_ = mapping;  // unmapped by ~Model, also on failure
  model->mapping_size_ = mapping_size;
  const std::string& src = model->source_;

  KILN_ASSIGN_OR_RETURN(const fb::Model* fb_model,
                        VerifiedModel(data, size, src));
  model->schema_version_ = fb_model->version();
  KILN_RETURN_IF_ERROR(CheckModel(*fb_model, data, size, src));

  model->description_ = ToString(fb_model->description());
  model->op_codes_ = ReadOperatorCodes(*fb_model);
  GraphBuilder builder(*fb_model, data, model->op_codes_,
                       &model->aligned_copies_);
  for (const fb::SubGraph* sg : *fb_model->subgraphs()) {
    model->graphs_.push_back(builder.Build(*sg));
  }
  model->signatures_ = ReadSignatures(*fb_model);
  model->metadata_ = ReadMetadata(*fb_model, data);
  for (const MetadataEntry& entry : model->metadata_) {
    if (entry.name == kMinRuntimeVersionKey && entry.data != nullptr) {
      const char* text = reinterpret_cast<const char*>(entry.data);
      model->min_runtime_version_ =
          std::string(text, strnlen(text, entry.size));
    }
  }
  return std::shared_ptr<const Model>(std::move(model));
}

}  // namespace kiln
