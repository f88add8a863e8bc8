// The RC transport over a cable that loses, duplicates, reorders and holds frames
// (cable.hpp), as IBA vol. 1 §9.7 and a real NIC meet them. SENDs into posted receives
// and RDMA READs of 1 B, 4 KiB and 16 MiB (the slowest in transport_large_test.cpp), every byte checked,
// every work request completed exactly once and in order, the retry counters consistent
// with what the cable lost (its own record, Cable::FaultCounters), and exactly equal to it
// where each loss costs one timeout; no count that only the random generator fixes;
// the responder's answers to a gap and to duplicates, packet by packet; the requester's
// go-back on a sequence NAK and on an implied NAK, once per PSN; a cable that stays down
// exhausting the retry count after (retry_cnt + 1) local ACK timeouts; a refused remote
// WRITE and READ alike (IBA 9.9). Over a Wire stepped by hand, and over two datagram
// cables on 127.0.0.1 with the models on their threads.
//
// RIG_TRANSPORT_FIGURES=1 prints what each transfer met (transport.cpp).
#include <gtest/gtest.h>

#include "transport.hpp"

namespace rig::bnxt::sim::test {
namespace {

using namespace std::chrono_literals;

// ---- Each operation, size and fault, by hand over a Wire ----

class FaultyTransfer : public TransportTest, public ::testing::WithParamInterface<Case> {};

TEST_P(FaultyTransfer, EveryMessageArrivesExactlyOnceWithEveryByte) {
    const Case& c = GetParam();
    start(c, false);
    const Outcome out = transfer(c);
    check_counters(c, out);
}

INSTANTIATE_TEST_SUITE_P(SmallMessages, FaultyTransfer, ::testing::ValuesIn(fault_cases(Size::small)), case_name);
INSTANTIATE_TEST_SUITE_P(LargeMessages, FaultyTransfer, ::testing::ValuesIn(fault_cases(Size::large)), case_name);

// ---- Exact counts ----

// One message at a time, so that nothing follows a lost packet to draw a NAK: each loss,
// of a request or of its answer, costs one local ACK timeout and one resend, and each
// lost answer one duplicate at the responder.
TEST_F(TransportTest, EachLossOfALoneSendCostsOneTimeoutAndOneResend) {
    const Case c{"LoneSends", Op::send, 1, 300, 2, {.drop = 0.1, .seed = 201}, 1};
    start(c, false);
    const Outcome out = transfer(c);
    check_counters(c, out);
    const auto ka = a.counters(), kb = b.counters();
    // The cable's own record of what it lost is the measure: each loss is counted below.
    EXPECT_GT(out.first.dropped, 0u);   // SENDs lost
    EXPECT_GT(out.second.dropped, 0u);  // ACKs lost
    EXPECT_EQ(ka.local_ack_timeouts, out.first.dropped + out.second.dropped);
    EXPECT_EQ(ka.retransmissions, out.first.dropped + out.second.dropped);
    EXPECT_EQ(out.rounds, ka.local_ack_timeouts);
    EXPECT_EQ(kb.duplicate_requests, out.second.dropped);
    EXPECT_EQ(kb.acks_sent, 300u + out.second.dropped);  // each duplicate acknowledged again
    EXPECT_EQ(ka.go_backs + ka.sequence_naks_received + kb.sequence_naks_sent, 0u);
}

TEST_F(TransportTest, EachLossOfALoneReadCostsOneTimeoutAndOneRequestAgain) {
    const Case c{"LoneReads", Op::read, 1, 300, 2, {.drop = 0.1, .seed = 211}, 1};
    start(c, false);
    const Outcome out = transfer(c);
    check_counters(c, out);
    const auto ka = a.counters(), kb = b.counters();
    EXPECT_GT(out.first.dropped, 0u);   // requests lost
    EXPECT_GT(out.second.dropped, 0u);  // responses lost
    EXPECT_EQ(ka.local_ack_timeouts, out.first.dropped + out.second.dropped);
    EXPECT_EQ(ka.retransmissions, out.first.dropped + out.second.dropped);
    EXPECT_EQ(kb.duplicate_requests, out.second.dropped);  // answered again from memory
    EXPECT_EQ(ka.implied_naks, 0u);
}

// Many messages in flight at 10% loss: every message arrived once with every byte
// (transfer), and the retry counters agree with each other and with what the cable
// records, whatever the seeds: each packet sent once and each resend counted; every
// go-back begun by a NAK the responder sent (less those lost) and no NAK without a gap;
// every clock move a local ACK timeout.
TEST_F(TransportTest, SendsAtTenPercentLossKeepTheRetryCountersConsistent) {
    const Case c{"Sends", Op::send, 4096, 500, 2, {.drop = 0.1, .seed = 102}};
    start(c, false);
    const Outcome out = transfer(c);
    check_counters(c, out);
    const auto ka = a.counters(), kb = b.counters();
    EXPECT_GT(out.first.dropped, 0u);
    EXPECT_EQ(ka.frames_sent, 2000u + ka.retransmissions);  // 500 x 4 packets, and the resends
    EXPECT_GE(ka.retransmissions, out.first.dropped);
    EXPECT_LE(ka.go_backs, ka.sequence_naks_received + ka.implied_naks);
    EXPECT_EQ(ka.implied_naks, 0u);  // no READs
    EXPECT_LE(ka.sequence_naks_received, kb.sequence_naks_sent);
    EXPECT_GE(ka.sequence_naks_received + out.second.dropped, kb.sequence_naks_sent);
    EXPECT_LE(kb.sequence_naks_sent, kb.out_of_sequence);
    EXPECT_GT(ka.go_backs + ka.local_ack_timeouts, 0u);
    EXPECT_EQ(ka.local_ack_timeouts, out.rounds);
}

// ---- The responder, packet by packet ----

// A's first packet of ten lost: B takes none of the nine behind it, answers the gap with
// one NAK PSN sequence error, and delivers the message once when A goes back to it.
TEST_F(TransportTest, GapDrawsOneSequenceNakAndNothingBehindItIsTaken) {
    open();
    const Bytes data = pattern(10 * 1024, 31);
    a.bus.poke(abuf, data);
    b.post_recv(bqp, 1, {{bbuf, bkey, 10 * 1024}});
    a.faults.drop_frames(1);
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 10 * 1024}});
    a.settle();
    b.settle();
    EXPECT_EQ(b.counters().out_of_sequence, 9u);
    EXPECT_EQ(b.counters().sequence_naks_sent, 1u);
    EXPECT_EQ(b.counters().frames_sent, 1u);
    EXPECT_FALSE(b.poll(bcq, false));
    settle(a, b);
    EXPECT_EQ(a.counters().sequence_naks_received, 1u);
    EXPECT_EQ(a.counters().go_backs, 1u);
    EXPECT_EQ(a.counters().retransmissions, 10u);
    const auto rc = b.drain(bcq);
    ASSERT_EQ(rc.size(), 1u);
    EXPECT_EQ(rc[0].length(), 10u * 1024);
    EXPECT_EQ(b.bus.peek(bbuf, 10 * 1024), data);
    EXPECT_EQ(a.poll(acq)->status(), 0);
    EXPECT_EQ(b.counters().duplicate_requests, 0u);
}

// The NAK arrives twice (the cable copies it): A goes back once.
TEST_F(TransportTest, SequenceNakTwiceGoesBackOnce) {
    open();
    b.post_recv(bqp, 1, {{bbuf, bkey, 10 * 1024}});
    a.faults.drop_frames(1);
    wire->inject(End::second, {.duplicate = 1});
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 10 * 1024}});
    a.settle();
    b.settle();  // the NAK, and its copy
    wire->inject(End::second, {});
    a.settle();
    EXPECT_EQ(a.counters().sequence_naks_received, 2u);
    EXPECT_EQ(a.counters().go_backs, 1u);
    EXPECT_EQ(a.counters().retransmissions, 10u);
    settle(a, b);
    EXPECT_EQ(b.drain(bcq).size(), 1u);
    EXPECT_EQ(a.poll(acq)->status(), 0);
    EXPECT_EQ(b.counters().duplicate_requests, 0u);
}

// B's ACK of a ten-packet message lost: A's timer sends the ten again; B acknowledges the
// run of duplicates at its first packet and at its last, the only one that asks for an ACK
// (A asks every 16 packets and at a message's end), and delivers nothing twice.
TEST_F(TransportTest, RunOfDuplicatesIsAcknowledgedAtItsStartAndItsAckRequestAndNotDeliveredAgain) {
    open({.timeout = 1});
    b.post_recv(bqp, 1, {{bbuf, bkey, 10 * 1024}});
    b.post_recv(bqp, 2, {{bbuf, bkey, 10 * 1024}});
    b.faults.drop_frames(1);
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 10 * 1024}});
    settle(a, b);
    EXPECT_EQ(b.counters().acks_sent, 1u);  // the message's, lost
    EXPECT_FALSE(a.poll(acq, false));
    a.clock.advance(local_ack_timeout(1) + 1ns);
    settle(a, b);
    EXPECT_EQ(a.counters().local_ack_timeouts, 1u);
    EXPECT_EQ(b.counters().duplicate_requests, 10u);
    EXPECT_EQ(b.counters().acks_sent, 3u);
    EXPECT_EQ(a.poll(acq)->status(), 0);
    const auto rc = b.drain(bcq);
    ASSERT_EQ(rc.size(), 1u);
    EXPECT_EQ(rc[0].wr_id(), 1u);
}

// ACKs coalesced: A asks for one every 16 packets and at the end of a message; B sends
// those and no more.
TEST_F(TransportTest, LongMessageIsAcknowledgedOnceEverySixteenPackets) {
    open();
    b.post_recv(bqp, 1, {{bbuf, bkey, 100 * 1024}});
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 100 * 1024}});
    settle(a, b);
    EXPECT_EQ(b.counters().acks_sent, 7u);  // after packets 16, 32, 48, 64, 80, 96 and 100
    EXPECT_EQ(b.poll(bcq)->length(), 100u * 1024);
    EXPECT_EQ(a.poll(acq)->status(), 0);
}

// A requester that asks for no ACK before a message's end (ack_every beyond it, as
// Linux's rxe sets AckReq on LAST and ONLY): B acknowledges every 16 packets anyway.
TEST(TransportResponder, AcknowledgesEverySixteenPacketsUnasked) {
    ModelOptions quiet;
    quiet.ack_every = 1000;
    Node a(1, quiet), b(2);
    Wire wire(a.nic, b.nic);
    a.up();
    b.up();
    Cq acq = a.create_cq(64), bcq = b.create_cq(64);
    Qp aqp = a.create_qp(acq, acq, 16, 16), bqp = b.create_qp(bcq, bcq, 16, 16);
    const std::uint32_t akey = a.dma_mr(spec::mr_local_write), bkey = b.dma_mr(spec::mr_local_write);
    const std::uint64_t abuf = a.bus.alloc(100 * 1024), bbuf = b.bus.alloc(100 * 1024);
    Node::connect(a, aqp, b, bqp);
    b.post_recv(bqp, 1, {{bbuf, bkey, 100 * 1024}});
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 100 * 1024}});
    settle(a, b);
    EXPECT_EQ(b.counters().acks_sent, 7u);  // after 16, 32, 48, 64, 80, 96 packets and the last
    EXPECT_EQ(a.poll(acq)->status(), 0);
}

// A READ request the cable copies is answered twice; A places one answer and completes once.
TEST_F(TransportTest, DuplicateReadIsAnsweredAgainAndCompletesOnce) {
    open();
    const Bytes data = pattern(3000, 32);
    b.bus.poke(bbuf, data);
    wire->inject(End::first, {.duplicate = 1});
    a.post_send(aqp, spec::wqe_read, spec::signal_comp, {{abuf, akey, 3000}}, 0, bbuf, bkey);
    settle(a, b);
    EXPECT_EQ(b.counters().duplicate_requests, 1u);
    EXPECT_EQ(b.counters().frames_sent, 6u);  // three responses, twice
    EXPECT_EQ(a.drain(acq).size(), 1u);
    EXPECT_EQ(a.bus.peek(abuf, 3000), data);
    EXPECT_EQ(a.counters().implied_naks + a.counters().retransmissions, 0u);
}

// B expects PSNs 1000 ahead of A's (a peer set up wrong): it takes A's SEND for a
// duplicate and acknowledges its own expected PSN - 1, which A never sent. A drops those
// ACKs rather than complete a SEND that never arrived, and exhausts its retries.
TEST_F(TransportTest, AckOfAPsnNeverSentIsDroppedNotTakenAsDelivery) {
    open({.timeout = 1, .retry_cnt = 2, .connect = false});
    ASSERT_EQ(a.to_init(aqp), 0);
    ASSERT_EQ(a.to_rtr(aqp, b, bqp), 0);
    ASSERT_EQ(b.to_init(bqp), 0);
    Qp ahead = aqp;
    ahead.psn = (aqp.psn + 1000) & 0xFFFFFF;
    ASSERT_EQ(b.to_rtr(bqp, a, ahead), 0);
    ASSERT_EQ(a.to_rts(aqp, 7, 1, 2), 0);
    ASSERT_EQ(b.to_rts(bqp), 0);
    b.post_recv(bqp, 1, {{bbuf, bkey, 64}});
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 64}});
    Outcome out;
    timeout_ = 1;
    std::optional<Cqe> c;
    run_until([&] { return bool(c = a.poll(acq)); }, out);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->status(), transport_retry_exceeded);
    EXPECT_EQ(b.counters().duplicate_requests, 3u);  // the SEND, and twice again
    EXPECT_EQ(a.counters().frames_dropped, 3u);      // the ACKs of PSN + 999
    EXPECT_FALSE(b.poll(bcq));
}

// ---- Retry exhaustion ----

// The cable carries nothing from the first packet on: A sends, then resends at each
// local ACK timeout, retry_cnt times, and fails the WQE with TRANSPORT_RETRY_CNT_ERR at
// the (retry_cnt + 1)-th, the QP in ERR; the WQE behind it is left for the driver to flush.
TEST_F(TransportTest, HeldCableExhaustsTheRetriesAfterRetryCountPlusOneTimeouts) {
    open({.timeout = 10, .retry_cnt = 3});  // 4.194304 ms
    wire->hold();
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 64}});
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 64}});
    settle(a, b);
    const auto t = local_ack_timeout(10);
    const auto tick = 100us;
    std::chrono::nanoseconds waited{0};
    std::optional<Cqe> c;
    while (!(c = a.poll(acq)) && waited < 10 * t) {
        a.clock.advance(tick);
        waited += tick;
        settle(a, b);
    }
    ASSERT_TRUE(c);
    EXPECT_EQ(c->status(), transport_retry_exceeded);
    EXPECT_GE(waited, 4 * t);
    EXPECT_LT(waited, 4 * t + tick);
    EXPECT_EQ(a.counters().local_ack_timeouts, 4u);
    EXPECT_EQ(a.counters().retransmissions, 3u * 2);  // both SENDs, three times
    EXPECT_EQ(a.counters().retries_exceeded, 1u);
    EXPECT_EQ(qp_state(a, aqp), ERR);
    EXPECT_FALSE(a.poll(acq));  // the WQE behind it is the driver's to flush (qp.cpp)
    EXPECT_EQ(wire->fault_counters(End::first).held, 8u);
}

// A cable down for less than the retries last: the transfer goes on where it stopped.
TEST_F(TransportTest, HoldShorterThanTheRetriesIsRecovered) {
    open({.timeout = 10, .retry_cnt = 3});
    const Bytes data = pattern(8192, 33);
    a.bus.poke(abuf, data);
    b.post_recv(bqp, 1, {{bbuf, bkey, 8192}});
    wire->hold();
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 8192}});
    settle(a, b);
    for (int i = 0; i < 2; ++i) {  // two resends lost
        a.clock.advance(local_ack_timeout(10) + 1ns);
        settle(a, b);
    }
    wire->resume();
    a.clock.advance(local_ack_timeout(10) + 1ns);  // the third, the last retry_cnt allows
    settle(a, b);
    const auto sent = a.poll(acq);
    ASSERT_TRUE(sent);
    EXPECT_EQ(sent->status(), 0);
    const auto received = b.poll(bcq);
    ASSERT_TRUE(received);
    EXPECT_EQ(received->length(), 8192u);
    EXPECT_EQ(b.bus.peek(bbuf, 8192), data);
    EXPECT_EQ(a.counters().local_ack_timeouts, 3u);
}

// ---- IBA 9.9 ----

// A remote WRITE and a remote READ refused for the same reason (an R_Key that names no
// region) leave their responder QPs alike: in ERR, each with a QP error notification of
// the same reason, and their requesters with REMOTE_ACCESS_ERR.
TEST_F(TransportTest, RefusedRemoteWriteAndReadLeaveTheResponderInTheSameState) {
    open();
    Qp q = a.create_qp(acq, acq, 16, 16);
    Qp r = b.create_qp(bcq, bcq, 16, 16);
    Node::connect(a, q, b, r);
    a.post_send(aqp, spec::wqe_write, spec::signal_comp, {{abuf, akey, 64}}, 0, bbuf, 0x777700);
    a.post_send(q, spec::wqe_read, spec::signal_comp, {{abuf, akey, 64}}, 0, bbuf, 0x777700);
    settle(a, b);
    const auto ac = a.drain(acq);
    ASSERT_EQ(ac.size(), 2u);
    EXPECT_EQ(ac[0].status(), 0x7);  // REMOTE_ACCESS_ERR
    EXPECT_EQ(ac[1].status(), 0x7);
    EXPECT_EQ(qp_state(b, bqp), ERR);
    EXPECT_EQ(qp_state(b, r), ERR);
    std::optional<Bytes> write_error, read_error;
    for (const Bytes& e : b.events()) {
        if (get(e, 9, 1) != 0xC0) continue;
        if (get(e, 4, 4) == bqp.qpn) write_error = e;
        if (get(e, 4, 4) == r.qpn) read_error = e;
    }
    ASSERT_TRUE(write_error && read_error);
    EXPECT_EQ(get(*write_error, 2, 1), get(*read_error, 2, 1));  // req_err_state_reason
    EXPECT_EQ(get(*write_error, 3, 1), get(*read_error, 3, 1));  // res_err_state_reason
    EXPECT_TRUE(b.drain(bcq).empty());                           // neither consumed a receive
}

// ---- Over UDP, the models on their threads ----

class FaultyTransferOverUdp : public TransportTest, public ::testing::WithParamInterface<Case> {};

TEST_P(FaultyTransferOverUdp, EveryMessageArrivesExactlyOnceWithEveryByte) {
    const Case& c = GetParam();
    start(c, true);
    const Outcome out = transfer(c);
    check_counters(c, out);
}

std::vector<Case> udp_cases() {
    std::vector<Case> out;
    for (const Case& c : fault_cases(Size::small))
        if (c.bytes == 4096) out.push_back(c);
    return out;
}

INSTANTIATE_TEST_SUITE_P(SmallMessages, FaultyTransferOverUdp, ::testing::ValuesIn(udp_cases()), case_name);

TEST_F(TransportTest, HeldDatagramCableExhaustsTheRetries) {
    start({"Held", Op::send, 64, 1, 2, {}}, true, 10);
    datagrams_[0]->hold();
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 64}});
    Outcome out;
    std::optional<Cqe> c;
    run_until([&] { return bool(c = a.poll(acq)); }, out);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->status(), transport_retry_exceeded);
    a.nic.stop();
    EXPECT_EQ(a.counters().local_ack_timeouts, 8u);  // retry_cnt 7
    EXPECT_EQ(qp_state(a, aqp), ERR);
}

}  // namespace
}  // namespace rig::bnxt::sim::test
