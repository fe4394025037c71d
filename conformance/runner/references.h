// Independent reference outputs: JSON files written by
// conformance/references/generate_references.py from LiteRT's reference
// kernels (never from Kiln), one per generated model, checked in under
// conformance/references/golden/ so that running the suite needs no Python.
//
//   {"key": "ADD.v1.single.s1", "model_hash": "<FNV-1a of the model>",
//    "source": "LiteRT 2.x BUILTIN_REF", "tolerance": {"abs": .., "rel": ..},
//    "outputs": [{"type": "FLOAT32", "shape": [2, 3, 4], "values": [...]}]}
//
// A reference applies only to the exact model it was computed for: the
// runner rebuilds the model, and a different hash makes the reference stale
// (reported as "no reference", never as a pass).
#ifndef KILN_CONFORMANCE_RUNNER_REFERENCES_H_
#define KILN_CONFORMANCE_RUNNER_REFERENCES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "op_generators.h"
#include "runtime/graph.h"

namespace kiln::conformance {

struct ReferenceOutput {
  KilnTensorType type = KILN_TYPE_FLOAT32;
  std::vector<int32_t> shape;
  std::vector<double> values;
  // A quantized integer output: may differ from the reference by one
  // quantization step (rounding of the rescale), not more.
  bool quantized = false;
};

struct Reference {
  std::string path;  // the file
  std::string key, model_hash, source;
  double abs_tolerance = 1e-5, rel_tolerance = 1e-4;
  std::vector<ReferenceOutput> outputs;
};

// The directory the runner reads references from when none is given: the
// source tree's conformance/references/golden, else the installed copy.
std::string DefaultReferenceDirectory();

// The reference `key` in `dir`; NotFound when there is none, another error
// for an unreadable or malformed file (naming it).
absl::StatusOr<Reference> LoadReference(const std::string& dir,
                                        const std::string& key);

// Compares an output (element type, shape, `bytes` at `data`) with the
// reference output: same type and shape; FLOAT32/FLOAT16-free floats within
// |got - want| <= abs + rel * |want| (NaN matches NaN); quantized integer
// outputs within one step; other integer and bool types exactly. "" when
// equal, else what differs.
// A custom op's case from a vendor's custom-case file
// (`kiln conformance --custom-cases FILE`): its inputs and custom options
// and the expected outputs the vendor computed independently of the plugin
// (conformance/README.md, "Custom ops"). The case with the newest version
// <= `version` for `custom_name`; NotFound when the file has none.
struct CustomCase {
  GeneratedCase c;
  Reference reference;
};
absl::StatusOr<CustomCase> LoadCustomCase(const std::string& path,
                                          const std::string& custom_name,
                                          int32_t version);

std::string CompareWithReference(KilnTensorType type,
                                 const std::vector<int32_t>& shape,
                                 const void* data, size_t bytes,
                                 const ReferenceOutput& want, double abs,
                                 double rel);

}  // namespace kiln::conformance

#endif  // KILN_CONFORMANCE_RUNNER_REFERENCES_H_
