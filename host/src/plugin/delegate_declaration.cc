#include "plugin/delegate_declaration.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "runtime/graph.h"

namespace kiln {
namespace {

constexpr uint32_t kDelegateSize_1_2 =
    KILN_STRUCT_SIZE(KilnDelegateInterface, free_buffer_handle);

absl::Status Malformed(const std::string& field, const std::string& what) {
  return absl::InvalidArgumentError(
      absl::StrCat("delegate.", field, ": ", what));
}

bool IsKnownType(KilnTensorType type) {
  return type >= KILN_TYPE_FLOAT32 && type <= KILN_TYPE_BFLOAT16;
}

absl::StatusOr<DeclaredOp> ReadRow(const KilnDelegateOpSupport* row,
                                   uint32_t index) {
  const std::string field = absl::StrCat("supported_ops[", index, "]");
  if (row == nullptr) return Malformed(field, "is NULL");
  if (row->struct_size < KILN_DELEGATE_OP_SUPPORT_STRUCT_SIZE) {
    return Malformed(field,
                     absl::StrCat("struct_size is ", row->struct_size,
                                  "; set it to "
                                  "KILN_DELEGATE_OP_SUPPORT_STRUCT_SIZE"));
  }
  DeclaredOp op;
  op.builtin_code = row->builtin_code;
  op.min_version = row->min_version;
  op.max_version = row->max_version;
  if (row->builtin_code < 0) {
    return Malformed(field, absl::StrCat("builtin_code ", row->builtin_code,
                                         " is negative"));
  }
  if (row->builtin_code == KILN_OP_CUSTOM) {
    if (row->custom_name == nullptr || row->custom_name[0] == '\0') {
      return Malformed(field, "KILN_OP_CUSTOM needs a custom_name");
    }
    op.custom_name = row->custom_name;
  } else if (row->custom_name != nullptr) {
    return Malformed(field, "custom_name is set for a builtin op");
  }
  if (row->min_version < 1 || row->min_version > row->max_version) {
    return Malformed(field, absl::StrCat("op-version range ", row->min_version,
                                         "..", row->max_version,
                                         " is invalid; versions start at 1"));
  }
  if (row->num_tensor_types > 0 && row->tensor_types == nullptr) {
    return Malformed(field, "tensor_types is NULL but num_tensor_types is " +
                                std::to_string(row->num_tensor_types));
  }
  for (uint32_t t = 0; t < row->num_tensor_types; ++t) {
    if (!IsKnownType(row->tensor_types[t])) {
      return Malformed(
          field, absl::StrCat("tensor_types[", t, "] ", row->tensor_types[t],
                              " is not a KILN_TYPE_* value"));
    }
    op.tensor_types.push_back(row->tensor_types[t]);
  }
  return op;
}

absl::Status ReadOps(const KilnDelegateInterface& del,
                     DelegateDeclaration* out) {
  if (del.num_supported_ops == 0) return absl::OkStatus();
  if (del.supported_ops == nullptr) {
    return Malformed("supported_ops",
                     "is NULL but num_supported_ops is " +
                         std::to_string(del.num_supported_ops));
  }
  out->ops_declared = true;
  for (uint32_t i = 0; i < del.num_supported_ops; ++i) {
    KILN_ASSIGN_OR_RETURN(DeclaredOp op, ReadRow(del.supported_ops[i], i));
    out->ops.push_back(std::move(op));
  }
  return absl::OkStatus();
}

absl::Status ReadSettings(const KilnDelegateInterface& del, bool has_1_2,
                          DelegateDeclaration* out) {
  out->settings_type = del.settings_type != nullptr ? del.settings_type : "";
  const bool has_set = has_1_2 && del.settings_descriptor_set_size > 0;
  if (has_1_2 && del.settings_descriptor_set_size > 0 &&
      del.settings_descriptor_set == nullptr) {
    return Malformed("settings_descriptor_set",
                     "is NULL but settings_descriptor_set_size is " +
                         std::to_string(del.settings_descriptor_set_size));
  }
  if (has_set && out->settings_type.empty()) {
    return Malformed("settings_descriptor_set",
                     "is set but settings_type is NULL; name the message");
  }
  if (out->settings_type == kDelegateSettingsType) {
    out->settings = SettingsSchema::DelegateSettings();
  } else if (has_set) {
    absl::StatusOr<std::shared_ptr<const SettingsSchema>> schema =
        SettingsSchema::FromDescriptorSet(
            out->settings_type, del.settings_descriptor_set,
            static_cast<size_t>(del.settings_descriptor_set_size));
    if (!schema.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("delegate.", schema.status().message()));
    }
    out->settings = *std::move(schema);
  }
  return absl::OkStatus();
}

}  // namespace

std::string DeclaredOp::OpName() const {
  return builtin_code == KILN_OP_CUSTOM
             ? absl::StrCat("CUSTOM '", custom_name, "'")
             : std::string(BuiltinOpName(builtin_code));
}

std::string DeclaredOp::Describe() const {
  std::vector<std::string> types;
  for (KilnTensorType t : tensor_types) types.push_back(TypeName(t));
  return absl::StrCat(
      OpName(), " versions ", min_version, "..", max_version, ", ",
      types.empty() ? "any type" : "types " + absl::StrJoin(types, ", "));
}

bool DeclaredOp::IsFor(int32_t code, const std::string& custom) const {
  return builtin_code == code &&
         (code != KILN_OP_CUSTOM || custom_name == custom);
}

absl::StatusOr<DelegateDeclaration> ReadDelegateDeclaration(
    const KilnDelegateInterface& del) {
  DelegateDeclaration out;
  const bool has_1_2 = del.struct_size >= kDelegateSize_1_2;
  if (has_1_2) {
    KILN_RETURN_IF_ERROR(ReadOps(del, &out));
    out.flags = del.flags;
    const int handles = (del.copy_from_buffer_handle != nullptr) +
                        (del.copy_to_buffer_handle != nullptr) +
                        (del.free_buffer_handle != nullptr);
    if (handles != 0 && handles != 3) {
      return Malformed("copy_from_buffer_handle",
                       "copy_from_buffer_handle, copy_to_buffer_handle and "
                       "free_buffer_handle must be set all three or none");
    }
    out.has_buffer_handles = handles == 3;
  }
  KILN_RETURN_IF_ERROR(ReadSettings(del, has_1_2, &out));
  return out;
}

std::string UncoveredClaim(const DelegateDeclaration& declaration,
                           const ClaimedNode& node) {
  if (!declaration.ops_declared) return "";
  std::vector<const DeclaredOp*> rows;
  for (const DeclaredOp& op : declaration.ops) {
    if (op.IsFor(node.builtin_code, node.custom_name)) rows.push_back(&op);
  }
  DeclaredOp named;
  named.builtin_code = node.builtin_code;
  named.custom_name = node.custom_name;
  if (rows.empty()) return absl::StrCat("no row declares ", named.OpName());
  std::string why;
  for (const DeclaredOp* op : rows) {
    if (node.version < op->min_version || node.version > op->max_version) {
      absl::StrAppend(&why, why.empty() ? "" : "; ", "version ", node.version,
                      " is outside ", op->Describe());
      continue;
    }
    const auto& allowed = op->tensor_types;
    const auto bad = std::find_if(
        node.tensor_types.begin(), node.tensor_types.end(),
        [&](KilnTensorType t) {
          return !allowed.empty() &&
                 std::find(allowed.begin(), allowed.end(), t) == allowed.end();
        });
    if (bad == node.tensor_types.end()) return "";
    absl::StrAppend(&why, why.empty() ? "" : "; ", "a tensor of type ",
                    TypeName(*bad), " is outside ", op->Describe());
  }
  return why;
}

}  // namespace kiln
