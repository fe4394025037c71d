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

// What the header of a .npy file says, checked against the file's size
// (so that the data can be checked before it is read).
struct NpyHeaderInfo {
  std::string path;
  KilnTensorType type = KILN_TYPE_FLOAT32;
  std::vector<int32_t> shape;
  uint64_t data_offset = 0;
  uint64_t data_bytes = 0;  // exactly what the file holds after the header
};

// Reads and checks the header of the .npy file `path`: a regular file (not
// a directory, FIFO or device), a well-formed header (the dict numpy writes,
// with exactly the keys descr, fortran_order and shape, nothing but
// padding after it), a supported dtype, a shape whose size does not
// overflow, and exactly that many data bytes after the header (no trailing
// bytes, not truncated). Errors name the file and what is wrong.
absl::StatusOr<NpyHeaderInfo> ReadNpyHeader(const std::string& path);
// Reads the data the header describes.
absl::StatusOr<NpyArray> ReadNpyData(const NpyHeaderInfo& header);
// Both. Errors name the file and what is unsupported (Fortran order,
// big-endian, object or unknown dtypes).
absl::StatusOr<NpyArray> ReadNpy(const std::string& path);
// The same checks over the bytes of a whole file.
absl::StatusOr<NpyArray> ParseNpy(const std::string& bytes,
                                  const std::string& label);

// Writes `array` as .npy version 1.0 (2.0 if the header needs it).
absl::Status WriteNpy(const std::string& path, const NpyArray& array);
std::string SerializeNpy(const NpyArray& array);

// NumPy dtype descriptor ("<f4") for a tensor type; "" if none.
std::string NpyDescr(KilnTensorType type);

}  // namespace kiln::cli

#endif  // KILN_TOOLS_KILN_NPY_H_
