// `kiln plugin validate PLUGIN.so [--json] [--allow-lib PREFIX]...`: checks
// that a file is a well-formed Kiln plugin before it is shipped.
//
// Checks, each reported as pass/fail with a reason:
//   elf           an ELF shared object for this machine and byte order;
//   exports       the dynamic symbol table exports exactly KilnPluginEntry;
//   no_libkiln    no DT_NEEDED entry names libkiln;
//   dependencies  every undefined symbol comes from an allowed system library
//                 (libc, libstdc++, libm, libdl, libgcc_s, ld-linux,
//                 libpthread, librt, libOpenCL, sanitizer runtimes, plus any
//                 --allow-lib prefix);
//   load          the host's real loader (PluginLoader::Load) accepts it.
// The ELF file is parsed here with <elf.h>; no external tool is needed.
// Exit code: 0 when every check passes, 1 otherwise, 2 on a usage error.
#include <dlfcn.h>
#include <elf.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "kiln/kiln_plugin.h"
#include "nlohmann/json.hpp"
#include "plugin/negotiation.h"
#include "plugin/plugin_loader.h"
#include "runtime/graph.h"

namespace kiln::cli {
namespace {

constexpr const char* kValidateUsage =
    "usage: kiln plugin validate PLUGIN.so [--json] [--allow-lib PREFIX]...\n"
    "\n"
    "Checks that PLUGIN.so is a well-formed Kiln plugin:\n"
    "  elf           an ELF shared object for this machine\n"
    "  exports       exports exactly the symbol KilnPluginEntry\n"
    "  no_libkiln    does not link libkiln\n"
    "  dependencies  undefined symbols come only from system libraries\n"
    "                (libc, libstdc++, libm, libdl, libgcc_s, ld-linux,\n"
    "                libpthread, librt, libOpenCL)\n"
    "  load          the host's plugin loader accepts it (descriptor,\n"
    "                kernels, delegate, version negotiation)\n"
    "and prints what the plugin declares.\n"
    "\n"
    "options:\n"
    "  --json              machine-readable report\n"
    "  --allow-lib PREFIX  also allow symbols from libraries whose file name\n"
    "                      starts with PREFIX (e.g. libacme_driver.so);\n"
    "                      repeatable\n"
    "\n"
    "Exit code: 0 if every check passes, 1 if any fails, 2 on usage error.\n";

constexpr const char* kPluginUsage =
    "usage: kiln plugin <subcommand> [options]\n"
    "\n"
    "subcommands:\n"
    "  validate PLUGIN.so [--json]   check a plugin file before shipping it\n";

// Libraries a plugin may take undefined symbols from, by file-name prefix.
const char* const kAllowedLibraryPrefixes[] = {
    "libc.so.",     "libstdc++.so.", "libm.so.",       "libdl.so.",
    "libgcc_s.so.", "ld-linux",      "libpthread.so.", "librt.so.",
    "libOpenCL.so", "libasan.so.",   "libubsan.so.",   "liblsan.so.",
    "libtsan.so.",
};

constexpr size_t kMaxListedSymbols = 20;

struct Check {
  std::string name;
  bool passed = false;
  std::string detail;
};

// One entry of .dynsym, reduced to what the checks need.
struct DynamicSymbol {
  std::string name;
  bool defined = false;
  bool weak = false;
  unsigned char binding = 0;
  unsigned char type = 0;
  unsigned char visibility = 0;
  uint16_t section = 0;
  uint64_t value = 0;
  uint64_t size = 0;
  // For undefined symbols with a version requirement: the library named by
  // that requirement (e.g. "libc.so.6") and the version ("GLIBC_2.34").
  std::string required_library;
  std::string required_version;
};

struct ElfReport {
  bool is_elf = false;
  std::string error;  // why the file could not be read as ELF
  std::string description;
  std::vector<std::string> needed;
  std::vector<DynamicSymbol> symbols;
};

bool IsAllowedLibrary(const std::string& file,
                      const std::vector<std::string>& extra_prefixes) {
  for (const char* prefix : kAllowedLibraryPrefixes) {
    if (file.rfind(prefix, 0) == 0) return true;
  }
  for (const std::string& prefix : extra_prefixes) {
    if (!prefix.empty() && file.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

bool IsLibkiln(const std::string& file) {
  return file == "libkiln.so" || file.rfind("libkiln.so.", 0) == 0;
}

std::string Basename(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string JoinLimited(const std::vector<std::string>& items,
                        size_t limit = kMaxListedSymbols) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < limit; ++i) {
    if (i > 0) out += ", ";
    out += items[i];
  }
  if (items.size() > limit) {
    out += ", ... (" + std::to_string(items.size() - limit) + " more)";
  }
  return out;
}

uint16_t HostMachine() {
#if defined(__x86_64__)
  return EM_X86_64;
#elif defined(__aarch64__)
  return EM_AARCH64;
#elif defined(__i386__)
  return EM_386;
#elif defined(__arm__)
  return EM_ARM;
#elif defined(__riscv)
  return EM_RISCV;
#elif defined(__powerpc64__)
  return EM_PPC64;
#else
  return EM_NONE;
#endif
}

std::string MachineName(uint16_t machine) {
  switch (machine) {
    case EM_X86_64:
      return "x86-64";
    case EM_AARCH64:
      return "AArch64";
    case EM_386:
      return "i386";
    case EM_ARM:
      return "ARM";
    case EM_RISCV:
      return "RISC-V";
    case EM_PPC64:
      return "PowerPC64";
    default:
      return "machine " + std::to_string(machine);
  }
}

// Bounds-checked view of the file's bytes.
class Bytes {
 public:
  explicit Bytes(std::vector<char> data) : data_(std::move(data)) {}
  size_t size() const { return data_.size(); }
  template <typename T>
  bool Read(uint64_t offset, T* out) const {
    if (offset > data_.size() || data_.size() - offset < sizeof(T)) {
      return false;
    }
    std::memcpy(out, data_.data() + offset, sizeof(T));
    return true;
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

template <typename Types>
bool ParseElf(const Bytes& bytes, ElfReport* report) {
  using Ehdr = typename Types::Ehdr;
  using Shdr = typename Types::Shdr;
  using Sym = typename Types::Sym;
  using Dyn = typename Types::Dyn;
  Ehdr ehdr;
  if (!bytes.Read(0, &ehdr)) {
    report->error = "the file is shorter than an ELF header";
    return false;
  }
  if (ehdr.e_type != ET_DYN) {
    report->error = std::string("it is an ELF ") +
                    (ehdr.e_type == ET_EXEC  ? "executable"
                     : ehdr.e_type == ET_REL ? "object file (.o)"
                                             : "file of another kind") +
                    ", not a shared object; build it with kiln_add_plugin "
                    "(add_library(... MODULE ...))";
    return false;
  }
  if (ehdr.e_machine != HostMachine()) {
    report->error = "it is built for " + MachineName(ehdr.e_machine) +
                    ", but this host is " + MachineName(HostMachine()) +
                    "; rebuild it for this machine";
    return false;
  }
  report->description = std::string("ELF ") + Types::kName +
                        " shared object for " + MachineName(ehdr.e_machine);
  if (ehdr.e_shoff == 0 || ehdr.e_shnum == 0 ||
      ehdr.e_shentsize != sizeof(Shdr)) {
    report->error =
        "it has no section header table, so its dynamic symbols "
        "cannot be read; do not strip it with sstrip";
    return false;
  }
  std::vector<Shdr> sections(ehdr.e_shnum);
  for (size_t i = 0; i < sections.size(); ++i) {
    if (!bytes.Read(ehdr.e_shoff + i * sizeof(Shdr), &sections[i])) {
      report->error = "its section header table is truncated";
      return false;
    }
  }
  auto section_by_type = [&](uint32_t type) -> const Shdr* {
    for (const Shdr& s : sections) {
      if (s.sh_type == type) return &s;
    }
    return nullptr;
  };
  auto linked = [&](const Shdr& s) -> const Shdr* {
    return s.sh_link < sections.size() ? &sections[s.sh_link] : nullptr;
  };

  // Version requirements: version index -> (library file, version name).
  std::map<uint16_t, std::pair<std::string, std::string>> requirements;
  if (const Shdr* verneed = section_by_type(SHT_GNU_verneed)) {
    const Shdr* strtab = linked(*verneed);
    uint64_t offset = verneed->sh_offset;
    for (uint32_t i = 0; strtab != nullptr && i < verneed->sh_info; ++i) {
      Elf64_Verneed need;  // same layout for both classes
      if (!bytes.Read(offset, &need)) break;
      std::string file;
      bytes.String(strtab->sh_offset, strtab->sh_size, need.vn_file, &file);
      uint64_t aux_offset = offset + need.vn_aux;
      for (uint32_t j = 0; j < need.vn_cnt; ++j) {
        Elf64_Vernaux aux;
        if (!bytes.Read(aux_offset, &aux)) break;
        std::string version;
        bytes.String(strtab->sh_offset, strtab->sh_size, aux.vna_name,
                     &version);
        requirements[aux.vna_other] = {file, version};
        if (aux.vna_next == 0) break;
        aux_offset += aux.vna_next;
      }
      if (need.vn_next == 0) break;
      offset += need.vn_next;
    }
  }
  std::vector<uint16_t> versym;
  if (const Shdr* s = section_by_type(SHT_GNU_versym)) {
    versym.resize(s->sh_size / sizeof(uint16_t));
    for (size_t i = 0; i < versym.size(); ++i) {
      if (!bytes.Read(s->sh_offset + i * sizeof(uint16_t), &versym[i])) {
        versym.resize(i);
        break;
      }
    }
  }

  const Shdr* dynsym = section_by_type(SHT_DYNSYM);
  if (dynsym == nullptr || linked(*dynsym) == nullptr) {
    report->error =
        "it has no dynamic symbol table (.dynsym), so it exports "
        "nothing; is it really a shared library?";
    return false;
  }
  const Shdr* dynstr = linked(*dynsym);
  const size_t num_symbols = dynsym->sh_size / sizeof(Sym);
  for (size_t i = 1; i < num_symbols; ++i) {  // entry 0 is the null symbol
    Sym sym;
    if (!bytes.Read(dynsym->sh_offset + i * sizeof(Sym), &sym)) {
      report->error = "its dynamic symbol table is truncated";
      return false;
    }
    DynamicSymbol out;
    if (!bytes.String(dynstr->sh_offset, dynstr->sh_size, sym.st_name,
                      &out.name)) {
      report->error = "a dynamic symbol name lies outside .dynstr";
      return false;
    }
    out.binding = static_cast<unsigned char>(sym.st_info >> 4);
    out.type = static_cast<unsigned char>(sym.st_info & 0xf);
    out.visibility = static_cast<unsigned char>(sym.st_other & 0x3);
    out.section = sym.st_shndx;
    out.defined = sym.st_shndx != SHN_UNDEF;
    out.weak = out.binding == STB_WEAK;
    out.value = sym.st_value;
    out.size = sym.st_size;
    if (i < versym.size()) {
      const uint16_t index = versym[i] & 0x7fff;
      auto it = requirements.find(index);
      if (it != requirements.end()) {
        out.required_library = it->second.first;
        out.required_version = it->second.second;
      }
    }
    report->symbols.push_back(std::move(out));
  }

  if (const Shdr* dynamic = section_by_type(SHT_DYNAMIC)) {
    const Shdr* strtab = linked(*dynamic);
    const size_t count = dynamic->sh_size / sizeof(Dyn);
    for (size_t i = 0; strtab != nullptr && i < count; ++i) {
      Dyn dyn;
      if (!bytes.Read(dynamic->sh_offset + i * sizeof(Dyn), &dyn)) break;
      if (dyn.d_tag == DT_NULL) break;
      if (dyn.d_tag == DT_NEEDED) {
        std::string name;
        if (bytes.String(strtab->sh_offset, strtab->sh_size, dyn.d_un.d_val,
                         &name)) {
          report->needed.push_back(name);
        }
      }
    }
  }
  return true;
}

ElfReport ReadElf(const std::string& path) {
  ElfReport report;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    report.error =
        "cannot open the file for reading; check the path and "
        "permissions";
    return report;
  }
  std::vector<char> data((std::istreambuf_iterator<char>(in)),
                         std::istreambuf_iterator<char>());
  Bytes bytes(std::move(data));
  unsigned char ident[EI_NIDENT];
  if (!bytes.Read(0, &ident) || std::memcmp(ident, ELFMAG, SELFMAG) != 0) {
    report.error =
        "it is not an ELF file (no \\x7fELF magic); a plugin must "
        "be a shared library built with kiln_add_plugin";
    return report;
  }
  const unsigned char host_data =
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
      ELFDATA2LSB;
#else
      ELFDATA2MSB;
#endif
  if (ident[EI_DATA] != host_data) {
    report.error =
        "its byte order differs from this host's; rebuild it for "
        "this machine";
    return report;
  }
  bool ok = false;
  if (ident[EI_CLASS] == ELFCLASS64) {
    ok = ParseElf<Elf64Types>(bytes, &report);
  } else if (ident[EI_CLASS] == ELFCLASS32) {
    ok = ParseElf<Elf32Types>(bytes, &report);
  } else {
    report.error = "its ELF class byte is invalid";
  }
  report.is_elf = ok;
  return report;
}

// Symbols the plugin makes visible to the dynamic linker. Version-node
// symbols (absolute, value 0, size 0) that a named version script creates
// are not code or data and are ignored.
std::vector<const DynamicSymbol*> ExportedSymbols(const ElfReport& elf) {
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

Check CheckElf(const ElfReport& elf) {
  Check c{"elf", elf.is_elf, ""};
  c.detail = elf.is_elf ? elf.description : elf.error;
  return c;
}

Check NotCheckedBecauseNotElf(const char* name) {
  return Check{name, false,
               "not checked: the file could not be read as an ELF shared "
               "object (see the elf check)"};
}

Check CheckExports(const ElfReport& elf) {
  Check c{"exports", false, ""};
  const std::vector<const DynamicSymbol*> exported = ExportedSymbols(elf);
  const DynamicSymbol* entry = nullptr;
  std::vector<std::string> extra;
  for (const DynamicSymbol* s : exported) {
    if (s->name == KILN_PLUGIN_ENTRY_SYMBOL) {
      entry = s;
    } else {
      extra.push_back(s->name);
    }
  }
  if (entry == nullptr) {
    c.detail = std::string("it does not export '") + KILN_PLUGIN_ENTRY_SYMBOL +
               "'" +
               (extra.empty() ? std::string(" (it exports no symbols)")
                              : " (it exports: " + JoinLimited(extra) + ")") +
               "; define it with KILN_DEFINE_PLUGIN and build with "
               "kiln_add_plugin";
    return c;
  }
  if (entry->type != STT_FUNC) {
    c.detail = std::string("'") + KILN_PLUGIN_ENTRY_SYMBOL +
               "' is exported but is not a function";
    return c;
  }
  if (!extra.empty()) {
    c.detail = "it exports " + std::to_string(extra.size()) +
               " symbol(s) besides " + KILN_PLUGIN_ENTRY_SYMBOL + ": " +
               JoinLimited(extra) +
               "; build with kiln_add_plugin (linker version script "
               "kiln_plugin.map and -fvisibility=hidden) so only the entry "
               "point is visible";
    return c;
  }
  c.passed = true;
  c.detail = std::string("exports exactly ") + KILN_PLUGIN_ENTRY_SYMBOL;
  return c;
}

Check CheckNoLibkiln(const ElfReport& elf) {
  Check c{"no_libkiln", true, ""};
  std::vector<std::string> offenders;
  for (const std::string& n : elf.needed) {
    if (IsLibkiln(n)) offenders.push_back(n);
  }
  const std::string needed =
      elf.needed.empty() ? "none" : JoinLimited(elf.needed);
  if (!offenders.empty()) {
    c.passed = false;
    c.detail = "it links " + JoinLimited(offenders) + " (NEEDED: " + needed +
               "); plugins must not link libkiln: every host service comes "
               "through KilnHostApi. Remove kiln / Kiln::kiln from the "
               "plugin's target_link_libraries";
    return c;
  }
  c.detail = "does not link libkiln (NEEDED: " + needed + ")";
  return c;
}

// Finds which library defines `symbol` for the plugin at `path`: through
// the plugin's own handle when it can be opened (so its RUNPATH and
// dependency order apply, as when the host loads it), else through each
// NEEDED library opened by name. Returns the defining file's name, or "".
class ProviderLookup {
 public:
  // libkiln is never opened (see LinksLibkiln), so with it in `needed` the
  // plugin is not opened either.
  ProviderLookup(const std::string& path,
                 const std::vector<std::string>& needed, bool links_libkiln) {
    if (!links_libkiln) {
      if (void* h = dlopen(path.c_str(), RTLD_LAZY | RTLD_LOCAL)) {
        handles_.push_back(h);
        return;
      }
    }
    for (const std::string& lib : needed) {
      if (IsLibkiln(lib)) continue;
      if (void* h = dlopen(lib.c_str(), RTLD_LAZY | RTLD_LOCAL)) {
        handles_.push_back(h);
      }
    }
  }
  ~ProviderLookup() {
    for (void* h : handles_) dlclose(h);
  }
  ProviderLookup(const ProviderLookup&) = delete;
  ProviderLookup& operator=(const ProviderLookup&) = delete;

  std::string Find(const std::string& symbol) const {
    for (void* h : handles_) {
      void* address = dlsym(h, symbol.c_str());
      if (address == nullptr) continue;
      Dl_info info;
      if (dladdr(address, &info) != 0 && info.dli_fname != nullptr) {
        return Basename(info.dli_fname);
      }
    }
    return "";
  }

 private:
  std::vector<void*> handles_;
};

Check CheckDependencies(const std::string& path, const ElfReport& elf,
                        const std::vector<std::string>& extra_prefixes) {
  Check c{"dependencies", true, ""};
  std::string libkiln;
  for (const std::string& n : elf.needed) {
    if (IsLibkiln(n)) libkiln = n;
  }
  ProviderLookup lookup(path, elf.needed, !libkiln.empty());
  std::vector<std::string> offenders;
  std::set<std::string> providers;
  size_t undefined = 0, unresolved_weak = 0;
  for (const DynamicSymbol& s : elf.symbols) {
    if (s.defined || s.binding == STB_LOCAL) continue;
    ++undefined;
    std::string provider = s.required_library;
    if (provider.empty()) provider = lookup.Find(s.name);
    if (provider.empty()) {
      // An unresolved weak reference is optional by definition.
      if (s.weak) {
        ++unresolved_weak;
        continue;
      }
      if (!libkiln.empty() && s.name.rfind("Kiln", 0) == 0) {
        provider = libkiln;  // not opened; Kiln* symbols are its API
      } else {
        offenders.push_back(s.name + " (not found in any NEEDED library)");
        continue;
      }
    }
    if (IsAllowedLibrary(provider, extra_prefixes)) {
      providers.insert(provider);
    } else {
      offenders.push_back(s.name + " (from " + provider + ")");
    }
  }
  if (!offenders.empty()) {
    c.passed = false;
    c.detail = std::to_string(offenders.size()) +
               " undefined symbol(s) come from libraries a plugin must not "
               "depend on: " +
               JoinLimited(offenders) +
               ". A plugin may use only the C/C++ runtime, libm, libdl, "
               "libpthread and OpenCL; link other code statically, or pass "
               "--allow-lib PREFIX for a vendor driver that ships with the "
               "plugin";
    return c;
  }
  c.detail = std::to_string(undefined) + " undefined symbol(s)";
  if (!providers.empty()) {
    c.detail += ", resolved from " + JoinLimited(std::vector<std::string>(
                                         providers.begin(), providers.end()));
  }
  if (unresolved_weak > 0) {
    c.detail += (providers.empty() ? ", " : "; ") +
                std::to_string(unresolved_weak) +
                " optional weak reference(s) left unresolved";
  }
  return c;
}

std::string KernelOpLabel(const KilnKernel& k) {
  if (k.builtin_code == KILN_OP_CUSTOM) {
    return std::string("CUSTOM '") +
           (k.custom_name != nullptr ? k.custom_name : "(null)") + "'";
  }
  return BuiltinOpName(k.builtin_code);
}

// What the plugin declares, as far as the loader got.
nlohmann::ordered_json DescribePlugin(const PluginLoadRecord& record,
                                      const LoadedPlugin* plugin,
                                      const HostOffer& offer) {
  nlohmann::ordered_json j;
  j["name"] = record.name;
  j["version"] = record.version;
  j["built_for_extension_api"] =
      record.abi_version == 0 ? "" : VersionString(record.abi_version);
  j["host_extension_api_range"] = {
      {"min", VersionString(offer.min_plugin_abi_version)},
      {"max", VersionString(offer.max_abi_version)}};
  if (plugin == nullptr) {
    j["negotiation"] = "refused";
    return j;
  }
  const KilnPluginDescriptor* d = plugin->descriptor();
  j["min_host_extension_api"] = VersionString(d->min_host_abi_version);
  j["negotiation"] = "accepted";
  j["negotiated_extension_api"] = VersionString(plugin->negotiated_version());
  j["bad_host_versions"] = nlohmann::ordered_json::array();
  for (uint32_t i = 0; i < d->num_bad_host_versions; ++i) {
    j["bad_host_versions"].push_back(VersionString(d->bad_host_versions[i]));
  }
  j["kernels"] = nlohmann::ordered_json::array();
  for (const KilnKernel* k : plugin->kernels()) {
    nlohmann::ordered_json kj;
    kj["op"] = KernelOpLabel(*k);
    kj["builtin_code"] = k->builtin_code;
    if (k->builtin_code == KILN_OP_CUSTOM) kj["custom_name"] = k->custom_name;
    kj["min_version"] = k->min_version;
    kj["max_version"] = k->max_version;
    j["kernels"].push_back(kj);
  }
  if (const KilnDelegateInterface* del = plugin->delegate()) {
    j["delegate"] = {{"name", del->name},
                     {"settings_type",
                      del->settings_type != nullptr ? del->settings_type : ""}};
  } else {
    j["delegate"] = nullptr;
  }
  j["extensions"] = nlohmann::ordered_json::array();
  for (const KilnExtensionBase* e = d->extensions; e != nullptr; e = e->next) {
    j["extensions"].push_back(e->id);
  }
  return j;
}

void PrintText(const std::string& path, const std::vector<Check>& checks,
               const nlohmann::ordered_json& plugin) {
  std::printf("kiln plugin validate: %s\n", path.c_str());
  for (const Check& c : checks) {
    std::printf("  [%s] %-13s %s\n", c.passed ? "PASS" : "FAIL", c.name.c_str(),
                c.detail.c_str());
  }
  if (!plugin.is_null()) {
    std::printf("Plugin\n");
    auto str = [&](const char* key) {
      return plugin.contains(key) ? plugin[key].get<std::string>()
                                  : std::string();
    };
    auto or_unknown = [](std::string v) {
      return v.empty() ? std::string("(not read)") : v;
    };
    std::printf("  name                    %s\n",
                or_unknown(str("name")).c_str());
    std::printf("  version                 %s\n",
                or_unknown(str("version")).c_str());
    std::printf("  built for extension API %s\n",
                str("built_for_extension_api").c_str());
    if (plugin.contains("min_host_extension_api")) {
      std::printf("  minimum host            %s\n",
                  str("min_host_extension_api").c_str());
    }
    const auto& range = plugin["host_extension_api_range"];
    if (str("negotiation") == "accepted") {
      std::printf(
          "  negotiation             accepted, extension API %s "
          "(this host serves %s to %s)\n",
          str("negotiated_extension_api").c_str(),
          range["min"].get<std::string>().c_str(),
          range["max"].get<std::string>().c_str());
    } else {
      std::printf("  negotiation             refused (see the load check)\n");
    }
    if (plugin.contains("bad_host_versions") &&
        !plugin["bad_host_versions"].empty()) {
      std::string bad;
      for (const auto& v : plugin["bad_host_versions"]) {
        if (!bad.empty()) bad += ", ";
        bad += v.get<std::string>();
      }
      std::printf("  known-bad hosts         %s\n", bad.c_str());
    }
    if (plugin.contains("kernels")) {
      std::printf("  kernels                 %zu\n", plugin["kernels"].size());
      for (const auto& k : plugin["kernels"]) {
        std::printf("    %-28s op versions %d..%d\n",
                    k["op"].get<std::string>().c_str(),
                    k["min_version"].get<int>(), k["max_version"].get<int>());
      }
      if (plugin["delegate"].is_null()) {
        std::printf("  delegate                none\n");
      } else {
        const std::string type =
            plugin["delegate"]["settings_type"].get<std::string>();
        std::printf("  delegate                %s (settings: %s)\n",
                    plugin["delegate"]["name"].get<std::string>().c_str(),
                    type.empty() ? "none" : type.c_str());
      }
      std::string ids;
      for (const auto& e : plugin["extensions"]) {
        if (!ids.empty()) ids += ", ";
        ids += e.get<std::string>();
      }
      std::printf("  extensions              %s\n",
                  ids.empty() ? "none" : ids.c_str());
    }
  }
  size_t passed = 0;
  for (const Check& c : checks) passed += c.passed ? 1 : 0;
  std::printf("Result: %s (%zu of %zu checks passed)\n",
              passed == checks.size() ? "PASS" : "FAIL", passed, checks.size());
}

int ValidateCommand(std::vector<std::string> args) {
  bool json = false;
  std::string path;
  std::vector<std::string> extra_prefixes;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--json") {
      json = true;
    } else if (a == "--help" || a == "-h") {
      std::cout << kValidateUsage;
      return 0;
    } else if (a == "--allow-lib") {
      if (i + 1 >= args.size()) {
        std::cerr << "kiln plugin validate: --allow-lib needs a library "
                     "name prefix\n";
        return 2;
      }
      extra_prefixes.push_back(args[++i]);
    } else if (a.rfind("--allow-lib=", 0) == 0) {
      extra_prefixes.push_back(a.substr(12));
    } else if (!a.empty() && a[0] == '-') {
      std::cerr << "kiln plugin validate: unknown option '" << a
                << "'; see kiln plugin validate --help\n";
      return 2;
    } else if (path.empty()) {
      path = a;
    } else {
      std::cerr << "kiln plugin validate: one plugin at a time; got '" << path
                << "' and '" << a << "'\n";
      return 2;
    }
  }
  if (path.empty()) {
    std::cerr << "kiln plugin validate: missing PLUGIN.so\n\n"
              << kValidateUsage;
    return 2;
  }

  std::vector<Check> checks;
  const ElfReport elf = ReadElf(path);
  checks.push_back(CheckElf(elf));
  if (elf.is_elf) {
    checks.push_back(CheckExports(elf));
    checks.push_back(CheckNoLibkiln(elf));
    checks.push_back(CheckDependencies(path, elf, extra_prefixes));
  } else {
    checks.push_back(NotCheckedBecauseNotElf("exports"));
    checks.push_back(NotCheckedBecauseNotElf("no_libkiln"));
    checks.push_back(NotCheckedBecauseNotElf("dependencies"));
  }

  nlohmann::ordered_json plugin_json;  // null when nothing could be read
  Check load{"load", false, ""};
  bool links_libkiln = false;
  for (const std::string& n : elf.needed) links_libkiln |= IsLibkiln(n);
  absl::StatusOr<HostOffer> offer = PluginLoader::MakeOffer(0);
  if (links_libkiln) {
    // Opening it would bring a second Kiln runtime into this process, whose
    // global registrations (e.g. protobuf descriptors) abort the process.
    load.detail =
        "not attempted: the plugin links libkiln, and loading it "
        "would put a second Kiln runtime into the host process "
        "(which can abort it); fix the no_libkiln check first";
  } else if (!offer.ok()) {
    load.detail = std::string(offer.status().message());
  } else {
    PluginLoadRecord record;
    absl::StatusOr<std::shared_ptr<LoadedPlugin>> loaded =
        PluginLoader::Load(path, *offer, &record);
    if (loaded.ok()) {
      load.passed = true;
      load.detail =
          "accepted by the host's plugin loader; negotiated "
          "extension API " +
          VersionString((*loaded)->negotiated_version());
      plugin_json = DescribePlugin(record, loaded->get(), *offer);
    } else {
      load.detail = std::string(loaded.status().message());
      if (record.abi_version != 0 || !record.name.empty()) {
        plugin_json = DescribePlugin(record, nullptr, *offer);
      }
    }
  }
  checks.push_back(load);

  bool all_passed = true;
  for (const Check& c : checks) all_passed = all_passed && c.passed;
  if (json) {
    nlohmann::ordered_json j;
    j["path"] = path;
    j["passed"] = all_passed;
    j["checks"] = nlohmann::ordered_json::array();
    for (const Check& c : checks) {
      j["checks"].push_back(
          {{"name", c.name}, {"passed", c.passed}, {"detail", c.detail}});
    }
    j["plugin"] = plugin_json;
    std::cout << j.dump(2) << "\n";
  } else {
    PrintText(path, checks, plugin_json);
  }
  return all_passed ? 0 : 1;
}

}  // namespace

int PluginCommand(std::vector<std::string> args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::cout << kPluginUsage;
    return args.empty() ? 2 : 0;
  }
  const std::string sub = args[0];
  args.erase(args.begin());
  if (sub == "validate") return ValidateCommand(std::move(args));
  std::cerr << "kiln plugin: unknown subcommand '" << sub << "'\n\n"
            << kPluginUsage;
  return 2;
}

}  // namespace kiln::cli
