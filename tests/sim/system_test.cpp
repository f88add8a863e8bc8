// The simulated machine as a machine: its functions, its routes against the sysfs tree it
// wrote, how it is built, and two of them in one process.
#include "rig/sim/system.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "bench.hpp"
#include "driver.hpp"
#include "rig/pci/function.hpp"
#include "rig/sim/fixture.hpp"

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
    EXPECT_EQ(buses,
              (std::vector<std::string>{"0000:00:00.0", "0000:00:01.0", "0000:00:02.0", "0000:01:00.0", "0000:02:08.0",
                                        "0000:02:10.0", "0000:03:00.0", "0000:04:00.0", "0000:05:00.0"}));
    EXPECT_EQ((*listed)[7].vendor, 0x1234);
    EXPECT_EQ((*listed)[7].device, 0x5249);
    EXPECT_EQ((*listed)[7].class_code, 0x088000u);
    EXPECT_EQ(system.machine().name(), "sim0");
}

// Every ordered pair of functions: the simulated machine answers forwards and distance as
// Machine::at does on the tree it wrote.
void expect_routes_as_tree(const System& system) {
    const pci::Machine tree = pci::Machine::at(system.sysfs());
    const auto listed = tree.functions();
    ASSERT_TRUE(listed) << listed.error();
    ASSERT_EQ(listed->size(), system.topology().functions().size());
    for (const auto& a : *listed)
        for (const auto& b : *listed) {
            EXPECT_EQ(system.machine().forwards(a.bus, b.bus), tree.forwards(a.bus, b.bus)) << a.bus << " " << b.bus;
            EXPECT_EQ(system.machine().distance(a.bus, b.bus), tree.distance(a.bus, b.bus)) << a.bus << " " << b.bus;
        }
}

TEST(System, RoutesAreTheTreesBelowOneSwitch) {
    Bench bench;
    System system = bench.build();
    expect_routes_as_tree(system);
    EXPECT_TRUE(system.machine().forwards(memory_bus, engine_bus));
    EXPECT_EQ(system.machine().distance(memory_bus, engine_bus), pci::Distance::Switch);
    EXPECT_FALSE(system.machine().forwards(memory_bus, far_engine_bus));  // two root ports, Broadwell
    EXPECT_EQ(system.machine().distance(memory_bus, far_engine_bus), pci::Distance::Bridge);
}

TEST(System, RoutesAreTheTreesWithAcsRedirect) {
    Bench bench;
    bench.downstream_acs = 0x001d;
    System system = bench.build();
    expect_routes_as_tree(system);
    EXPECT_FALSE(system.machine().forwards(memory_bus, engine_bus));
}

TEST(System, RoutesAreTheTreesOnAmdZen) {
    Bench bench;
    bench.cpu = sim::Cpu::amd(0x19);
    bench.downstream_acs = 0x001d;
    System system = bench.build();
    expect_routes_as_tree(system);
    EXPECT_TRUE(system.machine().forwards(memory_bus, engine_bus));
    EXPECT_TRUE(system.machine().forwards(memory_bus, far_engine_bus));
}

TEST(System, RoutesAreTheTreesAcrossTwoHostBridges) {
    sim::Topology t(sim::Cpu::intel());
    auto memory = std::make_shared<sim::MemoryDevice>();
    auto engine = std::make_shared<sim::DmaEngine>();
    const auto h0 = t.host_bridge(0, 0);
    const auto h1 = t.host_bridge(0, 0x40);
    t.add(h0, sim::Spec::root_complex(0x8086, 0x09a2));  // Ice Lake: allowed across host bridges
    t.add(h1, sim::Spec::root_complex(0x8086, 0x09a2));
    const auto rp0 = t.add(h0, sim::Spec::root_port(1, 0, 0x8086, 0x347a, 0x001d));
    const auto rp1 = t.add(h1, sim::Spec::root_port(1, 0, 0x8086, 0x347a, 0x001d));
    t.add(rp0, sim::endpoint_spec(0, 0, memory->identity()));
    t.add(rp1, sim::endpoint_spec(0, 0, engine->identity()));
    auto system = System::build("two", t, {{"0000:01:00.0", memory}, {"0000:41:00.0", engine}});
    ASSERT_TRUE(system) << system.error();
    expect_routes_as_tree(*system);
    EXPECT_EQ(system->machine().distance("0000:01:00.0", "0000:41:00.0"), pci::Distance::System);
    EXPECT_TRUE(system->machine().forwards("0000:01:00.0", "0000:41:00.0"));
}

TEST(System, TreeIsWrittenWhereAsked) {
    Bench bench;
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("rig-sim-here-" + std::to_string(::getpid()));
    {
        auto system = System::build("here", bench.topology(),
                                    {{memory_bus, bench.memory}, {engine_bus, std::make_shared<DmaEngine>()}}, dir);
        ASSERT_TRUE(system) << system.error();
        EXPECT_EQ(system->sysfs(), dir);
        EXPECT_TRUE(std::filesystem::exists(dir / "sys/bus/pci/devices" / engine_bus / "config"));
    }
    EXPECT_TRUE(std::filesystem::exists(dir / "sys/bus/pci/devices"));  // not ours to remove
    std::filesystem::remove_all(dir);
}

TEST(System, OwnTreeGoesWithTheMachine) {
    std::filesystem::path dir;
    {
        Bench bench;
        System system = bench.build();
        dir = system.sysfs();
        EXPECT_TRUE(std::filesystem::exists(dir / "proc/cpuinfo"));
    }
    EXPECT_FALSE(std::filesystem::exists(dir));
}

TEST(System, BuildRefusesAModelAtNoFunction) {
    Bench bench;
    try {
        (void)System::build("bad", bench.topology(), {{"0000:09:00.0", bench.engine}});
        FAIL() << "built";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("0000:09:00.0 is no function of the topology"), std::string::npos)
            << e.what();
    }
}

TEST(System, BuildRefusesAModelAtABridge) {
    Bench bench;
    EXPECT_THROW((void)System::build("bad", bench.topology(), {{"0000:00:01.0", bench.engine}}), std::invalid_argument);
}

TEST(System, BuildRefusesTwoModelsAtOneFunction) {
    Bench bench;
    auto other = std::make_shared<DmaEngine>();
    EXPECT_THROW((void)System::build("bad", bench.topology(), {{engine_bus, bench.engine}, {engine_bus, other}}),
                 std::invalid_argument);
}

TEST(System, BuildRefusesAModelWhoseIdentityDisagreesWithItsSpec) {
    Bench bench;
    try {
        (void)System::build("bad", bench.topology(), {{engine_bus, bench.memory}});
        FAIL() << "built";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("the model at 0000:04:00.0 disagrees with its Spec"), std::string::npos)
            << e.what();
    }
}

TEST(System, TakeOfABridgeOrNothingIsAnErrorNamingTheMachine) {
    Bench bench;
    System system = bench.build();
    auto bridge = Function::take(system.machine(), "0000:00:01.0");
    ASSERT_FALSE(bridge);
    EXPECT_EQ(bridge.error(), "sim0: 0000:00:01.0 has no device model to take (a bridge, or an endpoint without one)");
    auto none = Function::take(system.machine(), "0000:07:00.0");
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error(), "sim0: 0000:07:00.0: no such function");
}

TEST(System, TakeTwiceIsAnError) {
    Bench bench;
    System system = bench.build();
    auto first = Function::take(system.machine(), engine_bus);
    ASSERT_TRUE(first);
    auto second = Function::take(system.machine(), engine_bus);
    ASSERT_FALSE(second);
    EXPECT_EQ(second.error(), "sim0: 0000:04:00.0 is taken already");
    EXPECT_TRUE(first->release());
    EXPECT_TRUE(Function::take(system.machine(), engine_bus));  // given back: can be taken again
}

TEST(System, TwoMachinesKeepTheirFunctionsAndMemoryApart) {
    Bench a_bench, b_bench;
    a_bench.name = "left";
    b_bench.name = "right";
    System a = a_bench.build();
    System b = b_bench.build();
    auto fa = Function::take(a.machine(), engine_bus);
    auto fb = Function::take(b.machine(), engine_bus);  // the same bus address on the other machine
    ASSERT_TRUE(fa && fb);
    const auto ra = engine_registers(*fa);
    const auto rb = engine_registers(*fb);
    auto from = fa->alloc_dma(4096);
    auto to = fa->alloc_dma(4096);
    ASSERT_TRUE(from && to);
    from->window.write32(0, 0xfeedf00d);
    EXPECT_EQ(engine_copy(*fa, ra, from->runs[0].address, to->runs[0].address, 4), DmaEngine::Status::Done);
    EXPECT_EQ(to->window.read32(0), 0xfeedf00du);
    // The other machine's engine at the same bus addresses reaches none of it.
    EXPECT_EQ(engine_copy(*fb, rb, from->runs[0].address, to->runs[0].address, 4), DmaEngine::Status::ReadUnsupported);
    EXPECT_EQ(a.faults(), 0u);
    EXPECT_EQ(b.faults(), 1u);
    EXPECT_EQ(a.holdings(engine_bus).dma_allocations, 2u);
    EXPECT_EQ(b.holdings(engine_bus).dma_allocations, 0u);
    EXPECT_EQ(a.memory_in_use(), 2 * 4096u);
    EXPECT_EQ(b.memory_in_use(), 0u);
}

TEST(System, ModelsAreDetachedWhenTheMachineGoes) {
    auto engine = std::make_shared<DmaEngine>();
    {
        Bench bench;
        auto built = System::build("one", bench.topology(), {{engine_bus, engine}});
        ASSERT_TRUE(built);
        auto f = Function::take(built->machine(), engine_bus);
        ASSERT_TRUE(f);
        EXPECT_EQ(engine_registers(*f).read32(DmaEngine::id), DmaEngine::id_value);
    }
    // The engine's thread stopped: it can be attached to another machine.
    Bench bench;
    auto again = System::build("two", bench.topology(), {{engine_bus, engine}});
    ASSERT_TRUE(again);
    auto f = Function::take(again->machine(), engine_bus);
    ASSERT_TRUE(f);
    EXPECT_EQ(engine_registers(*f).read32(DmaEngine::id), DmaEngine::id_value);
}

}  // namespace
}  // namespace rig::test
