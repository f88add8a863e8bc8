// Every fault the model reports on the data path becomes the CQE the hardware writes
// (docs/hsi.md §5.5, §5.7), the QP enters ERR with a QP error notification (§4.5.4),
// and what is outstanding is left to the driver's software flush, as on P5 (§5.5.3,
// §5.7.4): no FLUSHED CQE is written.
#include <gtest/gtest.h>

#include "pair.hpp"

namespace rig::bnxt::sim::test {
namespace {

using ErrorTest = Pair;
using rig::sim::DmaStatus;

constexpr std::uint8_t RTS = 3, ERR = 6;

// The QP error notification for `qpn` among a node's CREQ events.
std::optional<Bytes> qp_error(Node& n, std::uint32_t qpn) {
    for (const Bytes& e : n.events())
        if (get(e, 9, 1) == 0xC0 && get(e, 4, 4) == qpn) return e;
    return std::nullopt;
}

TEST_F(ErrorTest, SendWithUnknownLkeyIsLocalProtectionErrorAndNothingLeaves) {
    open();
    b.post_recv(bqp, 1, {{bbuf, bkey, 64}});
    const auto frames = a.counters().frames_sent;
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, 0x999900, 64}});
    settle(a, b);
    const auto c = a.poll(acq);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->status(), 0x4);  // LOCAL_PROTECTION_ERR
    EXPECT_EQ(c->sq_cons_idx(), 1u);
    EXPECT_EQ(a.counters().frames_sent, frames);
    EXPECT_TRUE(qp_error(a, aqp.qpn));
    EXPECT_EQ(qp_state(a, aqp), ERR);
    EXPECT_EQ(qp_state(b, bqp), RTS);
    EXPECT_FALSE(b.poll(bcq));
}

TEST_F(ErrorTest, SgeBeyondItsRegionOrOfAnotherPdIsLocalProtectionError) {
    open();
    const std::uint64_t page = a.bus.alloc(4096);
    const std::uint32_t small = a.register_mr(0, spec::mr_local_write, 0, 12, page, page, 4096);
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{page + 4000, small, 200}});
    settle(a, b);
    EXPECT_EQ(a.poll(acq)->status(), 0x4);
}

TEST_F(ErrorTest, MrOfAnotherProtectionDomainIsLocalProtectionError) {
    open();
    const std::uint32_t other_pd = a.dma_mr(spec::mr_local_write, 2);
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, other_pd, 64}});
    settle(a, b);
    EXPECT_EQ(a.poll(acq)->status(), 0x4);
}

TEST_F(ErrorTest, ReadIntoRegionWithoutLocalWriteIsLocalProtectionError) {
    open();
    const std::uint32_t read_only = a.dma_mr(spec::mr_remote_read);
    a.post_send(aqp, spec::wqe_read, spec::signal_comp, {{abuf, read_only, 64}}, 0, bbuf, bkey);
    settle(a, b);
    EXPECT_EQ(a.poll(acq)->status(), 0x4);
}

TEST_F(ErrorTest, ReadWithUnknownRkeyIsRemoteAccessErrorOnBothSides) {
    open();
    a.post_send(aqp, spec::wqe_read, spec::signal_comp, {{abuf, akey, 64}}, 0, bbuf, 0x7777700);
    settle(a, b);
    EXPECT_EQ(a.poll(acq)->status(), 0x7);  // REMOTE_ACCESS_ERR
    EXPECT_EQ(qp_state(a, aqp), ERR);
    EXPECT_EQ(qp_state(b, bqp), ERR);
    const auto e = qp_error(b, bqp.qpn);
    ASSERT_TRUE(e);
    EXPECT_EQ(get(*e, 11, 1), 0x6u);  // res_err_state_reason: RX invalid R_Key
    EXPECT_FALSE(b.poll(bcq));
}

TEST_F(ErrorTest, ReadOfRegionWithoutRemoteReadIsNoPermission) {
    open();
    const std::uint32_t local = b.dma_mr(spec::mr_local_write);
    a.post_send(aqp, spec::wqe_read, spec::signal_comp, {{abuf, akey, 64}}, 0, bbuf, local);
    settle(a, b);
    EXPECT_EQ(a.poll(acq)->status(), 0x7);
    const auto e = qp_error(b, bqp.qpn);
    ASSERT_TRUE(e);
    EXPECT_EQ(get(*e, 11, 1), 0x8u);
}

TEST_F(ErrorTest, ReadBeyondTheRegionIsRangeError) {
    open();
    const std::uint64_t page = b.bus.alloc(4096);
    const std::uint32_t small = b.register_mr(0, spec::mr_local_write | spec::mr_remote_read, 0, 12, page, page, 4096);
    a.post_send(aqp, spec::wqe_read, spec::signal_comp, {{abuf, akey, 64}}, 0, page + 4090, small);
    settle(a, b);
    EXPECT_EQ(a.poll(acq)->status(), 0x7);
    const auto e = qp_error(b, bqp.qpn);
    ASSERT_TRUE(e);
    EXPECT_EQ(get(*e, 11, 1), 0x9u);
}

TEST_F(ErrorTest, ReadFromQpWithoutRemoteReadAccessIsNoPermission) {
    open({.access = spec::qp_local_write});
    a.post_send(aqp, spec::wqe_read, spec::signal_comp, {{abuf, akey, 64}}, 0, bbuf, bkey);
    settle(a, b);
    EXPECT_EQ(a.poll(acq)->status(), 0x7);
    EXPECT_EQ(get(*qp_error(b, bqp.qpn), 11, 1), 0x8u);
}

TEST_F(ErrorTest, WriteToRegionWithoutRemoteWriteIsRemoteAccessError) {
    open();  // bkey grants REMOTE_READ only: rig never grants remote write
    a.post_send(aqp, spec::wqe_write, spec::signal_comp, {{abuf, akey, 64}}, 0, bbuf, bkey);
    settle(a, b);
    EXPECT_EQ(a.poll(acq)->status(), 0x7);
    EXPECT_EQ(b.bus.get(bbuf, 8), 0u);
}

TEST_F(ErrorTest, SendLongerThanThePostedReceiveIsLengthErrorAndTheRestIsLeftToTheDriver) {
    open();
    b.post_recv(bqp, 0x11, {{bbuf, bkey, 100}});
    b.post_recv(bqp, 0x12, {{bbuf, bkey, 100}});
    b.post_recv(bqp, 0x13, {{bbuf, bkey, 100}});
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 200}});
    settle(a, b);
    const auto bc = b.drain(bcq);
    ASSERT_EQ(bc.size(), 1u);        // receives 0x12 and 0x13: the driver's to flush
    EXPECT_EQ(bc[0].status(), 0x2);  // LOCAL_LENGTH_ERR
    EXPECT_EQ(bc[0].wr_id(), 0x11u);
    const auto e = qp_error(b, bqp.qpn);
    ASSERT_TRUE(e);
    EXPECT_EQ(get(*e, 14, 2), 1u);          // rq_cons_idx: one receive consumed
    EXPECT_EQ(a.poll(acq)->status(), 0x6);  // REMOTE_INVALID_REQUEST_ERR
    EXPECT_EQ(qp_state(a, aqp), ERR);
    EXPECT_EQ(qp_state(b, bqp), ERR);
}

// A responder error with sends outstanding on its own SQ: a TERMINAL CQE (§5.5.3) names
// the SQ consumer, the WQEs before it completed; the rest are the driver's to flush.
TEST_F(ErrorTest, ResponderErrorWithSendsOutstandingWritesATerminalCqe) {
    open();
    b.post_recv(bqp, 0x11, {{bbuf, bkey, 10}});
    b.post_send(bqp, spec::wqe_send, spec::signal_comp, {{bbuf, bkey, 8}}, 0, 0, 0, false);
    b.post_send(bqp, spec::wqe_send, spec::signal_comp, {{bbuf, bkey, 8}}, 0, 0, 0, false);  // never rung: posted only
    b.ring_sq(bqp);
    b.settle();
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 200}});  // longer than B's receive
    a.settle();
    b.settle();
    const auto bc = b.drain(bcq);
    ASSERT_EQ(bc.size(), 2u);
    EXPECT_EQ(bc[0].status(), 0x2);  // the receive: LOCAL_LENGTH_ERR
    EXPECT_EQ(bc[1].type(), 0xE);    // TERMINAL
    EXPECT_EQ(bc[1].req_qp_handle(), bqp.handle);
    EXPECT_EQ(bc[1].sq_cons_idx(), 0u);  // neither send completed
    EXPECT_EQ(bc[1].status(), 0u);
}
TEST_F(ErrorTest, ReceiveBufferWithUnknownLkeyIsProtectionErrorAndRemoteOperationError) {
    open();
    b.post_recv(bqp, 0x21, {{bbuf, 0x5555500, 100}});
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 50}});
    settle(a, b);
    const auto bc = b.poll(bcq);
    ASSERT_TRUE(bc);
    EXPECT_EQ(bc->status(), 0x3);  // responder LOCAL_PROTECTION_ERR
    EXPECT_EQ(bc->wr_id(), 0x21u);
    EXPECT_EQ(a.poll(acq)->status(), 0x8);  // REMOTE_OPERATION_ERR
}

TEST_F(ErrorTest, MalformedReceiveWqeIsLocalQpOperationError) {
    open();
    b.post_recv(bqp, 0x51, {{bbuf, bkey, 100}}, false);
    b.bus.put(bqp.rq.at(0), 1, 0x00);  // wqe_type SEND on the RQ
    b.ring(doorbell(spec::db_rq, bqp.qpn, bqp.rq_index, bqp.rq_epoch));
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 50}});
    settle(a, b);
    const auto bc = b.poll(bcq);
    ASSERT_TRUE(bc);
    EXPECT_EQ(bc->status(), 0x4);  // responder LOCAL_QP_OPERATION_ERR
    EXPECT_EQ(bc->wr_id(), 0x51u);
    EXPECT_EQ(a.poll(acq)->status(), 0x8);
    EXPECT_EQ(b.counters().bad_descriptors, 1u);
}

TEST_F(ErrorTest, ReceiveIntoMemoryTheBusRefusesIsProtectionErrorAtTheResponder) {
    open();
    b.bus.refuse(bbuf, 4096, DmaStatus::CompleterAbort);  // a peer BAR the route does not forward
    b.post_recv(bqp, 0x31, {{bbuf, bkey, 4096}});
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 1000}});
    settle(a, b);
    EXPECT_EQ(b.poll(bcq)->status(), 0x3);
    EXPECT_EQ(a.poll(acq)->status(), 0x8);
    EXPECT_GE(b.counters().dma_faults, 1u);
}

TEST_F(ErrorTest, SendFromMemoryTheBusRefusesIsLocalProtectionErrorWithTxMemoryReason) {
    open();
    a.bus.refuse(abuf, 4096, DmaStatus::UnsupportedRequest);  // no IOMMU mapping
    b.post_recv(bqp, 1, {{bbuf, bkey, 4096}});
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 1000}});
    settle(a, b);
    EXPECT_EQ(a.poll(acq)->status(), 0x4);
    const auto e = qp_error(a, aqp.qpn);
    ASSERT_TRUE(e);
    EXPECT_EQ(get(*e, 3, 1), 0x9u);  // req_err_state_reason: TX memory error
}

TEST_F(ErrorTest, ReadIntoMemoryTheBusRefusesIsLocalProtectionErrorWithRxMemoryReason) {
    open();
    a.bus.refuse(abuf, 4096, DmaStatus::UnsupportedRequest);
    a.post_send(aqp, spec::wqe_read, spec::signal_comp, {{abuf, akey, 64}}, 0, bbuf, bkey);
    settle(a, b);
    EXPECT_EQ(a.poll(acq)->status(), 0x4);
    EXPECT_EQ(get(*qp_error(a, aqp.qpn), 3, 1), 0x8u);
}

TEST_F(ErrorTest, ReadOfPeerMemoryTheBusRefusesIsRemoteOperationError) {
    open();
    b.bus.refuse(bbuf, 4096, DmaStatus::CompleterAbort);
    a.post_send(aqp, spec::wqe_read, spec::signal_comp, {{abuf, akey, 64}}, 0, bbuf, bkey);
    settle(a, b);
    EXPECT_EQ(a.poll(acq)->status(), 0x8);
}

TEST_F(ErrorTest, ReceiverNotReadyRetriesRnrRetryTimesThenFails) {
    open({.rnr_retry = 2});
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 64}});
    settle(a, b);
    EXPECT_EQ(b.counters().rnr_naks_sent, 1u);
    settle(a, b);
    EXPECT_EQ(b.counters().rnr_naks_sent, 1u);       // no resend before the RNR timer
    a.clock.advance(std::chrono::microseconds(10));  // min_rnr_timer 1: 0.01 ms (IBA Table 45)
    settle(a, b);
    EXPECT_EQ(b.counters().rnr_naks_sent, 2u);
    EXPECT_FALSE(a.poll(acq, false));
    a.clock.advance(std::chrono::microseconds(10));  // the second and last retry
    settle(a, b);
    EXPECT_EQ(b.counters().rnr_naks_sent, 3u);
    const auto c = a.poll(acq);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->status(), 0x9);  // RNR_NAK_RETRY_CNT_ERR
    EXPECT_EQ(get(*qp_error(a, aqp.qpn), 3, 1), 0x3u);
    EXPECT_EQ(qp_state(b, bqp), RTS);  // the responder did nothing wrong
}

TEST_F(ErrorTest, ReceiverNotReadyThenAReceiveIsPostedAndTheSendArrives) {
    open();  // rnr_retry 7: forever
    const Bytes data = pattern(3000, 8);
    a.bus.poke(abuf, data);
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 3000}});
    settle(a, b);
    for (int i = 0; i < 5; ++i) {
        a.clock.advance(std::chrono::microseconds(10));
        settle(a, b);
    }
    EXPECT_EQ(b.counters().rnr_naks_sent, 6u);
    b.post_recv(bqp, 4, {{bbuf, bkey, 4096}});
    a.clock.advance(std::chrono::microseconds(10));
    settle(a, b);
    EXPECT_EQ(b.poll(bcq)->length(), 3000u);
    EXPECT_EQ(b.bus.peek(bbuf, 3000), data);
    EXPECT_EQ(a.poll(acq)->status(), 0);
}

TEST_F(ErrorTest, NoAcknowledgementRetriesRetryCountTimesThenTransportRetryError) {
    open({.timeout = 1, .retry_cnt = 2});  // 8.192 us
    ASSERT_EQ(b.rcfw(Msg(24).put(0, 1, spec::op_destroy_qp).put(16, 4, bqp.qpn))->status, 0);
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 64}});
    settle(a, b);
    for (int i = 0; i < 2; ++i) {
        a.clock.advance(std::chrono::microseconds(9));
        settle(a, b);
        EXPECT_FALSE(a.poll(acq, false));
    }
    EXPECT_EQ(a.counters().retransmissions, 2u);
    a.clock.advance(std::chrono::microseconds(9));
    settle(a, b);
    const auto c = a.poll(acq);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->status(), 0xA);  // TRANSPORT_RETRY_CNT_ERR
    EXPECT_EQ(get(*qp_error(a, aqp.qpn), 3, 1), 0x2u);
    EXPECT_EQ(b.counters().frames_dropped, 3u);  // no such QP on B
}

TEST_F(ErrorTest, DroppedPacketIsResentAfterASequenceNak) {
    open();
    const Bytes data = pattern(3000, 9);
    a.bus.poke(abuf, data);
    b.post_recv(bqp, 1, {{bbuf, bkey, 4096}});
    a.faults.drop_frames(1);  // the SEND_FIRST
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 3000}});
    settle(a, b);
    EXPECT_EQ(b.poll(bcq)->length(), 3000u);
    EXPECT_EQ(b.bus.peek(bbuf, 3000), data);
    EXPECT_EQ(a.poll(acq)->status(), 0);
    EXPECT_GE(a.counters().retransmissions, 1u);
}

TEST_F(ErrorTest, DroppedAcknowledgementIsRecoveredByTheTimerWithoutADuplicateReceive) {
    open({.timeout = 1});
    b.post_recv(bqp, 1, {{bbuf, bkey, 4096}});
    b.post_recv(bqp, 2, {{bbuf, bkey, 4096}});
    b.faults.drop_frames(1);  // the ACK
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 100}});
    settle(a, b);
    EXPECT_FALSE(a.poll(acq, false));
    a.clock.advance(std::chrono::microseconds(9));
    settle(a, b);
    EXPECT_EQ(a.poll(acq)->status(), 0);
    const auto bc = b.drain(bcq);
    ASSERT_EQ(bc.size(), 1u);  // the duplicate was acknowledged, not received again
    EXPECT_EQ(bc[0].wr_id(), 1u);
}

TEST_F(ErrorTest, DroppedReadResponseIsAskedForAgainByTheNextOne) {
    open({.timeout = 1});
    const Bytes data = pattern(5000, 10);
    b.bus.poke(bbuf, data);
    b.faults.drop_frames(1);  // RDMA_READ_RESPONSE_FIRST
    a.post_send(aqp, spec::wqe_read, spec::signal_comp, {{abuf, akey, 5000}}, 0, bbuf, bkey);
    settle(a, b);
    // The MIDDLE that came next implied the NAK (IBA 9.7.5.1.5): the read was asked for
    // again from its first PSN, once, though three more responses were past the gap.
    EXPECT_EQ(a.poll(acq)->status(), 0);
    EXPECT_EQ(a.bus.peek(abuf, 5000), data);
    EXPECT_EQ(a.counters().implied_naks, 1u);
    EXPECT_EQ(a.counters().retransmissions, 1u);
    EXPECT_EQ(a.counters().local_ack_timeouts, 0u);
    EXPECT_EQ(b.counters().duplicate_requests, 1u);
}

TEST_F(ErrorTest, LostLastReadResponsesAreAskedForAgainFromTheFirstMissingPsnAfterTheTimeout) {
    open({.timeout = 1});
    const Bytes data = pattern(5000, 10);
    b.bus.poke(bbuf, data);
    // Seed 57 at one half loses the fourth and fifth of B's next five frames: the read's
    // responses of 1024, 1024, 1024, 1024 and 904 bytes.
    wire->inject(Cable::End::second, {.drop = 0.5, .seed = 57});
    a.post_send(aqp, spec::wqe_read, spec::signal_comp, {{abuf, akey, 5000}}, 0, bbuf, bkey);
    settle(a, b);
    EXPECT_FALSE(a.poll(acq, false));
    EXPECT_EQ(wire->fault_counters(Cable::End::second).dropped, 2u);
    EXPECT_EQ(a.counters().implied_naks, 0u);  // nothing came after them
    // A, with three responses placed, sees nothing more: its timer asks again for the
    // rest alone, a READ request of its last 1928 bytes from the fourth PSN (IBA
    // 9.7.5.1.5, as Linux's rxe does), answered by two responses.
    wire->inject(Cable::End::second, {});
    a.clock.advance(std::chrono::microseconds(9));
    settle(a, b);
    EXPECT_EQ(a.poll(acq)->status(), 0);
    EXPECT_EQ(a.bus.peek(abuf, 5000), data);
    EXPECT_EQ(a.counters().local_ack_timeouts, 1u);
    EXPECT_EQ(a.counters().retransmissions, 1u);
    EXPECT_EQ(b.counters().duplicate_requests, 1u);
    EXPECT_EQ(wire->fault_counters(Cable::End::second).carried, 7u);
}

TEST_F(ErrorTest, FailedWqeCompletesAndEveryLaterOneIsLeftToTheDriver) {
    open();
    for (int i = 0; i < 4; ++i) b.post_recv(bqp, static_cast<std::uint32_t>(i), {{bbuf, bkey, 64}});
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 8}});
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, 0x999900, 8}});
    a.post_send(aqp, spec::wqe_send, 0, {{abuf, akey, 8}});
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 8}});
    settle(a, b);
    const auto c = a.drain(acq);
    ASSERT_EQ(c.size(), 2u);  // no TERMINAL: the error CQE says where the SQ stopped
    EXPECT_EQ(c[0].status(), 0x0);
    EXPECT_EQ(c[0].sq_cons_idx(), 1u);
    EXPECT_EQ(c[1].status(), 0x4);
    EXPECT_EQ(c[1].sq_cons_idx(), 2u);
    const auto e = qp_error(a, aqp.qpn);
    ASSERT_TRUE(e);
    EXPECT_EQ(get(*e, 12, 2), 2u);  // sq_cons_idx
    // A send posted (and rung) in ERR is taken and does nothing.
    const auto doorbells = a.counters().doorbells;
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 8}});
    a.settle();
    EXPECT_FALSE(a.poll(acq, false));
    EXPECT_EQ(a.counters().doorbells, doorbells + 1);
}
TEST_F(ErrorTest, ModifyToErrWritesNothingAndSendsNoNotification) {
    open();
    b.post_recv(bqp, 0x41, {{bbuf, bkey, 64}});
    b.post_recv(bqp, 0x42, {{bbuf, bkey, 64}});
    b.settle();
    ASSERT_EQ(b.modify(bqp, 0x1, ERR), 0);
    EXPECT_TRUE(b.drain(bcq).empty());  // the driver that asked flushes them
    EXPECT_FALSE(qp_error(b, bqp.qpn));
    EXPECT_EQ(qp_state(b, bqp), ERR);
}
TEST_F(ErrorTest, FullCqOverflowsReportsACqErrorAndFailsTheQp) {
    open({.cq_size = 4});
    for (int i = 0; i < 6; ++i) b.post_recv(bqp, static_cast<std::uint32_t>(i), {{bbuf, bkey, 64}});
    for (int i = 0; i < 5; ++i) a.post_send(aqp, spec::wqe_send, 0, {{abuf, akey, 8}});
    settle(a, b);
    const auto events = b.events();
    bool cq_error = false;
    for (const Bytes& e : events)
        cq_error |= get(e, 9, 1) == 0xC1 && get(e, 4, 4) == bcq.id && get(e, 2, 1) == 5;  // RES_CQ_OVERFLOW_ERROR
    EXPECT_TRUE(cq_error);
    EXPECT_EQ(qp_state(b, bqp), ERR);
    EXPECT_EQ(b.drain(bcq).size(), 4u);  // the four that fit, nothing overwritten
}

// roce_hsi.h creq_cq_error_notification: a send queue's CQE that finds no room is the
// requester's overflow (cq_err_reason 2).
TEST_F(ErrorTest, SendCqOverflowIsTheRequestersOverflow) {
    open({.cq_size = 4});
    for (int i = 0; i < 5; ++i) {
        b.post_recv(bqp, static_cast<std::uint32_t>(i), {{bbuf, bkey, 64}});
        a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 8}});
        settle(a, b);
        ASSERT_EQ(b.drain(bcq).size(), 1u);  // B keeps room; A's CQ is never drained
    }
    bool requester = false;
    for (const Bytes& e : a.events()) requester |= get(e, 9, 1) == 0xC1 && get(e, 4, 4) == acq.id && get(e, 2, 1) == 2;
    EXPECT_TRUE(requester);
    EXPECT_EQ(qp_state(a, aqp), ERR);
}

TEST_F(ErrorTest, PacketsForAnotherMacAreDropped) {
    open({.timeout = 1, .retry_cnt = 0, .connect = false});
    // A points its QP at a MAC that is not B's (INIT -> RTR, the one transition that takes
    // the address vector for RC, IBA 11.2.1): B drops every frame.
    const Mac elsewhere{0x77, 0, 0, 0, 0, 0};
    ASSERT_EQ(a.to_init(aqp), 0);
    ASSERT_EQ(a.modify(aqp, 0x141517E1, 2,
                       [&](Msg& m) {
                           m.put_bytes(32, b.gid)
                               .put(52, 2, a.gid_index)
                               .put(54, 1, 64)
                               .put_bytes(56, elsewhere)
                               .put(63, 1, 2 << 4);
                           m.put(67, 1, 1).put(68, 4, bqp.psn).put(77, 1, 4).put(96, 4, bqp.qpn).put(110, 2, 0xFFF);
                       }),
              0);
    ASSERT_EQ(b.to_init(bqp), 0);
    ASSERT_EQ(b.to_rtr(bqp, a, aqp), 0);
    ASSERT_EQ(a.to_rts(aqp, 7, 1, 0), 0);
    ASSERT_EQ(b.to_rts(bqp, 7, 1, 0), 0);
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 8}});
    settle(a, b);
    a.clock.advance(std::chrono::microseconds(9));
    settle(a, b);
    EXPECT_EQ(a.poll(acq)->status(), 0xA);
    EXPECT_EQ(b.counters().frames_dropped, 1u);
}

}  // namespace
}  // namespace rig::bnxt::sim::test
