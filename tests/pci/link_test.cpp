// PCI Express links: speeds and bandwidth after encoding, sysfs spellings, and the links
// and bottleneck of routes on trees written from topologies, read with the whole
// configuration space, with 64 bytes of it (the sysfs link files), and with neither.
#include <gtest/gtest.h>

#include <filesystem>

#include "../support/trees.hpp"
#include "rig/pci/link.hpp"
#include "rig/pci/machine.hpp"
#include "rig/pci/snapshot.hpp"
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
constexpr LinkState gen4x16{Generation::Gen4, 16};
constexpr LinkState gen3x8{Generation::Gen3, 8};

TEST(Link, LaneBandwidthIsTheRateAfterEncoding) {
    EXPECT_EQ(lane_bytes_per_second(Generation::Gen1), 250'000'000u);    // 2.5 GT/s, 8b/10b
    EXPECT_EQ(lane_bytes_per_second(Generation::Gen2), 500'000'000u);    // 5 GT/s, 8b/10b
    EXPECT_EQ(lane_bytes_per_second(Generation::Gen3), 984'615'384u);    // 8 GT/s, 128b/130b
    EXPECT_EQ(lane_bytes_per_second(Generation::Gen4), 1'969'230'769u);  // 16 GT/s
    EXPECT_EQ(lane_bytes_per_second(Generation::Gen5), 3'938'461'538u);  // 32 GT/s
    EXPECT_EQ(lane_bytes_per_second(Generation::Gen6), 7'375'000'000u);  // 64 GT/s, 236 of 256 flit bytes
    EXPECT_EQ(bytes_per_second(gen4x16), 16ull * 1'969'230'769u);
    EXPECT_EQ(gigatransfers(Generation::Gen5), 32.0);
}

TEST(Link, SysfsSpeedsOfEveryKernelSpellingAreGenerations) {
    EXPECT_EQ(parse_sysfs_speed("16.0 GT/s PCIe\n"), Generation::Gen4);
    EXPECT_EQ(parse_sysfs_speed("2.5 GT/s PCIe"), Generation::Gen1);
    EXPECT_EQ(parse_sysfs_speed("5.0 GT/s PCIe"), Generation::Gen2);
    EXPECT_EQ(parse_sysfs_speed("8 GT/s"), Generation::Gen3);  // before Linux 5.0
    EXPECT_EQ(parse_sysfs_speed("64.0 GT/s PCIe"), Generation::Gen6);
    EXPECT_EQ(parse_sysfs_speed("Unknown"), std::nullopt);
    EXPECT_EQ(parse_sysfs_speed("Unknown speed"), std::nullopt);
    EXPECT_EQ(parse_sysfs_speed("3.0 GT/s"), std::nullopt);
    EXPECT_EQ(parse_sysfs_speed("16"), std::nullopt);
    EXPECT_EQ(generation_of(0), std::nullopt);
    EXPECT_EQ(generation_of(7), std::nullopt);
    EXPECT_EQ(generation_of(5), Generation::Gen5);
}

TEST(Link, DescribeSaysWhatItCanWhereItRunsBelow) {
    EXPECT_EQ(describe(Link{gen4x16, gen4x16, LinkSource::Config}), "Gen4 x16");
    EXPECT_EQ(describe(Link{gen3x8, gen4x16, LinkSource::Sysfs}), "Gen3 x8 (can Gen4 x16)");
    EXPECT_EQ(describe(Link{std::nullopt, gen4x16, LinkSource::Config}), "unknown");
}

TEST(Link, DowntrainedIsBelowWhatBothEndsCan) {
    RouteLink l{"0000:03:00.0", "0000:02:08.0", gen3x8, gen4x16, gen4x16};
    EXPECT_TRUE(l.downtrained());
    l.port_capability = gen3x8;  // a Gen3 x8 slot: the card runs at what the slot can
    EXPECT_FALSE(l.downtrained());
    EXPECT_EQ(l.capable(), gen3x8);
    l.port_capability = LinkState{Generation::Gen5, 8};
    EXPECT_EQ(l.capable(), (LinkState{Generation::Gen4, 8}));
    EXPECT_TRUE(l.downtrained());  // Gen3 below the Gen4 both can
    l.status.reset();
    EXPECT_FALSE(l.downtrained());
}

TEST(RouteLinks, BelowOneSwitchTheLinksAreTheTwoEndpointsOnlyAndTheSwitchInsideHasNone) {
    const Tree tree(OneSwitch{}.build());
    const Route r = tree.machine().route(gpu, nic);
    ASSERT_EQ(r.links.size(), 2u);
    EXPECT_EQ(r.links[0].function, gpu);
    EXPECT_EQ(r.links[0].port, "0000:02:08.0");
    EXPECT_EQ(r.links[1].function, nic);
    EXPECT_EQ(r.links[1].port, "0000:02:10.0");
    EXPECT_EQ(r.links[0].status, gen4x16);
    EXPECT_EQ(r.bottleneck, gen4x16);
    EXPECT_EQ(r.bottleneck_bytes_per_second(), 16ull * 1'969'230'769u);
    EXPECT_TRUE(r.downtrained().empty());
}

TEST(RouteLinks, DowntrainedGpuLinkIsTheBottleneckAndIsNamed) {
    OneSwitch s;
    s.gpu_trained = gen3x8;
    const Tree tree(s.build());
    const Route r = tree.machine().route(nic, gpu);
    ASSERT_EQ(r.links.size(), 2u);
    EXPECT_EQ(r.links[0].function, nic);
    EXPECT_EQ(r.links[1].function, gpu);
    EXPECT_EQ(r.bottleneck, gen3x8);
    EXPECT_EQ(r.bottleneck_bytes_per_second(), 8ull * 984'615'384u);
    const auto down = r.downtrained();
    ASSERT_EQ(down.size(), 1u);
    EXPECT_EQ(down[0].function, gpu);
    EXPECT_EQ(down[0].status, gen3x8);
    EXPECT_EQ(down[0].capability, gen4x16);
    const std::string text = r.explain();
    EXPECT_NE(text.find("warning: 0000:03:00.0 is downtrained: LnkSta Gen3 x8, LnkCap Gen4 x16"), std::string::npos)
        << text;
    EXPECT_NE(text.find("bottleneck: Gen3 x8, 7876923072 bytes/s each way"), std::string::npos) << text;
}

TEST(RouteLinks, ACardFasterThanItsSlotTrainsAtTheSlotAndIsNotDowntrained) {
    OneSwitch s;
    s.gpu_link = {Generation::Gen5, 16};
    const Tree tree(s.build());
    const Route r = tree.machine().route(gpu, nic);
    EXPECT_EQ(r.links[0].status, gen4x16);
    EXPECT_EQ(r.links[0].capability, (LinkState{Generation::Gen5, 16}));
    EXPECT_TRUE(r.downtrained().empty());
    const auto files = describe(tree.machine());
    ASSERT_TRUE(files);
    for (const auto& f : *files) {
        if (f.id.bus == gpu) {
            EXPECT_EQ(pci::describe(f.link), "Gen4 x16 (can Gen5 x16)");
        }
    }
}

TEST(RouteLinks, UnprivilegedReaderGetsTheSameLinksFromSysfs) {
    OneSwitch s;
    s.gpu_trained = gen3x8;
    const Tree whole(s.build()), unprivileged(s.build(), 64);
    const Route a = whole.machine().route(gpu, nic), b = unprivileged.machine().route(gpu, nic);
    ASSERT_EQ(b.links.size(), a.links.size());
    for (std::size_t i = 0; i < a.links.size(); ++i) {
        EXPECT_EQ(b.links[i].function, a.links[i].function);
        EXPECT_EQ(b.links[i].port, a.links[i].port);
        EXPECT_EQ(b.links[i].status, a.links[i].status);
        EXPECT_EQ(b.links[i].capability, a.links[i].capability);
    }
    EXPECT_EQ(b.bottleneck, gen3x8);
    const auto files = describe(unprivileged.machine());
    ASSERT_TRUE(files);
    EXPECT_EQ((*files)[0].link.source, LinkSource::Unread);  // the root complex: no PCI Express capability
    for (const auto& f : *files) {
        if (f.id.bus == gpu) {
            EXPECT_EQ(f.link.source, LinkSource::Sysfs);
        }
    }
}

TEST(RouteLinks, LinksUnreadableForAnUnprivilegedReaderLeaveTheBottleneckUnknown) {
    const Tree tree(OneSwitch{}.build(), 64);
    // An old kernel, or a snapshot without them: no link files.
    for (const auto& entry : fs::recursive_directory_iterator(tree.root() / "sys/devices"))
        if (entry.path().filename().string().find("_link_") != std::string::npos) fs::remove(entry.path());
    const Route r = tree.machine().route(gpu, nic);
    ASSERT_EQ(r.links.size(), 2u);  // the way's shape still says where the links are
    EXPECT_EQ(r.links[0].status, std::nullopt);
    EXPECT_EQ(r.bottleneck, std::nullopt);
    EXPECT_EQ(r.bottleneck_bytes_per_second(), std::nullopt);
    EXPECT_NE(r.explain().find("bottleneck: unknown"), std::string::npos);
}

TEST(RouteLinks, TwoFunctionsOfOneDeviceCrossTheirLinkUpAndDown) {
    const Tree tree(OneSwitch{}.build());
    const Route r = tree.machine().route(gpu, audio);
    EXPECT_EQ(r.common, "0000:02:08.0");
    ASSERT_EQ(r.links.size(), 2u);
    EXPECT_EQ(r.links[0].function, gpu);
    EXPECT_EQ(r.links[1].function, audio);
    EXPECT_EQ(r.links[1].port, "0000:02:08.0");
}

TEST(RouteLinks, WithoutACommonNodeTheLinksGoUpToEachRootPort) {
    Topology t(Cpu::amd());
    const auto h = t.host_bridge(0, 0);
    t.add(h, Spec::root_complex(0x1022, 0x1480));
    auto slow_port = Spec::root_port(1, 0, 0x1022, 0x1483);
    slow_port.link = {Generation::Gen3, 16};
    const auto rp1 = t.add(h, slow_port);                                   // [01]
    const auto usp = t.add(rp1, Spec::upstream_port(0x10b5, 0x8747));       // 01:00.0 [02]
    const auto dsp = t.add(usp, Spec::downstream_port(0, 0x10b5, 0x8747));  // 02:00.0 [03]
    t.add(dsp, Spec::endpoint(0, 0, 0x10de, 0x20b0, 0x030200));             // 03:00.0
    const auto rp2 = t.add(h, Spec::root_port(2, 0, 0x1022, 0x1483));       // [04]
    t.add(rp2, Spec::endpoint(0, 0, 0x15b3, 0x101b, 0x020700));             // 04:00.0
    t.add(h, Spec::endpoint(3, 0, 0x1022, 0x1498, 0x088000));               // 00:03.0, on the root bus
    const Tree tree(t);
    const Route r = tree.machine().route("0000:03:00.0", "0000:04:00.0");
    EXPECT_FALSE(r.common);
    ASSERT_EQ(r.links.size(), 3u);
    EXPECT_EQ(r.links[0].function, "0000:03:00.0");
    EXPECT_EQ(r.links[1].function, "0000:01:00.0");  // the switch's upstream port below the Gen3 root port
    EXPECT_EQ(r.links[1].port, "0000:00:01.0");
    EXPECT_EQ(r.links[1].status, (LinkState{Generation::Gen3, 16}));
    EXPECT_EQ(r.links[2].function, "0000:04:00.0");
    EXPECT_EQ(r.bottleneck, (LinkState{Generation::Gen3, 16}));
    // An integrated endpoint on the root bus has no link.
    const Route integrated = tree.machine().route("0000:00:03.0", "0000:04:00.0");
    ASSERT_EQ(integrated.links.size(), 1u);
    EXPECT_EQ(integrated.links[0].function, "0000:04:00.0");
}

TEST(RouteLinks, AVfUsesItsPfsLink) {
    Topology t(Cpu::intel());
    const auto h = t.host_bridge(0, 0);
    t.add(h, Spec::root_complex(0x8086, 0x2020));
    const auto rp = t.add(h, Spec::root_port(1, 0, 0x8086, 0x2030));
    auto pf = Spec::endpoint(0, 0, 0x15b3, 0x1017, 0x020000);
    pf.trained = LinkState{Generation::Gen4, 8};
    const auto p = t.add(rp, pf);                                 // 01:00.0
    t.add_vf(p, Spec::endpoint(0, 2, 0x15b3, 0x1018, 0x020000));  // 01:00.2
    const auto rp2 = t.add(h, Spec::root_port(2, 0, 0x8086, 0x2030));
    t.add(rp2, Spec::endpoint(0, 0, 0x10de, 0x20b0, 0x030200));  // 02:00.0
    for (const std::optional<unsigned> bytes : {std::optional<unsigned>{}, std::optional<unsigned>{64}}) {
        const Tree tree(t, bytes);
        const Route r = tree.machine().route("0000:02:00.0", "0000:01:00.2");
        ASSERT_EQ(r.links.size(), 2u);
        EXPECT_EQ(r.links[1].function, "0000:01:00.0");
        EXPECT_EQ(r.links[1].status, (LinkState{Generation::Gen4, 8}));
        ASSERT_EQ(r.downtrained().size(), 1u);
    }
}

TEST(RouteLinks, SnapshotCopiesTheLinkFiles) {
    OneSwitch s;
    s.gpu_trained = gen3x8;
    const Tree tree(s.build(), 64);
    test::TempDir out;
    ASSERT_TRUE(snapshot(tree.machine(), out.path() / "snap"));
    const Route r = Machine::at(out.path() / "snap").route(gpu, nic);
    EXPECT_EQ(r.bottleneck, gen3x8);
    ASSERT_EQ(r.downtrained().size(), 1u);
}

}  // namespace
}  // namespace rig::pci
