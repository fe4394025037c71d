// `kiln plugin inspect PLUGIN.so [--json] [--max-extension-api X.Y]`: what a
// plugin declares — kernels (op, versions, flags), its delegate (declared
// ops, version ranges and types, or "undeclared"; settings message; flags),
// capability ids, versions — and how it negotiates with this host. Runs the
// plugin's entry point (and initialize) only: no model, no interpreter.
// Exit code: 0 when the host accepts the plugin, 1 when it refuses it, 2 on
// a usage error.
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "cli_common.h"
#include "commands.h"
#include "plugin_declarations.h"

namespace kiln::cli {
namespace {

struct InspectPluginOptions {
  std::string path;
  bool json = false;
  uint32_t max_abi_version = 0;  // 0: this host's newest
  bool allow_insecure_plugins = false;
};

// "1.1" or "1.1.0" as KILN_MAKE_VERSION.
absl::Status ParseExtensionApi(absl::string_view value, uint32_t* out) {
  std::vector<std::string> parts = absl::StrSplit(value, '.');
  uint32_t major = 0, minor = 0, patch = 0;
  if ((parts.size() != 2 && parts.size() != 3) ||
      !absl::SimpleAtoi(parts[0], &major) ||
      !absl::SimpleAtoi(parts[1], &minor) ||
      (parts.size() == 3 && !absl::SimpleAtoi(parts[2], &patch))) {
    return UsageError(
        absl::StrCat("--max-extension-api expects a version such as 1.1, got '",
                     value, "'"));
  }
  *out = KILN_MAKE_VERSION(major, minor, patch);
  return absl::OkStatus();
}

FlagParser InspectPluginFlags(InspectPluginOptions& o) {
  FlagParser flags(
      "kiln plugin inspect",
      "Prints what PLUGIN.so declares (kernels with op versions and flags;\n"
      "its delegate's supported ops, version ranges and tensor types, or\n"
      "'undeclared'; settings message; capability ids) and how it\n"
      "negotiates with this host. Runs only the plugin's entry point: no\n"
      "model is needed.");
  flags.Positional("PLUGIN.so", &o.path, "the plugin to inspect")
      .Bool("--json", &o.json, "machine-readable report")
      .Custom(
          "--max-extension-api", "X.Y",
          [&o](absl::string_view v) {
            return ParseExtensionApi(v, &o.max_abi_version);
          },
          "negotiate as a host serving at most this\nextension API version")
      .Bool("--allow-insecure-plugins", &o.allow_insecure_plugins,
            "load it even if other users could replace it")
      .Epilog(
          "Exit code: 0 if this host accepts the plugin, 1 if it refuses "
          "it,\n2 on usage error.\n");
  return flags;
}

absl::StatusOr<PluginDeclarations> CollectPlugin(
    const InspectPluginOptions& o) {
  KILN_ASSIGN_OR_RETURN(const HostOffer offer,
                        PluginLoader::MakeOffer(o.max_abi_version));
  PluginLoadRecord record;
  absl::StatusOr<std::shared_ptr<LoadedPlugin>> loaded =
      PluginLoader::Load(o.path, offer, &record, {}, o.allow_insecure_plugins);
  if (loaded.ok()) {
    record.plugin = *std::move(loaded);
  } else {
    record.refusal = std::string(loaded.status().message());
  }
  return CollectDeclarations(record, offer);
}

Json PluginToJson(const PluginDeclarations& p) {
  Json j;
  j["path"] = p.path;
  j["plugin"] = DeclarationsToJson(p);
  return j;
}

std::string PluginToText(const PluginDeclarations& p) {
  return absl::StrCat("kiln plugin inspect: ", p.path, "\n",
                      DeclarationsToText(p));
}

}  // namespace

int PluginInspectCommand(std::vector<std::string> args) {
  InspectPluginOptions options;
  return CommandMain(InspectPluginFlags(options), args,
                     [&]() -> absl::StatusOr<int> {
                       KILN_ASSIGN_OR_RETURN(const PluginDeclarations p,
                                             CollectPlugin(options));
                       std::cout << (options.json ? JsonText(PluginToJson(p))
                                                  : PluginToText(p));
                       return p.accepted ? kExitSuccess : kExitFailure;
                     });
}

}  // namespace kiln::cli
