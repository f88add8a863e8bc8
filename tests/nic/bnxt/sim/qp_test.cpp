// CQs and QPs through the RCFW channel (spec/bnxt-hsi.md §4.6.6-§4.6.11): creation checks,
// the MODIFY_QP state machine and its masks, QUERY_QP, destruction rules.
#include <gtest/gtest.h>

#include "pair.hpp"

namespace rig::bnxt::sim::test {
namespace {

using QpTest = Pair;

Msg create_qp_msg(Node& n, const Cq& cq, std::uint8_t type, std::uint8_t sq_sge, std::uint32_t sq_size,
                  std::uint32_t flags = 0x0C) {
    const Memory sq = n.memory(std::uint64_t{sq_size} * 144, 1, true);
    const Memory rq = n.memory(4096, 0, true);
    Msg m(104);
    m.put(0, 1, spec::op_create_qp).put(16, 8, 1).put(24, 4, flags).put(28, 1, type).put(29, 1, 1).put(30, 1, 0);
    m.put(36, 4, sq_size).put(40, 4, 16).put(44, 2, sq_sge).put(46, 2, 6).put(48, 4, cq.id).put(52, 4, cq.id);
    m.put(60, 4, 1).put(64, 8, sq.pbl).put(72, 8, rq.pbl);
    return m;
}

TEST_F(QpTest, QpNumbersStartAtTwoAndAreDistinct) {
    a.up();
    acq = a.create_cq(64);
    const Qp q1 = a.create_qp(acq, acq, 16, 16);
    const Qp q2 = a.create_qp(acq, acq, 16, 16);
    EXPECT_GE(q1.qpn, 2u);
    EXPECT_NE(q1.qpn, q2.qpn);
}

TEST_F(QpTest, CreateQpRefusesWhatTheModelOrTheFirmwareCannotTake) {
    a.up();
    acq = a.create_cq(64);
    EXPECT_EQ(a.rcfw(create_qp_msg(a, acq, 4, 6, 16))->status, 4);         // UD: not modelled
    EXPECT_EQ(a.rcfw(create_qp_msg(a, acq, 2, 7, 16))->status, 5);         // 7 SGEs in a static WQE
    EXPECT_EQ(a.rcfw(create_qp_msg(a, acq, 2, 6, 5000))->status, 5);       // beyond max_qp_wr
    EXPECT_EQ(a.rcfw(create_qp_msg(a, acq, 2, 6, 0))->status, 5);
    EXPECT_EQ(a.rcfw(create_qp_msg(a, acq, 2, 6, 16, 0x1C))->status, 4);  // variable-size WQEs [P7]
    EXPECT_EQ(a.rcfw(create_qp_msg(a, acq, 2, 6, 16, 0x0D))->status, 5);  // SRQ_USED: no SRQ exists
    Cq ghost = acq;
    ghost.id = 0x777;
    EXPECT_EQ(a.rcfw(create_qp_msg(a, ghost, 2, 6, 16))->status, 5);
    EXPECT_EQ(a.rcfw(create_qp_msg(a, acq, 2, 6, 16))->status, 0);
}

TEST_F(QpTest, CreateCqRefusesAnUnknownNqAndZeroEntries) {
    a.up();
    const std::uint64_t page = a.bus.alloc(4096);
    EXPECT_EQ(a.rcfw(Msg(56).put(0, 1, spec::op_create_cq).put(28, 4, 0x7FF).put(36, 4, 64).put(40, 8, page))->status,
              5);
    EXPECT_EQ(a.rcfw(Msg(56).put(0, 1, spec::op_create_cq).put(28, 4, a.nq.id).put(36, 4, 0).put(40, 8, page))->status,
              5);
}

TEST_F(QpTest, CqUsedByAQpCannotBeDestroyedUntilTheQpIs) {
    a.up();
    acq = a.create_cq(64);
    const Qp q = a.create_qp(acq, acq, 16, 16);
    EXPECT_EQ(a.rcfw(Msg(24).put(0, 1, spec::op_destroy_cq).put(16, 4, acq.id))->status, 5);
    EXPECT_EQ(a.rcfw(Msg(24).put(0, 1, spec::op_destroy_qp).put(16, 4, q.qpn))->status, 0);
    EXPECT_EQ(a.rcfw(Msg(24).put(0, 1, spec::op_destroy_qp).put(16, 4, q.qpn))->status, 5);
    const auto d = a.rcfw(Msg(24).put(0, 1, spec::op_destroy_cq).put(16, 4, acq.id));
    EXPECT_EQ(d->status, 0);
    EXPECT_EQ(d->xid, acq.id);
    // The NQ the CQ notified is free again.
    EXPECT_EQ(get(a.hwrm(Msg(32).put(0, 2, 0x0051).put(16, 1, 5).put(18, 2, a.nq.id)), 0, 2), 0u);
}

TEST_F(QpTest, NqUsedByACqCannotBeFreed) {
    a.up();
    acq = a.create_cq(64);
    EXPECT_EQ(get(a.hwrm(Msg(32).put(0, 2, 0x0051).put(16, 1, 5).put(18, 2, a.nq.id)), 0, 2), 0x11u);
}

TEST_F(QpTest, TransitionsOutsideTheStateMachineAreRefused) {
    a.up();
    acq = a.create_cq(64);
    Qp q = a.create_qp(acq, acq, 16, 16);
    EXPECT_EQ(a.modify(q, 0x1, 2), 5);  // RESET -> RTR
    EXPECT_EQ(a.modify(q, 0x1, 3), 5);  // RESET -> RTS
    EXPECT_EQ(a.modify(q, 0x0D, 1, [](Msg& m) { m.put(26, 2, 0xFFFF); }), 0);
    EXPECT_EQ(a.modify(q, 0x1, 3), 5);  // INIT -> RTS
    EXPECT_EQ(a.modify(q, 0x1, 4), 5);  // INIT -> SQD
    EXPECT_EQ(a.modify(q, 0x1, 6), 0);  // any -> ERR
    EXPECT_EQ(a.modify(q, 0x1, 1), 5);  // ERR -> INIT
    EXPECT_EQ(a.modify(q, 0x1, 0), 0);  // any -> RESET
    EXPECT_EQ(a.modify(q, 0x1, 1), 0);  // and again from the start
}

TEST_F(QpTest, RtrToRtsRefusesTheFieldsLinuxRemoves) {
    open();
    Qp q = a.create_qp(acq, acq, 16, 16);
    ASSERT_EQ(a.modify(q, 0x0D, 1, [](Msg& m) { m.put(26, 2, 0xFFFF); }), 0);
    // SRC_MAC on INIT -> RTR is refused (§4.6.9).
    EXPECT_EQ(a.modify(q, 0x141517E1 | 0x08000000, 2, [&](Msg& m) { m.put(52, 2, a.gid_index).put(77, 1, 4); }), 5);
    ASSERT_EQ(a.modify(q, 0x141517E1, 2, [&](Msg& m) { m.put(52, 2, a.gid_index).put(77, 1, 4); }), 0);
    EXPECT_EQ(a.modify(q, 0x000AE001 | 0x20, 3, [](Msg& m) { m.put(76, 1, 2); }), 5);       // DGID
    EXPECT_EQ(a.modify(q, 0x000AE001 | 0x04000000, 3, [](Msg& m) { m.put(76, 1, 2); }), 5); // DEST_QP_ID
    EXPECT_EQ(a.modify(q, 0x000AE001, 3, [](Msg& m) { m.put(76, 1, 2); }), 0);
}

TEST_F(QpTest, ModifyRefusesBadValues) {
    open();
    Qp q = a.create_qp(acq, acq, 16, 16);
    ASSERT_EQ(a.modify(q, 0x0D, 1, [](Msg& m) { m.put(26, 2, 0xFFFF); }), 0);
    EXPECT_EQ(a.modify(q, 0x1000, 1, [](Msg& m) { m.put(63, 1, 6 << 4); }), 5);   // path MTU code 6
    EXPECT_EQ(a.modify(q, 0x80, 1, [](Msg& m) { m.put(52, 2, 200); }), 5);        // no such GID
    EXPECT_EQ(a.modify(q, 0x100000, 1, [](Msg& m) { m.put(77, 1, 40); }), 5);     // IRRQ beyond depth 16
    EXPECT_EQ(a.modify(q, 0x4000, 1, [](Msg& m) { m.put(65, 1, 8); }), 5);        // retry_cnt 8
    EXPECT_EQ(a.modify(q, 0x200000, 1, [](Msg& m) { m.put(80, 4, 32); }), 5);     // resize: not modelled
    EXPECT_EQ(a.modify(q, 0x200000, 1, [](Msg& m) { m.put(80, 4, 16); }), 0);     // the same size is fine
}

TEST_F(QpTest, QueryQpReportsWhatModifyStored) {
    open();
    const std::uint64_t sb = a.bus.alloc(4096);
    const auto c = a.rcfw(Msg(24).put(0, 1, spec::op_query_qp).put(16, 4, aqp.qpn), sb, 7);
    ASSERT_TRUE(c);
    ASSERT_EQ(c->status, 0);
    EXPECT_EQ(a.bus.get(sb + 8, 4), aqp.qpn);             // xid
    EXPECT_EQ(a.bus.get(sb + 12, 1) & 0xF, 3u);           // RTS
    EXPECT_EQ(a.bus.get(sb + 13, 1), 0x07u);              // access (QP encoding)
    EXPECT_EQ(a.bus.get(sb + 14, 2), 0xFFFFu);            // pkey
    EXPECT_EQ(a.bus.peek(sb + 24, 16), Bytes(reinterpret_cast<const std::byte*>(b.gid.data()),
                                             reinterpret_cast<const std::byte*>(b.gid.data()) + 16));  // dgid
    EXPECT_EQ(a.bus.get(sb + 46, 1), 64u);                // hop_limit
    EXPECT_EQ(a.bus.get(sb + 53, 1), 2u);                 // dest_mac: B's last octet
    EXPECT_EQ(a.bus.get(sb + 54, 2), 0x2FFFu);            // path MTU 1024 (code 2), VLAN 0xFFF
    EXPECT_EQ(a.bus.get(sb + 56, 1), 14u);                // timeout
    EXPECT_EQ(a.bus.get(sb + 60, 4), bqp.psn);            // rq_psn = the peer's sq_psn
    EXPECT_EQ(a.bus.get(sb + 68, 1), 2u);                 // max_rd_atomic slots
    EXPECT_EQ(a.bus.get(sb + 69, 1), 4u);                 // max_dest_rd_atomic slots
    EXPECT_EQ(a.bus.get(sb + 72, 4), 64u);                // sq_size
    EXPECT_EQ(a.bus.get(sb + 88, 4), bqp.qpn);            // dest_qp_id
}

TEST_F(QpTest, ResetForgetsRingIndexesSoTheQpCanBeUsedAgain) {
    open();
    b.post_recv(bqp, 1, {{bbuf, bkey, 64}});
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 8}});
    settle(a, b);
    ASSERT_EQ(a.poll(acq)->status(), 0);
    ASSERT_EQ(b.poll(bcq)->status(), 0);
    for (auto [n, q] : {std::pair{&a, &aqp}, std::pair{&b, &bqp}}) {
        ASSERT_EQ(n->modify(*q, 0x1, 0), 0);
        q->sq_index = q->sq_epoch = q->rq_index = q->rq_epoch = 0;
        q->psn = (q->psn + 0x100) & 0xFFFFFF;
    }
    Node::connect(a, aqp, b, bqp);
    b.post_recv(bqp, 2, {{bbuf, bkey, 64}});
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 8}});
    settle(a, b);
    EXPECT_EQ(a.poll(acq)->sq_cons_idx(), 1u);
    EXPECT_EQ(b.poll(bcq)->wr_id(), 2u);
}

TEST_F(QpTest, DestroyedQpWritesNoMoreCqes) {
    open();
    b.post_recv(bqp, 1, {{bbuf, bkey, 64}});
    b.settle();
    ASSERT_EQ(b.rcfw(Msg(24).put(0, 1, spec::op_destroy_qp).put(16, 4, bqp.qpn))->status, 0);
    EXPECT_FALSE(b.poll(bcq, false));  // no flush CQE for the posted receive either (§4.6.11)
}

TEST_F(QpTest, PsnSearchEntryUnlikeItsWqeIsCounted) {
    open();
    b.post_recv(bqp, 1, {{bbuf, bkey, 64}});
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 8}}, 0, 0, 0, false);
    a.bus.put(aqp.sq.at(64 * 128), 4, 0x12345);  // entry 0: a wrong start PSN and opcode
    a.ring_sq(aqp);
    settle(a, b);
    EXPECT_EQ(a.poll(acq)->status(), 0);  // a minimal model does not retransmit from it
    EXPECT_EQ(a.counters().psn_search_mismatches, 1u);
}

TEST_F(QpTest, PoisonedWqeIsLocalQpOperationErrorAndCounted) {
    open();
    a.bus.poke(aqp.sq.at(0), Bytes(128, std::byte{0xFF}));  // ixy's poison, never overwritten
    aqp.sq_index = 1;
    a.ring_sq(aqp);
    settle(a, b);
    EXPECT_EQ(a.poll(acq)->status(), 0x3);
    EXPECT_EQ(a.counters().bad_descriptors, 1u);
}

TEST_F(QpTest, WqeSizeDisagreeingWithItsSgesOrLengthIsRefused) {
    open();
    b.post_recv(bqp, 1, {{bbuf, bkey, 64}});
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 8}}, 0, 0, 0, false);
    a.bus.put(aqp.sq.at(8), 4, 9);  // length 9, the SGE holds 8
    a.ring_sq(aqp);
    settle(a, b);
    EXPECT_EQ(a.poll(acq)->status(), 0x2);  // LOCAL_LENGTH_ERR
}

TEST_F(QpTest, InlineSendLongerThan96BytesIsRefused) {
    open();
    Msg w(128);
    w.put(0, 1, spec::wqe_send).put(1, 1, spec::signal_comp | spec::inline_data).put(2, 1, 9).put(8, 4, 97);
    a.bus.poke(aqp.sq.at(0), w.b);
    aqp.sq_index = 1;
    a.ring_sq(aqp);
    settle(a, b);
    EXPECT_EQ(a.poll(acq)->status(), 0x3);
}

}  // namespace
}  // namespace rig::bnxt::sim::test
