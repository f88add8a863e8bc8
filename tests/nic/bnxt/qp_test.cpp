// Queue pairs end to end: two NICs on two simulated machines joined by a wire
// (rig/bnxt/qp.hpp, cq.hpp; docs/hsi.md §5, §7.2, §7.3). Exact bytes at the receiver,
// completions in posting order, the seed's promises (the bytes are there once the
// completion was taken), and the checks before a request reaches the queue.
#include "rig/bnxt/qp.hpp"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <thread>

#include "../../support/pcap.hpp"
#include "../../support/temp_dir.hpp"
#include "nic_machine.hpp"

namespace rig::bnxt::test {
namespace {

void expect_completion(const Completion& c, std::uint64_t id, Op op, Status status, std::uint32_t bytes) {
    EXPECT_EQ(c.id, id);
    EXPECT_EQ(c.op, op) << to_string(c.op);
    EXPECT_EQ(c.status, status) << to_string(c.status);
    EXPECT_EQ(c.bytes, bytes);
}

TEST(Qp, EndpointCarriesWhatThePeerNeeds) {
    Pair p;
    const Endpoint e = p.sa.qp->endpoint();
    EXPECT_EQ(e.qpn, p.sa.qp->qpn());
    EXPECT_GE(e.qpn, 2u);  // §4.6.8: 0 and 1 are special
    EXPECT_LE(e.psn, 0xFFFFFFu);
    EXPECT_EQ(e.gid, p.sa.nic->gid());
    EXPECT_EQ(e.mac, p.sa.nic->mac());
    EXPECT_EQ(e.mtu, Mtu::Mtu4096);  // the model reports a 9000-byte port (HWRM_FUNC_QCFG admin_mtu)
    EXPECT_EQ(p.sa.qp->state(), QpState::Rts);
    EXPECT_EQ(p.sb.qp->state(), QpState::Rts);
}

TEST(Qp, SendLandsInThePostedReceive) {
    Pair p;
    Region ra = host(*p.sa.nic, 8192), rb = host(*p.sb.nic, 8192);
    const auto data = pattern(3000, 7);
    ra.write(100, data);
    ASSERT_TRUE(p.sb.qp->post(Recv{.region = &rb, .offset = 500, .bytes = 4000, .id = 0xB0B}));
    ASSERT_TRUE(p.sa.qp->post(Send{.region = &ra, .offset = 100, .bytes = 3000, .id = 0xA11CE}));
    const auto sent = take(*p.sa.send_cq, 1);
    ASSERT_EQ(sent.size(), 1u);
    expect_completion(sent[0], 0xA11CE, Op::Send, Status::Ok, 3000);
    EXPECT_EQ(sent[0].qpn, p.sa.qp->qpn());
    const auto got = take(*p.sb.recv_cq, 1);
    ASSERT_EQ(got.size(), 1u);
    expect_completion(got[0], 0xB0B, Op::Recv, Status::Ok, 3000);
    EXPECT_FALSE(got[0].immediate);
    EXPECT_EQ(read_back(rb, 500, 3000), data);
    EXPECT_EQ(read_back(rb, 3500, 100), std::vector<std::byte>(100));  // nothing past the message
}

TEST(Qp, SendWithImmediateGivesItToTheReceiver) {
    Pair p;
    Region ra = host(*p.sa.nic, 4096), rb = host(*p.sb.nic, 4096);
    ASSERT_TRUE(p.sb.qp->post(Recv{.region = &rb, .bytes = 4096, .id = 1}));
    ASSERT_TRUE(p.sa.qp->post(Send{.region = &ra, .bytes = 64, .id = 2, .immediate = 0xC0FFEE}));
    const auto got = take(*p.sb.recv_cq, 1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].immediate, 0xC0FFEEu);
    EXPECT_EQ(got[0].bytes, 64u);
}

TEST(Qp, InlineSendCarriesTheCallersBytes) {
    Pair p;
    Region rb = host(*p.sb.nic, 4096);
    auto data = pattern(96, 3);
    ASSERT_TRUE(p.sb.qp->post(Recv{.region = &rb, .bytes = 4096, .id = 1}));
    ASSERT_TRUE(p.sa.qp->post(Send{.id = 9, .inline_data = data}));
    std::fill(data.begin(), data.end(), std::byte{0});  // copied at the post: the buffer is free again
    const auto got = take(*p.sb.recv_cq, 1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].bytes, 96u);
    EXPECT_EQ(read_back(rb, 0, 96), pattern(96, 3));
    ASSERT_EQ(take(*p.sa.send_cq, 1).size(), 1u);
}

TEST(Qp, InlineSendLongerThanTheLimitThrows) {
    Pair p;
    std::vector<std::byte> data(p.sa.nic->limits().max_inline_data + 1);
    EXPECT_THROW((void)p.sa.qp->post(Send{.id = 1, .inline_data = data}), std::invalid_argument);
}

TEST(Qp, ReadOfAPeersRegionBringsItsBytes) {
    Pair p;
    Region ra = host(*p.sa.nic, 16384), rb = host(*p.sb.nic, 16384);
    const auto data = pattern(10000, 11);
    rb.write(3000, data);
    ASSERT_TRUE(
        p.sa.qp->post(Read{.region = &ra, .offset = 1000, .bytes = 10000, .remote = rb.remote(3000), .id = 77}));
    const auto got = take(*p.sa.send_cq, 1);
    ASSERT_EQ(got.size(), 1u);
    expect_completion(got[0], 77, Op::Read, Status::Ok, 10000);
    EXPECT_EQ(read_back(ra, 1000, 10000), data);
}

// §6.2: a peer's read goes through the page list of its region, at each level: 1 page
// (level 0), 16 pages (level 1), 1024 pages (level 2), at offsets across page and PTE-page
// boundaries of memory the simulator places page by page.
TEST(Qp, ReadsTranslateThroughPageListsOfEachLevel) {
    Pair p;
    for (std::uint64_t pages : {1u, 16u, 1024u}) {
        Region rb = host(*p.sb.nic, pages * 4096);
        Region ra = host(*p.sa.nic, pages * 4096);
        const auto whole = pattern(pages * 4096, static_cast<std::uint32_t>(pages));
        rb.write(0, whole);
        std::vector<std::pair<std::uint64_t, std::uint64_t>> pieces = {{0, 4096}, {100, 200}};
        if (pages > 1) pieces.push_back({4000, 8192});
        if (pages > 512) pieces.push_back({511 * 4096 + 7, 3 * 4096});  // across the first PTE page's end
        if (pages > 512) pieces.push_back({(pages - 1) * 4096, 4096});
        for (auto [offset, n] : pieces) {
            ASSERT_TRUE(p.sa.qp->post(
                Read{.region = &ra, .offset = offset, .bytes = n, .remote = rb.remote(offset), .id = offset}));
            const auto got = take(*p.sa.send_cq, 1);
            ASSERT_EQ(got.size(), 1u);
            ASSERT_EQ(got[0].status, Status::Ok) << pages << " pages at " << offset;
            EXPECT_EQ(read_back(ra, offset, n),
                      std::vector<std::byte>(whole.begin() + static_cast<std::ptrdiff_t>(offset),
                                             whole.begin() + static_cast<std::ptrdiff_t>(offset + n)))
                << pages << " pages at " << offset;
        }
    }
}

// 1000 small sends in a row, the receiver reposting as it goes: every completion on both
// sides in posting order, every message's bytes where its receive put them.
TEST(Qp, ThousandSmallSendsCompleteInPostingOrder) {
    PairOptions o;
    o.depths = {64, 64};
    Pair p(o);
    constexpr std::size_t n = 1000, size = 32;
    Region ra = host(*p.sa.nic, n * size), rb = host(*p.sb.nic, n * size);
    const auto data = pattern(n * size, 5);
    ra.write(0, data);
    std::size_t posted_recv = 0, posted_send = 0;
    std::vector<Completion> sends, recvs;
    std::array<Completion, 16> batch;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while ((sends.size() < n || recvs.size() < n) && std::chrono::steady_clock::now() < deadline) {
        while (posted_recv < n &&
               p.sb.qp->post(Recv{.region = &rb, .offset = posted_recv * size, .bytes = size, .id = posted_recv}))
            ++posted_recv;
        while (
            posted_send < posted_recv &&
            p.sa.qp->post(Send{.region = &ra, .offset = posted_send * size, .bytes = size, .id = 1000 + posted_send}))
            ++posted_send;
        for (std::size_t k = p.sa.send_cq->poll(batch), i = 0; i < k; ++i) sends.push_back(batch[i]);
        for (std::size_t k = p.sb.recv_cq->poll(batch), i = 0; i < k; ++i) recvs.push_back(batch[i]);
    }
    ASSERT_EQ(sends.size(), n);
    ASSERT_EQ(recvs.size(), n);
    for (std::size_t i = 0; i < n; ++i) {
        expect_completion(sends[i], 1000 + i, Op::Send, Status::Ok, size);
        expect_completion(recvs[i], i, Op::Recv, Status::Ok, size);
    }
    EXPECT_EQ(read_back(rb, 0, n * size), data);
}

class MessageSize : public ::testing::TestWithParam<std::uint64_t> {};
INSTANTIATE_TEST_SUITE_P(Qp, MessageSize,
                         ::testing::Values(1u, 7u, 1023u, 1024u, 1025u, 4096u, 4097u, 65536u, 1u << 20));

TEST_P(MessageSize, SendDeliversExactlyTheBytes) {
    Pair p;
    const std::uint64_t n = GetParam();
    Region ra = host(*p.sa.nic, n + 4096), rb = host(*p.sb.nic, n + 4096);
    const auto data = pattern(n, static_cast<std::uint32_t>(n));
    ra.write(3, data);
    ASSERT_TRUE(p.sb.qp->post(Recv{.region = &rb, .offset = 5, .bytes = n, .id = 1}));
    ASSERT_TRUE(p.sa.qp->post(Send{.region = &ra, .offset = 3, .bytes = n, .id = 2}));
    const auto got = take(*p.sb.recv_cq, 1);
    ASSERT_EQ(got.size(), 1u);
    expect_completion(got[0], 1, Op::Recv, Status::Ok, static_cast<std::uint32_t>(n));
    EXPECT_EQ(read_back(rb, 5, n), data);
    ASSERT_EQ(take(*p.sa.send_cq, 1).size(), 1u);
}

TEST(Qp, UnsignalledSendsCompleteOnlyWithTheSignalledOne) {
    Pair p;
    Region ra = host(*p.sa.nic, 4096), rb = host(*p.sb.nic, 4096);
    for (std::uint64_t i = 0; i < 11; ++i)
        ASSERT_TRUE(p.sb.qp->post(Recv{.region = &rb, .offset = i * 64, .bytes = 64, .id = i}));
    for (std::uint64_t i = 0; i < 10; ++i)
        ASSERT_TRUE(p.sa.qp->post(Send{.region = &ra, .bytes = 64, .id = i, .signalled = Signal::No}));
    ASSERT_TRUE(p.sa.qp->post(Send{.region = &ra, .bytes = 64, .id = 10}));
    EXPECT_EQ(take(*p.sb.recv_cq, 11).size(), 11u);
    const auto sent = take(*p.sa.send_cq, 1);
    ASSERT_EQ(sent.size(), 1u);
    EXPECT_EQ(sent[0].id, 10u);
    std::array<Completion, 4> more;
    EXPECT_EQ(p.sa.send_cq->poll(more), 0u);
    // The unsignalled ones were retired with it: the whole queue is free again.
    for (std::uint64_t i = 0; i < p.sa.qp->depths().send; ++i)
        ASSERT_TRUE(p.sa.qp->post(Send{.region = &ra, .bytes = 0, .id = i, .signalled = Signal::No}));
}

TEST(Qp, FullSendQueueQueuesNothingAndSaysSo) {
    PairOptions o;
    o.depths = {4, 4};
    o.connect = false;
    Pair p(o);
    Region ra = host(*p.sa.nic, 4096);
    p.connect();
    // Nothing receives: the NIC retries the first send (receiver not ready) while the rest wait.
    for (int i = 0; i < 4; ++i)
        ASSERT_TRUE(p.sa.qp->post(Send{.region = &ra, .bytes = 8, .id = static_cast<std::uint64_t>(i)}));
    EXPECT_FALSE(p.sa.qp->post(Send{.region = &ra, .bytes = 8, .id = 99}));
}

TEST(Qp, ReceivesPostedBeforeConnectAreUsedAfterIt) {
    PairOptions o;
    o.connect = false;
    Pair p(o);
    Region ra = host(*p.sa.nic, 4096), rb = host(*p.sb.nic, 4096);
    ASSERT_TRUE(p.sb.qp->post(Recv{.region = &rb, .bytes = 4096, .id = 5}));
    p.connect();
    ra.write(0, pattern(10, 1));
    ASSERT_TRUE(p.sa.qp->post(Send{.region = &ra, .bytes = 10, .id = 6}));
    const auto got = take(*p.sb.recv_cq, 1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].id, 5u);
    EXPECT_EQ(read_back(rb, 0, 10), pattern(10, 1));
}

TEST(Qp, SendBeforeConnectThrows) {
    PairOptions o;
    o.connect = false;
    Pair p(o);
    Region ra = host(*p.sa.nic, 4096);
    EXPECT_THROW((void)p.sa.qp->post(Send{.region = &ra, .bytes = 8, .id = 1}), std::invalid_argument);
    EXPECT_THROW((void)p.sa.qp->post(Read{.region = &ra, .bytes = 8, .remote = Remote{0, 0}, .id = 1}),
                 std::invalid_argument);
}

TEST(Qp, ConnectTwiceThrows) {
    Pair p;
    EXPECT_THROW((void)p.sa.qp->connect(p.sb.qp->endpoint()), std::invalid_argument);
}

TEST(Qp, RequestOutsideItsRegionThrows) {
    Pair p;
    Region ra = host(*p.sa.nic, 4096);
    EXPECT_THROW((void)p.sa.qp->post(Send{.region = &ra, .offset = 4000, .bytes = 100, .id = 1}),
                 std::invalid_argument);
    EXPECT_THROW((void)p.sa.qp->post(Recv{.region = &ra, .bytes = 4097, .id = 1}), std::invalid_argument);
    EXPECT_THROW((void)p.sa.qp->post(Read{.region = &ra, .offset = 1, .bytes = 4096, .remote = Remote{0, 0}, .id = 1}),
                 std::invalid_argument);
}

TEST(Qp, RegionOfAnotherNicThrows) {
    Pair p;
    Region rb = host(*p.sb.nic, 4096);
    EXPECT_THROW((void)p.sa.qp->post(Send{.region = &rb, .bytes = 8, .id = 1}), std::invalid_argument);
}

TEST(Qp, DeregisteredRegionThrows) {
    Pair p;
    Region ra = host(*p.sa.nic, 4096);
    ASSERT_TRUE(ra.deregister());
    EXPECT_THROW((void)p.sa.qp->post(Send{.region = &ra, .bytes = 8, .id = 1}), std::invalid_argument);
}

TEST(Qp, DepthBeyondTheLimitThrows) {
    SimMachine m("sim0");
    auto nic = m.open();
    ASSERT_TRUE(nic) << nic.error();
    auto cq = Cq::create(*nic, 8192);
    ASSERT_TRUE(cq) << cq.error();
    EXPECT_THROW((void)Qp::create(*nic, *cq, *cq, Depths{nic->limits().max_qp_wr + 1, 1}), std::invalid_argument);
    EXPECT_THROW((void)Qp::create(*nic, *cq, *cq, Depths{0, 1}), std::invalid_argument);
}

TEST(Qp, CqTooSmallForTheDepthsThrowsAndLeavesItsRoomAsItWas) {
    SimMachine m("sim0");
    auto nic = m.open();
    ASSERT_TRUE(nic) << nic.error();
    auto cq = Cq::create(*nic, 100);
    ASSERT_TRUE(cq) << cq.error();
    auto first = Qp::create(*nic, *cq, *cq, Depths{25, 25});
    ASSERT_TRUE(first) << first.error();
    EXPECT_THROW((void)Qp::create(*nic, *cq, *cq, Depths{50, 50}), std::invalid_argument);
    auto second = Qp::create(*nic, *cq, *cq, Depths{25, 25});  // 50 + 50 of 100
    ASSERT_TRUE(second) << second.error();
    EXPECT_THROW((void)Qp::create(*nic, *cq, *cq, Depths{1, 1}), std::invalid_argument);
    ASSERT_TRUE(first->destroy());
    EXPECT_TRUE(Qp::create(*nic, *cq, *cq, Depths{1, 1}));
}

TEST(Qp, CreateRefusedByTheFirmwareIsAnError) {
    SimMachine m("sim0");
    auto nic = m.open();
    ASSERT_TRUE(nic) << nic.error();
    auto cq = Cq::create(*nic, 256);
    ASSERT_TRUE(cq) << cq.error();
    m.faults.refuse(hsi::Opcode::CREATE_QP, hsi::RcfwStatus::RESOURCES);
    const auto commands = m.faults.counters().rcfw_commands;
    auto qp = Qp::create(*nic, *cq, *cq, Depths{16, 16});
    ASSERT_FALSE(qp);
    EXPECT_EQ(qp.error(), "0000:04:00.0: the firmware refused CREATE_QP (status 2: RESOURCES)");
    // The refused QP is no QP: no DESTROY_QP follows, and the Cq keeps all its room.
    EXPECT_EQ(m.faults.counters().rcfw_commands, commands + 1);
    auto whole = Qp::create(*nic, *cq, *cq, Depths{128, 128});
    ASSERT_TRUE(whole) << whole.error();
    EXPECT_THROW((void)Qp::create(*nic, *cq, *cq, Depths{1, 1}), std::invalid_argument);
}

TEST(Qp, ConnectRefusedByTheFirmwareIsAnErrorNamingTheStep) {
    PairOptions o;
    o.connect = false;
    Pair p(o);
    p.a.faults.refuse(hsi::Opcode::MODIFY_QP, hsi::RcfwStatus::INVALID_PARAMETER);
    auto r = p.sa.qp->connect(p.sb.qp->endpoint());
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), "0000:04:00.0: the firmware refused MODIFY_QP (status 5: INVALID_PARAMETER)");
    EXPECT_EQ(p.sa.qp->state(), QpState::Reset);
}

// §4.6.9 as verbs' ibv_qp_attr carries it: the source GID entry, the hop limit and the
// READ depths a connect asks for are what the firmware holds afterwards (QUERY_QP's view),
// and two queue pairs speaking from GIDs other than the ones chosen at open (their
// link-local ones: RoCEv2 over IPv6) exchange a SEND and a READ.
TEST(Qp, ConnectSetsThePathsGidHopLimitAndReadDepths) {
    PairOptions o;
    o.connect = false;
    Pair p(o);
    const auto& table = p.sa.nic->gids();
    ASSERT_EQ(table.size(), 2u);  // default_gids: link-local, ::ffff:192.0.2.1
    EXPECT_EQ(p.sa.nic->gid_table_index(), 1u);
    EXPECT_EQ(table[1].gid, p.sa.nic->gid());
    EXPECT_EQ(p.sa.qp->read_depths().initiator, 16);  // the model's 16, at the driver's most 16
    EXPECT_EQ(p.sa.qp->read_depths().responder, 16);
    Path path;
    path.gid_index = 0;  // fe80::ff:fe00:1 and fe80::ff:fe00:2, RoCEv2
    path.hop_limit = 1;
    path.max_rd_atomic = 1;
    path.max_dest_rd_atomic = 1;
    Endpoint eb = p.sb.qp->endpoint();
    eb.gid = p.sb.nic->gids()[0].gid;
    ASSERT_TRUE(p.sa.qp->connect(eb, {}, path));
    EXPECT_EQ(p.sa.qp->endpoint().gid, link_local_gid(p.sa.nic->mac()));
    Path other;
    other.gid_index = 0;
    ASSERT_TRUE(p.sb.qp->connect(p.sa.qp->endpoint(), {}, other));
    EXPECT_EQ(p.sb.qp->endpoint().gid, eb.gid);

    const auto a = p.a.faults.query_qp(p.sa.qp->qpn());
    ASSERT_TRUE(a);
    EXPECT_EQ(p.a.faults.gid(a->sgid_index.get()), link_local_gid(p.sa.nic->mac()));
    EXPECT_NE(a->sgid_index.get(), p.sa.nic->gid_index());
    EXPECT_EQ(a->hop_limit, 1);
    EXPECT_EQ(a->max_rd_atomic, 2);       // orrq_slots(1)
    EXPECT_EQ(a->max_dest_rd_atomic, 4);  // irrq_slots(1)
    EXPECT_EQ(a->dgid, eb.gid);
    const auto b = p.b.faults.query_qp(p.sb.qp->qpn());
    ASSERT_TRUE(b);
    EXPECT_EQ(p.b.faults.gid(b->sgid_index.get()), eb.gid);
    EXPECT_EQ(b->hop_limit, 64);
    EXPECT_EQ(b->max_rd_atomic, 17);       // orrq_slots(16)
    EXPECT_EQ(b->max_dest_rd_atomic, 34);  // irrq_slots(16)
    EXPECT_EQ(b->dgid, link_local_gid(p.sa.nic->mac()));

    Region ra = host(*p.sa.nic, 4096), rb = host(*p.sb.nic, 4096);
    const auto data = pattern(2000, 3);
    ra.write(0, data);
    ASSERT_TRUE(p.sb.qp->post(Recv{.region = &rb, .bytes = 4096, .id = 1}));
    ASSERT_TRUE(p.sa.qp->post(Send{.region = &ra, .bytes = 2000, .id = 2}));
    const auto sent = take(*p.sa.send_cq, 1);
    ASSERT_EQ(sent.size(), 1u);
    expect_completion(sent[0], 2, Op::Send, Status::Ok, 2000);
    const auto got = take(*p.sb.recv_cq, 1);
    ASSERT_EQ(got.size(), 1u);
    expect_completion(got[0], 1, Op::Recv, Status::Ok, 2000);
    EXPECT_EQ(read_back(rb, 0, 2000), data);
    ASSERT_TRUE(p.sb.qp->post(Read{.region = &rb, .offset = 2048, .bytes = 2000, .remote = ra.remote(0), .id = 3}));
    const auto read = take(*p.sb.send_cq, 1);
    ASSERT_EQ(read.size(), 1u);
    expect_completion(read[0], 3, Op::Read, Status::Ok, 2000);
    EXPECT_EQ(read_back(rb, 2048, 2000), data);
}

// Path::mtu caps the path MTU below the ports' (9000-byte ports carry 4096): MODIFY_QP's
// RTR carries the cap (QUERY_QP's view), Qp::path_mtu says it, and no frame on the wire
// carries more than 1024 bytes of payload: a 10,000-byte SEND and READ go as 10 packets
// each, the longest frame a full READ response FIRST (Ethernet 14, IPv4 20, UDP 8, BTH 12,
// AETH 4, 1024 bytes, ICRC 4).
TEST(Qp, PathMtuCapReachesModifyQpAndNoFrameIsLonger) {
    PairOptions o;
    o.connect = false;
    Pair p(o);
    EXPECT_EQ(p.sa.nic->mtu(), Mtu::Mtu4096);
    EXPECT_EQ(p.sa.qp->path_mtu(), std::nullopt);
    Path path;
    path.mtu = Mtu::Mtu1024;
    ASSERT_TRUE(p.sa.qp->connect(p.sb.qp->endpoint(), {}, path));
    ASSERT_TRUE(p.sb.qp->connect(p.sa.qp->endpoint(), {}, path));
    EXPECT_EQ(p.sa.qp->path_mtu(), Mtu::Mtu1024);
    EXPECT_EQ(p.sb.qp->path_mtu(), Mtu::Mtu1024);
    EXPECT_EQ(p.sa.qp->endpoint().mtu, Mtu::Mtu4096);  // the port's, for the peer's min
    for (auto* side : {&p.a, &p.b}) {
        const auto q = side->faults.query_qp(side == &p.a ? p.sa.qp->qpn() : p.sb.qp->qpn());
        ASSERT_TRUE(q);
        EXPECT_EQ(hsi::query_qp::path_mtu.of(q->path_mtu_dest_vlan_id.get()),
                  static_cast<std::uint16_t>(hsi::PathMtu::MTU_1024));
    }

    rig::test::TempDir dir;
    ASSERT_TRUE(p.wire.capture(dir.path() / "wire.pcap"));
    Region ra = host(*p.sa.nic, 16384), rb = host(*p.sb.nic, 16384);
    const auto data = pattern(10000, 9);
    ra.write(0, data);
    ASSERT_TRUE(p.sb.qp->post(Recv{.region = &rb, .bytes = 10000, .id = 1}));
    ASSERT_TRUE(p.sa.qp->post(Send{.region = &ra, .bytes = 10000, .id = 2}));
    ASSERT_EQ(take(*p.sb.recv_cq, 1).size(), 1u);
    ASSERT_EQ(take(*p.sa.send_cq, 1).size(), 1u);
    ASSERT_TRUE(p.sb.qp->post(Read{.region = &rb, .bytes = 10000, .remote = ra.remote(0), .id = 3}));
    const auto read = take(*p.sb.send_cq, 1);
    ASSERT_EQ(read.size(), 1u);
    expect_completion(read[0], 3, Op::Read, Status::Ok, 10000);
    EXPECT_EQ(read_back(rb, 0, 10000), data);
    p.wire.stop_capture();

    const auto capture = rig::test::read_pcap(dir.path() / "wire.pcap");
    std::size_t longest = 0, full = 0;
    for (const auto& f : capture.frames) {
        longest = std::max<std::size_t>(longest, f.length);
        if (f.length >= 14 + 20 + 8 + 12 + 1024 + 4) ++full;
    }
    EXPECT_EQ(longest, 14u + 20 + 8 + 12 + 4 + 1024 + 4);
    EXPECT_EQ(full, 2u * 9);  // 9 full packets and a 784-byte last one, each way
}

// A cap above the port's leaves the port's; the smaller of the two ends' ports wins.
TEST(Qp, PathMtuIsTheSmallestOfTheCapAndBothPorts) {
    PairOptions o;
    o.connect = false;
    Pair p(o);
    Path path;
    path.mtu = Mtu::Mtu4096;
    Endpoint peer = p.sb.qp->endpoint();
    peer.mtu = Mtu::Mtu2048;
    ASSERT_TRUE(p.sa.qp->connect(peer, {}, path));
    EXPECT_EQ(p.sa.qp->path_mtu(), Mtu::Mtu2048);
    path.mtu = Mtu::Mtu512;
    ASSERT_TRUE(p.sb.qp->connect(p.sa.qp->endpoint(), {}, path));
    EXPECT_EQ(p.sb.qp->path_mtu(), Mtu::Mtu512);
    ASSERT_TRUE(p.sb.qp->destroy());
    EXPECT_EQ(p.sb.qp->path_mtu(), std::nullopt);
}

// A RoCEv2 packet is IPv4 or IPv6 from end to end: a source GID of one family and a peer's
// of the other cannot be connected (perftest refuses such a pair too).
TEST(Qp, ConnectFromAGidOfTheOtherIpFamilyIsAnErrorNamingBoth) {
    PairOptions o;
    o.connect = false;
    Pair p(o);
    Path path;
    path.gid_index = 0;  // fe80::ff:fe00:1; the peer's endpoint carries ::ffff:192.0.2.2
    const auto commands = p.a.faults.counters().rcfw_commands;
    auto r = p.sa.qp->connect(p.sb.qp->endpoint(), {}, path);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), "0000:04:00.0: queue pair " + std::to_string(p.sa.qp->qpn()) +
                             ": the source GID fe80::ff:fe00:1 (index 0) is IPv6 and the peer's ::ffff:192.0.2.2 IPv4");
    EXPECT_EQ(p.a.faults.counters().rcfw_commands, commands);
    EXPECT_EQ(p.sa.qp->state(), QpState::Reset);
}

// Queue pairs naming one GID entry share its firmware entry, which open added (connect
// adds none), and close deletes every entry open added.
TEST(Qp, QueuePairsOfOneGidEntryShareItsFirmwareEntryAndCloseDeletesIt) {
    PairOptions o;
    o.connect = false;
    Pair p(o);
    auto cq = Cq::create(*p.sa.nic, 8);
    ASSERT_TRUE(cq) << cq.error();
    auto second = Qp::create(*p.sa.nic, *cq, *cq, Depths{4, 4});
    ASSERT_TRUE(second) << second.error();
    Path path;
    path.gid_index = 0;
    Endpoint eb = p.sb.qp->endpoint();
    eb.gid = p.sb.nic->gids()[0].gid;  // link-local to link-local
    ASSERT_TRUE(p.sa.qp->connect(eb, {}, path));
    const auto commands = p.a.faults.counters().rcfw_commands;
    ASSERT_TRUE(second->connect(eb, {}, path));
    EXPECT_EQ(p.a.faults.counters().rcfw_commands, commands + 3);  // the three MODIFY_QPs, no ADD_GID
    const auto first_index = p.a.faults.query_qp(p.sa.qp->qpn())->sgid_index.get();
    EXPECT_EQ(p.a.faults.query_qp(second->qpn())->sgid_index.get(), first_index);
    const std::uint16_t chosen = p.sa.nic->gid_index();
    ASSERT_TRUE(p.a.faults.gid(first_index));
    ASSERT_TRUE(p.a.faults.gid(chosen));
    ASSERT_TRUE(p.sa.nic->close());
    EXPECT_FALSE(p.a.faults.gid(first_index));
    EXPECT_FALSE(p.a.faults.gid(chosen));
}

TEST(Qp, ConnectFromARoceV1GidIsAnErrorNamingTheEntry) {
    PairOptions o;
    o.connect = false;
    o.nic.gids = {{link_local_gid(Mac{0x02, 0, 0, 0, 0, 0x01}), RoceVersion::V1},
                  {ipv4_gid(10, 0, 0, 1), RoceVersion::V2}};
    Pair p(o);
    Path path;
    path.gid_index = 0;
    const auto commands = p.a.faults.counters().rcfw_commands;
    auto r = p.sa.qp->connect(p.sb.qp->endpoint(), {}, path);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), "0000:04:00.0: queue pair " + std::to_string(p.sa.qp->qpn()) +
                             ": GID index 0 (fe80::ff:fe00:1) is RoCEv1; the driver speaks RoCEv2 only");
    EXPECT_EQ(p.a.faults.counters().rcfw_commands, commands);
    EXPECT_EQ(p.sa.qp->state(), QpState::Reset);
}

TEST(Qp, ConnectWithAPathOutsideItsRangesThrows) {
    PairOptions o;
    o.connect = false;
    Pair p(o);
    const Endpoint eb = p.sb.qp->endpoint();
    const auto bad = [&](auto change) {
        Path path;
        change(path);
        return [&p, eb, path] { (void)p.sa.qp->connect(eb, {}, path); };
    };
    EXPECT_THROW(bad([](Path& x) { x.gid_index = 2; })(), std::invalid_argument);
    EXPECT_THROW(bad([](Path& x) { x.hop_limit = 0; })(), std::invalid_argument);
    EXPECT_THROW(bad([](Path& x) { x.max_rd_atomic = 0; })(), std::invalid_argument);
    EXPECT_THROW(bad([](Path& x) { x.max_rd_atomic = 17; })(), std::invalid_argument);
    EXPECT_THROW(bad([](Path& x) { x.max_dest_rd_atomic = 17; })(), std::invalid_argument);
    EXPECT_EQ(p.sa.qp->state(), QpState::Reset);
    EXPECT_TRUE(p.sa.qp->connect(eb));
}

TEST(Qp, CloseDestroysWhatTheCallerLeft) {
    Pair p;
    ASSERT_TRUE(p.sa.nic->close());
    EXPECT_EQ(p.a.system.holdings(nic_bus), (rig::sim::Holdings{}));
    Region rb = host(*p.sb.nic, 4096);
    EXPECT_THROW((void)p.sa.qp->post(Recv{.region = &rb, .bytes = 8, .id = 1}), std::invalid_argument);
    EXPECT_TRUE(p.sa.qp->destroy());
    EXPECT_TRUE(p.sa.send_cq->destroy());
    std::array<Completion, 1> out;
    EXPECT_THROW((void)p.sa.send_cq->poll(out), std::invalid_argument);
}

// Users destroy queue pairs on error paths while a progress thread polls their Cqs: a
// poller thread polls both Cqs without pause while this thread, round after round,
// creates a Qp on them, posts receives, connects it or not, and destroys it. The Cqs'
// first Qp has failed, so every poll walks the list for flushes (Cq::poll's
// report_flushes against Qp::State::retire was a data race; ThreadSanitizer watches).
// After each destroy no completion of the destroyed Qp is reported.
TEST(Qp, DestroyWhileAnotherThreadPollsItsCqs) {
    PairOptions o;
    o.depths = {8, 8};
    o.cq_depth = 64;
    Pair p(o);
    Region ra = host(*p.sa.nic, 8192), rb = host(*p.sb.nic, 8192);
    ASSERT_TRUE(p.sa.qp->post(Read{.region = &ra,
                                   .bytes = 8,
                                   .remote = Remote{rb.address(), rb.rkey() ^ 0x100},
                                   .id = 1}));  // fails: REMOTE_ACCESS
    ASSERT_EQ(take(*p.sa.send_cq, 1).size(), 1u);
    ASSERT_EQ(p.sa.qp->state(), QpState::Error);

    std::atomic<bool> stop{false};
    std::atomic<std::uint32_t> destroyed_qpn{0};
    std::atomic<std::uint64_t> completions{0}, of_destroyed{0};
    std::thread poller([&] {
        std::array<Completion, 16> out;
        while (!stop.load(std::memory_order_acquire)) {
            for (Cq* cq : {&*p.sa.send_cq, &*p.sa.recv_cq}) {
                // Read before the poll: a completion of a Qp destroyed before it began.
                const std::uint32_t gone = destroyed_qpn.load(std::memory_order_acquire);
                const std::size_t n = cq->poll(out);
                completions += n;
                for (std::size_t i = 0; i < n; ++i)
                    if (gone != 0 && out[i].qpn == gone) ++of_destroyed;
            }
        }
    });
    constexpr int rounds = 200;
    for (int round = 0; round < rounds; ++round) {
        auto qp = Qp::create(*p.sa.nic, *p.sa.send_cq, *p.sa.recv_cq, {4, 4});
        ASSERT_TRUE(qp) << qp.error();
        for (std::uint64_t i = 0; i < 3; ++i)
            ASSERT_TRUE(qp->post(Recv{.region = &ra, .offset = 64 * i, .bytes = 64, .id = 1000 + i}));
        if (round % 2 == 1) {
            // A peer that does not exist: connected, then failing its send (retry count 0).
            Endpoint nowhere = p.sb.qp->endpoint();
            nowhere.qpn = 0xABCDE;
            ASSERT_TRUE(qp->connect(nowhere, Retries{1, 0, 0}));
            ASSERT_TRUE(qp->post(Send{.region = &ra, .bytes = 8, .id = 2000}));
        }
        const std::uint32_t qpn = qp->qpn();
        ASSERT_TRUE(qp->destroy());
        destroyed_qpn.store(qpn, std::memory_order_release);
    }
    stop.store(true, std::memory_order_release);
    poller.join();
    EXPECT_EQ(of_destroyed.load(), 0u);
    EXPECT_EQ(p.a.faults.counters().epoch_faults, 0u);
}

}  // namespace
}  // namespace rig::bnxt::test
