// CQ arming, NQ notifications and MSI-X (docs/hsi.md §5.6, §5.8.1, §4.6.7).
#include <gtest/gtest.h>

#include "pair.hpp"

namespace rig::bnxt::sim::test {
namespace {

using NotifyTest = Pair;

void send_one(Node& a, Node& b, Qp& aqp, Qp& bqp, std::uint64_t abuf, std::uint32_t akey, std::uint64_t bbuf,
              std::uint32_t bkey, std::uint8_t flags = spec::signal_comp) {
    b.post_recv(bqp, 1, {{bbuf, bkey, 64}});
    a.post_send(aqp, spec::wqe_send, flags, {{abuf, akey, 8}});
    settle(a, b);
}

TEST_F(NotifyTest, ArmedCqNotifiesItsNqOnceAndTheArmedNqInterrupts) {
    open();
    b.ring(doorbell(spec::db_nq_arm, b.nq.id, 0, 0));
    b.ring(doorbell(spec::db_cq_armall, bcq.id, bcq.index, bcq.epoch));
    send_one(a, b, aqp, bqp, abuf, akey, bbuf, bkey);
    const auto e = b.nq_take(b.nq);
    ASSERT_TRUE(e);
    EXPECT_EQ(get(*e, 0, 2) & 0x3F, 0x30u);  // CQ_NOTIFICATION
    EXPECT_EQ(get(*e, 4, 4) | (get(*e, 12, 4) << 32), bcq.handle);
    EXPECT_EQ(b.bus.interrupts(1), 1u);  // the NQ's logical_id
    // Disarmed: a second CQE notifies nothing until armed (and enabled) again.
    b.drain(bcq);
    send_one(a, b, aqp, bqp, abuf, akey, bbuf, bkey);
    EXPECT_FALSE(b.nq_take(b.nq));
    EXPECT_EQ(b.bus.interrupts(1), 1u);
}

TEST_F(NotifyTest, ArmWithoutArmEnableAfterANotificationDoesNothing) {
    open();
    b.ring(doorbell(spec::db_cq_armall, bcq.id, bcq.index, bcq.epoch));
    send_one(a, b, aqp, bqp, abuf, akey, bbuf, bkey);
    ASSERT_TRUE(b.nq_take(b.nq));
    b.drain(bcq);
    b.ring(doorbell(spec::db_cq_armall, bcq.id, bcq.index, bcq.epoch));  // no CQ_ARMENA since
    send_one(a, b, aqp, bqp, abuf, akey, bbuf, bkey);
    EXPECT_FALSE(b.nq_take(b.nq));
    b.drain(bcq);
    b.ring(doorbell(spec::db_cq_armena, bcq.id, 0, 0));
    b.ring(doorbell(spec::db_cq_armall, bcq.id, bcq.index, bcq.epoch));
    send_one(a, b, aqp, bqp, abuf, akey, bbuf, bkey);
    EXPECT_TRUE(b.nq_take(b.nq));
}

TEST_F(NotifyTest, ArmSolicitedWaitsForASolicitedOrErrorCqe) {
    open();
    b.ring(doorbell(spec::db_cq_armse, bcq.id, bcq.index, bcq.epoch));
    send_one(a, b, aqp, bqp, abuf, akey, bbuf, bkey);  // not solicited
    EXPECT_FALSE(b.nq_take(b.nq));
    send_one(a, b, aqp, bqp, abuf, akey, bbuf, bkey, spec::signal_comp | spec::solicited);
    EXPECT_TRUE(b.nq_take(b.nq));
}

TEST_F(NotifyTest, ArmingWithACqePendingNotifiesAtOnce) {
    open();
    send_one(a, b, aqp, bqp, abuf, akey, bbuf, bkey);
    EXPECT_FALSE(b.nq_take(b.nq));
    b.ring(doorbell(spec::db_cq_armall, bcq.id, bcq.index, bcq.epoch));
    b.settle();
    EXPECT_TRUE(b.nq_take(b.nq));
}

TEST_F(NotifyTest, UnarmedNqGetsTheEntryButNoInterruptUntilArmed) {
    open();
    b.ring(doorbell(spec::db_cq_armall, bcq.id, bcq.index, bcq.epoch));
    send_one(a, b, aqp, bqp, abuf, akey, bbuf, bkey);
    EXPECT_EQ(b.bus.interrupts(1), 0u);
    b.ring(doorbell(spec::db_nq_arm, b.nq.id, 0, 0));  // the entry at 0 is pending
    b.settle();
    EXPECT_EQ(b.bus.interrupts(1), 1u);
}

TEST_F(NotifyTest, PollModeNqNeverInterrupts) {
    open({.nq_int_mode = 3});  // int_mode 3: poll, on vector 2
    b.ring(doorbell(spec::db_nq_arm, b.nq.id, 0, 0));
    b.ring(doorbell(spec::db_cq_armall, bcq.id, 0, 0));
    send_one(a, b, aqp, bqp, abuf, akey, bbuf, bkey);
    EXPECT_TRUE(b.nq_take(b.nq));
    EXPECT_EQ(b.bus.interrupts(2), 0u);
}

TEST_F(NotifyTest, DestroyCqReportsEveryNotificationItGenerated) {
    open();
    for (int i = 0; i < 3; ++i) {
        b.ring(doorbell(spec::db_cq_armena, bcq.id, 0, 0));
        b.ring(doorbell(spec::db_cq_armall, bcq.id, bcq.index, bcq.epoch));
        send_one(a, b, aqp, bqp, abuf, akey, bbuf, bkey);
        b.drain(bcq);
    }
    ASSERT_EQ(b.rcfw(Msg(24).put(0, 1, spec::op_destroy_qp).put(16, 4, bqp.qpn))->status, 0);
    const auto d = b.rcfw(Msg(24).put(0, 1, spec::op_destroy_cq).put(16, 4, bcq.id));
    ASSERT_TRUE(d);
    EXPECT_EQ(d->status, 0);
    EXPECT_EQ(get(d->raw, 12, 2), 3u);  // total_cnq_events
}

}  // namespace
}  // namespace rig::bnxt::sim::test
