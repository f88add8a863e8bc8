// The largest messages end to end (rig/bnxt/qp.hpp): 64 MiB sent into a posted receive and
// read back by RDMA READ, every byte checked. Labelled slow: the sanitizer presets skip it.
#include <gtest/gtest.h>

#include "nic_machine.hpp"

namespace rig::bnxt::test {
namespace {

TEST(QpSlow, SixtyFourMiBSendAndReadDeliverExactlyTheBytes) {
    Pair p;
    const std::uint64_t n = 64 << 20;
    Region ra = host(*p.sa.nic, n), rb = host(*p.sb.nic, n), rc = host(*p.sa.nic, n);
    const auto data = pattern(n, 64);
    ra.write(0, data);
    ASSERT_TRUE(p.sb.qp->post(Recv{.region = &rb, .bytes = n, .id = 1}));
    ASSERT_TRUE(p.sa.qp->post(Send{.region = &ra, .bytes = n, .id = 2}));
    const auto got = take(*p.sb.recv_cq, 1, std::chrono::minutes(5));
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].status, Status::Ok);
    EXPECT_EQ(got[0].bytes, n);
    EXPECT_TRUE(read_back(rb, 0, n) == data);
    ASSERT_EQ(take(*p.sa.send_cq, 1).size(), 1u);
    ASSERT_TRUE(p.sa.qp->post(Read{.region = &rc, .bytes = n, .remote = rb.remote(0), .id = 3}));
    const auto read = take(*p.sa.send_cq, 1, std::chrono::minutes(5));
    ASSERT_EQ(read.size(), 1u);
    EXPECT_EQ(read[0].status, Status::Ok);
    EXPECT_TRUE(read_back(rc, 0, n) == data);
}

}  // namespace
}  // namespace rig::bnxt::test
