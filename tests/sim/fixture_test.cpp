// The sysfs tree a topology is written as (rig/sim/fixture.hpp): its directories, files
// and links as Linux lays them out.
#include "rig/sim/fixture.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "../support/temp_dir.hpp"

namespace rig::sim {
namespace {

namespace fs = std::filesystem;

std::string text(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

struct Written {
    Topology t{Cpu::amd(0x19)};
    FunctionRef rp, pf, vf, ssd;
    Written() {
        const auto h = t.host_bridge(0, 0);
        t.add(h, Spec::root_complex(0x1022, 0x1480));
        rp = t.add(h, Spec::root_port(1, 1, 0x1022, 0x1483, 0x001d));
        auto nic = Spec::endpoint(0, 0, 0x14e4, 0x1750, 0x020000);
        nic.driver = "bnxt_en";
        nic.numa_node = 1;
        nic.iommu_group = 12;
        pf = t.add(rp, nic);
        vf = t.add_vf(pf, Spec::endpoint(0, 1, 0x14e4, 0x1806, 0x020000));
        const auto vmd = t.add(h, Spec::endpoint(0x0e, 0, 0x8086, 0x28c0, 0x010400));
        ssd = t.add(t.add(t.vmd_host_bridge(vmd, 0x10000, 0xe0), Spec::root_port(6, 0, 0x8086, 0x347a)),
                    Spec::endpoint(0, 0, 0x144d, 0xa80a, 0x010802));
        const auto hv = t.host_bridge(0x0003, 0, "LNXSYSTM:00/LNXSYBUS:00/ACPI0004:00/VMBUS:00/guid");
        t.add(hv, Spec::endpoint(0, 0, 0x10de, 0x20b0, 0x030200));
    }
};

TEST(Fixture, FunctionDirectoriesNestBelowTheirBridges) {
    Written w;
    test::TempDir dir;
    ASSERT_TRUE(write_sysfs(w.t, dir.path()));
    EXPECT_EQ(sysfs_dir(w.t, w.pf), fs::path("sys/devices/pci0000:00/0000:00:01.1/0000:01:00.0"));
    EXPECT_EQ(sysfs_dir(w.t, w.vf), fs::path("sys/devices/pci0000:00/0000:00:01.1/0000:01:00.1"));
    EXPECT_EQ(sysfs_dir(w.t, w.ssd),
              fs::path("sys/devices/pci0000:00/0000:00:0e.0/pci10000:e0/10000:e0:06.0/10000:e1:00.0"));
    for (const auto* path :
         {"sys/devices/pci0000:00/0000:00:01.1/0000:01:00.0/config",
          "sys/devices/pci0000:00/0000:00:0e.0/pci10000:e0/10000:e0:06.0/10000:e1:00.0/vendor",
          "sys/devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0004:00/VMBUS:00/guid/pci0003:00/0003:00:00.0/class"})
        EXPECT_TRUE(fs::exists(dir.path() / path)) << path;
}

TEST(Fixture, FilesHoldLinuxFormats) {
    Written w;
    test::TempDir dir;
    ASSERT_TRUE(write_sysfs(w.t, dir.path()));
    const fs::path nic = dir.path() / sysfs_dir(w.t, w.pf);
    EXPECT_EQ(text(nic / "vendor"), "0x14e4\n");
    EXPECT_EQ(text(nic / "device"), "0x1750\n");
    EXPECT_EQ(text(nic / "class"), "0x020000\n");
    EXPECT_EQ(text(nic / "numa_node"), "1\n");
    EXPECT_EQ(text(nic / "config").size(), 4096u);
    const auto config = w.t.config_space(w.pf);
    EXPECT_EQ(text(nic / "config"), std::string(config.begin(), config.end()));
    const std::string resource = text(nic / "resource");
    EXPECT_EQ(resource.substr(0, 57), "0x0000004000000000 0x0000004000ffffff 0x0000000000102200\n");
    const fs::path port = dir.path() / sysfs_dir(w.t, w.rp);
    EXPECT_EQ(text(port / "secondary_bus_number"), "1\n");
    EXPECT_EQ(text(port / "subordinate_bus_number"), "1\n");
    EXPECT_EQ(text(port / "numa_node"), "-1\n");
    EXPECT_EQ(text(dir.path() / "sys/devices/pci0000:00/0000:00:00.0/config").size(), 256u);
    // drivers/pci/pci-sysfs.c: pci_speed_string() and the width in decimal.
    EXPECT_EQ(text(nic / "current_link_speed"), "16.0 GT/s PCIe\n");
    EXPECT_EQ(text(nic / "current_link_width"), "16\n");
    EXPECT_EQ(text(nic / "max_link_speed"), "16.0 GT/s PCIe\n");
    EXPECT_EQ(text(nic / "max_link_width"), "16\n");
    const fs::path vf = dir.path() / sysfs_dir(w.t, w.vf);
    EXPECT_EQ(text(vf / "current_link_speed"), "Unknown\n");  // a VF's link registers are reserved
    EXPECT_EQ(text(vf / "current_link_width"), "0\n");
    EXPECT_FALSE(fs::exists(dir.path() / "sys/devices/pci0000:00/0000:00:00.0/current_link_speed"));
}

TEST(Fixture, LinksAreRelativeAndResolve) {
    Written w;
    test::TempDir dir;
    ASSERT_TRUE(write_sysfs(w.t, dir.path()));
    const fs::path devices = dir.path() / "sys/bus/pci/devices";
    EXPECT_EQ(fs::read_symlink(devices / "0000:01:00.0"),
              fs::path("../../../devices/pci0000:00/0000:00:01.1/0000:01:00.0"));
    EXPECT_EQ(fs::canonical(devices / "10000:e1:00.0"), fs::canonical(dir.path() / sysfs_dir(w.t, w.ssd)));
    const fs::path nic = dir.path() / sysfs_dir(w.t, w.pf);
    EXPECT_EQ(fs::read_symlink(nic / "driver"), fs::path("../../../../bus/pci/drivers/bnxt_en"));
    EXPECT_TRUE(fs::is_directory(nic / "driver"));
    EXPECT_EQ(fs::read_symlink(nic / "iommu_group").filename(), "12");
    EXPECT_TRUE(fs::is_directory(dir.path() / "sys/kernel/iommu_groups/12/devices/0000:01:00.0"));
    EXPECT_EQ(fs::read_symlink(nic / "virtfn0"), fs::path("../0000:01:00.1"));
    const fs::path vf = dir.path() / sysfs_dir(w.t, w.vf);
    EXPECT_EQ(fs::read_symlink(vf / "physfn"), fs::path("../0000:01:00.0"));
    EXPECT_FALSE(fs::exists(vf / "driver"));
    EXPECT_FALSE(fs::exists(nic / "physfn"));
}

TEST(Fixture, CpuinfoNamesTheTopologysCpu) {
    Written w;
    test::TempDir dir;
    ASSERT_TRUE(write_sysfs(w.t, dir.path()));
    const std::string cpuinfo = text(dir.path() / "proc/cpuinfo");
    EXPECT_EQ(cpuinfo.substr(0, cpuinfo.find("model\t")),
              "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\n");
    EXPECT_NE(cpuinfo.find("processor\t: 1\n"), std::string::npos);
}

TEST(Fixture, ConfigBytesLimitTruncatesEveryConfig) {
    Written w;
    test::TempDir dir;
    ASSERT_TRUE(write_sysfs(w.t, dir.path(), 64));
    EXPECT_EQ(text(dir.path() / sysfs_dir(w.t, w.pf) / "config").size(), 64u);
    EXPECT_EQ(text(dir.path() / "sys/devices/pci0000:00/0000:00:00.0/config").size(), 64u);
}

TEST(Fixture, UnwritableRootIsErrorNamingThePath) {
    Written w;
    test::TempDir dir;
    std::ofstream(dir.path() / "file") << "x";
    const auto r = write_sysfs(w.t, dir.path() / "file");
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().find((dir.path() / "file").string()), std::string::npos) << r.error();
}

}  // namespace
}  // namespace rig::sim
