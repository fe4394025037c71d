#include "plugin/settings_schema.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/descriptor.pb.h"
#include "google/protobuf/dynamic_message.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/text_format.h"
#include "kiln/delegate_settings.pb.h"

namespace kiln {
namespace {

namespace pb = google::protobuf;

class CollectingErrors : public pb::io::ErrorCollector {
 public:
  void AddError(int line, pb::io::ColumnNumber column,
                const std::string& message) override {
    errors.push_back(absl::StrCat("line ", line + 1, ", column ", column + 1,
                                  ": ", message));
  }
  void AddWarning(int, pb::io::ColumnNumber, const std::string&) override {}
  std::vector<std::string> errors;
};

// Records why a FileDescriptorProto does not build.
class PoolErrors : public pb::DescriptorPool::ErrorCollector {
 public:
  void AddError(const std::string& filename, const std::string& element_name,
                const pb::Message*, ErrorLocation,
                const std::string& message) override {
    errors.push_back(absl::StrCat(filename, ": ", element_name, ": ", message));
  }
  std::vector<std::string> errors;
};

enum class Form { kText, kBinary, kUnknown };

Form FormByName(const std::string& file_name) {
  const std::string lower = absl::AsciiStrToLower(file_name);
  for (const char* ext :
       {".txtpb", ".textproto", ".pbtxt", ".prototxt", ".txt"}) {
    if (absl::EndsWith(lower, ext)) return Form::kText;
  }
  for (const char* ext : {".binpb", ".pb", ".bin"}) {
    if (absl::EndsWith(lower, ext)) return Form::kBinary;
  }
  return Form::kUnknown;
}

// Text format is printable: no NUL or control bytes but whitespace.
bool LooksLikeText(const std::string& contents) {
  for (unsigned char c : contents) {
    if (c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f' &&
        c != '\v') {
      return false;
    }
  }
  return true;
}

// The path ("options.extra[2]") of the first message within `message`,
// itself included, that holds fields its type does not declare; "" if none.
// Nested messages count: a delegate's reader refuses unknown fields at any
// depth, so the host must too.
std::string FirstUnknownFieldPath(const pb::Message& message,
                                  const std::string& path) {
  const pb::Reflection* reflection = message.GetReflection();
  if (!reflection->GetUnknownFields(message).empty()) {
    return path.empty() ? message.GetDescriptor()->full_name() : path;
  }
  std::vector<const pb::FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  for (const pb::FieldDescriptor* field : fields) {
    if (field->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE) continue;
    const std::string name =
        path.empty() ? field->name() : absl::StrCat(path, ".", field->name());
    if (!field->is_repeated()) {
      std::string found =
          FirstUnknownFieldPath(reflection->GetMessage(message, field), name);
      if (!found.empty()) return found;
      continue;
    }
    const int count = reflection->FieldSize(message, field);
    for (int i = 0; i < count; ++i) {
      std::string found = FirstUnknownFieldPath(
          reflection->GetRepeatedMessage(message, field, i),
          absl::StrCat(name, "[", i, "]"));
      if (!found.empty()) return found;
    }
  }
  return "";
}

// "int32", "repeated string", "map<string, string>", "kiln.OpenClSettings".
std::string FieldTypeName(const pb::FieldDescriptor& f) {
  if (f.is_map()) {
    const pb::Descriptor* entry = f.message_type();
    return absl::StrCat("map<", FieldTypeName(*entry->field(0)), ", ",
                        FieldTypeName(*entry->field(1)), ">");
  }
  return absl::StrCat(f.is_repeated() ? "repeated " : "",
                      f.message_type() != nullptr
                          ? f.message_type()->full_name()
                          : std::string(f.type_name()));
}

}  // namespace

SettingsSchema::SettingsSchema() = default;
SettingsSchema::~SettingsSchema() = default;

std::shared_ptr<const SettingsSchema> SettingsSchema::DelegateSettings() {
  static const auto* schema = [] {
    auto* s = new std::shared_ptr<SettingsSchema>(new SettingsSchema());
    (*s)->prototype_ = &kiln::DelegateSettings::default_instance();
    return s;
  }();
  return *schema;
}

absl::StatusOr<std::shared_ptr<const SettingsSchema>>
SettingsSchema::FromDescriptorSet(const std::string& type, const uint8_t* set,
                                  size_t size) {
  pb::FileDescriptorSet files;
  if (set == nullptr || size == 0 ||
      !files.ParseFromArray(set, static_cast<int>(size))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "settings_descriptor_set (", size,
        " bytes) is not a serialized google.protobuf.FileDescriptorSet; "
        "write it with protoc --descriptor_set_out --include_imports"));
  }
  std::shared_ptr<SettingsSchema> schema(new SettingsSchema());
  schema->pool_ = std::make_unique<pb::DescriptorPool>();
  for (const pb::FileDescriptorProto& file : files.file()) {
    PoolErrors errors;
    if (schema->pool_->BuildFileCollectingErrors(file, &errors) == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("settings_descriptor_set: file '", file.name(),
                       "' does not build (", absl::StrJoin(errors.errors, "; "),
                       "); generate the set with --include_imports"));
    }
  }
  const pb::Descriptor* descriptor = schema->pool_->FindMessageTypeByName(type);
  if (descriptor == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("settings_descriptor_set does not define settings_type '",
                     type, "'; build it from the .proto that declares it"));
  }
  schema->factory_ =
      std::make_unique<pb::DynamicMessageFactory>(schema->pool_.get());
  schema->prototype_ = schema->factory_->GetPrototype(descriptor);
  return std::shared_ptr<const SettingsSchema>(std::move(schema));
}

const std::string& SettingsSchema::type() const {
  return prototype_->GetDescriptor()->full_name();
}

std::string SettingsSchema::FieldSummary() const {
  const pb::Descriptor* d = prototype_->GetDescriptor();
  std::vector<std::string> fields;
  for (int i = 0; i < d->field_count(); ++i) {
    fields.push_back(absl::StrCat(d->field(i)->name(), " (",
                                  FieldTypeName(*d->field(i)), ")"));
  }
  return absl::StrJoin(fields, ", ");
}

absl::StatusOr<std::string> SettingsSchema::ParseText(
    absl::string_view text) const {
  std::unique_ptr<pb::Message> message(prototype_->New());
  pb::TextFormat::Parser parser;
  CollectingErrors errors;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(std::string(text), message.get())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "not valid ", type(), " text format: ",
        errors.errors.empty() ? "parse error"
                              : absl::StrJoin(errors.errors, "; ")));
  }
  return message->SerializeAsString();
}

absl::StatusOr<std::string> SettingsSchema::ParseBinary(
    absl::string_view bytes) const {
  std::unique_ptr<pb::Message> message(prototype_->New());
  if (!message->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a serialized ", type(), " (", bytes.size(),
                     " bytes that do not decode as its wire format)"));
  }
  const std::string unknown_at = FirstUnknownFieldPath(*message, "");
  if (!unknown_at.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "not a serialized ", type(), ": ", bytes.size(),
        " bytes with fields that message does not have (in ", unknown_at, ")"));
  }
  // The message as protobuf writes it, not the given bytes: a map entry's
  // unknown fields, which parsing drops unseen, must not reach a delegate.
  std::string canonical;
  {
    pb::io::StringOutputStream stream(&canonical);
    pb::io::CodedOutputStream out(&stream);
    out.SetSerializationDeterministic(true);
    message->SerializeToCodedStream(&out);
  }
  return canonical;
}

absl::StatusOr<std::string> SettingsSchema::ParseFile(
    const std::string& file_name, const std::string& contents) const {
  const auto failed = [&](const absl::Status& why, const char* form_note) {
    return absl::InvalidArgumentError(absl::StrCat(
        "settings file '", file_name, "'", form_note, ": ", why.message()));
  };
  switch (FormByName(file_name)) {
    case Form::kText: {
      absl::StatusOr<std::string> parsed = ParseText(contents);
      if (!parsed.ok()) {
        return failed(parsed.status(), " (text, by its extension)");
      }
      return parsed;
    }
    case Form::kBinary: {
      absl::StatusOr<std::string> parsed = ParseBinary(contents);
      if (!parsed.ok()) {
        return failed(parsed.status(), " (binary, by its extension)");
      }
      return parsed;
    }
    case Form::kUnknown:
      break;
  }
  if (!LooksLikeText(contents)) {
    absl::StatusOr<std::string> parsed = ParseBinary(contents);
    if (!parsed.ok()) {
      return failed(parsed.status(), " (binary: it is not text)");
    }
    return parsed;
  }
  absl::StatusOr<std::string> text = ParseText(contents);
  if (text.ok()) return text;
  absl::StatusOr<std::string> binary = ParseBinary(contents);
  if (binary.ok()) return binary;
  return absl::InvalidArgumentError(
      absl::StrCat("settings file '", file_name, "' is neither ", type(),
                   " text nor binary: as text, ", text.status().message(),
                   "; as binary, ", binary.status().message(),
                   ". Name it .txtpb or .binpb to say which it is"));
}

}  // namespace kiln
