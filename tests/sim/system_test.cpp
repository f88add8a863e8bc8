// The simulated machine as a machine: its functions, its sysfs tree and routes, how it is
// built, and two of them in one process.
#include "rig/sim/system.hpp"

#include <gtest/gtest.h>

#include <cstring>

#include "bench.hpp"
#include "driver.hpp"
#include "rig/pci/function.hpp"

namespace rig::test {
namespace {

using pci::Function;
using sim::System;

TEST(System, FunctionsAreTheTopologysInBusOrder) {
    Bench bench;
    System system = bench.build();
    auto listed = system.machine().functions();
    ASSERT_TRUE(listed) << listed.error();
    std::vector<std::string> buses;
    for (const auto& id : *listed) buses.push_back(id.bus);
    EXPECT_EQ(buses, (std::vector<std::string>{"0000:00:00.0", "0000:00:01.0", "0000:00:02.0", "0000:01:00.0",
                                               "0000:02:08.0", "0000:02:10.0", "0000:03:00.0", "0000:04:00.0",
                                               "0000:05:00.0"}));
    EXPECT_EQ((*listed)[7].vendor, 0x1234);
    EXPECT_EQ((*listed)[7].device, 0x5249);
    EXPECT_EQ((*listed)[7].class_code, 0x088000u);
    EXPECT_EQ(system.machine().name(), "sim0");
}

TEST(System, EngineCopiesBetweenDmaBuffers) {
    Bench bench;
    System system = bench.build();
    auto f = Function::take(system.machine(), engine_bus);
    ASSERT_TRUE(f) << f.error();
    EXPECT_EQ(f->addressing(), pci::Addressing::Iommu);
    const pci::Window regs = engine_registers(*f);
    EXPECT_EQ(regs.read32(DmaEngine::id), DmaEngine::id_value);
    auto from = f->alloc_dma(3 * 4096);
    auto to = f->alloc_dma(3 * 4096);
    ASSERT_TRUE(from && to);
    for (std::uint64_t i = 0; i < 3 * 4096; ++i) from->window.write8(i, static_cast<std::uint8_t>(i * 7));
    EXPECT_EQ(engine_copy(*f, regs, from->runs[0].address + 5, to->runs[0].address + 9, 10000), DmaEngine::Status::Done);
    for (std::uint64_t i = 0; i < 10000; ++i) ASSERT_EQ(to->window.read8(i + 9), static_cast<std::uint8_t>((i + 5) * 7)) << i;
    EXPECT_EQ(to->window.read8(8), 0);
    EXPECT_EQ(system.faults(), 0u);
}

}  // namespace
}  // namespace rig::test
