// kiln::sdk::ParseDelegateSettings against messages serialized by the real
// protobuf library.
#include "kiln/sdk/delegate_settings.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kiln/delegate_settings.pb.h"

namespace kiln::sdk {
namespace {

using ::testing::HasSubstr;

DelegateSettings Parse(const std::string& bytes) {
  DelegateSettings s;
  std::string error;
  EXPECT_TRUE(ParseDelegateSettings(
      reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &s, &error))
      << error;
  return s;
}

TEST(SdkDelegateSettingsTest, ReadsEveryCommonField) {
  kiln::DelegateSettings m;
  m.set_abi_version(4198400);
  (*m.mutable_options())["device"] = "cpu";
  (*m.mutable_options())["fp16"] = "false";
  m.set_min_partition_size(3);
  m.set_vendor_settings(std::string("\x0a\x03MUL\x00", 6));
  m.mutable_opencl()->set_device_name_filter("pthread");
  const DelegateSettings s = Parse(m.SerializeAsString());
  EXPECT_EQ(s.vendor_settings, std::string("\x0a\x03MUL\x00", 6));
  EXPECT_EQ(s.abi_version, 4198400u);
  ASSERT_EQ(s.options.size(), 2u);
  EXPECT_EQ(s.options.at("device"), "cpu");
  EXPECT_EQ(s.options.at("fp16"), "false");
  EXPECT_EQ(s.min_partition_size, 3);
  kiln::OpenClSettings opencl;
  ASSERT_TRUE(opencl.ParseFromString(s.opencl));
  EXPECT_EQ(opencl.device_name_filter(), "pthread");
}

TEST(SdkDelegateSettingsTest, EmptyBytesAreDefaults) {
  const DelegateSettings s = Parse("");
  EXPECT_EQ(s.abi_version, 0u);
  EXPECT_TRUE(s.options.empty());
  EXPECT_EQ(s.min_partition_size, 0);
  EXPECT_TRUE(s.vendor_settings.empty());
  EXPECT_TRUE(s.opencl.empty());
}

TEST(SdkDelegateSettingsTest, SkipsFieldsItDoesNotKnow) {
  kiln::DelegateSettings m;
  m.set_min_partition_size(2);
  // Field 99 (a future addition), varint and length-delimited.
  std::string bytes = m.SerializeAsString();
  bytes += std::string("\x98\x06\x07", 3);    // field 99, varint 7
  bytes += std::string("\x9a\x06\x02xy", 5);  // field 99, bytes "xy"
  EXPECT_EQ(Parse(bytes).min_partition_size, 2);
}

TEST(SdkDelegateSettingsTest, RefusesMalformedBytes) {
  kiln::DelegateSettings m;
  (*m.mutable_options())["key"] = "value";
  const std::string bytes = m.SerializeAsString();
  DelegateSettings s;
  std::string error;
  EXPECT_FALSE(
      ParseDelegateSettings(reinterpret_cast<const uint8_t*>(bytes.data()),
                            bytes.size() - 1, &s, &error));
  EXPECT_THAT(error, HasSubstr("malformed kiln.DelegateSettings"));
  error.clear();
  EXPECT_FALSE(ParseDelegateSettings(nullptr, 4, &s, &error));
  EXPECT_THAT(error, HasSubstr("null"));
}

}  // namespace
}  // namespace kiln::sdk
