#include "plugin/negotiation.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kiln/kiln_version.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;

constexpr uint32_t V(uint32_t major, uint32_t minor) {
  return KILN_MAKE_VERSION(major, minor, 0);
}

HostOffer Host(uint32_t min_plugin, uint32_t max) {
  HostOffer h;
  h.runtime_version = V(0, 7);
  h.min_plugin_abi_version = min_plugin;
  h.max_abi_version = max;
  return h;
}

PluginVersions Plugin(uint32_t abi, uint32_t min_host) {
  PluginVersions p;
  p.abi_version = abi;
  p.min_host_abi_version = min_host;
  return p;
}

TEST(NegotiationTest, SameVersionAccepted) {
  Negotiation n = Negotiate(Host(V(1, 0), V(1, 1)), Plugin(V(1, 1), V(1, 0)));
  EXPECT_TRUE(n.accepted);
  EXPECT_EQ(n.version, V(1, 1));
  EXPECT_EQ(n.reason, "");
}

TEST(NegotiationTest, OlderPluginGetsItsOwnVersion) {
  Negotiation n = Negotiate(Host(V(1, 0), V(1, 3)), Plugin(V(1, 0), V(1, 0)));
  EXPECT_TRUE(n.accepted);
  EXPECT_EQ(n.version, V(1, 0));
}

TEST(NegotiationTest, NewerMinorPluginRunsOnOlderHostWhenMinHostAllows) {
  Negotiation n = Negotiate(Host(V(1, 0), V(1, 1)), Plugin(V(1, 4), V(1, 0)));
  EXPECT_TRUE(n.accepted);
  EXPECT_EQ(n.version, V(1, 1));
}

TEST(NegotiationTest, PluginNeedingNewerHostRefused) {
  Negotiation n = Negotiate(Host(V(1, 0), V(1, 1)), Plugin(V(1, 4), V(1, 3)));
  EXPECT_FALSE(n.accepted);
  EXPECT_THAT(n.reason, HasSubstr("requires a host serving extension API 1.3"));
  EXPECT_THAT(n.reason, HasSubstr("this host serves 1.0 to 1.1"));
  EXPECT_THAT(n.reason, HasSubstr("upgrade Kiln"));
}

TEST(NegotiationTest, FutureMajorRefused) {
  Negotiation n = Negotiate(Host(V(1, 0), V(1, 1)), Plugin(V(2, 0), V(2, 0)));
  EXPECT_FALSE(n.accepted);
  EXPECT_THAT(n.reason, HasSubstr("built for extension API 2.0"));
  EXPECT_THAT(n.reason, HasSubstr("newer major version"));
}

TEST(NegotiationTest, OldMajorRefused) {
  Negotiation n = Negotiate(Host(V(2, 0), V(2, 2)), Plugin(V(1, 5), V(1, 0)));
  EXPECT_FALSE(n.accepted);
  EXPECT_THAT(n.reason, HasSubstr("old major version"));
}

TEST(NegotiationTest, PluginOlderThanHostMinimumRefused) {
  Negotiation n = Negotiate(Host(V(1, 2), V(1, 4)), Plugin(V(1, 1), V(1, 0)));
  EXPECT_FALSE(n.accepted);
  EXPECT_THAT(n.reason, HasSubstr("older than the oldest this host accepts"));
}

TEST(NegotiationTest, BadHostListRefused) {
  PluginVersions p = Plugin(V(1, 0), V(1, 0));
  p.bad_host_versions = {V(0, 6), V(0, 7)};
  Negotiation n = Negotiate(Host(V(1, 0), V(1, 0)), p);
  EXPECT_FALSE(n.accepted);
  EXPECT_THAT(n.reason, HasSubstr("lists this Kiln release (0.7.0) as known-bad"));
}

TEST(NegotiationTest, BadHostListNotMatchingAccepted) {
  PluginVersions p = Plugin(V(1, 0), V(1, 0));
  p.bad_host_versions = {V(0, 6)};
  EXPECT_TRUE(Negotiate(Host(V(1, 0), V(1, 0)), p).accepted);
}

TEST(NegotiationTest, InconsistentDescriptorRefused) {
  Negotiation n = Negotiate(Host(V(1, 0), V(1, 5)), Plugin(V(1, 1), V(1, 2)));
  EXPECT_FALSE(n.accepted);
  EXPECT_THAT(n.reason, HasSubstr("descriptor is inconsistent"));
}

}  // namespace
}  // namespace kiln
