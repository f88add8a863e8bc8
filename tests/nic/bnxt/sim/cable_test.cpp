// A cable's faults (cable.hpp: inject, hold), seen from outside the cable: a model's
// port cabled by a datagram cable to a UDP socket of the test's, so that the test reads
// what the cable let out, in the order it came, and compares it byte for byte with the
// cable's capture of what the port handed over; and datagrams the test sends that reach
// the port or not. Every frame comes out at most twice, at most reorder_window - 1 places
// late, each count exact for its seed.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
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
using End = Cable::End;
using rig::test::eventually;

// The cable's far end; its receive buffer holds a burst of a few hundred small frames.
struct Peer : rig::test::UdpSocket {
    Peer() : UdpSocket(4 << 20) {}
};

// A's port on a datagram cable to the Peer; B only gives A's QP a peer to point at.
class CableFaultTest : public Pair {
protected:
    void SetUp() override {
        wire.reset();
        auto c = DatagramCable::open(a.nic, "127.0.0.1:0", peer.address());
        ASSERT_TRUE(c) << c.error();
        cable = std::move(*c);
        open({.mtu_code = 0});  // path MTU 256: small frames, many of them in the peer's buffer
    }

    // One SEND of `packets` packets from A (no acknowledgement comes: the window lets up
    // to 256 leave), captured as A handed them over; returns what the Peer received.
    std::vector<Bytes> send_packets(std::uint32_t packets) {
        EXPECT_TRUE(cable->capture(dir.path() / "sent.pcap"));
        a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, packets * 256}});
        a.settle();
        cable->stop_capture();
        for (const auto& f : rig::test::read_pcap(dir.path() / "sent.pcap").frames) sent.push_back(f.bytes);
        return peer.receive_all();
    }

    // The place in `sent` of each frame received (each frame of the SEND differs by its PSN).
    std::vector<std::size_t> places(const std::vector<Bytes>& received) {
        std::map<Bytes, std::size_t> place;
        for (std::size_t i = 0; i < sent.size(); ++i) place.emplace(sent[i], i);
        EXPECT_EQ(place.size(), sent.size());
        std::vector<std::size_t> out;
        for (const Bytes& r : received) {
            const auto it = place.find(r);
            if (it == place.end()) {
                ADD_FAILURE() << "a frame that was never sent came out";
                continue;
            }
            out.push_back(it->second);
        }
        return out;
    }

    rig::test::TempDir dir;
    Peer peer;
    std::unique_ptr<DatagramCable> cable;
    std::vector<Bytes> sent;
};

TEST_F(CableFaultTest, NoFaultsCarryEveryFrameOnceInOrder) {
    const auto received = send_packets(200);
    ASSERT_EQ(sent.size(), 200u);
    ASSERT_EQ(received.size(), 200u);
    for (std::size_t i = 0; i < received.size(); ++i) ASSERT_EQ(received[i], sent[i]) << i;
    const auto k = cable->fault_counters(End::first);
    EXPECT_EQ(k.carried, 200u);
    EXPECT_EQ(k.dropped + k.held + k.duplicated + k.reordered, 0u);
}

TEST_F(CableFaultTest, DropLosesFramesAndKeepsTheOrderOfTheRest) {
    cable->inject(End::first, {.drop = 0.1, .seed = 11});
    const auto received = send_packets(250);
    const auto k = cable->fault_counters(End::first);
    EXPECT_EQ(k.carried, 250u);
    EXPECT_EQ(k.dropped, 23u);  // seed 11: 9.2%
    EXPECT_EQ(k.duplicated + k.reordered + k.held, 0u);
    ASSERT_EQ(received.size(), k.carried - k.dropped);
    const auto at = places(received);
    EXPECT_TRUE(std::is_sorted(at.begin(), at.end()));
    EXPECT_EQ(std::adjacent_find(at.begin(), at.end()), at.end());  // none twice
}

TEST_F(CableFaultTest, DuplicateSendsACopyRightBehindTheFrame) {
    cable->inject(End::first, {.duplicate = 0.05, .seed = 12});
    const auto received = send_packets(250);
    const auto k = cable->fault_counters(End::first);
    EXPECT_EQ(k.duplicated, 8u);  // seed 12
    ASSERT_EQ(received.size(), 250u + k.duplicated);
    const auto at = places(received);
    std::size_t twice = 0;
    for (std::size_t i = 0; i < at.size(); ++i) {
        ASSERT_EQ(at[i], i - twice) << i;  // in order, a copy repeating the frame before it
        if (i + 1 < at.size() && at[i + 1] == at[i]) ++twice, ++i;
    }
    EXPECT_EQ(twice, k.duplicated);
}

TEST_F(CableFaultTest, ReorderMovesFramesAtMostWindowMinusOnePlacesLate) {
    cable->inject(End::first, {.reorder = 0.2, .reorder_window = 8, .seed = 17});
    const auto received = send_packets(250);
    const auto k = cable->fault_counters(End::first);
    EXPECT_EQ(k.reordered, 44u);  // seed 17
    EXPECT_EQ(k.dropped + k.duplicated, 0u);
    ASSERT_EQ(received.size(), 250u);
    const auto at = places(received);
    std::size_t out_of_order = 0;
    for (std::size_t i = 0; i < at.size(); ++i) {
        // The frames that came out before this one but were sent after it.
        std::size_t overtook = 0;
        for (std::size_t j = 0; j < i; ++j) overtook += at[j] > at[i];
        EXPECT_LE(overtook, 7u) << "frame " << at[i];
        out_of_order += overtook > 0;
    }
    EXPECT_GT(out_of_order, 0u);
    EXPECT_LE(out_of_order, k.reordered);
    std::vector<std::size_t> sorted = at;
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t i = 0; i < sorted.size(); ++i) ASSERT_EQ(sorted[i], i);  // none twice, none lost
    // The port's step handed the cable its frames 64 at a time: none crossed into another batch.
    for (std::size_t i = 0; i < at.size(); ++i) EXPECT_EQ(at[i] / 64, i / 64) << i;
}

TEST_F(CableFaultTest, SameSeedMeetsTheSameFaults) {
    const Cable::Faults faults{.drop = 0.1, .duplicate = 0.1, .seed = 14};
    cable->inject(End::first, faults);
    const auto first = places(send_packets(120));
    // As many frames again from a second QP of A, the cable reseeded alike.
    sent.clear();
    cable->inject(End::first, faults);
    Qp q = a.create_qp(acq, acq, 64, 64);
    Qp r = b.create_qp(bcq, bcq, 64, 64);
    Node::connect(a, q, b, r, 0);
    EXPECT_TRUE(cable->capture(dir.path() / "again.pcap"));
    a.post_send(q, spec::wqe_send, spec::signal_comp, {{abuf, akey, 120 * 256}});
    a.settle();
    cable->stop_capture();
    for (const auto& f : rig::test::read_pcap(dir.path() / "again.pcap").frames) sent.push_back(f.bytes);
    const auto second = places(peer.receive_all());
    const auto k = cable->fault_counters(End::first);
    EXPECT_EQ(k.dropped, 2 * 13u);  // seed 14, twice: 13 lost and 13 sent twice each time
    EXPECT_EQ(k.duplicated, 2 * 13u);
    EXPECT_EQ(first.size(), 120u);
    EXPECT_EQ(second, first);
    // Another seed, other faults.
    cable->inject(End::first, {.drop = 0.1, .duplicate = 0.1, .seed = 15});
    sent.clear();
    Qp q3 = a.create_qp(acq, acq, 64, 64);
    Qp r3 = b.create_qp(bcq, bcq, 64, 64);
    Node::connect(a, q3, b, r3, 0);
    EXPECT_TRUE(cable->capture(dir.path() / "other.pcap"));
    a.post_send(q3, spec::wqe_send, spec::signal_comp, {{abuf, akey, 120 * 256}});
    a.settle();
    cable->stop_capture();
    for (const auto& f : rig::test::read_pcap(dir.path() / "other.pcap").frames) sent.push_back(f.bytes);
    EXPECT_NE(places(peer.receive_all()), first);
}

TEST_F(CableFaultTest, FramesFromTheSocketMeetTheSecondEndsFaults) {
    cable->inject(End::second, {.drop = 0.1, .duplicate = 0.1, .seed = 15});
    Bytes frame(60);
    for (std::uint32_t i = 0; i < 300; ++i) {
        frame[0] = std::byte{0xFF};  // broadcast: not RoCE, counted and dropped by the port
        frame[20] = static_cast<std::byte>(i);
        peer.send_to(cable->local(), frame);
    }
    ASSERT_TRUE(eventually([&] { return cable->fault_counters(End::second).carried == 300; }));
    const auto k = cable->fault_counters(End::second);
    EXPECT_EQ(k.dropped, 39u);     // seed 15
    EXPECT_EQ(k.duplicated, 18u);  // of the 261 left
    EXPECT_TRUE(eventually([&] { return a.counters().frames_received == 300 - k.dropped + k.duplicated; }))
        << a.counters().frames_received;
    EXPECT_EQ(cable->fault_counters(End::first).carried, 0u);  // the port sent nothing
}

TEST_F(CableFaultTest, HoldLosesEverythingUntilResume) {
    cable->hold();
    cable->hold();  // idempotent
    Bytes frame(60);
    frame[0] = std::byte{0xFF};
    for (int i = 0; i < 10; ++i) peer.send_to(cable->local(), frame);
    ASSERT_TRUE(eventually([&] { return cable->fault_counters(End::second).carried == 10; }));
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 3 * 256}});
    a.settle();
    EXPECT_TRUE(peer.receive_all(50ms).empty());
    EXPECT_EQ(cable->fault_counters(End::first).held, 3u);
    EXPECT_EQ(cable->fault_counters(End::second).held, 10u);
    EXPECT_EQ(a.counters().frames_received, 0u);
    cable->resume();
    for (int i = 0; i < 10; ++i) peer.send_to(cable->local(), frame);
    EXPECT_TRUE(eventually([&] { return a.counters().frames_received == 10; }));
    EXPECT_EQ(cable->fault_counters(End::second).held, 10u);
    cable->reset_fault_counters();
    EXPECT_EQ(cable->fault_counters(End::second).carried, 0u);
}

TEST(CableFaults, ProbabilityOutsideZeroToOneOrNoReorderWindowThrows) {
    Model nic;
    Model other;
    Wire wire(nic, other);
    EXPECT_THROW(wire.inject({.drop = 1.5}), std::invalid_argument);
    EXPECT_THROW(wire.inject({.duplicate = -0.1}), std::invalid_argument);
    EXPECT_THROW(wire.inject(End::second, {.reorder = 0.5, .reorder_window = 1}), std::invalid_argument);
    EXPECT_NO_THROW(wire.inject({.drop = 1, .duplicate = 0, .reorder = 0, .reorder_window = 0}));
}

}  // namespace
}  // namespace rig::bnxt::sim::test
