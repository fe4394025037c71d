// Reading kiln.DelegateSettings (abi/proto/kiln/delegate_settings.proto)
// inside a delegate plugin, header-only.
//
// KilnDelegateInterface.create receives the settings serialized. A plugin may
// link libprotobuf and parse them with generated code; but Debian's static
// libprotobuf is not position-independent, so a plugin that must not depend
// on a shared libprotobuf (see `kiln plugin validate`) can use this reader.
// It decodes the proto3 wire format: fields it does not know are skipped, as
// protobuf does, so settings written for a newer extension API still parse.
#ifndef KILN_SDK_DELEGATE_SETTINGS_H_
#define KILN_SDK_DELEGATE_SETTINGS_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>

namespace kiln::sdk {

// Sequential reader of Protocol Buffers wire-format fields. Every method
// returns false on malformed or truncated input and then leaves the reader in
// an unspecified position.
class WireReader {
 public:
  static constexpr uint32_t kVarint = 0;
  static constexpr uint32_t kFixed64 = 1;
  static constexpr uint32_t kLengthDelimited = 2;
  static constexpr uint32_t kFixed32 = 5;

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

  // A fixed32 field (float, fixed32, sfixed32), little-endian; a float's
  // bits go through std::memcpy.
  bool ReadFixed32(uint32_t* value) {
    if (end_ - p_ < 4) return false;
    *value = 0;
    for (int i = 3; i >= 0; --i) *value = (*value << 8) | p_[i];
    p_ += 4;
    return true;
  }
  bool ReadFloat(float* value) {
    uint32_t bits = 0;
    if (!ReadFixed32(&bits)) return false;
    std::memcpy(value, &bits, sizeof(bits));
    return true;
  }

  // A length-delimited field's bytes, pointing into the input.
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

  // Skips one field's value of `wire_type`.
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

// The fields of kiln.DelegateSettings every delegate shares. Typed
// sub-messages of in-tree delegates are kept serialized for their plugin.
struct DelegateSettings {
  uint32_t abi_version = 0;
  // map<string, string> options, in wire order (a later duplicate key wins).
  std::map<std::string, std::string> options;
  int32_t min_partition_size = 0;
  // The delegate's own settings message, serialized (field 4, extension API
  // 1.2): the message its settings_type names (DelegateManifest::
  // VendorSettings), parsed by the host from the user's text or binary
  // settings. Empty: defaults. Decode it with WireReader.
  std::string vendor_settings;
  // Serialized kiln.OpenClSettings (field 16); empty when absent.
  std::string opencl;
};

// Decodes serialized kiln.DelegateSettings (`size` 0: defaults). On failure
// returns false with a message in *error; *settings is then unspecified.
inline bool ParseDelegateSettings(const uint8_t* data, size_t size,
                                  DelegateSettings* settings,
                                  std::string* error) {
  *settings = DelegateSettings();
  if (size == 0) return true;
  if (data == nullptr) {
    *error =
        "delegate settings pointer is null but size is " + std::to_string(size);
    return false;
  }
  auto malformed = [&](const std::string& where) {
    *error = "malformed kiln.DelegateSettings: cannot decode " + where +
             "; pass settings serialized from delegate_settings.proto";
    return false;
  };
  WireReader in(data, size);
  while (!in.done()) {
    uint32_t field = 0, wire = 0;
    if (!in.ReadTag(&field, &wire)) return malformed("a field tag");
    uint64_t v = 0;
    const uint8_t* bytes = nullptr;
    size_t n = 0;
    bool ok = true;
    switch (field) {
      case 1:  // abi_version
        ok = wire == WireReader::kVarint && in.ReadVarint(&v);
        settings->abi_version = static_cast<uint32_t>(v);
        break;
      case 2: {  // options (map entry: 1 key, 2 value)
        ok = wire == WireReader::kLengthDelimited && in.ReadBytes(&bytes, &n);
        std::string key, value;
        WireReader entry(bytes, ok ? n : 0);
        while (ok && !entry.done()) {
          uint32_t f = 0, w = 0;
          ok = entry.ReadTag(&f, &w);
          if (!ok) break;
          if (f == 1 && w == WireReader::kLengthDelimited) {
            ok = entry.ReadString(&key);
          } else if (f == 2 && w == WireReader::kLengthDelimited) {
            ok = entry.ReadString(&value);
          } else {
            ok = entry.Skip(w);
          }
        }
        if (ok) settings->options[key] = value;
        break;
      }
      case 3:  // min_partition_size
        ok = wire == WireReader::kVarint && in.ReadVarint(&v);
        settings->min_partition_size = static_cast<int32_t>(v);
        break;
      case 4:  // vendor_settings (bytes: the last one wins)
        ok = wire == WireReader::kLengthDelimited &&
             in.ReadString(&settings->vendor_settings);
        break;
      case 16:  // opencl
        ok = wire == WireReader::kLengthDelimited && in.ReadBytes(&bytes, &n);
        // A repeated sub-message merges, as protobuf does: keep all bytes.
        if (ok)
          settings->opencl.append(reinterpret_cast<const char*>(bytes), n);
        break;
      default:
        ok = in.Skip(wire);
        break;
    }
    if (!ok) return malformed("field " + std::to_string(field));
  }
  return true;
}

}  // namespace kiln::sdk

#endif  // KILN_SDK_DELEGATE_SETTINGS_H_
