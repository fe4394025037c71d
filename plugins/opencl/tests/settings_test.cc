// The plugin's kiln.DelegateSettings decoding (the SDK's reader for the
// common fields, the plugin's for OpenClSettings and the option keys)
// against bytes serialised by the protobuf library, one option key at a
// time (TFLite's GPU delegate once mapped every key to one field).
#include "settings.h"

#include <cstdlib>
#include <string>

#include "delegate_settings.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kiln::opencl {
namespace {

using ::testing::HasSubstr;

// What the plugin does with serialized settings: the SDK's delegate helper
// decodes them, the plugin applies them.
bool ParseDelegateSettings(const uint8_t* data, size_t size,
                           DelegateOptions* options, std::string* error) {
  sdk::DelegateSettings settings;
  return sdk::ParseDelegateSettings(data, size, &settings, error) &&
         ApplyDelegateSettings(settings, options, error);
}

DelegateOptions Parse(const kiln::DelegateSettings& settings) {
  const std::string bytes = settings.SerializeAsString();
  DelegateOptions options;
  std::string error;
  EXPECT_TRUE(
      ParseDelegateSettings(reinterpret_cast<const uint8_t*>(bytes.data()),
                            bytes.size(), &options, &error))
      << error;
  return options;
}

std::string ParseError(const kiln::DelegateSettings& settings) {
  const std::string bytes = settings.SerializeAsString();
  DelegateOptions options;
  std::string error;
  EXPECT_FALSE(
      ParseDelegateSettings(reinterpret_cast<const uint8_t*>(bytes.data()),
                            bytes.size(), &options, &error));
  return error;
}

kiln::DelegateSettings WithOption(const std::string& key,
                                  const std::string& value) {
  kiln::DelegateSettings s;
  (*s.mutable_options())[key] = value;
  return s;
}

// Field-by-field equality with defaults, so a key that sets the wrong field
// is caught.
void ExpectOnly(const DelegateOptions& o, const DelegateOptions& expected) {
  EXPECT_EQ(o.device, expected.device);
  EXPECT_EQ(o.platform_filter, expected.platform_filter);
  EXPECT_EQ(o.device_name_filter, expected.device_name_filter);
  EXPECT_EQ(o.allow_fp16_storage, expected.allow_fp16_storage);
  EXPECT_EQ(o.cache_dir, expected.cache_dir);
  EXPECT_EQ(o.min_partition_size, expected.min_partition_size);
}

TEST(OpenClSettingsTest, EmptySettingsGiveDefaults) {
  DelegateOptions o;
  std::string error;
  ASSERT_TRUE(ParseDelegateSettings(nullptr, 0, &o, &error));
  ExpectOnly(o, DelegateOptions());
  EXPECT_EQ(o.device, DeviceKind::kAny);
  EXPECT_FALSE(o.allow_fp16_storage);
  EXPECT_EQ(o.min_partition_size, 1);
}

TEST(OpenClSettingsTest, DeviceKeySetsOnlyDevice) {
  for (const auto& [text, kind] :
       {std::pair<std::string, DeviceKind>{"gpu", DeviceKind::kGpu},
        {"cpu", DeviceKind::kCpu},
        {"any", DeviceKind::kAny}}) {
    DelegateOptions expected;
    expected.device = kind;
    ExpectOnly(Parse(WithOption("device", text)), expected);
  }
}

TEST(OpenClSettingsTest, PlatformKeySetsOnlyPlatformFilter) {
  DelegateOptions expected;
  expected.platform_filter = "Portable";
  ExpectOnly(Parse(WithOption("platform", "Portable")), expected);
}

TEST(OpenClSettingsTest, DeviceNameKeySetsOnlyDeviceNameFilter) {
  DelegateOptions expected;
  expected.device_name_filter = "pthread";
  ExpectOnly(Parse(WithOption("device_name", "pthread")), expected);
}

TEST(OpenClSettingsTest, Fp16KeySetsOnlyFp16) {
  DelegateOptions expected;
  expected.allow_fp16_storage = true;
  ExpectOnly(Parse(WithOption("fp16", "true")), expected);
  ExpectOnly(Parse(WithOption("fp16", "1")), expected);
  ExpectOnly(Parse(WithOption("fp16", "false")), DelegateOptions());
}

TEST(OpenClSettingsTest, CacheDirKeySetsOnlyCacheDir) {
  DelegateOptions expected;
  expected.cache_dir = "/tmp/x y";
  ExpectOnly(Parse(WithOption("cache_dir", "/tmp/x y")), expected);
}

TEST(OpenClSettingsTest, MinPartitionSizeFromKeyAndTopLevelField) {
  DelegateOptions expected;
  expected.min_partition_size = 3;
  ExpectOnly(Parse(WithOption("min_partition_size", "3")), expected);
  kiln::DelegateSettings s;
  s.set_min_partition_size(3);
  ExpectOnly(Parse(s), expected);
  s.set_min_partition_size(0);
  ExpectOnly(Parse(s), DelegateOptions());
  s.set_min_partition_size(-2);
  EXPECT_THAT(ParseError(s), HasSubstr("negative"));
}

TEST(OpenClSettingsTest, TypedFieldsAreHonoured) {
  kiln::DelegateSettings s;
  s.set_abi_version(0x01010000);
  kiln::OpenClSettings* cl = s.mutable_opencl();
  cl->set_device_type(kiln::OpenClSettings::DEVICE_TYPE_CPU);
  cl->set_platform_name_filter("Portable");
  cl->set_device_name_filter("pthread");
  cl->set_allow_fp16_storage(true);
  cl->set_cache_dir("none");
  DelegateOptions expected;
  expected.device = DeviceKind::kCpu;
  expected.platform_filter = "Portable";
  expected.device_name_filter = "pthread";
  expected.allow_fp16_storage = true;
  expected.cache_dir = "none";
  ExpectOnly(Parse(s), expected);
  cl->set_device_type(kiln::OpenClSettings::DEVICE_TYPE_GPU);
  EXPECT_EQ(Parse(s).device, DeviceKind::kGpu);
  cl->set_device_type(kiln::OpenClSettings::DEVICE_TYPE_ANY);
  EXPECT_EQ(Parse(s).device, DeviceKind::kAny);
}

TEST(OpenClSettingsTest, OptionKeyOverridesTypedField) {
  kiln::DelegateSettings s;
  s.mutable_opencl()->set_device_type(kiln::OpenClSettings::DEVICE_TYPE_GPU);
  s.mutable_opencl()->set_cache_dir("/a");
  (*s.mutable_options())["device"] = "cpu";
  const DelegateOptions o = Parse(s);
  EXPECT_EQ(o.device, DeviceKind::kCpu);
  EXPECT_EQ(o.cache_dir, "/a");
}

TEST(OpenClSettingsTest, UnknownKeysAreRefusedByName) {
  kiln::DelegateSettings s = WithOption("devcie", "gpu");
  (*s.mutable_options())["precision"] = "fp16";
  const std::string error = ParseError(s);
  EXPECT_THAT(error, HasSubstr("'devcie'"));
  EXPECT_THAT(error, HasSubstr("'precision'"));
  EXPECT_THAT(error, HasSubstr("known keys: device, platform"));
}

TEST(OpenClSettingsTest, BadValuesAreRefusedWithTheAllowedOnes) {
  EXPECT_THAT(ParseError(WithOption("device", "tpu")),
              HasSubstr("device='tpu' is invalid; use gpu, cpu or any"));
  EXPECT_THAT(ParseError(WithOption("fp16", "yes")),
              HasSubstr("fp16='yes' is invalid"));
  EXPECT_THAT(ParseError(WithOption("min_partition_size", "two")),
              HasSubstr("min_partition_size='two' is invalid"));
  EXPECT_THAT(ParseError(WithOption("min_partition_size", "0")),
              HasSubstr("min_partition_size='0' is invalid"));
}

TEST(OpenClSettingsTest, UnknownFieldsAreSkippedLikeProtobuf) {
  // Field 1000 (varint) and field 1001 (bytes) from a newer schema.
  std::string bytes = WithOption("device", "cpu").SerializeAsString();
  bytes += std::string("\xc0\x3e\x05", 3);
  bytes += std::string("\xca\x3e\x02hi", 5);
  DelegateOptions o;
  std::string error;
  ASSERT_TRUE(ParseDelegateSettings(
      reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &o, &error))
      << error;
  EXPECT_EQ(o.device, DeviceKind::kCpu);
}

TEST(OpenClSettingsTest, MalformedBytesAreRefused) {
  const std::string full = WithOption("device", "cpu").SerializeAsString();
  const std::string truncated = full.substr(0, full.size() - 2);
  DelegateOptions o;
  std::string error;
  EXPECT_FALSE(
      ParseDelegateSettings(reinterpret_cast<const uint8_t*>(truncated.data()),
                            truncated.size(), &o, &error));
  EXPECT_THAT(error, HasSubstr("malformed kiln.DelegateSettings"));
  const uint8_t garbage[] = {0xff, 0xff, 0xff};
  EXPECT_FALSE(ParseDelegateSettings(garbage, sizeof(garbage), &o, &error));
}

TEST(OpenClSettingsTest, CacheDirDefaultsFollowXdg) {
  EXPECT_EQ(ResolveCacheDir("none"), "");
  EXPECT_EQ(ResolveCacheDir("/explicit"), "/explicit");
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  EXPECT_EQ(ResolveCacheDir(""), "/xdg/kiln/opencl");
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", "/home/someone", 1);
  EXPECT_EQ(ResolveCacheDir(""), "/home/someone/.cache/kiln/opencl");
}

}  // namespace
}  // namespace kiln::opencl
