// ibv_rc_pingpong's exchange (pingpong_exchange.hpp) against records written by hand from
// rdma-core v44.0's rc_pingpong.c: sprintf "%04x:%06x:%06x:%s" and gid_to_wire_gid, NUL
// included, then "done\0".
#include "pingpong_exchange.hpp"

#include <gtest/gtest.h>

#include "../../bootstrap/connected.hpp"

namespace rc_pingpong::pingpong {
namespace {

using namespace std::chrono_literals;
using rig::test::bytes;
using rig::test::connected;
using rig::test::put;
using rig::test::text_of;

// An rxe QP in a guest at 10.77.0.2: rxe numbers its first QP 0x11; GID[1] is ::ffff:10.77.0.2.
const std::string guest_record("0000:000011:a1b2c3:00000000000000000000ffff0a4d0002\0", 52);
const Dest guest{0, 0x11, 0xa1b2c3, rig::bnxt::ipv4_gid(10, 77, 0, 2)};

std::string read_text(rig::bootstrap::Stream& s, std::size_t n) {
    std::string out(n, '\0');
    auto r = s.read(std::as_writable_bytes(std::span(out)), 1s, "the test's read");
    EXPECT_TRUE(r) << r.error();
    return out;
}

TEST(PingpongRecord, EncodesAsRcPingpongPrintsIt) {
    EXPECT_EQ(text_of(encode(guest)), guest_record);
    const Dest rig_port{0, 0x2464c3, 0x000001, rig::bnxt::ipv4_gid(10, 77, 0, 1)};
    EXPECT_EQ(text_of(encode(rig_port)), std::string("0000:2464c3:000001:00000000000000000000ffff0a4d0001\0", 52));
    const Dest without_g{0x1a, 0xffffff, 0, {}};  // no -g: the all-zero GID
    EXPECT_EQ(text_of(encode(without_g)), std::string("001a:ffffff:000000:00000000000000000000000000000000\0", 52));
}

TEST(PingpongRecord, QpnAbove24BitsThrows) { EXPECT_THROW(encode(Dest{0, 0x1000000, 0, {}}), std::invalid_argument); }

TEST(PingpongRecord, DecodesTheGuestsRecord) {
    auto d = decode(bytes(guest_record));
    ASSERT_TRUE(d) << d.error();
    EXPECT_EQ(*d, guest);
}

TEST(PingpongRecord, UpperCaseHexDecodes) {
    auto d = decode(bytes(std::string("0000:00A0B0:ABCDEF:FE800000000000000000000000000001\0", 52)));
    ASSERT_TRUE(d) << d.error();
    EXPECT_EQ(d->qpn, 0xa0b0u);
    EXPECT_EQ(d->psn, 0xabcdefu);
    EXPECT_EQ(d->gid[0], 0xfe);
    EXPECT_EQ(d->gid[15], 0x01);
}

TEST(PingpongRecord, ShortRecordIsAnError) {
    EXPECT_EQ(decode(bytes(guest_record.substr(0, 51))).error(), "the remote address is 51 bytes, not 52");
}

TEST(PingpongRecord, NonHexQpnIsAnErrorNamingTheByte) {
    std::string r = guest_record;
    r[7] = 'g';
    EXPECT_EQ(decode(bytes(r)).error(), "byte 7 of the remote address is 'g' (0x67), not a hex digit of the QPN");
}

TEST(PingpongRecord, MissingColonIsAnError) {
    std::string r = guest_record;
    r[11] = '-';
    EXPECT_EQ(decode(bytes(r)).error(), "byte 11 of the remote address is '-' (0x2d), not ':'");
}

TEST(PingpongRecord, NonHexGidIsAnError) {
    std::string r = guest_record;
    r[50] = ' ';
    EXPECT_EQ(decode(bytes(r)).error(), "byte 50 of the remote address is ' ' (0x20), not a hex digit of the GID");
}

TEST(PingpongRecord, RecordWithoutItsNulIsAnError) {
    std::string r = guest_record;
    r[51] = 'x';
    EXPECT_EQ(decode(bytes(r)).error(), "byte 51 of the remote address is 'x' (0x78), not the NUL that ends it");
}

TEST(PingpongExchange, ClientWritesItsRecordReadsTheServersThenWritesDone) {
    auto c = connected();
    put(c.server, guest_record);  // the server's answer, waiting in the socket
    const Dest mine{0, 0x2, 0x6ef362, rig::bnxt::ipv4_gid(10, 77, 0, 1)};
    auto peer = client_exchange(c.client, mine, 1s);
    ASSERT_TRUE(peer) << peer.error();
    EXPECT_EQ(*peer, guest);
    EXPECT_EQ(read_text(c.server, 57), std::string("0000:000002:6ef362:00000000000000000000ffff0a4d0001\0done\0", 57));
}

TEST(PingpongExchange, ClientNamesTheServerThatClosesMidRecord) {
    auto c = connected();
    put(c.server, guest_record.substr(0, 20));
    c.server.close();
    EXPECT_EQ(client_exchange(c.client, guest, 1s).error(),
              c.client.peer() + ": closed the connection after 20 of the 52 bytes of the remote address");
}

TEST(PingpongExchange, ServerConnectsBeforeItAnswersThenTakesDone) {
    auto c = connected();
    put(c.client, guest_record);
    put(c.client, std::string("done\0", 5));
    const Dest mine{0, 0x2, 0x6ef362, rig::bnxt::ipv4_gid(10, 77, 0, 1)};
    bool answered_before_connect = true;
    auto peer = server_exchange(
        c.server, mine,
        [&](const Dest& d) -> rig::Result<void> {
            EXPECT_EQ(d, guest);
            answered_before_connect = *c.client.readable(0ms);
            return {};
        },
        1s);
    ASSERT_TRUE(peer) << peer.error();
    EXPECT_FALSE(answered_before_connect);
    EXPECT_EQ(read_text(c.client, 52), text_of(encode(mine)));
}

TEST(PingpongExchange, ServerRefusingToConnectWritesNothing) {
    auto c = connected();
    put(c.client, guest_record);
    auto peer = server_exchange(
        c.server, guest, [](const Dest&) -> rig::Result<void> { return rig::fail("Failed to modify QP to RTR"); }, 1s);
    EXPECT_EQ(peer.error(), "Failed to modify QP to RTR");
    c.server.close();
    std::array<std::byte, 1> out;
    EXPECT_EQ(*c.client.read_some(out, 1s, "anything"), 0u);
}

TEST(PingpongExchange, ServerRefusesOtherBytesThanDone) {
    auto c = connected();
    put(c.client, guest_record);
    put(c.client, std::string("dune\n", 5));
    EXPECT_EQ(server_exchange(
                  c.server, guest, [](const Dest&) -> rig::Result<void> { return {}; }, 1s)
                  .error(),
              c.server.peer() + ": sent \"dune\\x0a\", not \"done\\0\"");
}

TEST(PingpongExchange, ServerNamesTheClientWhoseRecordIsMalformed) {
    auto c = connected();
    std::string r = guest_record;
    r[0] = 'z';
    put(c.client, r);
    EXPECT_EQ(server_exchange(
                  c.server, guest, [](const Dest&) -> rig::Result<void> { return {}; }, 1s)
                  .error(),
              c.server.peer() + ": byte 0 of the remote address is 'z' (0x7a), not a hex digit of the LID");
}

TEST(PingpongExchange, ServerTimesOutOnAStalledClient) {
    auto c = connected();
    put(c.client, guest_record.substr(0, 10));
    EXPECT_EQ(server_exchange(
                  c.server, guest, [](const Dest&) -> rig::Result<void> { return {}; }, 30ms)
                  .error(),
              c.server.peer() + ": only 10 of the 52 bytes of the remote address arrived within 30 ms");
}

}  // namespace
}  // namespace rc_pingpong::pingpong
