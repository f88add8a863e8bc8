// Posting work requests in batches (rig/bnxt/qp.hpp; docs/hsi.md §5.2-§5.4, §5.8): a
// post queues every request that fits, in order, rings the doorbell once, and returns how
// many it queued; a caller's bug in any request throws and queues none.
#include "rig/bnxt/qp.hpp"

#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "nic_machine.hpp"

namespace rig::bnxt::test {
namespace {

// The doorbells the model of `m` accepted, once it has taken every one rung so far (a
// Thread::Stepped pair: the models run only when stepped).
std::uint64_t doorbells(SimMachine& m) {
    m.model->settle();
    return m.faults.counters().doorbells;
}

// Models stepped by hand, on the test's thread: each wait of the driver polls and steps them.
PairOptions stepped() {
    PairOptions o;
    o.thread = Thread::Stepped;
    o.nic.interrupts = Interrupts::Poll;
    return o;
}

TEST(QpPost, SixteenSendsInOnePostRingOneDoorbellAndLandInOrder) {
    Pair p(stepped());
    Region ra = host(*p.sa.nic, 16 * 256), rb = host(*p.sb.nic, 16 * 256);
    ra.write(0, pattern(16 * 256, 5));
    std::array<Recv, 16> recvs;
    std::array<Send, 16> sends;
    for (std::uint64_t i = 0; i < 16; ++i) {
        recvs[i] = Recv{.region = &rb, .offset = i * 256, .bytes = 256, .id = 100 + i};
        sends[i] = Send{.region = &ra, .offset = i * 256, .bytes = 200 + i, .id = i};
    }
    const auto b_before = doorbells(p.b);
    ASSERT_EQ(p.sb.qp->post(recvs), 16u);
    EXPECT_EQ(doorbells(p.b), b_before + 1);
    const auto a_before = doorbells(p.a);
    ASSERT_EQ(p.sa.qp->post(sends), 16u);
    EXPECT_EQ(doorbells(p.a), a_before + 1);

    const auto sent = take(*p.sa.send_cq, 16);
    const auto got = take(*p.sb.recv_cq, 16);
    ASSERT_EQ(sent.size(), 16u);
    ASSERT_EQ(got.size(), 16u);
    for (std::uint64_t i = 0; i < 16; ++i) {
        EXPECT_EQ(sent[i].id, i);
        EXPECT_EQ(sent[i].status, Status::Ok);
        EXPECT_EQ(sent[i].bytes, 200 + i);
        EXPECT_EQ(got[i].id, 100 + i);
        EXPECT_EQ(got[i].status, Status::Ok);
        EXPECT_EQ(got[i].bytes, 200 + i);
        EXPECT_EQ(read_back(rb, i * 256, 200 + i), read_back(ra, i * 256, 200 + i)) << "receive " << i;
    }
    const auto c = p.a.faults.counters();
    EXPECT_EQ(c.bad_descriptors, 0u);
    EXPECT_EQ(c.psn_search_mismatches, 0u);
    EXPECT_EQ(c.doorbell_drops + c.epoch_faults, 0u);
}

TEST(QpPost, MoreSendsThanRoomQueueTheFirstAndSayHowMany) {
    PairOptions o;
    o.depths = {4, 4};
    Pair p(o);
    Region ra = host(*p.sa.nic, 4096);
    // Nothing receives: the NIC retries the first send (receiver not ready) while the rest wait.
    std::array<Send, 6> sends;
    for (std::uint64_t i = 0; i < sends.size(); ++i) sends[i] = Send{.region = &ra, .bytes = 8, .id = i};
    EXPECT_EQ(p.sa.qp->post(sends), 4u);
    EXPECT_EQ(p.sa.qp->post(std::span<const Send>(sends).subspan(4)), 0u);
    EXPECT_FALSE(p.sa.qp->post(sends[4]));
    EXPECT_EQ(p.sa.qp->post(std::span<const Send>{}), 0u);
}

TEST(QpPost, BatchesThatWrapTheRingsDeliverEveryByte) {
    PairOptions o;
    o.depths = {5, 5};  // rings of 6 WQEs: a batch of 4 after 4 wraps
    Pair p(o);
    Region ra = host(*p.sa.nic, 8 * 512), rb = host(*p.sb.nic, 8 * 512);
    const auto data = pattern(8 * 512, 9);
    ra.write(0, data);
    for (std::uint64_t round = 0; round < 2; ++round) {
        std::array<Recv, 4> recvs;
        std::array<Send, 4> sends;
        for (std::uint64_t i = 0; i < 4; ++i) {
            const std::uint64_t k = round * 4 + i;
            recvs[i] = Recv{.region = &rb, .offset = k * 512, .bytes = 512, .id = k};
            sends[i] = Send{.region = &ra, .offset = k * 512, .bytes = 512, .id = k};
        }
        ASSERT_EQ(p.sb.qp->post(recvs), 4u);
        ASSERT_EQ(p.sa.qp->post(sends), 4u);
        const auto sent = take(*p.sa.send_cq, 4);
        const auto got = take(*p.sb.recv_cq, 4);
        ASSERT_EQ(sent.size(), 4u);
        ASSERT_EQ(got.size(), 4u);
        for (std::uint64_t i = 0; i < 4; ++i) {
            EXPECT_EQ(sent[i].id, round * 4 + i);
            EXPECT_EQ(sent[i].status, Status::Ok);
            EXPECT_EQ(got[i].id, round * 4 + i);
            EXPECT_EQ(got[i].status, Status::Ok);
        }
    }
    EXPECT_EQ(read_back(rb, 0, 8 * 512), data);
    EXPECT_EQ(p.a.faults.counters().psn_search_mismatches, 0u);
}

TEST(QpPost, ReadsAndInlineSendsInOnePost) {
    Pair p;
    Region ra = host(*p.sa.nic, 8192), rb = host(*p.sb.nic, 8192);
    const auto far = pattern(3000, 4);
    rb.write(1000, far);
    const std::array<Read, 2> reads{
        Read{.region = &ra, .bytes = 1000, .remote = rb.remote(1000), .id = 1},
        Read{.region = &ra, .offset = 1000, .bytes = 2000, .remote = rb.remote(2000), .id = 2}};
    ASSERT_EQ(p.sa.qp->post(reads), 2u);
    const auto done = take(*p.sa.send_cq, 2);
    ASSERT_EQ(done.size(), 2u);
    EXPECT_EQ(done[0].id, 1u);
    EXPECT_EQ(done[0].op, Op::Read);
    EXPECT_EQ(done[1].id, 2u);
    EXPECT_EQ(done[1].bytes, 2000u);
    EXPECT_EQ(read_back(ra, 0, 3000), far);

    const auto a = pattern(40, 1), b = pattern(96, 2);
    ASSERT_EQ(p.sb.qp->post(std::array{Recv{.region = &rb, .bytes = 100, .id = 7},
                                       Recv{.region = &rb, .offset = 100, .bytes = 100, .id = 8}}),
              2u);
    ASSERT_EQ(
        p.sa.qp->post(std::array{Send{.id = 3, .immediate = 0xAB, .inline_data = a}, Send{.id = 4, .inline_data = b}}),
        2u);
    const auto got = take(*p.sb.recv_cq, 2);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].bytes, 40u);
    EXPECT_EQ(got[0].immediate, 0xABu);
    EXPECT_EQ(got[1].bytes, 96u);
    EXPECT_EQ(got[1].immediate, std::nullopt);
    EXPECT_EQ(read_back(rb, 0, 40), a);
    EXPECT_EQ(read_back(rb, 100, 96), b);
}

TEST(QpPost, OneBadRequestThrowsNamingItAndQueuesNone) {
    Pair p(stepped());
    Region ra = host(*p.sa.nic, 4096), rb = host(*p.sb.nic, 4096);
    const std::array<Send, 3> sends{Send{.region = &ra, .bytes = 8, .id = 1}, Send{.region = &ra, .bytes = 8, .id = 2},
                                    Send{.region = &ra, .offset = 4000, .bytes = 100, .id = 3}};
    const auto before = doorbells(p.a);
    try {
        (void)p.sa.qp->post(sends);
        ADD_FAILURE() << "no throw";
    } catch (const std::invalid_argument& e) {
        EXPECT_STREQ(e.what(),
                     "rig::bnxt::Qp::post: send 2: 100 bytes at offset 4000 do not lie in a region of 4096 bytes");
    }
    EXPECT_EQ(doorbells(p.a), before);
    // None was queued: the first post after it is the first the peer receives.
    ASSERT_TRUE(p.sb.qp->post(Recv{.region = &rb, .bytes = 64, .id = 10}));
    ASSERT_TRUE(p.sa.qp->post(Send{.region = &ra, .bytes = 5, .id = 20}));
    const auto sent = take(*p.sa.send_cq, 1);
    ASSERT_EQ(sent.size(), 1u);
    EXPECT_EQ(sent[0].id, 20u);
    const auto got = take(*p.sb.recv_cq, 1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].bytes, 5u);
    std::array<Completion, 4> more;
    EXPECT_EQ(p.sa.send_cq->poll(more), 0u);

    const std::array<Recv, 2> recvs{Recv{.region = &rb, .bytes = 8, .id = 1},
                                    Recv{.region = nullptr, .bytes = 8, .id = 2}};
    EXPECT_THROW((void)p.sb.qp->post(recvs), std::invalid_argument);
}

TEST(QpPost, SendWithARegionAndInlineDataOrBytesWithoutARegionThrows) {
    Pair p;
    Region ra = host(*p.sa.nic, 4096);
    const auto data = pattern(8, 1);
    EXPECT_THROW((void)p.sa.qp->post(Send{.region = &ra, .bytes = 8, .id = 1, .inline_data = data}),
                 std::invalid_argument);
    EXPECT_THROW((void)p.sa.qp->post(Send{.bytes = 8, .id = 1}), std::invalid_argument);
    EXPECT_THROW((void)p.sa.qp->post(Read{.bytes = 8, .id = 1}), std::invalid_argument);
    EXPECT_THROW((void)p.sa.qp->post(Recv{.bytes = 8, .id = 1}), std::invalid_argument);
}

}  // namespace
}  // namespace rig::bnxt::test
