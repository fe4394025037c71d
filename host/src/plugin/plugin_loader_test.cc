#include "plugin/plugin_loader.h"

#include <cstdlib>
#include <string>

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
                    HasSubstr("could not be loaded as a shared library")));
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

TEST(PluginLoaderTest, DirectorySearchIsSortedAndDuplicateNamesRefused) {
  PluginSearchConfig config;
  config.use_default_locations = false;
  config.paths = {TestPlugin("good")};
  config.directories = {KILN_TEST_BAD_PLUGIN_DIR};
  std::vector<PluginLoadRecord> records = PluginLoader::LoadAll(config);
  ASSERT_GT(records.size(), 10u);
  ASSERT_NE(records[0].plugin, nullptr);
  // The explicit path comes first and is not loaded twice; the directory's
  // files follow sorted by name.
  for (size_t i = 2; i < records.size(); ++i) {
    EXPECT_LT(records[i - 1].path, records[i].path);
    EXPECT_NE(records[i].path, TestPlugin("good"));
  }
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
