// The rig command line, run as a user runs it: rig ls, rig topo (--json, --why) and
// rig snapshot, on this machine and on sysfs trees written from topologies.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

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
    EXPECT_NE(run.out.find("GPU0  X     SW    SW"), std::string::npos) << run.out;
    // The GPU's own port (the common node with its audio function) redirects too.
    EXPECT_NE(run.out.find("GPU0  X     NS    NS"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("NS   = not supported"), std::string::npos) << run.out;
}

TEST(RigTool, TopoNotesAVirtualTopologyWhenEveryEndpointSitsOnARootBus) {
    // cases/bugs B05: a passthrough guest, GPUs and a NIC on root bus 00, no bridges.
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

TEST(RigTool, WhyRejectsWhatIsNoBusAddress) {
    const Tree tree(OneSwitch{}.build());
    const test::Run run = rig({"topo", "--root", tree.root().string(), "--why", "03:00", "04:00.0"});
    EXPECT_EQ(run.status, 2);
    EXPECT_NE(run.out.find("\"03:00\" is not a bus address"), std::string::npos) << run.out;
}

TEST(RigTool, WhyOfNoFunctionSaysItIsUnread) {
    const Tree tree(OneSwitch{}.build());
    const test::Run run = rig({"topo", "--root", tree.root().string(), "--why", "99:00.0", "04:00.0"});
    EXPECT_EQ(run.status, 0);
    EXPECT_NE(run.out.find("unread"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("0000:99:00.0: no such function"), std::string::npos) << run.out;
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

TEST(RigTool, LsOfARootWithoutSysBusPciListsNothing) {
    TempDir dir;
    const test::Run run = rig({"ls", "--root", dir.path().string(), "--json"});
    ASSERT_EQ(run.status, 0) << run.out;
    EXPECT_EQ(nlohmann::json::parse(run.out).at("functions").size(), 0u);
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
