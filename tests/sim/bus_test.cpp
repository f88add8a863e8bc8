// A simulated machine's bus: where a model's DMA goes, and the faults where it may not
// (rig/sim/src/bus.cpp states the rule).
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "bench.hpp"
#include "driver.hpp"
#include "rig/pci/config.hpp"
#include "rig/pci/function.hpp"
#include "rig/text.hpp"

namespace rig::test {
namespace {

using pci::DmaAddress;
using pci::Function;
using sim::DmaStatus;
using sim::System;
using Status = DmaEngine::Status;

struct Taken {
    System system;
    Function engine;
    pci::Window registers;
};

Taken take_engine(Bench& bench, const char* bus = engine_bus) {
    System system = bench.build();
    auto f = Function::take(system.machine(), bus);
    if (!f) throw std::runtime_error(f.error());
    pci::Window registers = engine_registers(*f);
    return {std::move(system), std::move(*f), registers};
}

// The memory device, taken and decoding memory, with its BAR0 mapped.
pci::Window memory_bar(const System& system, std::optional<Function>& holder) {
    auto f = Function::take(system.machine(), memory_bus);
    if (!f) throw std::runtime_error(f.error());
    holder = *f;
    auto w = f->map(0, 0, 1 << 20);
    if (!w) throw std::runtime_error(w.error());
    return *w;
}

TEST(Bus, PeerWriteBelowASwitchArrivesInTheBar) {
    Bench bench;
    auto t = take_engine(bench);
    std::optional<Function> memory;
    const pci::Window bar = memory_bar(t.system, memory);
    auto from = t.engine.alloc_dma(4096);
    ASSERT_TRUE(from);
    from->window.write64(0, 0x0123456789abcdefull);
    const DmaAddress target{memory->bar(0)->address.value + 0x2000};
    EXPECT_EQ(engine_copy(t.engine, t.registers, from->runs[0].address, target, 8), Status::Done);
    EXPECT_EQ(bar.read64(0x2000), 0x0123456789abcdefull);
    EXPECT_EQ(t.system.faults(), 0u);
}

// Without an IOMMU the root complex sees the bus address and refuses it (with one, the
// IOMMU faults it first: bus_iommu_test.cpp).
TEST(Bus, PeerWriteWhereAcsRedirectsToAHostBridgeNotAllowedIsACompleterAbort) {
    Bench bench;
    bench.iommu = false;
    bench.downstream_acs = 0x001d;  // SV RR CR UF, as Linux sets it with an IOMMU on
    auto t = take_engine(bench);
    std::optional<Function> memory;
    const pci::Window bar = memory_bar(t.system, memory);
    auto from = t.engine.alloc_dma(4096);
    ASSERT_TRUE(from);
    from->window.write64(0, 0x0123456789abcdefull);
    const DmaAddress target{memory->bar(0)->address.value + 0x2000};
    EXPECT_EQ(engine_copy(t.engine, t.registers, from->runs[0].address, target, 8), Status::WriteAbort);
    EXPECT_EQ(bar.read64(0x2000), 0u);  // nothing arrived
    ASSERT_EQ(t.system.faults(), 1u);
    const sim::Fault fault = t.system.recent_faults().back();
    EXPECT_EQ(fault.requester, engine_bus);
    EXPECT_EQ(fault.status, DmaStatus::CompleterAbort);
    EXPECT_EQ(fault.address, target);
    EXPECT_EQ(fault.bytes, 8u);
    EXPECT_TRUE(fault.write);
    EXPECT_NE(fault.why.find("0000:03:00.0 BAR0"), std::string::npos) << fault.why;
    EXPECT_NE(fault.why.find("not supported"), std::string::npos) << fault.why;
}

TEST(Bus, PeerWriteWhereAcsRedirectsOnAmdZenGoesThroughTheHostBridge) {
    Bench bench;
    bench.iommu = false;  // the root complex sees the bus address itself
    bench.cpu = sim::Cpu::amd(0x19);
    bench.downstream_acs = 0x001d;
    auto t = take_engine(bench);
    std::optional<Function> memory;
    const pci::Window bar = memory_bar(t.system, memory);
    auto from = t.engine.alloc_dma(4096);
    ASSERT_TRUE(from);
    from->window.write32(0, 0xa5a5a5a5);
    EXPECT_EQ(engine_copy(t.engine, t.registers, from->runs[0].address, memory->bar(0)->address, 4), Status::Done);
    EXPECT_EQ(bar.read32(0), 0xa5a5a5a5u);
}

TEST(Bus, PeerWriteAcrossRootPortsOfAHostBridgeNotAllowedIsACompleterAbort) {
    Bench bench;
    bench.iommu = false;
    auto t = take_engine(bench, far_engine_bus);
    std::optional<Function> memory;
    const pci::Window bar = memory_bar(t.system, memory);
    auto from = t.engine.alloc_dma(4096);
    ASSERT_TRUE(from);
    EXPECT_EQ(engine_copy(t.engine, t.registers, from->runs[0].address, memory->bar(0)->address, 4),
              Status::WriteAbort);
    EXPECT_EQ(t.system.recent_faults().back().status, DmaStatus::CompleterAbort);
}

// Each engine writes into each function's BAR at its bus address, without an IOMMU: it
// arrives exactly where forwards holds.
TEST(Bus, PeerDmaArrivesExactlyWhereTheRouteForwards) {
    for (const bool acs : {false, true}) {
        Bench bench;
        bench.iommu = false;
        if (acs) bench.downstream_acs = 0x001d;
        System system = bench.build();
        std::optional<Function> memory;
        const pci::Window bar = memory_bar(system, memory);
        for (const char* requester : {engine_bus, far_engine_bus}) {
            auto f = Function::take(system.machine(), requester);
            ASSERT_TRUE(f);
            const auto regs = engine_registers(*f);
            auto from = f->alloc_dma(4096);
            ASSERT_TRUE(from);
            from->window.write32(0, 0x600d0000u + (acs ? 1u : 0u));
            const bool forwards = system.machine().forwards(memory_bus, requester);
            bar.write32(0x100, 0);
            const Status s = engine_copy(*f, regs, from->runs[0].address, memory->bar(0)->address + 0x100, 4);
            EXPECT_EQ(s, forwards ? Status::Done : Status::WriteAbort) << requester << " acs " << acs;
            EXPECT_EQ(bar.read32(0x100), forwards ? 0x600d0000u + (acs ? 1u : 0u) : 0u) << requester;
            EXPECT_TRUE(f->release());
        }
    }
}

TEST(Bus, PeerReadOfAnotherEnginesRegister) {
    Bench bench;
    bench.iommu = false;
    bench.cpu = sim::Cpu::amd(0x17);  // the host bridge forwards every pair
    auto t = take_engine(bench);
    auto far = Function::take(t.system.machine(), far_engine_bus);
    ASSERT_TRUE(far);
    far->set_memory_space(true);
    auto to = t.engine.alloc_dma(4096);
    ASSERT_TRUE(to);
    const DmaAddress id{far->bar(0)->address.value + DmaEngine::id};
    EXPECT_EQ(engine_copy(t.engine, t.registers, id, to->runs[0].address, 4), Status::Done);
    EXPECT_EQ(to->window.read32(0), DmaEngine::id_value);
}

TEST(Bus, PeerWriteIntoABarWithMemorySpaceOffIsUnsupported) {
    Bench bench;
    auto t = take_engine(bench);
    std::optional<Function> memory;
    const pci::Window bar = memory_bar(t.system, memory);
    memory->set_memory_space(false);
    auto from = t.engine.alloc_dma(4096);
    ASSERT_TRUE(from);
    from->window.write32(0, 7);
    EXPECT_EQ(engine_copy(t.engine, t.registers, from->runs[0].address, memory->bar(0)->address, 4),
              Status::WriteUnsupported);
    EXPECT_EQ(bar.read32(0), 0u);
}

TEST(Bus, RequestRunningPastABarsEndIsACompleterAbort) {
    Bench bench;
    auto t = take_engine(bench);
    std::optional<Function> memory;
    (void)memory_bar(t.system, memory);
    auto from = t.engine.alloc_dma(4096);
    ASSERT_TRUE(from);
    const DmaAddress last{memory->bar(0)->address.value + memory->bar(0)->bytes - 4};
    EXPECT_EQ(engine_copy(t.engine, t.registers, from->runs[0].address, last, 8), Status::WriteAbort);
    EXPECT_EQ(t.system.recent_faults().back().why,
              "the request at " + text::hex(last.value) + " of 8 bytes runs past the end of 0000:03:00.0 BAR0");
}

TEST(Bus, DmaWithBusMasteringOffIsUnsupportedAndCounted) {
    Bench bench;
    auto t = take_engine(bench);
    auto from = t.engine.alloc_dma(4096);
    auto to = t.engine.alloc_dma(4096);
    ASSERT_TRUE(from && to);
    t.engine.set_bus_master(false);
    EXPECT_EQ(engine_copy(t.engine, t.registers, from->runs[0].address, to->runs[0].address, 4),
              Status::ReadUnsupported);
    EXPECT_EQ(t.system.faults(), 1u);
    EXPECT_EQ(t.system.recent_faults().back().why, "0000:04:00.0 has Bus Master Enable off");
}

TEST(Bus, DmaToAnIovaNothingMapsIsUnsupported) {
    Bench bench;
    auto t = take_engine(bench);
    auto from = t.engine.alloc_dma(4096);
    ASSERT_TRUE(from);
    const DmaAddress nowhere{0x7000'0000};
    EXPECT_EQ(engine_copy(t.engine, t.registers, from->runs[0].address, nowhere, 4), Status::WriteUnsupported);
    EXPECT_EQ(t.system.recent_faults().back().why, "no IOMMU mapping at IOVA 0x70000000");
}

TEST(Bus, DmaAfterFreeDmaIsUnsupported) {
    Bench bench;
    auto t = take_engine(bench);
    auto from = t.engine.alloc_dma(4096);
    auto to = t.engine.alloc_dma(4096);
    ASSERT_TRUE(from && to);
    const DmaAddress gone = to->runs[0].address;
    t.engine.free_dma(*to);
    EXPECT_EQ(engine_copy(t.engine, t.registers, from->runs[0].address, gone, 4), Status::WriteUnsupported);
}

TEST(Bus, AFaultingRequestMovesNothing) {
    Bench bench;
    auto t = take_engine(bench);
    auto to = t.engine.alloc_dma(4096);  // first: the highest IOVAs, nothing mapped above
    auto from = t.engine.alloc_dma(2 * 4096);
    ASSERT_TRUE(from && to);
    for (unsigned i = 0; i < 2 * 4096; i += 4) from->window.write32(i, 0x11111111);
    // The copy's second page lies past the destination's one page: nothing moves at all.
    EXPECT_EQ(engine_copy(t.engine, t.registers, from->runs[0].address, to->runs[0].address, 2 * 4096),
              Status::WriteUnsupported);
    EXPECT_EQ(to->window.read32(0), 0u);
}

TEST(Bus, IovasLieAboveFourGiBUnlessBounded) {
    Bench bench;
    auto t = take_engine(bench);
    auto wide = t.engine.alloc_dma(4096);
    ASSERT_TRUE(wide);
    EXPECT_GE(wide->runs[0].address.value, std::uint64_t{1} << 32);
    t.engine.set_dma_bits(32);
    auto narrow = t.engine.alloc_dma(8192);
    ASSERT_TRUE(narrow);
    ASSERT_EQ(narrow->runs.size(), 1u);
    EXPECT_LE(narrow->runs[0].address.value + narrow->runs[0].bytes, std::uint64_t{1} << 32);
    // and never the x86 MSI window
    EXPECT_FALSE(narrow->runs[0].address.value < 0xfef0'0000 && narrow->runs[0].address.value + 8192 > 0xfee0'0000);
    narrow->window.write32(0, 0x12345678);
    EXPECT_EQ(engine_copy(t.engine, t.registers, narrow->runs[0].address, wide->runs[0].address, 4), Status::Done);
    EXPECT_EQ(wide->window.read32(0), 0x12345678u);
}

TEST(Bus, PhysicalMemoryIsScatteredUnlessContiguous) {
    Bench bench;
    bench.iommu = false;
    auto t = take_engine(bench);
    EXPECT_EQ(t.engine.addressing(), pci::Addressing::Physical);
    auto scattered = t.engine.alloc_dma(4 * 4096);
    ASSERT_TRUE(scattered);
    EXPECT_EQ(scattered->runs.size(), 4u);
    std::uint64_t total = 0;
    for (const auto& r : scattered->runs) total += r.bytes;
    EXPECT_EQ(total, 4 * 4096u);
    auto one = t.engine.alloc_dma(4 * 4096, pci::Contiguity::Contiguous);
    ASSERT_TRUE(one);
    ASSERT_EQ(one->runs.size(), 1u);
    EXPECT_EQ(one->runs[0].bytes, 4 * 4096u);
    // The engine reaches both at their physical addresses, page by page.
    for (unsigned i = 0; i < 4 * 4096; i += 4) scattered->window.write32(i, i);
    for (unsigned page = 0; page < 4; ++page)
        EXPECT_EQ(
            engine_copy(t.engine, t.registers, scattered->runs[page].address, one->runs[0].address + page * 4096, 4096),
            Status::Done);
    for (unsigned i = 0; i < 4 * 4096; i += 4) ASSERT_EQ(one->window.read32(i), i);
}

TEST(Bus, PhysicalAddressesOfAnotherMachinesMemoryAreNotReached) {
    Bench bench;
    bench.iommu = false;
    auto t = take_engine(bench);
    auto from = t.engine.alloc_dma(4096);
    ASSERT_TRUE(from);
    EXPECT_EQ(engine_copy(t.engine, t.registers, from->runs[0].address, DmaAddress{0x20'0000}, 4),
              Status::WriteUnsupported);
    EXPECT_EQ(t.system.recent_faults().back().why, "no memory at physical address 0x200000");
}

// A model on its own thread writes an entry, then its valid byte as a separate last
// write; the driver reads the valid byte with acquire, then the entry (docs/design.md,
// "Rings keep one order"). Under ThreadSanitizer this is race-free.
class Publisher final : public sim::Device {
public:
    sim::Identity identity() const override { return DmaEngine().identity(); }
    void attach(sim::Port& port) override { port_ = &port; }
    void detach() override {
        if (thread_.joinable()) thread_.join();
    }
    std::uint64_t read(unsigned, std::uint64_t, unsigned) override { return 0; }
    void write(unsigned, std::uint64_t offset, unsigned, std::uint64_t value) override {
        if (offset != 0) return;
        thread_ = std::thread([this, at = value] {
            for (std::uint64_t i = 0; i < entries; ++i) {
                const std::uint64_t payload[2] = {i * 3, i * 5};
                port_->write(DmaAddress{at + i * 24}, std::as_bytes(std::span(payload)));
                const std::uint8_t valid = 1;
                port_->write(DmaAddress{at + i * 24 + 16}, std::as_bytes(std::span(&valid, 1)));
            }
        });
    }
    std::span<std::byte> memory(unsigned) override { return {}; }
    void reset() override {}
    static constexpr std::uint64_t entries = 100;

private:
    sim::Port* port_ = nullptr;
    std::thread thread_;
};

TEST(Bus, ValidByteWrittenLastPublishesTheEntry) {
    Bench bench;
    auto publisher = std::make_shared<Publisher>();
    auto system = System::build("pub", bench.topology(), {{engine_bus, publisher}});
    ASSERT_TRUE(system);
    auto f = Function::take(system->machine(), engine_bus);
    ASSERT_TRUE(f);
    f->set_bus_master(true);
    auto ring = f->alloc_dma(Publisher::entries * 24);
    auto regs = f->map(0, 0, 0x1000);
    ASSERT_TRUE(ring && regs);
    regs->write64(0, ring->runs[0].address.value);
    for (std::uint64_t i = 0; i < Publisher::entries; ++i) {
        while (ring->window.read8(i * 24 + 16, std::memory_order_acquire) == 0) std::this_thread::yield();
        ASSERT_EQ(ring->window.read64(i * 24), i * 3);
        ASSERT_EQ(ring->window.read64(i * 24 + 8), i * 5);
    }
    EXPECT_EQ(system->faults(), 0u);
}

}  // namespace
}  // namespace rig::test
