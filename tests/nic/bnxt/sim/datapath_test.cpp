// The model's RC data path between two models over a Wire (docs/hsi.md §5, §5.7):
// SEND, SEND with immediate, RDMA READ, RDMA WRITE, exact bytes, completions and their
// order, and many wraps of the SQ, RQ and CQ.
#include <gtest/gtest.h>

#include "pair.hpp"

namespace rig::bnxt::sim::test {
namespace {

using DatapathTest = Pair;

TEST_F(DatapathTest, SendIntoPostedReceiveArrivesExactly) {
    open();
    const Bytes data = pattern(3000, 1);
    a.bus.poke(abuf, data);
    b.post_recv(bqp, 0x12345, {{bbuf, bkey, 4096}});
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 3000}});
    settle(a, b);
    const auto rc = b.poll(bcq);
    ASSERT_TRUE(rc);
    EXPECT_EQ(rc->type(), 1);  // RES_RC
    EXPECT_EQ(rc->status(), 0);
    EXPECT_EQ(rc->length(), 3000u);
    EXPECT_EQ(rc->wr_id(), 0x12345u);
    EXPECT_EQ(rc->res_qp_handle(), bqp.handle);
    EXPECT_EQ(rc->flags(), 0u);
    EXPECT_EQ(b.bus.peek(bbuf, 3000), data);
    EXPECT_EQ(b.bus.get(bbuf + 3000, 1), 0u);  // nothing beyond the message
    const auto req = a.poll(acq);
    ASSERT_TRUE(req);
    EXPECT_EQ(req->type(), 0);  // REQ
    EXPECT_EQ(req->status(), 0);
    EXPECT_EQ(req->sq_cons_idx(), 1u);
    EXPECT_EQ(req->req_qp_handle(), aqp.handle);
    EXPECT_FALSE(a.poll(acq));
    EXPECT_EQ(a.counters().psn_search_mismatches, 0u);
}

TEST_F(DatapathTest, ResponderCqeIsWrittenBeforeTheRequesterCqe) {
    open();
    b.post_recv(bqp, 1, {{bbuf, bkey, 64}});
    b.settle();
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 64}});
    ASSERT_TRUE(a.nic.step());  // the doorbell: the packet leaves A
    EXPECT_FALSE(a.poll(acq, false));
    ASSERT_TRUE(b.nic.step());  // B places it, writes its CQE, acknowledges
    EXPECT_TRUE(b.poll(bcq, false));
    EXPECT_FALSE(a.poll(acq, false));
    ASSERT_TRUE(a.nic.step());  // the acknowledgement
    EXPECT_TRUE(a.poll(acq, false));
}

TEST_F(DatapathTest, SendWithImmediateCarriesTheValueAndTheImmFlag) {
    open();
    b.post_recv(bqp, 7, {{bbuf, bkey, 64}});
    a.post_send(aqp, spec::wqe_send_imm, spec::signal_comp, {{abuf, akey, 16}}, 0xDEADBEEF);
    settle(a, b);
    const auto rc = b.poll(bcq);
    ASSERT_TRUE(rc);
    EXPECT_EQ(rc->status(), 0);
    EXPECT_EQ(rc->imm(), 0xDEADBEEFu);
    EXPECT_EQ(rc->flags(), 0x2u);  // IMM
    EXPECT_EQ(rc->length(), 16u);
}

TEST_F(DatapathTest, ZeroByteSendCompletesWithLengthZero) {
    open();
    b.post_recv(bqp, 9, {});
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {});
    settle(a, b);
    const auto rc = b.poll(bcq);
    ASSERT_TRUE(rc);
    EXPECT_EQ(rc->status(), 0);
    EXPECT_EQ(rc->length(), 0u);
    EXPECT_EQ(rc->wr_id(), 9u);
    EXPECT_EQ(a.poll(acq)->status(), 0);
}

TEST_F(DatapathTest, SendGathersSeveralSgesAndScattersIntoSeveral) {
    open();
    const Bytes data = pattern(5000, 2);
    a.bus.poke(abuf, data);
    b.post_recv(bqp, 1, {{bbuf, bkey, 1000}, {bbuf + 8192, bkey, 10000}});
    a.post_send(aqp, spec::wqe_send, spec::signal_comp,
                {{abuf, akey, 100}, {abuf + 100, akey, 2900}, {abuf + 3000, akey, 2000}});
    settle(a, b);
    ASSERT_EQ(b.poll(bcq)->length(), 5000u);
    EXPECT_EQ(b.bus.peek(bbuf, 1000), Bytes(data.begin(), data.begin() + 1000));
    EXPECT_EQ(b.bus.peek(bbuf + 8192, 4000), Bytes(data.begin() + 1000, data.end()));
}

TEST_F(DatapathTest, InlineSendCarriesTheWqeBytes) {
    open();
    const Bytes data = pattern(96, 3);
    b.post_recv(bqp, 1, {{bbuf, bkey, 128}});
    a.post_inline(aqp, data);
    settle(a, b);
    ASSERT_EQ(b.poll(bcq)->length(), 96u);
    EXPECT_EQ(b.bus.peek(bbuf, 96), data);
    EXPECT_EQ(a.poll(acq)->status(), 0);
}

TEST_F(DatapathTest, RdmaReadBringsThePeersBytes) {
    open();
    const Bytes data = pattern(10000, 4);
    b.bus.poke(bbuf + 100, data);
    a.post_send(aqp, spec::wqe_read, spec::signal_comp, {{abuf, akey, 10000}}, 0, bbuf + 100, bkey);
    settle(a, b);
    const auto req = a.poll(acq);
    ASSERT_TRUE(req);
    EXPECT_EQ(req->status(), 0);
    EXPECT_EQ(a.bus.peek(abuf, 10000), data);
    EXPECT_FALSE(b.poll(bcq));  // §5.5.2: a READ consumes no RQ WQE
}

TEST_F(DatapathTest, RdmaWriteAndWriteWithImmediate) {
    open();
    const std::uint32_t wkey = b.dma_mr(spec::mr_local_write | spec::mr_remote_write);
    const Bytes data = pattern(2500, 5);
    a.bus.poke(abuf, data);
    a.post_send(aqp, spec::wqe_write, spec::signal_comp, {{abuf, akey, 2500}}, 0, bbuf, wkey);
    settle(a, b);
    EXPECT_EQ(a.poll(acq)->status(), 0);
    EXPECT_EQ(b.bus.peek(bbuf, 2500), data);
    EXPECT_FALSE(b.poll(bcq));
    b.post_recv(bqp, 3, {});
    a.post_send(aqp, spec::wqe_write_imm, spec::signal_comp, {{abuf, akey, 100}}, 0x01020304, bbuf + 4096, wkey);
    settle(a, b);
    const auto rc = b.poll(bcq);
    ASSERT_TRUE(rc);
    EXPECT_EQ(rc->status(), 0);
    EXPECT_EQ(rc->flags(), 0xAu);  // IMM | RDMA
    EXPECT_EQ(rc->imm(), 0x01020304u);
    EXPECT_EQ(rc->length(), 100u);
    EXPECT_EQ(rc->wr_id(), 3u);
}

TEST_F(DatapathTest, UnsignaledSendWritesNoRequesterCqe) {
    open();
    b.post_recv(bqp, 1, {{bbuf, bkey, 64}});
    b.post_recv(bqp, 2, {{bbuf, bkey, 64}});
    a.post_send(aqp, spec::wqe_send, 0, {{abuf, akey, 8}});
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 8}});
    settle(a, b);
    const auto c = a.poll(acq);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->sq_cons_idx(), 2u);  // completes both (§5.5.1)
    EXPECT_FALSE(a.poll(acq));
    EXPECT_EQ(b.drain(bcq).size(), 2u);
}

TEST_F(DatapathTest, ThousandSmallSendsArriveInOrderThroughManyWraps) {
    open({.sq_size = 64, .rq_size = 65, .cq_size = 129});
    int sent = 0, received = 0, completed = 0, posted = 0;
    for (int round = 0; completed < 1000; ++round) {
        ASSERT_LT(round, 1000) << "no progress: " << completed << " completed";
        while (posted < 1000 && posted - received < 60) {
            b.post_recv(bqp, static_cast<std::uint32_t>(posted), {{bbuf + 64 * (posted % 64), bkey, 64}});
            ++posted;
        }
        while (sent < 1000 && sent - completed < 60 && sent < posted) {
            a.bus.put(abuf + 64 * (sent % 64), 4, 0xA0000000u + static_cast<std::uint32_t>(sent));
            a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf + 64 * (sent % 64), akey, 4}});
            ++sent;
        }
        settle(a, b);
        for (const auto& c : b.drain(bcq)) {
            ASSERT_EQ(c.status(), 0);
            ASSERT_EQ(c.wr_id(), static_cast<std::uint32_t>(received));
            ASSERT_EQ(b.bus.get(bbuf + 64 * (received % 64), 4), 0xA0000000u + static_cast<std::uint32_t>(received));
            ++received;
        }
        for (const auto& c : a.drain(acq)) {
            ASSERT_EQ(c.status(), 0);
            ASSERT_EQ(c.sq_cons_idx(), static_cast<std::uint16_t>((completed + 1) % 64));
            ++completed;
        }
    }
    EXPECT_EQ(received, 1000);
    EXPECT_EQ(a.counters().epoch_faults + b.counters().epoch_faults, 0u);
    EXPECT_EQ(a.counters().psn_search_mismatches, 0u);
}

class MessageSizeTest : public Pair, public ::testing::WithParamInterface<std::uint64_t> {};

TEST_P(MessageSizeTest, SendAndReadMoveExactBytes) {
    const std::uint64_t n = GetParam();
    open({.mtu_code = 4, .buffer_bytes = std::max<std::uint64_t>(n, 4096)});
    send_and_read_back(n);
}

INSTANTIATE_TEST_SUITE_P(Sizes, MessageSizeTest,
                         ::testing::Values(1, 15, 16, 17, 1023, 1024, 1025, 4095, 4096, 4097, 65536 + 3,
                                           (1u << 20) + 7));

// 64 MiB: tests/nic/bnxt/sim/large_test.cpp (labelled slow).

// A Wire starts with its frame buffers: the first 4 MiB each way (1024 frames of a 4096
// MTU) are built in them, not in new memory.
TEST_F(DatapathTest, FirstTransfersOverANewWireBuildNoFrameInNewMemory) {
    open({.mtu_code = 4, .buffer_bytes = 4 << 20});
    send_and_read_back(4 << 20);
    EXPECT_EQ(a.counters().frames_sent, 1024u + 1u);  // the send's packets, the read request
    EXPECT_EQ(a.counters().frame_buffers_made, 0u);
    EXPECT_EQ(b.counters().frame_buffers_made, 0u);
}

TEST_F(DatapathTest, LoopbackQpsOnOneNicTalkWithoutTheWire) {
    open();
    Qp q1 = a.create_qp(acq, acq, 16, 16);
    Qp q2 = a.create_qp(acq, acq, 16, 16);
    Node::connect(a, q1, a, q2);
    const Bytes data = pattern(2000, 6);
    a.bus.poke(abuf, data);
    a.post_recv(q2, 5, {{abuf + 8192, akey, 4096}});
    a.post_send(q1, spec::wqe_send, spec::signal_comp, {{abuf, akey, 2000}});
    const auto sent_before = a.counters().frames_sent;
    a.settle();
    const auto cqes = a.drain(acq);
    ASSERT_EQ(cqes.size(), 2u);
    EXPECT_EQ(cqes[0].type(), 1);  // the responder's first
    EXPECT_EQ(cqes[1].type(), 0);
    EXPECT_EQ(a.bus.peek(abuf + 8192, 2000), data);
    EXPECT_EQ(a.counters().frames_sent, sent_before);
}

}  // namespace
}  // namespace rig::bnxt::sim::test
