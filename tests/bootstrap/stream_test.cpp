// rig::bootstrap's TCP streams, listeners and addresses on real sockets (stream.hpp).
#include "rig/bootstrap/stream.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "connected.hpp"

namespace rig::bootstrap {
namespace {

using namespace std::chrono_literals;
using test::connected;
using test::put;
using test::text_of;

TEST(Address, HostAndPortParse) {
    EXPECT_EQ(*parse_address("10.0.0.1:18515"), (Address{"10.0.0.1", 18515}));
    EXPECT_EQ(*parse_address("gpu-host-2:7"), (Address{"gpu-host-2", 7}));
    EXPECT_EQ(*parse_address("[fe80::1]:18515"), (Address{"fe80::1", 18515}));
    EXPECT_EQ(*parse_address("18515", "10.77.0.1"), (Address{"10.77.0.1", 18515}));
    EXPECT_EQ(*parse_address("18515"), (Address{"", 18515}));
}

TEST(Address, MalformedTextIsAnErrorQuotingIt) {
    EXPECT_EQ(parse_address("host:").error(), "the address \"host:\" has no port number from 0 to 65535");
    EXPECT_EQ(parse_address("host:65536").error(), "the address \"host:65536\" has no port number from 0 to 65535");
    EXPECT_EQ(parse_address("host:5x").error(), "the address \"host:5x\" has no port number from 0 to 65535");
    EXPECT_EQ(parse_address("::1:5").error(), "the address \"::1:5\" needs brackets around its IPv6 host: [HOST]:PORT");
    EXPECT_EQ(parse_address("[::1:5").error(), "the address \"[::1:5\" has no closing bracket");
    EXPECT_EQ(parse_address("[::1]").error(), "the address \"[::1]\" has no port");
}

TEST(Address, Ipv6HostsPrintInBrackets) {
    EXPECT_EQ(to_string(Address{"::1", 5}), "[::1]:5");
    EXPECT_EQ(to_string(Address{"10.0.0.1", 18515}), "10.0.0.1:18515");
}

TEST(Stream, EachEndNamesTheOther) {
    auto c = connected();
    EXPECT_EQ(c.client.peer(), "127.0.0.1:" + std::to_string(c.port));
    EXPECT_THAT(c.server.peer(), testing::MatchesRegex("127\\.0\\.0\\.1:[0-9]+"));
    EXPECT_NE(c.server.peer(), c.client.peer());
    EXPECT_EQ(c.client.local(), c.server.peer());
    EXPECT_EQ(c.server.local(), c.client.peer());
}

TEST(Stream, ReadTakesExactlyItsBytesFromSeveralWrites) {
    auto c = connected();
    put(c.client, "ab");
    put(c.client, "cdef");
    std::array<std::byte, 4> out;
    ASSERT_TRUE(c.server.read(out, 1s, "the test record"));
    EXPECT_EQ(text_of(out), "abcd");
    std::array<std::byte, 8> rest;
    auto n = c.server.read_some(rest, 1s, "the rest");
    ASSERT_TRUE(n) << n.error();
    EXPECT_EQ(text_of(std::span(rest).first(*n)), "ef");
}

TEST(Stream, PeerClosingMidRecordIsAnErrorSayingHowMuchArrived) {
    auto c = connected();
    put(c.client, "abc");
    c.client.close();
    std::array<std::byte, 8> out;
    EXPECT_EQ(c.server.read(out, 1s, "the test record").error(),
              c.server.peer() + ": closed the connection after 3 of the 8 bytes of the test record");
}

TEST(Stream, PeerClosingBeforeAnyByteIsAnError) {
    auto c = connected();
    c.client.close();
    std::array<std::byte, 8> out;
    EXPECT_EQ(c.server.read(out, 1s, "the test record").error(),
              c.server.peer() + ": closed the connection before the test record");
    auto n = c.server.read_some(out, 1s, "the test record");
    ASSERT_TRUE(n) << n.error();
    EXPECT_EQ(*n, 0u);
}

TEST(Stream, StalledPeerIsAnErrorAfterTheTimeout) {
    auto c = connected();
    std::array<std::byte, 8> out;
    EXPECT_EQ(c.server.read(out, 30ms, "the test record").error(),
              c.server.peer() + ": the test record did not arrive within 30 ms");
    put(c.client, "abc");
    EXPECT_EQ(c.server.read(out, 30ms, "the test record").error(),
              c.server.peer() + ": only 3 of the 8 bytes of the test record arrived within 30 ms");
    EXPECT_EQ(c.server.read_some(out, 20ms, "more").error(), c.server.peer() + ": more did not arrive within 20 ms");
}

TEST(Stream, WriteToAPeerThatResetIsAnError) {
    auto c = connected();
    put(c.server, "unread");
    c.client.close();  // with unread bytes: the kernel answers with a reset
    const std::vector<std::byte> block(1 << 16);
    Result<void> r;
    for (int i = 0; i < 64 && r; ++i) r = c.server.write(block, 1s, "the test record");
    ASSERT_FALSE(r);
    EXPECT_THAT(r.error(), testing::MatchesRegex(c.server.peer() +
                                                 ": writing the test record: (Broken pipe|Connection reset by peer)"));
}

TEST(Stream, ReadableSeesBytesWithoutTakingThem) {
    auto c = connected();
    EXPECT_FALSE(*c.server.readable(0ms));
    put(c.client, "x");
    EXPECT_TRUE(*c.server.readable(1s));
    std::array<std::byte, 1> out;
    ASSERT_TRUE(c.server.read(out, 1s, "x"));
    EXPECT_EQ(text_of(out), "x");
}

TEST(Stream, ConnectToAPortNobodyListensOnIsRefused) {
    std::uint16_t port = 0;
    {
        auto listener = Listener::listen({"127.0.0.1", 0});
        ASSERT_TRUE(listener) << listener.error();
        port = listener->port();
    }
    EXPECT_EQ(Stream::connect({"127.0.0.1", port}, 1s).error(),
              "127.0.0.1:" + std::to_string(port) + ": cannot connect: Connection refused");
}

TEST(Stream, UnresolvableHostIsAnErrorNamingIt) {
    EXPECT_THAT(Stream::connect({"no-such-host.invalid", 1}, 1s).error(),
                testing::StartsWith("no-such-host.invalid:1: cannot resolve: "));
}

TEST(Stream, Ipv6LoopbackCarriesBytes) {
    if (!Listener::listen({"::1", 0})) GTEST_SKIP() << "no IPv6 loopback here";
    auto c = connected("::1");
    EXPECT_EQ(c.client.peer(), "[::1]:" + std::to_string(c.port));
    EXPECT_THAT(c.server.peer(), testing::MatchesRegex("\\[::1\\]:[0-9]+"));
    put(c.client, "ping");
    std::array<std::byte, 4> out;
    ASSERT_TRUE(c.server.read(out, 1s, "ping"));
    EXPECT_EQ(text_of(out), "ping");
}

TEST(Listener, NoPeerWithinTheTimeoutIsAnErrorNamingTheAddress) {
    auto listener = Listener::listen({"127.0.0.1", 0});
    ASSERT_TRUE(listener) << listener.error();
    EXPECT_EQ(listener->address(), "127.0.0.1:" + std::to_string(listener->port()));
    EXPECT_EQ(listener->accept(20ms).error(), listener->address() + ": no peer connected within 20 ms");
}

TEST(Listener, PortInUseIsAnErrorNamingIt) {
    auto first = Listener::listen({"127.0.0.1", 0});
    ASSERT_TRUE(first) << first.error();
    EXPECT_EQ(Listener::listen({"127.0.0.1", first->port()}).error(),
              "127.0.0.1:" + std::to_string(first->port()) + ": cannot listen: bind: Address already in use");
}

TEST(Listener, EveryLocalAddressTakesIpv4Peers) {
    auto listener = Listener::listen({"", 0});
    ASSERT_TRUE(listener) << listener.error();
    EXPECT_THAT(listener->address(), testing::MatchesRegex("(\\[::\\]|0\\.0\\.0\\.0):[0-9]+"));
    auto client = Stream::connect({"127.0.0.1", listener->port()}, 1s);
    ASSERT_TRUE(client) << client.error();
    auto server = listener->accept(1s);
    ASSERT_TRUE(server) << server.error();
    EXPECT_THAT(server->peer(), testing::MatchesRegex("127\\.0\\.0\\.1:[0-9]+"));  // not ::ffff:127.0.0.1
}

}  // namespace
}  // namespace rig::bootstrap
