#include "plugin/plugin_loader.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kiln/kiln_c_api.h"

namespace kiln {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

std::string TestPlugin(const std::string& variant) {
  return std::string(KILN_TEST_BAD_PLUGIN_DIR) + "/libtest_" + variant + ".so";
}

// Loads a test plugin at the newest host version and returns the refusal
// message ("" if it loaded).
std::string RefusalOf(const std::string& variant) {
  absl::StatusOr<HostOffer> offer = PluginLoader::MakeOffer(0);
  EXPECT_TRUE(offer.ok());
  auto plugin = PluginLoader::Load(TestPlugin(variant), *offer);
  return plugin.ok() ? "" : std::string(plugin.status().message());
}

TEST(PluginLoaderTest, GoodPluginLoadsWithDeclaredKernels) {
  absl::StatusOr<HostOffer> offer = PluginLoader::MakeOffer(0);
  ASSERT_TRUE(offer.ok());
  auto plugin = PluginLoader::Load(TestPlugin("good"), *offer);
  ASSERT_TRUE(plugin.ok()) << plugin.status();
  EXPECT_EQ((*plugin)->name(), "test_plugin");
  EXPECT_EQ((*plugin)->version(), "1.2.3");
  EXPECT_EQ((*plugin)->negotiated_version(), KILN_EXT_API_VERSION);
  ASSERT_EQ((*plugin)->kernels().size(), 2u);
  EXPECT_EQ((*plugin)->kernels()[0]->builtin_code, KILN_OP_ADD);
  EXPECT_EQ((*plugin)->kernels()[0]->max_version, 2);
  ASSERT_NE((*plugin)->delegate(), nullptr);
  EXPECT_STREQ((*plugin)->delegate()->name, "test_delegate");
}

TEST(PluginLoaderTest, CpuPluginDeclaresAddAndMul) {
  absl::StatusOr<HostOffer> offer = PluginLoader::MakeOffer(0);
  auto plugin = PluginLoader::Load(
      std::string(KILN_TEST_PLUGIN_DIR) + "/libkiln_cpu.so", *offer);
  ASSERT_TRUE(plugin.ok()) << plugin.status();
  EXPECT_EQ((*plugin)->name(), "kiln_cpu");
  bool add = false, mul = false;
  for (const KilnKernel* k : (*plugin)->kernels()) {
    EXPECT_GE(k->min_version, 1);
    EXPECT_LE(k->min_version, k->max_version);
    add |= k->builtin_code == KILN_OP_ADD && k->min_version == 1;
    mul |= k->builtin_code == KILN_OP_MUL && k->min_version == 1;
  }
  EXPECT_TRUE(add);
  EXPECT_TRUE(mul);
}

TEST(PluginLoaderTest, MissingFile) {
  EXPECT_THAT(
      RefusalOf("does_not_exist"),
      AllOf(HasSubstr("libtest_does_not_exist.so"), HasSubstr("not found")));
}

TEST(PluginLoaderTest, NotASharedLibrary) {
  EXPECT_THAT(RefusalOf("not_a_library"),
              AllOf(HasSubstr("libtest_not_a_library.so"),
                    HasSubstr("it is not an ELF file")));
}

TEST(PluginLoaderTest, NoEntrySymbol) {
  EXPECT_THAT(RefusalOf("no_entry"),
              AllOf(HasSubstr("libtest_no_entry.so"),
                    HasSubstr("does not export the entry symbol "
                              "'KilnPluginEntry'")));
}

TEST(PluginLoaderTest, EntryReturnsNull) {
  EXPECT_THAT(RefusalOf("entry_returns_null"),
              HasSubstr("KilnPluginEntry returned NULL"));
}

TEST(PluginLoaderTest, WrongMajor) {
  EXPECT_THAT(RefusalOf("wrong_major"),
              AllOf(HasSubstr("libtest_wrong_major.so"),
                    HasSubstr("built for extension API 2.0"),
                    HasSubstr("newer major version than this host serves")));
}

TEST(PluginLoaderTest, OldMajor) {
  EXPECT_THAT(RefusalOf("old_major"),
              HasSubstr("built for extension API 0.9, an old major version"));
}

TEST(PluginLoaderTest, StructTooSmall) {
  EXPECT_THAT(RefusalOf("struct_too_small"),
              AllOf(HasSubstr("descriptor struct_size is"),
                    HasSubstr("smaller than the extension API 1.0 "
                              "KilnPluginDescriptor")));
}

TEST(PluginLoaderTest, DescriptorTooSmallForVersionFields) {
  EXPECT_THAT(RefusalOf("descriptor_header_only"),
              HasSubstr("too small to hold even its version fields"));
}

TEST(PluginLoaderTest, NullInvoke) {
  EXPECT_THAT(RefusalOf("null_invoke"),
              AllOf(HasSubstr("kernels[1] (MUL)"),
                    HasSubstr("function pointer 'invoke' is NULL")));
}

TEST(PluginLoaderTest, NullDelegateCreate) {
  EXPECT_THAT(RefusalOf("null_delegate_create"),
              HasSubstr("function pointer 'delegate.create' is NULL"));
}

TEST(PluginLoaderTest, InvertedRange) {
  EXPECT_THAT(RefusalOf("inverted_range"),
              AllOf(HasSubstr("kernels[1] (MUL)"),
                    HasSubstr("op-version range is inverted (min_version 4 > "
                              "max_version 2)")));
}

TEST(PluginLoaderTest, OverlappingRange) {
  EXPECT_THAT(RefusalOf("overlapping_range"),
              AllOf(HasSubstr("kernels[1] (ADD): op-version range 2..5 "
                              "overlaps kernels[0] range 1..2")));
}

TEST(PluginLoaderTest, NeedsNewerHost) {
  EXPECT_THAT(RefusalOf("needs_newer_host"),
              AllOf(HasSubstr("requires a host serving extension API 1.1000"),
                    HasSubstr("upgrade Kiln")));
}

TEST(PluginLoaderTest, HostInBadList) {
  EXPECT_THAT(RefusalOf("bad_host"),
              HasSubstr(std::string("lists this Kiln release (") +
                        KILN_RUNTIME_VERSION_STRING + ") as known-bad"));
}

TEST(PluginLoaderTest, NullName) {
  EXPECT_THAT(RefusalOf("null_name"),
              HasSubstr("descriptor field 'name' is NULL"));
}

TEST(PluginLoaderTest, InvalidName) {
  EXPECT_THAT(RefusalOf("bad_name"),
              HasSubstr("descriptor field 'name' 'Test Plugin!' is invalid"));
}

TEST(PluginLoaderTest, InvalidSemver) {
  EXPECT_THAT(RefusalOf("bad_semver"),
              HasSubstr("descriptor field 'version' 'v1' is not semver"));
}

TEST(PluginLoaderTest, MinHostAboveOwnVersion) {
  EXPECT_THAT(RefusalOf("min_host_above_own"),
              HasSubstr("descriptor is inconsistent"));
}

TEST(PluginLoaderTest, CustomKernelWithoutName) {
  EXPECT_THAT(RefusalOf("custom_without_name"),
              HasSubstr("builtin_code is KILN_OP_CUSTOM but custom_name is "
                        "NULL or empty"));
}

TEST(PluginLoaderTest, NoKernelsNoDelegate) {
  EXPECT_THAT(RefusalOf("no_kernels"),
              HasSubstr("declares no kernels and no delegate"));
}

TEST(PluginLoaderTest, DelegateDeclarationsAreChecked) {
  EXPECT_THAT(RefusalOf("bad_op_support"),
              AllOf(HasSubstr("libtest_bad_op_support.so"),
                    HasSubstr("delegate.supported_ops[0]: op-version range "
                              "3..1 is invalid")));
  EXPECT_THAT(RefusalOf("bad_descriptor_set"),
              HasSubstr("delegate.settings_descriptor_set (4 bytes) is not a "
                        "serialized google.protobuf.FileDescriptorSet"));
  EXPECT_THAT(RefusalOf("half_buffer_handles"),
              HasSubstr("copy_from_buffer_handle, copy_to_buffer_handle and "
                        "free_buffer_handle must be set all three or none"));
}

TEST(PluginLoaderTest, DelegateDeclarationsAreRead) {
  absl::StatusOr<HostOffer> offer = PluginLoader::MakeOffer(0);
  auto declared = PluginLoader::Load(TestPlugin("claims_undeclared"), *offer);
  ASSERT_TRUE(declared.ok()) << declared.status();
  const DelegateDeclaration& d = (*declared)->delegate_declaration();
  EXPECT_TRUE(d.ops_declared);
  ASSERT_EQ(d.ops.size(), 1u);
  EXPECT_EQ(d.ops[0].Describe(), "ADD versions 1..1, types FLOAT32");
  EXPECT_EQ(d.settings, nullptr);
  auto undeclared = PluginLoader::Load(TestPlugin("good"), *offer);
  ASSERT_TRUE(undeclared.ok()) << undeclared.status();
  EXPECT_FALSE((*undeclared)->delegate_declaration().ops_declared);
}

TEST(PluginLoaderTest, OneBadPluginDoesNotStopOthers) {
  PluginSearchConfig config;
  config.use_default_locations = false;
  config.paths = {TestPlugin("wrong_major"), TestPlugin("not_a_library"),
                  TestPlugin("good"), TestPlugin("null_invoke")};
  std::vector<PluginLoadRecord> records = PluginLoader::LoadAll(config);
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records[0].plugin, nullptr);
  EXPECT_EQ(records[1].plugin, nullptr);
  ASSERT_NE(records[2].plugin, nullptr);
  EXPECT_EQ(records[2].refusal, "");
  EXPECT_EQ(records[3].plugin, nullptr);
  EXPECT_THAT(records[0].refusal, HasSubstr("newer major"));
  EXPECT_EQ(records[0].abi_version,
            KILN_MAKE_VERSION(KILN_EXT_API_VERSION_MAJOR + 1, 0, 0));
}

TEST(PluginLoaderTest, DirectorySearchIsOrderedAndDuplicateNamesRefused) {
  PluginSearchConfig config;
  config.use_default_locations = false;
  config.paths = {TestPlugin("good")};
  config.directories = {KILN_TEST_BAD_PLUGIN_DIR};
  std::vector<PluginLoadRecord> records = PluginLoader::LoadAll(config);
  ASSERT_GT(records.size(), 10u);
  ASSERT_NE(records[0].plugin, nullptr);
  // The explicit path comes first and is not loaded twice; the directory's
  // loaded plugins follow by plugin name, then the refused ones.
  bool refused_seen = false;
  for (size_t i = 1; i < records.size(); ++i) {
    EXPECT_NE(records[i].path, TestPlugin("good"));
    EXPECT_EQ(records[i].location, 1u);
    const bool refused = records[i].plugin == nullptr;
    EXPECT_FALSE(refused_seen && !refused) << records[i].path;
    refused_seen |= refused;
    if (i >= 2 && !refused) {
      EXPECT_LE(records[i - 1].name, records[i].name);
    }
    // Another file declaring "test_plugin" is a duplicate (or refused for
    // what else is wrong with it).
    if (records[i].name == "test_plugin") {
      EXPECT_TRUE(refused);
    }
  }
}

// A private directory (mkdtemp: mode 0700) holding copies of plugins.
class PluginDir {
 public:
  PluginDir() {
    char pattern[] = "/tmp/kiln-plugin-loader-test-XXXXXX";
    if (mkdtemp(pattern) != nullptr) path_ = pattern;
  }
  ~PluginDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  // Copies `from` to <dir>/<name>, the first `max_bytes` bytes only when
  // given; returns the copy's path.
  std::string Copy(const std::string& from, const std::string& name,
                   size_t max_bytes = SIZE_MAX) const {
    std::ifstream in(from, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)),
                      std::istreambuf_iterator<char>());
    EXPECT_GT(bytes.size(), 4096u) << from;
    const std::string to = path_ + "/" + name;
    std::ofstream(to, std::ios::binary)
        << bytes.substr(0, std::min(bytes.size(), max_bytes));
    return to;
  }

 private:
  std::string path_;
};

// LoadAll over `directory` alone.
std::vector<PluginLoadRecord> LoadDirectory(const std::string& directory) {
  PluginSearchConfig config;
  config.use_default_locations = false;
  config.directories = {directory};
  return PluginLoader::LoadAll(config);
}

std::string CpuPlugin() {
  return std::string(KILN_TEST_PLUGIN_DIR) + "/libkiln_cpu.so";
}

std::string Refusal(const std::string& path, bool allow_insecure = false) {
  absl::StatusOr<HostOffer> offer = PluginLoader::MakeOffer(0);
  EXPECT_TRUE(offer.ok());
  auto plugin = PluginLoader::Load(path, *offer, nullptr, {}, allow_insecure);
  return plugin.ok() ? "" : std::string(plugin.status().message());
}

TEST(PluginFileCheckTest, TruncatedPluginIsRefusedBeforeDlopen) {
  // The first 4 KB of a real plugin: dlopen maps its segments past the end
  // of the file and dies with SIGBUS when it touches them.
  PluginDir dir;
  const std::string truncated =
      dir.Copy(CpuPlugin(), "libkiln_truncated.so", 4096);
  EXPECT_THAT(
      Refusal(truncated),
      AllOf(HasSubstr(truncated), HasSubstr("not a complete ELF shared object"),
            HasSubstr("but the file has only 4096 bytes"),
            HasSubstr("reinstall or rebuild")));
  // The same through a directory search, next to a good plugin.
  dir.Copy(CpuPlugin(), "libkiln_cpu.so");
  const std::vector<PluginLoadRecord> records = LoadDirectory(dir.path());
  ASSERT_EQ(records.size(), 2u);
  EXPECT_NE(records[0].plugin, nullptr) << records[0].refusal;
  EXPECT_EQ(records[1].plugin, nullptr);
}

TEST(PluginFileCheckTest, HeaderOnlyAndEmptyFilesAreRefused) {
  PluginDir dir;
  for (size_t size : {0, 16, 64, 100}) {
    const std::string path =
        dir.Copy(CpuPlugin(), "libcut" + std::to_string(size) + ".so", size);
    EXPECT_THAT(Refusal(path), HasSubstr("refused")) << size;
  }
}

TEST(PluginFileCheckTest, WorldWritableFileIsRefusedUnlessAllowed) {
  PluginDir dir;
  const std::string copy = dir.Copy(TestPlugin("good"), "libgood.so");
  ASSERT_EQ(chmod(copy.c_str(), 0755), 0);
  EXPECT_EQ(Refusal(copy), "");
  ASSERT_EQ(chmod(copy.c_str(), 0757), 0);  // o+w
  EXPECT_THAT(Refusal(copy), AllOf(HasSubstr(copy),
                                   HasSubstr("the file is writable by every "
                                             "user (mode 0757)"),
                                   HasSubstr("chmod o-w"),
                                   HasSubstr("--allow-insecure-plugins")));
  EXPECT_EQ(Refusal(copy, /*allow_insecure=*/true), "");
}

TEST(PluginFileCheckTest, WorldWritableDirectoryIsRefusedUnlessSticky) {
  PluginDir dir;
  const std::string copy = dir.Copy(TestPlugin("good"), "libgood.so");
  ASSERT_EQ(chmod(dir.path().c_str(), 0777), 0);  // o+w
  EXPECT_THAT(Refusal(copy),
              AllOf(HasSubstr("its directory '" + dir.path() +
                              "' is writable by every user (mode 0777)")));
  EXPECT_EQ(Refusal(copy, /*allow_insecure=*/true), "");
  // The loader's option does the same.
  PluginSearchConfig config;
  config.use_default_locations = false;
  config.directories = {dir.path()};
  ASSERT_EQ(PluginLoader::LoadAll(config).size(), 1u);
  EXPECT_EQ(PluginLoader::LoadAll(config)[0].plugin, nullptr);
  config.allow_insecure_plugins = true;
  EXPECT_NE(PluginLoader::LoadAll(config)[0].plugin, nullptr);
  // Sticky (like /tmp): only a file's owner may replace it.
  ASSERT_EQ(chmod(dir.path().c_str(), 01777), 0);
  EXPECT_EQ(Refusal(copy), "");
  ASSERT_EQ(chmod(dir.path().c_str(), 0700), 0);
}

TEST(PluginFileCheckTest, FileOwnedByAnotherUserIsRefused) {
  PluginDir dir;
  const std::string copy = dir.Copy(TestPlugin("good"), "libgood.so");
  const uid_t other = geteuid() == 0 ? 65534 : 0;
  if (geteuid() != 0) {
    GTEST_SKIP() << "only root can give a file to another user";
  }
  ASSERT_EQ(chown(copy.c_str(), other, static_cast<gid_t>(-1)), 0);
  EXPECT_THAT(Refusal(copy),
              AllOf(HasSubstr("the file is owned by uid 65534, neither you"),
                    HasSubstr("--allow-insecure-plugins")));
  EXPECT_EQ(Refusal(copy, /*allow_insecure=*/true), "");
}

TEST(PluginFileCheckTest, NotARegularFileIsRefused) {
  EXPECT_THAT(Refusal(KILN_TEST_BAD_PLUGIN_DIR),
              HasSubstr("not a regular file"));
  PluginDir dir;
  const std::string fifo = dir.path() + "/libfifo.so";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THAT(Refusal(fifo), HasSubstr("not a regular file"));
}

TEST(PluginPriorityTest, KilnPluginKeepsItsOpsWhateverTheOtherFileIsCalled) {
  // libaaa.so sorts before libkiln_cpu.so; both implement ADD v1.
  PluginDir dir;
  dir.Copy(TestPlugin("good"), "libaaa.so");
  dir.Copy(CpuPlugin(), "libkiln_cpu.so");
  const std::vector<PluginLoadRecord> records = LoadDirectory(dir.path());
  ASSERT_EQ(records.size(), 2u);
  ASSERT_NE(records[0].plugin, nullptr) << records[0].refusal;
  ASSERT_NE(records[1].plugin, nullptr) << records[1].refusal;
  EXPECT_EQ(records[0].name, "kiln_cpu");
  EXPECT_EQ(records[1].name, "test_plugin");
  EXPECT_EQ(records[0].location, 0u);
  EXPECT_EQ(records[1].location, 0u);
}

TEST(PluginPriorityTest, OtherPluginsOfOneDirectoryGoByPluginName) {
  // File names in the opposite order of the plugin names.
  PluginDir dir;
  dir.Copy(TestPlugin("good"), "liba.so");  // "test_plugin"
  dir.Copy(std::string(KILN_TEST_BAD_PLUGIN_DIR) + "/libtest_delegate.so",
           "libz.so");
  const std::vector<PluginLoadRecord> records = LoadDirectory(dir.path());
  ASSERT_EQ(records.size(), 2u);
  ASSERT_NE(records[0].plugin, nullptr) << records[0].refusal;
  ASSERT_NE(records[1].plugin, nullptr) << records[1].refusal;
  EXPECT_LT(records[0].name, records[1].name);
}

TEST(PluginPriorityTest, ExplicitPathsThenDirectoriesInOrder) {
  PluginDir first, second;
  first.Copy(TestPlugin("good"), "libzzz.so");
  second.Copy(CpuPlugin(), "libkiln_cpu.so");
  PluginSearchConfig config;
  config.use_default_locations = false;
  config.paths = {second.path() + "/libkiln_cpu.so"};
  config.directories = {first.path(), second.path()};
  const std::vector<PluginLoadRecord> records = PluginLoader::LoadAll(config);
  ASSERT_EQ(records.size(), 2u);  // the explicit path is not loaded twice
  EXPECT_EQ(records[0].name, "kiln_cpu");
  EXPECT_EQ(records[0].location, 0u);
  EXPECT_EQ(records[1].name, "test_plugin");
  EXPECT_EQ(records[1].location, 1u);
}

TEST(PluginLoaderTest, CapBeyondServedRangeRejected) {
  auto offer = PluginLoader::MakeOffer(KILN_MAKE_VERSION(9, 0, 0));
  ASSERT_FALSE(offer.ok());
  EXPECT_THAT(std::string(offer.status().message()),
              HasSubstr("cannot cap the extension API at 9.0.0"));
}

TEST(PluginLoaderTest, DefaultLocationsFindTheCpuPluginInTheBuildTree) {
  PluginSearchConfig config;
  config.use_default_locations = true;
  bool found = false;
  for (const std::string& c : PluginLoader::Candidates(config)) {
    found |= c.find("libkiln_cpu.so") != std::string::npos;
  }
  EXPECT_TRUE(found) << "default dir: " << DefaultPluginDirectory();
}

TEST(VersionApiTest, FourSeparateVersions) {
  EXPECT_EQ(KilnRuntimeVersion(), KILN_RUNTIME_VERSION);
  EXPECT_STREQ(KilnRuntimeVersionString(), KILN_RUNTIME_VERSION_STRING);
  EXPECT_EQ(KilnCApiVersion(), KILN_C_API_VERSION);
  EXPECT_STREQ(KilnCApiVersionString(), KILN_C_API_VERSION_STRING);
  EXPECT_EQ(KilnExtensionApiVersion(), KILN_EXT_API_VERSION);
  EXPECT_STREQ(KilnExtensionApiVersionString(), KILN_EXT_API_VERSION_STRING);
  EXPECT_EQ(KilnModelSchemaVersion(), 3u);
}

TEST(VersionApiTest, StructQueryReportsAcceptedRange) {
  KilnVersionInfo info;
  info.struct_size = KILN_VERSION_INFO_STRUCT_SIZE;
  ASSERT_EQ(KilnGetVersionInfo(&info), nullptr);
  EXPECT_EQ(info.runtime_version, KILN_RUNTIME_VERSION);
  EXPECT_EQ(info.c_api_version, KILN_C_API_VERSION);
  EXPECT_EQ(info.ext_api_version, KILN_EXT_API_VERSION);
  EXPECT_EQ(info.min_ext_api_version, KILN_MAKE_VERSION(1, 0, 0));
  EXPECT_EQ(info.model_schema_version, 3u);
}

TEST(VersionApiTest, StructQueryRejectsTooSmallStruct) {
  KilnVersionInfo info;
  info.struct_size = 8;
  KilnError* e = KilnGetVersionInfo(&info);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(KilnErrorCode(e), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(KilnErrorMessage(e), HasSubstr("struct_size is 8"));
  KilnErrorDestroy(e);
  e = KilnGetVersionInfo(nullptr);
  ASSERT_NE(e, nullptr);
  KilnErrorDestroy(e);
}

}  // namespace
}  // namespace kiln
