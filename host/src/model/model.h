// A loaded, verified TFLite (schema v3) model.
//
// The file is memory-mapped read-only and never copied: constant tensors
// point straight into the mapping (or into the caller's buffer for
// FromBuffer). Loading runs the FlatBuffers verifier first, then Kiln's
// semantic checks, before anything else reads the model; every failure names
// the file and the offending subgraph/tensor/operator and says what is wrong.
//
// Thread-safety: a Model is immutable after creation and may be shared by
// any number of interpreters on any threads.
#ifndef KILN_HOST_MODEL_MODEL_H_
#define KILN_HOST_MODEL_MODEL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/graph.h"

namespace kiln {

// One entry of Model.operator_codes, after the op-code rule
// (code = max(builtin_code, deprecated_builtin_code)).
struct OperatorCodeInfo {
  int32_t builtin_code = 0;
  std::string custom_name;  // only for KILN_OP_CUSTOM
  int32_t version = 1;
};

struct SignatureTensor {
  std::string name;
  int32_t tensor_index = -1;  // index into the signature's subgraph tensors
};

struct Signature {
  std::string key;
  int32_t subgraph_index = 0;
  std::vector<SignatureTensor> inputs;
  std::vector<SignatureTensor> outputs;
};

struct MetadataEntry {
  std::string name;
  const uint8_t* data = nullptr;  // into the model bytes; may be null
  size_t size = 0;
};

class Model {
 public:
  // Maps and validates the file at `path`.
  static absl::StatusOr<std::shared_ptr<const Model>> FromFile(
      const std::string& path);
  // Validates caller-owned bytes (not copied; must outlive the model).
  // `label` names the model in messages.
  static absl::StatusOr<std::shared_ptr<const Model>> FromBuffer(
      const void* data, size_t size, std::string label = "<buffer>");

  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  // The file path or buffer label, for messages.
  const std::string& source() const { return source_; }
  uint32_t schema_version() const { return schema_version_; }
  const std::string& description() const { return description_; }
  size_t byte_size() const { return size_; }
  const uint8_t* bytes() const { return data_; }

  int num_subgraphs() const { return static_cast<int>(graphs_.size()); }
  // The subgraph as loaded, immutable: tensors (descriptions, declared
  // shapes; constants point into the model bytes with storage kConstant,
  // others kNone), nodes with op, version, options (KILN_OPTION_* and
  // kHostOption*), custom options, inputs/outputs, and execution_plan =
  // operator order. Every index in it was proven by the model checks
  // (model_checks.h). Interpreters point into it and keep their run state
  // apart; they never copy it.
  const Graph& graph(int subgraph) const {
    return graphs_[static_cast<size_t>(subgraph)];
  }

  const std::vector<OperatorCodeInfo>& operator_codes() const {
    return op_codes_;
  }
  const std::vector<Signature>& signatures() const { return signatures_; }
  const std::vector<MetadataEntry>& metadata() const { return metadata_; }
  // Metadata "min_runtime_version" with NUL padding removed; "" if absent.
  const std::string& min_runtime_version() const {
    return min_runtime_version_;
  }

 private:
  friend class ModelReader;
  Model() = default;

  std::string source_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  void* mapping_ = nullptr;  // non-null when this model owns an mmap
  size_t mapping_size_ = 0;
  uint32_t schema_version_ = 0;
  std::string description_;
  std::vector<Graph> graphs_;
  std::vector<OperatorCodeInfo> op_codes_;
  std::vector<Signature> signatures_;
  std::vector<MetadataEntry> metadata_;
  std::string min_runtime_version_;
  // Aligned copies of the few constants whose bytes in the file are not
  // aligned for their element type (old converters aligned data to 4 bytes).
  std::vector<std::unique_ptr<std::max_align_t[]>> aligned_copies_;
};

}  // namespace kiln

#endif  // KILN_HOST_MODEL_MODEL_H_
