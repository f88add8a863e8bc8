// The rules of docs/api.md's "Transports" paragraph, each as a test of Function on the
// simulated machine, whose call records and fault injection (rig/sim/faults.hpp) show what
// reached the transport: misuse refused before any operation, windows and pins counted,
// every pin passed on, release giving back everything once, resumed after an exception,
// uses refused once it began, all ones once the transport failed.
#include <gtest/gtest.h>

#include <sys/mman.h>

#include <atomic>
#include <thread>

#include "../sim/bench.hpp"
#include "../sim/driver.hpp"
#include "rig/pci/config.hpp"
#include "rig/pci/function.hpp"
#include "rig/pci/reservation.hpp"
#include "rig/sim/faults.hpp"

namespace rig::test {
namespace {

using pci::Function;
using sim::Faults;
using sim::Operation;
using sim::System;

struct Taken {
    System system;
    Faults faults;
    Function f;
};

Taken take(Bench& bench, const char* bus = engine_bus) {
    System system = bench.build();
    auto f = Function::take(system.machine(), bus);
    if (!f) throw std::runtime_error(f.error());
    Faults faults(system);
    return {std::move(system), faults, std::move(*f)};
}

// Page-aligned memory of this process that alloc_dma did not give.
struct Pages {
    explicit Pages(std::size_t n) : bytes(n * 4096) {
        p = static_cast<std::byte*>(::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
        if (p == MAP_FAILED) throw std::runtime_error("mmap");
    }
    ~Pages() { ::munmap(p, bytes); }
    std::size_t bytes;
    std::byte* p;
};

template <class F>
void expect_refused(const char* what, F&& use) {
    try {
        use();
        ADD_FAILURE() << what << " was not refused";
    } catch (const std::invalid_argument& e) {
        EXPECT_EQ(std::string(e.what()).rfind("0000:04:00.0", 0), 0u) << what << ": " << e.what();
    }
}

TEST(FunctionTransport, MisuseIsRefusedBeforeAnyOperationRuns) {
    Bench bench;
    auto t = take(bench);
    auto other = Function::take(t.system.machine(), far_engine_bus);
    ASSERT_TRUE(other);
    auto other_window = other->map(0, 0, 0x1000);
    auto other_dma = other->alloc_dma(4096);
    ASSERT_TRUE(other_window && other_dma);
    Pages pages(2);
    const std::size_t calls = t.faults.count();
    const auto f = t.f;
    expect_refused("config offset 4096", [&] { (void)f.config8(4096); });
    expect_refused("unaligned config", [&] { (void)f.config32(2); });
    expect_refused("BAR 6", [&] { (void)f.bar(6); });
    expect_refused("map BAR 6", [&] { (void)f.map(6, 0, 4096); });
    expect_refused("map BAR 2 (none)", [&] { (void)f.map(2, 0, 4096); });
    expect_refused("map past the BAR", [&] { (void)f.map(0, 0x3000, 0x2000); });
    expect_refused("map 0 bytes", [&] { (void)f.map(0, 0, 0); });
    expect_refused("write-combining a non-prefetchable BAR",
                   [&] { (void)f.map(0, 0, 4096, pci::Caching::WriteCombining); });
    expect_refused("unmap another function's window", [&] { f.unmap(*other_window); });
    expect_refused("alloc_dma of 0 bytes", [&] { (void)f.alloc_dma(0); });
    expect_refused("alloc_dma at an unreserved va",
                   [&] { (void)f.alloc_dma(4096, pci::Contiguity::Any, 0x7e00'0000'0000); });
    expect_refused("alloc_dma at a va off a page",
                   [&] { (void)f.alloc_dma(4096, pci::Contiguity::Any, 0x7e00'0000'0010); });
    expect_refused("free_dma of another function's memory", [&] { f.free_dma(*other_dma); });
    expect_refused("pin off a page", [&] { (void)f.pin(pages.p + 8, 4096); });
    expect_refused("pin of 0 bytes", [&] { (void)f.pin(pages.p, 0); });
    expect_refused("unpin of what was not pinned", [&] { f.unpin(pages.p, 4096); });
    expect_refused("DMA bits 16", [&] { f.set_dma_bits(16); });
    EXPECT_EQ(t.faults.count(), calls);  // nothing reached the transport
    EXPECT_EQ(other->windows(), 1u);     // and the other function still holds its own
    EXPECT_EQ(other->dma_allocations(), 1u);
}

TEST(FunctionTransport, WindowsAreCountedByFunctionAndTransport) {
    Bench bench;
    auto t = take(bench);
    std::vector<pci::Window> windows;
    for (unsigned i = 0; i < 3; ++i) {
        auto w = t.f.map(0, i * 0x1000, 0x1000);
        ASSERT_TRUE(w);
        windows.push_back(*w);
    }
    EXPECT_EQ(t.f.windows(), 3u);
    EXPECT_EQ(t.system.holdings(engine_bus).windows, 3u);
    t.f.unmap(windows[1]);
    EXPECT_EQ(t.f.windows(), 2u);
    EXPECT_EQ(t.system.holdings(engine_bus).windows, 2u);
    expect_refused("unmap twice", [&] { t.f.unmap(windows[1]); });
    expect_refused("unmap of a part", [&] { t.f.unmap(windows[0].sub(0, 4)); });
    EXPECT_EQ(t.faults.count(Operation::Unmap), 1u);
}

TEST(FunctionTransport, PinsAreCountedAndEveryPinAndUnpinIsPassedOn) {
    Bench bench;
    auto t = take(bench);
    Pages pages(2);
    auto first = t.f.pin(pages.p, 8192);
    auto again = t.f.pin(pages.p, 8192);  // the same range twice: two pins
    auto part = t.f.pin(pages.p + 4096, 100);
    ASSERT_TRUE(first && again && part) << (first ? "" : first.error());
    EXPECT_EQ(t.f.pins(), 3u);
    EXPECT_EQ(t.system.holdings(engine_bus).pins, 3u);
    EXPECT_EQ(t.faults.count(Operation::Pin), 3u);
    ASSERT_EQ(part->size(), 1u);
    EXPECT_EQ((*part)[0].bytes, 100u);
    t.f.unpin(pages.p, 8192);
    t.f.unpin(pages.p, 8192);
    EXPECT_EQ(t.faults.count(Operation::Unpin), 2u);
    EXPECT_EQ(t.f.pins(), 1u);
    EXPECT_EQ(t.system.holdings(engine_bus).pins, 1u);
    expect_refused("a third unpin", [&] { t.f.unpin(pages.p, 8192); });
}

TEST(FunctionTransport, DmaAllocationsAreCountedAndRoundedUpToAPage) {
    Bench bench;
    auto t = take(bench);
    auto a = t.f.alloc_dma(4097);
    auto b = t.f.alloc_dma(1);
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->window.size(), 8192u);
    std::uint64_t total = 0;
    for (const auto& r : a->runs) total += r.bytes;
    EXPECT_EQ(total, 8192u);
    EXPECT_EQ(b->window.size(), 4096u);
    EXPECT_EQ(t.f.dma_allocations(), 2u);
    EXPECT_EQ(t.system.holdings(engine_bus).dma_allocations, 2u);
    EXPECT_EQ(t.system.memory_in_use(), 3 * 4096u);
    t.f.free_dma(*a);
    EXPECT_EQ(t.f.dma_allocations(), 1u);
    EXPECT_EQ(t.system.memory_in_use(), 4096u);
    expect_refused("free_dma twice", [&] { t.f.free_dma(*a); });
}

TEST(FunctionTransport, DmaMemoryIsZeroed) {
    Bench bench;
    auto t = take(bench);
    auto a = t.f.alloc_dma(3 * 4096);
    ASSERT_TRUE(a);
    for (std::uint64_t i = 0; i < a->window.size(); i += 8) ASSERT_EQ(a->window.read64(i), 0u);
}

// Faults::unmapped_dma: DMA memory as a machine reached over a network hands it out, a
// remote window whose accesses are the transport's Read and Write calls, on the memory the
// devices reach at its runs.
TEST(FunctionTransport, UnmappedDmaIsARemoteWindowOnTheMemoryDevicesReach) {
    Bench bench;
    auto t = take(bench);
    t.faults.unmapped_dma();
    auto a = t.f.alloc_dma(8192);
    ASSERT_TRUE(a) << a.error();
    EXPECT_FALSE(a->window.is_mapped());
    EXPECT_EQ(a->window.size(), 8192u);
    const std::size_t reads = t.faults.count(Operation::Read), writes = t.faults.count(Operation::Write);
    a->window.write32(0, 0x12345678);
    EXPECT_EQ(a->window.read32(0), 0x12345678u);
    EXPECT_EQ(t.faults.count(Operation::Write), writes + 1);
    EXPECT_EQ(t.faults.count(Operation::Read), reads + 1);
    const auto regs = engine_registers(t.f);
    EXPECT_EQ(engine_copy(t.f, regs, a->runs[0].address, a->runs[0].address + 4096, 4), DmaEngine::Status::Done);
    EXPECT_EQ(a->window.read32(4096), 0x12345678u);
    t.f.free_dma(*a);
    EXPECT_EQ(t.system.holdings(engine_bus).dma_allocations, 0u);
    EXPECT_EQ(t.faults.double_give_backs(), 0u);
}

TEST(FunctionTransport, AllocDmaAtAReservedVaIsPlacedThere) {
    Bench bench;
    auto t = take(bench);
    // A range the system lets this process map (sanitizers keep some for themselves).
    void* probe = ::mmap(nullptr, 1 << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(probe, MAP_FAILED);
    ::munmap(probe, 1 << 20);
    const auto base = reinterpret_cast<std::uintptr_t>(probe);
    ASSERT_TRUE(t.system.machine().reserve(base, 1 << 20));
    auto a = t.f.alloc_dma(8192, pci::Contiguity::Any, base + 0x4000);
    ASSERT_TRUE(a) << a.error();
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a->window.data()), base + 0x4000);
    a->window.write32(0, 42);
    const auto regs = engine_registers(t.f);
    EXPECT_EQ(engine_copy(t.f, regs, a->runs[0].address, a->runs[0].address + 4096, 4), DmaEngine::Status::Done);
    EXPECT_EQ(a->window.read32(4096), 42u);
    t.f.free_dma(*a);
    EXPECT_TRUE(pci::is_reserved(base + 0x4000, 8192));  // back to the reservation
    auto again = t.f.alloc_dma(8192, pci::Contiguity::Any, base + 0x4000);
    ASSERT_TRUE(again);
    EXPECT_EQ(again->window.read32(0), 0u);
}

TEST(FunctionTransport, ReleaseGivesBackEverythingOnceAndOnlyOnce) {
    Bench bench;
    auto t = take(bench);
    Pages pages(1);
    ASSERT_TRUE(t.f.map(0, 0, 0x1000));
    ASSERT_TRUE(t.f.map(0, 0x1000, 0x1000));
    ASSERT_TRUE(t.f.alloc_dma(4096));
    ASSERT_TRUE(t.f.alloc_dma(8192));
    ASSERT_TRUE(t.f.pin(pages.p, 4096));
    t.f.set_bus_master(true);
    EXPECT_TRUE(t.f.release());
    const auto given = t.faults.give_backs(engine_bus);
    EXPECT_EQ(given.windows, 2u);
    EXPECT_EQ(given.dma_allocations, 2u);
    EXPECT_EQ(given.pins, 1u);
    EXPECT_EQ(t.faults.double_give_backs(), 0u);
    EXPECT_EQ(t.system.holdings(engine_bus), sim::Holdings{});
    EXPECT_EQ(t.system.memory_in_use(), 0u);
    EXPECT_EQ(t.f.windows() + t.f.pins() + t.f.dma_allocations(), 0u);
    // No free_dma, unpin or unmap followed: release gave it all back.
    EXPECT_EQ(t.faults.count(Operation::FreeDma) + t.faults.count(Operation::Unpin) + t.faults.count(Operation::Unmap),
              0u);
    // Again: the same answer, nothing reaches the transport.
    const std::size_t calls = t.faults.count();
    EXPECT_TRUE(t.f.release());
    EXPECT_EQ(t.faults.count(), calls);
    EXPECT_EQ(t.faults.count(Operation::Release), 1u);
}

TEST(FunctionTransport, ReleaseTurnsBusMasteringOffBeforeGivingBack) {
    Bench bench;
    auto t = take(bench);
    t.f.set_bus_master(true);
    ASSERT_TRUE(t.f.alloc_dma(4096));
    const std::size_t before = t.faults.calls().size();
    EXPECT_TRUE(t.f.release());
    const auto calls = t.faults.calls();
    std::vector<Operation> ops;
    for (std::size_t i = before; i < calls.size(); ++i) ops.push_back(calls[i].operation);
    EXPECT_EQ(ops, (std::vector<Operation>{Operation::Config, Operation::SetConfig, Operation::Release}));
}

TEST(FunctionTransport, ReleaseResumedAfterAnExceptionGivesBackOnlyWhatIsLeft) {
    Bench bench;
    auto t = take(bench);
    Pages pages(1);
    ASSERT_TRUE(t.f.map(0, 0, 0x1000));
    ASSERT_TRUE(t.f.map(0, 0x1000, 0x1000));
    ASSERT_TRUE(t.f.pin(pages.p, 4096));
    ASSERT_TRUE(t.f.alloc_dma(4096));
    t.faults.throw_in(Operation::Release, 3);  // after the two windows and the pin
    EXPECT_THROW(t.f.release(), sim::InjectedFault);
    auto given = t.faults.give_backs(engine_bus);
    EXPECT_EQ(given.windows, 2u);
    EXPECT_EQ(given.pins, 1u);
    EXPECT_EQ(given.dma_allocations, 0u);
    EXPECT_TRUE(t.f.released());  // no use starts: it is releasing
    EXPECT_THROW((void)t.f.config16(0), std::invalid_argument);
    EXPECT_TRUE(t.f.release());
    given = t.faults.give_backs(engine_bus);
    EXPECT_EQ(given.windows, 2u);
    EXPECT_EQ(given.pins, 1u);
    EXPECT_EQ(given.dma_allocations, 1u);
    EXPECT_EQ(t.faults.double_give_backs(), 0u);
    EXPECT_EQ(t.system.memory_in_use(), 0u);
}

TEST(FunctionTransport, MemoryTheMachineHeldBeforeAnExceptionIsGivenBackByRelease) {
    Bench bench;
    auto t = take(bench);
    t.faults.throw_in(Operation::AllocDma);
    EXPECT_THROW((void)t.f.alloc_dma(4096), sim::InjectedFault);
    EXPECT_EQ(t.f.dma_allocations(), 0u);                          // Function could not record it
    EXPECT_EQ(t.system.holdings(engine_bus).dma_allocations, 1u);  // the machine holds it
    EXPECT_TRUE(t.f.release());
    EXPECT_EQ(t.system.holdings(engine_bus).dma_allocations, 0u);
    EXPECT_EQ(t.system.memory_in_use(), 0u);
}

TEST(FunctionTransport, UsesAreRefusedOnceReleaseBeganAndRunningOnesFinishFirst) {
    Bench bench;
    bench.threading = DmaEngine::Threading::Caller;
    auto t = take(bench);
    const auto regs = engine_registers(t.f);
    regs.write32(DmaEngine::vector, 2);
    std::atomic<bool> waiting{false};
    std::atomic<bool> fired{false};
    std::thread use([&] {
        waiting = true;
        fired = t.f.interrupt(2, std::chrono::seconds(60));  // a use that runs until the engine fires
    });
    while (!waiting || t.faults.count(Operation::Interrupt) == 0) std::this_thread::yield();
    std::thread releaser([&] { EXPECT_TRUE(t.f.release()); });
    while (!t.f.released()) std::this_thread::yield();
    // Release began: a use is refused; the running one holds the give-back back.
    try {
        (void)t.f.config16(0);
        ADD_FAILURE() << "a use started after release began";
    } catch (const std::invalid_argument& e) {
        EXPECT_EQ(std::string(e.what()), "0000:04:00.0 was released");
    }
    EXPECT_EQ(t.faults.count(Operation::Release), 0u);
    EXPECT_EQ(t.faults.count(Operation::SetConfig), 1u);  // only engine_registers' bus master
    regs.write32(DmaEngine::go, 1);                       // the engine fires vector 2
    use.join();
    releaser.join();
    EXPECT_TRUE(fired);
    EXPECT_EQ(t.faults.count(Operation::Release), 1u);
}

TEST(FunctionTransport, EveryUseAfterReleaseIsRefused) {
    Bench bench;
    auto t = take(bench);
    EXPECT_TRUE(t.f.release());
    Pages pages(1);
    const auto f = t.f;
    const auto refused = [&](const char* what, auto&& use) {
        try {
            use();
            ADD_FAILURE() << what;
        } catch (const std::invalid_argument& e) {
            EXPECT_EQ(std::string(e.what()), "0000:04:00.0 was released") << what;
        }
    };
    refused("config", [&] { (void)f.config32(0); });
    refused("set_config", [&] { f.set_config16(4, 0); });
    refused("capability", [&] { (void)f.capability(0x10); });
    refused("bar", [&] { (void)f.bar(0); });
    refused("map", [&] { (void)f.map(0, 0, 4096); });
    refused("alloc_dma", [&] { (void)f.alloc_dma(4096); });
    refused("pin", [&] { (void)f.pin(pages.p, 4096); });
    refused("interrupt", [&] { (void)f.interrupt(0, std::chrono::nanoseconds(0)); });
    refused("reset", [&] { (void)f.reset(); });
    refused("set_bus_master", [&] { f.set_bus_master(true); });
    refused("relaxed_ordering", [&] { (void)f.relaxed_ordering(); });
    EXPECT_EQ(f.bus(), engine_bus);  // what it was stays readable
}

TEST(FunctionTransport, WindowsReadAllOnesAndDropWritesOnceTheTransportFailed) {
    Bench bench;
    auto t = take(bench);
    const auto regs = engine_registers(t.f);
    regs.write32(DmaEngine::length, 77);
    t.faults.fail("the link went down");
    const std::uint64_t accesses = bench.engine->accesses();
    EXPECT_EQ(regs.read32(DmaEngine::length), 0xffffffffu);
    EXPECT_EQ(regs.read64(DmaEngine::source), ~0ull);
    EXPECT_EQ(regs.read8(DmaEngine::id), 0xff);
    std::array<std::byte, 12> span{};
    regs.read(0, span);
    for (auto b : span) EXPECT_EQ(b, std::byte{0xff});
    regs.write32(DmaEngine::length, 5);
    EXPECT_EQ(bench.engine->accesses(), accesses);  // nothing reached the engine
    EXPECT_EQ(regs.failed(), "sim0: the link went down");
    EXPECT_EQ(t.f.failed(), "sim0: the link went down");
    EXPECT_EQ(t.system.machine().failed(), "sim0: the link went down");
    EXPECT_EQ(t.f.config16(0), 0xffff);
    auto more = t.f.alloc_dma(4096);
    ASSERT_FALSE(more);
    EXPECT_EQ(more.error(), "sim0: the link went down");
    EXPECT_FALSE(t.system.machine().functions());
    EXPECT_FALSE(t.f.release());  // bus mastering could not be turned off
}

TEST(FunctionTransport, TransportFailsAfterNCalls) {
    Bench bench;
    auto t = take(bench);
    t.faults.fail_after(2, "timed out");
    EXPECT_EQ(t.f.config16(0), 0x1234);
    EXPECT_EQ(t.f.config16(2), 0x5249);
    EXPECT_EQ(t.f.config16(0), 0xffff);
    EXPECT_EQ(t.f.failed(), "sim0: timed out");
}

TEST(FunctionTransport, TransportFailsAtAChosenOperation) {
    Bench bench;
    auto t = take(bench);
    t.faults.fail_at(Operation::Map, "refused", std::string(engine_bus));
    EXPECT_EQ(t.f.config16(0), 0x1234);
    auto w = t.f.map(0, 0, 4096);
    ASSERT_FALSE(w);
    EXPECT_EQ(w.error(), "sim0: refused");
    EXPECT_EQ(t.f.windows(), 0u);
    EXPECT_EQ(t.f.config16(0), 0xffff);
}

TEST(FunctionTransport, AFunctionThatStoppedAnsweringReadsAllOnes) {
    Bench bench;
    auto t = take(bench);
    const auto regs = engine_registers(t.f);
    auto dma = t.f.alloc_dma(4096);
    ASSERT_TRUE(dma);
    t.faults.stop(engine_bus);
    EXPECT_EQ(t.f.config16(pci::config::vendor_id), 0xffff);
    EXPECT_EQ(regs.read32(DmaEngine::id), 0xffffffffu);
    EXPECT_FALSE(t.f.capability(pci::config::capability_msix));
    EXPECT_EQ(t.system.machine().failed(), std::nullopt);  // the machine is fine; the function is gone
    EXPECT_TRUE(t.f.release());                            // it issues nothing: its memory can go
    EXPECT_EQ(t.system.memory_in_use(), 0u);
}

TEST(FunctionTransport, MemoryOfAFunctionThatKeepsMasteringIsKeptAndInheritedUntilReset) {
    Bench bench;
    auto t = take(bench);
    t.f.set_bus_master(true);
    ASSERT_TRUE(t.f.alloc_dma(8192));
    t.faults.refuse_bus_master_off(engine_bus);
    EXPECT_FALSE(t.f.release());
    EXPECT_FALSE(t.f.release());                 // the same answer again
    EXPECT_EQ(t.system.memory_in_use(), 8192u);  // the device may still write it
    auto next = Function::take(t.system.machine(), engine_bus);
    ASSERT_TRUE(next);
    EXPECT_TRUE(next->inherited());
    ASSERT_TRUE(next->reset());
    EXPECT_EQ(t.system.memory_in_use(), 0u);
    EXPECT_TRUE(next->inherited());  // read once, at the take
}

TEST(FunctionTransport, PhysicalFunctionCannotPinMemoryAllocDmaDidNotGive) {
    Bench bench;
    bench.iommu = false;
    auto t = take(bench);
    ASSERT_EQ(t.f.addressing(), pci::Addressing::Physical);
    Pages pages(2);
    auto refused = t.f.pin(pages.p, 4096);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().find("0000:04:00.0: cannot pin 4 KiB at "), std::string::npos) << refused.error();
    EXPECT_NE(refused.error().find("alloc_dma did not give"), std::string::npos) << refused.error();
    EXPECT_EQ(t.faults.count(Operation::Pin), 0u);
    auto dma = t.f.alloc_dma(4 * 4096);
    ASSERT_TRUE(dma);
    auto inside = t.f.pin(dma->window.data() + 4096, 2 * 4096);
    ASSERT_TRUE(inside) << inside.error();
    // Its runs are the allocation's second and third pages.
    ASSERT_EQ(dma->runs.size(), 4u);
    EXPECT_EQ(*inside, (std::vector<pci::Run>{dma->runs[1], dma->runs[2]}));
    auto straddling = t.f.pin(dma->window.data() + 3 * 4096, 2 * 4096);
    EXPECT_FALSE(straddling);
}

TEST(FunctionTransport, IommuFunctionPinsProcessMemoryTheDeviceThenReaches) {
    Bench bench;
    auto t = take(bench);
    Pages pages(1);
    const auto regs = engine_registers(t.f);
    auto runs = t.f.pin(pages.p, 4096);
    auto from = t.f.alloc_dma(4096);
    ASSERT_TRUE(runs && from);
    from->window.write64(8, 0x5555'aaaa'5555'aaaa);
    EXPECT_EQ(engine_copy(t.f, regs, from->runs[0].address + 8, (*runs)[0].address + 16, 8), DmaEngine::Status::Done);
    std::uint64_t landed = 0;
    std::memcpy(&landed, pages.p + 16, 8);
    EXPECT_EQ(landed, 0x5555'aaaa'5555'aaaaull);
    t.f.unpin(pages.p, 4096);
    EXPECT_EQ(engine_copy(t.f, regs, from->runs[0].address, (*runs)[0].address, 8),
              DmaEngine::Status::WriteUnsupported);
}

TEST(FunctionTransport, TheLastHandleReleases) {
    Bench bench;
    System system = bench.build();
    {
        auto f = Function::take(system.machine(), engine_bus);
        ASSERT_TRUE(f);
        const Function copy = *f;  // copies share one taken function
        ASSERT_TRUE(copy.alloc_dma(4096));
        EXPECT_EQ(f->dma_allocations(), 1u);
    }
    EXPECT_EQ(system.holdings(engine_bus), sim::Holdings{});
    EXPECT_EQ(system.memory_in_use(), 0u);
    EXPECT_TRUE(Function::take(system.machine(), engine_bus));
}

}  // namespace
}  // namespace rig::test
