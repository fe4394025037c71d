#include "model/model_builder.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "kiln/kiln_builtin_ops.h"
#include "kiln/kiln_version.h"
#include "model/op_options.h"
#include "schema/kiln_model_generated.h"

namespace kiln {
namespace {

constexpr size_t kDataAlignment = 16;
constexpr size_t kMinRuntimeVersionBytes = 16;

uint64_t AlignUp(uint64_t n) {
  return (n + kDataAlignment - 1) / kDataAlignment * kDataAlignment;
}

// A piece of data written after the FlatBuffer in external-data mode.
struct ExternalBlob {
  const uint8_t* data;
  size_t size;
};

}  // namespace

OptionValue OptionInt(int64_t value) {
  OptionValue v;
  v.kind = OptionValue::Kind::kInt;
  v.i = value;
  return v;
}

OptionValue OptionFloat(float value) {
  OptionValue v;
  v.kind = OptionValue::Kind::kFloat;
  v.f = value;
  return v;
}

OptionValue OptionIntArray(std::vector<int32_t> values) {
  OptionValue v;
  v.kind = OptionValue::Kind::kIntArray;
  v.array = std::move(values);
  return v;
}

OptionValue OptionString(std::string value) {
  OptionValue v;
  v.kind = OptionValue::Kind::kString;
  v.s = std::move(value);
  return v;
}

TensorSpec FloatTensor(std::string name, std::vector<int32_t> shape) {
  TensorSpec spec;
  spec.name = std::move(name);
  spec.type = KILN_TYPE_FLOAT32;
  spec.shape = std::move(shape);
  return spec;
}

// ---- SubgraphBuilder
// ----------------------------------------------------------

int32_t SubgraphBuilder::AddTensor(const TensorSpec& spec) {
  tensors_.push_back({spec, 0});
  return static_cast<int32_t>(tensors_.size() - 1);
}

int32_t SubgraphBuilder::AddConstantTensor(const TensorSpec& spec,
                                           const void* data, size_t size) {
  tensors_.push_back({spec, model_->AddBuffer(data, size)});
  return static_cast<int32_t>(tensors_.size() - 1);
}

int32_t SubgraphBuilder::AddTensorSharingData(const TensorSpec& spec,
                                              int32_t other) {
  uint32_t buffer = 0;
  if (other >= 0 && static_cast<size_t>(other) < tensors_.size()) {
    buffer = tensors_[static_cast<size_t>(other)].buffer;
  }
  tensors_.push_back({spec, buffer});
  return static_cast<int32_t>(tensors_.size() - 1);
}

int32_t SubgraphBuilder::AddOperator(int32_t builtin_code, int32_t version,
                                     std::vector<int32_t> inputs,
                                     std::vector<int32_t> outputs,
                                     OptionList options) {
  OperatorEntry op;
  op.builtin_code = builtin_code;
  op.options = std::move(options);
  return AddOperatorEntry(std::move(op), version, std::move(inputs),
                          std::move(outputs));
}

int32_t SubgraphBuilder::AddCustomOperator(
    std::string custom_name, int32_t version, std::vector<int32_t> inputs,
    std::vector<int32_t> outputs, std::vector<uint8_t> custom_options) {
  OperatorEntry op;
  op.builtin_code = KILN_OP_CUSTOM;
  op.custom_name = std::move(custom_name);
  op.custom_options = std::move(custom_options);
  return AddOperatorEntry(std::move(op), version, std::move(inputs),
                          std::move(outputs));
}

int32_t SubgraphBuilder::AddOperatorEntry(OperatorEntry op, int32_t version,
                                          std::vector<int32_t> inputs,
                                          std::vector<int32_t> outputs) {
  op.version = version;
  op.inputs = std::move(inputs);
  op.outputs = std::move(outputs);
  operators_.push_back(std::move(op));
  return static_cast<int32_t>(operators_.size() - 1);
}

// ---- ModelBuilder
// -------------------------------------------------------------

ModelBuilder::ModelBuilder() = default;
ModelBuilder::~ModelBuilder() = default;

SubgraphBuilder& ModelBuilder::AddSubgraph(std::string name) {
  const int index = static_cast<int>(subgraphs_.size());
  subgraphs_.push_back(std::unique_ptr<SubgraphBuilder>(
      new SubgraphBuilder(this, index, std::move(name))));
  return *subgraphs_.back();
}

void ModelBuilder::AddSignature(std::string key, int subgraph_index,
                                std::vector<SignatureTensor> inputs,
                                std::vector<SignatureTensor> outputs) {
  signatures_.push_back(
      {std::move(key), subgraph_index, std::move(inputs), std::move(outputs)});
}

void ModelBuilder::AddMetadata(std::string name, std::vector<uint8_t> bytes) {
  metadata_.emplace_back(std::move(name), std::move(bytes));
}

void ModelBuilder::SetMinRuntimeVersion(std::string version) {
  min_runtime_version_ = std::move(version);
}

uint32_t ModelBuilder::AddBuffer(const void* data, size_t size) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  buffers_.emplace_back(bytes, bytes + size);
  return static_cast<uint32_t>(buffers_.size());
}

// Writes one ModelBuilder as a FlatBuffer: buffers (sentinel, constants,
// metadata), then each subgraph's tensors and operators (operator codes
// deduplicated on the way), signatures, and the model table.
class ModelSerializer {
 public:
  // `external_offsets`: absolute file offsets of the external blobs, in the
  // order they are written (empty: placeholders).
  ModelSerializer(const ModelBuilder& model,
                  const std::vector<uint64_t>& external_offsets)
      : model_(model),
        external_offsets_(external_offsets),
        fbb_(1024 + InlineDataBytes(model)) {}

  absl::StatusOr<std::vector<uint8_t>> Run() {
    WriteBuffers();
    std::vector<flatbuffers::Offset<fb::SubGraph>> subgraphs;
    for (const auto& sg : model_.subgraphs_) {
      KILN_ASSIGN_OR_RETURN(auto subgraph, WriteSubgraph(*sg));
      subgraphs.push_back(subgraph);
    }
    const auto signatures = WriteSignatures();
    const auto model = fb::CreateModel(
        fbb_, KILN_MODEL_SCHEMA_VERSION, fbb_.CreateVector(codes_),
        fbb_.CreateVector(subgraphs),
        model_.description_.empty() ? 0
                                    : fbb_.CreateString(model_.description_),
        fbb_.CreateVector(buffers_), 0, fbb_.CreateVector(metadata_),
        fbb_.CreateVector(signatures));
    fb::FinishModelBuffer(fbb_, model);
    return std::vector<uint8_t>(fbb_.GetBufferPointer(),
                                fbb_.GetBufferPointer() + fbb_.GetSize());
  }

 private:
  static size_t InlineDataBytes(const ModelBuilder& model) {
    size_t n = 0;
    for (const auto& b : model.buffers_) {
      n += model.external_data_ ? 0 : b.size() + 16;
    }
    return n;
  }

  uint64_t NextExternalOffset() {
    const size_t k = next_external_++;
    return external_offsets_.empty() ? 1 : external_offsets_[k];
  }

  // Buffers: sentinel, constants, then metadata.
  void WriteBuffers() {
    buffers_.push_back(fb::CreateBuffer(fbb_));
    for (const std::vector<uint8_t>& data : model_.buffers_) {
      if (model_.external_data_ && !data.empty()) {
        buffers_.push_back(
            fb::CreateBuffer(fbb_, 0, NextExternalOffset(), data.size()));
        continue;
      }
      fbb_.ForceVectorAlignment(data.size(), sizeof(uint8_t), kDataAlignment);
      buffers_.push_back(fb::CreateBuffer(fbb_, fbb_.CreateVector(data)));
    }
    if (!model_.min_runtime_version_.empty()) {
      std::vector<uint8_t> padded(kMinRuntimeVersionBytes, 0);
      std::copy(model_.min_runtime_version_.begin(),
                model_.min_runtime_version_.end(), padded.begin());
      AddMetadata("min_runtime_version", padded);
    }
    for (const auto& [name, bytes] : model_.metadata_) {
      AddMetadata(name, bytes);
    }
  }

  void AddMetadata(const std::string& name, const std::vector<uint8_t>& bytes) {
    fbb_.ForceVectorAlignment(bytes.size(), sizeof(uint8_t), kDataAlignment);
    buffers_.push_back(fb::CreateBuffer(fbb_, fbb_.CreateVector(bytes)));
    metadata_.push_back(
        fb::CreateMetadata(fbb_, fbb_.CreateString(name),
                           static_cast<uint32_t>(buffers_.size() - 1)));
  }

  // Operator codes, deduplicated by (code, custom name, version).
  uint32_t OpcodeFor(const SubgraphBuilder::OperatorEntry& op) {
    auto key = std::make_tuple(op.builtin_code, op.custom_name, op.version);
    auto it = code_index_.find(key);
    if (it != code_index_.end()) return it->second;
    const auto custom = op.builtin_code == KILN_OP_CUSTOM
                            ? fbb_.CreateString(op.custom_name)
                            : 0;
    // Old readers look only at the int8 field; codes > 127 put 127 there.
    const int8_t deprecated =
        static_cast<int8_t>(std::min(op.builtin_code, int32_t{127}));
    codes_.push_back(fb::CreateOperatorCode(fbb_, deprecated, custom,
                                            op.version, op.builtin_code));
    const uint32_t index = static_cast<uint32_t>(codes_.size() - 1);
    code_index_.emplace(std::move(key), index);
    return index;
  }

  flatbuffers::Offset<fb::Tensor> WriteTensor(
      const SubgraphBuilder::TensorEntry& t) {
    const TensorSpec& s = t.spec;
    flatbuffers::Offset<fb::QuantizationParameters> quantization = 0;
    const TensorSpec::Blockwise& b = s.blockwise;
    if (s.quantization.quantized() || b.written()) {
      flatbuffers::Offset<flatbuffers::Vector<float>> scales;
      flatbuffers::Offset<flatbuffers::Vector<int64_t>> zero_points;
      if (s.quantization.quantized()) {
        scales = fbb_.CreateVector(s.quantization.scales);
        zero_points = fbb_.CreateVector(s.quantization.zero_points);
      }
      flatbuffers::Offset<void> details;
      if (b.written()) {
        flatbuffers::Offset<flatbuffers::Vector<int32_t>> block_shape;
        if (!b.block_shape.empty())
          block_shape = fbb_.CreateVector(b.block_shape);
        details = fb::CreateBlockwiseQuantization(fbb_, b.scales, b.zero_points,
                                                  b.block_size, block_shape)
                      .Union();
      }
      quantization = fb::CreateQuantizationParameters(
          fbb_, 0, 0, scales, zero_points,
          b.written() ? fb::QuantizationDetails::BlockwiseQuantization
                      : fb::QuantizationDetails::NONE,
          details, s.quantization.quantized_dimension);
    }
    const auto signature =
        s.shape_signature.empty() ? 0 : fbb_.CreateVector(s.shape_signature);
    return fb::CreateTensor(
        fbb_, fbb_.CreateVector(s.shape), static_cast<fb::TensorType>(s.type),
        t.buffer, fbb_.CreateString(s.name), quantization, s.is_variable,
        WriteSparsity(s.sparsity), signature, s.has_rank);
  }

  flatbuffers::Offset<fb::SparsityParameters> WriteSparsity(
      const SparsitySpec& s) {
    if (s.levels.empty()) return 0;
    std::vector<flatbuffers::Offset<fb::DimensionMetadata>> levels;
    for (const SparsitySpec::Level& l : s.levels) {
      if (!l.compressed) {
        levels.push_back(fb::CreateDimensionMetadata(
            fbb_, fb::DimensionType::DENSE, l.dense_size));
        continue;
      }
      const auto segments =
          fb::CreateInt32Vector(fbb_, fbb_.CreateVector(l.segments));
      const auto indices =
          fb::CreateInt32Vector(fbb_, fbb_.CreateVector(l.indices));
      levels.push_back(fb::CreateDimensionMetadata(
          fbb_, fb::DimensionType::SPARSE_CSR, 0,
          fb::SparseIndexVector::Int32Vector, segments.Union(),
          fb::SparseIndexVector::Int32Vector, indices.Union()));
    }
    return fb::CreateSparsityParameters(
        fbb_, fbb_.CreateVector(s.traversal_order),
        s.block_map.empty() ? 0 : fbb_.CreateVector(s.block_map),
        fbb_.CreateVector(levels));
  }

  // The operator's options table, in the union its layout names.
  struct OptionsTable {
    fb::BuiltinOptions type = fb::BuiltinOptions::NONE;
    fb::BuiltinOptions2 type2 = fb::BuiltinOptions2::NONE;
    flatbuffers::Offset<void> table = 0;
    flatbuffers::Offset<void> table2 = 0;
  };

  absl::StatusOr<OptionsTable> WriteOptions(
      const SubgraphBuilder::OperatorEntry& op, const std::string& where) {
    OptionsTable out;
    const OpOptionsLayout* layout = FindOpOptionsLayout(op.builtin_code);
    if (layout == nullptr) {
      if (op.options.empty()) return out;
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": Kiln maps no options for this op, so its ",
          op.options.size(),
          " option(s) cannot be written; add the op to op_options.cc"));
    }
    absl::StatusOr<flatbuffers::Offset<void>> table =
        WriteOpOptions(*layout, op.options, &fbb_);
    if (!table.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": ", table.status().message()));
    }
    if (layout->in_options_2) {
      out.type2 = static_cast<fb::BuiltinOptions2>(layout->union_type);
      out.table2 = *table;
    } else {
      out.type = static_cast<fb::BuiltinOptions>(layout->union_type);
      out.table = *table;
    }
    return out;
  }

  absl::StatusOr<flatbuffers::Offset<fb::Operator>> WriteOperator(
      const SubgraphBuilder& sg, size_t oi) {
    const SubgraphBuilder::OperatorEntry& op = sg.operators_[oi];
    const std::string where =
        absl::StrCat("subgraph ", sg.index_, ", operator ", oi, " (",
                     BuiltinOpName(op.builtin_code), ")");
    KILN_ASSIGN_OR_RETURN(const OptionsTable options, WriteOptions(op, where));
    flatbuffers::Offset<flatbuffers::Vector<uint8_t>> custom = 0;
    uint64_t large_offset = 0, large_size = 0;
    if (!op.custom_options.empty()) {
      if (model_.external_data_) {
        large_offset = NextExternalOffset();
        large_size = op.custom_options.size();
      } else {
        custom = fbb_.CreateVector(op.custom_options);
      }
    }
    const uint32_t opcode = OpcodeFor(op);
    return fb::CreateOperator(
        fbb_, opcode, fbb_.CreateVector(op.inputs),
        fbb_.CreateVector(op.outputs), options.type, options.table, custom,
        fb::CustomOptionsFormat::FLEXBUFFERS, 0, 0, large_offset, large_size,
        options.type2, options.table2);
  }

  absl::StatusOr<flatbuffers::Offset<fb::SubGraph>> WriteSubgraph(
      const SubgraphBuilder& sg) {
    std::vector<flatbuffers::Offset<fb::Tensor>> tensors;
    for (const SubgraphBuilder::TensorEntry& t : sg.tensors_) {
      tensors.push_back(WriteTensor(t));
    }
    std::vector<flatbuffers::Offset<fb::Operator>> operators;
    for (size_t oi = 0; oi < sg.operators_.size(); ++oi) {
      KILN_ASSIGN_OR_RETURN(auto op, WriteOperator(sg, oi));
      operators.push_back(op);
    }
    return fb::CreateSubGraph(
        fbb_, fbb_.CreateVector(tensors), fbb_.CreateVector(sg.inputs_),
        fbb_.CreateVector(sg.outputs_), fbb_.CreateVector(operators),
        sg.name_.empty() ? 0 : fbb_.CreateString(sg.name_));
  }

  std::vector<flatbuffers::Offset<fb::SignatureDef>> WriteSignatures() {
    std::vector<flatbuffers::Offset<fb::SignatureDef>> signatures;
    auto maps = [&](const std::vector<SignatureTensor>& list) {
      std::vector<flatbuffers::Offset<fb::TensorMap>> out;
      for (const SignatureTensor& t : list) {
        out.push_back(
            fb::CreateTensorMap(fbb_, fbb_.CreateString(t.name),
                                static_cast<uint32_t>(t.tensor_index)));
      }
      return fbb_.CreateVector(out);
    };
    for (const ModelBuilder::SignatureEntry& sig : model_.signatures_) {
      const auto inputs = maps(sig.inputs);
      const auto outputs = maps(sig.outputs);
      signatures.push_back(fb::CreateSignatureDef(
          fbb_, inputs, outputs, fbb_.CreateString(sig.key),
          static_cast<uint32_t>(sig.subgraph_index)));
    }
    return signatures;
  }

  const ModelBuilder& model_;
  const std::vector<uint64_t>& external_offsets_;
  flatbuffers::FlatBufferBuilder fbb_;
  size_t next_external_ = 0;
  std::vector<flatbuffers::Offset<fb::Buffer>> buffers_;
  std::vector<flatbuffers::Offset<fb::Metadata>> metadata_;
  std::map<std::tuple<int32_t, std::string, int32_t>, uint32_t> code_index_;
  std::vector<flatbuffers::Offset<fb::OperatorCode>> codes_;
};

absl::StatusOr<std::vector<uint8_t>> ModelBuilder::Serialize(
    const std::vector<uint64_t>& external_offsets) const {
  if (min_runtime_version_.size() >= kMinRuntimeVersionBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("min_runtime_version '", min_runtime_version_, "' has ",
                     min_runtime_version_.size(), " characters; at most ",
                     kMinRuntimeVersionBytes - 1, " fit the 16-byte field"));
  }
  return ModelSerializer(*this, external_offsets).Run();
}

absl::StatusOr<std::vector<uint8_t>> ModelBuilder::BuildUnchecked() const {
  if (!external_data_) return Serialize({});
  // External data: the blobs follow the FlatBuffer, each 16-byte aligned.
  // A first pass with placeholder offsets (1) gives the FlatBuffer's size;
  // real offsets do not change it (the same fields are written).
  std::vector<ExternalBlob> blobs;
  for (const std::vector<uint8_t>& data : buffers_) {
    if (!data.empty()) blobs.push_back({data.data(), data.size()});
  }
  for (const auto& sg : subgraphs_) {
    for (const auto& op : sg->operators_) {
      if (!op.custom_options.empty()) {
        blobs.push_back({op.custom_options.data(), op.custom_options.size()});
      }
    }
  }
  KILN_ASSIGN_OR_RETURN(const std::vector<uint8_t> first, Serialize({}));
  std::vector<uint64_t> offsets;
  uint64_t end = AlignUp(first.size());
  for (const ExternalBlob& blob : blobs) {
    offsets.push_back(end);
    end = AlignUp(end + blob.size);
  }
  KILN_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, Serialize(offsets));
  if (bytes.size() != first.size()) {
    return absl::InternalError(
        "external data layout changed the FlatBuffer size between passes");
  }
  bytes.resize(end, 0);
  for (size_t i = 0; i < blobs.size(); ++i) {
    std::memcpy(bytes.data() + offsets[i], blobs[i].data, blobs[i].size);
  }
  return bytes;
}

absl::StatusOr<std::vector<uint8_t>> ModelBuilder::Build() const {
  KILN_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, BuildUnchecked());
  KILN_RETURN_IF_ERROR(
      Model::FromBuffer(bytes.data(), bytes.size(), "<built model>").status());
  return bytes;
}

absl::Status ModelBuilder::WriteToFile(const std::string& path) const {
  KILN_ASSIGN_OR_RETURN(const std::vector<uint8_t> bytes, Build());
  return WriteModelFile(path, bytes);
}

absl::Status WriteModelFile(const std::string& path,
                            const std::vector<uint8_t>& bytes) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot create model file '", path,
                     "': ", std::strerror(errno), ". Check the directory."));
  }
  const size_t written = std::fwrite(bytes.data(), 1, bytes.size(), file);
  const bool closed = std::fclose(file) == 0;
  if (written != bytes.size() || !closed) {
    return absl::DataLossError(
        absl::StrCat("could not write all ", bytes.size(),
                     " bytes of model file '", path, "' (disk full?)"));
  }
  return absl::OkStatus();
}

}  // namespace kiln
