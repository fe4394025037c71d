#include "settings.h"

#include <cstdlib>
#include <vector>

namespace kiln::opencl {
namespace {

using sdk::WireReader;
constexpr uint32_t kVarint = WireReader::kVarint;
constexpr uint32_t kLengthDelimited = WireReader::kLengthDelimited;

std::string Malformed(const std::string& where) {
  return "malformed kiln.DelegateSettings: cannot decode " + where +
         "; pass settings serialized from delegate_settings.proto";
}

bool ParseOpenClSettings(const uint8_t* data, size_t size,
                         DelegateOptions* options, std::string* error) {
  WireReader in(data, size);
  while (!in.done()) {
    uint32_t field = 0, wire = 0;
    if (!in.ReadTag(&field, &wire)) {
      *error = Malformed("a field tag in 'opencl'");
      return false;
    }
    uint64_t v = 0;
    bool ok = true;
    switch (field) {
      case 1:  // device_type
        ok = wire == kVarint && in.ReadVarint(&v);
        if (ok) {
          switch (static_cast<int64_t>(v)) {
            case 0:
            case 3:
              options->device = DeviceKind::kAny;
              break;
            case 1:
              options->device = DeviceKind::kGpu;
              break;
            case 2:
              options->device = DeviceKind::kCpu;
              break;
            default:
              *error = "opencl.device_type " + std::to_string(v) +
                       " is not a known OpenClSettings.DeviceType; use "
                       "DEVICE_TYPE_GPU, DEVICE_TYPE_CPU or DEVICE_TYPE_ANY";
              return false;
          }
        }
        break;
      case 2:
        ok = wire == kLengthDelimited &&
             in.ReadString(&options->platform_filter);
        break;
      case 3:
        ok = wire == kLengthDelimited &&
             in.ReadString(&options->device_name_filter);
        break;
      case 4:
        ok = wire == kVarint && in.ReadVarint(&v);
        if (ok) options->allow_fp16_storage = v != 0;
        break;
      case 5:
        ok = wire == kLengthDelimited && in.ReadString(&options->cache_dir);
        break;
      default:
        ok = in.Skip(wire);
        break;
    }
    if (!ok) {
      *error = Malformed("opencl field " + std::to_string(field));
      return false;
    }
  }
  return true;
}

bool ParseBool(const std::string& text, bool* value) {
  if (text == "true" || text == "1") {
    *value = true;
    return true;
  }
  if (text == "false" || text == "0") {
    *value = false;
    return true;
  }
  return false;
}

bool ApplyOption(const std::string& key, const std::string& value,
                 DelegateOptions* options, std::string* error) {
  if (key == "device") {
    if (value == "gpu") {
      options->device = DeviceKind::kGpu;
    } else if (value == "cpu") {
      options->device = DeviceKind::kCpu;
    } else if (value == "any") {
      options->device = DeviceKind::kAny;
    } else {
      *error = "option device='" + value + "' is invalid; use gpu, cpu or any";
      return false;
    }
  } else if (key == "platform") {
    options->platform_filter = value;
  } else if (key == "device_name") {
    options->device_name_filter = value;
  } else if (key == "fp16") {
    if (!ParseBool(value, &options->allow_fp16_storage)) {
      *error = "option fp16='" + value + "' is invalid; use true or false";
      return false;
    }
  } else if (key == "cache_dir") {
    options->cache_dir = value;
  } else if (key == "min_partition_size") {
    char* end = nullptr;
    const long n = std::strtol(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || n < 1 || n > 1000000) {
      *error = "option min_partition_size='" + value +
               "' is invalid; use a whole number >= 1";
      return false;
    }
    options->min_partition_size = static_cast<int32_t>(n);
  } else {
    return false;  // unknown: the caller collects and names it
  }
  return true;
}

}  // namespace

const char* DeviceKindName(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::kGpu:
      return "gpu";
    case DeviceKind::kCpu:
      return "cpu";
    case DeviceKind::kAny:
      break;
  }
  return "any";
}

bool ApplyDelegateSettings(const sdk::DelegateSettings& settings,
                           DelegateOptions* options, std::string* error) {
  *options = DelegateOptions();
  if (settings.min_partition_size < 0) {
    *error = "min_partition_size " +
             std::to_string(settings.min_partition_size) +
             " is negative; use 0 (default) or a positive count";
    return false;
  }
  if (settings.min_partition_size > 0) {
    options->min_partition_size = settings.min_partition_size;
  }
  if (!settings.opencl.empty() &&
      !ParseOpenClSettings(
          reinterpret_cast<const uint8_t*>(settings.opencl.data()),
          settings.opencl.size(), options, error)) {
    return false;
  }
  // Map entries are applied after the typed fields, so that a key always
  // overrides its typed field.
  std::string unknown;
  for (const auto& [key, value] : settings.options) {
    std::string bad_value;
    if (!ApplyOption(key, value, options, &bad_value)) {
      if (!bad_value.empty()) {
        *error = bad_value;
        return false;
      }
      unknown += (unknown.empty() ? "'" : ", '") + key + "'";
    }
  }
  if (!unknown.empty()) {
    *error = "unknown OpenCL delegate option(s) " + unknown +
             "; known keys: device, platform, device_name, fp16, cache_dir, "
             "min_partition_size";
    return false;
  }
  return true;
}

std::string ResolveCacheDir(const std::string& configured) {
  if (configured == "none") return "";
  if (!configured.empty()) return configured;
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && xdg[0] == '/') {
    return std::string(xdg) + "/kiln/opencl";
  }
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] != '\0') {
    return std::string(home) + "/.cache/kiln/opencl";
  }
  return "";
}

}  // namespace kiln::opencl
