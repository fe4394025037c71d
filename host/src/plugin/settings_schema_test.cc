// Settings messages: a vendor's from its FileDescriptorSet, text and binary
// parsing, and the choice between them for a settings file.
#include "plugin/settings_schema.h"

#include <string>

#include "gmock/gmock.h"
#include "google/protobuf/descriptor.pb.h"
#include "gtest/gtest.h"

namespace kiln {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
namespace pb = google::protobuf;

// vendor.Settings { int32 level = 1; repeated string ops = 2; }, in a set of
// one file (or, with `missing_import`, importing a file the set lacks).
std::string VendorSet(bool missing_import = false) {
  pb::FileDescriptorSet set;
  pb::FileDescriptorProto* f = set.add_file();
  f->set_name("vendor.proto");
  f->set_package("vendor");
  f->set_syntax("proto3");
  if (missing_import) f->add_dependency("absent.proto");
  pb::DescriptorProto* m = f->add_message_type();
  m->set_name("Settings");
  pb::FieldDescriptorProto* level = m->add_field();
  level->set_name("level");
  level->set_number(1);
  level->set_type(pb::FieldDescriptorProto::TYPE_INT32);
  level->set_label(pb::FieldDescriptorProto::LABEL_OPTIONAL);
  pb::FieldDescriptorProto* ops = m->add_field();
  ops->set_name("ops");
  ops->set_number(2);
  ops->set_type(pb::FieldDescriptorProto::TYPE_STRING);
  ops->set_label(pb::FieldDescriptorProto::LABEL_REPEATED);
  return set.SerializeAsString();
}

absl::StatusOr<std::shared_ptr<const SettingsSchema>> Vendor(
    const std::string& type = "vendor.Settings",
    const std::string& set = VendorSet()) {
  return SettingsSchema::FromDescriptorSet(
      type, reinterpret_cast<const uint8_t*>(set.data()), set.size());
}

// level: 3, ops: "MUL" in the wire format.
const std::string kBinary("\x08\x03\x12\x03MUL", 7);

TEST(SettingsSchemaTest, VendorMessageFromItsDescriptorSet) {
  auto schema = Vendor();
  ASSERT_TRUE(schema.ok()) << schema.status();
  EXPECT_EQ((*schema)->type(), "vendor.Settings");
  EXPECT_EQ((*schema)->FieldSummary(), "level (int32), ops (repeated string)");
  EXPECT_EQ(SettingsSchema::DelegateSettings()->type(), kDelegateSettingsType);
}

TEST(SettingsSchemaTest, BadDescriptorSetsSayWhy) {
  EXPECT_THAT(Vendor("vendor.Missing").status().message(),
              HasSubstr("does not define settings_type 'vendor.Missing'"));
  EXPECT_THAT(Vendor("vendor.Settings", "\xff\xff").status().message(),
              HasSubstr("(2 bytes) is not a serialized "
                        "google.protobuf.FileDescriptorSet"));
  EXPECT_THAT(Vendor("vendor.Settings", VendorSet(true)).status().message(),
              AllOf(HasSubstr("file 'vendor.proto' does not build"),
                    HasSubstr("absent.proto"), HasSubstr("--include_imports")));
}

TEST(SettingsSchemaTest, TextAndBinary) {
  auto schema = *Vendor();
  EXPECT_EQ(*schema->ParseText("level: 3 ops: 'MUL'"), kBinary);
  EXPECT_THAT(schema->ParseText("level: 3\nlevl: 4").status().message(),
              AllOf(HasSubstr("not valid vendor.Settings text format"),
                    HasSubstr("line 2"), HasSubstr("levl")));
  EXPECT_EQ(*schema->ParseBinary(kBinary), kBinary);
  EXPECT_THAT(schema->ParseBinary("\x08").status().message(),
              HasSubstr("not a serialized vendor.Settings"));
  // Field 9 is no field of vendor.Settings.
  EXPECT_THAT(schema->ParseBinary("\x48\x01").status().message(),
              HasSubstr("with fields that message does not have"));
}

// Found by the delegate_settings fuzz target: an options map entry with an
// unknown field (a 5-byte tag) was handed to delegates as given, and the SDK
// reader a delegate uses refuses it. Protobuf drops a map entry's unknown
// fields when parsing, so the host hands on the message as re-serialized;
// unknown fields elsewhere are refused at any depth.
TEST(SettingsSchemaTest, NestedUnknownFieldsNeverReachADelegate) {
  auto schema = SettingsSchema::DelegateSettings();
  const std::string nested_unknown(
      "\x08\x80\x04\x12\x0c\xd0\x03\x08\xed\x86\x9b\x92\x75\x00\x00\x08\x01",
      17);
  // abi_version: 512, options: {"": ""} once the entry's unknown field
  // (field number past 2^29) is dropped.
  const std::string canonical("\x08\x80\x04\x12\x04\x0a\x00\x12\x00", 9);
  absl::StatusOr<std::string> handed_on = schema->ParseBinary(nested_unknown);
  ASSERT_TRUE(handed_on.ok()) << handed_on.status();
  EXPECT_EQ(*handed_on, canonical);
  // In OpenClSettings (field 16 of kiln.DelegateSettings), field 15 unknown.
  const std::string opencl_unknown("\x82\x01\x02\x78\x01", 5);
  EXPECT_THAT(schema->ParseBinary(opencl_unknown).status().message(),
              HasSubstr("(in opencl)"));
}

TEST(SettingsSchemaTest, FilesByNameThenByContents) {
  auto schema = *Vendor();
  EXPECT_EQ(*schema->ParseFile("s.txtpb", "level: 3 ops: 'MUL'"), kBinary);
  EXPECT_EQ(*schema->ParseFile("s.binpb", kBinary), kBinary);
  EXPECT_EQ(*schema->ParseFile("settings", "level: 3 ops: 'MUL'"), kBinary);
  EXPECT_EQ(*schema->ParseFile("settings", kBinary), kBinary);
  EXPECT_THAT(schema->ParseFile("s.txtpb", kBinary).status().message(),
              AllOf(HasSubstr("settings file 's.txtpb' (text, by its "
                              "extension)"),
                    HasSubstr("not valid vendor.Settings text format")));
  EXPECT_THAT(schema->ParseFile("s.pb", "level: 3").status().message(),
              HasSubstr("settings file 's.pb' (binary, by its extension): "
                        "not a serialized vendor.Settings"));
  EXPECT_THAT(schema->ParseFile("settings", "levl: 3").status().message(),
              AllOf(HasSubstr("is neither vendor.Settings text nor binary"),
                    HasSubstr("as text,"), HasSubstr("as binary,"),
                    HasSubstr(".txtpb or .binpb")));
}

}  // namespace
}  // namespace kiln
