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
// The ELF file is read by elf_file.h; no external tool is needed.
// Exit code: 0 when every check passes, 1 otherwise, 2 on a usage error.
#include <dlfcn.h>
#include <elf.h>

#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli_common.h"
#include "commands.h"
#include "elf_file.h"
#include "kiln/kiln_plugin.h"
#include "plugin/negotiation.h"
#include "plugin/plugin_loader.h"
#include "plugin_declarations.h"
#include "runtime/graph.h"

namespace kiln::cli {
namespace {

constexpr const char* kPluginUsage =
    "usage: kiln plugin <subcommand> [options]\n"
    "\n"
    "subcommands:\n"
    "  validate PLUGIN.so [--json]   check a plugin file before shipping it\n"
    "  inspect PLUGIN.so [--json]    what a plugin declares, and its\n"
    "                                negotiation with this host (no model)\n";

// Libraries a plugin may take undefined symbols from, by file-name prefix.
const char* const kAllowedLibraryPrefixes[] = {
    "libc.so.",     "libstdc++.so.", "libm.so.",       "libdl.so.",
    "libgcc_s.so.", "ld-linux",      "libpthread.so.", "librt.so.",
    "libOpenCL.so", "libasan.so.",   "libubsan.so.",   "liblsan.so.",
    "libtsan.so.",
};

constexpr size_t kMaxListedSymbols = 20;

struct ValidateOptions {
  std::string path;
  bool json = false;
  std::vector<std::string> allowed_library_prefixes;  // --allow-lib
  bool allow_insecure_plugins = false;
};

struct Check {
  std::string name;
  bool passed = false;
  std::string detail;
};

struct ValidationReport {
  std::string path;
  std::vector<Check> checks;
  std::optional<PluginDeclarations> plugin;  // nullopt: nothing could be read
  bool passed() const {
    for (const Check& c : checks) {
      if (!c.passed) return false;
    }
    return true;
  }
};

FlagParser ValidateFlags(ValidateOptions& o) {
  FlagParser flags(
      "kiln plugin validate",
      "Checks that PLUGIN.so is a well-formed Kiln plugin:\n"
      "  elf           an ELF shared object for this machine\n"
      "  exports       exports exactly the symbol KilnPluginEntry\n"
      "  no_libkiln    does not link libkiln\n"
      "  dependencies  undefined symbols come only from system libraries\n"
      "                (libc, libstdc++, libm, libdl, libgcc_s, ld-linux,\n"
      "                libpthread, librt, libOpenCL)\n"
      "  load          the host's plugin loader accepts it (descriptor,\n"
      "                kernels, delegate, version negotiation)\n"
      "and prints what the plugin declares.");
  flags.Positional("PLUGIN.so", &o.path, "the plugin to check")
      .Bool("--json", &o.json, "machine-readable report")
      .Strings("--allow-lib", "PREFIX", &o.allowed_library_prefixes,
               "also allow symbols from libraries whose file name\n"
               "starts with PREFIX (e.g. libacme_driver.so)")
      .Bool("--allow-insecure-plugins", &o.allow_insecure_plugins,
            "load it even if other users could replace it")
      .Epilog(
          "Exit code: 0 if every check passes, 1 if any fails, 2 on usage "
          "error.\n");
  return flags;
}

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

Check CheckElf(const absl::StatusOr<ElfFile>& elf) {
  return elf.ok() ? Check{"elf", true, elf->description}
                  : Check{"elf", false, std::string(elf.status().message())};
}

Check NotCheckedBecauseNotElf(const char* name) {
  return Check{name, false,
               "not checked: the file could not be read as an ELF shared "
               "object (see the elf check)"};
}

Check CheckExports(const ElfFile& elf) {
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

Check CheckNoLibkiln(const ElfFile& elf) {
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

Check CheckDependencies(const std::string& path, const ElfFile& elf,
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

// The load check: the host's real loader on the file, unless it links
// libkiln. Fills *declarations as far as the loader read the descriptor.
Check CheckLoad(const std::string& path, bool links_libkiln,
                bool allow_insecure,
                std::optional<PluginDeclarations>* declarations) {
  Check load{"load", false, ""};
  if (links_libkiln) {
    // Opening it would bring a second Kiln runtime into this process, whose
    // global registrations (e.g. protobuf descriptors) abort the process.
    load.detail =
        "not attempted: the plugin links libkiln, and loading it "
        "would put a second Kiln runtime into the host process "
        "(which can abort it); fix the no_libkiln check first";
    return load;
  }
  absl::StatusOr<HostOffer> offer = PluginLoader::MakeOffer(0);
  if (!offer.ok()) {
    load.detail = std::string(offer.status().message());
    return load;
  }
  PluginLoadRecord record;
  absl::StatusOr<std::shared_ptr<LoadedPlugin>> loaded =
      PluginLoader::Load(path, *offer, &record, {}, allow_insecure);
  if (loaded.ok()) {
    load.passed = true;
    load.detail =
        "accepted by the host's plugin loader; negotiated extension API " +
        VersionString((*loaded)->negotiated_version());
    record.plugin = *loaded;
    *declarations = CollectDeclarations(record, *offer);
  } else {
    load.detail = std::string(loaded.status().message());
    if (record.abi_version != 0 || !record.name.empty()) {
      *declarations = CollectDeclarations(record, *offer);
    }
  }
  return load;
}

ValidationReport CollectValidation(const ValidateOptions& o) {
  ValidationReport r;
  r.path = o.path;
  const absl::StatusOr<ElfFile> elf = ReadElfFile(o.path);
  r.checks.push_back(CheckElf(elf));
  bool links_libkiln = false;
  if (elf.ok()) {
    r.checks.push_back(CheckExports(*elf));
    r.checks.push_back(CheckNoLibkiln(*elf));
    r.checks.push_back(
        CheckDependencies(o.path, *elf, o.allowed_library_prefixes));
    for (const std::string& n : elf->needed) links_libkiln |= IsLibkiln(n);
  } else {
    for (const char* name : {"exports", "no_libkiln", "dependencies"}) {
      r.checks.push_back(NotCheckedBecauseNotElf(name));
    }
  }
  r.checks.push_back(
      CheckLoad(o.path, links_libkiln, o.allow_insecure_plugins, &r.plugin));
  return r;
}

// ---- Render: JSON --------------------------------------------------------

Json ValidationToJson(const ValidationReport& r) {
  Json j;
  j["path"] = r.path;
  j["passed"] = r.passed();
  j["checks"] = Json::array();
  for (const Check& c : r.checks) {
    j["checks"].push_back(
        {{"name", c.name}, {"passed", c.passed}, {"detail", c.detail}});
  }
  j["plugin"] = r.plugin ? DeclarationsToJson(*r.plugin) : Json(nullptr);
  return j;
}

// ---- Render: text --------------------------------------------------------

std::string ValidationToText(const ValidationReport& r) {
  std::string s = absl::StrFormat("kiln plugin validate: %s\n", r.path);
  size_t passed = 0;
  for (const Check& c : r.checks) {
    absl::StrAppendFormat(&s, "  [%s] %-13s %s\n", c.passed ? "PASS" : "FAIL",
                          c.name, c.detail);
    passed += c.passed ? 1 : 0;
  }
  if (r.plugin) s += DeclarationsToText(*r.plugin);
  absl::StrAppendFormat(&s, "Result: %s (%u of %u checks passed)\n",
                        r.passed() ? "PASS" : "FAIL", passed, r.checks.size());
  return s;
}

int ValidateCommand(std::vector<std::string> args) {
  ValidateOptions options;
  return CommandMain(
      ValidateFlags(options), args, [&]() -> absl::StatusOr<int> {
        const ValidationReport report = CollectValidation(options);
        std::cout << (options.json ? JsonText(ValidationToJson(report))
                                   : ValidationToText(report));
        return report.passed() ? kExitSuccess : kExitFailure;
      });
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
  if (sub == "inspect") return PluginInspectCommand(std::move(args));
  std::cerr << "kiln plugin: unknown subcommand '" << sub << "'\n\n"
            << kPluginUsage;
  return 2;
}

}  // namespace kiln::cli
