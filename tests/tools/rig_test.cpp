// The rig command line, run as a user runs it: rig ls, rig topo (--json, --why) and
// rig snapshot, on this machine and on sysfs trees written from topologies.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <tuple>
#include <vector>

#include "../support/run.hpp"
#include "../support/trees.hpp"
#include "rig/pci/machine.hpp"

namespace rig {
namespace {

namespace fs = std::filesystem;
using sim::Cpu;
using sim::Spec;
using sim::Topology;
using test::OneSwitch;
using test::TempDir;
using test::Tree;

// Runs the rig binary with `args`.
test::Run rig(const std::vector<std::string>& args) { return test::run(RIG_BINARY, args); }

TEST(RigTool, SnapshotThenTopoRootReproducesTopoOnThisMachine) {
    if (!fs::exists("/sys/bus/pci/devices")) GTEST_SKIP() << "no /sys/bus/pci on this machine";
    TempDir dir;
    const fs::path out = dir.path() / "snapshot";
    for (const std::vector<std::string>& command :
         {std::vector<std::string>{"topo"}, {"topo", "--json"}, {"ls"}, {"ls", "--json"}}) {
        const test::Run here = rig(command);
        ASSERT_EQ(here.status, 0) << here.out;
        fs::remove_all(out);  // rig snapshot refuses a non-empty directory
        const test::Run snap = rig({"snapshot", out.string()});
        ASSERT_EQ(snap.status, 0) << snap.out;
        auto replay_args = command;
        replay_args.insert(replay_args.begin() + 1, {"--root", out.string()});
        const test::Run replay = rig(replay_args);
        ASSERT_EQ(replay.status, 0) << replay.out;
        EXPECT_EQ(replay.out, here.out) << command[0];
    }
    // And through the library: the same functions and answers.
    const pci::Machine local = pci::Machine::local(), copy = pci::Machine::at(out);
    const auto a = local.functions(), b = copy.functions();
    ASSERT_TRUE(a && b);
    EXPECT_EQ(*a, *b);
    for (const auto& p : *a)
        for (const auto& c : *a) {
            EXPECT_EQ(local.forwards(p.bus, c.bus), copy.forwards(p.bus, c.bus));
            EXPECT_EQ(local.distance(p.bus, c.bus), copy.distance(p.bus, c.bus));
        }
}

// A switch with ACS redirect, an SR-IOV NIC, a VMD domain and a second host bridge.
Topology rich_topology() {
    Topology t(Cpu::intel());
    const auto h = t.host_bridge(0, 0);
    t.add(h, Spec::root_complex(0x8086, 0x2020));
    const auto rp = t.add(h, Spec::root_port(1, 0, 0x8086, 0x2030, 0x001d));
    const auto usp = t.add(rp, Spec::upstream_port(0x10b5, 0x8747));
    const auto d1 = t.add(usp, Spec::downstream_port(8, 0x10b5, 0x8747, 0x001d));
    const auto d2 = t.add(usp, Spec::downstream_port(0x10, 0x10b5, 0x8747, 0x0000));
    auto gpu = Spec::endpoint(0, 0, 0x10de, 0x2335, 0x030200);
    gpu.driver = "nvidia";
    gpu.numa_node = 0;
    gpu.iommu_group = 17;
    t.add(d1, gpu);
    auto pf = Spec::endpoint(0, 0, 0x14e4, 0x1750, 0x020000);
    pf.driver = "bnxt_en";
    const auto nic = t.add(d2, pf);
    t.add_vf(nic, Spec::endpoint(0, 2, 0x14e4, 0x1806, 0x020000));
    const auto vmd = t.add(h, Spec::endpoint(0x0e, 0, 0x8086, 0x28c0, 0x010400));
    const auto v = t.vmd_host_bridge(vmd, 0x10000, 0xe0);
    t.add(t.add(v, Spec::root_port(6, 0, 0x8086, 0x347a)), Spec::endpoint(0, 0, 0x144d, 0xa80a, 0x010802));
    const auto far = t.host_bridge(0, 0x80);
    t.add(far, Spec::root_complex(0x8086, 0x2020));
    t.add(t.add(far, Spec::root_port(2, 0, 0x8086, 0x2031)), Spec::endpoint(0, 0, 0x1002, 0x740f, 0x038000));
    return t;
}

TEST(RigTool, SnapshotOfATreeReproducesItsTopo) {
    const Tree tree(rich_topology());
    TempDir dir;
    const test::Run snap = rig({"snapshot", "--root", tree.root().string(), dir.path().string()});
    ASSERT_EQ(snap.status, 0) << snap.out;
    for (const char* command : {"topo", "ls"})
        for (const bool json : {false, true}) {
            std::vector<std::string> args{command, "--root", tree.root().string()};
            if (json) args.push_back("--json");
            const test::Run original = rig(args);
            args[2] = dir.path().string();
            const test::Run replay = rig(args);
            ASSERT_EQ(original.status, 0) << original.out;
            EXPECT_EQ(replay.out, original.out) << command << (json ? " --json" : "");
        }
}

TEST(RigTool, TopoJsonHasOnePairPerOrderedPairOfEndpoints) {
    const Tree tree(rich_topology());
    const test::Run run = rig({"topo", "--root", tree.root().string(), "--json"});
    ASSERT_EQ(run.status, 0) << run.out;
    const auto j = nlohmann::json::parse(run.out);
    std::vector<std::string> buses;
    for (const auto& f : j.at("functions")) buses.push_back(f.at("bus"));
    EXPECT_EQ(buses, (std::vector<std::string>{"0000:00:0e.0", "0000:03:00.0", "0000:04:00.0", "0000:04:00.2",
                                               "0000:81:00.0", "10000:e1:00.0"}))
        << "bridges and the host bridge devices of root complexes are left out";
    ASSERT_EQ(j.at("pairs").size(), buses.size() * (buses.size() - 1));
    EXPECT_EQ(j.at("functions")[1].at("vendor"), "0x10de");
    EXPECT_EQ(j.at("functions")[1].at("device"), "0x2335");
    EXPECT_EQ(j.at("functions")[1].at("class"), "0x030200");
    const pci::Machine m = tree.machine();
    for (const auto& pair : j.at("pairs")) {
        const std::string p = pair.at("provider"), c = pair.at("client");
        EXPECT_NE(p, c);
        EXPECT_EQ(pair.at("forwards").get<bool>(), m.forwards(p, c)) << p << " " << c;
        const auto d = m.distance(p, c);
        ASSERT_TRUE(d);
        EXPECT_EQ(pair.at("distance").get<std::string>(), pci::to_string(*d));
    }
    // The GPU behind the redirecting port reaches the NIC through the allow-listed root complex.
    EXPECT_TRUE(m.forwards("0000:03:00.0", "0000:04:00.0"));
    EXPECT_EQ(m.route("0000:03:00.0", "0000:04:00.0").verdict, pci::Verdict::ThroughHostBridge);
}

TEST(RigTool, TopoJsonDistanceOfAnUnreadFunctionIsNull) {
    const Tree tree(OneSwitch{}.build());
    fs::remove(tree.root() / "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:10.0/0000:04:00.0/config");
    const test::Run run = rig({"topo", "--root", tree.root().string(), "--json"});
    ASSERT_EQ(run.status, 0) << run.out;
    const auto j = nlohmann::json::parse(run.out);
    for (const auto& pair : j.at("pairs")) {
        const bool unread = pair.at("provider") == "0000:04:00.0" || pair.at("client") == "0000:04:00.0";
        EXPECT_EQ(pair.at("distance").is_null(), unread) << pair.dump();
        if (unread) {
            EXPECT_FALSE(pair.at("forwards").get<bool>());
        }
    }
}

TEST(RigTool, TopoPrintsBothMatricesWithLegend) {
    OneSwitch s;
    s.downstream_acs = 0x001d;
    const Tree tree(s.build());
    const test::Run run = rig({"topo", "--root", tree.root().string()});
    ASSERT_EQ(run.status, 0) << run.out;
    EXPECT_NE(run.out.find("GPU0    0000:03:00.0  10de:1db4  3D controller"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("DEV0    0000:03:00.1"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("NIC0    0000:04:00.0"), std::string::npos) << run.out;
    // By default the GPUs' and NICs' matrices, as nvidia-smi shows them.
    EXPECT_NE(run.out.find("      GPU0  NIC0  \nGPU0  X     SW    \n"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("(2 of 3 endpoints); --all shows every one"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("GPU0  X     NS    \n"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("NS   = not supported"), std::string::npos) << run.out;
    const test::Run every = rig({"topo", "--root", tree.root().string(), "--all"});
    EXPECT_NE(every.out.find("GPU0  X     SW    SW"), std::string::npos) << every.out;
    // The GPU's own port (the common node with its audio function) redirects too.
    EXPECT_NE(every.out.find("GPU0  X     NS    NS"), std::string::npos) << every.out;
    EXPECT_EQ(every.out.find("--all shows"), std::string::npos) << every.out;
}

TEST(RigTool, TopoNotesAVirtualTopologyWhenEveryEndpointSitsOnARootBus) {
    // docs/bugs.md B05: a passthrough guest, GPUs and a NIC on root bus 00, no bridges.
    Topology t(Cpu::intel());
    const auto h = t.host_bridge(0, 0);
    t.add(h, Spec::endpoint(0, 0, 0x10de, 0x20b5, 0x030200));
    t.add(h, Spec::endpoint(1, 0, 0x15b3, 0x101b, 0x020700));
    t.add(h, Spec::endpoint(2, 0, 0x10de, 0x20b5, 0x030200));
    const Tree flat(t);
    const test::Run run = rig({"topo", "--root", flat.root().string()});
    ASSERT_EQ(run.status, 0) << run.out;
    EXPECT_NE(run.out.find("virtual topology"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("GPU0  X     BR    BR"), std::string::npos) << run.out;
    // A machine with a switch gets no such note.
    const Tree switched(OneSwitch{}.build());
    EXPECT_EQ(rig({"topo", "--root", switched.root().string()}).out.find("virtual topology"), std::string::npos);
}

TEST(RigTool, WhyNormalizesShortAndUppercaseAddresses) {
    Topology t(Cpu::intel());
    const auto h = t.host_bridge(0, 0);
    t.add(h, Spec::root_complex(0x8086, 0x6f00));
    auto rp = Spec::root_port(1, 0, 0x8086, 0x6f02, 0x001d);
    rp.secondary = 0x0a;
    const auto port = t.add(h, rp);
    t.add(port, Spec::endpoint(0, 0, 0x10de, 0x1db4, 0x030200));
    t.add(port, Spec::endpoint(0, 1, 0x10de, 0x10f1, 0x040300));
    const Tree tree(t);
    const test::Run full = rig({"topo", "--root", tree.root().string(), "--why", "0000:0a:00.0", "0000:0a:00.1"});
    ASSERT_EQ(full.status, 0) << full.out;
    EXPECT_NE(full.out.find("0000:0a:00.1 -> BAR of 0000:0a:00.0: not supported"), std::string::npos) << full.out;
    EXPECT_NE(full.out.find("0000:00:01.0 ACSCtl 0x001d (ReqRedir CmpltRedir)"), std::string::npos) << full.out;
    const test::Run short_form = rig({"topo", "--root", tree.root().string(), "--why", "0A:00.0", "0000:0A:00.1"});
    EXPECT_EQ(short_form.status, 0);
    EXPECT_EQ(short_form.out, full.out);
}

// Behind an IOMMU, a direct route means the two share an IOMMU group: VFIO takes the
// NIC only with the GPU's function free of its vendor driver, and --why says so.
TEST(RigTool, WhyOfADirectRouteBehindAnIommuSaysTheGpuMustBeFreeOfItsDriver) {
    Topology t(Cpu::intel(0x8f));
    const auto h = t.host_bridge(0, 0);
    t.add(h, Spec::root_complex(0x8086, 0x09a2));
    const auto usp =
        t.add(t.add(h, Spec::root_port(1, 0, 0x8086, 0x352a, 0x001d)), Spec::upstream_port(0x1000, 0xc030));
    auto gpu = Spec::endpoint(0, 0, 0x10de, 0x2335, 0x030200);
    gpu.driver = "nvidia";
    gpu.iommu_group = 3;
    t.add(t.add(usp, Spec::downstream_port(0, 0x1000, 0xc030)), gpu);
    auto nic = Spec::endpoint(0, 0, 0x14e4, 0x1750, 0x020000);
    nic.iommu_group = 4;
    t.add(t.add(usp, Spec::downstream_port(1, 0x1000, 0xc030)), nic);
    const Tree tree(t);
    const test::Run run = rig({"topo", "--root", tree.root().string(), "--why", "03:00.0", "04:00.0"});
    ASSERT_EQ(run.status, 0) << run.out;
    EXPECT_NE(
        run.out.find("VFIO: behind an IOMMU this direct route means no ACS isolates 0000:04:00.0 from 0000:03:00.0, so "
                     "they share an IOMMU group (3), and VFIO takes 0000:04:00.0 only with 0000:03:00.0 free of its "
                     "vendor driver (bound to vfio-pci or to none; it is bound to nvidia)\n"),
        std::string::npos)
        << run.out;
    // Without an IOMMU group the NIC is not behind an IOMMU: nothing to say.
    const Tree plain(OneSwitch{}.build());
    EXPECT_EQ(rig({"topo", "--root", plain.root().string(), "--why", "03:00.0", "04:00.0"}).out.find("VFIO:"),
              std::string::npos);
}

TEST(RigTool, WhyRejectsWhatIsNoBusAddress) {
    const Tree tree(OneSwitch{}.build());
    const test::Run run = rig({"topo", "--root", tree.root().string(), "--why", "03:00", "04:00.0"});
    EXPECT_EQ(run.status, 2);
    EXPECT_NE(run.out.find("\"03:00\" is not a bus address"), std::string::npos) << run.out;
}

TEST(RigTool, WhyOfNoFunctionIsAnErrorNamingIt) {
    const Tree tree(OneSwitch{}.build());
    for (const auto& [provider, client, missing] : {std::tuple{"99:00.0", "04:00.0", "0000:99:00.0"},
                                                    std::tuple{"0000:03:00.0", "0000:09:00.0", "0000:09:00.0"}}) {
        const test::Run run = rig({"topo", "--root", tree.root().string(), "--why", provider, client});
        EXPECT_EQ(run.status, 1) << run.out;
        EXPECT_EQ(run.out, std::string("rig: ") + missing + ": no such function (rig ls lists them)\n");
    }
}

TEST(RigTool, WhyWithJsonGivesTheLinksAndTheBottleneck) {
    OneSwitch s;
    s.gpu_trained = pci::LinkState{pci::Generation::Gen3, 8};
    const Tree tree(s.build());
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"topo", "--root", tree.root().string(), "--json", "--why", "03:00.0", "04:00.0"},
          {"topo", "--root", tree.root().string(), "--why", "03:00.0", "04:00.0", "--json"}}) {
        const test::Run run = rig(args);
        ASSERT_EQ(run.status, 0) << run.out;
        const auto j = nlohmann::json::parse(run.out);
        EXPECT_EQ(j.at("verdict"), "direct");
        EXPECT_EQ(j.at("common"), "0000:01:00.0");
        ASSERT_EQ(j.at("links").size(), 2u);
        EXPECT_EQ(j.at("links")[0].at("function"), "0000:03:00.0");
        EXPECT_EQ(j.at("links")[0].at("downtrained"), true);
        EXPECT_EQ(j.at("links")[0].at("status").at("width"), 8);
        EXPECT_EQ(j.at("links")[0].at("capability").at("generation"), 4);
        EXPECT_EQ(j.at("links")[1].at("downtrained"), false);
        EXPECT_EQ(j.at("bottleneck_bytes_per_second"), 8ull * 984'615'384u);
    }
    const test::Run text = rig({"topo", "--root", tree.root().string(), "--why", "03:00.0", "04:00.0"});
    EXPECT_NE(text.out.find("    0000:03:00.0 - 0000:02:08.0: Gen3 x8 (both ends can Gen4 x16)\n"), std::string::npos)
        << text.out;
    EXPECT_NE(text.out.find("  bottleneck: Gen3 x8, 7876923072 bytes/s each way\n"), std::string::npos) << text.out;
}

TEST(RigTool, LsShowsEachFunctionsLink) {
    OneSwitch s;
    s.gpu_trained = pci::LinkState{pci::Generation::Gen3, 8};
    const Tree tree(s.build());
    const test::Run run = rig({"ls", "--root", tree.root().string()});
    ASSERT_EQ(run.status, 0) << run.out;
    EXPECT_NE(run.out.find("LINK"), std::string::npos) << run.out;
    const auto line = [&](const std::string& bus) {
        return run.out.substr(run.out.find(bus), run.out.find('\n', run.out.find(bus)) - run.out.find(bus));
    };
    EXPECT_NE(line("0000:03:00.0").find("Gen3 x8 (can Gen4 x16)"), std::string::npos) << run.out;
    EXPECT_NE(line("0000:04:00.0").find("Gen4 x16"), std::string::npos) << run.out;
    EXPECT_NE(line("0000:00:00.0").find(" - "), std::string::npos) << run.out;  // no PCI Express capability
    const test::Run json = rig({"ls", "--root", tree.root().string(), "--json"});
    const auto j = nlohmann::json::parse(json.out).at("functions");
    for (const auto& f : j)
        if (f.at("bus") == "0000:03:00.0") {
            EXPECT_EQ(f.at("link").at("text"), "Gen3 x8 (can Gen4 x16)");
            EXPECT_EQ(f.at("link").at("source"), "config");
            EXPECT_EQ(f.at("link").at("status").at("gigatransfers"), 8.0);
        }
}

// The example machine: GPU 1b:00.0 and NIC 1c:00.0 below switch 1a:00.0, a NIC
// on another root port (20:00.0) and one on another socket's host bridge (81:00.0), every
// link Gen5 x16 unless `gpu_trained` says otherwise.
Topology pairing_machine(std::optional<pci::LinkState> gpu_trained = std::nullopt) {
    const pci::LinkState gen5{pci::Generation::Gen5, 16};
    const auto with = [&](Spec s, int numa = 0) {
        s.link = gen5;
        s.numa_node = numa;
        return s;
    };
    Topology t(Cpu::intel(0x8f));
    const auto h = t.host_bridge(0, 0);
    t.add(h, Spec::root_complex(0x8086, 0x09a2));
    auto rp = with(Spec::root_port(1, 0, 0x8086, 0x352a));
    rp.secondary = 0x1a;
    auto usp = with(Spec::upstream_port(0x1000, 0xc030));
    usp.secondary = 0x40;
    const auto sw = t.add(t.add(h, rp), usp);  // 1a:00.0
    auto d0 = with(Spec::downstream_port(0, 0x1000, 0xc030));
    d0.secondary = 0x1b;
    auto d1 = with(Spec::downstream_port(1, 0x1000, 0xc030));
    d1.secondary = 0x1c;
    auto gpu = with(Spec::endpoint(0, 0, 0x10de, 0x2335, 0x030200));
    gpu.trained = gpu_trained;
    t.add(t.add(sw, d0), gpu);                                                   // 1b:00.0
    t.add(t.add(sw, d1), with(Spec::endpoint(0, 0, 0x15b3, 0x1021, 0x020700)));  // 1c:00.0
    auto rp2 = with(Spec::root_port(2, 0, 0x8086, 0x352a));
    rp2.secondary = 0x20;
    t.add(t.add(h, rp2), with(Spec::endpoint(0, 0, 0x15b3, 0x1021, 0x020700)));  // 20:00.0
    const auto h8 = t.host_bridge(0, 0x80);
    t.add(h8, Spec::root_complex(0x8086, 0x09a2));
    t.add(t.add(h8, with(Spec::root_port(1, 0, 0x8086, 0x352a), 1)),
          with(Spec::endpoint(0, 0, 0x15b3, 0x1021, 0x020700), 1));
    return t;
}

TEST(RigTool, TopoPairsEachGpuWithItsNicAndSaysWhy) {
    const Tree tree(pairing_machine());
    const test::Run run = rig({"topo", "--root", tree.root().string()});
    ASSERT_EQ(run.status, 0) << run.out;
    EXPECT_NE(
        run.out.find("  GPU0 0000:1b:00.0 -> NIC0 0000:1c:00.0 (switch 0000:1a:00.0, Gen5 x16, NUMA 0); next NIC1 "
                     "(bridge)\n"),
        std::string::npos)
        << run.out;
    EXPECT_EQ(run.out.find("warning:"), std::string::npos) << run.out;
    const test::Run pinned = rig({"topo", "--root", tree.root().string(), "--pair", "1b:00.0=20:00.0"});
    ASSERT_EQ(pinned.status, 0) << pinned.out;
    EXPECT_NE(
        pinned.out.find("  GPU0 0000:1b:00.0 -> NIC1 0000:20:00.0 (bridge pci0000:00, Gen5 x16, NUMA 0); override; "
                        "next NIC0 (switch)\n"),
        std::string::npos)
        << pinned.out;
    const test::Run not_nic = rig({"topo", "--root", tree.root().string(), "--pair", "1b:00.0=1b:00.0"});
    EXPECT_EQ(not_nic.status, 1);
    EXPECT_NE(not_nic.out.find("0000:1b:00.0 is no NIC: class 0x030200"), std::string::npos) << not_nic.out;
    const test::Run malformed = rig({"topo", "--root", tree.root().string(), "--pair", "GPU0=NIC0"});
    EXPECT_EQ(malformed.status, 2);
}

TEST(RigTool, TopoWarnsOfEveryDowntrainedLinkOnAGpuNicRoute) {
    const Tree tree(pairing_machine(pci::LinkState{pci::Generation::Gen3, 8}));
    const test::Run run = rig({"topo", "--root", tree.root().string()});
    ASSERT_EQ(run.status, 0) << run.out;
    EXPECT_NE(run.out.find("(switch 0000:1a:00.0, Gen3 x8, NUMA 0)"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("  warning: the link of 0000:1b:00.0 below 0000:40:00.0 is downtrained: LnkSta Gen3 x8, "
                           "LnkCap Gen5 x16, port LnkCap Gen5 x16 (routes of GPU0)\n"),
              std::string::npos)
        << run.out;
}

TEST(RigTool, TopoJsonNicsHasTheRankingAndThePair) {
    const Tree tree(pairing_machine());
    const test::Run run = rig({"topo", "--root", tree.root().string(), "--json"});
    ASSERT_EQ(run.status, 0) << run.out;
    const auto nics = nlohmann::json::parse(run.out).at("nics");
    ASSERT_EQ(nics.size(), 1u);
    const auto& gpu = nics[0];
    EXPECT_EQ(gpu.size(), 3u);
    EXPECT_EQ(gpu.at("gpu"), "0000:1b:00.0");
    EXPECT_EQ(gpu.at("paired"), "0000:1c:00.0");
    const auto& ranked = gpu.at("ranked");
    ASSERT_EQ(ranked.size(), 3u);
    EXPECT_EQ(ranked[0], (nlohmann::json{{"nic", "0000:1c:00.0"},
                                         {"forwards", true},
                                         {"distance", "switch"},
                                         {"numa", "same"},
                                         {"bottleneck_bytes_per_second", 16ull * 3'938'461'538u},
                                         {"tie", false}}));
    EXPECT_EQ(ranked[1].at("distance"), "bridge");
    EXPECT_EQ(ranked[2].at("distance"), "system");
    EXPECT_EQ(ranked[2].at("numa"), "other");
}

TEST(RigTool, UsageErrorsExitTwoWithCli11sMessage) {
    const Tree tree(OneSwitch{}.build());
    for (const auto& [args, message] :
         {std::pair{std::vector<std::string>{}, "A subcommand is required"},
          std::pair{std::vector<std::string>{"ls", "--bogus"}, "The following argument was not expected: --bogus"},
          std::pair{std::vector<std::string>{"topo", "--root", tree.root().string(), "--why", "03:00.0"},
                    "--why: At least 2 required but received 1"},
          std::pair{std::vector<std::string>{"snapshot"}, "OUT_DIR is required"}}) {
        const test::Run run = rig(args);
        EXPECT_EQ(run.status, 2) << run.out;
        EXPECT_NE(run.out.find(message), std::string::npos) << run.out;
    }
}

TEST(RigTool, HelpExitsZero) {
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"--help"}, {"ls", "--help"}, {"topo", "--help"}, {"snapshot", "--help"}}) {
        const test::Run run = rig(args);
        EXPECT_EQ(run.status, 0) << run.out;
        EXPECT_NE(run.out.find("Usage:"), std::string::npos) << run.out;
    }
}

TEST(RigTool, LsListsEveryFunctionWithItsFiles) {
    const Tree tree(rich_topology());
    const test::Run run = rig({"ls", "--root", tree.root().string(), "--json"});
    ASSERT_EQ(run.status, 0) << run.out;
    const auto j = nlohmann::json::parse(run.out).at("functions");
    ASSERT_EQ(j.size(), 14u);
    const auto find = [&](const std::string& bus) {
        for (const auto& f : j)
            if (f.at("bus") == bus) return f;
        return nlohmann::json();
    };
    const auto gpu = find("0000:03:00.0");
    EXPECT_EQ(gpu.at("driver"), "nvidia");
    EXPECT_EQ(gpu.at("numa_node"), 0);
    EXPECT_EQ(gpu.at("iommu_group"), "17");
    EXPECT_EQ(gpu.at("kind"), "GPU");
    EXPECT_EQ(gpu.at("upstream"), "0000:02:08.0");
    EXPECT_EQ(gpu.at("host_bridge"), "pci0000:00");
    const auto vf = find("0000:04:00.2");
    EXPECT_EQ(vf.at("physfn"), "0000:04:00.0");
    EXPECT_EQ(vf.at("upstream"), "0000:02:10.0");
    EXPECT_TRUE(vf.at("driver").is_null());
    const auto usp = find("0000:01:00.0");
    EXPECT_EQ(usp.at("buses"), nlohmann::json::array({2, 4}));
    EXPECT_EQ(find("10000:e1:00.0").at("host_bridge"), "pci10000:e0");
    const test::Run text = rig({"ls", "--root", tree.root().string()});
    EXPECT_NE(text.out.find("0000:03:00.0   10de:2335 030200   3D controller (GPU)"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("[02-04]"), std::string::npos) << text.out;
}

// Every file and directory under `dir`, for checking that a refused command wrote nothing.
std::vector<fs::path> listing(const fs::path& dir) {
    std::vector<fs::path> paths;
    for (const auto& entry : fs::recursive_directory_iterator(dir)) paths.push_back(entry.path());
    std::sort(paths.begin(), paths.end());
    return paths;
}

TEST(RigTool, ARootThatDoesNotExistIsAnError) {
    TempDir dir;
    const fs::path missing = dir.path() / "missing";
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"ls", "--root", missing.string()},
          {"ls", "--root", missing.string(), "--json"},
          {"topo", "--root", missing.string()},
          {"topo", "--root", missing.string(), "--why", "03:00.0", "04:00.0"},
          {"snapshot", "--root", missing.string(), (dir.path() / "out").string()}}) {
        const test::Run run = rig(args);
        EXPECT_EQ(run.status, 1) << args[0];
        EXPECT_EQ(run.out, "rig: " + missing.string() + ": no such directory\n") << args[0];
    }
    EXPECT_TRUE(listing(dir.path()).empty()) << "snapshot wrote nothing";
}

TEST(RigTool, ARootWithoutSysBusPciIsAnError) {
    TempDir dir, out;
    fs::create_directories(dir.path() / "sys/devices");
    const std::string expected =
        "rig: " + dir.path().string() + ": not a `rig snapshot` tree (no sys/bus/pci/devices in it)\n";
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"ls", "--root", dir.path().string(), "--json"},
          {"topo", "--root", dir.path().string()},
          {"snapshot", "--root", dir.path().string(), out.path().string()}}) {
        const test::Run run = rig(args);
        EXPECT_EQ(run.status, 1) << args[0];
        EXPECT_EQ(run.out, expected) << args[0];
    }
    EXPECT_TRUE(listing(out.path()).empty()) << "snapshot wrote nothing";
}

TEST(RigTool, SnapshotIntoANonEmptyDirectoryIsRefusedAndWritesNothing) {
    const Tree first(rich_topology()), second(OneSwitch{}.build());
    TempDir out;
    const test::Run snap = rig({"snapshot", "--root", first.root().string(), out.path().string()});
    ASSERT_EQ(snap.status, 0) << snap.out;
    const auto before = listing(out.path());
    ASSERT_FALSE(before.empty());
    const test::Run again = rig({"snapshot", "--root", second.root().string(), out.path().string()});
    EXPECT_EQ(again.status, 1);
    EXPECT_EQ(again.out,
              "rig: " + out.path().string() + ": not empty (a snapshot goes into a new or empty directory)\n");
    EXPECT_EQ(listing(out.path()), before);
    // Any file at all makes it non-empty; a file in its place is no directory.
    TempDir other;
    std::ofstream(other.path() / "notes.txt") << "mine";
    const test::Run into_other = rig({"snapshot", "--root", first.root().string(), other.path().string()});
    EXPECT_EQ(into_other.status, 1);
    EXPECT_NE(into_other.out.find(other.path().string() + ": not empty"), std::string::npos) << into_other.out;
    EXPECT_EQ(listing(other.path()), std::vector<fs::path>{other.path() / "notes.txt"});
    const test::Run onto_file =
        rig({"snapshot", "--root", first.root().string(), (other.path() / "notes.txt").string()});
    EXPECT_EQ(onto_file.status, 1);
    EXPECT_EQ(onto_file.out, "rig: " + (other.path() / "notes.txt").string() + ": not a directory\n");
}

// An empty --root is no tree (before, ls, topo and snapshot read this machine), and an
// empty OUT_DIR no directory (before, snapshot wrote into the current directory): usage
// errors, nothing written.
TEST(RigTool, EmptyRootOrOutDirIsAUsageErrorAndWritesNothing) {
    const Tree tree(OneSwitch{}.build());
    TempDir cwd;
    const fs::path before = fs::current_path();
    fs::current_path(cwd.path());
    const test::Run into_cwd = rig({"snapshot", "--root", tree.root().string(), ""});
    const test::Run ls_empty = rig({"ls", "--root", "", "--json"});
    const test::Run topo_empty = rig({"topo", "--root", ""});
    const test::Run snap_empty = rig({"snapshot", "--root", "", (cwd.path() / "out").string()});
    fs::current_path(before);
    EXPECT_EQ(into_cwd.status, 2) << into_cwd.out;
    EXPECT_EQ(into_cwd.out, "rig: snapshot: OUT_DIR \"\": an empty path names no directory\n");
    for (const test::Run* run : {&ls_empty, &topo_empty, &snap_empty}) {
        EXPECT_EQ(run->status, 2) << run->out;
        EXPECT_EQ(run->out, "rig: --root \"\": an empty path names no tree (leave --root out to read this machine)\n");
    }
    EXPECT_TRUE(listing(cwd.path()).empty()) << "nothing written";
}

// Link names that are no UTF-8 (a driver and an IOMMU group named by bytes 0xff 0xfe) give
// JSON with U+FFFD in their place (before, rig ls --json aborted: nlohmann type_error.316);
// the snapshot copies them and topo --json of the copy is JSON too.
TEST(RigTool, JsonOfLinkNamesThatAreNoUtf8ReplacesTheirBytes) {
    const Tree tree(OneSwitch{}.build());
    const fs::path gpu = tree.root() / "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:08.0/0000:03:00.0";
    for (const char* link : {"driver", "iommu_group"}) {
        fs::remove(gpu / link);
        fs::create_symlink("../../../../../../bus/pci/drivers/x\xff\xfe", gpu / link);
    }
    const test::Run ls = rig({"ls", "--root", tree.root().string(), "--json"});
    ASSERT_EQ(ls.status, 0) << ls.out;
    const auto functions = nlohmann::json::parse(ls.out).at("functions");
    bool seen = false;
    for (const auto& f : functions)
        if (f.at("bus") == "0000:03:00.0") {
            EXPECT_EQ(f.at("driver"), "x\xef\xbf\xbd\xef\xbf\xbd");
            EXPECT_EQ(f.at("iommu_group"), "x\xef\xbf\xbd\xef\xbf\xbd");
            seen = true;
        }
    EXPECT_TRUE(seen) << ls.out;
    TempDir out;
    const test::Run snap = rig({"snapshot", "--root", tree.root().string(), (out.path() / "snap").string()});
    ASSERT_EQ(snap.status, 0) << snap.out;
    const test::Run topo = rig({"topo", "--root", (out.path() / "snap").string(), "--json"});
    ASSERT_EQ(topo.status, 0) << topo.out;
    EXPECT_NO_THROW((void)nlohmann::json::parse(topo.out)) << topo.out;
}

// A sys/bus/pci/devices entry that is a directory is no function for ls, topo and
// snapshot alike (before, ls and topo took it and snapshot failed with "File exists").
TEST(RigTool, DeviceEntryThatIsADirectoryIsNoFunctionForEveryCommand) {
    const Tree tree(OneSwitch{}.build());
    const fs::path entry = tree.root() / "sys/bus/pci/devices/0000:03:00.0";
    const fs::path gpu = tree.root() / "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:08.0/0000:03:00.0";
    fs::remove(entry);
    fs::create_directory(entry);
    for (const char* name : {"vendor", "device", "class", "config"}) fs::copy_file(gpu / name, entry / name);
    const test::Run ls = rig({"ls", "--root", tree.root().string(), "--json"});
    ASSERT_EQ(ls.status, 0) << ls.out;
    const auto listed = nlohmann::json::parse(ls.out);  // kept: a range over the temporary's member would dangle
    for (const auto& f : listed.at("functions")) EXPECT_NE(f.at("bus"), "0000:03:00.0");
    TempDir out;
    const test::Run snap = rig({"snapshot", "--root", tree.root().string(), (out.path() / "snap").string()});
    EXPECT_EQ(snap.status, 0) << snap.out;
    const test::Run copied = rig({"ls", "--root", (out.path() / "snap").string(), "--json"});
    EXPECT_EQ(nlohmann::json::parse(copied.out), nlohmann::json::parse(ls.out));
}

TEST(RigTool, LsOfAnUnlistableRootIsAnError) {
    TempDir dir;
    fs::create_directories(dir.path() / "sys/bus/pci");
    std::ofstream(dir.path() / "sys/bus/pci/devices") << "x";
    const test::Run run = rig({"ls", "--root", dir.path().string()});
    EXPECT_EQ(run.status, 1);
    EXPECT_NE(run.out.find("sys/bus/pci/devices: cannot list"), std::string::npos) << run.out;
}

}  // namespace
}  // namespace rig
