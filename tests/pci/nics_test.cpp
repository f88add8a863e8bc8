// Which NIC for which GPU (rig/pci/nics.hpp): the ranking's four steps with their reasons,
// ties, the pairing that spreads GPUs over tied NICs, overrides, and the shapes that misled
// other stacks: links spelled differently (docs/bugs.md B02), virtual bridges inside a switch
// (B04), NUMA -1, GPUs and NICs in different PCI domains, a downtrained GPU link, links and
// ACS unreadable for an unprivileged reader.
#include <gtest/gtest.h>

#include <filesystem>

#include "../support/trees.hpp"
#include "rig/pci/nics.hpp"
#include "rig/pci/routes.hpp"

namespace rig::pci {
namespace {

namespace fs = std::filesystem;
using sim::Cpu;
using sim::FunctionRef;
using sim::HostBridgeRef;
using sim::Spec;
using sim::Topology;
using test::Tree;

Spec nic_at(std::uint8_t device, int numa, LinkState link = {Generation::Gen4, 16}) {
    auto s = Spec::endpoint(device, 0, 0x15b3, 0x101b, 0x020700);
    s.numa_node = numa;
    s.link = link;
    return s;
}

Spec gpu_at(std::uint8_t device, int numa) {
    auto s = Spec::endpoint(device, 0, 0x10de, 0x2330, 0x030200);
    s.numa_node = numa;
    return s;
}

HostBridgeRef host(Topology& t, std::uint8_t bus, std::uint16_t device = 0x09a2) {
    const auto h = t.host_bridge(0, bus);
    t.add(h, Spec::root_complex(0x8086, device));
    return h;
}

// GPU 03:00.0 (NUMA 0) and a NIC at each distance:
//   pci0000:00  00:01.0 > 01:00.0 switch > 02:00.0 GPU 03:00.0, 02:01.0 NIC 04:00.0,
//               02:02.0 NIC 05:00.0 (x8); 00:02.0 > NIC 06:00.0
//   pci0000:40  NIC 41:00.0 NUMA 0     pci0000:80  NIC 81:00.0 NUMA 1
//   pci0000:c0  NIC c1:00.0 NUMA -1    pci0000:e0 (not allow-listed)  NIC e1:00.0 NUMA 0
Topology every_distance() {
    Topology t(Cpu::intel(0x8f));
    const auto h0 = host(t, 0x00);
    const auto usp = t.add(t.add(h0, Spec::root_port(1, 0, 0x8086, 0x352a)), Spec::upstream_port(0x1000, 0xc030));
    t.add(t.add(usp, Spec::downstream_port(0, 0x1000, 0xc030)), gpu_at(0, 0));
    t.add(t.add(usp, Spec::downstream_port(1, 0x1000, 0xc030)), nic_at(0, 0));
    t.add(t.add(usp, Spec::downstream_port(2, 0x1000, 0xc030)), nic_at(0, 0, {Generation::Gen4, 8}));
    t.add(t.add(h0, Spec::root_port(2, 0, 0x8086, 0x352a)), nic_at(0, 0));
    const std::pair<std::uint8_t, int> others[] = {{0x40, 0}, {0x80, 1}, {0xc0, -1}};
    for (const auto& [bus, numa] : others)
        t.add(t.add(host(t, bus), Spec::root_port(1, 0, 0x8086, 0x352a)), nic_at(0, numa));
    t.add(t.add(host(t, 0xe0, 0x6f00), Spec::root_port(1, 0, 0x8086, 0x6f02)), nic_at(0, 0));
    return t;
}

std::vector<std::string> order(const std::vector<RankedNic>& ranked) {
    std::vector<std::string> out;
    for (const auto& n : ranked) out.push_back(n.nic);
    return out;
}

Routes read(const Tree& tree) {
    auto routes = Routes::read(tree.machine());
    if (!routes) throw std::runtime_error(routes.error());
    return *routes;
}

std::vector<RankedNic> ranked_for(const Routes& routes, const char* bus) {
    return rank_nics(routes, *routes.find(bus));
}

TEST(RankNics, ForwardsThenSwitchBridgeSameNumaUnknownNumaOtherNumaThenBottleneck) {
    const Tree tree(every_distance());
    const Routes routes = read(tree);
    const auto ranked = ranked_for(routes, "0000:03:00.0");
    EXPECT_EQ(order(ranked), (std::vector<std::string>{"0000:04:00.0", "0000:05:00.0", "0000:06:00.0", "0000:41:00.0",
                                                       "0000:c1:00.0", "0000:81:00.0", "0000:e1:00.0"}));
    EXPECT_EQ(ranked[0].distance, Distance::Switch);
    EXPECT_EQ(ranked[0].common, "0000:01:00.0");
    EXPECT_EQ(ranked[0].why, "switch 0000:01:00.0, Gen4 x16, NUMA 0");
    EXPECT_EQ(ranked[1].bottleneck, (LinkState{Generation::Gen4, 8}));  // the same switch, a narrower link
    EXPECT_EQ(ranked[2].why, "bridge pci0000:00, Gen4 x16, NUMA 0");
    EXPECT_EQ(ranked[3].numa, Numa::Same);
    EXPECT_EQ(ranked[4].numa, Numa::Unknown);
    EXPECT_EQ(ranked[4].why, "system, Gen4 x16, NUMA unknown");
    EXPECT_EQ(ranked[5].numa, Numa::Other);
    EXPECT_EQ(ranked[5].why, "system, Gen4 x16, NUMA 1 (the GPU's 0)");
    EXPECT_FALSE(ranked[6].forwards);  // pci0000:e0's first device is not in the allow-list
    EXPECT_EQ(ranked[6].why.substr(0, 19), "not peer-to-peer, s");
    for (const auto& n : ranked) EXPECT_FALSE(n.tie) << n.nic;
}

// A switch of `gpus` GPUs then `nics` NICs (downstream ports 0, 1, ... in that order),
// below root port `port` of host bridge h.
void switch_of(Topology& t, HostBridgeRef h, std::uint8_t port, int gpus, int nics) {
    const auto usp = t.add(t.add(h, Spec::root_port(port, 0, 0x8086, 0x352a)), Spec::upstream_port(0x1000, 0xc030));
    std::uint8_t d = 0;
    for (int i = 0; i < gpus; ++i) t.add(t.add(usp, Spec::downstream_port(d++, 0x1000, 0xc030)), gpu_at(0, 0));
    for (int i = 0; i < nics; ++i) t.add(t.add(usp, Spec::downstream_port(d++, 0x1000, 0xc030)), nic_at(0, 0));
}

TEST(RankNics, NicsEqualAtTheFirstThreeStepsAreATieInBusOrder) {
    Topology t(Cpu::intel(0x8f));
    switch_of(t, host(t, 0), 1, 1, 2);  // GPU 03:00.0, NICs 04:00.0 and 05:00.0
    const Tree tree(t);
    const auto ranked = ranked_for(read(tree), "0000:03:00.0");
    EXPECT_EQ(order(ranked), (std::vector<std::string>{"0000:04:00.0", "0000:05:00.0"}));
    EXPECT_TRUE(ranked[0].tie);
    EXPECT_TRUE(ranked[1].tie);
}

TEST(PairNics, GpusOfASwitchAreSpreadOverItsNicsInBusOrder) {
    Topology t(Cpu::intel(0x8f));
    switch_of(t, host(t, 0), 1, 2, 2);     // GPUs 03, 04; NICs 05, 06
    switch_of(t, host(t, 0x40), 1, 3, 2);  // GPUs 43, 44, 45; NICs 46, 47
    const Tree tree(t);
    const auto pairs = pair_nics(read(tree));
    ASSERT_TRUE(pairs) << pairs.error();
    std::vector<std::pair<std::string, std::string>> got;
    for (const auto& p : *pairs) got.emplace_back(p.gpu, p.nic.value_or("-"));
    EXPECT_EQ(got, (std::vector<std::pair<std::string, std::string>>{{"0000:03:00.0", "0000:05:00.0"},
                                                                     {"0000:04:00.0", "0000:06:00.0"},
                                                                     {"0000:43:00.0", "0000:46:00.0"},
                                                                     {"0000:44:00.0", "0000:47:00.0"},
                                                                     {"0000:45:00.0", "0000:46:00.0"}}));
    EXPECT_EQ((*pairs)[1].why, "spread: the 2nd of 2 GPUs that rank the same 2 NICs first takes the 2nd");
    EXPECT_EQ((*pairs)[4].why, "spread: the 3rd of 3 GPUs that rank the same 2 NICs first takes the 1st");
}

// B04: one physical switch that shows a second level of virtual bridges: NIC 06:00.0 sits
// below 02:01.0 > 05:00.0 (virtual upstream) > 06:00.0's port, NIC 04:00.0 below 02:02.0.
TEST(PairNics, VirtualBridgesInsideASwitchDoNotChangeWhoSharesIt) {
    Topology t(Cpu::intel(0x8f));
    const auto usp =
        t.add(t.add(host(t, 0), Spec::root_port(1, 0, 0x8086, 0x352a)), Spec::upstream_port(0x1000, 0xc010));
    t.add(t.add(usp, Spec::downstream_port(0, 0x1000, 0xc010)), gpu_at(0, 0));  // 03:00.0
    t.add(t.add(usp, Spec::downstream_port(2, 0x1000, 0xc010)), gpu_at(0, 0));  // 04:00.0
    const auto inner = t.add(t.add(usp, Spec::downstream_port(4, 0x1000, 0xc010)), Spec::upstream_port(0x1000, 0xc010));
    t.add(t.add(inner, Spec::downstream_port(0, 0x1000, 0xc010)), nic_at(0, 0));  // 07:00.0
    t.add(t.add(usp, Spec::downstream_port(6, 0x1000, 0xc010)), nic_at(0, 0));    // 08:00.0
    const Tree tree(t);
    const Routes routes = read(tree);
    const auto ranked = ranked_for(routes, "0000:03:00.0");
    ASSERT_EQ(ranked.size(), 2u);
    EXPECT_EQ(ranked[0].nic, "0000:07:00.0");
    EXPECT_TRUE(ranked[0].tie && ranked[1].tie);  // both "switch", however deep
    const auto pairs = pair_nics(routes);
    ASSERT_TRUE(pairs);
    EXPECT_EQ((*pairs)[0].nic, "0000:07:00.0");
    EXPECT_EQ((*pairs)[1].nic, "0000:08:00.0");
}

// B02: the same tree with its sys/bus/pci/devices links spelled otherwise (absolute, with
// "." and ".." on the way) ranks and pairs alike.
TEST(PairNics, LinksSpelledDifferentlyGiveTheSamePairing) {
    const Topology t = every_distance();
    const Tree plain(t), respelled(t);
    for (const auto& entry : fs::directory_iterator(respelled.root() / "sys/bus/pci/devices")) {
        const fs::path target = fs::read_symlink(entry.path());  // ../../../devices/pci0000:00/...
        const fs::path inside = fs::path("/sys/devices/./") / target.lexically_relative("../../../devices");
        const std::string bus = entry.path().filename().string();
        fs::remove(entry.path());
        fs::create_symlink(
            bus[6] < '8' ? inside : fs::path("../../../devices/../devices") / inside.lexically_relative("/sys/devices"),
            entry.path());
    }
    const auto a = pair_nics(read(plain)), b = pair_nics(read(respelled));
    ASSERT_TRUE(a && b);
    ASSERT_EQ(a->size(), b->size());
    for (std::size_t i = 0; i < a->size(); ++i) {
        EXPECT_EQ((*b)[i].nic, (*a)[i].nic);
        EXPECT_EQ(order((*b)[i].ranked), order((*a)[i].ranked));
        for (std::size_t j = 0; j < (*a)[i].ranked.size(); ++j) EXPECT_EQ((*b)[i].ranked[j].why, (*a)[i].ranked[j].why);
    }
}

TEST(RankNics, NumaMinusOneEverywhereLeavesTheBottleneckToDecide) {
    Topology t(Cpu::amd(0x19));
    t.add(t.add(host(t, 0x00), Spec::root_port(1, 0, 0x1022, 0x1483)), gpu_at(0, -1));  // 01:00.0
    t.add(t.add(host(t, 0x40), Spec::root_port(1, 0, 0x1022, 0x1483)),
          nic_at(0, -1, {Generation::Gen4, 8}));                                        // 41:00.0
    t.add(t.add(host(t, 0x80), Spec::root_port(1, 0, 0x1022, 0x1483)), nic_at(0, -1));  // 81:00.0
    const Tree tree(t);
    const auto ranked = ranked_for(read(tree), "0000:01:00.0");
    EXPECT_EQ(order(ranked), (std::vector<std::string>{"0000:81:00.0", "0000:41:00.0"}));
    EXPECT_EQ(ranked[0].numa, Numa::Unknown);
    EXPECT_EQ(ranked[0].numa_node, -1);
    EXPECT_FALSE(ranked[0].tie);
}

// GB200 style: each GPU in a PCI domain of its own, the NICs in others; NUMA tells them
// apart, and bus order compares domains as numbers.
TEST(PairNics, GpusAndNicsInDifferentPciDomainsPairByNuma) {
    Topology t(Cpu{"", 0, 0, "NVIDIA Grace (simulated)"});
    const std::tuple<std::uint32_t, bool, int> devices[] = {
        {0x0000, false, 0}, {0x0002, false, 1}, {0x0008, true, 0}, {0x0009, true, 1}};
    for (const auto& [domain, is_gpu, numa] : devices) {
        const auto h = t.host_bridge(domain, 0);
        t.add(h, Spec::root_complex(0x10de, 0x22b1));
        t.add(t.add(h, Spec::root_port(1, 0, 0x10de, 0x22b2)), is_gpu ? gpu_at(0, numa) : nic_at(0, numa));
    }
    const Tree tree(t);
    const auto pairs = pair_nics(read(tree));
    ASSERT_TRUE(pairs) << pairs.error();
    ASSERT_EQ(pairs->size(), 2u);
    EXPECT_EQ((*pairs)[0].gpu, "0008:01:00.0");
    EXPECT_EQ((*pairs)[0].nic, "0000:01:00.0");
    EXPECT_EQ((*pairs)[1].gpu, "0009:01:00.0");
    EXPECT_EQ((*pairs)[1].nic, "0002:01:00.0");
    EXPECT_EQ((*pairs)[1].ranked[0].numa, Numa::Same);
    EXPECT_EQ((*pairs)[1].ranked[1].numa, Numa::Other);
}

TEST(RankNics, ADowntrainedGpuLinkIsNamedOnEveryRouteAndNarrowsTheBottleneck) {
    Topology t(Cpu::intel(0x8f));
    const auto h = host(t, 0);
    const auto usp = t.add(t.add(h, Spec::root_port(1, 0, 0x8086, 0x352a)), Spec::upstream_port(0x1000, 0xc030));
    auto gpu = gpu_at(0, 0);
    gpu.trained = LinkState{Generation::Gen3, 8};
    t.add(t.add(usp, Spec::downstream_port(0, 0x1000, 0xc030)), gpu);           // 03:00.0
    t.add(t.add(usp, Spec::downstream_port(1, 0x1000, 0xc030)), nic_at(0, 0));  // 04:00.0
    const Tree tree(t);
    const auto ranked = ranked_for(read(tree), "0000:03:00.0");
    ASSERT_EQ(ranked.size(), 1u);
    EXPECT_EQ(ranked[0].bottleneck, (LinkState{Generation::Gen3, 8}));
    ASSERT_EQ(ranked[0].downtrained.size(), 1u);
    EXPECT_EQ(ranked[0].downtrained[0].function, "0000:03:00.0");
    EXPECT_EQ(ranked[0].why, "switch 0000:01:00.0, Gen3 x8, NUMA 0");
}

TEST(RankNics, AnUnprivilegedReaderRanksAlikeFromTheSysfsLinkFiles) {
    const Topology t = every_distance();
    const Tree whole(t), unprivileged(t, 64);
    const auto a = ranked_for(read(whole), "0000:03:00.0"), b = ranked_for(read(unprivileged), "0000:03:00.0");
    EXPECT_EQ(order(b), order(a));
    for (std::size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(b[i].bottleneck, a[i].bottleneck) << a[i].nic;
        EXPECT_EQ(b[i].distance, a[i].distance) << a[i].nic;
    }
}

TEST(RankNics, LinksUnreadableRankAfterKnownOnesAndSayIt) {
    Topology t(Cpu::intel(0x8f));
    switch_of(t, host(t, 0), 1, 1, 2);  // GPU 03:00.0, NICs 04:00.0 and 05:00.0
    const Tree tree(t, 64);
    // Neither end of NIC 04:00.0's link has its files (the kernel of the snapshot had none).
    const fs::path port = tree.root() / "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0";
    for (const fs::path& dir : {port, port / "0000:04:00.0"})
        for (const char* file : {"current_link_speed", "current_link_width", "max_link_speed", "max_link_width"})
            fs::remove(dir / file);
    const auto ranked = ranked_for(read(tree), "0000:03:00.0");
    EXPECT_EQ(order(ranked), (std::vector<std::string>{"0000:05:00.0", "0000:04:00.0"}));
    EXPECT_EQ(ranked[1].bottleneck_bytes_per_second, std::nullopt);
    EXPECT_EQ(ranked[1].why, "switch 0000:01:00.0, links unknown, NUMA 0");
    EXPECT_FALSE(ranked[0].tie);
}

TEST(PairNics, OverridesPinAndErrorsNameTheEntry) {
    Topology t(Cpu::intel(0x8f));
    switch_of(t, host(t, 0), 1, 2, 2);  // GPUs 03, 04; NICs 05, 06
    const Tree tree(t);
    const Routes routes = read(tree);
    const auto parsed = parse_overrides("# pins\n03:00.0=0000:06:00.0, 0000:04:00.0=05:00.0  # the other way\n");
    ASSERT_TRUE(parsed) << parsed.error();
    EXPECT_EQ(*parsed, (std::vector<Override>{{"0000:03:00.0", "0000:06:00.0"}, {"0000:04:00.0", "0000:05:00.0"}}));
    const auto pairs = pair_nics(routes, *parsed);
    ASSERT_TRUE(pairs);
    EXPECT_EQ((*pairs)[0].nic, "0000:06:00.0");
    EXPECT_TRUE((*pairs)[0].overridden);
    EXPECT_EQ((*pairs)[0].why, "override");
    EXPECT_EQ((*pairs)[1].nic, "0000:05:00.0");

    const auto bad = parse_overrides("03:00.0=nic0");
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().find("\"03:00.0=nic0\""), std::string::npos) << bad.error();
    const Override missing[] = {{"0000:03:00.0", "0000:99:00.0"}};
    auto r = pair_nics(routes, missing);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), "override 0000:03:00.0=0000:99:00.0: the machine has no function 0000:99:00.0");
    const Override not_nic[] = {{"0000:03:00.0", "0000:04:00.0"}};
    r = pair_nics(routes, not_nic);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), "override 0000:03:00.0=0000:04:00.0: 0000:04:00.0 is no NIC: class 0x030200 (3D controller)");
    const Override twice[] = {{"0000:03:00.0", "0000:05:00.0"}, {"0000:03:00.0", "0000:06:00.0"}};
    r = pair_nics(routes, twice);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().find("0000:03:00.0 is pinned twice"), std::string::npos) << r.error();
    const Override no_gpu[] = {{"0000:77:00.0", "0000:05:00.0"}};
    EXPECT_FALSE(pair_nics(routes, no_gpu));
}

TEST(RankNics, InfinibandClassCountsAsANic) {
    Topology t(Cpu::intel(0x8f));
    const auto h = host(t, 0);
    t.add(t.add(h, Spec::root_port(1, 0, 0x8086, 0x352a)), gpu_at(0, 0));
    auto ib = Spec::endpoint(0, 0, 0x15b3, 0x673c, 0x0c0600);  // ConnectX-3 era InfiniBand
    t.add(t.add(h, Spec::root_port(2, 0, 0x8086, 0x352a)), ib);
    const Tree tree(t);
    const auto ranked = ranked_for(read(tree), "0000:01:00.0");
    ASSERT_EQ(ranked.size(), 1u);
    EXPECT_EQ(ranked[0].nic, "0000:02:00.0");
}

TEST(RankNics, AnIndexPastTheFunctionsThrows) {
    const Tree tree(every_distance());
    const Routes routes = read(tree);
    EXPECT_THROW((void)rank_nics(routes, routes.functions().size()), std::invalid_argument);
}

}  // namespace
}  // namespace rig::pci
