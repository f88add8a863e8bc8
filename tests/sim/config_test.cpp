// A simulated function's configuration space, interrupts and reset
// (rig/sim/src/function_config.cpp states which bits are writable).
#include <gtest/gtest.h>

#include "bench.hpp"
#include "driver.hpp"
#include "rig/pci/config.hpp"
#include "rig/pci/function.hpp"

namespace rig::test {
namespace {

namespace cfg = pci::config;
using pci::Function;
using sim::System;

struct Taken {
    System system;
    Function f;
};

Taken take(Bench& bench, const char* bus = engine_bus) {
    System system = bench.build();
    auto f = Function::take(system.machine(), bus);
    if (!f) throw std::runtime_error(f.error());
    return {std::move(system), std::move(*f)};
}

TEST(SimConfig, HeaderIsTheModelsIdentity) {
    Bench bench;
    auto t = take(bench);
    EXPECT_EQ(t.f.config16(cfg::vendor_id), 0x1234);
    EXPECT_EQ(t.f.config16(cfg::device_id), 0x5249);
    EXPECT_EQ(t.f.config32(cfg::revision_id) >> 8, 0x088000u);
    const std::uint64_t bar = t.f.bar(0)->address.value;
    EXPECT_EQ(t.f.config32(cfg::bar0), static_cast<std::uint32_t>(bar) | cfg::bar_memory_64);
    EXPECT_EQ(t.f.config32(cfg::bar0 + 4), static_cast<std::uint32_t>(bar >> 32));
    EXPECT_EQ(t.f.bar(0)->bytes, 16u << 10);
    EXPECT_FALSE(t.f.bar(0)->prefetchable);
    EXPECT_FALSE(t.f.bar(1));
}

TEST(SimConfig, MsixCapabilityFollowsTheExpressOne) {
    Bench bench;
    auto t = take(bench);
    EXPECT_EQ(t.f.capability(cfg::capability_pci_express), 0x40u);
    const auto msix = t.f.capability(cfg::capability_msix);
    ASSERT_EQ(msix, 0x80u);
    const std::uint16_t control = t.f.config16(*msix + cfg::msix_message_control);
    EXPECT_EQ(cfg::msix_table_size.of(control), 3u);  // 4 vectors
    EXPECT_TRUE(control & cfg::msix_enable);          // the take enabled it, as VFIO does
    // The table in BAR0's last page, the PBA after it.
    EXPECT_EQ(t.f.config32(*msix + cfg::msix_table), 0x3000u);
    EXPECT_EQ(t.f.config32(*msix + cfg::msix_pba), 0x3040u);
    EXPECT_FALSE(t.f.capability(0x05));  // MSI: the model has only MSI-X
}

TEST(SimConfig, MemoryDeviceHasNoMsix) {
    Bench bench;
    auto t = take(bench, memory_bus);
    EXPECT_FALSE(t.f.capability(cfg::capability_msix));
    EXPECT_TRUE(t.f.bar(0)->prefetchable);
}

TEST(SimConfig, TakeTurnsMemorySpaceOnAndBusMasterOff) {
    Bench bench;
    auto t = take(bench);
    EXPECT_EQ(t.f.config16(cfg::command), cfg::command_memory_space);
    EXPECT_FALSE(t.f.bus_master());
    t.f.set_bus_master(true);
    EXPECT_EQ(t.f.config16(cfg::command), cfg::command_memory_space | cfg::command_bus_master);
}

TEST(SimConfig, ReadOnlyRegistersIgnoreWrites) {
    Bench bench;
    auto t = take(bench);
    const std::uint32_t bar = t.f.config32(cfg::bar0);
    t.f.set_config16(cfg::vendor_id, 0xdead);
    t.f.set_config32(cfg::bar0, 0xffffffff);
    t.f.set_config8(cfg::capabilities_pointer, 0x90);
    t.f.set_config16(cfg::command, 0xffff);  // only the writable bits stick
    EXPECT_EQ(t.f.config16(cfg::vendor_id), 0x1234);
    EXPECT_EQ(t.f.config32(cfg::bar0), bar);
    EXPECT_EQ(t.f.config8(cfg::capabilities_pointer), 0x40);
    EXPECT_EQ(t.f.config16(cfg::command), 0x0547);
}

TEST(SimConfig, RelaxedOrderingAndNoSnoopAreDeviceControlBits) {
    Bench bench;
    auto t = take(bench);
    const std::uint32_t control = 0x40 + cfg::express_device_control;
    const std::uint16_t before = t.f.config16(control);
    ASSERT_TRUE(t.f.set_relaxed_ordering(true));
    EXPECT_EQ(t.f.config16(control), before | 0x0010);
    EXPECT_EQ(t.f.relaxed_ordering(), true);
    ASSERT_TRUE(t.f.set_no_snoop(true));
    EXPECT_EQ(t.f.config16(control), before | 0x0810);
    ASSERT_TRUE(t.f.set_relaxed_ordering(false));
    EXPECT_EQ(t.f.config16(control), before | 0x0800);
    EXPECT_EQ(t.f.relaxed_ordering(), false);
    EXPECT_EQ(t.f.no_snoop(), true);
}

TEST(SimConfig, InterruptArrivesOnceAndIsConsumed) {
    Bench bench;
    auto t = take(bench);
    const auto regs = engine_registers(t.f);
    auto buffer = t.f.alloc_dma(4096);
    ASSERT_TRUE(buffer);
    EXPECT_EQ(engine_copy(t.f, regs, buffer->runs[0].address, buffer->runs[0].address + 64, 4),
              DmaEngine::Status::Done);
    EXPECT_FALSE(t.f.interrupt(0, std::chrono::milliseconds(1)));  // consumed by engine_copy
    EXPECT_FALSE(t.f.interrupt(9, std::chrono::milliseconds(1)));  // no such vector
}

TEST(SimConfig, MaskedMsixDropsTheInterrupt) {
    Bench bench;
    bench.threading = DmaEngine::Threading::Caller;  // the copy ends inside the write of go
    auto t = take(bench);
    const auto regs = engine_registers(t.f);
    const std::uint32_t control = 0x80 + cfg::msix_message_control;
    t.f.set_config16(control, t.f.config16(control) | cfg::msix_function_mask);
    regs.write32(DmaEngine::vector, 1);
    regs.write32(DmaEngine::go, 1);
    EXPECT_EQ(regs.read32(DmaEngine::copies), 1u);
    EXPECT_FALSE(t.f.interrupt(1, std::chrono::milliseconds(1)));
    t.f.set_config16(control, t.f.config16(control) & ~cfg::msix_function_mask);
    regs.write32(DmaEngine::go, 1);
    EXPECT_TRUE(t.f.interrupt(1, std::chrono::milliseconds(1)));
}

TEST(SimConfig, ResetReturnsModelAndRegistersToPowerOn) {
    Bench bench;
    auto t = take(bench);
    const auto regs = engine_registers(t.f);
    regs.write64(DmaEngine::source, 0x1234'5678'9000);
    ASSERT_TRUE(t.f.set_relaxed_ordering(true));
    ASSERT_TRUE(t.f.reset());
    EXPECT_EQ(t.f.config16(cfg::command), 0);  // no decoding, no mastering: the driver enables them again
    EXPECT_EQ(t.f.relaxed_ordering(), false);
    EXPECT_FALSE(t.f.config16(0x80 + cfg::msix_message_control) & cfg::msix_enable);
    EXPECT_EQ(regs.read32(DmaEngine::id), 0xffffffffu);  // Memory Space is off
    t.f.set_memory_space(true);
    EXPECT_EQ(regs.read64(DmaEngine::source), 0u);
    EXPECT_EQ(regs.read32(DmaEngine::id), DmaEngine::id_value);
}

TEST(SimConfig, InitiateFlrBitResetsAndReadsZero) {
    Bench bench;
    auto t = take(bench);
    const auto regs = engine_registers(t.f);
    regs.write32(DmaEngine::length, 99);
    const std::uint32_t control = 0x40 + cfg::express_device_control;
    t.f.set_config16(control, t.f.config16(control) | cfg::device_control_flr);
    EXPECT_EQ(t.f.config16(control) & cfg::device_control_flr, 0);
    t.f.set_memory_space(true);
    EXPECT_EQ(regs.read32(DmaEngine::length), 0u);
    EXPECT_TRUE(t.f.config32(0x40 + cfg::express_device_capabilities) & cfg::device_capabilities_flr);
}

}  // namespace
}  // namespace rig::test
