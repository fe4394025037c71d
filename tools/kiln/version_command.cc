// `kiln version [--json]`: the four version numbers, the extension API range
// this host accepts, and every plugin found with its negotiation result.
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli_common.h"
#include "commands.h"
#include "interpreter/interpreter.h"
#include "kiln/kiln_c_api.h"
#include "plugin/install_paths.h"
#include "plugin/negotiation.h"
#include "plugin/plugin_loader.h"

namespace kiln::cli {
namespace {

struct VersionOptions {
  PluginSearchConfig plugins;
  bool json = false;
};

// What `kiln version` reports.
struct VersionReport {
  uint32_t runtime_version = 0;
  uint32_t c_api_version = 0;
  uint32_t ext_api_version = 0;
  uint32_t min_ext_api_version = 0;
  uint32_t model_schema_version = 0;
  std::vector<std::string> plugin_search_path;  // --plugin-dir, then default
  std::string default_plugin_directory;
  // How the default plugin directory was found (install_paths.h), whether
  // it exists and whether it was searched.
  std::string default_plugin_origin;
  bool default_plugin_directory_exists = false;
  bool default_plugin_directory_searched = true;
  std::string kiln_plugin_path;  // $KILN_PLUGIN_PATH, searched before it
  std::vector<PluginFacts> plugins;
};

FlagParser VersionFlags(VersionOptions& o) {
  FlagParser flags("kiln version",
                   "Prints the runtime, C API, extension API and model schema\n"
                   "versions, and every plugin found with its negotiation\n"
                   "result.");
  flags.Bool("--json", &o.json, "machine-readable output");
  AddPluginFlags(flags, &o.plugins);
  return flags;
}

absl::StatusOr<VersionReport> CollectVersion(const VersionOptions& o) {
  KilnVersionInfo info;
  info.struct_size = KILN_VERSION_INFO_STRUCT_SIZE;
  if (KilnError* e = KilnGetVersionInfo(&info)) {
    const absl::Status status = absl::InternalError(KilnErrorMessage(e));
    KilnErrorDestroy(e);
    return status;
  }
  VersionReport r;
  r.runtime_version = info.runtime_version;
  r.c_api_version = info.c_api_version;
  r.ext_api_version = info.ext_api_version;
  r.min_ext_api_version = info.min_ext_api_version;
  r.model_schema_version = info.model_schema_version;
  const DefaultPluginDirectoryLookup& lookup = LocateDefaultPluginDirectory();
  r.default_plugin_directory = lookup.directory;
  r.default_plugin_origin = lookup.origin;
  r.default_plugin_directory_exists = lookup.exists;
  r.default_plugin_directory_searched = o.plugins.use_default_locations;
  if (const char* env = secure_getenv("KILN_PLUGIN_PATH")) {
    r.kiln_plugin_path = env;
  }
  r.plugin_search_path = o.plugins.directories;
  if (o.plugins.use_default_locations) {
    r.plugin_search_path.push_back(r.default_plugin_directory);
  }
  r.plugins = CollectPluginFacts(PluginLoader::LoadAll(o.plugins));
  return r;
}

// The default delegate's plugin (InterpreterOptions::use_default_delegates):
// the loaded plugin that provides it, or null.
const PluginFacts* DefaultDelegatePlugin(const VersionReport& r) {
  for (const PluginFacts& p : r.plugins) {
    if (p.loaded && p.delegate == std::string(kDefaultDelegate)) return &p;
  }
  return nullptr;
}

Json VersionToJson(const VersionReport& r) {
  Json j;
  j["runtime_version"] = VersionString(r.runtime_version);
  j["c_api_version"] = VersionString(r.c_api_version);
  j["extension_api_version"] = VersionString(r.ext_api_version);
  j["model_schema_version"] = r.model_schema_version;
  j["accepted_extension_api_range"] = {
      {"min", VersionString(r.min_ext_api_version)},
      {"max", VersionString(r.ext_api_version)}};
  j["plugin_search_path"] = r.plugin_search_path;
  j["default_plugin_dir"] = {{"path", r.default_plugin_directory},
                             {"exists", r.default_plugin_directory_exists},
                             {"found", r.default_plugin_origin},
                             {"searched", r.default_plugin_directory_searched}};
  const PluginFacts* default_delegate = DefaultDelegatePlugin(r);
  j["default_delegate"] = default_delegate == nullptr
                              ? Json()
                              : Json{{"name", kDefaultDelegate},
                                     {"plugin", default_delegate->path}};
  j["plugins"] = Json::array();
  for (const PluginFacts& p : r.plugins) {
    Json e;
    e["path"] = p.path;
    e["name"] = p.name;
    e["version"] = p.version;
    e["built_for_extension_api"] =
        p.abi_version == 0 ? "" : VersionString(p.abi_version);
    e["status"] = p.loaded ? "loaded" : "refused";
    e["messages"] = p.messages;
    if (p.loaded) {
      e["negotiated_extension_api"] = VersionString(p.negotiated_version);
      e["kernels"] = p.num_kernels;
      e["delegate"] = StringOrNull(p.delegate);
    } else {
      e["reason"] = p.refusal;
    }
    j["plugins"].push_back(std::move(e));
  }
  return j;
}

std::string VersionToText(const VersionReport& r) {
  std::string s = absl::StrFormat(
      "Kiln runtime         %s\n"
      "C API                %s\n"
      "Extension API        %s (accepts plugins built for %s to %s)\n"
      "Model schema         %u\n"
      "Default plugin dir   %s%s\n"
      "  found              %s\n",
      VersionString(r.runtime_version), VersionString(r.c_api_version),
      VersionString(r.ext_api_version), VersionString(r.min_ext_api_version),
      VersionString(r.ext_api_version), r.model_schema_version,
      r.default_plugin_directory,
      r.default_plugin_directory_searched ? "" : " (not searched)",
      r.default_plugin_origin);
  if (r.default_plugin_directory_searched && !r.kiln_plugin_path.empty()) {
    absl::StrAppend(&s, "  searched first     $KILN_PLUGIN_PATH=",
                    r.kiln_plugin_path, "\n");
  }
  const PluginFacts* default_delegate = DefaultDelegatePlugin(r);
  absl::StrAppendFormat(
      &s, "Default delegate     %s\n",
      default_delegate == nullptr
          ? absl::StrCat("none (no loaded plugin provides '", kDefaultDelegate,
                         "'; models run on kernel plugins)")
          : absl::StrCat(kDefaultDelegate, " (", default_delegate->path,
                         "; --delegate none turns it off)"));
  absl::StrAppendFormat(&s, "Plugins (%u found)\n", r.plugins.size());
  for (const PluginFacts& p : r.plugins) {
    if (p.loaded) {
      absl::StrAppendFormat(
          &s,
          "  loaded   %s %s  built for ext API %s, negotiated %s\n"
          "           %s\n",
          p.name, p.version, VersionString(p.abi_version),
          VersionString(p.negotiated_version), p.path);
    } else {
      absl::StrAppendFormat(&s, "  refused  %s\n           %s\n", p.path,
                            p.refusal);
      continue;
    }
    for (const std::string& m : p.messages) {
      absl::StrAppend(&s, "           logged ", m, "\n");
    }
  }
  return s;
}

}  // namespace

int VersionCommand(std::vector<std::string> args) {
  return ReportCommand(args, VersionFlags, CollectVersion, VersionToJson,
                       VersionToText);
}

}  // namespace kiln::cli
