// Fuzz target: the .npy reader of `kiln run --input name=file.npy`
// (tools/kiln/npy.h). Property checked besides "no crash": an array the
// reader accepts has as many data bytes as its shape and dtype say, and
// survives a write/read round trip unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "absl/status/statusor.h"
#include "npy.h"
#include "runtime/graph.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<kiln::cli::NpyArray> array =
      kiln::cli::ParseNpy(bytes, "fuzz.npy");
  if (!array.ok()) return 0;
  uint64_t elements = 1;
  for (int32_t d : array->shape) {
    if (d < 0) std::abort();  // a negative dimension was accepted
    if (__builtin_mul_overflow(elements, static_cast<uint64_t>(d), &elements)) {
      std::abort();  // a shape whose element count overflows was accepted
    }
  }
  const uint64_t element_size = kiln::ElementSize(array->type);
  uint64_t expected = 0;
  if (element_size != 0 &&
      (__builtin_mul_overflow(elements, element_size, &expected) ||
       expected != array->data.size())) {
    std::abort();  // data size disagrees with shape x dtype
  }
  absl::StatusOr<kiln::cli::NpyArray> again =
      kiln::cli::ParseNpy(kiln::cli::SerializeNpy(*array), "round trip");
  if (!again.ok() || again->type != array->type ||
      again->shape != array->shape || again->data != array->data) {
    std::abort();  // what was read cannot be written back identically
  }
  return 0;
}
