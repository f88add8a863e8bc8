// The datagram cable (datagram.hpp): two models on their threads cabled over UDP on
// 127.0.0.1, moving data both ways with every byte checked; the errors of bind and
// connect, naming the address; datagrams that are no Ethernet frame or come from another
// peer, dropped and counted; a peer with nothing bound, reported; cables and models
// destroyed while datagrams flow.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "../../../support/eventually.hpp"
#include "../../../support/pcap.hpp"
#include "../../../support/temp_dir.hpp"
#include "../../../support/udp_socket.hpp"
#include "pair.hpp"
#include "rig/bnxt/sim/datagram.hpp"

namespace rig::bnxt::sim::test {
namespace {

using namespace std::chrono_literals;
using rig::test::eventually;
using Udp = rig::test::UdpSocket;

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::unique_ptr<DatagramCable> bound(Model& nic, const char* local = "127.0.0.1:0") {
    auto c = DatagramCable::bind(nic, local);
    if (!c) throw std::runtime_error(c.error());
    return std::move(*c);
}

// The Pair's models cabled to each other by two datagram cables on 127.0.0.1 instead of
// the Wire, both on their threads once open() brought them up (by hand).
class DatagramTest : public Pair {
protected:
    void cable_and_start(PairConfig config = {}) {
        wire.reset();
        ca = bound(a.nic);
        cb = bound(b.nic);
        ASSERT_TRUE(ca->connect(cb->local()));
        ASSERT_TRUE(cb->connect(ca->local()));
        open(config);
        a.nic.start();
        b.nic.start();
    }

    // One CQE of `node`'s CQ; the kernel may drop datagrams for want of socket buffer,
    // so the models' clocks move on (past the QPs' local ACK timeout) while none comes.
    std::optional<Cqe> next(Node& node, Cq& cq) {
        const auto deadline = std::chrono::steady_clock::now() + 60s;
        auto quiet = std::chrono::steady_clock::now();
        while (std::chrono::steady_clock::now() < deadline) {
            if (auto c = node.poll(cq)) return *c;
            if (std::chrono::steady_clock::now() - quiet > 20ms) {
                a.clock.advance(100ms);
                b.clock.advance(100ms);
                quiet = std::chrono::steady_clock::now();
            }
            std::this_thread::yield();
        }
        const auto ka = ca->counters(), kb = cb->counters();
        ADD_FAILURE() << "no CQE within 60 s; datagrams A sent " << ka.datagrams_sent << ", received "
                      << ka.datagrams_received << "; B sent " << kb.datagrams_sent << ", received "
                      << kb.datagrams_received << " (overflows " << kb.receive_overflows << ", not Ethernet "
                      << kb.not_ethernet << ", foreign " << kb.foreign << "); frames A sent "
                      << a.counters().frames_sent << ", dropped " << a.counters().frames_dropped << "; B received "
                      << b.counters().frames_received << ", dropped " << b.counters().frames_dropped;
        return std::nullopt;
    }

    // n bytes from A into a receive on B, then back into A's zeroed buffer by RDMA READ.
    void send_and_read_back(std::uint64_t n, std::uint32_t seed) {
        const Bytes data = pattern(n, seed);
        a.bus.poke(abuf, data);
        b.bus.poke(bbuf, Bytes(n));
        b.post_recv(bqp, seed, {{bbuf, bkey, static_cast<std::uint32_t>(n)}});
        a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, static_cast<std::uint32_t>(n)}});
        const auto received = next(b, bcq);
        ASSERT_TRUE(received);
        ASSERT_EQ(received->status(), 0);
        ASSERT_EQ(received->length(), n);
        ASSERT_EQ(received->wr_id(), seed);
        const auto sent = next(a, acq);
        ASSERT_TRUE(sent);
        ASSERT_EQ(sent->status(), 0);
        ASSERT_TRUE(b.bus.peek(bbuf, n) == data) << n << " bytes sent";
        a.bus.poke(abuf, Bytes(n));
        a.post_send(aqp, spec::wqe_read, spec::signal_comp, {{abuf, akey, static_cast<std::uint32_t>(n)}}, 0, bbuf,
                    bkey);
        const auto read = next(a, acq);
        ASSERT_TRUE(read);
        ASSERT_EQ(read->status(), 0);
        ASSERT_TRUE(a.bus.peek(abuf, n) == data) << n << " bytes read";
    }

    std::unique_ptr<DatagramCable> ca, cb;
};

TEST_F(DatagramTest, SendAndReadOverUdpArriveByteForByte) {
    cable_and_start({.mtu_code = 4});  // path MTU 4096
    std::uint32_t seed = 0;
    for (std::uint64_t n : {1ull, 4096ull, 4097ull, 1ull << 20}) {
        send_and_read_back(n, ++seed);
        if (HasFatalFailure()) return;
    }
    a.nic.stop();
    b.nic.stop();
    const auto ka = ca->counters(), kb = cb->counters();
    EXPECT_EQ(ka.datagrams_sent, a.counters().frames_sent);  // one datagram per frame
    EXPECT_EQ(kb.datagrams_sent, b.counters().frames_sent);
    EXPECT_EQ(ka.datagrams_received + kb.datagrams_received,
              a.counters().frames_received + b.counters().frames_received);
    EXPECT_GE(ka.datagrams_sent, (1u << 20) / 4096);  // the 1 MiB send
    EXPECT_GE(kb.datagrams_sent, (1u << 20) / 4096);  // the 1 MiB read's responses
    EXPECT_EQ(ka.not_ethernet + kb.not_ethernet + ka.foreign + kb.foreign, 0u);
    EXPECT_EQ(ka.send_failures + kb.send_failures, 0u);
    EXPECT_TRUE(ca->status());
    EXPECT_EQ(ca->remote(), cb->local());
}

TEST_F(DatagramTest, ManySmallSendsArriveInOrder) {
    cable_and_start({.sq_size = 64, .rq_size = 64, .cq_size = 256});
    for (std::uint32_t i = 0; i < 300; ++i) {
        b.post_recv(bqp, i, {{bbuf + 8 * (i % 64), bkey, 8}});
        a.bus.put(abuf + 8 * (i % 64), 4, 0xC0000000u + i);
        a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf + 8 * (i % 64), akey, 4}});
        const auto r = next(b, bcq);
        ASSERT_TRUE(r);
        ASSERT_EQ(r->wr_id(), i);
        ASSERT_EQ(b.bus.get(bbuf + 8 * (i % 64), 4), 0xC0000000u + i);
        const auto s = next(a, acq);
        ASSERT_TRUE(s);
        ASSERT_EQ(s->status(), 0);
    }
}

// The capture of one port's datagram cable holds what the port sent and what it received.
TEST_F(DatagramTest, CaptureHoldsTheFramesOfBothDirections) {
    rig::test::TempDir dir;
    cable_and_start();
    ASSERT_TRUE(ca->capture(dir.path() / "a.pcap"));
    send_and_read_back(3000, 1);
    a.nic.stop();
    b.nic.stop();
    ca->stop_capture();
    const auto c = rig::test::read_pcap(dir.path() / "a.pcap");
    const auto k = ca->counters();
    EXPECT_EQ(c.frames.size(), k.datagrams_sent + k.datagrams_received);
    EXPECT_EQ(rig::test::frames_from(c, a.mac), k.datagrams_sent);
    EXPECT_EQ(rig::test::frames_from(c, b.mac), k.datagrams_received);
    EXPECT_GE(k.datagrams_received, 3u);  // the read's three responses of 1024 bytes
    for (std::size_t i = 1; i < c.frames.size(); ++i) EXPECT_GE(c.frames[i].ns, c.frames[i - 1].ns) << i;
}

// Captures opened and closed on both cables while the models' and the receive threads
// carry frames (this test runs under TSan too); each file is whole when read back.
TEST_F(DatagramTest, CapturesOpenedAndClosedWhileFramesFlowAreWhole) {
    rig::test::TempDir dir;
    cable_and_start({.mtu_code = 4});
    std::atomic<bool> done{false};
    std::thread capturing([&] {
        for (int i = 0; !done; ++i) {
            ASSERT_TRUE(ca->capture(dir.path() / ("a" + std::to_string(i % 2) + ".pcap")));
            ASSERT_TRUE(cb->capture(dir.path() / "b.pcap"));
            std::this_thread::yield();
            cb->stop_capture();
        }
    });
    for (std::uint32_t i = 1; i <= 4; ++i) send_and_read_back(256 * 1024, i);
    done = true;
    capturing.join();
    ca->stop_capture();
    for (const char* name : {"a0.pcap", "a1.pcap", "b.pcap"}) {
        if (!std::filesystem::exists(dir.path() / name)) continue;  // a1: the loop may have run once
        for (const auto& f : rig::test::read_pcap(dir.path() / name).frames)
            EXPECT_EQ(f.length, f.bytes.size()) << name;
    }
}

TEST(DatagramCable, BindToAPortInUseIsAnErrorNamingTheAddress) {
    Model one, two;
    auto first = bound(one);
    auto second = DatagramCable::bind(two, first->local());
    ASSERT_FALSE(second);
    EXPECT_TRUE(has(second.error(), "udp " + first->local() + ": the port is in use")) << second.error();
}

TEST(DatagramCable, TextThatIsNoAddressAndPortIsAnErrorNamingIt) {
    for (const char* text : {"127.0.0.1", "localhost:4791", "::1:4791", "127.0.0.1:65536", "[::1]4791", "300.1.2.3:1",
                             "127.0.0.1:", ":4791", "127.0.0.1:47x"}) {
        Model nic;
        auto c = DatagramCable::bind(nic, text);
        ASSERT_FALSE(c) << text;
        EXPECT_EQ(c.error(), std::string("udp local address '") + text +
                                 "': not an IPv4 or IPv6 address and port (127.0.0.1:4791, [::1]:4791)");
    }
}

TEST(DatagramCable, AddressOfAnotherHostIsAnErrorNamingIt) {
    Model nic;
    auto c = DatagramCable::bind(nic, "192.0.2.1:4791");  // TEST-NET-1 (RFC 5737): no host's
    ASSERT_FALSE(c);
    EXPECT_TRUE(has(c.error(), "udp 192.0.2.1:4791: not an address of this host")) << c.error();
}

TEST(DatagramCable, RemoteThatIsNoPeerIsAnErrorNamingIt) {
    Model nic;
    auto c = bound(nic);
    auto r = c->connect("127.0.0.1:0");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), "udp remote address 127.0.0.1:0: port 0 is no peer's");
    r = c->connect("0.0.0.0:4791");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), "udp remote address 0.0.0.0:4791: the unspecified address is no peer's");
    r = c->connect("[::1]:4791");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), "udp remote address [::1]:4791: not of the family of the local address " + c->local());
    r = c->connect("127.0.0.1");
    ASSERT_FALSE(r);
    EXPECT_TRUE(has(r.error(), "'127.0.0.1': not an IPv4 or IPv6 address and port")) << r.error();
    EXPECT_EQ(c->remote(), "");
    ASSERT_TRUE(c->connect("127.0.0.1:4791"));
    EXPECT_THROW((void)c->connect("127.0.0.1:4792"), std::logic_error);
}

TEST(DatagramCable, NicPluggedAlreadyThrows) {
    Model a, b, c, d;
    Wire w(a, b);
    EXPECT_THROW((void)DatagramCable::bind(a, "127.0.0.1:0"), std::invalid_argument);
    auto cable = bound(c);
    EXPECT_THROW((void)DatagramCable::bind(c, "127.0.0.1:0"), std::invalid_argument);
    EXPECT_THROW(Wire(c, d), std::invalid_argument);
}

// A QEMU netdev dgram peer sends the frame alone: 14 bytes of Ethernet header at least,
// no more than the longest frame a port takes. The rest is counted, never delivered.
TEST(DatagramCable, DatagramThatIsNoEthernetFrameIsDroppedAndCounted) {
    Node node(1);
    Udp peer;
    auto cable = bound(node.nic);
    ASSERT_TRUE(cable->connect(peer.address()));
    Bytes frame(60);
    for (std::size_t i = 0; i < 6; ++i) frame[i] = std::byte{node.mac[i]};
    frame[12] = std::byte{0x88};
    frame[13] = std::byte{0xB5};  // IEEE 802 local experimental EtherType: no RoCE
    peer.send_to(cable->local(), Bytes(13));
    peer.send_to(cable->local(), Bytes());
    peer.send_to(cable->local(), Bytes(9000));
    peer.send_to(cable->local(), frame);
    ASSERT_TRUE(eventually([&] { return cable->counters().not_ethernet + cable->counters().datagrams_received == 4; }));
    EXPECT_EQ(cable->counters().not_ethernet, 3u);
    EXPECT_EQ(cable->counters().datagrams_received, 1u);
    EXPECT_EQ(node.counters().frames_received, 1u);  // only the frame reached the port
    node.settle();
    EXPECT_EQ(node.counters().frames_dropped, 1u);  // which takes no frame of that EtherType
}

// The longest frame a port takes: Ethernet, IPv6, UDP, BTH, RETH and immediate data (an RDMA
// WRITE ONLY with immediate) around 4096 bytes of payload (path MTU 4096), and the ICRC:
// 14 + 40 + 8 + 12 + 16 + 4 + 4096 + 4 = 4194 bytes. One byte more is no frame of a port.
TEST(DatagramCable, LongestRoceV2Ipv6FrameOfPathMtu4096PassesAndOneByteMoreDoesNot) {
    Node node(1);
    Udp peer;
    auto cable = bound(node.nic);
    ASSERT_TRUE(cable->connect(peer.address()));
    Bytes frame(4194);
    for (std::size_t i = 0; i < 6; ++i) frame[i] = std::byte{node.mac[i]};
    frame[12] = std::byte{0x86};
    frame[13] = std::byte{0xDD};
    peer.send_to(cable->local(), frame);
    frame.push_back(std::byte{0});
    peer.send_to(cable->local(), frame);
    ASSERT_TRUE(eventually([&] { return cable->counters().not_ethernet + cable->counters().datagrams_received == 2; }));
    EXPECT_EQ(cable->counters().datagrams_received, 1u);
    EXPECT_EQ(cable->counters().not_ethernet, 1u);
}

// Datagrams queued between bind and connect from another address than the remote one.
TEST(DatagramCable, DatagramFromAnotherPeerIsDroppedAndCounted) {
    Node node(1);
    Udp stranger, peer;
    auto cable = bound(node.nic);
    stranger.send_to(cable->local(), Bytes(60));
    ASSERT_TRUE(cable->connect(peer.address()));
    peer.send_to(cable->local(), Bytes(60));
    ASSERT_TRUE(eventually([&] { return cable->counters().datagrams_received == 1; }));
    EXPECT_EQ(cable->counters().foreign, 1u);
    EXPECT_EQ(node.counters().frames_received, 1u);
}

// Nothing is bound at the remote address: its ICMP port unreachable comes back as
// ECONNREFUSED, and status says so, naming both ends.
TEST_F(DatagramTest, PeerWithNothingBoundIsReportedByStatus) {
    wire.reset();
    std::string nobody;
    {
        Udp gone;
        nobody = gone.address();
    }
    auto cable = DatagramCable::open(a.nic, "127.0.0.1:0", nobody);
    ASSERT_TRUE(cable) << cable.error();
    open();
    EXPECT_TRUE((*cable)->status());
    a.nic.start();
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 64}});
    ASSERT_TRUE(eventually([&] { return !(*cable)->status(); }));
    EXPECT_EQ((*cable)->status().error(),
              "udp " + (*cable)->local() + " -> " + nobody +
                  ": the peer refused datagrams (ICMP port unreachable: nothing is bound at " + nobody + ")");
}

// A cable destroyed while both models send over it: their frames are dropped and counted
// from then on, nothing hangs or races (this test runs under TSan too).
TEST_F(DatagramTest, CableDestroyedWhileFramesFlowUnplugsThePorts) {
    cable_and_start({.sq_size = 64, .rq_size = 64, .cq_size = 256});
    for (std::uint32_t i = 0; i < 32; ++i) b.post_recv(bqp, i, {{bbuf + 64 * i, bkey, 64}});
    for (std::uint32_t i = 0; i < 32; ++i) a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 64}});
    ASSERT_TRUE(eventually([&] { return cb->counters().datagrams_received > 0; }));
    ca.reset();
    cb.reset();
    const auto dropped = a.counters().frames_dropped;
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 64}});
    // The new send, or retransmissions of what was not acknowledged, past the timeout.
    ASSERT_TRUE(eventually([&] {
        a.clock.advance(100ms);
        return a.counters().frames_dropped > dropped;
    }));
    a.nic.stop();
    b.nic.stop();
}

// A Model destroyed while datagrams keep arriving for it: the cable counts them, unplugged.
TEST(DatagramCable, NicDestroyedWhileDatagramsArriveLeavesTheCableCounting) {
    Udp peer;
    auto nic = std::make_unique<Model>();
    auto cable = bound(*nic);
    ASSERT_TRUE(cable->connect(peer.address()));
    std::atomic<bool> stop{false};
    std::thread sender([&] {
        while (!stop) peer.send_to(cable->local(), Bytes(64));
    });
    ASSERT_TRUE(eventually([&] { return cable->counters().datagrams_received > 10; }));
    nic.reset();
    ASSERT_TRUE(eventually([&] { return cable->counters().unplugged > 10; }));
    stop = true;
    sender.join();
}

}  // namespace
}  // namespace rig::bnxt::sim::test
