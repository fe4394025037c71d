// The default plugin directory of a host linked statically into an
// executable (this test, like the kiln CLI) is found relative to the
// executable, never from the configure-time install prefix.
#include "plugin/install_paths.h"

#include <unistd.h>

#include <climits>
#include <filesystem>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "plugin/plugin_loader.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;

std::filesystem::path ThisExecutable() {
  char buffer[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
  if (n <= 0) return {};
  return std::filesystem::path(std::string(buffer, static_cast<size_t>(n)));
}

TEST(InstallPathsTest, StaticHostLooksRelativeToTheExecutable) {
  const DefaultPluginDirectoryLookup& lookup = LocateDefaultPluginDirectory();
  const std::filesystem::path exe = ThisExecutable();
  ASSERT_FALSE(exe.empty());
  // The build tree mirrors the install layout: bin/ and lib/kiln/plugins.
  const std::filesystem::path expected = std::filesystem::canonical(
      exe.parent_path() / ".." / "lib" / "kiln" / "plugins");
  EXPECT_TRUE(lookup.exists) << lookup.origin;
  EXPECT_EQ(std::filesystem::canonical(lookup.directory), expected);
  EXPECT_THAT(lookup.origin, HasSubstr(exe.string()));
  EXPECT_EQ(DefaultPluginDirectory(), lookup.directory);
  // Computed once: the same object every time.
  EXPECT_EQ(&LocateDefaultPluginDirectory(), &lookup);
}

}  // namespace
}  // namespace kiln
