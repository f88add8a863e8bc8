// Nic::open and close on a simulated machine with a bnxt model (rig/bnxt/nic.hpp;
// spec/bnxt-hsi.md §7.1, §7.4).
#include "rig/bnxt/nic.hpp"

#include <gtest/gtest.h>

#include "nic_machine.hpp"

namespace rig::bnxt::test {
namespace {

TEST(Nic, OpenBringsTheNicUpAndCloseGivesEverythingBack) {
    SimMachine m("sim0");
    auto nic = m.open();
    ASSERT_TRUE(nic) << nic.error();
    EXPECT_EQ(nic->bus(), nic_bus);
    EXPECT_EQ(nic->mac(), (Mac{0x02, 0, 0, 0, 0, 0x01}));
    EXPECT_EQ(to_string(nic->gid()), "fd00::ff:fe00:1");
    EXPECT_GT(nic->limits().max_qp, 0u);
    EXPECT_FALSE(nic->firmware().empty());
    EXPECT_GT(nic->function().dma_allocations(), 0u);
    ASSERT_TRUE(nic->close());
    EXPECT_EQ(m.system.holdings(nic_bus), (rig::sim::Holdings{}));
    EXPECT_EQ(m.system.memory_in_use(), 0u);
}

}  // namespace
}  // namespace rig::bnxt::test
