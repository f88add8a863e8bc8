// Bad sysfs input: malformed files, configuration spaces shorter than their capability
// pointers say, capability-list loops, link loops, links that try to leave the root.
// Each gives a clear Error or leaves the function out, never a hang or a crash.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "../support/trees.hpp"
#include "rig/pci/config.hpp"
#include "rig/pci/machine.hpp"

namespace rig::pci {
namespace {

namespace fs = std::filesystem;
using test::OneSwitch;
using test::Tree;

constexpr const char* gpu = "0000:03:00.0";
constexpr const char* nic = "0000:04:00.0";
const fs::path gpu_dir = "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:08.0/0000:03:00.0";
const fs::path dsp_dir = "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:08.0";

std::vector<std::uint8_t> read_bytes(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& file, const std::vector<std::uint8_t>& bytes) {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

void put(std::vector<std::uint8_t>& bytes, std::size_t offset, unsigned width, std::uint32_t value) {
    for (unsigned i = 0; i < width; ++i) bytes.at(offset + i) = static_cast<std::uint8_t>(value >> (8 * i));
}

std::vector<std::string> buses(const Machine& m) {
    std::vector<std::string> out;
    const auto listed = m.functions();
    if (!listed) return {"error: " + listed.error()};
    for (const auto& f : *listed) out.push_back(f.bus);
    return out;
}

bool listed(const Machine& m, const std::string& bus) {
    const auto all = buses(m);
    return std::find(all.begin(), all.end(), bus) != all.end();
}

TEST(Sysfs, ConfigShorterThanItsHeaderMakesTheFunctionUnread) {
    const Tree tree(OneSwitch{}.build());
    write_bytes(tree.root() / gpu_dir / "config", std::vector<std::uint8_t>(40, 0));
    const Machine m = tree.machine();
    EXPECT_TRUE(listed(m, gpu));  // its vendor, device and class files are fine
    const Route r = m.route(gpu, nic);
    EXPECT_EQ(r.verdict, Verdict::Unread);
    EXPECT_NE(r.unread.find("0000:03:00.0"), std::string::npos) << r.unread;
    EXPECT_NE(r.unread.find("40 bytes"), std::string::npos) << r.unread;
}

TEST(Sysfs, ConfigEndingBeforeAnExtendedCapabilityPointerIsUnreadNamingIt) {
    const Tree tree(OneSwitch{}.build());
    auto bytes = read_bytes(tree.root() / dsp_dir / "config");
    ASSERT_EQ(bytes.size(), 4096u);
    put(bytes, 0x100, 4, 0x0001 | (1u << 16) | (0x200u << 20));  // AER, next at 0x200
    bytes.resize(0x140);
    write_bytes(tree.root() / dsp_dir / "config", bytes);
    const Route r = tree.machine().route(gpu, nic);
    EXPECT_EQ(r.verdict, Verdict::Unread);
    EXPECT_NE(r.unread.find("0000:02:08.0"), std::string::npos) << r.unread;
    EXPECT_NE(r.unread.find("before the extended capability at 0x200"), std::string::npos) << r.unread;
}

TEST(Sysfs, ConfigEndingInsideTheAcsCapabilityIsUnread) {
    OneSwitch s;
    s.downstream_acs = 0;
    const Tree tree(s.build());
    auto bytes = read_bytes(tree.root() / dsp_dir / "config");
    bytes.resize(0x105);
    write_bytes(tree.root() / dsp_dir / "config", bytes);
    const Route r = tree.machine().route(gpu, nic);
    EXPECT_EQ(r.verdict, Verdict::Unread);
    EXPECT_NE(r.unread.find("ACS Control"), std::string::npos) << r.unread;
}

TEST(Sysfs, CapabilityListLoopEndsTheWalk) {
    // A root port whose list points at itself: Linux's bounded walk finds no PCI Express
    // capability, so it is no root port, and 80:01.0 first on its root bus represents none.
    sim::Topology t(sim::Cpu::intel());
    const auto h0 = t.host_bridge(0, 0);
    const auto h1 = t.host_bridge(0, 0x80);
    t.add(h0, sim::Spec::root_complex(0x8086, 0x2020));
    const auto a = t.add(h0, sim::Spec::root_port(3, 0, 0x8086, 0x2032));
    const auto b = t.add(h1, sim::Spec::root_port(1, 0, 0x8086, 0x2031));
    t.add(a, sim::Spec::endpoint(0, 0, 0x10de, 0x2335, 0x030200));
    t.add(b, sim::Spec::endpoint(0, 0, 0x15b3, 0x1021, 0x020700));
    const Tree tree(t);
    EXPECT_EQ(tree.machine().route("0000:01:00.0", "0000:81:00.0").verdict, Verdict::ThroughHostBridge);
    const fs::path port = tree.root() / "sys/devices/pci0000:80/0000:80:01.0/config";
    auto bytes = read_bytes(port);
    put(bytes, 0x40, 2, 0x4009);  // vendor-specific capability whose next is itself
    write_bytes(port, bytes);
    const Route r = tree.machine().route("0000:01:00.0", "0000:81:00.0");
    EXPECT_EQ(r.verdict, Verdict::NotSupported);
    EXPECT_NE(r.host_bridge_rule.find("pci0000:80 has no representative"), std::string::npos) << r.host_bridge_rule;
}

TEST(Sysfs, ExtendedCapabilityLoopEndsTheWalkAsNoAcs) {
    OneSwitch s;
    s.downstream_acs = 0x001d;
    const Tree tree(s.build());
    ASSERT_FALSE(tree.machine().forwards(gpu, nic));
    for (const auto* dir : {"0000:02:08.0", "0000:02:10.0"}) {
        const fs::path file = tree.root() / "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0" / dir / "config";
        auto bytes = read_bytes(file);
        put(bytes, 0x100, 4, 0x0001 | (1u << 16) | (0x100u << 20));  // AER pointing at itself; ACS unreachable
        write_bytes(file, bytes);
    }
    EXPECT_EQ(tree.machine().route(gpu, nic).verdict, Verdict::Direct);
}

TEST(Sysfs, LinkLoopLeavesTheFunctionOut) {
    const Tree tree(OneSwitch{}.build());
    const fs::path devices = tree.root() / "sys/bus/pci/devices";
    fs::create_symlink("0000:07:00.0", devices / "0000:07:00.0");
    fs::create_symlink("0000:09:00.0", devices / "0000:08:00.0");
    fs::create_symlink("0000:08:00.0", devices / "0000:09:00.0");
    const Machine m = tree.machine();
    const auto all = buses(m);
    EXPECT_EQ(all.size(), 8u);
    EXPECT_FALSE(listed(m, "0000:07:00.0"));
    EXPECT_FALSE(listed(m, "0000:08:00.0"));
    const Route r = m.route("0000:08:00.0", gpu);
    EXPECT_EQ(r.verdict, Verdict::Unread);
    EXPECT_NE(r.unread.find("too many levels of symbolic links"), std::string::npos) << r.unread;
}

TEST(Sysfs, LinkLoopOnTheWayUpMakesTheFunctionUnread) {
    const Tree tree(OneSwitch{}.build());
    // The GPU's physfn link points back at itself.
    fs::create_symlink("physfn", tree.root() / gpu_dir / "physfn");
    EXPECT_EQ(tree.machine().route(gpu, nic).verdict, Verdict::Unread);
    EXPECT_TRUE(tree.machine().forwards(nic, "0000:03:00.1"));
}

TEST(Sysfs, DanglingLinkLeavesTheFunctionOut) {
    const Tree tree(OneSwitch{}.build());
    fs::create_symlink("../../../devices/pci0000:00/0000:00:09.0", tree.root() / "sys/bus/pci/devices/0000:00:09.0");
    EXPECT_FALSE(listed(tree.machine(), "0000:00:09.0"));
    EXPECT_EQ(tree.machine().route("0000:00:09.0", gpu).verdict, Verdict::Unread);
}

TEST(Sysfs, AbsoluteLinksResolveInsideTheRoot) {
    const Tree tree(OneSwitch{}.build());
    const fs::path link = tree.root() / "sys/bus/pci/devices" / gpu;
    fs::remove(link);
    fs::create_symlink("/" / gpu_dir, link);  // as a snapshot taken with absolute links
    EXPECT_TRUE(listed(tree.machine(), gpu));
    EXPECT_EQ(tree.machine().route(gpu, nic).verdict, Verdict::Direct);
}

TEST(Sysfs, DotDotNeverLeavesTheRoot) {
    const Tree tree(OneSwitch{}.build());
    const fs::path link = tree.root() / "sys/bus/pci/devices" / gpu;
    fs::remove(link);
    fs::create_symlink("../../../../../../../../../../../.." / gpu_dir, link);
    EXPECT_EQ(tree.machine().route(gpu, nic).verdict, Verdict::Direct);
}

TEST(Sysfs, MalformedIdFilesLeaveTheFunctionOut) {
    for (const char* text : {"", "0x", "10de\n", "0x10DE\n", "0x1234567\n", "0x10de junk\n", "\n"}) {
        const Tree tree(OneSwitch{}.build());
        std::ofstream(tree.root() / gpu_dir / "vendor", std::ios::trunc) << text;
        EXPECT_FALSE(listed(tree.machine(), gpu)) << '"' << text << '"';
        EXPECT_EQ(buses(tree.machine()).size(), 7u);
    }
}

TEST(Sysfs, ClassAbove24BitsLeavesTheFunctionOut) {
    const Tree tree(OneSwitch{}.build());
    std::ofstream(tree.root() / gpu_dir / "class", std::ios::trunc) << "0x1030200\n";
    EXPECT_FALSE(listed(tree.machine(), gpu));
}

TEST(Sysfs, EntriesThatAreNotBusAddressesAreIgnored) {
    const Tree tree(OneSwitch{}.build());
    fs::create_directory(tree.root() / "sys/bus/pci/devices/readme");
    fs::create_symlink(gpu_dir, tree.root() / "sys/bus/pci/devices/0000:03:00.0.bak");
    EXPECT_EQ(buses(tree.machine()).size(), 8u);
}

TEST(Sysfs, DirectoryAboveThatIsNeitherBridgeNorHostBridgeIsUnread) {
    const Tree tree(OneSwitch{}.build());
    const fs::path odd = tree.root() / "sys/devices/platform/soc/0000:05:00.0";
    fs::create_directories(odd);
    fs::copy_file(tree.root() / gpu_dir / "config", odd / "config");
    fs::create_symlink("../../../devices/platform/soc/0000:05:00.0", tree.root() / "sys/bus/pci/devices/0000:05:00.0");
    const Route r = tree.machine().route("0000:05:00.0", gpu);
    EXPECT_EQ(r.verdict, Verdict::Unread);
    EXPECT_NE(r.unread.find("neither a bridge nor a host bridge"), std::string::npos) << r.unread;
}

TEST(Sysfs, LinkToADirectoryNamedForAnotherFunctionIsUnread) {
    const Tree tree(OneSwitch{}.build());
    fs::create_symlink("../../.." / gpu_dir.lexically_relative("sys"),
                       tree.root() / "sys/bus/pci/devices/0000:06:00.0");
    const Route r = tree.machine().route("0000:06:00.0", gpu);
    EXPECT_EQ(r.verdict, Verdict::Unread);
    EXPECT_NE(r.unread.find("named for another function"), std::string::npos) << r.unread;
}

TEST(Sysfs, ConfigLongerThan4096BytesIsReadAsItsFirst4096) {
    OneSwitch s;
    s.downstream_acs = 0x001d;
    const Tree tree(s.build());
    auto bytes = read_bytes(tree.root() / dsp_dir / "config");
    bytes.resize(8192, 0xff);
    write_bytes(tree.root() / dsp_dir / "config", bytes);
    const Route r = tree.machine().route(gpu, nic);
    EXPECT_EQ(r.verdict, Verdict::NotSupported);
    EXPECT_EQ(r.redirects.size(), 2u);
}

TEST(Sysfs, CpuinfoWithoutVendorIsNotTheAmdRule) {
    OneSwitch s;
    s.downstream_acs = 0x001d;
    const Tree tree(s.build());
    std::ofstream(tree.root() / "proc/cpuinfo", std::ios::trunc)
        << "processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n\n";
    const Route r = tree.machine().route(gpu, nic);
    EXPECT_FALSE(r.cpu_rule);
    EXPECT_NE(r.cpu.find("no vendor_id"), std::string::npos) << r.cpu;
}

TEST(Sysfs, CpuinfoIsReadFromTheFirstProcessorOnly) {
    OneSwitch s;
    s.downstream_acs = 0x001d;
    const Tree tree(s.build());
    std::ofstream(tree.root() / "proc/cpuinfo", std::ios::trunc)
        << "\nprocessor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\n\nprocessor\t: 1\nvendor_id\t: AuthenticAMD\n"
           "cpu family\t: 25\n\n";
    EXPECT_FALSE(tree.machine().route(gpu, nic).cpu_rule);
    std::ofstream(tree.root() / "proc/cpuinfo", std::ios::trunc)
        << "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\n\nprocessor\t: 1\nvendor_id\t: GenuineIntel\n";
    EXPECT_TRUE(tree.machine().route(gpu, nic).cpu_rule);
}

TEST(Sysfs, MalformedCpuFamilyIsNoFamily) {
    OneSwitch s;
    s.downstream_acs = 0x001d;
    const Tree tree(s.build());
    std::ofstream(tree.root() / "proc/cpuinfo", std::ios::trunc) << "vendor_id\t: AuthenticAMD\ncpu family\t: 0x19\n";
    const Route r = tree.machine().route(gpu, nic);
    EXPECT_FALSE(r.cpu_rule);
    EXPECT_NE(r.cpu.find("without a cpu family"), std::string::npos) << r.cpu;
}

// A file under the root that is a link to a file outside it is never followed: the GPU's
// config as a link to this machine's /proc/self/status (or /dev/zero, which would read
// forever without a bound) makes the GPU unread, naming the link, rather than reading the
// host's file as its configuration space.
TEST(Sysfs, ConfigThatIsALinkOutOfTheRootIsRefused) {
    for (const char* target : {"/proc/self/status", "/dev/zero", "../../../../../../../../../../../proc/self/status"}) {
        const Tree tree(OneSwitch{}.build());
        fs::remove(tree.root() / gpu_dir / "config");
        fs::create_symlink(target, tree.root() / gpu_dir / "config");
        const Route r = tree.machine().route(gpu, nic);
        EXPECT_EQ(r.verdict, Verdict::Unread) << target;
        EXPECT_NE(r.unread.find("config: is a symbolic link, not a file"), std::string::npos) << r.unread;
    }
}

// An ID file that is a link to a file outside the root (one that reads as a good vendor
// ID) leaves the function out, as a malformed one does: it is never followed.
TEST(Sysfs, IdFileThatIsALinkOutOfTheRootLeavesTheFunctionOut) {
    const Tree tree(OneSwitch{}.build());
    test::TempDir outside;
    std::ofstream(outside.path() / "vendor") << "0x10de\n";
    fs::remove(tree.root() / gpu_dir / "vendor");
    fs::create_symlink(outside.path() / "vendor", tree.root() / gpu_dir / "vendor");
    EXPECT_FALSE(listed(tree.machine(), gpu));
    EXPECT_TRUE(listed(tree.machine(), nic));
}

// proc/cpuinfo reached through a link out of the root (a directory link, proc -> /proc)
// is read inside the root: there is no cpuinfo there, so the CPU is unknown.
TEST(Sysfs, CpuinfoBehindADirectoryLinkIsReadInsideTheRoot) {
    OneSwitch s;
    s.downstream_acs = 0x001d;
    const Tree tree(s.build());
    fs::remove_all(tree.root() / "proc");
    fs::create_symlink("/proc", tree.root() / "proc");
    const Route r = tree.machine().route(gpu, nic);
    EXPECT_NE(r.cpu.find("unknown ("), std::string::npos) << r.cpu;
    EXPECT_FALSE(r.cpu_rule);
}

// A FIFO in place of a file is refused at once (a read would wait for a writer forever).
TEST(Sysfs, FifoInPlaceOfAFileIsRefusedWithoutWaiting) {
    const Tree tree(OneSwitch{}.build());
    fs::remove(tree.root() / gpu_dir / "config");
    ASSERT_EQ(::mkfifo((tree.root() / gpu_dir / "config").c_str(), 0600), 0);
    const Route r = tree.machine().route(gpu, nic);
    EXPECT_EQ(r.verdict, Verdict::Unread);
    EXPECT_NE(r.unread.find("config: not a regular file"), std::string::npos) << r.unread;
}

// physfn is a link where sysfs makes one: a file or FIFO of that name is no physfn (found
// by tests/fuzz/sysfs_tree: the function climbed from its own directory, its own bridge).
TEST(Sysfs, PhysfnThatIsNoLinkIsNoPhysfn) {
    const Tree tree(OneSwitch{}.build());
    const Route before = tree.machine().route(gpu, nic);
    std::ofstream(tree.root() / gpu_dir / "physfn") << "0000:03:00.0\n";
    const Route r = tree.machine().route(gpu, nic);
    EXPECT_EQ(r.verdict, before.verdict);
    EXPECT_EQ(r.distance, before.distance);
    EXPECT_EQ(r.explain(), before.explain());
}

// sysfs links every function: an entry of sys/bus/pci/devices that is a directory is no
// function, for functions() and for routes alike (before, ls and topo took it and
// `rig snapshot` failed on it with "File exists").
TEST(Sysfs, DeviceEntryThatIsADirectoryIsNoFunction) {
    const Tree tree(OneSwitch{}.build());
    const fs::path entry = tree.root() / "sys/bus/pci/devices" / gpu;
    fs::remove(entry);
    fs::create_directory(entry);
    for (const char* name : {"vendor", "device", "class", "config"})
        fs::copy_file(tree.root() / gpu_dir / name, entry / name);
    EXPECT_FALSE(listed(tree.machine(), gpu));
    const Route r = tree.machine().route(gpu, nic);
    EXPECT_EQ(r.verdict, Verdict::Unread);
    EXPECT_NE(r.unread.find("is not a symbolic link"), std::string::npos) << r.unread;
}

}  // namespace
}  // namespace rig::pci
