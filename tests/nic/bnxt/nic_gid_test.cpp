// The GID rule (rig/bnxt/gid.hpp; docs/bugs.md B19) and the addresses it reads.
#include "rig/bnxt/gid.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace rig::bnxt {
namespace {

constexpr Mac mac{0x00, 0x11, 0x22, 0x33, 0x44, 0x55};

Gid fd93_1() { return Gid{0xfd, 0x93, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}; }

// B19's table: only IPv6 GIDs, link-local first.
std::vector<GidEntry> b19_table() {
    return {{link_local_gid(mac), RoceVersion::V1},
            {link_local_gid(mac), RoceVersion::V2},
            {fd93_1(), RoceVersion::V1},
            {fd93_1(), RoceVersion::V2}};
}

TEST(NicGid, B19PicksTheRoutableRoceV2EntryNotIndexZero) { EXPECT_EQ(choose_gid(b19_table()), 3u); }

TEST(NicGid, Ipv4MappedIsPreferredOverIpv6) {
    std::vector<GidEntry> table = b19_table();
    table.push_back({ipv4_gid(10, 0, 0, 7), RoceVersion::V2});
    EXPECT_EQ(choose_gid(table), 4u);
}

TEST(NicGid, OnlyLinkLocalGivesNothingUnlessAsked) {
    const std::vector<GidEntry> table = {{link_local_gid(mac), RoceVersion::V1},
                                         {link_local_gid(mac), RoceVersion::V2}};
    EXPECT_FALSE(choose_gid(table));
    EXPECT_EQ(choose_gid(table, LinkLocal::Allow), 1u);
}

TEST(NicGid, RoceV1IsNeverChosen) {
    const std::vector<GidEntry> table = {{fd93_1(), RoceVersion::V1}, {ipv4_gid(10, 1, 2, 3), RoceVersion::V1}};
    EXPECT_FALSE(choose_gid(table, LinkLocal::Allow));
}

TEST(NicGid, UnroutableIpv4AddressesAreSkipped) {
    const std::vector<GidEntry> table = {{ipv4_gid(169, 254, 1, 1), RoceVersion::V2},
                                         {ipv4_gid(127, 0, 0, 1), RoceVersion::V2},
                                         {ipv4_gid(0, 0, 0, 0), RoceVersion::V2},
                                         {ipv4_gid(239, 1, 1, 1), RoceVersion::V2},
                                         {ipv4_gid(192, 168, 3, 4), RoceVersion::V2}};
    EXPECT_EQ(choose_gid(table), 4u);
    EXPECT_TRUE(is_link_local(table[0].gid));
}

TEST(NicGid, UnspecifiedLoopbackAndMulticastAreNotRoutable) {
    EXPECT_FALSE(is_routable(Gid{}));
    EXPECT_FALSE(is_routable(Gid{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}));
    EXPECT_FALSE(is_routable(Gid{0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}));
    EXPECT_TRUE(is_routable(Gid{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}));
}

TEST(NicGid, DefaultTableIsLinkLocalThenADocumentationAddress) {
    const auto table = default_gids(mac);
    ASSERT_EQ(table.size(), 2u);
    EXPECT_EQ(table[0], (GidEntry{link_local_gid(mac), RoceVersion::V2}));
    EXPECT_EQ(table[1], (GidEntry{ipv4_gid(192, 0, 2, 0x55), RoceVersion::V2}));  // RFC 5737 TEST-NET-1
    EXPECT_EQ(choose_gid(table), 1u);
}

TEST(NicGid, DefaultAddressStaysAHostOfTheDocumentationBlock) {
    EXPECT_EQ(to_string(default_gids(Mac{2, 0, 0, 0, 0, 0x01})[1].gid), "::ffff:192.0.2.1");
    EXPECT_EQ(to_string(default_gids(Mac{2, 0, 0, 0, 0, 0xFE})[1].gid), "::ffff:192.0.2.254");
    EXPECT_EQ(to_string(default_gids(Mac{2, 0, 0, 0, 0, 0x00})[1].gid), "::ffff:192.0.2.254");
    EXPECT_EQ(to_string(default_gids(Mac{2, 0, 0, 0, 0, 0xFF})[1].gid), "::ffff:192.0.2.1");
}

TEST(NicGid, AddressesParseAsGids) {
    EXPECT_EQ(parse_address("10.0.0.1"), ipv4_gid(10, 0, 0, 1));
    EXPECT_EQ(parse_address("::ffff:10.0.0.1"), ipv4_gid(10, 0, 0, 1));
    EXPECT_EQ(parse_address("fd93::1"), fd93_1());
    EXPECT_FALSE(parse_address(""));
    EXPECT_FALSE(parse_address("10.0.0"));
    EXPECT_FALSE(parse_address("10.0.0.1 "));
    EXPECT_FALSE(parse_address("host.example"));
}

TEST(NicGid, LinkLocalGidIsTheModifiedEui64) { EXPECT_EQ(to_string(link_local_gid(mac)), "fe80::211:22ff:fe33:4455"); }

TEST(NicGid, TextOfAddressesAndMacs) {
    EXPECT_EQ(to_string(ipv4_gid(10, 0, 0, 1)), "::ffff:10.0.0.1");
    EXPECT_EQ(to_string(fd93_1()), "fd93::1");
    EXPECT_EQ(to_string(Gid{}), "::");
    EXPECT_EQ(to_string(mac), "00:11:22:33:44:55");
}

}  // namespace
}  // namespace rig::bnxt
