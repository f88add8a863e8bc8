// The port's neighbour protocols and Model::resolve (nic/bnxt/sim/src/neighbour.cpp): ARP
// (RFC 826) and IPv6 neighbour discovery (RFC 4861) between two models on a Wire, their
// frames against bytes assembled here from the RFCs' layouts (the ICMPv6 checksum by RFC
// 4443 §2.3, computed here), what the port does not answer or learn, and resolve's errors.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <stdexcept>

#include "../../../support/eventually.hpp"
#include "../../../support/pcap.hpp"
#include "../../../support/temp_dir.hpp"
#include "harness.hpp"

namespace rig::bnxt::sim::test {
namespace {

using namespace std::chrono_literals;

constexpr Gid fd93_1{0xFD, 0x93, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
constexpr Gid fd93_2{0xFD, 0x93, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
constexpr Gid ipv4(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d) {
    return Gid{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, a, b, c, d};
}

Bytes bytes(std::initializer_list<int> v) {
    Bytes out;
    for (int b : v) out.push_back(static_cast<std::byte>(b));
    return out;
}
void append(Bytes& to, std::span<const std::uint8_t> from) {
    for (auto b : from) to.push_back(std::byte{b});
}
void append(Bytes& to, const Bytes& from) { to.insert(to.end(), from.begin(), from.end()); }

// RFC 4443 §2.3 over the IPv6 frame's pseudo-header and ICMPv6 message, the checksum field
// taken as 0.
std::uint16_t icmpv6_checksum(const Bytes& f) {
    std::uint32_t sum = 0;
    auto word = [&](std::size_t at) {
        return std::to_integer<unsigned>(f[at]) << 8 | std::to_integer<unsigned>(f[at + 1]);
    };
    for (std::size_t at = 22; at < 54; at += 2) sum += word(at);  // source, destination
    const std::size_t length = f.size() - 54;
    sum += static_cast<std::uint32_t>(length) + 58;
    for (std::size_t at = 54; at < f.size(); at += 2)
        if (at != 56) sum += word(at);
    while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
    return static_cast<std::uint16_t>(~sum);
}

class NeighbourTest : public ::testing::Test {
protected:
    // A and B up at `ga`, `gb`, on a captured Wire, running.
    void open(const Gid& ga, const Gid& gb) {
        a.gid = ga;
        b.gid = gb;
        a.up();
        b.up();
        ASSERT_TRUE(wire.capture(dir.path() / "wire.pcap"));
        a.nic.start();
        b.nic.start();
    }
    // The frames the Wire carried, after both models stopped and took what their inboxes
    // held, so that their counters count every frame carried.
    std::vector<Bytes> captured() {
        a.nic.stop();
        b.nic.stop();
        a.nic.settle();
        b.nic.settle();
        wire.stop_capture();
        std::vector<Bytes> out;
        for (auto& f : rig::test::read_pcap(dir.path() / "wire.pcap").frames) out.push_back(std::move(f.bytes));
        return out;
    }
    rig::test::TempDir dir;
    Node a{1};
    Node b{2};
    Wire wire{a.nic, b.nic};
};

TEST_F(NeighbourTest, ResolveOfAnIpv4GidIsAnArpRequestThePeerAnswers) {
    open(a.gid, b.gid);
    const auto mac = a.nic.resolve(b.gid, 5s);
    ASSERT_TRUE(mac) << mac.error();
    EXPECT_EQ(*mac, b.mac);
    const auto frames = captured();
    ASSERT_EQ(frames.size(), 2u);
    // Request: to the broadcast, from A: Ethernet, IPv4, 6, 4, request; A's MAC and
    // 10.0.0.1; target MAC unknown (0), 10.0.0.2.
    const Bytes request =
        bytes({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0,  0, 0, 0, 1, 0x08, 0x06, 0, 1, 0x08, 0x00, 6, 4, 0,
               1,    2,    0,    0,    0,    0,    1, 10, 0, 0, 1, 0, 0,    0,    0, 0, 0,    10,   0, 0, 2});
    const Bytes reply = bytes({2, 0, 0, 0, 0, 1, 2, 0,  0, 0, 0, 2, 0x08, 0x06, 0, 1, 0x08, 0x00, 6, 4, 0,
                               2, 2, 0, 0, 0, 0, 2, 10, 0, 0, 2, 2, 0,    0,    0, 0, 1,    10,   0, 0, 1});
    EXPECT_EQ(frames[0], request);
    EXPECT_EQ(frames[1], reply);
    EXPECT_EQ(b.nic.rx_counters().arp_requests, 1u);
    EXPECT_EQ(a.nic.rx_counters().neighbor_answers, 1u);
}

TEST_F(NeighbourTest, ResolveOfAnIpv6GidIsASolicitationThePeerAdvertisesTo) {
    open(fd93_1, fd93_2);
    const auto mac = a.nic.resolve(fd93_2, 5s);
    ASSERT_TRUE(mac) << mac.error();
    EXPECT_EQ(*mac, b.mac);
    const auto frames = captured();
    ASSERT_EQ(frames.size(), 2u);
    // Solicitation: to the target's solicited-node group (RFC 4291 §2.7.1: ff02::1:ff00:2,
    // MAC 33:33:ff:00:00:02, RFC 2464 §7), hop limit 255, type 135, the target, option 1
    // (source link-layer address) with A's MAC.
    Bytes ns = bytes({0x33, 0x33, 0xff, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x86, 0xdd, 0x60, 0, 0, 0, 0, 32, 58, 255});
    append(ns, fd93_1);
    append(ns, bytes({0xff, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0, 0, 2}));
    append(ns, bytes({135, 0, 0, 0, 0, 0, 0, 0}));
    append(ns, fd93_2);
    append(ns, bytes({1, 1, 2, 0, 0, 0, 0, 1}));
    const std::uint16_t ns_check = icmpv6_checksum(ns);
    ns[56] = static_cast<std::byte>(ns_check >> 8);
    ns[57] = static_cast<std::byte>(ns_check & 0xFF);
    EXPECT_EQ(frames[0], ns);
    // Advertisement: to A, from fd93::2, type 136, Solicited and Override (0x60), option 2
    // (target link-layer address) with B's MAC.
    Bytes na = bytes({2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x86, 0xdd, 0x60, 0, 0, 0, 0, 32, 58, 255});
    append(na, fd93_2);
    append(na, fd93_1);
    append(na, bytes({136, 0, 0, 0, 0x60, 0, 0, 0}));
    append(na, fd93_2);
    append(na, bytes({2, 1, 2, 0, 0, 0, 0, 2}));
    const std::uint16_t na_check = icmpv6_checksum(na);
    na[56] = static_cast<std::byte>(na_check >> 8);
    na[57] = static_cast<std::byte>(na_check & 0xFF);
    EXPECT_EQ(frames[1], na);
    EXPECT_EQ(b.nic.rx_counters().neighbor_solicitations, 1u);
    EXPECT_EQ(a.nic.rx_counters().neighbor_answers, 1u);
}

TEST_F(NeighbourTest, ResolveOfTheOwnAddressIsTheOwnMacWithoutAFrame) {
    open(a.gid, b.gid);
    const auto mac = a.nic.resolve(a.gid, 5s);
    ASSERT_TRUE(mac) << mac.error();
    EXPECT_EQ(*mac, a.mac);
    EXPECT_TRUE(captured().empty());
}

// resolve waits on the model's clock (ModelOptions::clock), so A's ManualClock moved by hand
// decides when each request is given up: no real time passes.
TEST_F(NeighbourTest, ResolveWithoutAnswerIsAnErrorNamingTheAddressAfterThreeRequests) {
    open(a.gid, b.gid);
    auto asked = std::async(std::launch::async, [&] { return a.nic.resolve(ipv4(10, 0, 0, 9), 30ms); });
    for (std::uint64_t sent = 1; sent <= 3; ++sent) {
        ASSERT_TRUE(rig::test::eventually([&] { return a.counters().frames_sent == sent; }));
        a.clock.advance(10ms);
    }
    const auto mac = asked.get();
    ASSERT_FALSE(mac);
    EXPECT_EQ(mac.error(), "bnxt model: resolve ::ffff:10.0.0.9: no answer to 3 ARP requests within 30 ms");
    const auto frames = captured();
    EXPECT_EQ(frames.size(), 3u);
    EXPECT_EQ(b.nic.rx_counters().not_roce, 3u);  // ARP for an address B does not have
    EXPECT_EQ(b.nic.rx_counters().arp_requests, 0u);
}

TEST_F(NeighbourTest, ResolveRetriesWhereARequestIsLost) {
    open(a.gid, b.gid);
    a.faults.drop_frames(1);
    auto asked = std::async(std::launch::async, [&] { return a.nic.resolve(b.gid, 3s); });
    // The first request lost: a third of the timeout on A's clock, and it asks again.
    ASSERT_TRUE(rig::test::eventually([&] { return a.counters().frames_dropped == 1; }));
    a.clock.advance(1s);
    const auto mac = asked.get();
    ASSERT_TRUE(mac) << mac.error();
    EXPECT_EQ(*mac, b.mac);
    EXPECT_EQ(captured().size(), 2u);  // the second request and its reply
}

TEST_F(NeighbourTest, UnaskedRepliesTeachThePortNothing) {
    open(a.gid, b.gid);
    // B's reply to a request A never made.
    const Bytes reply = bytes({2, 0, 0, 0, 0, 1, 2, 0,  0, 0, 0, 2, 0x08, 0x06, 0, 1, 0x08, 0x00, 6, 4, 0,
                               2, 2, 0, 0, 0, 0, 2, 10, 0, 0, 2, 2, 0,    0,    0, 0, 1,    10,   0, 0, 1});
    a.faults.receive(reply);
    a.nic.stop();
    a.nic.settle();
    EXPECT_EQ(a.nic.rx_counters().neighbor_answers, 0u);
    EXPECT_EQ(a.nic.rx_counters().not_roce, 1u);
}

TEST_F(NeighbourTest, SolicitationWithAHopLimitBelow255OrABadChecksumIsNotAnswered) {
    open(fd93_1, fd93_2);
    a.nic.stop();
    b.nic.stop();
    Bytes ns = bytes({0x33, 0x33, 0xff, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x86, 0xdd, 0x60, 0, 0, 0, 0, 32, 58, 254});
    append(ns, fd93_1);
    append(ns, bytes({0xff, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0, 0, 2}));
    append(ns, bytes({135, 0, 0, 0, 0, 0, 0, 0}));
    append(ns, fd93_2);
    append(ns, bytes({1, 1, 2, 0, 0, 0, 0, 1}));
    const std::uint16_t check = icmpv6_checksum(ns);
    ns[56] = static_cast<std::byte>(check >> 8);
    ns[57] = static_cast<std::byte>(check & 0xFF);
    b.faults.receive(ns);  // hop limit 254: routed from elsewhere (RFC 4861 §7.1.1)
    ns[57] ^= std::byte{1};
    ns[21] = std::byte{255};
    b.faults.receive(ns);  // hop limit 255, checksum wrong
    b.nic.settle();
    EXPECT_EQ(b.nic.rx_counters().not_roce, 1u);
    EXPECT_EQ(b.nic.rx_counters().bad_ip_checksum, 1u);
    EXPECT_EQ(b.nic.rx_counters().neighbor_solicitations, 0u);
    EXPECT_TRUE(captured().empty());
}

TEST_F(NeighbourTest, ArpToAnotherMacIsDroppedAsWrongMac) {
    open(a.gid, b.gid);
    b.nic.stop();
    const Bytes request = bytes({2, 0, 0, 0, 0, 7, 2, 0,  0, 0, 0, 1, 0x08, 0x06, 0, 1, 0x08, 0x00, 6, 4, 0,
                                 1, 2, 0, 0, 0, 0, 1, 10, 0, 0, 1, 0, 0,    0,    0, 0, 0,    10,   0, 0, 2});
    b.faults.receive(request);
    b.nic.settle();
    EXPECT_EQ(b.nic.rx_counters().wrong_mac, 1u);
    EXPECT_EQ(b.nic.rx_counters().arp_requests, 0u);
}

TEST(Neighbour, OptionsAddressIsAnsweredWithoutAGid) {
    ModelOptions o;
    o.address = "192.0.2.77";
    Node b(2, o);  // not up: no GID at all
    Model far;
    rig::test::TempDir dir;
    Wire wire(b.nic, far);
    ASSERT_TRUE(wire.capture(dir.path() / "w.pcap"));
    const Bytes request =
        bytes({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0,   0, 0, 0, 1, 0x08, 0x06, 0, 1, 0x08, 0x00, 6, 4, 0,
               1,    2,    0,    0,    0,    0,    1, 192, 0, 2, 1, 0, 0,    0,    0, 0, 0,    192,  0, 2, 77});
    b.faults.receive(request);
    b.nic.settle();
    wire.stop_capture();
    EXPECT_EQ(b.nic.rx_counters().arp_requests, 1u);
    const auto frames = rig::test::read_pcap(dir.path() / "w.pcap").frames;
    ASSERT_EQ(frames.size(), 1u);
    EXPECT_EQ(frames[0].bytes, bytes({2, 0, 0, 0, 0, 1, 2, 0,   0, 0, 0,  2, 0x08, 0x06, 0, 1, 0x08, 0x00, 6, 4, 0,
                                      2, 2, 0, 0, 0, 0, 2, 192, 0, 2, 77, 2, 0,    0,    0, 0, 1,    192,  0, 2, 1}));
}

TEST(Neighbour, OptionsAddressThatIsNoAddressThrowsNamingIt) {
    ModelOptions o;
    o.address = "192.0.2";
    try {
        Model n(o);
        FAIL() << "no throw";
    } catch (const std::invalid_argument& e) {
        EXPECT_EQ(
            std::string(e.what()),
            "rig::bnxt::sim::ModelOptions::address \"192.0.2\" is neither an IPv4 nor an IPv6 address (numeric, as "
            "\"192.0.2.1\" or \"fe80::1\")");
    }
}

TEST(Neighbour, ResolveOnNoCableIsAnError) {
    Node n(1);
    n.up();
    const auto mac = n.nic.resolve(ipv4(10, 0, 0, 2), 10ms);
    ASSERT_FALSE(mac);
    EXPECT_EQ(mac.error(), "bnxt model: resolve ::ffff:10.0.0.2: the port is on no cable");
    EXPECT_THROW((void)n.nic.resolve(ipv4(10, 0, 0, 2), 0ms), std::invalid_argument);
}

}  // namespace
}  // namespace rig::bnxt::sim::test
