// `kiln version [--json]`: the four version numbers, the extension API range
// this host accepts, and every plugin found with its negotiation result.
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "cli_common.h"
#include "commands.h"
#include "kiln/kiln_c_api.h"
#include "nlohmann/json.hpp"
#include "plugin/install_paths.h"
#include "plugin/negotiation.h"
#include "plugin/plugin_loader.h"

namespace kiln::cli {
namespace {

// `kiln version --json`.
void PrintJson(const KilnVersionInfo& info, const PluginSearchConfig& config,
               const std::vector<PluginLoadRecord>& records) {
  nlohmann::ordered_json j;
  j["runtime_version"] = VersionString(info.runtime_version);
  j["c_api_version"] = VersionString(info.c_api_version);
  j["extension_api_version"] = VersionString(info.ext_api_version);
  j["model_schema_version"] = info.model_schema_version;
  j["accepted_extension_api_range"] = {
      {"min", VersionString(info.min_ext_api_version)},
      {"max", VersionString(info.ext_api_version)}};
  j["plugin_search_path"] = nlohmann::ordered_json::array();
  for (const std::string& d : config.directories) {
    j["plugin_search_path"].push_back(d);
  }
  if (config.use_default_locations) {
    j["plugin_search_path"].push_back(DefaultPluginDirectory());
  }
  const DefaultPluginDirectoryLookup& dir = LocateDefaultPluginDirectory();
  j["default_plugin_dir"] = {{"path", dir.directory},
                             {"exists", dir.exists},
                             {"found", dir.origin},
                             {"used", config.use_default_locations}};
  j["plugins"] = nlohmann::ordered_json::array();
  for (const PluginLoadRecord& r : records) {
    nlohmann::ordered_json p;
    p["path"] = r.path;
    p["name"] = r.name;
    p["version"] = r.version;
    p["built_for_extension_api"] =
        r.abi_version == 0 ? "" : VersionString(r.abi_version);
    p["status"] = r.plugin ? "loaded" : "refused";
    if (r.plugin) {
      p["negotiated_extension_api"] =
          VersionString(r.plugin->negotiated_version());
      p["kernels"] = r.plugin->kernels().size();
      // (A ternary would give a null const char*, which json cannot take.)
      if (r.plugin->delegate() != nullptr) {
        p["delegate"] = r.plugin->delegate()->name;
      } else {
        p["delegate"] = nullptr;
      }
    } else {
      p["reason"] = r.refusal;
    }
    j["plugins"].push_back(p);
  }
  std::cout << j.dump(2) << "\n";
}

}  // namespace

int VersionCommand(std::vector<std::string> args) {
  PluginSearchConfig config;
  std::string error;
  if (!ParsePluginFlags(args, &config, &error)) {
    std::cerr << "kiln version: " << error << "\n";
    return 2;
  }
  bool json = false;
  for (const std::string& a : args) {
    if (a == "--json") {
      json = true;
    } else if (a == "--help" || a == "-h") {
      std::cout << "usage: kiln version [--json] [plugin flags]\n"
                << kPluginFlagsHelp;
      return 0;
    } else {
      std::cerr << "kiln version: unknown argument '" << a
                << "'; see kiln version --help\n";
      return 2;
    }
  }
  KilnVersionInfo info;
  info.struct_size = KILN_VERSION_INFO_STRUCT_SIZE;
  if (KilnError* e = KilnGetVersionInfo(&info)) {
    std::cerr << "kiln version: " << KilnErrorMessage(e) << "\n";
    KilnErrorDestroy(e);
    return 1;
  }
  const std::vector<PluginLoadRecord> records = PluginLoader::LoadAll(config);

  if (json) {
    PrintJson(info, config, records);
    return 0;
  }

  std::printf("Kiln runtime         %s\n",
              VersionString(info.runtime_version).c_str());
  std::printf("C API                %s\n",
              VersionString(info.c_api_version).c_str());
  std::printf("Extension API        %s (accepts plugins built for %s to %s)\n",
              VersionString(info.ext_api_version).c_str(),
              VersionString(info.min_ext_api_version).c_str(),
              VersionString(info.ext_api_version).c_str());
  std::printf("Model schema         %u\n", info.model_schema_version);
  const DefaultPluginDirectoryLookup& dir = LocateDefaultPluginDirectory();
  std::printf("Default plugin dir   %s%s\n", dir.directory.c_str(),
              config.use_default_locations ? "" : " (not searched)");
  std::printf("  found              %s\n", dir.origin.c_str());
  const char* env = std::getenv("KILN_PLUGIN_PATH");
  if (config.use_default_locations && env != nullptr && env[0] != '\0') {
    std::printf("  searched first     $KILN_PLUGIN_PATH=%s\n", env);
  }
  std::printf("Plugins (%zu found)\n", records.size());
  for (const PluginLoadRecord& r : records) {
    if (r.plugin) {
      std::printf(
          "  loaded   %s %s  built for ext API %s, negotiated %s\n"
          "           %s\n",
          r.name.c_str(), r.version.c_str(),
          VersionString(r.abi_version).c_str(),
          VersionString(r.plugin->negotiated_version()).c_str(),
          r.path.c_str());
    } else {
      std::printf("  refused  %s\n           %s\n", r.path.c_str(),
                  r.refusal.c_str());
    }
  }
  return 0;
}

}  // namespace kiln::cli
