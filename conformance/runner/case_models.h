// Generated cases as whole models: the single-op case of an op, and small
// multi-op graphs (a chain, a branch, a chain interrupted by another op) for
// delegates, which see a subgraph rather than one node. The same models are
// what conformance/references/generate_references.py runs through LiteRT's
// reference kernels (`kiln conformance --internal-write-cases DIR`), and what
// the runner looks up the reference outputs of, by key and model hash.
#ifndef KILN_CONFORMANCE_RUNNER_CASE_MODELS_H_
#define KILN_CONFORMANCE_RUNNER_CASE_MODELS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "op_generators.h"
#include "references.h"

namespace kiln::conformance {

struct GeneratedNode {
  int32_t builtin_code = 0;
  int32_t version = 1;
  std::vector<int32_t> inputs, outputs;  // indices into the graph's tensors
  std::vector<std::pair<uint32_t, OptionValue>> options;
};

// Graph kinds: one op, or several (see MakeGraph).
inline constexpr const char* kGraphSingle = "single";
inline constexpr const char* kGraphChain = "chain";
inline constexpr const char* kGraphBranch = "branch";
inline constexpr const char* kGraphInterrupted = "interrupted";

struct GeneratedGraph {
  std::string key;     // names the reference file: "ADD.v1.single.s1"
  std::string family;  // of the underlying case
  std::vector<GeneratedTensor> tensors;
  std::vector<GeneratedNode> nodes;
  std::vector<int32_t> inputs, outputs;
};

// Builtin ops whose generated case keeps the shape and type of input 0 in
// its output, so they can be chained (x -> OP -> OP -> OP).
bool Chainable(int32_t builtin_code);
// Ops a graph may be interrupted with, in order of preference: the runner
// takes the first one the delegate under test does not declare.
const std::vector<int32_t>& InterruptCandidates();

// The graph of `kind` for `builtin_code` at `version` (seed as GenerateCase):
//   single:      the op's generated case;
//   chain:       t1 = OP(x, ...), t2 = OP(t1, ...), y = OP(t2, ...);
//   branch:      a = OP(x, ...), b = OP(x, ...), y = OP(a, b) for a binary
//                op, else outputs y = OP(a) and b;
//   interrupted: t1 = OP(x, ...), t2 = U(t1), y = OP(t2, ...) with U =
//                `interrupt_op` (a delegate that did not declare U must leave
//                it to kernels, so it makes two partitions or none).
// With `same_shape`, a binary op's second operand has the shape of the first
// (no broadcast; key suffix ".same_shape"), for delegates that do not
// broadcast. NotFound when the op has no generator, or is not Chainable for
// a multi-op kind, or is not binary with `same_shape`.
absl::StatusOr<GeneratedGraph> MakeGraph(const std::string& kind,
                                         int32_t builtin_code, int32_t version,
                                         uint64_t seed,
                                         int32_t interrupt_op = 0,
                                         bool same_shape = false);
// Whether MakeGraph has a same_shape variant for the op.
bool HasSameShapeVariant(int32_t builtin_code);

// The graph as a TFLite FlatBuffer (ModelBuilder): runtime inputs are the
// tensors with bytes that are not constant, outputs have unknown shape.
absl::StatusOr<std::vector<uint8_t>> BuildGraphModel(const GeneratedGraph& g);

// Every graph the runner can build at version 1 (what references exist
// for): each op with a generator as a single-op graph, the multi-op graphs
// of every Chainable op (interrupted by each InterruptCandidate), and the
// same-shape variants. Each as DIR/<key>.tflite plus DIR/<key>.json
// ({"key", "model_hash", "inputs": [{"type", "shape", "values"}]}), for
// conformance/references/generate_references.py. Returns how many.
absl::StatusOr<int> WriteCaseModels(const std::string& dir, uint64_t seed);

// 64-bit FNV-1a, as 16 hex digits, of the graph's content (tensors with
// type, shape, data, quantization; nodes with op, version, operands and
// options; inputs and outputs): identifies the computation a reference was
// computed for, independently of how ModelBuilder lays out the file.
std::string GraphHash(const GeneratedGraph& g);

// The independent reference of `g` in `dir` (references.h): NotFound when
// there is none, FailedPrecondition when it was computed for other content
// (stale), each with the message to show.
absl::StatusOr<Reference> FindGraphReference(const std::string& dir,
                                             const GeneratedGraph& g);

}  // namespace kiln::conformance

#endif  // KILN_CONFORMANCE_RUNNER_CASE_MODELS_H_
