// The responder of an RC QP against requests no correct requester sends
// (nic/bnxt/sim/src/responder.cpp), from a peer whose frames the test writes (rc_peer.hpp):
// the answer compared byte for byte (BTH and AETH), the regions and receive buffers
// checked untouched. What Linux's rxe does with the same request is the reference
// (rxe_resp.c, named at each test).
#include "rc_peer.hpp"

namespace rig::bnxt::sim::test {
namespace {

using ResponderTest = RcPeerTest;

// ---- IBA 9.7.5.1.x, rxe check_op_seq: the opcode sequence ----

// A MIDDLE or LAST with no FIRST before it (rxe: RESPST_ERR_MISSING_OPCODE_FIRST, class C):
// NAK Invalid Request, the QP to ERR, nothing written.
class MissingFirst : public ResponderTest, public ::testing::WithParamInterface<std::uint8_t> {};

TEST_P(MissingFirst, IsNakedInvalidRequestAndWritesNothing) {
    b.post_recv(qp, 1, {{receive, key, 8192}});
    const std::uint8_t op = GetParam();
    const bool write = op >= WRITE_FIRST;
    Request r = request(op).with(Bytes(op == SEND_MIDDLE || op == WRITE_MIDDLE ? mtu : 100, std::byte{1}));
    if (op == SEND_LAST_IMM || op == WRITE_LAST_IMM) r.with_immediate();
    take(r);
    expect_invalid_request(first_psn);
    EXPECT_FALSE(b.poll(cq)) << (write ? "a WRITE" : "a SEND") << " consumed the receive";
}

INSTANTIATE_TEST_SUITE_P(EachMiddleAndLast, MissingFirst,
                         ::testing::Values(SEND_MIDDLE, SEND_LAST, SEND_LAST_IMM, WRITE_MIDDLE, WRITE_LAST,
                                           WRITE_LAST_IMM));

// After SEND FIRST only SEND MIDDLE or LAST (rxe: RESPST_ERR_MISSING_OPCODE_LAST_C): a WRITE
// ONLY there is refused, writes nothing, and the receive the SEND was filling completes with
// REMOTE_INVALID_REQUEST_ERR, as rxe's do_complete completes resp.wqe with
// IB_WC_REM_INV_REQ_ERR.
TEST_F(ResponderTest, WriteOnlyInsideASendIsNakedAndTheReceiveFails) {
    b.post_recv(qp, 7, {{receive, key, 8192}});
    take(request(SEND_FIRST).with(Bytes(mtu, std::byte{1})).no_ack_request());
    take(request(WRITE_ONLY, first_psn + 1).with(Bytes(64, std::byte{2})).with(Reth{region, key, 64}));
    expect_invalid_request(first_psn + 1, 0, mtu);
    const auto c = b.poll(cq);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->wr_id(), 7u);
    EXPECT_EQ(c->status(), 0x6);  // REMOTE_INVALID_REQUEST_ERR (§5.5.2)
    EXPECT_TRUE(b.bus.peek(receive, mtu) == Bytes(mtu, std::byte{1}));
}

// After WRITE FIRST only WRITE MIDDLE or LAST: a SEND ONLY or a READ there is refused and
// takes no receive, sends no response.
TEST_F(ResponderTest, SendOnlyInsideAWriteIsNakedAndTakesNoReceive) {
    b.post_recv(qp, 1, {{receive, key, 8192}});
    take(write_first());
    b.bus.poke(region, untouched);  // what the FIRST wrote, put back
    take(request(SEND_ONLY, first_psn + 1).with(Bytes(64, std::byte{2})));
    expect_invalid_request(first_psn + 1);
    EXPECT_FALSE(b.poll(cq));
}

TEST_F(ResponderTest, ReadInsideAWriteIsNakedAndAnsweredWithNoResponse) {
    take(write_first());
    b.bus.poke(region, untouched);
    take(request(READ_REQUEST, first_psn + 1).with(Reth{region, key, 64}));
    expect_invalid_request(first_psn + 1);
}

// ---- rxe check_length: the payload of each packet, the DMA length ----

// FIRST and MIDDLE carry exactly the path MTU, LAST 1 to MTU bytes, ONLY 0 to MTU; a
// RETH's DMA length is at most 2^31 (rxe: RESPST_ERR_LENGTH, class C). Checked once the
// receive is taken, so a SEND's receive completes with REMOTE_INVALID_REQUEST_ERR, empty.
TEST_F(ResponderTest, SendFirstShorterThanTheMtuIsNakedAndFailsTheReceive) {
    b.post_recv(qp, 3, {{receive, key, 8192}});
    take(request(SEND_FIRST).with(Bytes(mtu - 24, std::byte{1})).no_ack_request());
    expect_invalid_request(first_psn);
    const auto c = b.poll(cq);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->status(), 0x6);
    EXPECT_EQ(c->wr_id(), 3u);
}

TEST_F(ResponderTest, SendLastOfNoBytesIsNaked) {
    b.post_recv(qp, 3, {{receive, key, 8192}});
    take(request(SEND_FIRST).with(Bytes(mtu, std::byte{1})).no_ack_request());
    take(request(SEND_LAST, first_psn + 1));
    expect_invalid_request(first_psn + 1, 0, mtu);
    const auto c = b.poll(cq);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->status(), 0x6);
    EXPECT_EQ(c->length(), mtu);
}

// A payload above the path MTU is refused, not dropped unanswered.
TEST_F(ResponderTest, SendOnlyAboveTheMtuIsNakedNotDropped) {
    b.post_recv(qp, 3, {{receive, key, 8192}});
    take(request(SEND_ONLY).with(Bytes(mtu + 4, std::byte{1})));
    expect_invalid_request(first_psn);
    const auto c = b.poll(cq);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->status(), 0x6);
}

TEST_F(ResponderTest, WriteMiddleShorterThanTheMtuIsNaked) {
    take(write_first());
    b.bus.poke(region, untouched);
    take(request(WRITE_MIDDLE, first_psn + 1).with(Bytes(mtu / 2, std::byte{2})).no_ack_request());
    expect_invalid_request(first_psn + 1);
}

TEST_F(ResponderTest, WriteOfADmaLengthAbove2To31IsNakedAndWritesNothing) {
    take(request(WRITE_FIRST).with(Bytes(mtu, std::byte{1})).with(Reth{region, key, (1u << 31) + mtu}));
    expect_invalid_request(first_psn);
}

// ---- rxe duplicate_request: a duplicate SEND ----

// A SEND taken and acknowledged, then all of it again (a requester that went back): the
// run of duplicates is acknowledged at its first packet and again at its LAST, which asks
// for an ACK, each through the last PSN taken, as rxe acknowledges duplicate SENDs (C9-105);
// the receive is not filled twice. rxe's requester, having gone back, takes an ACK for a
// WQE only once it has sent the WQE's last packet again: an ACK of the first alone left
// ibv_rc_pingpong waiting for a send completion forever.
TEST_F(ResponderTest, ADuplicateSendIsAcknowledgedAtItsFirstPacketAndAtItsAckRequest) {
    b.post_recv(qp, 5, {{receive, key, 8192}});
    b.post_recv(qp, 6, {{receive, key, 8192}});
    auto send = [&] {
        take(request(SEND_FIRST).with(Bytes(mtu, std::byte{1})).no_ack_request());
        take(request(SEND_MIDDLE, first_psn + 1).with(Bytes(mtu, std::byte{2})).no_ack_request());
        take(request(SEND_LAST, first_psn + 2).with(Bytes(100, std::byte{3})));
    };
    send();
    send();
    const auto out = sent();
    ASSERT_EQ(out.size(), 3u);  // the SEND's ACK, then the duplicate's first packet's and LAST's
    for (const Bytes& f : out) EXPECT_EQ(bth_and_aeth(f), acknowledgement(first_psn + 2, 0x1F, 1));
    const auto c = b.poll(cq);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->wr_id(), 5u);
    EXPECT_EQ(c->length(), 2 * mtu + 100);
    EXPECT_FALSE(b.poll(cq)) << "the duplicate filled a second receive";
    EXPECT_EQ(b.counters().duplicate_requests, 3u);
}

// ---- rxe duplicate_request, find_resource: a duplicate READ ----

// A READ behind the expected PSN is answered again only from the record of a READ taken,
// one of the last `depth` (max_dest_rd_atomic), whose PSNs it falls in, with the same
// R_Key and a range inside the recorded one; else it is dropped (rxe: "Resource not found.
// Class D error").
class DuplicateRead : public ResponderTest {
protected:
    void SetUp() override {
        ResponderTest::SetUp();
        b.bus.poke(region, data);
    }
    // B's responses since the last look, as (opcode, PSN) and their payloads.
    struct Response {
        std::uint8_t opcode;
        std::uint32_t psn;
        Bytes payload;
    };
    std::vector<Response> responses() {
        std::vector<Response> out;
        for (const Bytes& f : sent()) {
            const std::uint8_t op = static_cast<std::uint8_t>(be(f, 42, 1));
            const std::size_t pad = (be(f, 43, 1) >> 4) & 3;
            const std::size_t at = 42 + 12 + (op == 0x0E ? 0 : 4);
            out.push_back(
                {op, be(f, 51, 3),
                 Bytes(f.begin() + static_cast<std::ptrdiff_t>(at), f.end() - 4 - static_cast<std::ptrdiff_t>(pad))});
        }
        return out;
    }
    Request read(std::uint32_t psn, std::uint64_t offset, std::uint32_t length) const {
        return request(READ_REQUEST, psn).with(Reth{region + offset, key, length});
    }
    const Bytes data = pattern(8192, 41);
};

TEST_F(DuplicateRead, WithinTheRecordedReadIsAnsweredFromItsPsn) {
    take(read(first_psn, 0, 3000));         // responses at PSN +0, +1, +2
    take(read(first_psn + 1, 1024, 1976));  // the rest again, from the second response
    const auto out = responses();
    ASSERT_EQ(out.size(), 5u);
    EXPECT_EQ(out[3].opcode, READ_RESPONSE_FIRST);
    EXPECT_EQ(out[3].psn, first_psn + 1);
    EXPECT_EQ(out[4].opcode, READ_RESPONSE_LAST);
    EXPECT_EQ(out[4].psn, first_psn + 2);
    EXPECT_TRUE(out[3].payload == Bytes(data.begin() + 1024, data.begin() + 2048));
    EXPECT_TRUE(out[4].payload == Bytes(data.begin() + 2048, data.begin() + 3000));
    EXPECT_EQ(b.counters().duplicate_requests, 1u);
}

TEST_F(DuplicateRead, AtThePsnOfASendIsDropped) {
    b.post_recv(qp, 1, {{receive, key, 8192}});
    take(read(first_psn, 0, 3000));
    take(request(SEND_ONLY, first_psn + 3).with(Bytes(64, std::byte{1})));
    const auto dropped = b.counters().frames_dropped;
    take(read(first_psn + 3, 0, 64));  // no READ took PSN +3
    const auto out = responses();
    ASSERT_EQ(out.size(), 4u);  // three responses and the SEND's ACK
    EXPECT_EQ(out[3].opcode, ACKNOWLEDGE);
    EXPECT_EQ(b.counters().frames_dropped, dropped + 1);
    EXPECT_EQ(b.counters().duplicate_requests, 1u);
}

TEST_F(DuplicateRead, OutsideTheRecordedRangeOrOfAnotherKeyIsDropped) {
    take(read(first_psn, 0, 3000));
    take(read(first_psn, 4096, 100));                                              // beyond it
    take(read(first_psn, 0, 3001));                                                // longer
    take(request(READ_REQUEST, first_psn).with(Reth{region, key ^ 0x100, 3000}));  // another R_Key
    EXPECT_EQ(responses().size(), 3u);
    EXPECT_EQ(b.counters().duplicate_requests, 3u);
    EXPECT_EQ(qp_state(b, qp), 3);  // RTS: a dropped duplicate is no error
}

// Depth 1: the second READ's record takes the first's place.
TEST_F(DuplicateRead, OnlyTheLastDepthReadsAreAnsweredAgain) {
    take(read(first_psn, 0, 64));
    take(read(first_psn + 1, 64, 64));
    take(read(first_psn, 0, 64));       // forgotten: dropped
    take(read(first_psn + 1, 64, 64));  // answered again
    const auto out = responses();
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(out[2].psn, first_psn + 1);
    EXPECT_TRUE(out[2].payload == Bytes(data.begin() + 64, data.begin() + 128));
}

class DuplicateReadDepthTwo : public DuplicateRead {
protected:
    void SetUp() override {
        open(2);
        b.bus.poke(region, data);
    }
};

TEST_F(DuplicateReadDepthTwo, BothReadsAreAnsweredAgain) {
    take(read(first_psn, 0, 64));
    take(read(first_psn + 1, 64, 64));
    take(read(first_psn, 0, 64));
    take(read(first_psn + 1, 64, 64));
    const auto out = responses();
    ASSERT_EQ(out.size(), 4u);
    EXPECT_EQ(out[2].psn, first_psn);
    EXPECT_EQ(out[3].psn, first_psn + 1);
}

// ---- rxe check_op_valid: RC opcodes the model does not run ----

// Atomics (COMPARE SWAP, FETCH ADD: QUERY_FUNC says ATOMIC_OPS_NOT_SUPPORTED) and SEND with
// invalidate (the model runs no invalidation) are RC requests of Table 38 this responder
// does not execute: NAK Invalid Request and ERR, as rxe answers an opcode its QP does not
// allow (RESPST_ERR_UNSUPPORTED_OPCODE, class C), not a drop as a bad opcode.
struct Unsupported {
    std::uint8_t opcode;
    std::size_t header;  // AtomicETH 28, IETH 4 (Table 38)
    std::size_t payload;
};

class UnsupportedOpcode : public ResponderTest, public ::testing::WithParamInterface<Unsupported> {};

TEST_P(UnsupportedOpcode, IsNakedInvalidRequestNotDropped) {
    b.post_recv(qp, 1, {{receive, key, 8192}});
    const RxCounters before = b.nic.rx_counters();
    take(request(GetParam().opcode).with_extra(GetParam().header).with(Bytes(GetParam().payload, std::byte{1})));
    expect_invalid_request(first_psn);
    EXPECT_EQ(b.nic.rx_counters().bad_opcode, before.bad_opcode);
    EXPECT_EQ(b.nic.rx_counters().delivered, before.delivered + 1);
    EXPECT_FALSE(b.poll(cq));
}

INSTANTIATE_TEST_SUITE_P(AtomicsAndInvalidate, UnsupportedOpcode,
                         ::testing::Values(Unsupported{COMPARE_SWAP, 28, 0}, Unsupported{FETCH_ADD, 28, 0},
                                           Unsupported{SEND_ONLY_INVALIDATE, 4, 64},
                                           Unsupported{SEND_LAST_INVALIDATE, 4, 64}));

// An ATOMIC ACKNOWLEDGE answers an atomic this QP never sent: dropped, not NAKed (a
// response goes to the requester, which asked for none).
TEST_F(ResponderTest, AtomicAcknowledgeOfNothingAskedIsDropped) {
    const auto dropped = b.counters().frames_dropped;
    take(request(ATOMIC_ACKNOWLEDGE).with_aeth(0x1F, 0).with_extra(8).no_ack_request());
    EXPECT_TRUE(sent().empty());
    EXPECT_EQ(b.counters().frames_dropped, dropped + 1);
    EXPECT_EQ(qp_state(b, qp), 3);  // RTS
}

// Table 38's reserved RC opcodes stay bad opcodes.
TEST_F(ResponderTest, ReservedRcOpcodesAreBadOpcodes) {
    const RxCounters before = b.nic.rx_counters();
    for (std::uint8_t op : {std::uint8_t{0x15}, std::uint8_t{0x18}, std::uint8_t{0x1F}}) take(request(op));
    EXPECT_EQ(b.nic.rx_counters().bad_opcode, before.bad_opcode + 3);
    EXPECT_TRUE(sent().empty());
}

}  // namespace
}  // namespace rig::bnxt::sim::test
