// Writes models in the TFLite FlatBuffer format (schema v3) that Kiln and
// TFLite/LiteRT both read: tensors (with constants, quantization, variables,
// shape signatures), builtin and custom operators with their options given
// as KILN_OPTION_* / kHostOption* keys, several subgraphs, signatures and
// metadata.
//
//   ModelBuilder builder;
//   SubgraphBuilder& main = builder.AddSubgraph("main");
//   int32_t x = main.AddTensor({"x", KILN_TYPE_FLOAT32, {1, 4}});
//   int32_t y = main.AddTensor({"y", KILN_TYPE_FLOAT32, {1, 4}});
//   main.AddOperator(KILN_OP_RELU, 1, {x}, {y});
//   main.SetInputs({x});
//   main.SetOutputs({y});
//   absl::StatusOr<std::vector<uint8_t>> bytes = builder.Build();
//
// Options go through the same table as the reader (op_options.h), so an op
// whose options Kiln reads can be written with exactly those keys.
//
// Thread-safety: a builder is not thread-safe; use one per thread.
#ifndef KILN_HOST_MODEL_MODEL_BUILDER_H_
#define KILN_HOST_MODEL_MODEL_BUILDER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kiln/kiln_common.h"
#include "model/model.h"
#include "runtime/graph.h"

namespace kiln {

// Operator options: (KILN_OPTION_* or kHostOption* key, value) pairs.
using OptionList = std::vector<std::pair<uint32_t, OptionValue>>;

// Option values for OptionList entries.
OptionValue OptionInt(int64_t value);
OptionValue OptionFloat(float value);
OptionValue OptionIntArray(std::vector<int32_t> values);
OptionValue OptionString(std::string value);  // host-private keys only

// TFLite's Tensor.sparsity (host/src/model/sparsity.h describes the
// format); written only when `levels` is non-empty, and then the constant's
// data holds the values the traversal reaches, not the dense tensor.
struct SparsitySpec {
  struct Level {
    bool compressed = false;                 // SPARSE_CSR, else DENSE
    int32_t dense_size = 0;                  // DENSE only
    std::vector<int32_t> segments, indices;  // SPARSE_CSR only
  };
  std::vector<int32_t> traversal_order;
  std::vector<int32_t> block_map;
  std::vector<Level> levels;
};

struct TensorSpec {
  std::string name;
  KilnTensorType type = KILN_TYPE_FLOAT32;
  std::vector<int32_t> shape;
  // Written only when non-empty; -1 marks a dynamic dimension.
  std::vector<int32_t> shape_signature;
  // false with an empty shape: rank unknown. Written as Tensor.has_rank.
  bool has_rank = true;
  Quantization quantization;  // not quantized when scales is empty
  // BlockwiseQuantization details, written unless scales is -1 and
  // block_size 0: indices of the scale and zero-point tensors (-1: none) in
  // the same subgraph.
  struct Blockwise {
    int32_t scales = -1;
    int32_t zero_points = -1;
    int32_t block_size = 0;
    std::vector<int32_t> block_shape;  // written when non-empty
    bool written() const { return scales != -1 || block_size != 0; }
  };
  Blockwise blockwise;
  bool is_variable = false;
  SparsitySpec sparsity;  // not sparse when levels is empty
};

// A float32 TensorSpec of `shape` (rank known).
TensorSpec FloatTensor(std::string name, std::vector<int32_t> shape);

class ModelBuilder;

// One subgraph of a ModelBuilder. Tensor and operator indices returned are
// indices within this subgraph. References stay valid as long as the
// ModelBuilder. Indices are not checked here; Build() checks the model.
class SubgraphBuilder {
 public:
  int index() const { return index_; }

  // A tensor without data (activation, input, output or variable).
  int32_t AddTensor(const TensorSpec& spec);
  // A constant tensor; `data` (`size` bytes) is copied into its own buffer,
  // aligned to 16 bytes in the file.
  int32_t AddConstantTensor(const TensorSpec& spec, const void* data,
                            size_t size);
  template <typename T>
  int32_t AddConstantTensor(const TensorSpec& spec,
                            const std::vector<T>& values) {
    return AddConstantTensor(spec, values.data(), values.size() * sizeof(T));
  }
  // A constant tensor that shares the buffer of constant `other` (weights
  // used by two operators).
  int32_t AddTensorSharingData(const TensorSpec& spec, int32_t other);

  // A builtin operator (KILN_OP_*, not KILN_OP_CUSTOM). -1 in `inputs`
  // marks an omitted optional input. Returns the operator index.
  int32_t AddOperator(int32_t builtin_code, int32_t version,
                      std::vector<int32_t> inputs, std::vector<int32_t> outputs,
                      OptionList options = {});
  // A custom operator with raw (usually FlexBuffers) custom options.
  int32_t AddCustomOperator(std::string custom_name, int32_t version,
                            std::vector<int32_t> inputs,
                            std::vector<int32_t> outputs,
                            std::vector<uint8_t> custom_options = {});

  void SetInputs(std::vector<int32_t> inputs) { inputs_ = std::move(inputs); }
  void SetOutputs(std::vector<int32_t> outputs) {
    outputs_ = std::move(outputs);
  }

 private:
  friend class ModelBuilder;
  friend class ModelSerializer;
  struct TensorEntry {
    TensorSpec spec;
    uint32_t buffer = 0;  // 0: no data
  };
  struct OperatorEntry {
    int32_t builtin_code = 0;
    std::string custom_name;
    int32_t version = 1;
    std::vector<int32_t> inputs;
    std::vector<int32_t> outputs;
    OptionList options;
    std::vector<uint8_t> custom_options;
  };
  SubgraphBuilder(ModelBuilder* model, int index, std::string name)
      : model_(model), index_(index), name_(std::move(name)) {}
  // Completes `op` (code, name, options set) and appends it.
  int32_t AddOperatorEntry(OperatorEntry op, int32_t version,
                           std::vector<int32_t> inputs,
                           std::vector<int32_t> outputs);

  ModelBuilder* model_;
  int index_;
  std::string name_;
  std::vector<TensorEntry> tensors_;
  std::vector<OperatorEntry> operators_;
  std::vector<int32_t> inputs_;
  std::vector<int32_t> outputs_;
};

class ModelBuilder {
 public:
  ModelBuilder();
  ~ModelBuilder();
  ModelBuilder(const ModelBuilder&) = delete;
  ModelBuilder& operator=(const ModelBuilder&) = delete;

  // Appends a subgraph; the first one added is the main subgraph (0).
  SubgraphBuilder& AddSubgraph(std::string name = "");
  SubgraphBuilder& subgraph(int index) {
    return *subgraphs_[static_cast<size_t>(index)];
  }
  int num_subgraphs() const { return static_cast<int>(subgraphs_.size()); }

  // A signature over subgraph `subgraph_index`; tensor indices are of that
  // subgraph.
  void AddSignature(std::string key, int subgraph_index,
                    std::vector<SignatureTensor> inputs,
                    std::vector<SignatureTensor> outputs);
  // A Model.metadata entry whose bytes are copied into a buffer.
  void AddMetadata(std::string name, std::vector<uint8_t> bytes);
  // Adds the "min_runtime_version" metadata (at most 15 characters, written
  // NUL-padded to 16 bytes as converters do).
  void SetMinRuntimeVersion(std::string version);
  void SetDescription(std::string description) {
    description_ = std::move(description);
  }
  // Places constant data and custom options after the FlatBuffer, at
  // absolute file offsets (Buffer.offset, Operator.large_custom_options_*),
  // as converters do for models over 2 GB. Off by default.
  void set_external_data(bool external) { external_data_ = external; }

  // Serializes the model and loads the result with Model::FromBuffer, so a
  // model Kiln would refuse is reported here, with the loader's message.
  absl::StatusOr<std::vector<uint8_t>> Build() const;
  // Serializes without checking the model (for tests that need broken
  // models). Fails only on options that cannot be written.
  absl::StatusOr<std::vector<uint8_t>> BuildUnchecked() const;
  // Build() and write the bytes to `path` (replaced if it exists).
  absl::Status WriteToFile(const std::string& path) const;

 private:
  friend class SubgraphBuilder;
  friend class ModelSerializer;
  struct SignatureEntry {
    std::string key;
    int subgraph_index;
    std::vector<SignatureTensor> inputs;
    std::vector<SignatureTensor> outputs;
  };
  // Serializes with external data at the given absolute offsets (empty:
  // placeholders).
  absl::StatusOr<std::vector<uint8_t>> Serialize(
      const std::vector<uint64_t>& external_offsets) const;
  uint32_t AddBuffer(const void* data, size_t size);

  std::vector<std::unique_ptr<SubgraphBuilder>> subgraphs_;
  // Constant data; buffer i + 1 in the file (0 is the empty sentinel).
  std::vector<std::vector<uint8_t>> buffers_;
  std::vector<std::pair<std::string, std::vector<uint8_t>>> metadata_;
  std::vector<SignatureEntry> signatures_;
  std::string description_;
  std::string min_runtime_version_;
  bool external_data_ = false;
};

// Writes `bytes` to `path` (replaced if it exists).
absl::Status WriteModelFile(const std::string& path,
                            const std::vector<uint8_t>& bytes);

}  // namespace kiln

#endif  // KILN_HOST_MODEL_MODEL_BUILDER_H_
