// Doorbells of the model at every wrap boundary (docs/hsi.md §5.8; B21, B23): index
// and epoch checked as the HSI says, for SQ, RQ and CQ rings of 64, 65, 128, 129 and 1000
// entries; wrong widths and wrong bits counted and dropped.
#include <gtest/gtest.h>

#include "pair.hpp"

namespace rig::bnxt::sim::test {
namespace {

class RingWrapTest : public Pair, public ::testing::WithParamInterface<std::uint32_t> {
protected:
    // Posts n receives and n sends, settles, and checks every completion in order.
    void round(std::uint32_t n) {
        for (std::uint32_t i = 0; i < n; ++i) b.post_recv(bqp, received_ + i, {{bbuf, bkey, 64}}, i + 1 == n);
        for (std::uint32_t i = 0; i < n; ++i) {
            a.bus.put(abuf, 4, sent_ + i);
            a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 4}}, 0, 0, 0, i + 1 == n);
            // One message at a time keeps the bytes checkable; the doorbell comes last.
        }
        settle(a, b);
        const auto rc = b.drain(bcq);
        const auto sc = a.drain(acq);
        ASSERT_EQ(rc.size(), n);
        ASSERT_EQ(sc.size(), n);
        for (std::uint32_t i = 0; i < n; ++i) {
            EXPECT_EQ(rc[i].wr_id(), (received_ + i) & 0xFFFFF);
            EXPECT_EQ(rc[i].status(), 0);
            EXPECT_EQ(sc[i].status(), 0);
            EXPECT_EQ(sc[i].sq_cons_idx(), (sent_ + i + 1) % GetParam());
        }
        sent_ += n;
        received_ += n;
    }
    std::uint32_t sent_ = 0, received_ = 0;
};

TEST_P(RingWrapTest, DoorbellsOnEveryWrapBoundaryAreTaken) {
    const std::uint32_t s = GetParam();
    open({.sq_size = s, .rq_size = s, .cq_size = s, .buffer_bytes = 4096});
    // The producer lands on S-1, then exactly on the wrap (index 0, epoch 1), then a whole
    // ring in one doorbell (index 0, epoch 0), then just past it, and so on.
    for (std::uint32_t n : {s - 1, 1u, s, 1u, s - 1, 2u, s, s}) ASSERT_NO_FATAL_FAILURE(round(n));
    EXPECT_EQ(a.counters().epoch_faults, 0u);
    EXPECT_EQ(b.counters().epoch_faults, 0u);
    EXPECT_EQ(a.counters().doorbell_drops, 0u);
    EXPECT_EQ(b.counters().doorbell_drops, 0u);
    EXPECT_EQ(a.counters().psn_search_mismatches, 0u);
}

TEST_P(RingWrapTest, SqDoorbellWithTheEpochNotFlippedAtTheWrapIsDropped) {
    const std::uint32_t s = GetParam();
    open({.sq_size = s, .rq_size = s, .cq_size = s, .buffer_bytes = 4096});
    round(s - 1);
    b.post_recv(bqp, 0, {{bbuf, bkey, 64}});
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 4}}, 0, 0, 0, false);
    ASSERT_EQ(aqp.sq_index, 0u);
    ASSERT_EQ(aqp.sq_epoch, 1u);
    // B21 (MORI): the wrap count masked with the shifted bit: epoch stays 0.
    a.ring(doorbell(spec::db_sq, aqp.qpn, 0, 0));
    settle(a, b);
    EXPECT_EQ(a.counters().epoch_faults, 1u);
    EXPECT_FALSE(a.poll(acq, false));
    a.ring_sq(aqp);
    settle(a, b);
    EXPECT_EQ(a.poll(acq)->status(), 0);
}

TEST_P(RingWrapTest, RqDoorbellWithTheEpochNotFlippedAtTheWrapIsDropped) {
    const std::uint32_t s = GetParam();
    open({.sq_size = s, .rq_size = s, .cq_size = s, .buffer_bytes = 4096});
    round(s - 1);
    b.post_recv(bqp, 0x77, {{bbuf, bkey, 64}}, false);
    ASSERT_EQ(bqp.rq_index, 0u);
    b.ring(doorbell(spec::db_rq, bqp.qpn, 0, 0));
    b.settle();
    EXPECT_EQ(b.counters().epoch_faults, 1u);
    b.ring(doorbell(spec::db_rq, bqp.qpn, 0, 1));
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 4}});
    settle(a, b);
    EXPECT_EQ(b.poll(bcq)->wr_id(), 0x77u);
}

TEST_P(RingWrapTest, CqConsumerDoorbellWithAStaleEpochAfterTheWrapIsDropped) {
    const std::uint32_t s = GetParam();
    open({.sq_size = s, .rq_size = s, .cq_size = s, .buffer_bytes = 4096});
    // s - 1 completions, each released at once: the model's consumer is at s - 1, pass 0.
    round(s - 1);
    // Six more: the wrap entry and five of the second pass.
    for (std::uint32_t i = 0; i < 6; ++i) b.post_recv(bqp, i, {{bbuf, bkey, 64}});
    for (std::uint32_t i = 0; i < 6; ++i) a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 4}});
    settle(a, b);
    b.drain(bcq);
    for (std::uint32_t i = 0; i < 6; ++i) ASSERT_TRUE(a.poll(acq, false)) << i;
    ASSERT_EQ(acq.index, 5u);
    ASSERT_EQ(acq.epoch, 1u);
    // B21 (MORI): the consumer doorbell keeps the first pass's epoch.
    a.ring(doorbell(spec::db_cq, acq.id, 5, 0));
    a.settle();
    EXPECT_EQ(a.counters().epoch_faults, 1u);
    a.ring(doorbell(spec::db_cq, acq.id, 5, 1));
    a.settle();
    EXPECT_EQ(a.counters().epoch_faults, 1u);
    EXPECT_EQ(a.counters().doorbell_drops, 1u);
}

TEST_P(RingWrapTest, CqWhoseConsumerNeverMovedOverflowsInsteadOfOverwriting) {
    const std::uint32_t s = GetParam();
    open({.sq_size = s, .rq_size = s, .cq_size = s, .buffer_bytes = 4096});
    for (std::uint32_t i = 0; i < s; ++i) b.post_recv(bqp, i, {{bbuf, bkey, 64}});
    for (std::uint32_t i = 0; i < s; ++i) a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 4}});
    settle(a, b);
    b.drain(bcq);
    for (std::uint32_t i = 0; i < s; ++i) ASSERT_TRUE(a.poll(acq, false)) << i;
    // A doorbell at the wrap with the first pass's epoch names the consumer's own
    // position (0, pass 0): a legal no-op, so nothing is released.
    a.ring(doorbell(spec::db_cq, acq.id, 0, 0));
    b.post_recv(bqp, 0, {{bbuf, bkey, 64}});
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 4}});
    settle(a, b);
    bool overflow = false;
    for (const Bytes& e : a.events()) overflow |= get(e, 9, 1) == 0xC1 && get(e, 4, 4) == acq.id;
    EXPECT_TRUE(overflow);
    EXPECT_FALSE(a.poll(acq, false));  // entry 0 was not overwritten: its toggle is still 1
}

TEST_P(RingWrapTest, CqConsumerDoorbellWithTheRightEpochReleasesTheRing) {
    const std::uint32_t s = GetParam();
    open({.sq_size = s, .rq_size = s, .cq_size = s, .buffer_bytes = 4096});
    for (std::uint32_t i = 0; i < s; ++i) b.post_recv(bqp, i, {{bbuf, bkey, 64}});
    for (std::uint32_t i = 0; i < s; ++i) a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 4}});
    settle(a, b);
    b.drain(bcq);
    for (std::uint32_t i = 0; i < s; ++i) ASSERT_TRUE(a.poll(acq, false));
    a.ring(doorbell(spec::db_cq, acq.id, 0, 1));
    b.post_recv(bqp, 0, {{bbuf, bkey, 64}});
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 4}});
    settle(a, b);
    const auto c = a.poll(acq);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->status(), 0);
    EXPECT_EQ(a.counters().epoch_faults, 0u);
    EXPECT_TRUE(a.events().empty());
}

INSTANTIATE_TEST_SUITE_P(Sizes, RingWrapTest, ::testing::Values(64u, 65u, 128u, 129u, 1000u));

using DoorbellTest = Pair;

TEST_F(DoorbellTest, ProducerBeyondOneRingAheadOfTheConsumerIsDropped) {
    open({.sq_size = 64});
    // Producer at 10 of the second pass while the consumer is at 0 of the first: 74 ahead.
    a.ring(doorbell(spec::db_sq, aqp.qpn, 10, 1));
    a.settle();
    EXPECT_EQ(a.counters().epoch_faults, 1u);
}

TEST_F(DoorbellTest, ProducerMovingBackwardsIsDropped) {
    open();
    for (int i = 0; i < 3; ++i) b.post_recv(bqp, 1, {{bbuf, bkey, 64}});
    b.ring(doorbell(spec::db_rq, bqp.qpn, 1, 0));  // a stale doorbell arriving late
    b.settle();
    EXPECT_EQ(b.counters().epoch_faults, 1u);
}

TEST_F(DoorbellTest, IndexBeyondTheRingIsDropped) {
    open({.sq_size = 64});
    a.ring(doorbell(spec::db_sq, aqp.qpn, 64, 0));
    a.settle();
    EXPECT_EQ(a.counters().doorbell_drops, 1u);
}

TEST_F(DoorbellTest, FourByteStoreIntoTheDoorbellPageIsAWidthFault) {
    open();
    b.post_recv(bqp, 1, {{bbuf, bkey, 64}});
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 4}}, 0, 0, 0, false);
    const std::uint64_t v = doorbell(spec::db_sq, aqp.qpn, aqp.sq_index, aqp.sq_epoch);
    a.nic.write(2, spec::doorbell_page, 4, v & 0xFFFFFFFF);  // B23: two 32-bit halves
    a.nic.write(2, spec::doorbell_page + 4, 4, v >> 32);
    settle(a, b);
    EXPECT_EQ(a.counters().bar_width_faults, 2u);
    EXPECT_FALSE(a.poll(acq, false));
    a.nic.write(2, spec::doorbell_page + 0x18, 8, v);  // any 8-byte-aligned offset of the page
    settle(a, b);
    EXPECT_EQ(a.poll(acq)->status(), 0);
}

TEST_F(DoorbellTest, DoorbellWithoutTheValidBitIsIgnored) {
    open();
    b.post_recv(bqp, 1, {{bbuf, bkey, 64}});
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 4}}, 0, 0, 0, false);
    a.ring(doorbell(spec::db_sq, aqp.qpn, aqp.sq_index, aqp.sq_epoch) & ~(std::uint64_t{1} << 58));
    settle(a, b);
    EXPECT_EQ(a.counters().doorbell_drops, 1u);
    EXPECT_FALSE(a.poll(acq, false));
}

TEST_F(DoorbellTest, DoorbellForAnUnknownQpIsDropped) {
    open();
    a.ring(doorbell(spec::db_sq, 0x999, 1, 0));
    a.settle();
    EXPECT_EQ(a.counters().doorbell_drops, 1u);
}

TEST_F(DoorbellTest, DoorbellReadsAreCountedAsUnmapped) {
    open();
    EXPECT_EQ(a.nic.read(2, spec::doorbell_page, 8), ~std::uint64_t{0});
    EXPECT_EQ(a.counters().bar_unmapped, 1u);
}

TEST_F(DoorbellTest, SendsPostedBeforeRtsRunOnceTheQpEntersRts) {
    open({.connect = false});
    ASSERT_EQ(a.to_init(aqp), 0);
    // A doorbell on an SQ in INIT is taken but nothing is sent (§4.6.9: sends need RTS).
    const std::uint32_t first_psn = aqp.psn;
    const auto before = a.counters().doorbells;
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 4}});
    a.settle();
    EXPECT_EQ(a.counters().frames_sent, 0u);
    EXPECT_EQ(a.counters().doorbells, before + 1);
    ASSERT_EQ(a.modify(aqp, 0x0, 1), 0);  // INIT -> INIT keeps it
    // Receives may be posted from INIT on (a doorbell on a QP in RESET is dropped).
    ASSERT_EQ(b.to_init(bqp), 0);
    b.post_recv(bqp, 1, {{bbuf, bkey, 64}});
    Qp a_as_it_started = aqp;
    a_as_it_started.psn = first_psn;
    ASSERT_EQ(a.to_rtr(aqp, b, bqp), 0);
    ASSERT_EQ(b.to_rtr(bqp, a, a_as_it_started), 0);
    ASSERT_EQ(b.to_rts(bqp), 0);
    ASSERT_EQ(a.to_rts(a_as_it_started), 0);
    settle(a, b);
    const auto sent = a.poll(acq);
    const auto received = b.poll(bcq);
    ASSERT_TRUE(sent && received);
    EXPECT_EQ(sent->status(), 0);
    EXPECT_EQ(received->wr_id(), 1u);
}

TEST_F(DoorbellTest, DoorbellOnAQpInResetIsDropped) {
    open({.connect = false});
    a.ring(doorbell(spec::db_sq, aqp.qpn, 1, 0));
    a.settle();
    EXPECT_EQ(a.counters().doorbell_drops, 1u);
}

// §5.8.3, §5.8.4: a queue is rung through the page of the DPI it was created with (DPI n:
// BAR2 + 0x10000 + n x 4 KiB), NQs and CQ_ARMENA through the privileged page (DPI 0); a
// doorbell through another page is dropped and counted, as the hardware's page checks do.
TEST_F(DoorbellTest, DoorbellThroughAnotherDpiPageIsDroppedAndCounted) {
    open();
    b.post_recv(bqp, 1, {{bbuf, bkey, 64}});
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 4}}, 0, 0, 0, false);
    const std::uint64_t sq = doorbell(spec::db_sq, aqp.qpn, aqp.sq_index, aqp.sq_epoch);
    a.nic.write(2, spec::doorbell_page + 2 * 0x1000, 8, sq);  // DPI 2: not the QP's
    a.nic.write(2, spec::doorbell_page + 0x1000 + 8, 8, doorbell(spec::db_cq_armena, acq.id, 0, 0));
    a.nic.write(2, spec::doorbell_page + 3 * 0x1000, 8, doorbell(spec::db_nq, a.nq.id, 0, 0));
    settle(a, b);
    EXPECT_EQ(a.counters().doorbell_page_faults, 3u);
    EXPECT_EQ(a.counters().doorbell_drops, 3u);
    EXPECT_FALSE(a.poll(acq, false));
    a.nic.write(2, spec::doorbell_page + 0x20, 8, sq);  // the privileged page, DPI 0
    settle(a, b);
    EXPECT_EQ(a.poll(acq)->status(), 0);
    // A CQ made with DPI 5 is rung through page 5 only.
    Msg m(56);
    m.put(0, 1, spec::op_create_cq)
        .put(16, 8, 7)
        .put(28, 4, a.nq.id)
        .put(32, 4, 5)
        .put(36, 4, 64)
        .put(40, 8, a.bus.alloc(4096));
    const auto made = a.rcfw(m);
    ASSERT_TRUE(made && made->status == 0);
    const auto before = a.counters().doorbells;
    a.nic.write(2, spec::doorbell_page, 8, doorbell(spec::db_cq, made->xid, 0, 0));
    a.nic.write(2, spec::doorbell_page + 5 * 0x1000, 8, doorbell(spec::db_cq, made->xid, 0, 0));
    a.settle();
    EXPECT_EQ(a.counters().doorbell_page_faults, 4u);
    EXPECT_EQ(a.counters().doorbells, before + 1);
}

}  // namespace
}  // namespace rig::bnxt::sim::test
