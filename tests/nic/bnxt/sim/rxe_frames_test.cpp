// The model against frames Linux's rxe really sent (tests/interop/fixtures, captured from
// rdma_rxe in two QEMU guests: 52:54:00:00:00:02 / 10.77.0.2 the server, :03 / 10.77.0.3
// the client, both with QP 0x11, path MTU 1024). The model computes the ICRC each frame
// carries; a port set up as the frame's destination takes every one through its checks;
// as rxe's server it takes the client's ping into a receive, acknowledges it with the
// bytes rxe acknowledged it with, sends the pong as rxe sent it and completes it on the
// client's acknowledgement; and it answers rxe's ARP request with the bytes rxe's client
// answered. The frames the model sends differ from rxe's only where rxe's own choices
// are free: the IPv4 identification (rxe counts, the model sends 0 with DF, RFC 6864),
// hence the IPv4 checksum and the ICRC, which covers the identification.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <map>
#include <thread>

#include "../../../support/pcap.hpp"
#include "../../../support/temp_dir.hpp"
#include "harness.hpp"
#include "rig/bnxt/sim/testing/frames.hpp"

namespace rig::bnxt::sim::test {
namespace {

const std::filesystem::path fixtures = RIG_RXE_FIXTURES;

constexpr Mac server_mac{0x52, 0x54, 0x00, 0x00, 0x00, 0x02};
constexpr Mac client_mac{0x52, 0x54, 0x00, 0x00, 0x00, 0x03};
constexpr Gid server_gid{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 10, 77, 0, 2};
constexpr Gid client_gid{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 10, 77, 0, 3};
constexpr std::uint32_t rxe_qpn = 0x11;

std::vector<Bytes> frames_of(const std::string& name) {
    std::vector<Bytes> out;
    for (auto& f : rig::test::read_pcap(fixtures / name).frames) out.push_back(std::move(f.bytes));
    return out;
}

std::uint32_t be(const Bytes& f, std::size_t at, unsigned n) {
    std::uint32_t v = 0;
    for (unsigned i = 0; i < n; ++i) v = v << 8 | std::to_integer<std::uint32_t>(f[at + i]);
    return v;
}

bool is_roce_v2(const Bytes& f) { return f.size() > 42 && be(f, 12, 2) == 0x0800 && be(f, 36, 2) == 4791; }
std::uint32_t psn_of(const Bytes& f) { return be(f, 42 + 9, 3); }
std::uint32_t carried_icrc(const Bytes& f) {
    std::uint32_t v = 0;
    for (unsigned i = 0; i < 4; ++i) v |= std::to_integer<std::uint32_t>(f[f.size() - 4 + i]) << (8 * i);
    return v;
}
Mac destination(const Bytes& f) {
    Mac m;
    for (int i = 0; i < 6; ++i) m[i] = std::to_integer<std::uint8_t>(f[i]);
    return m;
}

// A frame with the fields rxe chooses freely blanked: IPv4 identification and checksum,
// and the ICRC.
Bytes invariant(Bytes f) {
    for (std::size_t at : {18u, 19u, 24u, 25u}) f[at] = std::byte{0};
    for (std::size_t i = f.size() - 4; i < f.size(); ++i) f[i] = std::byte{0};
    return f;
}

// A model port as one of the two guests: its MAC and address, QP 0x11 (the sixteenth the
// model creates) connected to the other guest's QP 0x11 at `rq_psn`, sending from
// `sq_psn`, a DMA MR and a buffer; a Wire to a port that never runs, so that its frames
// can be captured.
struct RxePort {
    RxePort(const Mac& mac, const Gid& gid, const Mac& peer_mac, const Gid& peer_gid, std::uint32_t rq_psn,
            std::uint32_t sq_psn)
        : node(mac) {
        node.gid = gid;
        node.up();
        cq = node.create_cq(256);
        for (int i = 0; i < 16 && qp.qpn != rxe_qpn; ++i) qp = node.create_qp(cq, cq, 64, 64);
        EXPECT_EQ(qp.qpn, rxe_qpn);
        EXPECT_EQ(node.to_init(qp), 0);
        EXPECT_EQ(node.to_rtr(qp, peer_gid, peer_mac, rxe_qpn, rq_psn, 2), 0);
        qp.psn = sq_psn;
        EXPECT_EQ(node.to_rts(qp), 0);
        key = node.dma_mr(spec::mr_local_write | spec::mr_remote_read);
        buffer = node.bus.alloc(1 << 20);
    }
    Node node;
    Model far;  // the other end of the Wire: never attached, never stepped
    Wire wire{node.nic, far};
    Cq cq;
    Qp qp;
    std::uint32_t key = 0;
    std::uint64_t buffer = 0;
};

TEST(RxeFrames, ModelComputesTheIcrcEveryRxeFrameCarries) {
    std::size_t checked = 0;
    for (const auto& entry : std::filesystem::directory_iterator(fixtures)) {
        if (entry.path().extension() != ".pcap") continue;
        for (const Bytes& f : frames_of(entry.path().filename().string())) {
            if (!is_roce_v2(f)) continue;
            EXPECT_EQ(testing::icrc(f), carried_icrc(f)) << entry.path().filename() << ", PSN " << psn_of(f);
            ++checked;
        }
    }
    EXPECT_EQ(checked, 44u);  // rc_pingpong 64 (8), 1027 (6), 4096 (10), ib_send_bw (10), ib_read_bw (10)
}

TEST(RxeFrames, PortsAsTheGuestsTakeEveryRxeFrameThroughTheirChecks) {
    for (const char* name :
         {"rc_pingpong_64.pcap", "rc_pingpong_1027.pcap", "rc_pingpong_4096.pcap", "ib_send_bw_4096.pcap"}) {
        const auto frames = frames_of(name);
        // Each port expects the first PSN the other sends it.
        std::map<Mac, std::uint32_t> first_psn;
        for (const Bytes& f : frames)
            if (is_roce_v2(f) && be(f, 42, 1) != 0x11) first_psn.emplace(destination(f), psn_of(f));
        RxePort server(server_mac, server_gid, client_mac, client_gid, first_psn[server_mac], first_psn[client_mac]);
        RxePort client(client_mac, client_gid, server_mac, server_gid, first_psn[client_mac], first_psn[server_mac]);
        for (RxePort* p : {&server, &client})
            for (int i = 0; i < 8; ++i) p->node.post_recv(p->qp, i, {{p->buffer + i * 4096u, p->key, 4096}});
        std::size_t to_server = 0, to_client = 0;
        for (const Bytes& f : frames) {
            RxePort& port = destination(f) == server_mac ? server : client;
            (destination(f) == server_mac ? to_server : to_client) += 1;
            port.node.faults.receive(f);
            port.node.settle();
        }
        EXPECT_EQ(server.node.nic.rx_counters().delivered, to_server) << name;
        EXPECT_EQ(client.node.nic.rx_counters().delivered, to_client) << name;
    }
}

// ibv_rc_pingpong -s 4096 (fixtures/README.md): the client's SEND FIRST, MIDDLE, MIDDLE,
// LAST (AckReq), the server's ACK, the server's pong of the same four, the client's ACK.
// Then -s 1027: FIRST of 1024 and LAST of 3 bytes with PadCnt 1.
void serve_pingpong(const char* name, std::size_t bytes, std::size_t packets) {
    const auto frames = frames_of(name);
    ASSERT_EQ(frames.size(), 2 * packets + 2) << name;
    const std::vector<Bytes> ping(frames.begin(), frames.begin() + static_cast<std::ptrdiff_t>(packets));
    const Bytes& rxe_ack = frames[packets];
    const std::vector<Bytes> pong(frames.begin() + static_cast<std::ptrdiff_t>(packets) + 1,
                                  frames.begin() + static_cast<std::ptrdiff_t>(2 * packets) + 1);
    const Bytes& client_ack = frames.back();
    rig::test::TempDir dir;
    RxePort server(server_mac, server_gid, client_mac, client_gid, psn_of(ping[0]), psn_of(pong[0]));
    ASSERT_TRUE(server.wire.capture(dir.path() / "server.pcap"));
    server.node.post_recv(server.qp, 1, {{server.buffer, server.key, 4096}});
    for (const Bytes& f : ping) server.node.faults.receive(f);
    server.node.settle();
    // The ping's bytes in the receive: each frame's payload, its pad and ICRC left out.
    Bytes sent;
    for (const Bytes& f : ping) {
        const std::size_t pad = (be(f, 43, 1) >> 4) & 3;
        sent.insert(sent.end(), f.begin() + 54, f.end() - 4 - static_cast<std::ptrdiff_t>(pad));
    }
    ASSERT_EQ(sent.size(), bytes);
    const auto received = server.node.poll(server.cq);
    ASSERT_TRUE(received) << name;
    EXPECT_EQ(received->status(), 0);
    EXPECT_EQ(received->length(), bytes);
    EXPECT_TRUE(server.node.bus.peek(server.buffer, bytes) == sent);
    // The pong, sent back from the same bytes, and the client's ACK completes it.
    server.node.post_send(server.qp, spec::wqe_send, spec::signal_comp,
                          {{server.buffer, server.key, static_cast<std::uint32_t>(bytes)}});
    server.node.settle();
    server.node.faults.receive(client_ack);
    server.node.settle();
    const auto completed = server.node.poll(server.cq);
    ASSERT_TRUE(completed) << name;
    EXPECT_EQ(completed->status(), 0);
    server.wire.stop_capture();
    const auto out = rig::test::read_pcap(dir.path() / "server.pcap").frames;
    ASSERT_EQ(out.size(), 1 + packets) << name;
    EXPECT_EQ(invariant(out[0].bytes), invariant(rxe_ack)) << name << ": the ACK";
    for (std::size_t i = 0; i < packets; ++i)
        EXPECT_EQ(invariant(out[1 + i].bytes), invariant(pong[i])) << name << ": pong packet " << i;
    EXPECT_EQ(server.node.nic.rx_counters().delivered, packets + 1);
}

TEST(RxeFrames, ServerPortTakesRxesPingAndAnswersAsRxeDid4096) { serve_pingpong("rc_pingpong_4096.pcap", 4096, 4); }
TEST(RxeFrames, ServerPortTakesRxesPingAndAnswersAsRxeDid1027WithPad) {
    serve_pingpong("rc_pingpong_1027.pcap", 1027, 2);
}

// fixtures/arp.pcap: the server's ARP request for the client (broadcast), the client's reply.
TEST(RxeFrames, PortAnswersRxesArpRequestWithTheBytesRxesClientAnswered) {
    const auto frames = frames_of("arp.pcap");
    ASSERT_EQ(frames.size(), 2u);
    rig::test::TempDir dir;
    Node client(client_mac);
    client.gid = client_gid;
    client.up();
    Model far;
    Wire wire(client.nic, far);
    ASSERT_TRUE(wire.capture(dir.path() / "arp.pcap"));
    client.faults.receive(frames[0]);
    client.settle();
    wire.stop_capture();
    const auto out = rig::test::read_pcap(dir.path() / "arp.pcap").frames;
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].bytes, frames[1]);
    EXPECT_EQ(client.nic.rx_counters().arp_requests, 1u);
}

TEST(RxeFrames, ResolveAsksWithTheBytesOfRxesArpRequestAndTakesTheReply) {
    const auto frames = frames_of("arp.pcap");
    rig::test::TempDir dir;
    Node server(server_mac);
    server.gid = server_gid;
    server.up();
    Model far;
    Wire wire(server.nic, far);
    ASSERT_TRUE(wire.capture(dir.path() / "resolve.pcap"));
    server.nic.start();
    auto asked =
        std::async(std::launch::async, [&] { return server.nic.resolve(client_gid, std::chrono::seconds(10)); });
    // The request is on the wire; the client's reply arrives.
    for (int i = 0; i < 10'000 && server.faults.counters().frames_sent == 0; ++i)
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    server.faults.receive(frames[1]);
    const auto mac = asked.get();
    ASSERT_TRUE(mac) << mac.error();
    EXPECT_EQ(*mac, client_mac);
    server.nic.stop();
    wire.stop_capture();
    const auto out = rig::test::read_pcap(dir.path() / "resolve.pcap").frames;
    ASSERT_GE(out.size(), 1u);
    EXPECT_EQ(out[0].bytes, frames[0]);
    EXPECT_EQ(server.nic.rx_counters().neighbor_answers, 1u);
}

}  // namespace
}  // namespace rig::bnxt::sim::test
