// A simulated machine's bus with an IOMMU on the way (rig/sim/src/bus.cpp, steps 2 and
// 3): what a switch takes untranslated, what the root complex translates, and where the
// translation of a peer mapping (Function::map_peer) reaches another function's BAR.
#include <gtest/gtest.h>

#include "bench.hpp"
#include "driver.hpp"
#include "rig/pci/function.hpp"
#include "rig/sim/faults.hpp"
#include "rig/text.hpp"

namespace rig::test {
namespace {

using pci::DmaAddress;
using pci::Function;
using sim::DmaStatus;
using sim::System;
using Status = DmaEngine::Status;

constexpr std::uint16_t redirect = 0x001d;  // SV RR CR UF, as Linux sets it with an IOMMU on

struct Machine {
    System system;
    Function engine;
    pci::Window registers;
    Function memory;  // the memory device, taken so that its BAR decodes
    pci::Window bar;
};

Machine open(Bench& bench, const char* requester = engine_bus) {
    System system = bench.build();
    auto engine = Function::take(system.machine(), requester);
    auto memory = Function::take(system.machine(), memory_bus);
    if (!engine || !memory) throw std::runtime_error(!engine ? engine.error() : memory.error());
    pci::Window registers = engine_registers(*engine);
    auto bar = memory->map(0, 0, 1 << 20);
    if (!bar) throw std::runtime_error(bar.error());
    return {std::move(system), std::move(*engine), registers, std::move(*memory), *bar};
}

DmaAddress bar_address(const Machine& m, std::uint64_t offset = 0) { return m.memory.bar(0)->address + offset; }

// Behind an IOMMU, below one switch, no ACS: the switch takes the BAR's bus address to the
// BAR, and the IOMMU never sees it, even where the engine's domain maps that very IOVA to
// system memory (as an x86 VFIO user may map it).
TEST(BusIommu, DirectBelowASwitchTakesTheBusAddressAndNotTheIovaOfTheSameValue) {
    Bench bench;
    auto m = open(bench);
    ASSERT_EQ(m.engine.addressing(), pci::Addressing::Iommu);
    ASSERT_EQ(m.system.machine().route(memory_bus, engine_bus).verdict, pci::Verdict::Direct);
    auto from = m.engine.alloc_dma(4096);
    auto shadow = m.engine.alloc_dma(4096);
    ASSERT_TRUE(from && shadow);
    from->window.write64(0, 0x1122334455667788ull);
    const DmaAddress target = bar_address(m, 0x3000);
    sim::Faults(m.system).alias_iova(engine_bus, target, shadow->runs[0].address, 4096);
    EXPECT_EQ(engine_copy(m.engine, m.registers, from->runs[0].address, target, 8), Status::Done);
    EXPECT_EQ(m.bar.read64(0x3000), 0x1122334455667788ull);
    EXPECT_EQ(shadow->window.read64(0), 0u) << "the IOVA of the same value was not reached";
    EXPECT_EQ(m.system.faults(), 0u);
}

// ACS redirect on the switch ports sends the same address up to the root complex, where
// the IOMMU translates it: with the alias it lands in system memory, not in the BAR;
// without one it faults in the IOMMU.
TEST(BusIommu, RedirectSendsTheBusAddressToTheIommuWhichTranslatesIt) {
    Bench bench;
    bench.cpu = sim::Cpu::amd(0x19);  // the root complex carries peer requests
    bench.downstream_acs = redirect;
    auto m = open(bench);
    auto from = m.engine.alloc_dma(4096);
    auto shadow = m.engine.alloc_dma(4096);
    ASSERT_TRUE(from && shadow);
    from->window.write64(0, 0x0badc0ffee0ddf00ull);
    const DmaAddress target = bar_address(m, 0x1000);
    EXPECT_EQ(engine_copy(m.engine, m.registers, from->runs[0].address, target, 8), Status::WriteUnsupported);
    EXPECT_EQ(m.system.recent_faults().back().why, "no IOMMU mapping at IOVA " + text::hex(target.value));
    EXPECT_EQ(m.system.recent_faults().back().status, DmaStatus::UnsupportedRequest);
    sim::Faults(m.system).alias_iova(engine_bus, target, shadow->runs[0].address, 4096);
    EXPECT_EQ(engine_copy(m.engine, m.registers, from->runs[0].address, target, 8), Status::Done);
    EXPECT_EQ(shadow->window.read64(0), 0x0badc0ffee0ddf00ull);
    EXPECT_EQ(m.bar.read64(0x1000), 0u);
}

// ACS redirect and a root complex that carries peer requests (AMD Zen): the NIC's domain
// maps IOVAs to the BAR, and requests at them reach it, reads and writes.
TEST(BusIommu, RedirectToAnAllowedHostBridgeReachesTheBarThroughAPeerMapping) {
    Bench bench;
    bench.cpu = sim::Cpu::amd(0x19);
    bench.downstream_acs = redirect;
    auto m = open(bench);
    ASSERT_EQ(m.system.machine().route(memory_bus, engine_bus).verdict, pci::Verdict::ThroughHostBridge);
    auto mapped = m.engine.map_peer(memory_bus, 0, 0x4000, 2 * 4096);
    ASSERT_TRUE(mapped) << mapped.error();
    EXPECT_EQ(mapped->bytes, 2 * 4096u);
    EXPECT_FALSE(mapped->address >= bar_address(m) && mapped->address < bar_address(m, 1 << 20))
        << "an IOVA, not the BAR";
    EXPECT_EQ(m.engine.pins(), 1u);
    EXPECT_EQ(m.system.holdings(engine_bus).pins, 1u);
    auto from = m.engine.alloc_dma(4096);
    ASSERT_TRUE(from);
    from->window.write64(0, 0x5555aaaa5555aaaaull);
    EXPECT_EQ(engine_copy(m.engine, m.registers, from->runs[0].address, mapped->address + 4096 + 8, 8), Status::Done);
    EXPECT_EQ(m.bar.read64(0x5008), 0x5555aaaa5555aaaaull);
    m.bar.write64(0x4000, 0x0102030405060708ull);
    EXPECT_EQ(engine_copy(m.engine, m.registers, mapped->address, from->runs[0].address + 64, 8), Status::Done);
    EXPECT_EQ(from->window.read64(64), 0x0102030405060708ull);
    EXPECT_EQ(m.system.faults(), 0u);
    // Gone once unmapped: the IOVA faults in the IOMMU.
    m.engine.unmap_peer(*mapped);
    EXPECT_EQ(m.engine.pins(), 0u);
    EXPECT_EQ(engine_copy(m.engine, m.registers, from->runs[0].address, mapped->address, 8), Status::WriteUnsupported);
    EXPECT_EQ(m.system.recent_faults().back().why, "no IOMMU mapping at IOVA " + text::hex(mapped->address.value));
}

// Two root ports, no common bridge: only the root complex can carry it, behind the IOMMU.
TEST(BusIommu, AcrossRootPortsOfAnAllowedHostBridgeThroughAPeerMapping) {
    Bench bench;
    bench.cpu = sim::Cpu::amd(0x17);
    auto m = open(bench, far_engine_bus);
    auto from = m.engine.alloc_dma(4096);
    ASSERT_TRUE(from);
    from->window.write32(0, 0xfeedbeef);
    EXPECT_EQ(engine_copy(m.engine, m.registers, from->runs[0].address, bar_address(m), 4), Status::WriteUnsupported);
    auto mapped = m.engine.map_peer(memory_bus, 0, 0, 4096);
    ASSERT_TRUE(mapped) << mapped.error();
    EXPECT_EQ(engine_copy(m.engine, m.registers, from->runs[0].address, mapped->address, 4), Status::Done);
    EXPECT_EQ(m.bar.read32(0), 0xfeedbeefu);
}

// ACS redirect to a host bridge not on the allow-list (Broadwell-EP): the IOMMU maps the
// IOVA, but the root complex does not carry the request to the BAR.
TEST(BusIommu, PeerMappingThroughAHostBridgeNotAllowedIsACompleterAbort) {
    Bench bench;
    bench.downstream_acs = redirect;
    auto m = open(bench);
    ASSERT_EQ(m.system.machine().route(memory_bus, engine_bus).verdict, pci::Verdict::NotSupported);
    auto mapped = m.engine.map_peer(memory_bus, 0, 0, 4096);
    ASSERT_TRUE(mapped) << mapped.error();
    auto from = m.engine.alloc_dma(4096);
    ASSERT_TRUE(from);
    from->window.write32(0, 7);
    EXPECT_EQ(engine_copy(m.engine, m.registers, from->runs[0].address, mapped->address, 4), Status::WriteAbort);
    const sim::Fault fault = m.system.recent_faults().back();
    EXPECT_EQ(fault.status, DmaStatus::CompleterAbort);
    EXPECT_EQ(fault.address, mapped->address);
    EXPECT_TRUE(fault.why.starts_with("the root complex does not carry 0000:04:00.0's requests to 0000:03:00.0 BAR0: "))
        << fault.why;
    EXPECT_NE(fault.why.find("8086:6f00) is not in the allow-list"), std::string::npos) << fault.why;
    EXPECT_EQ(m.bar.read32(0), 0u);
}

// Without an IOMMU the root complex sees the bus address itself, and carries it where its
// rule allows.
TEST(BusIommu, RedirectWithoutAnIommuReachesAnAllowedBarAtItsBusAddress) {
    Bench bench;
    bench.iommu = false;
    bench.cpu = sim::Cpu::amd(0x19);
    bench.downstream_acs = redirect;
    auto m = open(bench);
    auto from = m.engine.alloc_dma(4096);
    ASSERT_TRUE(from);
    from->window.write32(0, 0x600d);
    EXPECT_EQ(engine_copy(m.engine, m.registers, from->runs[0].address, bar_address(m, 8), 4), Status::Done);
    EXPECT_EQ(m.bar.read32(8), 0x600du);
}

TEST(BusIommu, RequestRunningPastTheBarAtTheRootComplexIsACompleterAbort) {
    Bench bench;
    bench.iommu = false;
    bench.cpu = sim::Cpu::amd(0x19);
    bench.downstream_acs = redirect;
    auto m = open(bench);
    auto from = m.engine.alloc_dma(2 * 4096);
    ASSERT_TRUE(from);
    const DmaAddress last = bar_address(m, (1 << 20) - 4096);
    EXPECT_EQ(engine_copy(m.engine, m.registers, from->runs[0].address, last, 2 * 4096), Status::WriteAbort);
    EXPECT_EQ(m.system.recent_faults().back().why,
              "the request at " + text::hex(last.value) + " of 8 KiB runs past the end of 0000:03:00.0 BAR0");
    EXPECT_EQ(m.bar.read32((1 << 20) - 4096), 0u) << "a faulting request moves nothing";
}

// A register BAR through the IOMMU: the engine reads the far engine's ID register at an
// IOVA mapped to it, and a copy that also touches memory moves both.
TEST(BusIommu, PeerMappingOfARegisterBarCallsTheModel) {
    Bench bench;
    bench.cpu = sim::Cpu::amd(0x17);
    auto m = open(bench);
    auto far = Function::take(m.system.machine(), far_engine_bus);
    ASSERT_TRUE(far) << far.error();
    auto mapped = m.engine.map_peer(far_engine_bus, 0, 0, 4096);
    ASSERT_TRUE(mapped) << mapped.error();
    auto to = m.engine.alloc_dma(4096);
    ASSERT_TRUE(to);
    EXPECT_EQ(engine_copy(m.engine, m.registers, mapped->address + DmaEngine::id, to->runs[0].address, 4),
              Status::Done);
    EXPECT_EQ(to->window.read32(0), DmaEngine::id_value);
}

TEST(BusIommu, MapPeerOfAPhysicalFunctionIsAnError) {
    Bench bench;
    bench.iommu = false;
    auto m = open(bench);
    auto mapped = m.engine.map_peer(memory_bus, 0, 0, 4096);
    ASSERT_FALSE(mapped);
    EXPECT_EQ(mapped.error(),
              "0000:04:00.0: cannot map 4 KiB of 0000:03:00.0 BAR0: the function reaches physical addresses (no "
              "IOMMU), so it has no IOMMU domain to map into; it reaches the BAR at its bus address, where the bus "
              "carries its requests there");
    EXPECT_EQ(m.engine.pins(), 0u);
}

TEST(BusIommu, MapPeerOutsideTheBarIsAnErrorNamingIt) {
    Bench bench;
    auto m = open(bench);
    auto past = m.engine.map_peer(memory_bus, 0, 1 << 20, 4096);
    ASSERT_FALSE(past);
    EXPECT_EQ(past.error(),
              "sim0: 0000:04:00.0: cannot map 4 KiB of 0000:03:00.0 BAR0: 0x100000 is outside "
              "0000:03:00.0 BAR0 of 1 MiB");
    auto none = m.engine.map_peer(memory_bus, 4, 0, 4096);
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error(),
              "sim0: 0000:04:00.0: cannot map 4 KiB of 0000:03:00.0 BAR4: 0000:03:00.0 BAR4 decodes nothing");
    auto nobody = m.engine.map_peer("0000:09:00.0", 0, 0, 4096);
    ASSERT_FALSE(nobody);
    EXPECT_EQ(nobody.error(), "sim0: 0000:04:00.0: cannot map 4 KiB of 0000:09:00.0 BAR0: no such function");
    EXPECT_EQ(m.system.holdings(engine_bus).pins, 0u);
}

TEST(BusIommu, MapPeerMisuseThrows) {
    Bench bench;
    auto m = open(bench);
    EXPECT_THROW((void)m.engine.map_peer("03:00.0", 0, 0, 4096), std::invalid_argument);
    EXPECT_THROW((void)m.engine.map_peer(engine_bus, 0, 0, 4096), std::invalid_argument);
    EXPECT_THROW((void)m.engine.map_peer(memory_bus, 6, 0, 4096), std::invalid_argument);
    EXPECT_THROW((void)m.engine.map_peer(memory_bus, 0, 0, 0), std::invalid_argument);
    EXPECT_THROW((void)m.engine.map_peer(memory_bus, 0, 100, 4096), std::invalid_argument);
    EXPECT_THROW((void)m.engine.map_peer(memory_bus, 0, 0, 4000), std::invalid_argument);
    EXPECT_THROW(m.engine.unmap_peer({DmaAddress{0x1000}, 4096}), std::invalid_argument);
}

// Release gives a peer mapping back with the pins; the IOVA then reaches nothing.
TEST(BusIommu, ReleaseGivesPeerMappingsBack) {
    Bench bench;
    auto m = open(bench);
    auto mapped = m.engine.map_peer(memory_bus, 0, 0, 3 * 4096);
    ASSERT_TRUE(mapped) << mapped.error();
    sim::Faults faults(m.system);
    EXPECT_TRUE(m.engine.release());
    EXPECT_EQ(m.system.holdings(engine_bus), (sim::Holdings{}));
    EXPECT_EQ(faults.give_backs(engine_bus).pins, 1u);
    EXPECT_EQ(faults.double_give_backs(), 0u);
    EXPECT_EQ(m.system.memory_in_use(), 0u);
}

}  // namespace
}  // namespace rig::test
