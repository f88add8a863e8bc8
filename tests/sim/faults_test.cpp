// Fault injection and call records of a simulated machine (rig/sim/faults.hpp).
#include "rig/sim/faults.hpp"

#include <gtest/gtest.h>

#include "bench.hpp"
#include "driver.hpp"
#include "rig/pci/function.hpp"

namespace rig::test {
namespace {

using pci::Function;
using sim::Call;
using sim::Faults;
using sim::Operation;
using sim::System;

TEST(Faults, CallsAreRecordedInOrderWithTheirFunction) {
    Bench bench;
    System system = bench.build();
    Faults faults(system);
    auto f = Function::take(system.machine(), engine_bus);
    ASSERT_TRUE(f);
    (void)f->config16(0);
    auto w = f->map(0, 0, 4096);
    ASSERT_TRUE(w);
    (void)w->read32(DmaEngine::id);
    const std::string e = engine_bus;
    EXPECT_EQ(faults.calls(), (std::vector<Call>{{Operation::Take, e},
                                                 {Operation::Bar, e},
                                                 {Operation::Bar, e},
                                                 {Operation::Bar, e},
                                                 {Operation::Bar, e},
                                                 {Operation::Bar, e},
                                                 {Operation::Bar, e},
                                                 {Operation::Config, e},
                                                 {Operation::Map, e}}));
    EXPECT_EQ(faults.count(Operation::Read), 1u);  // counted, not listed
    EXPECT_EQ(faults.count(), 10u);
    EXPECT_EQ(sim::to_string(Operation::AllocDma), "alloc_dma");
}

// A machine no Faults watches keeps no list of its calls, however long it lives (the
// list grew by a record per call before, 2.1 KB per NIC open and close); it still counts
// them.
TEST(Faults, CallsAreNotListedBeforeAFaultsWatches) {
    Bench bench;
    System system = bench.build();
    for (int i = 0; i < 100; ++i) {
        auto f = Function::take(system.machine(), engine_bus);
        ASSERT_TRUE(f);
        (void)f->config16(0);
        ASSERT_TRUE(f->release());
    }
    Faults faults(system);
    EXPECT_TRUE(faults.calls().empty());
    EXPECT_EQ(faults.count(Operation::Take), 100u);
    auto f = Function::take(system.machine(), engine_bus);
    ASSERT_TRUE(f);
    ASSERT_FALSE(faults.calls().empty());
    EXPECT_EQ(faults.calls().front(), (Call{Operation::Take, std::string(engine_bus)}));
}

TEST(Faults, FailAtWaitsForTheNamedFunction) {
    Bench bench;
    System system = bench.build();
    Faults faults(system);
    auto near = Function::take(system.machine(), engine_bus);
    auto far = Function::take(system.machine(), far_engine_bus);
    ASSERT_TRUE(near && far);
    faults.fail_at(Operation::Config, "gone", std::string(far_engine_bus));
    EXPECT_EQ(near->config16(0), 0x1234);
    EXPECT_EQ(far->config16(0), 0xffff);   // the failing call answers as a failed transport
    EXPECT_EQ(near->config16(0), 0xffff);  // and the whole machine is gone
    EXPECT_EQ(system.machine().failed(), "sim0: gone");
}

TEST(Faults, FailedMachineRefusesTakes) {
    Bench bench;
    System system = bench.build();
    Faults(system).fail("powered off");
    auto f = Function::take(system.machine(), engine_bus);
    ASSERT_FALSE(f);
    EXPECT_EQ(f.error(), "sim0: powered off");
}

TEST(Faults, PinThatThrowsLeavesThePinToRelease) {
    Bench bench;
    System system = bench.build();
    Faults faults(system);
    auto f = Function::take(system.machine(), engine_bus);
    ASSERT_TRUE(f);
    alignas(4096) static std::byte pages[4096];
    faults.throw_in(Operation::Pin);
    EXPECT_THROW((void)f->pin(pages, 4096), sim::InjectedFault);
    EXPECT_EQ(f->pins(), 0u);
    EXPECT_EQ(system.holdings(engine_bus).pins, 1u);
    EXPECT_TRUE(f->release());
    EXPECT_EQ(faults.give_backs(engine_bus).pins, 1u);
    EXPECT_EQ(system.memory_in_use(), 0u);
}

TEST(Faults, StoppedFunctionDoesNoDmaAndRaisesNoInterrupt) {
    Bench bench;
    bench.threading = DmaEngine::Threading::Caller;
    System system = bench.build();
    Faults faults(system);
    auto f = Function::take(system.machine(), engine_bus);
    ASSERT_TRUE(f);
    const auto regs = engine_registers(*f);
    auto from = f->alloc_dma(4096);
    auto to = f->alloc_dma(4096);
    ASSERT_TRUE(from && to);
    from->window.write32(0, 9);
    faults.stop(engine_bus);
    // The model still runs (a test can poke it), but its requests go nowhere.
    sim::Device& model = *bench.engine;
    model.write(0, DmaEngine::source, 8, from->runs[0].address.value);
    model.write(0, DmaEngine::destination, 8, to->runs[0].address.value);
    model.write(0, DmaEngine::length, 4, 4);
    model.write(0, DmaEngine::vector, 4, 0);
    model.write(0, DmaEngine::go, 4, 1);
    EXPECT_EQ(model.read(0, DmaEngine::status, 4), static_cast<std::uint32_t>(DmaEngine::Status::ReadUnsupported));
    EXPECT_EQ(to->window.read32(0), 0u);
    EXPECT_FALSE(f->interrupt(0, std::chrono::milliseconds(0)));
    EXPECT_EQ(system.recent_faults().back().why, "0000:04:00.0 stopped answering");
}

TEST(Faults, InjectionNeedsAModel) {
    Bench bench;
    System system = bench.build();
    EXPECT_THROW(Faults(system).stop("0000:00:01.0"), std::invalid_argument);
    EXPECT_THROW((void)system.holdings("0000:00:01.0"), std::invalid_argument);
}

}  // namespace
}  // namespace rig::test
