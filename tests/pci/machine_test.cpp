// Machines: local(), at(root) and make(name, ops[, sysfs]); their names, pages and
// functions (rig/pci/machine.hpp).
#include "rig/pci/machine.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "../support/temp_dir.hpp"
#include "rig/pci/address.hpp"
#include "rig/pci/function.hpp"
#include "rig/pci/transport.hpp"
#include "rig/sim/fixture.hpp"

namespace rig::pci {
namespace {

namespace fs = std::filesystem;
using sim::Spec;
using sim::Topology;

// A transport that lists what it is given and records reserve calls.
class ListingOps final : public Ops {
public:
    explicit ListingOps(std::vector<Id> ids) : ids_(std::move(ids)) {}
    std::optional<std::string> failed() const override {
        std::lock_guard lock(mutex_);
        return failed_;
    }
    std::uint64_t page() const override { return 65536; }
    Result<std::vector<Id>> functions() override {
        if (auto why = failed()) return fail(*why);
        return ids_;
    }
    Result<std::unique_ptr<FunctionOps>> take(std::string_view bus) override {
        return fail("host:7000: ", bus, ": no");
    }
    Result<void> reserve(std::uintptr_t base, std::uint64_t bytes) override {
        reserved.emplace_back(base, bytes);
        return {};
    }
    void fail_now(std::string why) {
        std::lock_guard lock(mutex_);
        failed_ = std::move(why);
    }
    std::vector<std::pair<std::uintptr_t, std::uint64_t>> reserved;

private:
    std::vector<Id> ids_;
    mutable std::mutex mutex_;
    std::optional<std::string> failed_;
};

Id id(std::string bus, std::uint16_t vendor = 0x14e4, std::uint16_t device = 0x1750, std::uint32_t cls = 0x020000) {
    return Id{std::move(bus), vendor, device, cls};
}

// Host bridge 0000:00 (Broadwell-EP), a root port and a NIC; VMD domain 10000; domain 2000.
Topology small_topology() {
    Topology t(sim::Cpu::intel());
    const auto h = t.host_bridge(0, 0);
    t.add(h, Spec::root_complex(0x8086, 0x6f00));
    const auto rp = t.add(h, Spec::root_port(1, 0, 0x8086, 0x6f02));
    t.add(rp, Spec::endpoint(0, 0, 0x14e4, 0x1750, 0x020000));
    const auto vmd = t.add(h, Spec::endpoint(0x0e, 0, 0x8086, 0x467f, 0x010400));
    const auto v = t.vmd_host_bridge(vmd, 0x10000, 0xe0);
    const auto vrp = t.add(v, Spec::root_port(6, 0, 0x8086, 0x464d));
    t.add(vrp, Spec::endpoint(0, 0, 0x144d, 0xa80a, 0x010802));
    const auto far = t.host_bridge(0x2000, 0);
    t.add(far, Spec::endpoint(0, 0, 0x15b3, 0x101b, 0x020700));
    return t;
}

TEST(Machine, LocalHasNoNameNeverFailsAndTheSystemPage) {
    const Machine m = Machine::local();
    EXPECT_FALSE(m.name());
    EXPECT_FALSE(m.failed());
    EXPECT_EQ(m.page(), static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)));
    ASSERT_TRUE(m.root());
    EXPECT_EQ(*m.root(), fs::path("/"));
}

TEST(Machine, LocalListsEveryEntryOfSysBusPciInBusOrder) {
    const fs::path dir = "/sys/bus/pci/devices";
    if (!fs::exists(dir)) GTEST_SKIP() << "no /sys/bus/pci on this machine";
    std::vector<std::string> entries;
    for (const auto& e : fs::directory_iterator(dir)) entries.push_back(e.path().filename().string());
    std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return compare_address(a, b) < 0; });
    const auto listed = Machine::local().functions();
    ASSERT_TRUE(listed) << listed.error();
    std::vector<std::string> buses;
    for (const auto& f : *listed) buses.push_back(f.bus);
    EXPECT_EQ(buses, entries);
    ASSERT_FALSE(listed->empty());
    // The identity is the files': check one function by hand.
    std::ifstream vendor(dir / listed->front().bus / "vendor");
    std::string text;
    vendor >> text;
    EXPECT_EQ(std::stoul(text, nullptr, 16), listed->front().vendor);
}

TEST(Machine, AtWithoutSysBusPciListsNothing) {
    test::TempDir dir;
    const auto listed = Machine::at(dir.path()).functions();
    ASSERT_TRUE(listed) << listed.error();
    EXPECT_TRUE(listed->empty());
}

TEST(Machine, AtListsFunctionsInBusOrderWithTheirIds) {
    test::TempDir dir;
    const Topology t = small_topology();
    ASSERT_TRUE(sim::write_sysfs(t, dir.path()));
    const Machine m = Machine::at(dir.path());
    EXPECT_FALSE(m.name());
    EXPECT_FALSE(m.failed());
    // No operations: nothing can be taken.
    const auto taken = Function::take(m, "0000:01:00.0");
    ASSERT_FALSE(taken);
    EXPECT_EQ(taken.error(),
              "0000:01:00.0: the machine is a sysfs tree (Machine::at) and its functions cannot be taken");
    const auto listed = m.functions();
    ASSERT_TRUE(listed) << listed.error();
    std::vector<std::string> buses;
    for (const auto& f : *listed) buses.push_back(f.bus);
    EXPECT_EQ(buses, (std::vector<std::string>{"0000:00:00.0", "0000:00:01.0", "0000:00:0e.0", "0000:01:00.0",
                                               "2000:00:00.0", "10000:e0:06.0", "10000:e1:00.0"}));
    EXPECT_EQ((*listed)[3], (Id{"0000:01:00.0", 0x14e4, 0x1750, 0x020000}));
    EXPECT_EQ((*listed)[6], (Id{"10000:e1:00.0", 0x144d, 0xa80a, 0x010802}));
}

TEST(Machine, AtUnlistableDevicesDirectoryIsErrorNamingIt) {
    test::TempDir dir;
    fs::create_directories(dir.path() / "sys/bus/pci");
    std::ofstream(dir.path() / "sys/bus/pci/devices") << "not a directory\n";
    const auto listed = Machine::at(dir.path()).functions();
    ASSERT_FALSE(listed);
    EXPECT_NE(listed.error().find("sys/bus/pci/devices"), std::string::npos) << listed.error();
}

TEST(Machine, AtLeavesOutFunctionWhoseFilesCannotBeRead) {
    test::TempDir dir;
    ASSERT_TRUE(sim::write_sysfs(small_topology(), dir.path()));
    const fs::path nic = dir.path() / "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0";
    std::ofstream(nic / "vendor") << "0xnope\n";
    fs::remove(dir.path() / "sys/devices/pci2000:00/2000:00:00.0/class");
    const auto listed = Machine::at(dir.path()).functions();
    ASSERT_TRUE(listed) << listed.error();
    for (const auto& f : *listed) {
        EXPECT_NE(f.bus, "0000:01:00.0");
        EXPECT_NE(f.bus, "2000:00:00.0");
    }
    EXPECT_EQ(listed->size(), 5u);
}

TEST(Machine, AtRelativeRootReadsTheSameTree) {
    test::TempDir dir;
    ASSERT_TRUE(sim::write_sysfs(small_topology(), dir.path()));
    const fs::path cwd = fs::current_path();
    fs::current_path(dir.path().parent_path());
    const Machine m = Machine::at(dir.path().filename());
    fs::current_path(cwd);
    const auto listed = m.functions();
    ASSERT_TRUE(listed) << listed.error();
    EXPECT_EQ(listed->size(), 7u);
    EXPECT_EQ(m.distance("0000:01:00.0", "10000:e1:00.0"), Distance::System);
}

TEST(Machine, MakeListsThroughOpsInBusOrder) {
    auto ops = std::make_shared<ListingOps>(
        std::vector<Id>{id("10000:e1:00.0"), id("0000:42:00.0"), id("2000:00:00.0"), id("0000:41:00.0")});
    const Machine m = Machine::make("host:7000", ops);
    EXPECT_EQ(m.name(), "host:7000");
    EXPECT_FALSE(m.failed());
    EXPECT_EQ(m.page(), 65536u);
    const auto listed = m.functions();
    ASSERT_TRUE(listed) << listed.error();
    std::vector<std::string> buses;
    for (const auto& f : *listed) buses.push_back(f.bus);
    EXPECT_EQ(buses, (std::vector<std::string>{"0000:41:00.0", "0000:42:00.0", "2000:00:00.0", "10000:e1:00.0"}));
}

TEST(Machine, MakeNonAddressFromTransportIsErrorNamingIt) {
    const Machine m = Machine::make("host:7000", std::make_shared<ListingOps>(std::vector<Id>{id("41:00.0")}));
    const auto listed = m.functions();
    ASSERT_FALSE(listed);
    EXPECT_NE(listed.error().find("host:7000"), std::string::npos);
    EXPECT_NE(listed.error().find("\"41:00.0\""), std::string::npos);
}

TEST(Machine, MakeFailedTransportStaysFailedAndListsNothing) {
    auto ops = std::make_shared<ListingOps>(std::vector<Id>{id("0000:41:00.0")});
    const Machine m = Machine::make("host:7000", ops);
    ops->fail_now("host:7000: the connection closed");
    EXPECT_EQ(m.failed(), "host:7000: the connection closed");
    const auto listed = m.functions();
    ASSERT_FALSE(listed);
    EXPECT_EQ(listed.error(), "host:7000: the connection closed");
    EXPECT_FALSE(m.reserve(0x10000, 0x10000));
    EXPECT_TRUE(ops->reserved.empty());
}

TEST(Machine, MakeReserveGoesThroughOpsInItsPages) {
    auto ops = std::make_shared<ListingOps>(std::vector<Id>{});
    const Machine m = Machine::make("host:7000", ops);
    ASSERT_TRUE(m.reserve(0x7000'0000'0000, 0x20000));
    ASSERT_EQ(ops->reserved.size(), 1u);
    EXPECT_EQ(ops->reserved[0], (std::pair<std::uintptr_t, std::uint64_t>{0x7000'0000'0000, 0x20000}));
    EXPECT_THROW((void)m.reserve(0x7000'0000'1000, 0x10000), std::invalid_argument);  // not on a 64 KiB page
    EXPECT_THROW((void)m.reserve(0x7000'0000'0000, 0), std::invalid_argument);
}

TEST(Machine, MakeWithoutSysfsEveryFunctionIsUnread) {
    const Machine m = Machine::make("host:7000", std::make_shared<ListingOps>(std::vector<Id>{id("0000:41:00.0")}));
    EXPECT_FALSE(m.root());
    EXPECT_FALSE(m.forwards("0000:41:00.0", "0000:41:00.0"));
    EXPECT_EQ(m.distance("0000:41:00.0", "0000:41:00.0"), std::nullopt);
    const Route r = m.route("0000:41:00.0", "0000:41:00.0");
    EXPECT_EQ(r.verdict, Verdict::Unread);
    EXPECT_NE(r.unread.find("host:7000"), std::string::npos) << r.unread;
}

TEST(Machine, MakeWithSysfsReadsRoutesFromItsFiles) {
    test::TempDir dir;
    ASSERT_TRUE(sim::write_sysfs(small_topology(), dir.path()));
    const Machine m = Machine::make("host:7000", std::make_shared<ListingOps>(std::vector<Id>{}), dir.path());
    EXPECT_EQ(m.distance("0000:01:00.0", "10000:e1:00.0"), Distance::System);
    EXPECT_EQ(m.distance("0000:01:00.0", "0000:00:0e.0"), Distance::Bridge);
    EXPECT_TRUE(m.forwards("0000:01:00.0", "0000:01:00.0"));
}

TEST(Machine, MakeWithoutOpsThrows) { EXPECT_THROW(Machine::make("host:7000", nullptr), std::invalid_argument); }

TEST(Machine, CallsFromSeveralThreadsAtOnceAgree) {
    test::TempDir dir;
    ASSERT_TRUE(sim::write_sysfs(small_topology(), dir.path()));
    const Machine m = Machine::at(dir.path());
    const auto expected = m.functions();
    ASSERT_TRUE(expected);
    std::vector<std::thread> threads;
    std::vector<int> wrong(4, 0);
    for (int i = 0; i < 4; ++i)
        threads.emplace_back([&, i] {
            for (int round = 0; round < 10; ++round) {
                const Machine copy = m;  // copies share the machine
                if (copy.functions() != expected) ++wrong[static_cast<std::size_t>(i)];
                if (copy.distance("0000:01:00.0", "10000:e1:00.0") != Distance::System)
                    ++wrong[static_cast<std::size_t>(i)];
                if (!copy.forwards("0000:01:00.0", "0000:01:00.0")) ++wrong[static_cast<std::size_t>(i)];
            }
        });
    for (auto& t : threads) t.join();
    EXPECT_EQ(wrong, (std::vector<int>{0, 0, 0, 0}));
}

TEST(Machine, CopiesShareOneMachine) {
    auto ops = std::make_shared<ListingOps>(std::vector<Id>{});
    const Machine a = Machine::make("host:7000", ops);
    const Machine b = a;  // NOLINT: the copy is the point
    ops->fail_now("host:7000: gone");
    EXPECT_EQ(b.failed(), "host:7000: gone");
}

}  // namespace
}  // namespace rig::pci
