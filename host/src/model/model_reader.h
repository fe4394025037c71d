// Builds a Model from bytes: identifier, FlatBuffers verifier, schema
// version, Kiln's semantic checks (model_checks.h), then the graphs.
// Internal to the model loader; use Model::FromFile / Model::FromBuffer.
#ifndef KILN_HOST_MODEL_MODEL_READER_H_
#define KILN_HOST_MODEL_MODEL_READER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "model/model.h"

namespace kiln {

class ModelReader {
 public:
  // Reads the `size` bytes at `data`, which must stay valid as long as the
  // returned model. `mapping`/`mapping_size` (null/0 for borrowed bytes) is
  // an mmap handed to the model, which unmaps it when destroyed; on failure
  // it is unmapped before returning.
  static absl::StatusOr<std::shared_ptr<const Model>> Read(const uint8_t* data,
                                                           size_t size,
                                                           std::string source,
                                                           void* mapping,
                                                           size_t mapping_size);
};

}  // namespace kiln

#endif  // KILN_HOST_MODEL_MODEL_READER_H_
