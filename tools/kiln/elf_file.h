// Reading a shared library's dynamic symbols and dependencies from its ELF
// file (with <elf.h>, no external tool), for `kiln plugin validate`.
#ifndef KILN_TOOLS_KILN_ELF_FILE_H_
#define KILN_TOOLS_KILN_ELF_FILE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace kiln::cli {

// One entry of .dynsym, reduced to what the plugin checks need.
struct DynamicSymbol {
  std::string name;
  bool defined = false;
  bool weak = false;
  unsigned char binding = 0;     // STB_*
  unsigned char type = 0;        // STT_*
  unsigned char visibility = 0;  // STV_*
  uint16_t section = 0;
  uint64_t value = 0;
  uint64_t size = 0;
  // For undefined symbols with a version requirement: the library named by
  // that requirement (e.g. "libc.so.6") and the version ("GLIBC_2.34").
  std::string required_library;
  std::string required_version;
};

struct ElfFile {
  std::string description;             // "ELF 64-bit shared object for x86-64"
  std::vector<std::string> needed;     // DT_NEEDED entries
  std::vector<DynamicSymbol> symbols;  // .dynsym without the null entry
};

// Reads the ELF shared object at `path`, built for this machine and byte
// order. The error says why the file is not one (not ELF, an executable,
// another machine, stripped of section headers, truncated...) and what to
// do about it.
absl::StatusOr<ElfFile> ReadElfFile(const std::string& path);

// Symbols the library makes visible to the dynamic linker. Version-node
// symbols (absolute, value 0, size 0) that a named version script creates
// are not code or data and are left out.
std::vector<const DynamicSymbol*> ExportedSymbols(const ElfFile& elf);

}  // namespace kiln::cli

#endif  // KILN_TOOLS_KILN_ELF_FILE_H_
