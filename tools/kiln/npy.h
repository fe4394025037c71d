// Reading and writing NumPy .npy files (format versions 1.0 and 2.0,
// little-endian, C order) for `kiln run`.
#ifndef KILN_TOOLS_KILN_NPY_H_
#define KILN_TOOLS_KILN_NPY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kiln/kiln_common.h"

namespace kiln::cli {

struct NpyArray {
  KilnTensorType type = KILN_TYPE_FLOAT32;
  std::vector<int32_t> shape;
  std::vector<uint8_t> data;  // element bytes, C order
};

// Parses a .npy file. Errors name the file and what is unsupported
// (Fortran order, big-endian, object or unknown dtypes).
absl::StatusOr<NpyArray> ReadNpy(const std::string& path);
absl::StatusOr<NpyArray> ParseNpy(const std::string& bytes,
                                  const std::string& label);

// Writes `array` as .npy version 1.0 (2.0 if the header needs it).
absl::Status WriteNpy(const std::string& path, const NpyArray& array);
std::string SerializeNpy(const NpyArray& array);

// NumPy dtype descriptor ("<f4") for a tensor type; "" if none.
std::string NpyDescr(KilnTensorType type);

}  // namespace kiln::cli

#endif  // KILN_TOOLS_KILN_NPY_H_
