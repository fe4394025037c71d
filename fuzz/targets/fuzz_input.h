// Consumes a fuzz input as typed values, front to back; past the end every
// read returns zeros/empty. (A small stand-in for LLVM's FuzzedDataProvider,
// so the harnesses also build with GCC for the regression replay tests.)
#ifndef KILN_FUZZ_TARGETS_FUZZ_INPUT_H_
#define KILN_FUZZ_TARGETS_FUZZ_INPUT_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace kiln::fuzz {

class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  size_t remaining() const { return size_ - pos_; }

  template <typename T>
  T Read() {
    T value{};
    const size_t n = sizeof(T) < remaining() ? sizeof(T) : remaining();
    if (n > 0) std::memcpy(&value, data_ + pos_, n);
    pos_ += n;
    return value;
  }
  bool Bool() { return (Read<uint8_t>() & 1) != 0; }
  // A value in [0, n) (0 when n is 0).
  uint32_t Below(uint32_t n) { return n == 0 ? 0 : Read<uint32_t>() % n; }
  // A string of at most `max` bytes: a length byte, then the bytes.
  std::string String(size_t max) {
    size_t n = Read<uint8_t>();
    if (n > max) n = max;
    if (n > remaining()) n = remaining();
    std::string s(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return s;
  }
  // Everything left.
  std::string Rest() {
    std::string s(reinterpret_cast<const char*>(data_ + pos_), remaining());
    pos_ = size_;
    return s;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

}  // namespace kiln::fuzz

#endif  // KILN_FUZZ_TARGETS_FUZZ_INPUT_H_
