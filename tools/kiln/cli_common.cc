#include "cli_common.h"

#include <fstream>
#include <iostream>
#include <iterator>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "model/model.h"
#include "runtime/host_log.h"

namespace kiln::cli {

namespace {

std::string QuoteText(const std::string& v) {
  std::string out = "\"";
  for (char c : v) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

absl::Status AddDelegate(absl::string_view spec,
                         std::vector<DelegateRequest>* delegates) {
  DelegateRequest request;
  const size_t colon = spec.find(':');
  request.name = std::string(spec.substr(0, colon));
  request.is_text = true;
  if (request.name.empty()) {
    return UsageError(
        "--delegate needs a delegate name, e.g. --delegate opencl");
  }
  if (colon != absl::string_view::npos) {
    KILN_ASSIGN_OR_RETURN(
        request.text_settings,
        DelegateOptionsToText(std::string(spec.substr(colon + 1))));
  }
  delegates->push_back(std::move(request));
  return absl::OkStatus();
}

absl::Status AddDelegateSettingsFile(absl::string_view path,
                                     std::vector<DelegateRequest>* delegates) {
  if (delegates->empty()) {
    return UsageError("--delegate-settings must follow a --delegate");
  }
  DelegateRequest& request = delegates->back();
  if (!request.settings_file_name.empty()) {
    return UsageError(
        absl::StrCat("--delegate-settings given twice for "
                     "delegate '",
                     request.name, "' ('", request.settings_file_name,
                     "' and '", path, "')"));
  }
  std::ifstream in{std::string(path), std::ios::binary};
  if (!in) {
    return UsageError(
        absl::StrCat("cannot read delegate settings file '", path, "'"));
  }
  request.settings_file.assign(std::istreambuf_iterator<char>(in),
                               std::istreambuf_iterator<char>());
  request.settings_file_name = std::string(path);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> DelegateOptionsToText(const std::string& spec) {
  std::string text;
  for (absl::string_view item : absl::StrSplit(spec, ',', absl::SkipEmpty())) {
    const size_t eq = item.find('=');
    if (eq == absl::string_view::npos || eq == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("delegate option '", item, "' is not key=value"));
    }
    const std::string key(absl::StripAsciiWhitespace(item.substr(0, eq)));
    const std::string value(absl::StripAsciiWhitespace(item.substr(eq + 1)));
    if (key == "min_partition_size") {
      int32_t n = 0;
      if (!absl::SimpleAtoi(value, &n) || n < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "min_partition_size must be a non-negative integer, got '", value,
            "'"));
      }
      absl::StrAppend(&text, "min_partition_size: ", n, "\n");
    } else {
      absl::StrAppend(&text, "options { key: ", QuoteText(key),
                      " value: ", QuoteText(value), " }\n");
    }
  }
  return text;
}

int CommandMain(const FlagParser& flags, const std::vector<std::string>& args,
                const std::function<absl::StatusOr<int>()>& body) {
  absl::StatusOr<FlagParser::Outcome> parsed = flags.Parse(args);
  if (parsed.ok() && *parsed == FlagParser::Outcome::kHelpRequested) {
    std::cout << flags.Help();
    return kExitSuccess;
  }
  const absl::StatusOr<int> result =
      parsed.ok() ? body() : absl::StatusOr<int>(parsed.status());
  if (result.ok()) return *result;
  std::cout.flush();
  std::cerr << flags.command() << ": " << result.status().message() << "\n";
  return IsUsageError(result.status()) ? kExitUsage : kExitFailure;
}

void AddPluginFlags(FlagParser& flags, PluginSearchConfig* config) {
  flags.Strings("--plugin", "PATH", &config->paths, "load this plugin")
      .Strings("--plugin-dir", "DIR", &config->directories,
               "load every *.so in DIR")
      .Bool("--no-default-plugins", &config->use_default_locations,
            "skip $KILN_PLUGIN_PATH and the installed\nplugin directory",
            /*set_to=*/false)
      .Bool("--allow-insecure-plugins", &config->allow_insecure_plugins,
            "load plugins that other users could replace\n(world-writable "
            "file or directory, owned by\nanother user)")
      .Custom(
          "--verbose", "",
          [](absl::string_view) {
            SetLogLevel(KILN_LOG_INFO);
            return absl::OkStatus();
          },
          "print plugins' information messages\n(like KILN_LOG_LEVEL=info)");
}

void AddDelegateFlags(FlagParser& flags,
                      std::vector<DelegateRequest>* delegates) {
  flags
      .Custom(
          "--delegate", "NAME[:key=value,...]",
          [delegates](absl::string_view spec) {
            return AddDelegate(spec, delegates);
          },
          "apply a delegate (e.g. opencl:device=cpu)", FlagParser::Repeat::kYes)
      .Custom(
          "--delegate-settings", "FILE",
          [delegates](absl::string_view path) {
            return AddDelegateSettingsFile(path, delegates);
          },
          "settings of the preceding --delegate: its\n"
          "settings message (kiln.DelegateSettings or\n"
          "the vendor's, see kiln plugin inspect), text\n"
          "(.txtpb) or binary (.binpb)",
          FlagParser::Repeat::kYes);
}

std::vector<PluginFacts> CollectPluginFacts(
    const std::vector<PluginLoadRecord>& records) {
  std::vector<PluginFacts> facts;
  for (const PluginLoadRecord& r : records) {
    PluginFacts f;
    f.path = r.path;
    f.name = r.name;
    f.version = r.version;
    f.abi_version = r.abi_version;
    f.loaded = r.plugin != nullptr;
    f.refusal = r.refusal;
    f.messages = r.messages;
    if (r.plugin) {
      f.negotiated_version = r.plugin->negotiated_version();
      f.num_kernels = r.plugin->kernels().size();
      if (const KilnDelegateInterface* d = r.plugin->delegate()) {
        f.delegate = d->name != nullptr ? d->name : "";
      }
    }
    facts.push_back(std::move(f));
  }
  return facts;
}

absl::StatusOr<std::unique_ptr<Interpreter>> OpenInterpreter(
    const std::string& model_path, const InterpreterOptions& options) {
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<const Model> model,
                        Model::FromFile(model_path));
  return Interpreter::Create(std::move(model), options);
}

const char* DtypeName(KilnTensorType type) {
  switch (type) {
    case KILN_TYPE_FLOAT32:
      return "float32";
    case KILN_TYPE_FLOAT16:
      return "float16";
    case KILN_TYPE_FLOAT64:
      return "float64";
    case KILN_TYPE_INT32:
      return "int32";
    case KILN_TYPE_INT64:
      return "int64";
    case KILN_TYPE_INT16:
      return "int16";
    case KILN_TYPE_INT8:
      return "int8";
    case KILN_TYPE_UINT8:
      return "uint8";
    case KILN_TYPE_UINT16:
      return "uint16";
    case KILN_TYPE_UINT32:
      return "uint32";
    case KILN_TYPE_UINT64:
      return "uint64";
    case KILN_TYPE_BOOL:
      return "bool";
    case KILN_TYPE_STRING:
      return "string";
    case KILN_TYPE_COMPLEX64:
      return "complex64";
    case KILN_TYPE_RESOURCE:
      return "resource";
    default:
      return "unknown";
  }
}

std::string CompactList(const std::vector<int32_t>& values) {
  return "[" + absl::StrJoin(values, ",") + "]";
}

Json StringOrNull(const std::optional<std::string>& value) {
  return value.has_value() ? Json(*value) : Json(nullptr);
}

}  // namespace kiln::cli
