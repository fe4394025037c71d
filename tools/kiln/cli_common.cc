#include "cli_common.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>

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

// Settings messages are small; a larger file is not one.
constexpr uint64_t kMaxSettingsFileBytes = uint64_t{64} << 20;

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
  absl::StatusOr<std::string> bytes = ReadRegularFile(
      std::string(path), kMaxSettingsFileBytes, "delegate settings file");
  if (!bytes.ok()) return UsageError(bytes.status().message());
  request.settings_file = *std::move(bytes);
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

std::string JsonText(const Json& j) {
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

void AddLimitFlags(FlagParser& flags, InterpreterOptions* options) {
  flags
      .Custom(
          "--max-arena-bytes", "N",
          [options](absl::string_view value) -> absl::Status {
            uint64_t bytes = 0;
            if (!absl::SimpleAtoi(value, &bytes) || bytes == 0) {
              return UsageError(absl::StrCat(
                  "--max-arena-bytes expects a positive number of bytes, "
                  "got '",
                  value, "'"));
            }
            options->max_arena_bytes = bytes;
            return absl::OkStatus();
          },
          "refuse models whose tensors need more than N\nbytes (default "
          "4294967296, 4 GiB)")
      .Int("--max-while-iterations", "N", &options->max_while_iterations,
           "fail when a WHILE loop runs more than N\niterations (default 0: "
           "no limit)")
      .Custom(
          "--timeout", "SECONDS",
          [options](absl::string_view value) -> absl::Status {
            double seconds = 0;
            if (!absl::SimpleAtod(value, &seconds) || !(seconds > 0) ||
                seconds > 1e9) {
              return UsageError(absl::StrCat(
                  "--timeout expects a positive number of seconds, got '",
                  value, "'"));
            }
            options->invoke_timeout =
                std::chrono::nanoseconds(static_cast<int64_t>(seconds * 1e9));
            return absl::OkStatus();
          },
          "stop an Invoke that runs longer than SECONDS\n(default: no "
          "limit)");
}

absl::StatusOr<std::string> ReadRegularFile(const std::string& path,
                                            uint64_t max_bytes,
                                            absl::string_view what) {
  // O_NONBLOCK: a FIFO must not block the open.
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    return absl::NotFoundError(absl::StrCat("cannot read ", what, " '", path,
                                            "': ", std::strerror(errno)));
  }
  struct stat st {};
  std::string error;
  if (fstat(fd, &st) != 0) {
    error = std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    error = "not a regular file (a directory, FIFO or device)";
  } else if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    error = absl::StrCat(st.st_size, " bytes, more than the ", max_bytes,
                         " bytes such a file may have");
  }
  std::string bytes;
  if (error.empty()) {
    bytes.resize(static_cast<size_t>(st.st_size));
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = read(fd, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        error = n < 0 ? std::strerror(errno) : "the file shrank while read";
        break;
      }
      done += static_cast<size_t>(n);
    }
  }
  close(fd);
  if (!error.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot read ", what, " '", path, "': ", error));
  }
  return bytes;
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
          "apply a delegate (e.g. opencl:device=cpu); without\n"
          "one the default delegate xnnpack runs what it\n"
          "supports when its plugin is present; 'none':\n"
          "no default delegate (CPU plugin kernels only)",
          FlagParser::Repeat::kYes)
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

void AddThreadsFlag(FlagParser& flags, int32_t* num_threads) {
  flags.Int("--threads", "N", num_threads,
            "threads the delegates and kernels may use (default 1;\n"
            "the default xnnpack delegate runs on N threads, the CPU\n"
            "plugin's heavy kernels on the interpreter's pool of N)",
            int32_t{1});
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
    case KILN_TYPE_INT4:
      return "int4";  // two a byte
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
