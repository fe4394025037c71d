// Kiln's semantic checks of a model, run after the FlatBuffers verifier and
// the schema-version check and before anything builds graphs from it.
// Internal to the model loader and the interpreter.
#ifndef KILN_HOST_MODEL_MODEL_CHECKS_H_
#define KILN_HOST_MODEL_MODEL_CHECKS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "schema/kiln_model_generated.h"

namespace kiln {

// Bytes inside the model file.
struct ByteSpan {
  const uint8_t* data = nullptr;
  uint64_t size = 0;
};

// Checks everything the graph builder and the runtime rely on: indices in
// range, constant sizes, external data inside the file, execution order
// (no read before write, no tensor written twice), quantization parameters,
// control-flow subgraph references without recursion, signatures and
// metadata. This is the one place that proves them: the model graph and the
// interpreter use every index (tensor, operator code, subgraph, control-flow
// subgraph, signature tensor, buffer) without checking it again.
// `file`/`file_size` are the whole file (external data lives past the
// FlatBuffer). Returns the first problem as INVALID_ARGUMENT with a message
// that starts with `source` and names the subgraph, tensor or operator and what
// to do.
absl::Status CheckModel(const fb::Model& model, const uint8_t* file,
                        size_t file_size, const std::string& source);

class Model;

// Refuses (INVALID_ARGUMENT, naming the subgraph or signature and the
// tensor) a model with a subgraph or signature input that is a constant:
// an input receives values when the model runs, and a constant's data is
// the read-only model mapping (writing it crashed `kiln run`). TFLite's
// loader accepts such files (its test fixtures have them, all with custom
// ops), so loading does not run this check and tools can still read them;
// Interpreter::Create does, before any input can be written.
absl::Status CheckNoConstantInputs(const Model& model);

// Op code of an OperatorCode: max(builtin_code, deprecated_builtin_code).
int32_t OpCodeOf(const fb::OperatorCode& code);

// The bytes of constant buffer `index`, or nullopt when the buffer holds no
// constant (the sentinel 0, or no data vector and offset <= 1). An empty but
// present data vector is a constant of 0 bytes. Requires a model that passed
// CheckModel (so external data is inside the file).
std::optional<ByteSpan> ConstantBufferBytes(const fb::Model& model,
                                            uint32_t index,
                                            const uint8_t* file);

// "subgraph 1 ('body')", "tensor 3 ('conv/w')", "operator 2 (CONV_2D)".
std::string SubgraphLabel(int index, const fb::SubGraph* subgraph);
std::string TensorLabel(int index, const fb::Tensor* tensor);

}  // namespace kiln

#endif  // KILN_HOST_MODEL_MODEL_CHECKS_H_
