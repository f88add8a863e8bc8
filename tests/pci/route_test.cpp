// Routes on sysfs trees written from topologies: forwards, distance and route, case by
// case of docs/p2pdma.md §2–§3 (rig/src/route.cpp states the rule).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "../support/trees.hpp"
#include "rig/pci/machine.hpp"
#include "rig/sim/fixture.hpp"

namespace rig::pci {
namespace {

namespace fs = std::filesystem;
using sim::Cpu;
using sim::Spec;
using sim::Topology;
using test::OneSwitch;
using test::Tree;

constexpr const char* gpu = "0000:03:00.0";
constexpr const char* audio = "0000:03:00.1";
constexpr const char* nic = "0000:04:00.0";

TEST(Route, BelowOneSwitchWithoutAcsIsDirect) {
    const Tree tree(OneSwitch{}.build());
    const Route r = tree.machine().route(gpu, nic);
    EXPECT_EQ(r.verdict, Verdict::Direct);
    EXPECT_TRUE(r.forwards());
    EXPECT_EQ(r.distance, Distance::Switch);
    EXPECT_EQ(r.common, "0000:01:00.0");
    EXPECT_TRUE(r.acs_read);
    EXPECT_TRUE(r.redirects.empty());
    EXPECT_TRUE(r.cpu.empty());  // Step C was not reached
    EXPECT_TRUE(tree.machine().forwards(nic, gpu));
    EXPECT_EQ(tree.machine().distance(gpu, nic), Distance::Switch);
}

TEST(Route, BelowOneSwitchWithAcsRedirectOnUnlistedHostIsNotSupported) {
    OneSwitch s;
    s.downstream_acs = 0x001d;  // SV RR CR UF, as Linux sets it with an IOMMU on
    const Tree tree(s.build());
    const Route r = tree.machine().route(gpu, nic);
    EXPECT_EQ(r.verdict, Verdict::NotSupported);
    EXPECT_FALSE(r.forwards());
    EXPECT_EQ(r.distance, Distance::Switch);  // ACS changes forwards, not distance
    ASSERT_EQ(r.redirects.size(), 2u);
    EXPECT_EQ(r.redirects[0].bus, "0000:02:08.0");
    EXPECT_EQ(r.redirects[0].control, 0x001d);
    EXPECT_EQ(r.redirects[1].bus, "0000:02:10.0");
    EXPECT_FALSE(r.cpu_rule);
    EXPECT_NE(r.host_bridge_rule.find("0000:00:00.0 (8086:6f00) is not in the allow-list"), std::string::npos)
        << r.host_bridge_rule;
    const std::string why = r.explain();
    EXPECT_NE(why.find("0000:02:08.0 ACSCtl 0x001d (ReqRedir CmpltRedir)"), std::string::npos) << why;
    EXPECT_NE(why.find("pci=disable_acs_redir=0000:02:08.0;0000:02:10.0"), std::string::npos) << why;
    EXPECT_NE(why.find("not supported"), std::string::npos) << why;
}

TEST(Route, BelowOneSwitchWithAcsRedirectOnAmdZenGoesThroughHostBridge) {
    OneSwitch s;
    s.cpu = Cpu::amd(0x19);
    s.downstream_acs = 0x001d;
    const Tree tree(s.build());
    const Route r = tree.machine().route(gpu, nic);
    EXPECT_EQ(r.verdict, Verdict::ThroughHostBridge);
    EXPECT_TRUE(r.cpu_rule);
    EXPECT_EQ(r.cpu, "AuthenticAMD family 0x19");
    EXPECT_TRUE(r.host_bridge_rule.empty());
}

TEST(Route, BelowOneSwitchWithAcsRedirectOnAllowListedHostGoesThroughHostBridge) {
    OneSwitch s;
    s.host_device = 0x2020;  // Skylake-SP
    s.downstream_acs = 0x001d;
    const Tree tree(s.build());
    const Route r = tree.machine().route(gpu, nic);
    EXPECT_EQ(r.verdict, Verdict::ThroughHostBridge);
    EXPECT_FALSE(r.cpu_rule);
}

TEST(Route, EgressControlAloneRedirects) {
    OneSwitch s;
    s.downstream_acs = 0x0020;
    const Tree tree(s.build());
    EXPECT_FALSE(tree.machine().forwards(gpu, nic));
}

TEST(Route, AcsBitsOtherThanRedirectsDoNotRedirect) {
    OneSwitch s;
    s.downstream_acs = 0x1fd3;  // SV TB UF DT and the control-only bits 7..12, no RR CR EC
    const Tree tree(s.build());
    const Route r = tree.machine().route(gpu, nic);
    EXPECT_EQ(r.verdict, Verdict::Direct);
}

TEST(Route, CommonBridgeOwnAcsCounts) {
    OneSwitch s;
    s.upstream_acs = 0x0004;
    const Tree tree(s.build());
    const Route r = tree.machine().route(gpu, nic);
    EXPECT_EQ(r.verdict, Verdict::NotSupported);
    ASSERT_EQ(r.redirects.size(), 1u);
    EXPECT_EQ(r.redirects[0].bus, "0000:01:00.0");
}

TEST(Route, ProviderAndClientOwnAcsCount) {
    OneSwitch provider;
    provider.gpu_acs = 0x0008;
    EXPECT_FALSE(Tree(provider.build()).machine().forwards(gpu, nic));
    OneSwitch client;
    client.nic_acs = 0x0008;
    EXPECT_FALSE(Tree(client.build()).machine().forwards(gpu, nic));
}

TEST(Route, AcsAboveCommonBridgeDoesNotCount) {
    OneSwitch s;
    s.root_port_acs = 0x001d;
    const Tree tree(s.build());
    EXPECT_EQ(tree.machine().route(gpu, nic).verdict, Verdict::Direct);
}

TEST(Route, TwoFunctionsOfOneDeviceMeetAtTheirPort) {
    OneSwitch s;
    s.upstream_acs = 0x001d;  // above the common node: not checked
    const Tree tree(s.build());
    const Route r = tree.machine().route(gpu, audio);
    EXPECT_EQ(r.common, "0000:02:08.0");
    EXPECT_EQ(r.distance, Distance::Switch);
    EXPECT_EQ(r.verdict, Verdict::Direct);
}

TEST(Route, TwoFunctionsBelowRootPortWithRedirectAreNotSupportedOnUnlistedHost) {
    // docs/p2pdma.md §2.1: the root port is the common node, its own RR/CR count.
    Topology t(Cpu::intel());
    const auto h = t.host_bridge(0, 0);
    t.add(h, Spec::root_complex(0x8086, 0x6f00));
    const auto rp = t.add(h, Spec::root_port(1, 0, 0x8086, 0x6f02, 0x001d));
    t.add(rp, Spec::endpoint(0, 0, 0x10de, 0x1db4, 0x030200));
    t.add(rp, Spec::endpoint(0, 1, 0x10de, 0x10f1, 0x040300));
    const Tree tree(t);
    const Route r = tree.machine().route("0000:01:00.0", "0000:01:00.1");
    EXPECT_EQ(r.common, "0000:00:01.0");
    EXPECT_EQ(r.distance, Distance::Switch);
    EXPECT_EQ(r.verdict, Verdict::NotSupported);
    ASSERT_EQ(r.redirects.size(), 1u);
    EXPECT_EQ(r.redirects[0].bus, "0000:00:01.0");
}

TEST(Route, SameFunctionBelowABridgeIsSwitchAndDirect) {
    const Tree tree(OneSwitch{}.build());
    const Route r = tree.machine().route(gpu, gpu);
    EXPECT_EQ(r.distance, Distance::Switch);
    EXPECT_EQ(r.common, gpu);
    EXPECT_EQ(r.verdict, Verdict::Direct);
}

TEST(Route, SameFunctionWithOwnRedirectGoesToRootComplex) {
    OneSwitch s;
    s.gpu_acs = 0x0004;
    const Tree tree(s.build());
    EXPECT_EQ(tree.machine().route(gpu, gpu).verdict, Verdict::NotSupported);
}

TEST(Route, SameFunctionOnRootBusIsBridge) {
    Topology t(Cpu::intel());
    const auto h = t.host_bridge(0, 0);
    t.add(h, Spec::root_complex(0x8086, 0x29c0));
    t.add(h, Spec::endpoint(2, 0, 0x1af4, 0x1041, 0x020000));
    const Tree tree(t);
    EXPECT_EQ(tree.machine().distance("0000:00:02.0", "0000:00:02.0"), Distance::Bridge);
    EXPECT_TRUE(tree.machine().forwards("0000:00:02.0", "0000:00:02.0"));
}

// Host bridge 0000:00 with its root complex device and two root ports, one endpoint each.
Topology two_root_ports(Cpu cpu, std::uint16_t vendor, std::uint16_t device) {
    Topology t(std::move(cpu));
    const auto h = t.host_bridge(0, 0);
    t.add(h, Spec::root_complex(vendor, device));
    const auto a = t.add(h, Spec::root_port(1, 0, vendor, 0x1234));
    const auto b = t.add(h, Spec::root_port(2, 0, vendor, 0x1234));
    t.add(a, Spec::endpoint(0, 0, 0x10de, 0x2335, 0x030200));  // 01:00.0
    t.add(b, Spec::endpoint(0, 0, 0x15b3, 0x1021, 0x020700));  // 02:00.0
    return t;
}

TEST(Route, TwoRootPortsOfAllowListedHostBridgeGoThroughIt) {
    const Tree tree(two_root_ports(Cpu::intel(0x8f), 0x8086, 0x09a2));
    const Route r = tree.machine().route("0000:01:00.0", "0000:02:00.0");
    EXPECT_EQ(r.distance, Distance::Bridge);
    EXPECT_FALSE(r.common);
    EXPECT_EQ(r.verdict, Verdict::ThroughHostBridge);
    EXPECT_EQ(r.provider_host_bridge, "pci0000:00");
    EXPECT_EQ(r.client_host_bridge, "pci0000:00");
    EXPECT_NE(r.host_bridge_rule.find("is in the allow-list"), std::string::npos) << r.host_bridge_rule;
}

TEST(Route, TwoRootPortsOfUnknownHostBridgeAreNotSupported) {
    const Tree tree(two_root_ports(Cpu::intel(), 0x8086, 0x0e00));  // Ivy Bridge-EP: not listed
    const Route r = tree.machine().route("0000:01:00.0", "0000:02:00.0");
    EXPECT_EQ(r.distance, Distance::Bridge);
    EXPECT_EQ(r.verdict, Verdict::NotSupported);
}

TEST(Route, SameHostBridgeOnlyEntryAllowsWithinItsHostBridge) {
    const Tree tree(two_root_ports(Cpu::intel(0x3f), 0x8086, 0x2f00));  // Haswell-EP
    EXPECT_EQ(tree.machine().route("0000:01:00.0", "0000:02:00.0").verdict, Verdict::ThroughHostBridge);
}

// Two host bridges: pci0000:00 (first device `first`) and pci0000:80 (first device `second`).
Topology two_host_bridges(Cpu cpu, Spec first, Spec second) {
    Topology t(std::move(cpu));
    const auto h0 = t.host_bridge(0, 0);
    const auto h1 = t.host_bridge(0, 0x80);
    const auto a = t.add(h0, Spec::root_port(3, 0, 0x8086, 0x2032));
    const auto b = t.add(h1, Spec::root_port(3, 0, 0x8086, 0x2032));
    t.add(h0, std::move(first));
    t.add(h1, std::move(second));
    t.add(a, Spec::endpoint(0, 0, 0x10de, 0x2335, 0x030200));  // 01:00.0
    t.add(b, Spec::endpoint(0, 0, 0x15b3, 0x1021, 0x020700));  // 81:00.0
    return t;
}

TEST(Route, TwoHostBridgesBothAllowListedGoThrough) {
    // Skylake-SP: 2020 at 00:00.0, a root port 2030 first on the other stack.
    const Tree tree(
        two_host_bridges(Cpu::intel(), Spec::root_complex(0x8086, 0x2020), Spec::root_port(0, 0, 0x8086, 0x2030)));
    const Route r = tree.machine().route("0000:01:00.0", "0000:81:00.0");
    EXPECT_EQ(r.distance, Distance::System);
    EXPECT_EQ(r.provider_host_bridge, "pci0000:00");
    EXPECT_EQ(r.client_host_bridge, "pci0000:80");
    EXPECT_EQ(r.verdict, Verdict::ThroughHostBridge);
}

TEST(Route, TwoHostBridgesOneUnknownAreNotSupported) {
    const Tree tree(
        two_host_bridges(Cpu::intel(), Spec::root_complex(0x8086, 0x2020), Spec::root_complex(0x8086, 0x6f00)));
    const Route r = tree.machine().route("0000:01:00.0", "0000:81:00.0");
    EXPECT_EQ(r.verdict, Verdict::NotSupported);
    EXPECT_NE(r.host_bridge_rule.find("pci0000:80's first device 0000:80:00.0 (8086:6f00) is not in the allow-list"),
              std::string::npos)
        << r.host_bridge_rule;
}

TEST(Route, TwoHostBridgesWithSameHostBridgeOnlyEntryAreNotSupported) {
    const Tree tree(
        two_host_bridges(Cpu::intel(0x3f), Spec::root_complex(0x8086, 0x2f00), Spec::root_complex(0x8086, 0x2f01)));
    const Route r = tree.machine().route("0000:01:00.0", "0000:81:00.0");
    EXPECT_EQ(r.verdict, Verdict::NotSupported);
    EXPECT_NE(r.host_bridge_rule.find("allowed only within its own host bridge"), std::string::npos)
        << r.host_bridge_rule;
}

TEST(Route, TwoHostBridgesOnAmdZenGoThroughWhateverTheList) {
    const Tree tree(
        two_host_bridges(Cpu::amd(0x1a), Spec::root_complex(0x1022, 0x1480), Spec::root_complex(0x1022, 0x1480)));
    const Route r = tree.machine().route("0000:01:00.0", "0000:81:00.0");
    EXPECT_EQ(r.verdict, Verdict::ThroughHostBridge);
    EXPECT_TRUE(r.cpu_rule);
}

TEST(Route, AmdBeforeZenAndHygonDoNotTakeTheCpuRule) {
    for (const Cpu& cpu : {Cpu::amd(0x15), Cpu::hygon()}) {
        const Tree tree(two_host_bridges(cpu, Spec::root_complex(0x1022, 0x1480), Spec::root_complex(0x1022, 0x1480)));
        const Route r = tree.machine().route("0000:01:00.0", "0000:81:00.0");
        EXPECT_EQ(r.verdict, Verdict::NotSupported) << cpu.vendor;
        EXPECT_FALSE(r.cpu_rule) << cpu.vendor;
    }
}

TEST(Route, FirstDeviceNeitherAtZeroNorRootPortIsNoRepresentative) {
    // A DSA (listed) first on its root bus, but at 01.0: pci_host_bridge_dev() gives none.
    auto dsa = Spec::endpoint(1, 0, 0x8086, 0x0b25, 0x088000);
    const Tree tree(two_host_bridges(Cpu::intel(0x8f), Spec::root_complex(0x8086, 0x09a2), dsa));
    const Route r = tree.machine().route("0000:01:00.0", "0000:81:00.0");
    EXPECT_EQ(r.verdict, Verdict::NotSupported);
    EXPECT_NE(r.host_bridge_rule.find("pci0000:80 has no representative"), std::string::npos) << r.host_bridge_rule;
}

TEST(Route, RootPortFirstAtNonZeroDevfnRepresentsItsHostBridge) {
    const Tree tree(
        two_host_bridges(Cpu::intel(), Spec::root_complex(0x8086, 0x2020), Spec::root_port(1, 0, 0x8086, 0x2031)));
    EXPECT_EQ(tree.machine().route("0000:01:00.0", "0000:81:00.0").verdict, Verdict::ThroughHostBridge);
}

TEST(Route, RepresentativeIsTheLowestDevfnOnTheRootBus) {
    // 80:00.0 is unknown although a listed root port follows it at 80:01.0.
    Topology t = two_host_bridges(Cpu::intel(), Spec::root_complex(0x8086, 0x2020), Spec::root_complex(0x8086, 0x6f00));
    const Tree tree(t);
    EXPECT_EQ(tree.machine().route("0000:01:00.0", "0000:81:00.0").verdict, Verdict::NotSupported);
}

TEST(Route, UnprivilegedBelowOneSwitchAnswersAsRootComplexAlone) {
    // Without CAP_SYS_ADMIN config gives 64 bytes: ACS is unknown, Step C decides.
    const Tree intel(OneSwitch{}.build(), 64);
    const Route r = intel.machine().route(gpu, nic);
    EXPECT_FALSE(r.acs_read);
    EXPECT_EQ(r.distance, Distance::Switch);
    EXPECT_EQ(r.verdict, Verdict::NotSupported);
    EXPECT_NE(r.explain().find("no CAP_SYS_ADMIN"), std::string::npos);
    OneSwitch amd;
    amd.cpu = Cpu::amd();
    EXPECT_EQ(Tree(amd.build(), 64).machine().route(gpu, nic).verdict, Verdict::ThroughHostBridge);
    OneSwitch skylake;
    skylake.host_device = 0x2020;
    EXPECT_TRUE(Tree(skylake.build(), 64).machine().forwards(gpu, nic));
}

TEST(Route, UnprivilegedRootPortRepresentativeIsInferredFromItsClass) {
    const Tree tree(
        two_host_bridges(Cpu::intel(), Spec::root_complex(0x8086, 0x2020), Spec::root_port(1, 0, 0x8086, 0x2031)), 64);
    EXPECT_EQ(tree.machine().route("0000:01:00.0", "0000:81:00.0").verdict, Verdict::ThroughHostBridge);
}

TEST(Route, UnreadFunctionGivesFalseAndNoDistance) {
    const Tree tree(OneSwitch{}.build());
    fs::remove(tree.root() / "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:10.0/0000:04:00.0/config");
    const Machine m = tree.machine();
    EXPECT_FALSE(m.forwards(gpu, nic));
    EXPECT_FALSE(m.forwards(nic, gpu));
    EXPECT_EQ(m.distance(gpu, nic), std::nullopt);
    const Route r = m.route(gpu, nic);
    EXPECT_EQ(r.verdict, Verdict::Unread);
    EXPECT_FALSE(r.distance);
    EXPECT_NE(r.unread.find(nic), std::string::npos) << r.unread;
    EXPECT_NE(r.explain().find("unread"), std::string::npos);
}

TEST(Route, BusAddressOfNoFunctionIsUnread) {
    const Tree tree(OneSwitch{}.build());
    const Machine m = tree.machine();
    for (const char* bus : {"0000:99:00.0", "41:00.0", "0000:03:00.0 ", "0000:03:00.8", ""}) {
        EXPECT_FALSE(m.forwards(gpu, bus)) << bus;
        EXPECT_FALSE(m.forwards(bus, gpu)) << bus;
        EXPECT_EQ(m.distance(bus, gpu), std::nullopt) << bus;
        EXPECT_EQ(m.route(gpu, bus).verdict, Verdict::Unread) << bus;
    }
    const std::string why = m.route(gpu, "0000:99:00.0").unread;
    EXPECT_NE(why.find("0000:99:00.0: no such function"), std::string::npos) << why;
}

TEST(Route, UpstreamBridgeUnreadMakesTheFunctionUnread) {
    const Tree tree(OneSwitch{}.build());
    std::ofstream(tree.root() / "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/config", std::ios::trunc) << "short";
    const Route r = tree.machine().route(gpu, nic);
    EXPECT_EQ(r.verdict, Verdict::Unread);
    EXPECT_NE(r.unread.find("0000:01:00.0"), std::string::npos) << r.unread;
}

// A switch downstream port with a NIC PF, its VFs, and a GPU on another port.
Topology sriov(std::optional<std::uint16_t> vf_acs, std::optional<std::uint16_t> pf_acs) {
    Topology t(Cpu::intel());
    const auto h = t.host_bridge(0, 0);
    t.add(h, Spec::root_complex(0x8086, 0x6f00));
    const auto rp = t.add(h, Spec::root_port(1, 0, 0x8086, 0x6f02));
    const auto usp = t.add(rp, Spec::upstream_port(0x10b5, 0x8747));
    const auto d1 = t.add(usp, Spec::downstream_port(1, 0x10b5, 0x8747));
    const auto d2 = t.add(usp, Spec::downstream_port(2, 0x10b5, 0x8747));
    auto pf = Spec::endpoint(0, 0, 0x15b3, 0x1017, 0x020000);
    pf.acs_control = pf_acs;
    const auto p = t.add(d1, pf);  // 03:00.0
    for (const std::uint8_t fn : {std::uint8_t{4}, std::uint8_t{5}}) {
        auto vf = Spec::endpoint(3, fn, 0x15b3, 0x1018, 0x020000);
        vf.acs_control = vf_acs;
        t.add_vf(p, vf);  // 03:03.4, 03:03.5
    }
    t.add(d2, Spec::endpoint(0, 0, 0x10de, 0x1db4, 0x030200));  // 04:00.0
    return t;
}

TEST(Route, VfsOfOnePfMeetAtThePfsUpstreamBridge) {
    const Tree tree(sriov(std::nullopt, 0x001d));
    const Route r = tree.machine().route("0000:03:03.4", "0000:03:03.5");
    EXPECT_EQ(r.common, "0000:02:01.0");
    EXPECT_EQ(r.distance, Distance::Switch);
    EXPECT_EQ(r.verdict, Verdict::Direct);  // the PF and its ACS are not on the way
}

TEST(Route, VfAndItsPfMeetAtThePfsUpstreamBridge) {
    const Tree tree(sriov(std::nullopt, std::nullopt));
    const Route r = tree.machine().route("0000:03:00.0", "0000:03:03.4");
    EXPECT_EQ(r.common, "0000:02:01.0");
    EXPECT_EQ(r.verdict, Verdict::Direct);
}

TEST(Route, VfOwnAcsCounts) {
    const Tree tree(sriov(0x0004, std::nullopt));
    const Route r = tree.machine().route("0000:04:00.0", "0000:03:03.4");
    EXPECT_EQ(r.common, "0000:01:00.0");
    EXPECT_EQ(r.verdict, Verdict::NotSupported);
    ASSERT_EQ(r.redirects.size(), 1u);
    EXPECT_EQ(r.redirects[0].bus, "0000:03:03.4");
}

TEST(Route, VfOnABusOfItsOwnStillClimbsFromItsPf) {
    Topology t = sriov(std::nullopt, std::nullopt);
    t.add_vf(*t.find("0000:03:00.0"), Spec::endpoint(0, 0, 0x15b3, 0x1018, 0x020000), 0x05);  // 05:00.0
    const Tree tree(t);
    const Route r = tree.machine().route("0000:05:00.0", "0000:04:00.0");
    EXPECT_EQ(r.common, "0000:01:00.0");
    EXPECT_EQ(r.distance, Distance::Switch);
}

TEST(Route, VmdDomainIsAHostBridgeOfItsOwn) {
    Topology t(Cpu::intel(0x8f));
    const auto h = t.host_bridge(0, 0);
    t.add(h, Spec::root_complex(0x8086, 0x09a2));
    const auto rp = t.add(h, Spec::root_port(1, 0, 0x8086, 0x347a));
    t.add(rp, Spec::endpoint(0, 0, 0x10de, 0x2335, 0x030200));  // 01:00.0
    const auto vmd = t.add(h, Spec::endpoint(0x0e, 0, 0x8086, 0x28c0, 0x010400));
    const auto v = t.vmd_host_bridge(vmd, 0x10000, 0xe0);
    const auto vrp = t.add(v, Spec::root_port(6, 0, 0x8086, 0x347a));
    t.add(vrp, Spec::endpoint(0, 0, 0x144d, 0xa80a, 0x010802));  // 10000:e1:00.0
    t.add(vrp, Spec::endpoint(0, 1, 0x144d, 0xa80a, 0x010802));  // 10000:e1:00.1
    const Tree tree(t);
    const Machine m = tree.machine();
    const Route far = m.route("0000:01:00.0", "10000:e1:00.0");
    EXPECT_EQ(far.distance, Distance::System);
    EXPECT_EQ(far.client_host_bridge, "pci10000:e0");
    // The VMD device's way ends at 10000:e0:06.0, not at 0000:00:0e.0: no common node with it.
    EXPECT_EQ(m.distance("0000:00:0e.0", "10000:e1:00.0"), Distance::System);
    const Route near = m.route("10000:e1:00.0", "10000:e1:00.1");
    EXPECT_EQ(near.common, "10000:e0:06.0");
    EXPECT_EQ(near.verdict, Verdict::Direct);
}

TEST(Route, AnswersFollowLiveAcsChanges) {
    const Tree tree(OneSwitch{}.build());
    const Machine m = tree.machine();
    ASSERT_TRUE(m.forwards(gpu, nic));
    OneSwitch s;
    s.downstream_acs = 0x001d;
    ASSERT_TRUE(sim::write_sysfs(s.build(), tree.root()));  // as setpci would change it
    EXPECT_FALSE(m.forwards(gpu, nic));
}

TEST(Route, NoCpuinfoMeansNoCpuRule) {
    OneSwitch s;
    s.cpu = Cpu::amd();
    s.downstream_acs = 0x001d;
    const Tree tree(s.build());
    fs::remove(tree.root() / "proc/cpuinfo");
    const Route r = tree.machine().route(gpu, nic);
    EXPECT_FALSE(r.cpu_rule);
    EXPECT_EQ(r.verdict, Verdict::NotSupported);
    EXPECT_NE(r.cpu.find("unknown"), std::string::npos) << r.cpu;
}

TEST(RouteNames, DistanceAndVerdictSpellings) {
    EXPECT_EQ(to_string(Distance::Switch), "switch");
    EXPECT_EQ(to_string(Distance::Bridge), "bridge");
    EXPECT_EQ(to_string(Distance::System), "system");
    EXPECT_EQ(to_string(Verdict::Direct), "direct");
    EXPECT_EQ(to_string(Verdict::ThroughHostBridge), "through host bridge");
    EXPECT_EQ(to_string(Verdict::NotSupported), "not supported");
    EXPECT_EQ(to_string(Verdict::Unread), "unread");
}

}  // namespace
}  // namespace rig::pci
