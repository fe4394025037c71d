// A second process finds the programs in the disk cache and compiles none
// from source.
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace {

std::map<std::string, long> RunProbe(const std::string& cache_dir) {
  const std::string command =
      std::string(KILN_OPENCL_CACHE_PROBE) + " '" + cache_dir + "'";
  std::map<std::string, long> counters;
  FILE* pipe = popen(command.c_str(), "r");
  EXPECT_NE(pipe, nullptr) << command;
  if (pipe == nullptr) return counters;
  char line[256];
  while (fgets(line, sizeof(line), pipe) != nullptr) {
    std::string text(line);
    const size_t eq = text.find('=');
    if (eq != std::string::npos) {
      counters[text.substr(0, eq)] = std::stol(text.substr(eq + 1));
    }
  }
  EXPECT_EQ(pclose(pipe), 0) << command << " failed";
  return counters;
}

TEST(OpenClDiskCacheTest, SecondProcessBuildsNoProgramFromSource) {
  char pattern[] = "/tmp/kiln-opencl-disk-cache-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::string dir = pattern;
  std::map<std::string, long> first = RunProbe(dir);
  EXPECT_EQ(first["built_from_source"], 3);
  EXPECT_EQ(first["cache_files_written"], 3);
  EXPECT_EQ(first["loaded_from_disk_cache"], 0);
  std::map<std::string, long> second = RunProbe(dir);
  EXPECT_EQ(second["built_from_source"], 0);
  EXPECT_EQ(second["loaded_from_disk_cache"], 3);
  EXPECT_EQ(second["cache_files_rejected"], 0);
  EXPECT_EQ(second["cache_files_written"], 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
