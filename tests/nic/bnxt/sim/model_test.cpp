// The model as a rig::sim::Device (nic.hpp): identity, BAR4, Function Level Reset,
// lifecycle.
#include <gtest/gtest.h>

#include <stdexcept>

#include "harness.hpp"

namespace rig::bnxt::sim::test {
namespace {

TEST(BnxtModelNic, IdentityIsABcm57508WithThreeSixtyFourBitBars) {
    Model nic;
    const auto id = nic.identity();
    EXPECT_EQ(id.vendor, 0x14E4);  // §1.1
    EXPECT_EQ(id.device, 0x1750);
    EXPECT_EQ(id.class_code, 0x020000u);
    for (unsigned bar : {0u, 2u, 4u}) {  // §1.2
        EXPECT_TRUE(id.bars[bar].is64) << bar;
        EXPECT_GE(id.bars[bar].bytes, 4096u) << bar;
        EXPECT_EQ(id.bars[bar].bytes & (id.bars[bar].bytes - 1), 0u) << bar;
    }
    EXPECT_GT(id.bars[2].bytes, 0x10000u);  // the doorbell page at 0x10000 lies inside
    EXPECT_EQ(id.bars[1].bytes, 0u);
    EXPECT_EQ(id.msix_vectors, 16u);
    EXPECT_TRUE(nic.memory(0).empty());  // registers, not memory
}

TEST(BnxtModelNic, Bar4ReadsZeroAndIgnoresWrites) {
    Node n;
    n.nic.write(4, 0x10, 4, 0x12345678);
    EXPECT_EQ(n.nic.read(4, 0x10, 4), 0u);
    EXPECT_EQ(n.counters().bar_unmapped, 0u);
}

TEST(BnxtModelNic, FunctionLevelResetForgetsRingsAndTheChannel) {
    Node n;
    n.up();
    n.nic.reset();
    // The firmware forgot VER_GET (FAIL until it comes again); the CREQ ring is gone, and so
    // is the channel: a command gets no completion.
    EXPECT_EQ(get(n.hwrm(Msg(32).put(0, 2, 0x0051).put(16, 1, 5).put(18, 2, n.creq.id)), 0, 2), 0x1u);
    ASSERT_EQ(n.boot(), 0);
    EXPECT_EQ(get(n.hwrm(Msg(32).put(0, 2, 0x0051).put(16, 1, 5).put(18, 2, n.creq.id)), 0, 2), 0x2u);
    Msg q(16);
    q.put(0, 1, spec::op_query_version).put(1, 1, 1);
    n.bus.poke(n.cmdq, q.b);
    n.w32(0x60C, 1);
    n.w32(0x700, 1);
    n.settle();
    EXPECT_FALSE(n.creq_take());
    EXPECT_EQ(n.counters().bad_descriptors, 1u);  // a trigger with no channel latched
}

TEST(BnxtModelNic, StartBeforeAttachIsALogicError) {
    Model nic;
    EXPECT_THROW(nic.start(), std::logic_error);
    EXPECT_FALSE(nic.running());
    EXPECT_FALSE(nic.step());
}

TEST(BnxtModelNic, WireRefusesOneNicTwiceAndASecondCable) {
    Node a(1), b(2), c(3);
    EXPECT_THROW(Wire(a.nic, a.nic), std::invalid_argument);
    Wire w(a.nic, b.nic);
    EXPECT_THROW(Wire(a.nic, c.nic), std::invalid_argument);
}

TEST(BnxtModelNic, FramesOfAnUnpluggedPortAreDroppedAndCounted) {
    Node a(1), b(2);
    a.up();
    b.up();
    Cq acq = a.create_cq(64), bcq = b.create_cq(64);
    Qp aqp = a.create_qp(acq, acq, 16, 16), bqp = b.create_qp(bcq, bcq, 16, 16);
    const std::uint32_t key = a.dma_mr(spec::mr_local_write);
    {
        Wire w(a.nic, b.nic);
        Node::connect(a, aqp, b, bqp);
    }
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{a.bus.alloc(4096), key, 8}});
    a.settle();
    EXPECT_EQ(a.counters().frames_dropped, 1u);
    EXPECT_EQ(b.counters().frames_received, 0u);
}

TEST(BnxtModelNic, FuncCfgIsAccepted) {
    Node n;
    const Bytes r = n.hwrm(Msg(24).put(0, 2, 0x0017));
    ASSERT_EQ(r.size(), 16u);
    EXPECT_EQ(get(r, 0, 2), 0u);
}

}  // namespace
}  // namespace rig::bnxt::sim::test
