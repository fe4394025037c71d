#include "plugin/install_paths.h"

#include <dlfcn.h>
#include <link.h>

#include <filesystem>
#include <system_error>
#include <vector>

#include "absl/strings/str_cat.h"
#include "plugin/plugin_loader.h"

// Relative path from the install bindir to the install libdir, computed by
// CMake at configure time (host/src/plugin/CMakeLists.txt).
#ifndef KILN_BINDIR_TO_LIBDIR
#error "KILN_BINDIR_TO_LIBDIR must be defined by the build"
#endif

namespace kiln {
namespace {

namespace fs = std::filesystem;

constexpr const char* kBuildTreeBinToLib = "../lib";

struct Candidate {
  fs::path directory;
  std::string origin;
};

// The object (executable or shared library) this code was loaded from.
struct LoadedFrom {
  bool is_executable = false;
  fs::path file;  // canonical; empty when unknown
};

LoadedFrom ThisObject() {
  LoadedFrom out;
  Dl_info info;
  link_map* map = nullptr;
  if (dladdr1(reinterpret_cast<void*>(&LocateDefaultPluginDirectory), &info,
              reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) == 0 ||
      map == nullptr) {
    return out;
  }
  // The main program's link map has an empty name; dli_fname is then only
  // argv[0], so ask the kernel for the executable instead.
  out.is_executable = map->l_name == nullptr || map->l_name[0] == '\0';
  const fs::path raw =
      out.is_executable ? fs::path("/proc/self/exe") : fs::path(info.dli_fname);
  std::error_code ec;
  fs::path file = fs::canonical(raw, ec);
  if (!ec) out.file = file;
  return out;
}

std::vector<Candidate> Candidates(const LoadedFrom& self) {
  std::vector<Candidate> out;
  if (self.file.empty()) return out;
  const fs::path dir = self.file.parent_path();
  if (!self.is_executable) {
    out.push_back({dir / "kiln" / "plugins",
                   absl::StrCat("beside libkiln (", self.file.string(), ")")});
    return out;
  }
  const std::string relative = KILN_BINDIR_TO_LIBDIR;
  out.push_back(
      {(dir / relative / "kiln" / "plugins").lexically_normal(),
       absl::StrCat("relative to the executable (", self.file.string(),
                    "): <bindir>/", relative, "/kiln/plugins")});
  if (relative != kBuildTreeBinToLib) {
    out.push_back(
        {(dir / kBuildTreeBinToLib / "kiln" / "plugins").lexically_normal(),
         absl::StrCat("build-tree layout beside the executable (",
                      self.file.string(), "): <bindir>/", kBuildTreeBinToLib,
                      "/kiln/plugins")});
  }
  return out;
}

DefaultPluginDirectoryLookup Locate() {
  DefaultPluginDirectoryLookup lookup;
  const std::vector<Candidate> candidates = Candidates(ThisObject());
  if (candidates.empty()) {
    lookup.origin =
        "unknown: the host could not tell which file it was loaded from "
        "(dladdr failed); set KILN_PLUGIN_PATH or add plugin directories";
    return lookup;
  }
  for (const Candidate& c : candidates) {
    std::error_code ec;
    if (fs::is_directory(c.directory, ec)) {
      lookup.directory = c.directory.string();
      lookup.exists = true;
      lookup.origin = c.origin;
      return lookup;
    }
  }
  lookup.directory = candidates.front().directory.string();
  lookup.origin = absl::StrCat(candidates.front().origin,
                               "; this directory does not exist");
  return lookup;
}

}  // namespace

const DefaultPluginDirectoryLookup& LocateDefaultPluginDirectory() {
  static const DefaultPluginDirectoryLookup* const lookup =
      new DefaultPluginDirectoryLookup(Locate());
  return *lookup;
}

std::string DefaultPluginDirectory() {
  return LocateDefaultPluginDirectory().directory;
}

}  // namespace kiln
