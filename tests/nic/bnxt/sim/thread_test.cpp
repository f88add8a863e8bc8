// The model on its own thread beside the "driver" (the test), as a NIC runs beside the
// CPU (nic.hpp). The test waits by polling memory against a deadline, never by sleeping.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "pair.hpp"

namespace rig::bnxt::sim::test {
namespace {

using ThreadTest = Pair;

TEST_F(ThreadTest, TwoModelsOnTheirThreadsCarryTwoHundredSendsInOrder) {
    open({.sq_size = 32, .rq_size = 32, .cq_size = 64});
    a.nic.start();
    b.nic.start();
    a.nic.start();  // idempotent
    EXPECT_TRUE(a.nic.running());
    int sent = 0, received = 0, completed = 0;
    while (completed < 200) {
        while (sent < 200 && sent - completed < 16) {
            b.post_recv(bqp, static_cast<std::uint32_t>(sent), {{bbuf + 64 * (sent % 32), bkey, 64}});
            a.bus.put(abuf + 64 * (sent % 32), 4, 0xB0000000u + static_cast<std::uint32_t>(sent));
            a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf + 64 * (sent % 32), akey, 4}});
            ++sent;
        }
        const auto rc = wait_for(b, bcq, 1);
        ASSERT_EQ(rc.size(), 1u) << "receive " << received;
        ASSERT_EQ(rc[0].wr_id(), static_cast<std::uint32_t>(received));
        // The bytes of a receive are in memory once its completion was taken (seed, Region).
        ASSERT_EQ(b.bus.get(bbuf + 64 * (received % 32), 4), 0xB0000000u + static_cast<std::uint32_t>(received));
        ++received;
        const auto sc = wait_for(a, acq, 1);
        ASSERT_EQ(sc.size(), 1u) << "send " << completed;
        ASSERT_EQ(sc[0].status(), 0);
        ++completed;
    }
    a.nic.stop();
    b.nic.stop();
    EXPECT_FALSE(a.nic.running());
    EXPECT_EQ(a.counters().epoch_faults + b.counters().epoch_faults, 0u);
}

TEST_F(ThreadTest, CommandsCompleteWhileTheThreadRunsAndStepsMayStillBeTaken) {
    open();
    a.nic.start();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    // rcfw() settles by stepping too: steps and the thread share the work.
    for (int i = 0; i < 50 && std::chrono::steady_clock::now() < deadline; ++i) {
        Msg m(16);
        m.put(0, 1, spec::op_query_version);
        const std::size_t slots = 1;
        m.put(1, 1, slots).put(4, 2, a.cookie++);
        a.bus.poke(a.cmdq + (a.cmdq_prod % a.cmdq_depth) * 16, m.b);
        a.cmdq_prod = (a.cmdq_prod + 1) & 0xFFFF;
        a.w32(0x60C, a.cmdq_prod);
        a.w32(0x700, 1);
        std::optional<Bytes> e;
        while (!(e = a.creq_take()) && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
        ASSERT_TRUE(e) << i;
        EXPECT_EQ(get(*e, 1, 1), 0u);
    }
    a.nic.stop();
}

}  // namespace
}  // namespace rig::bnxt::sim::test
