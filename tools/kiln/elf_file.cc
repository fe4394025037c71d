#include "elf_file.h"

#include <elf.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "plugin/plugin_file_check.h"

namespace kiln::cli {
namespace {

// Bounds-checked view of the file's bytes.
class Bytes {
 public:
  explicit Bytes(std::vector<char> data) : data_(std::move(data)) {}
  size_t size() const { return data_.size(); }
  bool ReadInto(uint64_t offset, void* out, size_t size) const {
    if (offset > data_.size() || data_.size() - offset < size) return false;
    std::memcpy(out, data_.data() + offset, size);
    return true;
  }
  template <typename T>
  bool Read(uint64_t offset, T* out) const {
    return ReadInto(offset, out, sizeof(T));
  }
  // NUL-terminated string at table_offset + index inside [table_offset,
  // table_offset + table_size); false when out of bounds or unterminated.
  bool String(uint64_t table_offset, uint64_t table_size, uint64_t index,
              std::string* out) const {
    if (index >= table_size || table_offset > data_.size() ||
        table_size > data_.size() - table_offset) {
      return false;
    }
    const char* begin = data_.data() + table_offset + index;
    const char* end = data_.data() + table_offset + table_size;
    const char* nul = static_cast<const char*>(
        std::memchr(begin, '\0', static_cast<size_t>(end - begin)));
    if (nul == nullptr) return false;
    out->assign(begin, nul);
    return true;
  }

 private:
  std::vector<char> data_;
};

struct Elf32Types {
  using Ehdr = Elf32_Ehdr;
  using Shdr = Elf32_Shdr;
  using Sym = Elf32_Sym;
  using Dyn = Elf32_Dyn;
  static constexpr const char* kName = "32-bit";
};
struct Elf64Types {
  using Ehdr = Elf64_Ehdr;
  using Shdr = Elf64_Shdr;
  using Sym = Elf64_Sym;
  using Dyn = Elf64_Dyn;
  static constexpr const char* kName = "64-bit";
};

// Reads one ELF class (32 or 64 bit) of a file already checked for the ELF
// magic and this host's byte order.
template <typename Types>
class ElfParser {
 public:
  using Ehdr = typename Types::Ehdr;
  using Shdr = typename Types::Shdr;
  using Sym = typename Types::Sym;
  using Dyn = typename Types::Dyn;

  explicit ElfParser(const Bytes& bytes) : bytes_(bytes) {}

  absl::StatusOr<ElfFile> Parse() {
    ElfFile elf;
    KILN_RETURN_IF_ERROR(ReadHeaders(&elf));
    KILN_RETURN_IF_ERROR(ReadSymbols(&elf));
    ReadNeeded(&elf);
    return elf;
  }

 private:
  // The ELF header (a shared object for this machine) and the section
  // header table.
  absl::Status ReadHeaders(ElfFile* elf) {
    Ehdr ehdr;
    if (!bytes_.Read(0, &ehdr)) {
      return absl::InvalidArgumentError(
          "the file is shorter than an ELF header");
    }
    elf->description = absl::StrCat("ELF ", Types::kName, " shared object for ",
                                    ElfMachineName(ehdr.e_machine));
    if (ehdr.e_shoff == 0 || ehdr.e_shnum == 0 ||
        ehdr.e_shentsize != sizeof(Shdr)) {
      return absl::InvalidArgumentError(
          "it has no section header table, so its dynamic symbols "
          "cannot be read; do not strip it with sstrip");
    }
    sections_.resize(ehdr.e_shnum);
    for (size_t i = 0; i < sections_.size(); ++i) {
      if (!bytes_.Read(ehdr.e_shoff + i * sizeof(Shdr), &sections_[i])) {
        return absl::InvalidArgumentError(
            "its section header table is truncated");
      }
    }
    return absl::OkStatus();
  }

  const Shdr* SectionByType(uint32_t type) const {
    for (const Shdr& s : sections_) {
      if (s.sh_type == type) return &s;
    }
    return nullptr;
  }
  const Shdr* Linked(const Shdr& s) const {
    return s.sh_link < sections_.size() ? &sections_[s.sh_link] : nullptr;
  }
  std::string StringAt(const Shdr& table, uint64_t index) const {
    std::string s;
    bytes_.String(table.sh_offset, table.sh_size, index, &s);
    return s;
  }

  // Version requirements: version index -> (library file, version name).
  std::map<uint16_t, std::pair<std::string, std::string>> Requirements() const {
    std::map<uint16_t, std::pair<std::string, std::string>> requirements;
    const Shdr* verneed = SectionByType(SHT_GNU_verneed);
    const Shdr* strtab = verneed != nullptr ? Linked(*verneed) : nullptr;
    if (strtab == nullptr) return requirements;
    uint64_t offset = verneed->sh_offset;
    for (uint32_t i = 0; i < verneed->sh_info; ++i) {
      Elf64_Verneed need;  // same layout for both classes
      if (!bytes_.Read(offset, &need)) break;
      const std::string file = StringAt(*strtab, need.vn_file);
      uint64_t aux_offset = offset + need.vn_aux;
      for (uint32_t j = 0; j < need.vn_cnt; ++j) {
        Elf64_Vernaux aux;
        if (!bytes_.Read(aux_offset, &aux)) break;
        requirements[aux.vna_other] = {file, StringAt(*strtab, aux.vna_name)};
        if (aux.vna_next == 0) break;
        aux_offset += aux.vna_next;
      }
      if (need.vn_next == 0) break;
      offset += need.vn_next;
    }
    return requirements;
  }

  // The version index of each dynamic symbol (.gnu.version).
  std::vector<uint16_t> VersionIndices() const {
    std::vector<uint16_t> versym;
    if (const Shdr* s = SectionByType(SHT_GNU_versym)) {
      versym.resize(s->sh_size / sizeof(uint16_t));
      for (size_t i = 0; i < versym.size(); ++i) {
        if (!bytes_.Read(s->sh_offset + i * sizeof(uint16_t), &versym[i])) {
          versym.resize(i);
          break;
        }
      }
    }
    return versym;
  }

  static DynamicSymbol MakeSymbol(const Sym& sym) {
    DynamicSymbol out;
    out.binding = static_cast<unsigned char>(sym.st_info >> 4);
    out.type = static_cast<unsigned char>(sym.st_info & 0xf);
    out.visibility = static_cast<unsigned char>(sym.st_other & 0x3);
    out.section = sym.st_shndx;
    out.defined = sym.st_shndx != SHN_UNDEF;
    out.weak = out.binding == STB_WEAK;
    out.value = sym.st_value;
    out.size = sym.st_size;
    return out;
  }

  absl::Status ReadSymbols(ElfFile* elf) const {
    const auto requirements = Requirements();
    const std::vector<uint16_t> versym = VersionIndices();
    const Shdr* dynsym = SectionByType(SHT_DYNSYM);
    if (dynsym == nullptr || Linked(*dynsym) == nullptr) {
      return absl::InvalidArgumentError(
          "it has no dynamic symbol table (.dynsym), so it exports "
          "nothing; is it really a shared library?");
    }
    const Shdr* dynstr = Linked(*dynsym);
    const size_t num_symbols = dynsym->sh_size / sizeof(Sym);
    for (size_t i = 1; i < num_symbols; ++i) {  // entry 0 is the null symbol
      Sym sym;
      if (!bytes_.Read(dynsym->sh_offset + i * sizeof(Sym), &sym)) {
        return absl::InvalidArgumentError(
            "its dynamic symbol table is truncated");
      }
      DynamicSymbol out = MakeSymbol(sym);
      if (!bytes_.String(dynstr->sh_offset, dynstr->sh_size, sym.st_name,
                         &out.name)) {
        return absl::InvalidArgumentError(
            "a dynamic symbol name lies outside .dynstr");
      }
      auto it = i < versym.size() ? requirements.find(versym[i] & 0x7fff)
                                  : requirements.end();
      if (it != requirements.end()) {
        out.required_library = it->second.first;
        out.required_version = it->second.second;
      }
      elf->symbols.push_back(std::move(out));
    }
    return absl::OkStatus();
  }

  void ReadNeeded(ElfFile* elf) const {
    const Shdr* dynamic = SectionByType(SHT_DYNAMIC);
    const Shdr* strtab = dynamic != nullptr ? Linked(*dynamic) : nullptr;
    if (strtab == nullptr) return;
    const size_t count = dynamic->sh_size / sizeof(Dyn);
    for (size_t i = 0; i < count; ++i) {
      Dyn dyn;
      if (!bytes_.Read(dynamic->sh_offset + i * sizeof(Dyn), &dyn)) break;
      if (dyn.d_tag == DT_NULL) break;
      std::string name;
      if (dyn.d_tag == DT_NEEDED &&
          bytes_.String(strtab->sh_offset, strtab->sh_size, dyn.d_un.d_val,
                        &name)) {
        elf->needed.push_back(name);
      }
    }
  }

  const Bytes& bytes_;
  std::vector<Shdr> sections_;
};

}  // namespace

absl::StatusOr<ElfFile> ReadElfFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec) &&
      !std::filesystem::is_regular_file(path, ec)) {
    return absl::InvalidArgumentError(
        "it is not a regular file; give the path of a shared library");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(
        "cannot open the file for reading; check the path and permissions");
  }
  Bytes bytes(std::vector<char>((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>()));
  unsigned char ident[EI_NIDENT];
  if (!bytes.Read(0, &ident) || std::memcmp(ident, ELFMAG, SELFMAG) != 0) {
    return absl::InvalidArgumentError(
        "it is not an ELF file (no \\x7fELF magic); a plugin must "
        "be a shared library built with kiln_add_plugin");
  }
  const unsigned char host_data =
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
      ELFDATA2LSB;
#else
      ELFDATA2MSB;
#endif
  if (ident[EI_DATA] != host_data) {
    return absl::InvalidArgumentError(
        "its byte order differs from this host's; rebuild it for this "
        "machine");
  }
  if (ident[EI_CLASS] != ELFCLASS64 && ident[EI_CLASS] != ELFCLASS32) {
    return absl::InvalidArgumentError("its ELF class byte is invalid");
  }
  // The checks the host makes before dlopen (a shared object for this
  // machine, segments inside the file): the dependency check opens the
  // plugin too.
  KILN_RETURN_IF_ERROR(CheckElfSharedObject(
      [&bytes](uint64_t offset, void* out, size_t size) {
        return bytes.ReadInto(offset, out, size);
      },
      bytes.size()));
  return ident[EI_CLASS] == ELFCLASS64 ? ElfParser<Elf64Types>(bytes).Parse()
                                       : ElfParser<Elf32Types>(bytes).Parse();
}

std::vector<const DynamicSymbol*> ExportedSymbols(const ElfFile& elf) {
  std::vector<const DynamicSymbol*> out;
  for (const DynamicSymbol& s : elf.symbols) {
    if (!s.defined) continue;
    if (s.binding != STB_GLOBAL && s.binding != STB_WEAK &&
        s.binding != STB_GNU_UNIQUE) {
      continue;
    }
    if (s.visibility != STV_DEFAULT && s.visibility != STV_PROTECTED) continue;
    if (s.section == SHN_ABS && s.value == 0 && s.size == 0) continue;
    out.push_back(&s);
  }
  return out;
}

}  // namespace kiln::cli
