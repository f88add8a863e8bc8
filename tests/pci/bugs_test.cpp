// The faults of tests/pci/cases/bugs.md marked (T) and (P), each on its minimal input:
// topology discovery and peer-to-peer decisions that other stacks got wrong.
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "../support/trees.hpp"
#include "rig/pci/machine.hpp"
#include "rig/pci/names.hpp"
#include "rig/pci/nics.hpp"
#include "rig/pci/routes.hpp"
#include "rig/pci/snapshot.hpp"

namespace rig::pci {
namespace {

using sim::Cpu;
using sim::Spec;
using sim::Topology;
using test::Tree;

std::vector<std::string> buses(const Machine& m) {
    std::vector<std::string> out;
    if (auto listed = m.functions())
        for (const auto& f : *listed) out.push_back(f.bus);
    return out;
}

// B01 (T): a bridge whose subordinate bus is 0xff, nothing behind it.
Topology subordinate_ff() {
    Topology t(Cpu::intel());
    const auto h0 = t.host_bridge(0, 0);
    auto bridge = Spec::root_port(1, 0, 0x15b3, 0x1021);
    bridge.secondary = 0x01;
    bridge.subordinate = 0xff;
    t.add(h0, bridge);
    const auto h8 = t.host_bridge(0, 0x80);
    t.add(h8, Spec::endpoint(0, 0, 0x14e4, 0x1750, 0x020000));
    return t;
}

TEST(BugB01, SubordinateBusFfFinishesAndRecordsTheWindowAsOneTo255) {
    const Tree tree(subordinate_ff());
    const Machine m = tree.machine();
    EXPECT_EQ(buses(m), (std::vector<std::string>{"0000:00:01.0", "0000:80:00.0"}));
    const auto files = describe(m);
    ASSERT_TRUE(files) << files.error();
    ASSERT_TRUE((*files)[0].buses);
    EXPECT_EQ(*(*files)[0].buses, (std::pair<unsigned, unsigned>{1, 255}));
    EXPECT_EQ(m.distance("0000:00:01.0", "0000:80:00.0"), Distance::System);
    EXPECT_EQ(m.distance("0000:80:00.0", "0000:80:00.0"), Distance::Bridge);
    // The same snapshot read again gives the same functions.
    EXPECT_EQ(buses(Machine::at(tree.root())), buses(m));
}

// B03 (T): two sockets, a GPU and a NIC on each.
Topology two_sockets(bool one_host_bridge_per_socket) {
    Topology t(Cpu::intel());
    for (const std::uint8_t socket : {std::uint8_t{0}, std::uint8_t{1}}) {
        const std::uint8_t base = socket == 0 ? 0x00 : 0x80;
        const auto h = t.host_bridge(0, base);
        t.add(h, Spec::root_complex(0x8086, 0x2020));
        auto nic = Spec::endpoint(0, 0, 0x15b3, 0x101b, 0x020700);
        nic.numa_node = socket;
        auto gpu = Spec::endpoint(0, 0, 0x10de, 0x20b0, 0x030200);
        gpu.numa_node = socket;
        t.add(t.add(h, Spec::root_port(1, 0, 0x8086, 0x2030)), nic);  // base+1:00.0
        // The GPU on a root port of the same host bridge, or on a host bridge of its own.
        const auto gh = one_host_bridge_per_socket ? h : t.host_bridge(0, static_cast<std::uint8_t>(base + 0x40));
        if (!one_host_bridge_per_socket) t.add(gh, Spec::root_complex(0x8086, 0x2020));
        auto rp = Spec::root_port(2, 0, 0x8086, 0x2030);
        rp.secondary = static_cast<std::uint8_t>(base + 0x41);
        t.add(t.add(gh, rp), gpu);  // base+0x41:00.0
    }
    return t;
}

TEST(BugB03, NicOfTheOtherSocketIsFartherThanTheNicOfTheGpusSocket) {
    const Tree tree(two_sockets(true));
    const Machine m = tree.machine();
    const auto near = m.distance("0000:41:00.0", "0000:01:00.0"), far = m.distance("0000:41:00.0", "0000:81:00.0");
    ASSERT_TRUE(near && far);
    EXPECT_EQ(*near, Distance::Bridge);
    EXPECT_EQ(*far, Distance::System);
    EXPECT_LT(*near, *far);
}

TEST(BugB03, OneHostBridgePerDeviceMakesBothSystemAndNumaTellsThemApart) {
    // The minimal input of CASES.md puts each device under a host bridge of its own: both
    // NICs are then System from GPU0 by the page's definition, and only the NUMA node
    // (which describe() reports) tells the socket's NIC from the other one.
    const Tree tree(two_sockets(false));
    const Machine m = tree.machine();
    EXPECT_EQ(m.distance("0000:41:00.0", "0000:01:00.0"), Distance::System);
    EXPECT_EQ(m.distance("0000:41:00.0", "0000:81:00.0"), Distance::System);
    const auto files = describe(m);
    ASSERT_TRUE(files);
    std::map<std::string, std::optional<int>> numa;
    for (const auto& f : *files) numa[f.id.bus] = f.numa_node;
    EXPECT_EQ(numa["0000:41:00.0"], 0);
    EXPECT_EQ(numa["0000:01:00.0"], 0);
    EXPECT_EQ(numa["0000:81:00.0"], 1);
}

TEST(BugB03, TheNicChooserNeverGivesGpu0TheOtherSocketsNic) {
    for (const bool one_host_bridge_per_socket : {true, false}) {
        SCOPED_TRACE(one_host_bridge_per_socket ? "a host bridge per socket" : "a host bridge per device");
        const Tree tree(two_sockets(one_host_bridge_per_socket));
        const auto routes = Routes::read(tree.machine());
        ASSERT_TRUE(routes);
        const auto pairs = pair_nics(*routes);
        ASSERT_TRUE(pairs) << pairs.error();
        ASSERT_EQ(pairs->size(), 2u);
        EXPECT_EQ((*pairs)[0].gpu, "0000:41:00.0");
        EXPECT_EQ((*pairs)[0].nic, "0000:01:00.0");
        EXPECT_EQ((*pairs)[1].gpu, "0000:c1:00.0");
        EXPECT_EQ((*pairs)[1].nic, "0000:81:00.0");
        const auto& far = (*pairs)[0].ranked.back();
        EXPECT_EQ(far.nic, "0000:81:00.0");
        EXPECT_EQ(far.distance, Distance::System);  // across the inter-socket link
        EXPECT_EQ(far.numa, Numa::Other);
    }
}

// B05 (T): a passthrough guest whose GPUs and NIC sit on root bus 00, no bridges.
Topology flat_guest(Cpu cpu) {
    Topology t(std::move(cpu));
    const auto h = t.host_bridge(0, 0);
    t.add(h, Spec::endpoint(0, 0, 0x10de, 0x20b5, 0x030200));
    t.add(h, Spec::endpoint(1, 0, 0x15b3, 0x101b, 0x020700));
    t.add(h, Spec::endpoint(2, 0, 0x10de, 0x20b5, 0x030200));
    return t;
}

TEST(BugB05, FlatTreeNeverParentsADeviceToItself) {
    const Tree tree(flat_guest(Cpu::intel()));
    const Machine m = tree.machine();
    const std::vector<std::string> all = {"0000:00:00.0", "0000:00:01.0", "0000:00:02.0"};
    EXPECT_EQ(buses(m), all);
    const auto files = describe(m);
    ASSERT_TRUE(files);
    for (const auto& f : *files) {
        EXPECT_FALSE(f.upstream) << f.id.bus;  // on the root bus: no parent at all
        EXPECT_EQ(f.host_bridge, "pci0000:00");
    }
    for (const auto& a : all)
        for (const auto& b : all)
            if (a != b) {
                EXPECT_EQ(m.distance(a, b), Distance::Bridge) << a << " " << b;
                // The host-bridge rule decides, not "siblings": 00:00.0 (the GPU itself) is
                // the representative, and it is not in the allow-list.
                const Route r = m.route(a, b);
                EXPECT_EQ(r.verdict, Verdict::NotSupported) << a << " " << b;
                EXPECT_FALSE(r.common);
            }
}

TEST(BugB05, FlatTreeOnAmdZenGuestForwardsByTheCpuRule) {
    const Tree tree(flat_guest(Cpu::amd(0x19)));
    EXPECT_EQ(tree.machine().route("0000:00:00.0", "0000:00:01.0").verdict, Verdict::ThroughHostBridge);
}

// B07 (T): GPUs whose class is VGA or 3D controller, not only processing accelerator.
TEST(BugB07, GpusAreToldByVendorAndAnyGpuClass) {
    EXPECT_TRUE(is_gpu(Id{"0000:03:00.0", 0x1002, 0x7448, 0x030000}));   // AMD workstation: VGA
    EXPECT_TRUE(is_gpu(Id{"0000:04:00.0", 0x10de, 0x26b9, 0x030200}));   // NVIDIA: 3D controller
    EXPECT_TRUE(is_gpu(Id{"0000:05:00.0", 0x1002, 0x740f, 0x038000}));   // AMD Instinct: other display
    EXPECT_TRUE(is_gpu(Id{"0000:06:00.0", 0x1002, 0x74a1, 0x120000}));   // processing accelerator
    EXPECT_TRUE(is_gpu(Id{"0000:07:00.0", 0x1d94, 0x55b7, 0x038000}));   // Hygon DCU
    EXPECT_FALSE(is_gpu(Id{"0000:08:00.0", 0x14e4, 0x1750, 0x020000}));  // a NIC
    EXPECT_FALSE(is_gpu(Id{"0000:09:00.0", 0x1234, 0x1111, 0x030000}));  // QEMU's VGA: no GPU vendor
    EXPECT_FALSE(is_gpu(Id{"0000:0a:00.0", 0x10de, 0x10f1, 0x040300}));  // a GPU's audio function
    EXPECT_EQ(kind_of(Id{"0000:03:00.0", 0x1002, 0x7448, 0x030000}), Kind::Gpu);
    EXPECT_EQ(kind_of(Id{"0000:08:00.0", 0x14e4, 0x1750, 0x020000}), Kind::Nic);
    EXPECT_EQ(class_name(0x030000), "VGA compatible controller");
    EXPECT_EQ(class_name(0x030200), "3D controller");
    EXPECT_EQ(class_name(0x020700), "InfiniBand controller");
    EXPECT_EQ(class_name(0x0d1100), "Wireless controller");  // known base class only
    EXPECT_EQ(class_name(0x420000), "Unassigned class");
}

TEST(BugB07, BothGpusBelowTheNicsSwitchAreListedAsGpus) {
    Topology t(Cpu::intel());
    const auto h = t.host_bridge(0, 0);
    t.add(h, Spec::root_complex(0x8086, 0x2020));
    const auto usp = t.add(t.add(h, Spec::root_port(1, 0, 0x8086, 0x2030)), Spec::upstream_port(0x1000, 0xc030));
    t.add(t.add(usp, Spec::downstream_port(0, 0x1000, 0xc030)), Spec::endpoint(0, 0, 0x1002, 0x7448, 0x030000));
    t.add(t.add(usp, Spec::downstream_port(1, 0x1000, 0xc030)), Spec::endpoint(0, 0, 0x10de, 0x26b9, 0x030200));
    t.add(t.add(usp, Spec::downstream_port(2, 0x1000, 0xc030)), Spec::endpoint(0, 0, 0x14e4, 0x1750, 0x020000));
    const Tree tree(t);
    const auto listed = tree.machine().functions();
    ASSERT_TRUE(listed);
    std::vector<std::string> gpus;
    for (const auto& f : *listed)
        if (is_gpu(f)) gpus.push_back(f.bus);
    EXPECT_EQ(gpus, (std::vector<std::string>{"0000:03:00.0", "0000:04:00.0"}));
    EXPECT_EQ(tree.machine().distance("0000:03:00.0", "0000:05:00.0"), Distance::Switch);
    EXPECT_EQ(tree.machine().distance("0000:04:00.0", "0000:05:00.0"), Distance::Switch);
}

// B09 (P): two switches {GPU0, NIC0} and {GPU1, NIC1} on two root ports of a host bridge
// that does not forward between root ports.
TEST(BugB09, NicCannotReachTheGpuBelowTheOtherSwitch) {
    Topology t(Cpu::intel());
    const auto h = t.host_bridge(0, 0);
    t.add(h, Spec::root_complex(0x8086, 0x6f00));  // Broadwell-EP: not in the allow-list
    for (const std::uint8_t port : {std::uint8_t{2}, std::uint8_t{3}}) {
        const auto usp = t.add(t.add(h, Spec::root_port(port, 0, 0x8086, 0x6f04)), Spec::upstream_port(0x10b5, 0x8747));
        t.add(t.add(usp, Spec::downstream_port(8, 0x10b5, 0x8747, 0)), Spec::endpoint(0, 0, 0x10de, 0x1db4, 0x030200));
        t.add(t.add(usp, Spec::downstream_port(0x10, 0x10b5, 0x8747, 0)),
              Spec::endpoint(0, 0, 0x15b3, 0x1017, 0x020000));
    }
    // S0: GPU0 03:00.0, NIC0 04:00.0; S1: GPU1 07:00.0, NIC1 08:00.0.
    const Tree tree(t);
    const Machine m = tree.machine();
    EXPECT_FALSE(m.forwards("0000:07:00.0", "0000:04:00.0"));  // NIC0 into GPU1's BAR
    EXPECT_FALSE(m.forwards("0000:03:00.0", "0000:08:00.0"));  // NIC1 into GPU0's BAR
    EXPECT_TRUE(m.forwards("0000:07:00.0", "0000:08:00.0"));   // NIC1 into GPU1's BAR
    EXPECT_TRUE(m.forwards("0000:03:00.0", "0000:04:00.0"));
    const Route r = m.route("0000:07:00.0", "0000:04:00.0");
    EXPECT_EQ(r.distance, Distance::Bridge);
    const std::string why = r.explain();
    EXPECT_NE(why.find("not supported"), std::string::npos) << why;
    EXPECT_NE(why.find("0000:00:00.0 (8086:6f00) is not in the allow-list"), std::string::npos) << why;
}

// B11 (P): switch downstream ports with ACSCtl 0x001d (SV RR CR UF) that the BIOS does not manage.
TEST(BugB11, AcsRedirectOnSwitchPortsIsReadAndNamed) {
    test::OneSwitch s;
    s.downstream_acs = 0x001d;
    const Tree tree(s.build());
    const Route r = tree.machine().route("0000:03:00.0", "0000:04:00.0");
    EXPECT_FALSE(r.forwards());
    ASSERT_EQ(r.redirects.size(), 2u);
    const std::string why = r.explain();
    EXPECT_NE(why.find("0000:02:08.0 ACSCtl 0x001d (ReqRedir CmpltRedir)"), std::string::npos) << why;
    EXPECT_NE(why.find("0000:02:10.0 ACSCtl 0x001d (ReqRedir CmpltRedir)"), std::string::npos) << why;
    // Cleared as `setpci ECAP_ACS+6.w=0000` would: direct again.
    s.downstream_acs = 0;
    ASSERT_TRUE(sim::write_sysfs(s.build(), tree.root()));
    EXPECT_EQ(tree.machine().route("0000:03:00.0", "0000:04:00.0").verdict, Verdict::Direct);
}

}  // namespace
}  // namespace rig::pci
