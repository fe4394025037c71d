// What a delegate declares about itself beyond its callbacks (extension API
// 1.2 fields of KilnDelegateInterface): the ops it may claim, its flags, its
// buffer-handle callbacks and its settings message. Read and checked once,
// when the plugin loads (PluginLoader); the interpreter checks every claim
// against it, and `kiln plugin inspect` shows it.
#ifndef KILN_HOST_PLUGIN_DELEGATE_DECLARATION_H_
#define KILN_HOST_PLUGIN_DELEGATE_DECLARATION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kiln/kiln_extension.h"
#include "plugin/settings_schema.h"

namespace kiln {

// One KilnDelegateOpSupport row.
struct DeclaredOp {
  int32_t builtin_code = 0;
  std::string custom_name;  // KILN_OP_CUSTOM only
  int32_t min_version = 1, max_version = 1;
  std::vector<KilnTensorType> tensor_types;  // empty: any type

  // "ADD" or "CUSTOM 'Name'".
  std::string OpName() const;
  // "ADD versions 1..2, types FLOAT32, INT8" ("any type" when open).
  std::string Describe() const;
  // Whether this row is about the op (code, custom name) at all.
  bool IsFor(int32_t code, const std::string& custom) const;
};

struct DelegateDeclaration {
  // False for a delegate that declares no ops (struct_size before 1.2, or
  // supported_ops NULL/0): the host then accepts any claim ("undeclared").
  bool ops_declared = false;
  std::vector<DeclaredOp> ops;
  uint32_t flags = 0;  // KILN_DELEGATE_FLAG_*
  bool has_buffer_handles = false;
  // KilnDelegateInterface.settings_type; "" when NULL.
  std::string settings_type;
  // The settings message as the host can read it: kiln.DelegateSettings, or
  // the vendor message of settings_descriptor_set; null when neither
  // (settings_type NULL, or a vendor type without a descriptor set).
  std::shared_ptr<const SettingsSchema> settings;
};

// Reads the declaration of `del`, touching only fields its struct_size
// covers. Fails, naming the field ("delegate.supported_ops[2]: ...") and
// what to do, for a malformed row, a descriptor set without settings_type
// or that does not define it, or buffer-handle callbacks not all three set.
absl::StatusOr<DelegateDeclaration> ReadDelegateDeclaration(
    const KilnDelegateInterface& del);

// What a claimed node is, for the check: its op, version and the element
// types of its present inputs and outputs.
struct ClaimedNode {
  int32_t builtin_code = 0;
  std::string custom_name;
  int32_t version = 1;
  std::vector<KilnTensorType> tensor_types;
};

// Why `declaration` does not cover `node` ("no row declares MUL", "MUL
// version 3 is outside the declared versions 1..2", "input type INT8 is not
// among ... declared for ADD versions 1..2"); "" when a row covers it or
// nothing is declared.
std::string UncoveredClaim(const DelegateDeclaration& declaration,
                           const ClaimedNode& node);

}  // namespace kiln

#endif  // KILN_HOST_PLUGIN_DELEGATE_DECLARATION_H_
