// The real machines of tests/pci/cases/, each rebuilt as a topology (cases.hpp), written as a sysfs
// tree and read back, with the answers each file derives: distance, forwards for a
// process that reads every ACS Control (root) and for one that reads 64 bytes of config
// (unprivileged), and the NIC each GPU must be paired with (rig/pci/nics.hpp), read both
// ways. Bus numbers the dumps leave out are filled in as the files' sysfs
// sketches suggest.
#include <gtest/gtest.h>

#include "../support/trees.hpp"
#include "cases.hpp"
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
using namespace test::cases;

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

// 01: DgxA100 (cases.cpp draws the machine).
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
    EXPECT_EQ(r.verdict, Verdict::Direct);
    EXPECT_EQ(acs.machine().route("0000:07:00.0", "0000:0c:00.0").verdict, Verdict::ThroughHostBridge);
    EXPECT_EQ(plain.machine().route("0000:61:00.0", "0000:61:00.1").common, "0000:60:03.1");
}

// 03: H100NineNics (cases.cpp draws the machine).
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
    check_pairs(h100_nine_nics(Cpu::intel(0x8f)), {{"0000:18:00.0", "0000:19:00.0"},
                                                   {"0000:3a:00.0", "0000:3b:00.0"},
                                                   {"0000:4b:00.0", "0000:4c:00.0"},
                                                   {"0000:5c:00.0", "0000:5d:00.0"},
                                                   {"0000:9a:00.0", "0000:9b:00.0"},
                                                   {"0000:bb:00.0", "0000:bc:00.0"},
                                                   {"0000:cc:00.0", "0000:cd:00.0"},
                                                   {"0000:dd:00.0", "0000:de:00.0"}});
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

// 05: V100Sriov (cases.cpp draws the machine).
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
    check_pairs(v100_sriov(0x2030, 0x001d, std::nullopt),
                {{"0000:5c:00.0", "0000:5b:00.0"}, {"0000:60:00.0", "0000:5b:03.4"}});
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
    const Topology t = rtx5880_amd();
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
    const Topology t = wrx80();
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

// 11: H200Q35 (cases.cpp draws the machine).
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

// 13: AzureHyperV (cases.cpp draws the machine).
TEST(Case13AzureHyperV, Ndv4AmdGuestForwardsEveryPair) {
    const Spec gpu = Spec::endpoint(0, 0, 0x10de, 0x20b0, 0x030200),
               ib = Spec::endpoint(0, 0, 0x15b3, 0x101c, 0x020700);
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
    const Spec gpu = Spec::endpoint(0, 0, 0x10de, 0x20b0, 0x030200),
               ib = Spec::endpoint(0, 0, 0x15b3, 0x101c, 0x020700);
    check_pairs(hyperv(Cpu::amd(23), {{0x0003, gpu}, {0x0103, ib}, {0x000b, gpu}}),
                {{"0003:00:00.0", "0103:00:00.0"}, {"000b:00:00.0", "0103:00:00.0"}});
}

TEST(Case13AzureHyperV, Ndv2IntelGuestRefusesEveryPair) {
    const Spec gpu = Spec::endpoint(0, 0, 0x10de, 0x1db5, 0x030200),
               ib = Spec::endpoint(0, 0, 0x15b3, 0x101c, 0x020700);
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

// 15: K80Haswell (cases.cpp draws the machine).
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
    EXPECT_EQ(plain.machine().route("0000:05:00.0", "0000:06:00.0").verdict, Verdict::Direct);
    EXPECT_EQ(acs.machine().route("0000:05:00.0", "0000:06:00.0").verdict, Verdict::ThroughHostBridge);
}

// 17: HygonDcu (cases.cpp draws the machine).
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
    EXPECT_EQ(tree.machine().route("0000:37:00.0", "0000:3a:00.0").verdict, Verdict::Direct);
}

// GPU0 03:00.0, GPU1 04:00.0 (first switch), GPU2 07:00.0 (second switch), GPU4 83:00.0.
TEST(Case19EightGpus, BroadwellForwardsOnlyBelowASwitchWithoutRedirect) {
    check(eight_gpus(0x6f00, 0x6f00, std::nullopt),
          {
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
    const Topology t = mi50_epyc();
    check(t, {
                 {"0000:e3:00.0", "0000:e4:00.0", Distance::Bridge, true, true},
                 {"0000:e3:00.0", "0000:a3:00.0", Distance::System, true, true},
                 {"0000:e3:00.0", "0000:e3:00.1", Distance::Switch, true, true},
             });
}

}  // namespace
}  // namespace rig::pci
