// The RC transport over a faulty cable with messages of 16 MiB (4096 packets of 4 KiB):
// SEND and RDMA READ at 1% and 10% loss, 1% duplication and reordering within 8 frames,
// by hand over a Wire (transport.hpp). Slow: a 16 MiB READ at 10% loss asks again for
// the rest of the message at each lost response (go-back-N), about 900,000 responses.
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

INSTANTIATE_TEST_SUITE_P(BigMessages, FaultyLargeTransfer, ::testing::ValuesIn(fault_cases(true)), case_name);

}  // namespace
}  // namespace rig::bnxt::sim::test
