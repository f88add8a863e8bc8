// A 64 MiB SEND and RDMA READ between two models (slow: 65,536 packets each way at a
// 1 KiB path MTU... at 4 KiB, 16,384).
#include <gtest/gtest.h>

#include "pair.hpp"

namespace rig::bnxt::sim::test {
namespace {

using LargeMessageTest = Pair;

TEST_F(LargeMessageTest, SixtyFourMebibyteSendAndReadMoveExactBytes) {
    const std::uint64_t n = std::uint64_t{64} << 20;
    open({.mtu_code = 4, .buffer_bytes = n});
    const Bytes data = pattern(n, 64);
    a.bus.poke(abuf, data);
    b.post_recv(bqp, 1, {{bbuf, bkey, static_cast<std::uint32_t>(n)}});
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, static_cast<std::uint32_t>(n)}});
    settle(a, b);
    const auto rc = b.poll(bcq);
    ASSERT_TRUE(rc);
    ASSERT_EQ(rc->status(), 0);
    ASSERT_EQ(rc->length(), n);
    ASSERT_EQ(a.poll(acq)->status(), 0);
    ASSERT_TRUE(b.bus.peek(bbuf, n) == data);
    a.bus.poke(abuf, Bytes(n));
    a.post_send(aqp, spec::wqe_read, spec::signal_comp, {{abuf, akey, static_cast<std::uint32_t>(n)}}, 0, bbuf, bkey);
    settle(a, b);
    ASSERT_EQ(a.poll(acq)->status(), 0);
    EXPECT_TRUE(a.bus.peek(abuf, n) == data);
}

}  // namespace
}  // namespace rig::bnxt::sim::test
