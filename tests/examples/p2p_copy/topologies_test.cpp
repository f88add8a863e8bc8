// p2p_copy's machines (machines/include/rig/sim/layouts.hpp): the routes each built-in
// topology gives between its GPU and NIC, and a `rig snapshot` of each rebuilt by
// from_snapshot with the same functions and the same routes.
#include "machines.hpp"

#include <gtest/gtest.h>

#include "../../support/trees.hpp"
#include "machines.hpp"
#include "rig/pci/snapshot.hpp"

namespace p2p_copy {
namespace {

using rig::pci::Distance;
using rig::pci::Verdict;
using rig::test::TempDir;
using rig::test::Tree;

rig::sim::Identity gpu() { return rig::gpu::sim::Model(gpu_config(64 << 20)).identity(); }

Layout must(rig::Result<Layout> r) {
    if (!r) throw std::runtime_error(r.error());
    return std::move(*r);
}

TEST(Topologies, SwitchIsDirectBelowTheSwitch) {
    const Layout l = must(builtin("switch", gpu(), nic_identity()));
    EXPECT_EQ(l.gpu, "0000:03:00.0");
    EXPECT_EQ(l.nic, "0000:04:00.0");
    const auto route = Tree(l.topology).machine().route(l.gpu, l.nic);
    EXPECT_EQ(route.verdict, Verdict::Direct);
    EXPECT_EQ(route.distance, Distance::Switch);
    EXPECT_EQ(route.common, "0000:01:00.0");
}

TEST(Topologies, AcsIsRefusedAtBothDownstreamPortsAndTheAllowList) {
    const Layout l = must(builtin("acs", gpu(), nic_identity()));
    const auto route = Tree(l.topology).machine().route(l.gpu, l.nic);
    EXPECT_EQ(route.verdict, Verdict::NotSupported);
    EXPECT_EQ(route.distance, Distance::Switch);
    ASSERT_EQ(route.redirects.size(), 2u);
    EXPECT_EQ(route.redirects[0].bus, "0000:02:00.0");
    EXPECT_EQ(route.redirects[1].bus, "0000:02:01.0");
    EXPECT_EQ(route.redirects[0].control, 0x001d);
    EXPECT_FALSE(route.cpu_rule);
}

TEST(Topologies, TwoHostBridgesGoThroughTheRootComplexByTheCpuRule) {
    const Layout l = must(builtin("two-host-bridges", gpu(), nic_identity()));
    EXPECT_EQ(l.gpu, "0000:01:00.0");
    EXPECT_EQ(l.nic, "0000:41:00.0");
    const auto route = Tree(l.topology).machine().route(l.gpu, l.nic);
    EXPECT_EQ(route.verdict, Verdict::ThroughHostBridge);
    EXPECT_EQ(route.distance, Distance::System);
    EXPECT_EQ(route.provider_host_bridge, "pci0000:00");
    EXPECT_EQ(route.client_host_bridge, "pci0000:40");
    EXPECT_TRUE(route.cpu_rule);
}

TEST(Topologies, IommuPutsTheNicInAGroupAndGoesThroughTheAllowedHostBridge) {
    const Layout l = must(builtin("iommu", gpu(), nic_identity()));
    const auto route = Tree(l.topology).machine().route(l.gpu, l.nic);
    EXPECT_EQ(route.verdict, Verdict::ThroughHostBridge);
    EXPECT_EQ(route.redirects.size(), 2u);
    const auto& nic = l.topology[*l.topology.find(l.nic)];
    const auto& gpu_function = l.topology[*l.topology.find(l.gpu)];
    EXPECT_EQ(nic.spec.iommu_group, 1u);
    EXPECT_FALSE(gpu_function.spec.iommu_group.has_value());
}

TEST(Topologies, IommuDirectAndIommuBlockedKeepTheNicInAGroup) {
    const Layout direct = must(builtin("iommu-direct", gpu(), nic_identity()));
    EXPECT_EQ(Tree(direct.topology).machine().route(direct.gpu, direct.nic).verdict, Verdict::Direct);
    EXPECT_EQ(direct.topology[*direct.topology.find(direct.nic)].spec.iommu_group, 1u);
    const Layout blocked = must(builtin("iommu-blocked", gpu(), nic_identity()));
    EXPECT_EQ(Tree(blocked.topology).machine().route(blocked.gpu, blocked.nic).verdict, Verdict::NotSupported);
    EXPECT_EQ(blocked.topology[*blocked.topology.find(blocked.nic)].spec.iommu_group, 1u);
}

TEST(Topologies, UnknownNamesAreListed) {
    const auto r = builtin("torus", gpu(), nic_identity());
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(),
              "no built-in topology \"torus\" (switch, acs, two-host-bridges, iommu, iommu-direct, iommu-blocked, "
              "small-bar; or a directory `rig snapshot` wrote, with --gpu and --nic)");
}

// Each built-in machine, snapshot as `rig snapshot` writes it and rebuilt from the
// snapshot: the same functions at the same bus addresses, the same IDs, the same route.
TEST(Topologies, SnapshotOfEachBuiltinRebuildsTheSameMachine) {
    for (std::string_view name : builtin_names) {
        SCOPED_TRACE(name);
        const Layout original = must(builtin(name, gpu(), nic_identity()));
        const Tree tree(original.topology);
        TempDir snap;
        ASSERT_TRUE(rig::pci::snapshot(tree.machine(), snap.path()));
        const Layout rebuilt = must(from_snapshot(snap.path(), original.gpu, original.nic, gpu(), nic_identity()));
        const auto& a = original.topology.functions();
        const auto& b = rebuilt.topology.functions();
        ASSERT_EQ(a.size(), b.size());
        for (const auto& f : a) {
            const auto at = rebuilt.topology.find(f.address.to_string());
            ASSERT_TRUE(at) << f.address.to_string();
            const auto& g = rebuilt.topology[*at];
            EXPECT_EQ(g.spec.vendor, f.spec.vendor);
            EXPECT_EQ(g.spec.device_id, f.spec.device_id);
            EXPECT_EQ(g.spec.class_code, f.spec.class_code);
            EXPECT_EQ(g.spec.acs_control, f.spec.acs_control);
            EXPECT_EQ(g.spec.port_type, f.spec.port_type);
            EXPECT_EQ(g.spec.iommu_group, f.spec.iommu_group);
        }
        const auto before = tree.machine().route(original.gpu, original.nic);
        const auto after = Tree(rebuilt.topology).machine().route(original.gpu, original.nic);
        EXPECT_EQ(after.verdict, before.verdict);
        EXPECT_EQ(after.distance, before.distance);
        EXPECT_EQ(after.explain(), before.explain());
    }
}

// A machine as `rig snapshot` sees it with the IOMMU on: GPU, its audio function and a
// NIC below a switch without ACS, all three in IOMMU group 3, each bound to its driver.
rig::sim::Topology grouped_machine(const std::string& audio_driver) {
    using rig::sim::Spec;
    rig::sim::Topology t(rig::sim::Cpu::intel(0x8f));
    const auto h = t.host_bridge(0, 0);
    t.add(h, Spec::root_complex(0x8086, 0x09a2));
    const auto usp =
        t.add(t.add(h, Spec::root_port(1, 0, 0x8086, 0x352a, 0x001d)), Spec::upstream_port(0x1000, 0xc030));
    const auto dsp1 = t.add(usp, Spec::downstream_port(0x08, 0x1000, 0xc030));
    const auto dsp2 = t.add(usp, Spec::downstream_port(0x10, 0x1000, 0xc030));
    auto gpu_fn = Spec::endpoint(0, 0, 0x10de, 0x2335, 0x030200);
    gpu_fn.driver = "nvidia";
    gpu_fn.iommu_group = 3;
    t.add(dsp1, gpu_fn);
    auto audio = Spec::endpoint(0, 1, 0x10de, 0x10f1, 0x040300);
    audio.driver = audio_driver;
    audio.iommu_group = 3;
    t.add(dsp1, audio);
    auto nic = Spec::endpoint(0, 0, 0x14e4, 0x1750, 0x020000);
    nic.driver = "bnxt_en";
    nic.iommu_group = 3;
    t.add(dsp2, nic);
    return t;
}

// --topology DIR --gpu --nic: the snapshot's IOMMU groups are the what-if's. The NIC, in
// a group, is behind an IOMMU, as VFIO takes it; the GPU and NIC rig drives are bound to
// vfio-pci in it, as rig takes them.
TEST(Topologies, SnapshotGroupsPutTheNicBehindAnIommuInTheWhatIf) {
    const Tree tree(grouped_machine(""));
    const Layout l = must(from_snapshot(tree.root(), "0000:03:00.0", "0000:04:00.0", gpu(), nic_identity()));
    EXPECT_EQ(l.topology.groups(), rig::sim::Topology::Groups::AsGiven);
    const auto& nic = l.topology[*l.topology.find(l.nic)].spec;
    EXPECT_EQ(nic.iommu_group, 3u);
    EXPECT_EQ(nic.driver, "vfio-pci");
    auto pair = open_pair(l, 64 << 20);
    ASSERT_TRUE(pair) << pair.error();
    EXPECT_EQ((*pair)->one.nic->function().addressing(), rig::pci::Addressing::Iommu);
}

// Where the snapshot's group holds a function bound to its driver, the what-if refuses
// as VFIO would on that machine, naming the function and the driver.
TEST(Topologies, SnapshotGroupWithAFunctionBoundToItsDriverRefusesTheTakeNamingIt) {
    const Tree tree(grouped_machine("snd_hda_intel"));
    const Layout l = must(from_snapshot(tree.root(), "0000:03:00.0", "0000:04:00.0", gpu(), nic_identity()));
    EXPECT_EQ(l.topology[*l.topology.find("0000:03:00.1")].spec.driver, "snd_hda_intel");
    const auto pair = open_pair(l, 64 << 20);
    ASSERT_FALSE(pair);
    EXPECT_NE(pair.error().find("IOMMU group 3 is not viable: 0000:03:00.1 in it is bound to the driver snd_hda_intel"),
              std::string::npos)
        << pair.error();
}

TEST(Topologies, SnapshotThatIsNoTreeIsRefused) {
    TempDir empty;
    const auto r = from_snapshot(empty.path(), "0000:03:00.0", "0000:04:00.0", gpu(), nic_identity());
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), empty.path().string() + ": not a `rig snapshot` tree (no sys/bus/pci/devices in it)");
}

}  // namespace
}  // namespace p2p_copy
