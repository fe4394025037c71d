#include "plugin_declarations.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "runtime/graph.h"

namespace kiln::cli {
namespace {

std::string KernelOpLabel(const KilnKernel& k) {
  if (k.builtin_code == KILN_OP_CUSTOM) {
    return std::string("CUSTOM '") +
           (k.custom_name != nullptr ? k.custom_name : "(null)") + "'";
  }
  return BuiltinOpName(k.builtin_code);
}

KernelDeclaration DeclareKernel(const KilnKernel& k) {
  KernelDeclaration kd{KernelOpLabel(k), k.builtin_code, std::nullopt,
                       k.min_version,    k.max_version,  {}};
  if (k.builtin_code == KILN_OP_CUSTOM) {
    kd.custom_name = k.custom_name != nullptr ? k.custom_name : "";
  }
  if (KILN_STRUCT_HAS_FIELD(KilnKernel, k.struct_size, flags) &&
      (k.flags & KILN_KERNEL_FLAG_STATE_PER_SHAPE_SIGNATURE) != 0) {
    kd.flags.push_back("state_per_shape_signature");
  }
  return kd;
}

DelegateFacts DescribeDelegate(const KilnDelegateInterface& del,
                               const DelegateDeclaration& declared) {
  DelegateFacts f;
  f.name = del.name != nullptr ? del.name : "";
  f.settings_type = declared.settings_type;
  if (declared.settings != nullptr) {
    f.settings_fields = declared.settings->FieldSummary();
  }
  f.ops_declared = declared.ops_declared;
  f.ops = declared.ops;
  if ((declared.flags & KILN_DELEGATE_FLAG_STATE_PER_SHAPE_SIGNATURE) != 0) {
    f.flags.push_back("state_per_shape_signature");
  }
  f.buffer_handles = declared.has_buffer_handles;
  return f;
}

Json TypesToJson(const std::vector<KilnTensorType>& types) {
  Json j = Json::array();
  for (KilnTensorType t : types) j.push_back(TypeName(t));
  return j;
}

Json DelegateToJson(const DelegateFacts& d) {
  Json j;
  j["name"] = d.name;
  j["settings_type"] = d.settings_type;
  j["settings_fields"] = StringOrNull(d.settings_fields);
  if (d.ops_declared) {
    j["supported_ops"] = Json::array();
    for (const DeclaredOp& op : d.ops) {
      Json o;
      o["op"] = op.OpName();
      o["builtin_code"] = op.builtin_code;
      if (op.builtin_code == KILN_OP_CUSTOM) o["custom_name"] = op.custom_name;
      o["min_version"] = op.min_version;
      o["max_version"] = op.max_version;
      o["tensor_types"] = TypesToJson(op.tensor_types);
      j["supported_ops"].push_back(std::move(o));
    }
  } else {
    j["supported_ops"] = "undeclared";
  }
  j["flags"] = d.flags;
  j["buffer_handles"] = d.buffer_handles;
  return j;
}

std::string NegotiationToText(const PluginDeclarations& p) {
  if (!p.accepted) {
    return absl::StrCat(
        "  negotiation             refused",
        p.refusal.empty() ? " (see the load check)" : ": " + p.refusal, "\n");
  }
  std::string s = absl::StrFormat(
      "  minimum host            %s\n"
      "  negotiation             accepted, extension API %s (this host "
      "serves %s to %s)\n",
      VersionString(p.min_host_abi_version),
      VersionString(p.negotiated_version),
      VersionString(p.host_min_abi_version),
      VersionString(p.host_max_abi_version));
  if (!p.bad_host_versions.empty()) {
    std::vector<std::string> bad;
    for (uint32_t v : p.bad_host_versions) bad.push_back(VersionString(v));
    absl::StrAppend(&s, "  known-bad hosts         ", absl::StrJoin(bad, ", "),
                    "\n");
  }
  return s;
}

std::string DelegateToText(const DelegateFacts& d) {
  std::string s = absl::StrFormat("  delegate                %s\n", d.name);
  absl::StrAppend(&s, "    settings              ",
                  d.settings_type.empty() ? "none" : d.settings_type);
  if (d.settings_fields) {
    absl::StrAppend(&s, " {", *d.settings_fields, "}");
  } else if (!d.settings_type.empty()) {
    absl::StrAppend(&s, " (no descriptor set: binary settings only)");
  }
  absl::StrAppend(&s, "\n    supported ops         ",
                  d.ops_declared ? absl::StrCat(d.ops.size()) : "undeclared",
                  "\n");
  for (const DeclaredOp& op : d.ops) {
    absl::StrAppend(&s, "      ", op.Describe(), "\n");
  }
  absl::StrAppend(&s, "    flags                 ",
                  d.flags.empty() ? "none" : absl::StrJoin(d.flags, ", "),
                  "\n    buffer handles        ",
                  d.buffer_handles ? "yes" : "no", "\n");
  return s;
}

std::string ContentsToText(const PluginDeclarations& p) {
  std::string s =
      absl::StrFormat("  kernels                 %u\n", p.kernels.size());
  for (const KernelDeclaration& k : p.kernels) {
    absl::StrAppendFormat(
        &s, "    %-28s op versions %d..%d%s\n", k.op, k.min_version,
        k.max_version,
        k.flags.empty()
            ? ""
            : absl::StrCat(" [", absl::StrJoin(k.flags, ", "), "]"));
  }
  s += p.delegate ? DelegateToText(*p.delegate)
                  : "  delegate                none\n";
  absl::StrAppend(
      &s, "  extensions              ",
      p.extensions.empty() ? "none" : absl::StrJoin(p.extensions, ", "), "\n");
  return s;
}

}  // namespace

PluginDeclarations CollectDeclarations(const PluginLoadRecord& record,
                                       const HostOffer& offer) {
  PluginDeclarations p;
  p.path = record.path;
  p.name = record.name;
  p.version = record.version;
  p.abi_version = record.abi_version;
  p.host_min_abi_version = offer.min_plugin_abi_version;
  p.host_max_abi_version = offer.max_abi_version;
  p.refusal = record.refusal;
  p.messages = record.messages;
  const LoadedPlugin* plugin = record.plugin.get();
  if (plugin == nullptr) return p;
  const KilnPluginDescriptor* d = plugin->descriptor();
  p.accepted = true;
  p.min_host_abi_version = d->min_host_abi_version;
  p.negotiated_version = plugin->negotiated_version();
  p.bad_host_versions.assign(d->bad_host_versions,
                             d->bad_host_versions + d->num_bad_host_versions);
  for (const KilnKernel* k : plugin->kernels()) {
    p.kernels.push_back(DeclareKernel(*k));
  }
  if (plugin->delegate() != nullptr) {
    p.delegate =
        DescribeDelegate(*plugin->delegate(), plugin->delegate_declaration());
  }
  for (const KilnExtensionBase* e = d->extensions; e != nullptr; e = e->next) {
    p.extensions.push_back(e->id);
  }
  return p;
}

Json DeclarationsToJson(const PluginDeclarations& p) {
  Json j;
  j["name"] = p.name;
  j["version"] = p.version;
  j["built_for_extension_api"] =
      p.abi_version == 0 ? "" : VersionString(p.abi_version);
  j["host_extension_api_range"] = {
      {"min", VersionString(p.host_min_abi_version)},
      {"max", VersionString(p.host_max_abi_version)}};
  j["messages"] = p.messages;
  if (!p.accepted) {
    j["negotiation"] = "refused";
    j["refusal"] = p.refusal;
    return j;
  }
  j["min_host_extension_api"] = VersionString(p.min_host_abi_version);
  j["negotiation"] = "accepted";
  j["negotiated_extension_api"] = VersionString(p.negotiated_version);
  j["bad_host_versions"] = Json::array();
  for (uint32_t v : p.bad_host_versions) {
    j["bad_host_versions"].push_back(VersionString(v));
  }
  j["kernels"] = Json::array();
  for (const KernelDeclaration& k : p.kernels) {
    Json kj;
    kj["op"] = k.op;
    kj["builtin_code"] = k.builtin_code;
    if (k.custom_name) kj["custom_name"] = *k.custom_name;
    kj["min_version"] = k.min_version;
    kj["max_version"] = k.max_version;
    kj["flags"] = k.flags;
    j["kernels"].push_back(std::move(kj));
  }
  j["delegate"] = p.delegate ? DelegateToJson(*p.delegate) : Json(nullptr);
  j["extensions"] = p.extensions;
  return j;
}

std::string DeclarationsToText(const PluginDeclarations& p) {
  auto or_unknown = [](const std::string& v) {
    return v.empty() ? std::string("(not read)") : v;
  };
  std::string s = absl::StrFormat(
      "Plugin\n"
      "  name                    %s\n"
      "  version                 %s\n"
      "  built for extension API %s\n",
      or_unknown(p.name), or_unknown(p.version),
      p.abi_version == 0 ? "" : VersionString(p.abi_version));
  s += NegotiationToText(p);
  if (p.accepted) s += ContentsToText(p);
  for (const std::string& m : p.messages) {
    absl::StrAppend(&s, "  logged                  ", m, "\n");
  }
  return s;
}

}  // namespace kiln::cli
