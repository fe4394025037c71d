// What a plugin declares, as the host's loader read it: the facts behind
// `kiln plugin inspect` and the descriptor part of `kiln plugin validate`
// (collect -> render, cli_common.h).
#ifndef KILN_TOOLS_KILN_PLUGIN_DECLARATIONS_H_
#define KILN_TOOLS_KILN_PLUGIN_DECLARATIONS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli_common.h"
#include "plugin/delegate_declaration.h"
#include "plugin/negotiation.h"
#include "plugin/plugin_loader.h"

namespace kiln::cli {

// One kernel the plugin declares.
struct KernelDeclaration {
  std::string op;  // "ADD" or "CUSTOM 'Name'"
  int32_t builtin_code = 0;
  std::optional<std::string> custom_name;  // for CUSTOM kernels
  int32_t min_version = 0, max_version = 0;
  std::vector<std::string> flags;  // "state_per_shape_signature"
};

// The plugin's delegate.
struct DelegateFacts {
  std::string name;
  std::string settings_type;  // "" when the delegate takes none
  // The message's top-level fields when the host can read it (Kiln's own
  // kiln.DelegateSettings, or a vendor message with a descriptor set).
  std::optional<std::string> settings_fields;
  bool ops_declared = false;  // false: "undeclared"
  std::vector<DeclaredOp> ops;
  std::vector<std::string> flags;
  bool buffer_handles = false;
};

// What the plugin declares, as far as the loader got.
struct PluginDeclarations {
  std::string path;
  std::string name, version;
  uint32_t abi_version = 0;  // built for; 0 when not read
  uint32_t host_min_abi_version = 0, host_max_abi_version = 0;  // served
  bool accepted = false;
  std::string refusal;                // when refused
  std::vector<std::string> messages;  // what it logged while loading
  // The rest only when the loader accepted the plugin.
  uint32_t min_host_abi_version = 0;
  uint32_t negotiated_version = 0;
  std::vector<uint32_t> bad_host_versions;
  std::vector<KernelDeclaration> kernels;
  std::optional<DelegateFacts> delegate;
  std::vector<std::string> extensions;
};

// The declarations of `record` (its plugin, when accepted) under `offer`.
PluginDeclarations CollectDeclarations(const PluginLoadRecord& record,
                                       const HostOffer& offer);

Json DeclarationsToJson(const PluginDeclarations& p);
// "Plugin\n  name ...": the block both commands print.
std::string DeclarationsToText(const PluginDeclarations& p);

}  // namespace kiln::cli

#endif  // KILN_TOOLS_KILN_PLUGIN_DECLARATIONS_H_
