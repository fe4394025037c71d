// The on-disk program cache file format: verification and atomic writes.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "program_cache.h"

namespace kiln::opencl {
namespace {

using ::testing::HasSubstr;

const DeviceIdentity kDevice = {"pthread-test", "3.1", "OpenCL 3.0 PoCL"};

TEST(ProgramCacheFileTest, IdentityCoversSourceOptionsDeviceAndDriver) {
  const std::string base = ProgramIdentity("src", "-O", kDevice);
  EXPECT_NE(base, ProgramIdentity("src2", "-O", kDevice));
  EXPECT_NE(base, ProgramIdentity("src", "-O2", kDevice));
  DeviceIdentity other = kDevice;
  other.driver_version = "3.2";
  EXPECT_NE(base, ProgramIdentity("src", "-O", other));
  other = kDevice;
  other.platform_version = "OpenCL 3.0 PoCL 4";
  EXPECT_NE(base, ProgramIdentity("src", "-O", other));
  other = kDevice;
  other.device_name = "gpu";
  EXPECT_NE(base, ProgramIdentity("src", "-O", other));
  EXPECT_NE(CacheFileName(base),
            CacheFileName(ProgramIdentity("src2", "-O", kDevice)));
}

TEST(ProgramCacheFileTest, RoundTripAndEveryCorruptionIsDetected) {
  const std::string identity = ProgramIdentity("src", "", kDevice);
  const std::vector<uint8_t> binary = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const std::vector<uint8_t> file = EncodeCacheFile(identity, binary);
  std::vector<uint8_t> out;
  std::string why;
  ASSERT_TRUE(DecodeCacheFile(file, identity, &out, &why)) << why;
  EXPECT_EQ(out, binary);

  std::vector<uint8_t> flipped = file;
  flipped[flipped.size() - 3] ^= 0x40;
  EXPECT_FALSE(DecodeCacheFile(flipped, identity, &out, &why));
  EXPECT_THAT(why, HasSubstr("checksum"));

  std::vector<uint8_t> truncated(file.begin(), file.end() - 1);
  EXPECT_FALSE(DecodeCacheFile(truncated, identity, &out, &why));
  EXPECT_THAT(why, HasSubstr("size"));

  EXPECT_FALSE(DecodeCacheFile(
      file, ProgramIdentity("other source", "", kDevice), &out, &why));
  EXPECT_THAT(why, HasSubstr("stale"));

  std::vector<uint8_t> bad_magic = file;
  bad_magic[0] = 'X';
  EXPECT_FALSE(DecodeCacheFile(bad_magic, identity, &out, &why));
  EXPECT_THAT(why, HasSubstr("magic"));

  std::vector<uint8_t> bad_version = file;
  bad_version[8] = 99;
  EXPECT_FALSE(DecodeCacheFile(bad_version, identity, &out, &why));
  EXPECT_THAT(why, HasSubstr("format version"));
  EXPECT_EQ(out, binary);  // untouched by the failures
}

TEST(ProgramCacheFileTest, AtomicWriteCreatesDirectoriesAndLeavesNoTemp) {
  char pattern[] = "/tmp/kiln-opencl-cache-test-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::string dir = std::string(pattern) + "/a/b";
  const std::string path = dir + "/file.clbin";
  std::string error;
  ASSERT_TRUE(WriteFileAtomically(path, {1, 2, 3}, &error)) << error;
  ASSERT_TRUE(WriteFileAtomically(path, {4, 5}, &error)) << error;
  std::ifstream in(path, std::ios::binary);
  std::string content((std::istreambuf_iterator<char>(in)),
                      std::istreambuf_iterator<char>());
  EXPECT_EQ(content, std::string("\x04\x05", 2));
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    (void)entry;
    ++files;
  }
  EXPECT_EQ(files, 1);
  EXPECT_FALSE(WriteFileAtomically("/proc/kiln-no-such/x", {1}, &error));
  EXPECT_FALSE(error.empty());
  std::filesystem::remove_all(pattern);
}

}  // namespace
}  // namespace kiln::opencl
