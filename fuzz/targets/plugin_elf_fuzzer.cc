// Fuzz target: the check every plugin file passes before dlopen()
// (plugin/plugin_file_check.h): ELF header and program headers against the
// file size. Property checked besides "no crash": a file the check accepts
// has every segment's file image inside the file (what keeps dlopen from
// touching pages past the end of a truncated file).
#include <elf.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "plugin/plugin_file_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto read = [data, size](uint64_t offset, void* out, size_t n) {
    if (offset > size || size - offset < n) return false;
    std::memcpy(out, data + offset, n);
    return true;
  };
  if (!kiln::CheckElfSharedObject(read, size).ok()) return 0;
  Elf64_Ehdr ehdr;
  if (!read(0, &ehdr, sizeof(ehdr))) std::abort();
  for (uint32_t i = 0; i < ehdr.e_phnum; ++i) {
    Elf64_Phdr ph;
    if (!read(ehdr.e_phoff + uint64_t{i} * sizeof(ph), &ph, sizeof(ph))) {
      std::abort();  // accepted with a program header outside the file
    }
    if (ph.p_filesz != 0 &&
        (ph.p_offset > size || size - ph.p_offset < ph.p_filesz)) {
      std::abort();  // accepted with a segment outside the file
    }
  }
  return 0;
}
