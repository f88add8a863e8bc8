// rig/pci/snapshot.hpp's promise, tested on random trees: a snapshot answers as the tree
// it was taken from. Each tree (random_topology.hpp, fixed seeds) is written as sysfs and
// then made hostile at random (a bridge's class that is no number, a dangling physfn
// link, a config of 0 bytes or a link out of the root, a device entry that is a
// directory, a missing vendor file, a cpuinfo that is a link out of the root); its copy
// must list the same functions with the same files, and give every ordered pair of bus
// addresses the same route: verdict, distance, forwards, redirects, the CPU rule.
#include "rig/pci/snapshot.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "../support/random_topology.hpp"
#include "../support/trees.hpp"
#include "rig/pci/machine.hpp"

namespace rig::pci {
namespace {

namespace fs = std::filesystem;
using sim::FunctionRef;
using sim::Topology;
using test::Generator;
using test::TempDir;
using test::Tree;

void expect_same_files(const FunctionFiles& a, const FunctionFiles& b) {
    EXPECT_TRUE(a.id == b.id) << a.id.bus << " / " << b.id.bus;
    EXPECT_EQ(a.host_bridge, b.host_bridge);
    EXPECT_EQ(a.upstream, b.upstream);
    EXPECT_EQ(a.driver, b.driver);
    EXPECT_EQ(a.numa_node, b.numa_node);
    EXPECT_EQ(a.iommu_group, b.iommu_group);
    EXPECT_EQ(a.physfn, b.physfn);
    EXPECT_EQ(a.buses, b.buses);
    EXPECT_EQ(a.config, b.config);
    EXPECT_EQ(a.unread.empty(), b.unread.empty()) << a.unread << " / " << b.unread;
}

// Makes the tree under `root` hostile at random: about one function in five gets one
// of the faults the file's opening comment lists.
void spoil(const Topology& t, const fs::path& root, std::mt19937& random) {
    const auto pick = [&](unsigned n) { return std::uniform_int_distribution<unsigned>(0, n - 1)(random); };
    for (std::size_t i = 0; i < t.functions().size(); ++i) {
        if (pick(5) != 0) continue;
        const std::string bus = t.bus(FunctionRef{i});
        const fs::path entry = root / "sys/bus/pci/devices" / bus;
        const fs::path dir = fs::canonical(entry);
        switch (pick(6)) {
        case 0: std::ofstream(dir / "class", std::ios::trunc) << "0xgarbage\n"; break;
        case 1:
            if (fs::exists(fs::symlink_status(dir / "physfn"))) {
                fs::remove(dir / "physfn");
                fs::create_symlink("../0000:ff:1f.7", dir / "physfn");
            } else {
                fs::remove(dir / "vendor");
            }
            break;
        case 2: std::ofstream(dir / "config", std::ios::trunc); break;
        case 3:
            fs::remove(dir / "config");
            fs::create_symlink("/proc/self/status", dir / "config");
            break;
        case 4: {
            fs::remove(entry);
            fs::create_directory(entry);
            for (const char* name : {"vendor", "device", "class", "config"})
                if (fs::exists(dir / name)) fs::copy_file(dir / name, entry / name);
            break;
        }
        default: fs::remove(dir / "vendor"); break;
        }
    }
    if (pick(4) == 0) {
        fs::remove(root / "proc/cpuinfo");
        fs::create_symlink("/proc/cpuinfo", root / "proc/cpuinfo");
    }
}

TEST(Snapshot, RandomHostileTreesAnswerAsTheTreeTheyWereTakenFrom) {
    std::mt19937 random(0x5eed'0018);  // fixed: the same trees and faults on every run
    int pairs = 0, unread = 0, spoiled_functions = 0;
    for (unsigned seed = 1; seed <= 5; ++seed) {
        const Topology t = Generator(seed).build();
        const Tree tree(t);
        spoil(t, tree.root(), random);
        TempDir out;
        const fs::path copy = out.path() / "snapshot";
        const Machine original = tree.machine();
        ASSERT_TRUE(snapshot(original, copy)) << seed;
        const Machine copied = Machine::at(copy);

        const auto a = describe(original), b = describe(copied);
        ASSERT_TRUE(a && b) << seed;
        ASSERT_EQ(a->size(), b->size()) << seed;
        spoiled_functions += static_cast<int>(t.functions().size() - a->size());
        for (std::size_t i = 0; i < a->size(); ++i) {
            SCOPED_TRACE("seed " + std::to_string(seed) + " " + (*a)[i].id.bus);
            expect_same_files((*a)[i], (*b)[i]);
        }
        for (std::size_t i = 0; i < t.functions().size(); ++i)
            for (std::size_t j = 0; j < t.functions().size(); ++j) {
                const std::string p = t.bus(FunctionRef{i}), c = t.bus(FunctionRef{j});
                SCOPED_TRACE("seed " + std::to_string(seed) + " " + p + " <- " + c);
                const Route x = original.route(p, c), y = copied.route(p, c);
                ASSERT_EQ(x.verdict, y.verdict) << x.explain() << "\n" << y.explain();
                ASSERT_EQ(x.distance, y.distance) << x.explain() << "\n" << y.explain();
                ASSERT_EQ(x.forwards(), y.forwards());
                ASSERT_EQ(x.redirects.size(), y.redirects.size()) << x.explain() << "\n" << y.explain();
                ASSERT_EQ(x.cpu_rule, y.cpu_rule);
                ASSERT_EQ(original.distance(p, c), copied.distance(p, c));
                ++pairs;
                unread += x.verdict == Verdict::Unread;
            }
    }
    // The faults must leave some functions out and some routes unread, and most read.
    EXPECT_GT(spoiled_functions, 0);
    EXPECT_GT(unread, pairs / 20);
    EXPECT_LT(unread, pairs / 2);
}

}  // namespace
}  // namespace rig::pci
