// The Protocol Buffers message a delegate reads its settings as, and the
// parsing of users' settings files into it.
//
// A delegate names the message in KilnDelegateInterface.settings_type. Kiln
// knows kiln.DelegateSettings itself (abi/proto); a vendor message comes
// with the delegate's settings_descriptor_set (a serialized
// google.protobuf.FileDescriptorSet, extension API 1.2), from which a
// DescriptorPool and DynamicMessage read and write it — so Kiln parses a
// vendor's text settings without the vendor's generated code.
//
// Thread-safety: a SettingsSchema is immutable after creation.
#ifndef KILN_HOST_PLUGIN_SETTINGS_SCHEMA_H_
#define KILN_HOST_PLUGIN_SETTINGS_SCHEMA_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace google::protobuf {
class Descriptor;
class DescriptorPool;
class DynamicMessageFactory;
class Message;
}  // namespace google::protobuf

namespace kiln {

inline constexpr char kDelegateSettingsType[] = "kiln.DelegateSettings";

class SettingsSchema {
 public:
  // kiln.DelegateSettings, from Kiln's own generated code.
  static std::shared_ptr<const SettingsSchema> DelegateSettings();
  // Message `type` of the serialized FileDescriptorSet `set` (`size` bytes).
  // Fails, saying why, when the bytes are not a FileDescriptorSet, its files
  // do not build (a missing import, a duplicate name) or `type` is not in it.
  static absl::StatusOr<std::shared_ptr<const SettingsSchema>>
  FromDescriptorSet(const std::string& type, const uint8_t* set, size_t size);
  ~SettingsSchema();
  SettingsSchema(const SettingsSchema&) = delete;
  SettingsSchema& operator=(const SettingsSchema&) = delete;

  // Fully qualified message name.
  const std::string& type() const;
  // "name (type), ..." of the top-level fields, for messages and reports.
  std::string FieldSummary() const;

  // The binary message for Protocol Buffers text `text`; errors give line
  // and column.
  absl::StatusOr<std::string> ParseText(absl::string_view text) const;
  // `bytes` checked to be a serialized message of this type (unknown fields
  // refused at any depth: they mean the bytes are of another message or
  // corrupt), returned as protobuf serializes the parsed message
  // (deterministically), so a delegate receives only fields its schema has.
  absl::StatusOr<std::string> ParseBinary(absl::string_view bytes) const;
  // A settings file: text or binary, decided by the name's extension
  // (.txtpb .textproto .pbtxt .prototxt .txt: text; .binpb .pb .bin:
  // binary) or else by the contents (text when they read as text and parse,
  // else binary). Errors name the file, the message type, the form tried
  // and why it failed.
  absl::StatusOr<std::string> ParseFile(const std::string& file_name,
                                        const std::string& contents) const;

 private:
  SettingsSchema();
  std::unique_ptr<google::protobuf::DescriptorPool> pool_;  // vendor types
  std::unique_ptr<google::protobuf::DynamicMessageFactory> factory_;
  const google::protobuf::Message* prototype_ = nullptr;
};

}  // namespace kiln

#endif  // KILN_HOST_PLUGIN_SETTINGS_SCHEMA_H_
