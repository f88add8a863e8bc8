// The RC transport over a faulty cable: the RDMA READs of 16 MiB (4096 responses of 4 KiB)
// at 10% loss and with reordering within 8 frames, by hand over a Wire (transport.hpp).
// Slow: each lost or overtaken response asks again for the rest of the message
// (go-back-N), some 900,000 responses (4-10 s each).
#include <gtest/gtest.h>

#include "transport.hpp"

namespace rig::bnxt::sim::test {
namespace {

class FaultyLargeTransfer : public TransportTest, public ::testing::WithParamInterface<Case> {};

TEST_P(FaultyLargeTransfer, EveryByteArrivesOnce) {
    const Case& c = GetParam();
    start(c, false);
    const Outcome out = transfer(c);
    check_counters(c, out);
}

INSTANTIATE_TEST_SUITE_P(LargeMessages, FaultyLargeTransfer, ::testing::ValuesIn(fault_cases(Size::slow)), case_name);

}  // namespace
}  // namespace rig::bnxt::sim::test
