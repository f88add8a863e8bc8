// IOMMU groups as VFIO sees them (rig/sim/topology.hpp Topology::Groups, rig/pci/groups.hpp):
// functions below a bridge without ACS share a group, sysfs shows it, and the simulator's
// take refuses a function whose group is not viable, naming the function and its driver,
// as VFIO does.
#include <gtest/gtest.h>

#include "rig/pci/function.hpp"
#include "rig/pci/groups.hpp"
#include "rig/sim/dma_engine.hpp"
#include "rig/sim/system.hpp"
#include "rig/sim/topology.hpp"

namespace rig::sim {
namespace {

constexpr const char* gpu_bus = "0000:03:00.0";
constexpr const char* nic_bus = "0000:04:00.0";

// pci0000:00 ── 00:01.0 root port (ACS 0x001d) ── 01:00.0 switch upstream port
//                                                  ├─ 02:00.0 downstream port ── 03:00.0 GPU (group 3)
//                                                  └─ 02:01.0 downstream port ── 04:00.0 NIC (group 5, an engine)
struct Machine {
    std::optional<std::uint16_t> gpu_port_acs, nic_port_acs;
    std::string gpu_driver = "nvidia";
    std::string nic_driver;
    std::shared_ptr<DmaEngine> engine = std::make_shared<DmaEngine>(DmaEngine::Threading::Caller);

    Topology topology() const {
        Topology t(Cpu::intel(0x8f));
        const auto h = t.host_bridge(0, 0);
        t.add(h, Spec::root_complex(0x8086, 0x09a2));
        const auto up =
            t.add(t.add(h, Spec::root_port(1, 0, 0x8086, 0x352a, 0x001d)), Spec::upstream_port(0x1000, 0xc030));
        auto gpu = Spec::endpoint(0, 0, 0x10de, 0x2335, 0x030200);
        gpu.driver = gpu_driver;
        gpu.iommu_group = 3;
        t.add(t.add(up, Spec::downstream_port(0, 0x1000, 0xc030, gpu_port_acs)), gpu);
        auto nic = endpoint_spec(0, 0, engine->identity());
        nic.driver = nic_driver;
        nic.iommu_group = 5;
        t.add(t.add(up, Spec::downstream_port(1, 0x1000, 0xc030, nic_port_acs)), nic);
        return t;
    }
    System build() const {
        auto s = System::build("sim0", topology(), {{nic_bus, engine}});
        if (!s) throw std::runtime_error(s.error());
        return std::move(*s);
    }
};

std::optional<unsigned> group_of(const Topology& t, const char* bus) { return t.iommu_group(*t.find(bus)); }

TEST(IommuGroups, FunctionsBelowASwitchWithoutAcsShareTheLowestGroup) {
    const Topology t = Machine{}.topology();
    EXPECT_EQ(group_of(t, gpu_bus), 3u);
    EXPECT_EQ(group_of(t, nic_bus), 3u);
    EXPECT_EQ(t.group_root(*t.find(nic_bus)), *t.find("0000:01:00.0"));  // the switch's upstream port
}

TEST(IommuGroups, DownstreamPortsThatRedirectIsolateTheirFunctions) {
    Machine m;
    m.gpu_port_acs = m.nic_port_acs = 0x001d;
    const Topology t = m.topology();
    EXPECT_EQ(group_of(t, gpu_bus), 3u);
    EXPECT_EQ(group_of(t, nic_bus), 5u);
}

TEST(IommuGroups, APortWithOnlySomeOfTheAcsBitsDoesNotIsolate) {
    Machine m;
    m.gpu_port_acs = m.nic_port_acs = 0x0001;  // Source Validation alone
    EXPECT_EQ(group_of(m.topology(), nic_bus), 3u);
}

TEST(IommuGroups, AsGivenKeepsEachSpecsNumber) {
    Topology t = Machine{}.topology();
    t.set_groups(Topology::Groups::AsGiven);
    EXPECT_EQ(group_of(t, nic_bus), 5u);
}

TEST(IommuGroups, SysfsShowsTheSharedGroupWithItsMembersAndDrivers) {
    const System system = Machine{}.build();
    auto group = pci::iommu_group(pci::Machine::at(system.sysfs()), nic_bus);
    ASSERT_TRUE(group) << group.error();
    ASSERT_TRUE(*group);
    EXPECT_EQ((*group)->number, "3");
    ASSERT_EQ((*group)->members.size(), 2u);
    EXPECT_EQ((*group)->members[0].bus, gpu_bus);
    EXPECT_EQ((*group)->members[0].driver, "nvidia");
    EXPECT_FALSE((*group)->members[0].lets_vfio());
    EXPECT_TRUE((*group)->members[1].lets_vfio());  // the NIC, bound to no driver
}

TEST(IommuGroups, TakeOfAFunctionWhoseGroupIsNotViableIsRefusedNamingTheFunctionAndItsDriver) {
    const System system = Machine{}.build();
    auto f = pci::Function::take(system.machine(), nic_bus);
    ASSERT_FALSE(f);
    EXPECT_EQ(f.error(),
              "sim0: 0000:04:00.0: IOMMU group 3 is not viable: 0000:03:00.0 in it is bound to the driver nvidia; "
              "VFIO takes a function only where every function of its group is bound to vfio-pci, to no driver, or "
              "is a bridge: unbind 0000:03:00.0 from nvidia (or bind it to vfio-pci)");
}

TEST(IommuGroups, TakeSucceedsOnceTheGroupsOtherFunctionIsBoundToVfio) {
    Machine m;
    m.gpu_driver = "vfio-pci";
    const System system = m.build();
    EXPECT_TRUE(pci::Function::take(system.machine(), nic_bus));
}

TEST(IommuGroups, TakeSucceedsWhereAcsIsolatesTheNicFromTheGpu) {
    Machine m;
    m.gpu_port_acs = m.nic_port_acs = 0x001d;
    const System system = m.build();
    EXPECT_TRUE(pci::Function::take(system.machine(), nic_bus));
}

TEST(IommuGroups, TakeOfAFunctionBoundToAnotherDriverIsRefused) {
    Machine m;
    m.gpu_port_acs = m.nic_port_acs = 0x001d;
    m.nic_driver = "bnxt_en";
    const System system = m.build();
    auto f = pci::Function::take(system.machine(), nic_bus);
    ASSERT_FALSE(f);
    EXPECT_EQ(f.error(), "sim0: 0000:04:00.0 is bound to the driver bnxt_en; to take it, unbind it and bind vfio-pci");
}

}  // namespace
}  // namespace rig::sim
