// CQs and QPs through the RCFW channel (docs/hsi.md §4.6.6-§4.6.11): creation checks,
// the MODIFY_QP state machine and its masks, QUERY_QP, destruction rules.
#include <gtest/gtest.h>

#include <functional>

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
    m.put(80, 8, n.bus.alloc(4096)).put(88, 8, n.bus.alloc(4096));  // IRRQ, ORRQ
    return m;
}

// INIT -> RTR as Linux sends it (§4.6.9, mask 0x141517E1) towards `peer`, with `extra` bits
// in the mask and `spoil` applied last.
std::uint8_t init_to_rtr(Node& n, Qp& q, const Node& peer, const Qp& peer_qp, std::uint32_t extra = 0,
                         const std::function<void(Msg&)>& spoil = {}, std::uint32_t drop = 0) {
    return n.modify(q, (0x141517E1 | extra) & ~drop, 2, [&](Msg& m) {
        m.put_bytes(32, peer.gid).put(52, 2, n.gid_index).put(54, 1, 64).put_bytes(56, peer.mac).put(63, 1, 2 << 4);
        m.put(67, 1, 1).put(68, 4, peer_qp.psn).put(77, 1, 4).put(96, 4, peer_qp.qpn).put(110, 2, 0xFFF);
        if (spoil) spoil(m);
    });
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
    EXPECT_EQ(a.rcfw(create_qp_msg(a, acq, 4, 6, 16))->status, 4);    // UD: not modelled
    EXPECT_EQ(a.rcfw(create_qp_msg(a, acq, 2, 7, 16))->status, 5);    // 7 SGEs in a static WQE
    EXPECT_EQ(a.rcfw(create_qp_msg(a, acq, 2, 6, 5000))->status, 5);  // beyond max_qp_wr
    EXPECT_EQ(a.rcfw(create_qp_msg(a, acq, 2, 6, 0))->status, 5);
    EXPECT_EQ(a.rcfw(create_qp_msg(a, acq, 2, 6, 16, 0x1C))->status, 4);  // variable-size WQEs [P7]
    EXPECT_EQ(a.rcfw(create_qp_msg(a, acq, 2, 6, 16, 0x0D))->status, 5);  // SRQ_USED: no SRQ exists
    Cq ghost = acq;
    ghost.id = 0x777;
    EXPECT_EQ(a.rcfw(create_qp_msg(a, ghost, 2, 6, 16))->status, 5);
    // §4.6.8: the DPI (below QUERY_FUNC's max_dpi 16) and PD (below max_pd 0x10000) the
    // function has; an RC QP's IRRQ and ORRQ present and page aligned.
    EXPECT_EQ(a.rcfw(create_qp_msg(a, acq, 2, 6, 16).put(32, 4, 16))->status, 5);
    EXPECT_EQ(a.rcfw(create_qp_msg(a, acq, 2, 6, 16).put(60, 4, 0x10000))->status, 5);
    EXPECT_EQ(a.rcfw(create_qp_msg(a, acq, 2, 6, 16).put(80, 8, 0))->status, 5);
    EXPECT_EQ(a.rcfw(create_qp_msg(a, acq, 2, 6, 16).put(88, 8, 0))->status, 5);
    EXPECT_EQ(a.rcfw(create_qp_msg(a, acq, 2, 6, 16).put(88, 8, a.bus.alloc(8192) + 32))->status, 5);
    EXPECT_EQ(a.rcfw(create_qp_msg(a, acq, 2, 6, 16).put(32, 4, 15))->status, 0);
    EXPECT_EQ(a.rcfw(create_qp_msg(a, acq, 2, 6, 16))->status, 0);
}

TEST_F(QpTest, CreateCqRefusesADpiTheFunctionDoesNotHave) {
    a.up();
    const std::uint64_t page = a.bus.alloc(4096);
    Msg m(56);
    m.put(0, 1, spec::op_create_cq).put(28, 4, a.nq.id).put(36, 4, 64).put(40, 8, page);
    EXPECT_EQ(a.rcfw(Msg(m).put(32, 4, 16))->status, 5);
    EXPECT_EQ(a.rcfw(Msg(m).put(32, 4, 3))->status, 0);
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
    EXPECT_EQ(a.modify(q, 0x1, 3), 5);                                         // INIT -> RTS
    EXPECT_EQ(a.modify(q, 0x1, 4), 5);                                         // INIT -> SQD
    EXPECT_EQ(a.modify(q, 0x1, 6), 0);                                         // any -> ERR
    EXPECT_EQ(a.modify(q, 0x1, 1), 5);                                         // ERR -> INIT
    EXPECT_EQ(a.modify(q, 0x1, 0), 0);                                         // any -> RESET
    EXPECT_EQ(a.modify(q, 0x0D, 1, [](Msg& m) { m.put(26, 2, 0xFFFF); }), 0);  // and again from the start
}

// IBA 11.2.1 (ib_modify_qp_is_ok): each transition needs every attribute it requires and
// takes none outside its required and optional ones.
TEST_F(QpTest, EachTransitionNeedsItsRequiredAttributesAndTakesNoOthers) {
    open({.connect = false});
    Qp& q = aqp;
    auto init = [&](std::uint32_t mask) {
        return a.modify(q, mask, 1, [](Msg& m) { m.put(25, 1, 7).put(26, 2, 0xFFFF); });
    };
    EXPECT_EQ(init(0x01 | 0x08), 5);    // RESET -> INIT without ACCESS
    EXPECT_EQ(init(0x01 | 0x04), 5);    // ... without PKEY
    EXPECT_EQ(init(0x0D | 0x10), 5);    // ... with QKEY (UD only)
    EXPECT_EQ(init(0x0D | 0x1000), 5);  // ... with PATH_MTU (INIT -> RTR's)
    ASSERT_EQ(init(0x0D), 0);
    EXPECT_EQ(a.modify(q, 0x04, 1, [](Msg& m) { m.put(25, 1, 1); }), 0);  // INIT -> INIT: ACCESS alone
    EXPECT_EQ(a.modify(q, 0x02, 1), 5);                                   // EN_SQD_ASYNC_NOTIFY: RTS -> SQD only
    // INIT -> RTR: each required attribute left out in turn.
    for (std::uint32_t required : {0x20u, 0x80u, 0x400u, 0x1000u, 0x10000u, 0x40000u, 0x100000u, 0x4000000u})
        EXPECT_EQ(init_to_rtr(a, q, b, bqp, 0, {}, required), 5) << std::hex << required;
    // ... and RTS -> RTS's, the QP1 key and a resize are not its.
    for (std::uint32_t other : {0x2000u, 0x80000u, 0x10u, 0x200000u, 0x800u})
        EXPECT_EQ(init_to_rtr(a, q, b, bqp, other), 5) << std::hex << other;
    // The optional parts of the address vector may be left out; ACCESS and PKEY added.
    ASSERT_EQ(init_to_rtr(a, q, b, bqp, 0x04 | 0x08, {}, 0x40 | 0x100 | 0x200 | 0x10000000), 0);
    auto rts = [&](std::uint32_t mask) {
        return a.modify(q, mask, 3, [&](Msg& m) {
            m.put(64, 1, 14).put(65, 1, 7).put(66, 1, 7).put(72, 4, aqp.psn).put(76, 1, 2);
        });
    };
    for (std::uint32_t required : {0x2000u, 0x4000u, 0x8000u, 0x80000u, 0x20000u})
        EXPECT_EQ(rts(0x000AE001 & ~required), 5) << std::hex << required;
    EXPECT_EQ(rts(0x000AE001 | 0x10000), 5);                                 // RQ_PSN: INIT -> RTR's
    ASSERT_EQ(rts(0x000AE001 | 0x40000), 0);                                 // MIN_RNR_TIMER is optional here
    EXPECT_EQ(a.modify(q, 0x40000, 3, [](Msg& m) { m.put(67, 1, 3); }), 0);  // RTS -> RTS
    EXPECT_EQ(a.modify(q, 0x2000, 3, [](Msg& m) { m.put(64, 1, 10); }), 5);  // but not the timeout
    EXPECT_EQ(a.modify(q, 0x1 | 0x04, 6), 5);                                // -> ERR takes nothing but the state
    EXPECT_EQ(a.modify(q, 0x1, 6), 0);
}

// §4.6.9: the network type (byte 24 bits 7:6) must agree with the SGID: RoCEv2/IPv4 (2) an
// IPv4-mapped one, RoCEv2/IPv6 (3) another; 1 is reserved; RoCEv1 (0) takes any.
TEST_F(QpTest, NetworkTypeContradictingTheSgidIsRefused) {
    open({.connect = false});
    ASSERT_EQ(a.to_init(aqp), 0);
    auto type = [](unsigned t) { return [t](Msg& m) { m.put(24, 1, 2 | (t << 6)); }; };
    EXPECT_EQ(init_to_rtr(a, aqp, b, bqp, 0, type(3)), 5);  // IPv6 with ::ffff:10.0.0.1
    EXPECT_EQ(init_to_rtr(a, aqp, b, bqp, 0, type(1)), 5);
    // An IPv6 GID: fd00::1, reversed at 16 (§4.6.5).
    Msg g(48);
    g.put(0, 1, spec::op_add_gid).put(31, 1, 0xFD).put(16, 1, 0x01);
    const auto v6 = a.rcfw(g);
    ASSERT_TRUE(v6 && v6->status == 0);
    auto with_v6 = [&](unsigned t) { return [&, t](Msg& m) { m.put(24, 1, 2 | (t << 6)).put(52, 2, v6->xid); }; };
    EXPECT_EQ(init_to_rtr(a, aqp, b, bqp, 0, with_v6(2)), 5);  // IPv4 with fd00::1
    ASSERT_EQ(init_to_rtr(a, aqp, b, bqp, 0, with_v6(3)), 0);
    // From then on every state write carries the type the SGID needs.
    auto to_rts_with = [&](unsigned t) {
        return a.modify(aqp, 0x000AE001, 3, [&](Msg& m) {
            m.put(24, 1, 3 | (t << 6)).put(64, 1, 14).put(65, 1, 7).put(66, 1, 7).put(72, 4, aqp.psn).put(76, 1, 2);
        });
    };
    EXPECT_EQ(to_rts_with(2), 5);
    EXPECT_EQ(to_rts_with(3), 0);
}

TEST_F(QpTest, RtrToRtsRefusesTheFieldsLinuxRemoves) {
    open();
    Qp q = a.create_qp(acq, acq, 16, 16);
    ASSERT_EQ(a.modify(q, 0x0D, 1, [](Msg& m) { m.put(26, 2, 0xFFFF); }), 0);
    // SRC_MAC on INIT -> RTR is refused (§4.6.9).
    EXPECT_EQ(a.modify(q, 0x141517E1 | 0x08000000, 2, [&](Msg& m) { m.put(52, 2, a.gid_index).put(77, 1, 4); }), 5);
    ASSERT_EQ(a.modify(q, 0x141517E1, 2, [&](Msg& m) { m.put(52, 2, a.gid_index).put(77, 1, 4); }), 0);
    EXPECT_EQ(a.modify(q, 0x000AE001 | 0x20, 3, [](Msg& m) { m.put(76, 1, 2); }), 5);        // DGID
    EXPECT_EQ(a.modify(q, 0x000AE001 | 0x04000000, 3, [](Msg& m) { m.put(76, 1, 2); }), 5);  // DEST_QP_ID
    EXPECT_EQ(a.modify(q, 0x000AE001, 3, [](Msg& m) { m.put(76, 1, 2); }), 0);
}

TEST_F(QpTest, ModifyRefusesBadValues) {
    open();
    Qp q = a.create_qp(acq, acq, 16, 16);
    ASSERT_EQ(a.modify(q, 0x0D, 1, [](Msg& m) { m.put(26, 2, 0xFFFF); }), 0);
    EXPECT_EQ(init_to_rtr(a, q, b, bqp, 0, [](Msg& m) { m.put(63, 1, 6 << 4); }), 5);  // path MTU code 6
    EXPECT_EQ(init_to_rtr(a, q, b, bqp, 0, [](Msg& m) { m.put(52, 2, 200); }), 5);     // no such GID
    EXPECT_EQ(init_to_rtr(a, q, b, bqp, 0, [](Msg& m) { m.put(77, 1, 40); }), 5);      // IRRQ beyond depth 16
    EXPECT_EQ(init_to_rtr(a, q, b, bqp, 0, [](Msg& m) { m.put(77, 1, 1); }), 5);       // IRRQ of no read
    EXPECT_EQ(init_to_rtr(a, q, b, bqp, 0, [](Msg& m) { m.put(67, 1, 32); }), 5);      // min_rnr_timer 32
    ASSERT_EQ(init_to_rtr(a, q, b, bqp), 0);
    auto rts = [&](const std::function<void(Msg&)>& spoil) {
        return a.modify(q, 0x000AE001, 3, [&](Msg& m) {
            m.put(64, 1, 14).put(65, 1, 7).put(66, 1, 7).put(72, 4, q.psn).put(76, 1, 2);
            spoil(m);
        });
    };
    EXPECT_EQ(rts([](Msg& m) { m.put(65, 1, 8); }), 5);   // retry_cnt 8
    EXPECT_EQ(rts([](Msg& m) { m.put(66, 1, 8); }), 5);   // rnr_retry 8
    EXPECT_EQ(rts([](Msg& m) { m.put(64, 1, 32); }), 5);  // timeout 32
    EXPECT_EQ(rts([](Msg& m) { m.put(76, 1, 0); }), 5);   // ORRQ of no read
    EXPECT_EQ(rts([](Msg&) {}), 0);
}

TEST_F(QpTest, QueryQpReportsWhatModifyStored) {
    open();
    const std::uint64_t sb = a.bus.alloc(4096);
    const auto c = a.rcfw(Msg(24).put(0, 1, spec::op_query_qp).put(16, 4, aqp.qpn), sb, 7);
    ASSERT_TRUE(c);
    ASSERT_EQ(c->status, 0);
    EXPECT_EQ(a.bus.get(sb + 8, 4), aqp.qpn);    // xid
    EXPECT_EQ(a.bus.get(sb + 12, 1) & 0xF, 3u);  // RTS
    EXPECT_EQ(a.bus.get(sb + 13, 1), 0x07u);     // access (QP encoding)
    EXPECT_EQ(a.bus.get(sb + 14, 2), 0xFFFFu);   // pkey
    EXPECT_EQ(a.bus.peek(sb + 24, 16), Bytes(reinterpret_cast<const std::byte*>(b.gid.data()),
                                             reinterpret_cast<const std::byte*>(b.gid.data()) + 16));  // dgid
    EXPECT_EQ(a.bus.get(sb + 46, 1), 64u);                                                             // hop_limit
    EXPECT_EQ(a.bus.get(sb + 53, 1), 2u);       // dest_mac: B's last octet
    EXPECT_EQ(a.bus.get(sb + 54, 2), 0x2FFFu);  // path MTU 1024 (code 2), VLAN 0xFFF
    EXPECT_EQ(a.bus.get(sb + 56, 1), 14u);      // timeout
    EXPECT_EQ(a.bus.get(sb + 60, 4), bqp.psn);  // rq_psn = the peer's sq_psn
    EXPECT_EQ(a.bus.get(sb + 68, 1), 2u);       // max_rd_atomic slots
    EXPECT_EQ(a.bus.get(sb + 69, 1), 4u);       // max_dest_rd_atomic slots
    EXPECT_EQ(a.bus.get(sb + 72, 4), 64u);      // sq_size
    EXPECT_EQ(a.bus.get(sb + 88, 4), bqp.qpn);  // dest_qp_id
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
