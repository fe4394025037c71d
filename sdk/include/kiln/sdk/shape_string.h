// Kiln SDK: the one way Kiln prints a shape, "[2, 3]".
//
// Header-only and dependency-free, so plugins (through kiln/sdk/checks.h),
// the host and tools print shapes alike.
#ifndef KILN_SDK_SHAPE_STRING_H_
#define KILN_SDK_SHAPE_STRING_H_

#include <cstdint>
#include <initializer_list>
#include <string>

namespace kiln::sdk {

// "[2, 3]" for any range of integer dims (a std::vector, a FlatBuffers
// vector, ...); "[]" for a scalar.
template <typename Dims>
std::string ShapeString(const Dims& dims) {
  std::string s = "[";
  bool first = true;
  for (const auto d : dims) {
    if (!first) s += ", ";
    s += std::to_string(d);
    first = false;
  }
  return s + "]";
}
inline std::string ShapeString(std::initializer_list<int32_t> dims) {
  return ShapeString<std::initializer_list<int32_t>>(dims);
}

}  // namespace kiln::sdk

#endif  // KILN_SDK_SHAPE_STRING_H_
