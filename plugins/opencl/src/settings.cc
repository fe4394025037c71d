#include "settings.h"

#include <cstdlib>
#include <vector>

namespace kiln::opencl {
namespace {

// Protobuf wire types.
constexpr uint32_t kVarint = 0;
constexpr uint32_t kFixed64 = 1;
constexpr uint32_t kLengthDelimited = 2;
constexpr uint32_t kFixed32 = 5;

class WireReader {
 public:
  WireReader(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}

  bool done() const { return p_ == end_; }

  bool ReadVarint(uint64_t* value) {
    uint64_t result = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ == end_) return false;
      const uint8_t byte = *p_++;
      result |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) {
        *value = result;
        return true;
      }
    }
    return false;
  }

  bool ReadTag(uint32_t* field, uint32_t* wire_type) {
    uint64_t tag = 0;
    if (!ReadVarint(&tag) || (tag >> 3) == 0 || (tag >> 3) > 0x1fffffff) {
      return false;
    }
    *field = static_cast<uint32_t>(tag >> 3);
    *wire_type = static_cast<uint32_t>(tag & 7);
    return true;
  }

  bool ReadBytes(const uint8_t** data, size_t* size) {
    uint64_t n = 0;
    if (!ReadVarint(&n) || n > static_cast<uint64_t>(end_ - p_)) return false;
    *data = p_;
    *size = static_cast<size_t>(n);
    p_ += n;
    return true;
  }

  bool ReadString(std::string* s) {
    const uint8_t* data = nullptr;
    size_t size = 0;
    if (!ReadBytes(&data, &size)) return false;
    s->assign(reinterpret_cast<const char*>(data), size);
    return true;
  }

  bool Skip(uint32_t wire_type) {
    uint64_t ignored = 0;
    const uint8_t* data = nullptr;
    size_t size = 0;
    switch (wire_type) {
      case kVarint:
        return ReadVarint(&ignored);
      case kFixed64:
        return Advance(8);
      case kLengthDelimited:
        return ReadBytes(&data, &size);
      case kFixed32:
        return Advance(4);
      default:
        return false;  // groups (3, 4) are not used by proto3
    }
  }

 private:
  bool Advance(size_t n) {
    if (static_cast<size_t>(end_ - p_) < n) return false;
    p_ += n;
    return true;
  }
  const uint8_t* p_;
  const uint8_t* end_;
};

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

bool ParseMapEntry(const uint8_t* data, size_t size, std::string* key,
                   std::string* value) {
  WireReader in(data, size);
  while (!in.done()) {
    uint32_t field = 0, wire = 0;
    if (!in.ReadTag(&field, &wire)) return false;
    if (field == 1 && wire == kLengthDelimited) {
      if (!in.ReadString(key)) return false;
    } else if (field == 2 && wire == kLengthDelimited) {
      if (!in.ReadString(value)) return false;
    } else if (!in.Skip(wire)) {
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

bool ParseDelegateSettings(const uint8_t* data, size_t size,
                           DelegateOptions* options, std::string* error) {
  *options = DelegateOptions();
  if (size == 0) return true;
  if (data == nullptr) {
    *error =
        "delegate settings pointer is null but size is " + std::to_string(size);
    return false;
  }
  // Map entries are applied after the typed fields, whatever their order on
  // the wire, so that a key always overrides its typed field.
  std::vector<std::pair<std::string, std::string>> entries;
  WireReader in(data, size);
  while (!in.done()) {
    uint32_t field = 0, wire = 0;
    if (!in.ReadTag(&field, &wire)) {
      *error = Malformed("a field tag");
      return false;
    }
    uint64_t v = 0;
    const uint8_t* bytes = nullptr;
    size_t n = 0;
    bool ok = true;
    switch (field) {
      case 1:  // abi_version: informational
        ok = wire == kVarint && in.ReadVarint(&v);
        break;
      case 2: {  // options map entry
        std::string key, value;
        ok = wire == kLengthDelimited && in.ReadBytes(&bytes, &n) &&
             ParseMapEntry(bytes, n, &key, &value);
        if (ok) entries.emplace_back(std::move(key), std::move(value));
        break;
      }
      case 3: {  // min_partition_size (int32; negatives are 10-byte varints)
        ok = wire == kVarint && in.ReadVarint(&v);
        const int32_t m = static_cast<int32_t>(static_cast<int64_t>(v));
        if (ok && m < 0) {
          *error = "min_partition_size " + std::to_string(m) +
                   " is negative; use 0 (default) or a positive count";
          return false;
        }
        if (ok) options->min_partition_size = m == 0 ? 1 : m;
        break;
      }
      case 16:  // opencl (a repeated submessage merges, as protobuf does)
        ok = wire == kLengthDelimited && in.ReadBytes(&bytes, &n);
        if (ok && !ParseOpenClSettings(bytes, n, options, error)) return false;
        break;
      default:
        ok = in.Skip(wire);
        break;
    }
    if (!ok) {
      *error = Malformed("field " + std::to_string(field));
      return false;
    }
  }
  std::string unknown;
  for (const auto& [key, value] : entries) {
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
