// The real machines of tests/pci/cases/, each rebuilt as a topology, written as a sysfs
// tree and read back, with the answers each file derives: distance, forwards for a
// process that reads every ACS Control (root) and for one that reads 64 bytes of config
// (unprivileged), and the NIC each GPU must be paired with (rig/pci/nics.hpp), read both
// ways. Bus numbers the dumps leave out are filled in as the files' sysfs
// sketches suggest.
#include <gtest/gtest.h>

#include "../support/trees.hpp"
#include "rig/pci/machine.hpp"
#include "rig/pci/nics.hpp"
#include "rig/pci/routes.hpp"

namespace rig::pci {
namespace {

using sim::Cpu;
using sim::FunctionRef;
using sim::Spec;
using sim::Topology;
using test::Tree;

struct Answer {
    const char* provider;
    const char* client;
    Distance distance;
    bool root;          // forwards, config fully readable
    bool unprivileged;  // forwards, 64 bytes of config
};

// Checks every answer on the topology read whole and read as an unprivileged process.
void check(const Topology& t, const std::vector<Answer>& answers) {
    const Tree whole(t), unprivileged(t, 64);
    const Machine a = whole.machine(), b = unprivileged.machine();
    for (const Answer& x : answers) {
        SCOPED_TRACE(std::string(x.provider) + " <- " + x.client);
        EXPECT_EQ(a.distance(x.provider, x.client), x.distance);
        EXPECT_EQ(a.distance(x.client, x.provider), x.distance);
        EXPECT_EQ(b.distance(x.provider, x.client), x.distance);
        EXPECT_EQ(a.forwards(x.provider, x.client), x.root) << a.route(x.provider, x.client).explain();
        EXPECT_EQ(a.forwards(x.client, x.provider), x.root);
        EXPECT_EQ(b.forwards(x.provider, x.client), x.unprivileged) << b.route(x.provider, x.client).explain();
    }
}

using Pairs = std::vector<std::pair<std::string, std::string>>;

// Every GPU's pair, read whole and read unprivileged: both must give `expected`.
void check_pairs(const Topology& t, const Pairs& expected) {
    for (const std::optional<unsigned> bytes : {std::optional<unsigned>{}, std::optional<unsigned>{64}}) {
        SCOPED_TRACE(bytes ? "unprivileged" : "whole");
        const Tree tree(t, bytes);
        const auto routes = Routes::read(tree.machine());
        ASSERT_TRUE(routes) << routes.error();
        const auto pairs = pair_nics(*routes);
        ASSERT_TRUE(pairs) << pairs.error();
        Pairs got;
        for (const auto& p : *pairs) got.emplace_back(p.gpu, p.nic.value_or("-"));
        EXPECT_EQ(got, expected);
    }
}

Spec with_numa(Spec s, int node) {
    s.numa_node = node;
    return s;
}

// 01: DGX A100, AMD EPYC Rome, Broadcom PEX Gen4 switches in two levels, ConnectX-6.
Topology dgx_a100(std::optional<std::uint16_t> acs) {
    Topology t(Cpu::amd(0x17));
    const auto h0 = t.host_bridge(0, 0x00);
    t.add(h0, Spec::root_complex(0x1022, 0x1480));
    auto rp = Spec::root_port(1, 1, 0x1022, 0x1483, acs);
    const auto port = t.add(h0, rp);                                  // [01]
    const auto outer = t.add(port, Spec::upstream_port(0x1000, 0xc010));  // 01:00.0 [02]
    const auto d_gpu = t.add(outer, Spec::downstream_port(0, 0x1000, 0xc010, acs));  // 02:00.0 [03]
    const auto sw1 = t.add(d_gpu, Spec::upstream_port(0x1000, 0xc010));            // 03:00.0 [04]
    const auto d1 = t.add(sw1, Spec::downstream_port(0, 0x1000, 0xc010, acs));      // 04:00.0 [05]
    const auto sw2 = t.add(d1, Spec::upstream_port(0x1000, 0xc010));                // 05:00.0 [06]
    const auto d2 = t.add(sw2, Spec::downstream_port(0, 0x1000, 0xc010, acs));      // 06:00.0 [07]
    t.add(d2, Spec::endpoint(0, 0, 0x10de, 0x20b0, 0x030200));                      // GPU0 07:00.0
    auto d_nic = Spec::downstream_port(4, 0x1000, 0xc010, acs);
    d_nic.secondary = 0x0a;
    const auto sib = t.add(t.add(outer, d_nic), Spec::upstream_port(0x1000, 0xc010));  // 0a:00.0 [0b]
    const auto d3 = t.add(sib, Spec::downstream_port(0, 0x1000, 0xc010, acs));         // 0b:00.0 [0c]
    t.add(d3, Spec::endpoint(0, 0, 0x15b3, 0x101b, 0x020700));                         // mlx5_0 0c:00.0
    const auto h6 = t.host_bridge(0, 0x60);
    t.add(h6, Spec::root_complex(0x1022, 0x1480));
    const auto rp6 = t.add(h6, Spec::root_port(3, 1, 0x1022, 0x1483, acs));  // [61]
    t.add(rp6, Spec::endpoint(0, 0, 0x15b3, 0x101b, 0x020700));               // mlx5_4 61:00.0
    t.add(rp6, Spec::endpoint(0, 1, 0x15b3, 0x101b, 0x020700));               // mlx5_5 61:00.1
    return t;
}

TEST(Case01DgxA100, AmdRuleForwardsEveryPair) {
    const std::vector<Answer> answers = {
        {"0000:07:00.0", "0000:0c:00.0", Distance::Switch, true, true},
        {"0000:07:00.0", "0000:61:00.0", Distance::System, true, true},
        {"0000:61:00.0", "0000:61:00.1", Distance::Switch, true, true},
    };
    check(dgx_a100(std::nullopt), answers);
    check(dgx_a100(0x001d), answers);
}

TEST(Case01DgxA100, Gpu0PairsWithMlx5_0BelowTheOuterSwitch) {
    check_pairs(dgx_a100(0x001d), {{"0000:07:00.0", "0000:0c:00.0"}});
    const Tree tree(dgx_a100(std::nullopt));
    const auto routes = Routes::read(tree.machine());
    ASSERT_TRUE(routes);
    const auto ranked = rank_nics(*routes, *routes->find("0000:07:00.0"));
    ASSERT_EQ(ranked.size(), 3u);
    EXPECT_EQ(ranked[0].why, "switch 0000:01:00.0, Gen4 x16, NUMA unknown");
    // mlx5_4 and mlx5_5, the two ports of one ConnectX-6 on another host bridge, tie.
    EXPECT_EQ(ranked[1].distance, Distance::System);
    EXPECT_TRUE(ranked[1].tie && ranked[2].tie);
    EXPECT_FALSE(ranked[0].tie);
}

TEST(Case01DgxA100, CommonNodeIsTheOuterSwitchAndAcsOnlyChangesTheMapType) {
    const Tree plain(dgx_a100(std::nullopt)), acs(dgx_a100(0x001d));
    const Route r = plain.machine().route("0000:07:00.0", "0000:0c:00.0");
    EXPECT_EQ(r.common, "0000:01:00.0");
    EXPECT_EQ(r.verdict, Verdict::BusAddress);
    EXPECT_EQ(acs.machine().route("0000:07:00.0", "0000:0c:00.0").verdict, Verdict::ThroughHostBridge);
    EXPECT_EQ(plain.machine().route("0000:61:00.0", "0000:61:00.1").common, "0000:60:03.1");
}

// 03: 8x H100 SXM, 9 NICs; one PCIe switch per GPU/NIC rail on its own host bridge
// (Sapphire Rapids: 8086:09a2 first on every root bus); NIC0 alone on socket 1.
Topology h100_nine_nics(Cpu cpu) {
    Topology t(std::move(cpu));
    // GPUi pairs with NIC(8 - i): GPU0-NIC8 ... GPU3-NIC5 on socket 0, GPU4-NIC4 ... GPU7-NIC1 on socket 1.
    const std::uint8_t roots[8] = {0x15, 0x37, 0x48, 0x59, 0x97, 0xb8, 0xc9, 0xda};
    for (int i = 0; i < 8; ++i) {
        const int numa = i < 4 ? 0 : 1;
        const auto h = t.host_bridge(0, roots[i]);
        t.add(h, Spec::root_complex(0x8086, 0x09a2));
        const auto rp = t.add(h, Spec::root_port(1, 0, 0x8086, 0x352a, 0x001d));
        const auto usp = t.add(rp, Spec::upstream_port(0x1000, 0xc030));
        const auto dg = t.add(usp, Spec::downstream_port(0, 0x1000, 0xc030, 0x001d));
        const auto dn = t.add(usp, Spec::downstream_port(1, 0x1000, 0xc030, 0x001d));
        t.add(dg, with_numa(Spec::endpoint(0, 0, 0x10de, 0x2330, 0x030200), numa));  // GPUi at rr+3:00.0
        t.add(dn, with_numa(Spec::endpoint(0, 0, 0x15b3, 0x1021, 0x020700), numa));  // its NIC at rr+4:00.0
    }
    const auto h = t.host_bridge(0, 0xe0);
    t.add(h, Spec::root_complex(0x8086, 0x09a2));
    t.add(t.add(h, Spec::root_port(1, 0, 0x8086, 0x352a)), with_numa(Spec::endpoint(0, 0, 0x15b3, 0x1017, 0x020000), -1));
    return t;
}

TEST(Case03H100NineNics, SwitchPairAndEveryCrossHostBridgePairForward) {
    // GPU0 = 18:00.0, NIC8 = 19:00.0; NIC5 = 5d:00.0; NIC1 = de:00.0; NIC0 (management) = e1:00.0.
    const std::vector<Answer> answers = {
        {"0000:18:00.0", "0000:19:00.0", Distance::Switch, true, true},  // GPU0 <- NIC8 PIX
        {"0000:18:00.0", "0000:5d:00.0", Distance::System, true, true},  // GPU0 <- NIC5 NODE
        {"0000:18:00.0", "0000:de:00.0", Distance::System, true, true},  // GPU0 <- NIC1 SYS
        {"0000:18:00.0", "0000:e1:00.0", Distance::System, true, true},  // GPU0 <- NIC0 SYS
        {"0000:de:00.0", "0000:e1:00.0", Distance::System, true, true},  // NIC1 <- NIC0 SYS
    };
    check(h100_nine_nics(Cpu::intel(0x8f)), answers);
    check(h100_nine_nics(Cpu::amd(0x19)), answers);
}

TEST(Case03H100NineNics, EachGpuPairsWithTheNicOfItsSwitchAndNeverTheManagementNic) {
    // GPUi (rr+3:00.0) with the NIC of its rail (rr+4:00.0); NIC0 e1:00.0 (NUMA -1) never.
    check_pairs(h100_nine_nics(Cpu::intel(0x8f)),
                {{"0000:18:00.0", "0000:19:00.0"}, {"0000:3a:00.0", "0000:3b:00.0"}, {"0000:4b:00.0", "0000:4c:00.0"},
                 {"0000:5c:00.0", "0000:5d:00.0"}, {"0000:9a:00.0", "0000:9b:00.0"}, {"0000:bb:00.0", "0000:bc:00.0"},
                 {"0000:cc:00.0", "0000:cd:00.0"}, {"0000:dd:00.0", "0000:de:00.0"}});
    const Tree tree(h100_nine_nics(Cpu::intel(0x8f)));
    const auto routes = Routes::read(tree.machine());
    ASSERT_TRUE(routes);
    const auto ranked = rank_nics(*routes, *routes->find("0000:18:00.0"));
    ASSERT_EQ(ranked.size(), 9u);
    // Socket 0's three other rails (System, same NUMA), then NIC0 (NUMA unknown), then socket 1's four.
    EXPECT_EQ(ranked[1].numa, Numa::Same);
    EXPECT_EQ(ranked[4].nic, "0000:e1:00.0");
    EXPECT_EQ(ranked[4].numa, Numa::Unknown);
    EXPECT_EQ(ranked[5].numa, Numa::Other);
}

TEST(Case03H100NineNics, DistanceIgnoresNumaNodes) {
    // NIC0 has numa_node -1 and NIC1..NIC4 node 1: both are System from NIC1.
    const Tree tree(h100_nine_nics(Cpu::intel(0x8f)));
    const Machine m = tree.machine();
    EXPECT_EQ(m.distance("0000:de:00.0", "0000:e1:00.0"), Distance::System);
    EXPECT_EQ(m.distance("0000:de:00.0", "0000:9b:00.0"), Distance::System);  // NIC1 - NIC4, both node 1
    EXPECT_EQ(m.distance("0000:18:00.0", "0000:19:00.0"), Distance::Switch);
}

// 05: 8x V100 PCIe behind PLX switches with a ConnectX-5 and its VFs (Skylake-SP stack
// whose first device is root port 8086:2030).
Topology v100_sriov(std::uint16_t host_device, std::optional<std::uint16_t> acs, std::optional<std::uint16_t> vf_acs) {
    Topology t(Cpu::intel());
    const auto h = t.host_bridge(0, 0x58);
    auto rp = Spec::root_port(0, 0, 0x8086, host_device);
    rp.acs_control = acs;
    const auto port = t.add(h, rp);                                         // 58:00.0 [59]
    const auto usp = t.add(port, Spec::upstream_port(0x10b5, 0x9765));      // 59:00.0 [5a]
    auto dn = Spec::downstream_port(4, 0x10b5, 0x9765, acs);
    dn.secondary = 0x5b;
    const auto d_nic = t.add(usp, dn);
    auto g1 = Spec::downstream_port(8, 0x10b5, 0x9765, acs);
    g1.secondary = 0x5c;
    g1.subordinate = 0x5f;
    auto g2 = Spec::downstream_port(0x0c, 0x10b5, 0x9765, acs);
    g2.secondary = 0x60;
    g2.subordinate = 0x63;
    t.add(t.add(usp, g1), Spec::endpoint(0, 0, 0x10de, 0x1db6, 0x030200));  // 5c:00.0
    t.add(t.add(usp, g2), Spec::endpoint(0, 0, 0x10de, 0x1db6, 0x030200));  // 60:00.0
    const auto pf = t.add(d_nic, Spec::endpoint(0, 0, 0x15b3, 0x1017, 0x020000));  // 5b:00.0
    const std::pair<std::uint8_t, std::uint8_t> vfs[] = {{3, 4}, {3, 5}, {3, 6}, {3, 7}, {4, 0}, {4, 1}};
    for (const auto& [device, function] : vfs) {
        auto vf = Spec::endpoint(device, function, 0x15b3, 0x1018, 0x020000);
        vf.acs_control = vf_acs;
        t.add_vf(pf, vf);
    }
    return t;
}

TEST(Case05V100Sriov, SkylakeForwardsEveryPairWithOrWithoutAcs) {
    const std::vector<Answer> answers = {
        {"0000:5c:00.0", "0000:5b:00.0", Distance::Switch, true, true},  // GPU <- PF
        {"0000:5c:00.0", "0000:5b:03.4", Distance::Switch, true, true},  // GPU <- VF
        {"0000:5c:00.0", "0000:60:00.0", Distance::Switch, true, true},  // GPU <- GPU
        {"0000:5b:03.4", "0000:5b:03.5", Distance::Switch, true, true},  // VF <- VF
    };
    check(v100_sriov(0x2030, std::nullopt, std::nullopt), answers);
    check(v100_sriov(0x2030, 0x001d, 0x0004), answers);
}

TEST(Case05V100Sriov, BroadwellForwardsOnlyWithoutRedirect) {
    check(v100_sriov(0x6f02, std::nullopt, std::nullopt),
          {{"0000:5c:00.0", "0000:5b:00.0", Distance::Switch, true, false},
           {"0000:5c:00.0", "0000:5b:03.4", Distance::Switch, true, false},
           {"0000:5b:03.4", "0000:5b:03.5", Distance::Switch, true, false}});
    check(v100_sriov(0x6f02, std::nullopt, 0x0004),  // the VFs' own ACS
          {{"0000:5c:00.0", "0000:5b:00.0", Distance::Switch, true, false},
           {"0000:5c:00.0", "0000:5b:03.4", Distance::Switch, false, false},
           {"0000:5b:03.4", "0000:5b:03.5", Distance::Switch, false, false}});
}

TEST(Case05V100Sriov, TheTwoGpusAreSpreadOverThePfAndItsFirstVf) {
    // The PF and its six VFs share one link below the GPUs' switch: seven NICs that tie.
    check_pairs(v100_sriov(0x2030, 0x001d, std::nullopt), {{"0000:5c:00.0", "0000:5b:00.0"}, {"0000:60:00.0", "0000:5b:03.4"}});
}

TEST(Case05V100Sriov, VfClimbsFromThePfsPortAndCommonNodesAreAsDerived) {
    const Tree tree(v100_sriov(0x2030, std::nullopt, std::nullopt));
    const Machine m = tree.machine();
    EXPECT_EQ(m.route("0000:5c:00.0", "0000:5b:00.0").common, "0000:59:00.0");
    EXPECT_EQ(m.route("0000:5c:00.0", "0000:5b:03.4").common, "0000:59:00.0");
    EXPECT_EQ(m.route("0000:5b:03.4", "0000:5b:03.5").common, "0000:5a:04.0");
}

// 07: 2x RTX 5880 Ada on AMD Zen 2 under two host bridges, root ports with ACSCtl 0x001d.
TEST(Case07Rtx5880Amd, TwoHostBridgesForwardThroughTheCpuRule) {
    Topology t(Cpu::amd(0x17));
    for (const std::uint8_t root : {std::uint8_t{0x40}, std::uint8_t{0x60}}) {
        const auto h = t.host_bridge(0, root);
        t.add(h, Spec::root_complex(0x1022, 0x1480));
        t.add(t.add(h, Spec::root_port(3, 1, 0x1022, 0x1483, 0x001d)), Spec::endpoint(0, 0, 0x10de, 0x26b9, 0x030000));
    }
    check(t, {{"0000:41:00.0", "0000:61:00.0", Distance::System, true, true}});
    const Tree tree(t);
    const Route r = tree.machine().route("0000:41:00.0", "0000:61:00.0");
    EXPECT_EQ(r.verdict, Verdict::ThroughHostBridge);
    EXPECT_TRUE(r.cpu_rule);
    EXPECT_FALSE(r.common);
    EXPECT_TRUE(r.redirects.empty());  // no common bridge: ACS does not matter
}

// 09: Threadripper PRO 3975WX on WRX80: four host bridges, one on-board switch.
TEST(Case09Wrx80, FourHostBridgesOfOneDomainAndOneNumaNode) {
    Topology t(Cpu::amd(0x17));
    const auto h0 = t.host_bridge(0, 0x00);
    t.add(h0, Spec::root_complex(0x1022, 0x1480));
    const auto p1 = t.add(h0, Spec::root_port(1, 1, 0x1022, 0x1483));  // [01]
    auto p3 = Spec::root_port(3, 1, 0x1022, 0x1483);
    p3.secondary = 0x02;
    const auto p2 = t.add(h0, p3);
    for (const auto port : {p1, p2}) {
        t.add(port, with_numa(Spec::endpoint(0, 0, 0x10de, 0x2204, 0x030000), 0));
        t.add(port, with_numa(Spec::endpoint(0, 1, 0x10de, 0x1aef, 0x040300), 0));
    }
    for (const std::uint8_t root : {std::uint8_t{0x20}, std::uint8_t{0x40}}) {
        const auto h = t.host_bridge(0, root);
        t.add(h, Spec::root_complex(0x1022, 0x1480));
        t.add(t.add(h, Spec::root_port(7, 1, 0x1022, 0x1484)), Spec::endpoint(0, 0, 0x1022, 0x148a, 0x130000));
    }
    const auto h6 = t.host_bridge(0, 0x60);
    t.add(h6, Spec::root_complex(0x1022, 0x1480));
    auto rp = Spec::root_port(3, 1, 0x1022, 0x1483);
    rp.subordinate = 0x67;
    const auto usp = t.add(t.add(h6, rp), Spec::upstream_port(0x1022, 0x57ad));  // 61:00.0 [62]
    t.add(t.add(usp, Spec::downstream_port(2, 0x1022, 0x57a3)), Spec::endpoint(0, 0, 0x10de, 0x2204, 0x030000));  // 63
    t.add(t.add(usp, Spec::downstream_port(4, 0x1022, 0x57a3)), Spec::endpoint(0, 0, 0x10de, 0x2204, 0x030000));  // 64
    check(t, {
                 {"0000:01:00.0", "0000:02:00.0", Distance::Bridge, true, true},
                 {"0000:01:00.0", "0000:63:00.0", Distance::System, true, true},
                 {"0000:63:00.0", "0000:64:00.0", Distance::Switch, true, true},
                 {"0000:01:00.0", "0000:01:00.1", Distance::Switch, true, true},
             });
    const Tree tree(t);
    EXPECT_EQ(tree.machine().route("0000:63:00.0", "0000:64:00.0").common, "0000:61:00.0");
    EXPECT_EQ(tree.machine().route("0000:01:00.0", "0000:01:00.1").common, "0000:00:01.1");
}

// 11: QEMU q35 guest, 8x H200 and 8x ConnectX-7 each on its own root port; a second
// configuration with an emulated TI XIO3130 switch.
Topology q35(Cpu cpu) {
    Topology t(std::move(cpu));
    const auto h = t.host_bridge(0, 0);
    t.add(h, Spec::root_complex(0x8086, 0x29c0));
    // Root ports 01.0-02.3 on buses 01-0c: virtio and XHCI below 01.0-01.3, GPUs below
    // 01.4-02.3 (buses 05-0c); NICs from 02.4 (bus 0d).
    for (int slot = 0; slot < 12; ++slot) {
        auto rp = Spec::root_port(static_cast<std::uint8_t>(1 + slot / 8), static_cast<std::uint8_t>(slot % 8), 0x1b36, 0x000c);
        rp.secondary = static_cast<std::uint8_t>(slot + 1);
        const auto port = t.add(h, rp);
        t.add(port, slot < 4 ? Spec::endpoint(0, 0, 0x1af4, 0x1041, 0x020000) : Spec::endpoint(0, 0, 0x10de, 0x2335, 0x030200));
    }
    auto rp = Spec::root_port(2, 4, 0x1b36, 0x000c);  // 02.4: the first ConnectX-7
    rp.secondary = 0x0d;
    t.add(t.add(h, rp), Spec::endpoint(0, 0, 0x15b3, 0x1021, 0x020700));
    // Second configuration: an emulated switch below another root port.
    auto sp = Spec::root_port(4, 0, 0x1b36, 0x000c);
    sp.secondary = 0x65;
    const auto usp = t.add(t.add(h, sp), Spec::upstream_port(0x104c, 0x8232));  // 65:00.0 [66]
    t.add(t.add(usp, Spec::downstream_port(0, 0x104c, 0x8233)), Spec::endpoint(0, 0, 0x15b3, 0x1021, 0x020700));  // 67
    t.add(t.add(usp, Spec::downstream_port(1, 0x104c, 0x8233)), Spec::endpoint(0, 0, 0x10de, 0x2335, 0x030200));  // 68
    return t;
}

TEST(Case11H200Q35, IntelModelGuestRefusesEveryPairAcrossRootPorts) {
    check(q35(Cpu::intel()), {
                                 {"0000:05:00.0", "0000:0d:00.0", Distance::Bridge, false, false},
                                 {"0000:05:00.0", "0000:06:00.0", Distance::Bridge, false, false},
                                 {"0000:68:00.0", "0000:67:00.0", Distance::Switch, true, false},
                             });
}

TEST(Case11H200Q35, TheGpuBelowTheEmulatedSwitchPairsWithItsNic) {
    const Tree tree(q35(Cpu::intel()));
    const auto routes = Routes::read(tree.machine());
    ASSERT_TRUE(routes);
    const auto pairs = pair_nics(*routes);
    ASSERT_TRUE(pairs);
    ASSERT_EQ(pairs->size(), 9u);
    EXPECT_EQ(pairs->back().gpu, "0000:68:00.0");
    EXPECT_EQ(pairs->back().nic, "0000:67:00.0");
    // The others sit each on a root port of its own: no NIC forwards to them, every one ties.
    EXPECT_FALSE(pairs->front().ranked.front().forwards);
    EXPECT_TRUE(pairs->front().ranked.front().tie);
}

TEST(Case11H200Q35, AmdModelGuestForwardsEveryPair) {
    check(q35(Cpu::amd(0x19)), {
                                   {"0000:05:00.0", "0000:0d:00.0", Distance::Bridge, true, true},
                                   {"0000:05:00.0", "0000:06:00.0", Distance::Bridge, true, true},
                                   {"0000:68:00.0", "0000:67:00.0", Distance::Switch, true, true},
                               });
}

// 13: Azure NDv4 (AMD EPYC guest) and NDv2 (Intel Skylake guest): Hyper-V vPCI, one
// domain and host bridge per device below VMBus.
Topology hyperv(Cpu cpu, const std::vector<std::pair<std::uint32_t, Spec>>& devices) {
    Topology t(std::move(cpu));
    int n = 0;
    for (const auto& [domain, spec] : devices) {
        const auto h = t.host_bridge(domain, 0,
                                     "LNXSYSTM:00/LNXSYBUS:00/ACPI0004:00/VMBUS:00/47505500-000" + std::to_string(n++) +
                                         "-0000-3130-444531303244");
        t.add(h, spec);
    }
    return t;
}

TEST(Case13AzureHyperV, Ndv4AmdGuestForwardsEveryPair) {
    const Spec gpu = Spec::endpoint(0, 0, 0x10de, 0x20b0, 0x030200), ib = Spec::endpoint(0, 0, 0x15b3, 0x101c, 0x020700);
    const Topology t = hyperv(Cpu::amd(23), {{0x0003, gpu}, {0x0103, ib}, {0x000b, gpu}});
    check(t, {
                 {"0003:00:00.0", "0103:00:00.0", Distance::System, true, true},
                 {"0003:00:00.0", "000b:00:00.0", Distance::System, true, true},
             });
    const Tree tree(t);
    const auto listed = tree.machine().functions();
    ASSERT_TRUE(listed);
    ASSERT_EQ(listed->size(), 3u);
    EXPECT_EQ((*listed)[0].bus, "0003:00:00.0");
    EXPECT_EQ((*listed)[1].bus, "000b:00:00.0");
    EXPECT_EQ((*listed)[2].bus, "0103:00:00.0");
}

TEST(Case13AzureHyperV, BothGpusOfTheirOwnDomainsPairWithTheOneInfinibandNic) {
    const Spec gpu = Spec::endpoint(0, 0, 0x10de, 0x20b0, 0x030200), ib = Spec::endpoint(0, 0, 0x15b3, 0x101c, 0x020700);
    check_pairs(hyperv(Cpu::amd(23), {{0x0003, gpu}, {0x0103, ib}, {0x000b, gpu}}),
                {{"0003:00:00.0", "0103:00:00.0"}, {"000b:00:00.0", "0103:00:00.0"}});
}

TEST(Case13AzureHyperV, Ndv2IntelGuestRefusesEveryPair) {
    const Spec gpu = Spec::endpoint(0, 0, 0x10de, 0x1db5, 0x030200), ib = Spec::endpoint(0, 0, 0x15b3, 0x101c, 0x020700);
    const Topology t = hyperv(Cpu::intel(85), {{0x0001, gpu}, {0x0101, ib}, {0x0002, gpu}});
    check(t, {
                 {"0001:00:00.0", "0101:00:00.0", Distance::System, false, false},
                 {"0001:00:00.0", "0002:00:00.0", Distance::System, false, false},
             });
    const Tree tree(t);
    const Route r = tree.machine().route("0001:00:00.0", "0101:00:00.0");
    EXPECT_NE(r.host_bridge_rule.find("pci0001:00's first device 0001:00:00.0 (10de:1db5) is not in the allow-list"),
              std::string::npos)
        << r.host_bridge_rule;
}

// 15: 3x Tesla K80 (two GK210 each behind a PEX 8747) on 2x Haswell-EP.
Topology k80_haswell(std::optional<std::uint16_t> acs) {
    Topology t(Cpu::intel(0x3f));
    const auto h0 = t.host_bridge(0, 0);
    t.add(h0, Spec::root_complex(0x8086, 0x2f00));
    auto r0 = Spec::root_port(2, 0, 0x8086, 0x2f04);
    r0.secondary = 0x03;
    const auto a = t.add(t.add(h0, r0), Spec::upstream_port(0x10b5, 0x8747));  // 03:00.0 [04]
    t.add(t.add(a, Spec::downstream_port(0x08, 0x10b5, 0x8747, acs)), Spec::endpoint(0, 0, 0x10de, 0x102d, 0x030200));  // 05
    t.add(t.add(a, Spec::downstream_port(0x10, 0x10b5, 0x8747, acs)), Spec::endpoint(0, 0, 0x10de, 0x102d, 0x030200));  // 06
    const auto h1 = t.host_bridge(0, 0x80);
    t.add(h1, Spec::root_complex(0x8086, 0x2f01));
    for (const std::uint8_t usp_bus : {std::uint8_t{0x82}, std::uint8_t{0x86}}) {
        auto rp = Spec::root_port(usp_bus == 0x82 ? 2 : 3, 0, 0x8086, 0x2f04);
        rp.secondary = usp_bus;
        const auto usp = t.add(t.add(h1, rp), Spec::upstream_port(0x10b5, 0x8747));
        t.add(t.add(usp, Spec::downstream_port(0x08, 0x10b5, 0x8747, acs)), Spec::endpoint(0, 0, 0x10de, 0x102d, 0x030200));
        t.add(t.add(usp, Spec::downstream_port(0x10, 0x10b5, 0x8747, acs)), Spec::endpoint(0, 0, 0x10de, 0x102d, 0x030200));
    }
    return t;
}

TEST(Case15K80Haswell, SameHostBridgeOnlyEntryForbidsCrossSocket) {
    // GPU0 05:00.0, GPU1 06:00.0, GPU2 84:00.0, GPU4 88:00.0.
    const std::vector<Answer> answers = {
        {"0000:05:00.0", "0000:06:00.0", Distance::Switch, true, true},
        {"0000:84:00.0", "0000:88:00.0", Distance::Bridge, true, true},
        {"0000:05:00.0", "0000:84:00.0", Distance::System, false, false},
    };
    check(k80_haswell(std::nullopt), answers);
    check(k80_haswell(0x001d), answers);
    const Tree plain(k80_haswell(std::nullopt)), acs(k80_haswell(0x001d));
    EXPECT_EQ(plain.machine().route("0000:05:00.0", "0000:06:00.0").verdict, Verdict::BusAddress);
    EXPECT_EQ(acs.machine().route("0000:05:00.0", "0000:06:00.0").verdict, Verdict::ThroughHostBridge);
}

// 17: Hygon CPU, Hygon DCUs behind on-card bridges behind two levels of Broadcom PEX.
struct Hygon {
    Topology t{Cpu::hygon()};
    FunctionRef nodes[9];  // 37:00.0 36:zz.0 35:00.0 34:yy.0 33:00.0 3a:00.0 39:vv.0 38:00.0 34:ww.0
    FunctionRef above;     // 32:xx.0, above the common node
};

Hygon hygon_dcus(int acs_on) {
    Hygon h;
    Topology& t = h.t;
    const auto hb = t.host_bridge(0, 0x30);
    t.add(hb, Spec::root_complex(0x1d94, 0x1450));
    const auto acs = [&](int index) { return acs_on == index ? std::optional<std::uint16_t>(0x001d) : std::optional<std::uint16_t>(0); };
    auto rp = Spec::root_port(1, 1, 0x1d94, 0x1453);
    rp.secondary = 0x31;
    const auto outer = t.add(t.add(hb, rp), Spec::upstream_port(0x1000, 0xc010));  // 31:00.0 [32]
    auto xx = Spec::downstream_port(0, 0x1000, 0xc010, acs(9));
    xx.secondary = 0x33;
    h.above = t.add(outer, xx);
    auto usp = Spec::upstream_port(0x1000, 0xc010);
    usp.acs_control = acs(4);
    const auto inner = t.add(h.above, usp);  // 33:00.0 [34]
    h.nodes[4] = inner;
    auto yy = Spec::downstream_port(1, 0x1000, 0xc010, acs(3));
    yy.secondary = 0x35;
    h.nodes[3] = t.add(inner, yy);
    auto ww = Spec::downstream_port(2, 0x1000, 0xc010, acs(8));
    ww.secondary = 0x38;
    h.nodes[8] = t.add(inner, ww);
    const auto card = [&](FunctionRef port, std::uint8_t bus, int usp_index, int dsp_index, int dcu_index) {
        auto card_usp = Spec::upstream_port(0x1d94, 0x23b7);
        card_usp.acs_control = acs(usp_index);
        card_usp.secondary = static_cast<std::uint8_t>(bus + 1);
        h.nodes[usp_index] = t.add(port, card_usp);
        auto card_dsp = Spec::downstream_port(0, 0x1d94, 0x23b7, acs(dsp_index));
        card_dsp.secondary = static_cast<std::uint8_t>(bus + 2);
        h.nodes[dsp_index] = t.add(h.nodes[usp_index], card_dsp);
        auto dcu = Spec::endpoint(0, 0, 0x1d94, 0x55b7, 0x038000);
        dcu.acs_control = acs(dcu_index);
        h.nodes[dcu_index] = t.add(h.nodes[dsp_index], dcu);
    };
    card(h.nodes[3], 0x35, 2, 1, 0);  // 35:00.0 -> 36:00.0 -> 37:00.0
    card(h.nodes[8], 0x38, 7, 6, 5);  // 38:00.0 -> 39:00.0 -> 3a:00.0
    auto other = Spec::root_port(1, 2, 0x1d94, 0x1453);
    other.secondary = 0x40;
    t.add(t.add(hb, other), Spec::endpoint(0, 0, 0x15b3, 0x1017, 0x020000));  // 40:00.0
    return h;
}

TEST(Case17HygonDcu, SwitchPairForwardsOnlyWithoutRedirect) {
    check(hygon_dcus(-1).t, {
                                {"0000:37:00.0", "0000:3a:00.0", Distance::Switch, true, false},
                                {"0000:37:00.0", "0000:40:00.0", Distance::Bridge, false, false},
                            });
}

TEST(Case17HygonDcu, EachCheckedNodeRedirectsAndTheBridgeAboveDoesNot) {
    for (int i = 0; i < 9; ++i) {
        const Hygon h = hygon_dcus(i);
        const Tree tree(h.t);
        const Route r = tree.machine().route("0000:37:00.0", "0000:3a:00.0");
        EXPECT_EQ(r.verdict, Verdict::NotSupported) << h.t.bus(h.nodes[i]);
        ASSERT_EQ(r.redirects.size(), 1u) << h.t.bus(h.nodes[i]);
        EXPECT_EQ(r.redirects[0].bus, h.t.bus(h.nodes[i]));
        EXPECT_EQ(r.common, "0000:33:00.0");
    }
    const Hygon h = hygon_dcus(9);
    const Tree tree(h.t);
    EXPECT_EQ(tree.machine().route("0000:37:00.0", "0000:3a:00.0").verdict, Verdict::BusAddress);
}

// 19: 8 PCIe GPUs, two per switch, two switches per socket on one host bridge per socket.
Topology eight_gpus(std::uint16_t first, std::uint16_t second, std::optional<std::uint16_t> acs) {
    Topology t(Cpu::intel());
    const std::pair<std::uint8_t, std::uint16_t> sockets[] = {{0x00, first}, {0x80, second}};
    for (const auto& [root, id] : sockets) {
        const auto h = t.host_bridge(0, root);
        t.add(h, Spec::root_complex(0x8086, id));
        for (const std::uint8_t slot : {std::uint8_t{2}, std::uint8_t{3}}) {
            const auto usp = t.add(t.add(h, Spec::root_port(slot, 0, 0x8086, 0x6f04)), Spec::upstream_port(0x10b5, 0x8747));
            for (const std::uint8_t port : {std::uint8_t{8}, std::uint8_t{0x10}})
                t.add(t.add(usp, Spec::downstream_port(port, 0x10b5, 0x8747, acs)), Spec::endpoint(0, 0, 0x10de, 0x1b06, 0x030000));
        }
    }
    return t;
}

// GPU0 03:00.0, GPU1 04:00.0 (first switch), GPU2 07:00.0 (second switch), GPU4 83:00.0.
TEST(Case19EightGpus, BroadwellForwardsOnlyBelowASwitchWithoutRedirect) {
    check(eight_gpus(0x6f00, 0x6f00, std::nullopt), {
                                                        {"0000:03:00.0", "0000:04:00.0", Distance::Switch, true, false},
                                                        {"0000:03:00.0", "0000:07:00.0", Distance::Bridge, false, false},
                                                        {"0000:03:00.0", "0000:83:00.0", Distance::System, false, false},
                                                    });
    check(eight_gpus(0x6f00, 0x6f00, 0x001d), {{"0000:03:00.0", "0000:04:00.0", Distance::Switch, false, false}});
}

TEST(Case19EightGpus, HaswellForwardsWithinASocket) {
    check(eight_gpus(0x2f00, 0x2f01, 0x001d), {
                                                  {"0000:03:00.0", "0000:04:00.0", Distance::Switch, true, true},
                                                  {"0000:03:00.0", "0000:07:00.0", Distance::Bridge, true, true},
                                                  {"0000:03:00.0", "0000:83:00.0", Distance::System, false, false},
                                              });
}

// 21: MI50 GPUs with an on-package switch on AMD EPYC Rome.
TEST(Case21Mi50Epyc, OnPackageSwitchAddsBridgeLevels) {
    Topology t(Cpu::amd(0x17));
    std::vector<sim::HostBridgeRef> hosts;
    for (const std::uint8_t root : {std::uint8_t{0xa0}, std::uint8_t{0xe0}}) {
        const auto h = t.host_bridge(0, root);
        hosts.push_back(h);
        t.add(h, Spec::root_complex(0x1022, 0x1480));
        const auto usp = t.add(t.add(h, Spec::root_port(3, 1, 0x1022, 0x1483)), Spec::upstream_port(0x1002, 0x14a0));
        const auto dsp = t.add(usp, Spec::downstream_port(0, 0x1002, 0x14a1));
        t.add(dsp, Spec::endpoint(0, 0, 0x1002, 0x66a1, 0x038000));  // root+3:00.0
        t.add(dsp, Spec::endpoint(0, 1, 0x1002, 0xab20, 0x040300));  // its audio function
    }
    auto rp = Spec::root_port(5, 1, 0x1022, 0x1483);  // e0:05.1 [e4-e9]
    rp.secondary = 0xe4;
    rp.subordinate = 0xe9;
    t.add(t.add(hosts[1], rp), Spec::endpoint(0, 0, 0x14e4, 0x1750, 0x020000));  // e4:00.0
    check(t, {
                 {"0000:e3:00.0", "0000:e4:00.0", Distance::Bridge, true, true},
                 {"0000:e3:00.0", "0000:a3:00.0", Distance::System, true, true},
                 {"0000:e3:00.0", "0000:e3:00.1", Distance::Switch, true, true},
             });
}

}  // namespace
}  // namespace rig::pci
