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
    send_and_read_back(n);
}

}  // namespace
}  // namespace rig::bnxt::sim::test
