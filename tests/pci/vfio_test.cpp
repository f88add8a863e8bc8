// The local VFIO path (rig/src/local_ops.cpp and the vfio_*.cpp it stands on) against a
// fixture sysfs tree and a kernel that plays VFIO's part (vfio_fake_kernel.hpp): what a
// take refuses and why, the order of the container's and iommufd's calls, the argsz
// retry, the MSI-X hole, DMA mapping and the give-back. And this machine, which has no
// VFIO: a take of each of its functions is an Error naming the reason.
#include <gtest/gtest.h>
#include <sys/file.h>

#include <fstream>

#include "../support/temp_dir.hpp"
#include "local_ops.hpp"
#include "rig/pci/config.hpp"
#include "rig/pci/function.hpp"
#include "rig/sim/fixture.hpp"
#include "vfio_device.hpp"
#include "vfio_fake_kernel.hpp"
#include "vfio_peer.hpp"
#include "vfio_info.hpp"

namespace rig::test {
namespace {

namespace fs = std::filesystem;
namespace cfg = pci::config;
using pci::Function;
using pci::vfio::Area;
using pci::vfio::MsixTable;
using pci::vfio::RegionInfo;

constexpr const char* bus = "0000:01:00.0";
constexpr std::uint64_t page = 4096;

void put(std::vector<std::uint8_t>& c, std::uint32_t at, unsigned n, std::uint32_t v) {
    for (unsigned i = 0; i < n; ++i) c[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
}

// One endpoint below a root port, its sysfs tree under a directory of its own, and a kernel
// whose VFIO has it bound to vfio-pci in IOMMU group 5: BAR0 64 KiB of registers with an
// MSI-X table of 8 vectors at 0x2000, BAR2 1 MiB prefetchable.
struct Local {
    TempDir dir;
    std::shared_ptr<FakeKernel> kernel = std::make_shared<FakeKernel>();
    std::string driver = "vfio-pci";
    std::optional<unsigned> group = 5;
    // A second function below the same root port (which has no ACS, so it shares the
    // group), bound to this driver; none where empty.
    std::string neighbour;

    std::string dev(const std::string& path) const { return dir.path().string() + path; }

    pci::Machine machine() {
        sim::Topology t(sim::Cpu::intel());
        const auto h = t.host_bridge(0, 0);
        const auto rp = t.add(h, sim::Spec::root_port(1, 0, 0x8086, 0x6f02));
        auto s = sim::Spec::endpoint(0, 0, 0x14e4, 0x1750, 0x020000);
        s.bars[0] = {64 << 10, false, true};
        s.bars[2] = {1 << 20, true, true};
        s.driver = driver;
        s.iommu_group = group;
        t.add(rp, s);
        if (!neighbour.empty()) {
            auto n = sim::Spec::endpoint(0, 1, 0x10de, 0x2335, 0x030200);
            n.bars[0] = {};
            n.bars[2] = {1 << 20, true, true};
            n.driver = neighbour;
            n.iommu_group = 9;
            t.add(rp, n);
        }
        if (auto r = sim::write_sysfs(t, dir.path()); !r) throw std::runtime_error(r.error());

        kernel->bus = bus;
        kernel->regions[0] = {
            VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE | VFIO_REGION_INFO_FLAG_MMAP, 64 << 10, {}, false};
        kernel->regions[2] = {
            VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE | VFIO_REGION_INFO_FLAG_MMAP, 1 << 20, {}, false};
        auto& c = kernel->config;
        put(c, cfg::vendor_id, 2, 0x14e4);
        put(c, cfg::status, 2, cfg::status_capabilities_list);
        put(c, cfg::capabilities_pointer, 1, 0x40);
        put(c, 0x40, 1, cfg::capability_pci_express);
        put(c, 0x41, 1, 0x80);
        put(c, 0x80, 1, cfg::capability_msix);
        put(c, 0x80 + cfg::msix_message_control, 2, 7);  // 8 vectors
        put(c, 0x80 + cfg::msix_table, 4, 0x2000 | 0);   // BAR0 + 0x2000
        put(c, 0x80 + cfg::msix_pba, 4, 0x2080 | 0);
        kernel->msix_count = 8;
        return pci::Machine::make("fixture", pci::local_ops(dir.path(), kernel), dir.path());
    }
    void with_vfio() {
        kernel->nodes.insert(dev("/dev/vfio/vfio"));
        if (group) kernel->nodes.insert(dev("/dev/vfio/" + std::to_string(*group)));
    }
    void with_iommufd() {
        kernel->nodes.insert(dev("/dev/iommu"));
        kernel->nodes.insert(dev("/dev/vfio/devices/vfio0"));
        fs::create_directories(dir.path() / "sys/devices/pci0000:00/0000:00:01.0" / bus / "vfio-dev/vfio0");
    }
};

std::vector<std::string> ioctls(const std::vector<std::string>& log) {
    std::vector<std::string> out;
    for (const auto& line : log)
        if (line.rfind("pread", 0) != 0 && line.rfind("pwrite", 0) != 0) out.push_back(line);
    return out;
}

// --- The pure pieces -------------------------------------------------------------------

RegionInfo bar(std::uint64_t bytes, bool mmap = true) {
    RegionInfo r;
    r.index = 0;
    r.flags = VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE | (mmap ? VFIO_REGION_INFO_FLAG_MMAP : 0);
    r.bytes = bytes;
    return r;
}

TEST(MsixHole, TableInTheMiddleLeavesThePagesAroundIt) {
    const auto areas = pci::vfio::mappable_areas(bar(64 << 10), MsixTable{0, 0x2000, 8 * 16}, page);
    EXPECT_EQ(areas, (std::vector<Area>{{0, 0x2000}, {0x3000, 0xd000}}));
}

TEST(MsixHole, TableAcrossAPageBoundaryTakesBothPages) {
    const auto areas = pci::vfio::mappable_areas(bar(64 << 10), MsixTable{0, 0x2ff0, 2 * 16}, page);
    EXPECT_EQ(areas, (std::vector<Area>{{0, 0x2000}, {0x4000, 0xc000}}));
}

TEST(MsixHole, TableAtTheStartOrEnd) {
    EXPECT_EQ(pci::vfio::mappable_areas(bar(16 << 10), MsixTable{0, 0, 64 * 16}, page),
              (std::vector<Area>{{0x1000, 0x3000}}));
    EXPECT_EQ(pci::vfio::mappable_areas(bar(16 << 10), MsixTable{0, 0x3800, 16}, page),
              (std::vector<Area>{{0, 0x3000}}));
}

TEST(MsixHole, TableInAnotherBarLeavesThisOneWhole) {
    EXPECT_EQ(pci::vfio::mappable_areas(bar(16 << 10), MsixTable{4, 0, 16}, page), (std::vector<Area>{{0, 0x4000}}));
}

TEST(MsixHole, MsixMappableKernelLeavesNoHole) {
    RegionInfo r = bar(16 << 10);
    r.msix_mappable = true;
    EXPECT_EQ(pci::vfio::mappable_areas(r, MsixTable{0, 0x1000, 16}, page), (std::vector<Area>{{0, 0x4000}}));
}

TEST(MsixHole, SparseAreasAreTheKernelsWordWholePagesOnly) {
    RegionInfo r = bar(16 << 10);
    r.sparse = std::vector<Area>{{0, 0x1000}, {0x2000, 0x1800}, {0x3a00, 0x100}};
    EXPECT_EQ(pci::vfio::mappable_areas(r, MsixTable{0, 0x1000, 16}, page),
              (std::vector<Area>{{0, 0x1000}, {0x2000, 0x1000}}));
}

TEST(MsixHole, RegionWithoutMmapHasNoAreas) {
    EXPECT_TRUE(pci::vfio::mappable_areas(bar(16 << 10, false), std::nullopt, page).empty());
}

// A kernel whose INFO ioctl raises argsz `raises` times: to `wanted` at first, then by 64
// bytes more each time.
class Raising final : public Kernel {
public:
    Raising(int raises, std::uint32_t wanted) : raises_(raises), wanted_(wanted) {}
    std::vector<std::uint32_t> given;
    bool exists(const std::string&) override { return false; }
    Sys<int> open(const std::string&, int) override { return std::unexpected(ENOENT); }
    void close(int) override {}
    Sys<int> ioctl(int, unsigned long, void* arg) override {
        std::uint32_t argsz = 0;
        std::memcpy(&argsz, arg, 4);
        given.push_back(argsz);
        if (raises_-- > 0) {
            const std::uint32_t more = std::max(wanted_, argsz + 64);
            std::memcpy(arg, &more, 4);
        }
        return 0;
    }
    Sys<std::byte*> mmap(std::byte*, std::size_t, int, int, int, std::uint64_t) override {
        return std::unexpected(ENOMEM);
    }
    void munmap(std::byte*, std::size_t) override {}
    Sys<std::size_t> pread(int, std::span<std::byte>, std::uint64_t) override { return std::unexpected(EIO); }
    Sys<std::size_t> pwrite(int, std::span<const std::byte>, std::uint64_t) override { return std::unexpected(EIO); }
    Sys<void> lock(int) override { return {}; }
    Sys<int> eventfd() override { return std::unexpected(EMFILE); }
    Sys<bool> wait(int, std::chrono::nanoseconds) override { return false; }

private:
    int raises_;
    std::uint32_t wanted_;
};

TEST(VfioInfo, ArgszRetryAsksAgainWithTheSizeTheKernelWants) {
    Raising kernel(1, 96);
    vfio_region_info query{};
    query.argsz = sizeof query;
    auto info =
        pci::vfio::get_info(kernel, 3, VFIO_DEVICE_GET_REGION_INFO, rig::little_endian::bytes_of(query), "region");
    ASSERT_TRUE(info) << info.error();
    EXPECT_EQ(kernel.given, (std::vector<std::uint32_t>{sizeof(vfio_region_info), 96}));
    EXPECT_EQ(info->size(), 96u);
}

TEST(VfioInfo, KernelThatKeepsRaisingArgszIsAnError) {
    Raising kernel(100, 200);
    vfio_region_info query{};
    query.argsz = sizeof query;
    auto info = pci::vfio::get_info(kernel, 3, VFIO_DEVICE_GET_REGION_INFO, rig::little_endian::bytes_of(query),
                                    "0000:01:00.0: region");
    ASSERT_FALSE(info);
    EXPECT_EQ(info.error(), "0000:01:00.0: region: the kernel kept raising argsz after 4 tries");
}

TEST(VfioInfo, HugeArgszIsRefused) {
    Raising kernel(1, 1 << 20);
    vfio_region_info query{};
    query.argsz = sizeof query;
    auto info = pci::vfio::get_info(kernel, 3, VFIO_DEVICE_GET_REGION_INFO, rig::little_endian::bytes_of(query), "r");
    ASSERT_FALSE(info);
    EXPECT_NE(info.error().find("1048576 bytes"), std::string::npos) << info.error();
}

TEST(VfioInfo, CapabilityChainEndsWhereItLoopsOrLeavesTheBuffer) {
    std::vector<std::byte> buffer(64);
    const auto header = [&](std::size_t at, std::uint16_t id, std::uint32_t next) {
        vfio_info_cap_header h{id, 1, next};
        std::memcpy(buffer.data() + at, &h, sizeof h);
    };
    header(16, 1, 32);
    header(32, 3, 16);  // back to the first: a loop
    auto chain = pci::vfio::capabilities(buffer, 16);
    ASSERT_EQ(chain.size(), 2u);
    EXPECT_EQ(chain[0].id, 1);
    EXPECT_EQ(chain[1].id, 3);
    header(32, 3, 60);  // past the end of the buffer
    EXPECT_EQ(pci::vfio::capabilities(buffer, 16).size(), 2u);
    EXPECT_TRUE(pci::vfio::capabilities(buffer, 0).empty());
}

// --- Takes that are refused -------------------------------------------------------------

TEST(LocalTake, FunctionBoundToAnotherDriverIsAnErrorNamingIt) {
    Local local;
    local.driver = "amdgpu";
    local.with_vfio();
    auto f = Function::take(local.machine(), bus);
    ASSERT_FALSE(f);
    EXPECT_EQ(f.error().rfind("0000:01:00.0 is bound to the driver amdgpu", 0), 0u) << f.error();
    EXPECT_TRUE(local.kernel->log.empty());
}

TEST(LocalTake, NoVfioIsAnError) {
    Local local;
    auto f = Function::take(local.machine(), bus);
    ASSERT_FALSE(f);
    EXPECT_EQ(f.error().rfind("0000:01:00.0: VFIO is not available", 0), 0u) << f.error();
}

TEST(LocalTake, FunctionBoundToNoDriverIsAnError) {
    Local local;
    local.driver = "";
    local.with_vfio();
    auto f = Function::take(local.machine(), bus);
    ASSERT_FALSE(f);
    EXPECT_EQ(f.error().rfind("0000:01:00.0 is bound to no driver", 0), 0u) << f.error();
}

TEST(LocalTake, NoSuchFunctionIsAnError) {
    Local local;
    local.with_vfio();
    auto f = Function::take(local.machine(), "0000:07:00.0");
    ASSERT_FALSE(f);
    EXPECT_EQ(f.error().rfind("0000:07:00.0: no such function", 0), 0u) << f.error();
}

TEST(LocalTake, ConfigFileLockedByAnotherIsTakenByAnotherProcess) {
    Local local;
    local.with_vfio();
    auto machine = local.machine();
    const fs::path config = local.dir.path() / "sys/bus/pci/devices" / bus / "config";
    const int fd = ::open(config.c_str(), O_RDONLY);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
    auto f = Function::take(machine, bus);
    ::close(fd);
    ASSERT_FALSE(f);
    EXPECT_EQ(f.error().rfind("0000:01:00.0 is taken by another process", 0), 0u) << f.error();
    EXPECT_TRUE(Function::take(machine, bus));  // the lock went with its file
}

TEST(LocalTake, SecondTakeInOneProcessIsRefusedByTheLock) {
    Local local;
    local.with_vfio();
    auto machine = local.machine();
    auto first = Function::take(machine, bus);
    ASSERT_TRUE(first) << first.error();
    auto second = Function::take(machine, bus);
    ASSERT_FALSE(second);
    EXPECT_NE(second.error().find("is taken by another process"), std::string::npos);
    EXPECT_TRUE(first->release());
    EXPECT_TRUE(Function::take(machine, bus));
}

TEST(LocalTake, GroupNotViableIsAnError) {
    Local local;
    local.with_vfio();
    local.kernel->viable = false;
    auto f = Function::take(local.machine(), bus);
    ASSERT_FALSE(f);
    EXPECT_EQ(f.error(),
              "0000:01:00.0: IOMMU group 5 is not viable: every function of the group must be bound to "
              "vfio-pci or to no driver");
}

// The kernel's refusal names what sysfs says blocks the group: the function sharing it
// and its driver, as the simulator's take does.
TEST(LocalTake, GroupNotViableNamesTheFunctionAndTheDriverThatHoldIt) {
    Local local;
    local.neighbour = "nvidia";
    local.with_vfio();
    local.kernel->viable = false;
    auto f = Function::take(local.machine(), bus);
    ASSERT_FALSE(f);
    EXPECT_EQ(f.error(),
              "0000:01:00.0: IOMMU group 5 is not viable: 0000:01:00.1 in it is bound to the driver nvidia; VFIO "
              "takes a function only where every function of its group is bound to vfio-pci, to no driver, or "
              "is a bridge: unbind 0000:01:00.1 from nvidia (or bind it to vfio-pci) (VFIO_GROUP_GET_STATUS: not "
              "viable)");
}

TEST(LocalTake, SetContainerRefusedForTheGroupsDmaNamesTheDriverThatHoldsIt) {
    Local local;
    local.neighbour = "nvidia";
    local.with_vfio();
    local.kernel->set_container_error = EPERM;
    auto f = Function::take(local.machine(), bus);
    ASSERT_FALSE(f);
    EXPECT_NE(
        f.error().find("0000:01:00.0: IOMMU group 5 is not viable: 0000:01:00.1 in it is bound to the driver nvidia"),
        std::string::npos)
        << f.error();
    EXPECT_NE(f.error().find("(VFIO_GROUP_SET_CONTAINER: "), std::string::npos) << f.error();
}

TEST(LocalTake, IommufdBindRefusedForTheGroupsDmaNamesTheDriverThatHoldsIt) {
    Local local;
    local.neighbour = "amdgpu";
    local.with_iommufd();
    local.kernel->bind_error = EPERM;
    auto f = Function::take(local.machine(), bus);
    ASSERT_FALSE(f);
    EXPECT_NE(
        f.error().find("0000:01:00.0: IOMMU group 5 is not viable: 0000:01:00.1 in it is bound to the driver amdgpu"),
        std::string::npos)
        << f.error();
    EXPECT_NE(f.error().find("(VFIO_DEVICE_BIND_IOMMUFD: "), std::string::npos) << f.error();
}

TEST(LocalTake, IommufdBindRefusedWithNothingInTheGroupSaysWhatTheKernelSaid) {
    Local local;
    local.with_iommufd();
    local.kernel->bind_error = EPERM;
    auto f = Function::take(local.machine(), bus);
    ASSERT_FALSE(f);
    EXPECT_EQ(f.error().rfind("0000:01:00.0: VFIO_DEVICE_BIND_IOMMUFD failed: ", 0), 0u) << f.error();
}

TEST(LocalTake, GroupOpenElsewhereIsTakenByAnotherProcess) {
    Local local;
    local.with_vfio();
    local.kernel->group_open_error = EBUSY;
    auto f = Function::take(local.machine(), bus);
    ASSERT_FALSE(f);
    EXPECT_EQ(f.error().rfind("0000:01:00.0 is taken by another process: its IOMMU group 5", 0), 0u) << f.error();
}

TEST(LocalTake, NoIommuGroupIsAnError) {
    Local local;
    local.group = std::nullopt;
    local.with_vfio();
    auto f = Function::take(local.machine(), bus);
    ASSERT_FALSE(f);
    EXPECT_EQ(f.error().rfind("0000:01:00.0: has no IOMMU group", 0), 0u) << f.error();
}

// --- The container way -----------------------------------------------------------------

TEST(LocalTake, ContainerCallsComeInTheKernelsOrder) {
    Local local;
    local.with_vfio();
    auto f = Function::take(local.machine(), bus);
    ASSERT_TRUE(f) << f.error();
    EXPECT_EQ(f->addressing(), pci::Addressing::Iommu);
    EXPECT_FALSE(f->inherited());
    const std::string type1v2 = std::to_string(VFIO_TYPE1v2_IOMMU);
    const auto calls = ioctls(local.kernel->log);
    const std::vector<std::string> expected{"GET_API_VERSION",
                                            "GROUP_GET_STATUS",
                                            "GROUP_SET_CONTAINER",
                                            "CHECK_EXTENSION " + type1v2,
                                            "SET_IOMMU " + type1v2,
                                            "GROUP_GET_DEVICE_FD",
                                            "IOMMU_GET_INFO 24",
                                            "IOMMU_GET_INFO 72",  // the argsz retry for the IOVA ranges
                                            "DEVICE_GET_INFO",
                                            "DEVICE_GET_REGION_INFO 0 32",
                                            "DEVICE_GET_REGION_INFO 1 32",
                                            "DEVICE_GET_REGION_INFO 2 32",
                                            "DEVICE_GET_REGION_INFO 3 32",
                                            "DEVICE_GET_REGION_INFO 4 32",
                                            "DEVICE_GET_REGION_INFO 5 32",
                                            "DEVICE_GET_REGION_INFO 7 32",
                                            "DEVICE_GET_IRQ_INFO",
                                            "DEVICE_SET_IRQS 8"};
    EXPECT_EQ(calls, expected);
    EXPECT_EQ(f->bar(0)->bytes, 64u << 10);
    EXPECT_EQ(f->bar(2)->bytes, 1u << 20);
    EXPECT_TRUE(f->bar(2)->prefetchable);
    EXPECT_EQ(f->bar(1), std::nullopt);
}

TEST(LocalTake, SparseRegionInfoComesThroughTheArgszRetry) {
    Local local;
    local.with_vfio();
    auto machine = local.machine();
    local.kernel->regions[0].sparse = {{0, 0x2000}, {0x3000, 0xd000}};
    auto f = Function::take(machine, bus);
    ASSERT_TRUE(f) << f.error();
    const auto calls = ioctls(local.kernel->log);
    const std::string needed = std::to_string(sizeof(vfio_region_info) + 8 + 8 + 2 * 16);
    ASSERT_NE(std::find(calls.begin(), calls.end(), "DEVICE_GET_REGION_INFO 0 " + needed), calls.end());
    auto inside = f->map(0, 0x3000, 0x1000);
    ASSERT_TRUE(inside) << inside.error();
    EXPECT_TRUE(inside->is_mapped());
    EXPECT_EQ(local.kernel->bar_mmaps,
              (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{0, 0x2000}, {0x3000, 0xd000}}));
}

TEST(LocalTake, BarIsMappedAroundTheMsixHoleAndTheHoleReadThroughTheFd) {
    Local local;
    local.with_vfio();
    auto f = Function::take(local.machine(), bus);
    ASSERT_TRUE(f) << f.error();
    auto registers = f->map(0, 0x1000, 0x1000);
    ASSERT_TRUE(registers) << registers.error();
    EXPECT_TRUE(registers->is_mapped());
    EXPECT_EQ(local.kernel->bar_mmaps,
              (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{0, 0x2000}, {0x3000, 0xd000}}));
    registers->write32(0x10, 0xabcd);  // plain memory in the fake: a mapped window is a pointer
    EXPECT_EQ(registers->read32(0x10), 0xabcdu);
    auto table = f->map(0, 0x2000, 0x100);
    ASSERT_TRUE(table) << table.error();
    EXPECT_FALSE(table->is_mapped());
    local.kernel->bar_registers[0x2004] = 0x5a;
    EXPECT_EQ(table->read8(4), 0x5a);
    EXPECT_EQ(local.kernel->log.back(), "pread 8196 1");
    table->write32(8, 0x01020304);
    EXPECT_EQ(local.kernel->bar_registers[0x2008], 0x04);
    // Across the hole's edge: not inside one area, so through the fd too.
    auto across = f->map(0, 0x1000, 0x2000);
    ASSERT_TRUE(across);
    EXPECT_FALSE(across->is_mapped());
    EXPECT_EQ(f->windows(), 3u);
}

TEST(LocalTake, ConfigGoesThroughTheConfigRegion) {
    Local local;
    local.with_vfio();
    auto f = Function::take(local.machine(), bus);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->config16(cfg::vendor_id), 0x14e4);
    EXPECT_EQ(f->capability(cfg::capability_msix), 0x80u);
    f->set_bus_master(true);
    EXPECT_EQ(local.kernel->config[cfg::command], cfg::command_bus_master);
    EXPECT_EQ(local.kernel->log.back(), "pwrite " + std::to_string(FakeKernel::region_offset(7) + 4) + " 2");
}

TEST(LocalTake, AllocDmaMapsItsIovaBelowTheBound) {
    Local local;
    local.with_vfio();
    auto f = Function::take(local.machine(), bus);
    ASSERT_TRUE(f);
    f->set_dma_bits(32);
    auto dma = f->alloc_dma(3 * page);
    ASSERT_TRUE(dma) << dma.error();
    ASSERT_EQ(dma->runs.size(), 1u);
    const auto iova = dma->runs[0].address.value;
    EXPECT_EQ(local.kernel->dma, (std::map<std::uint64_t, std::uint64_t>{{iova, 3 * page}}));
    EXPECT_LE(iova + 3 * page, std::uint64_t{1} << 32);
    EXPECT_GE(iova, 0xfef0'0000u);  // the highest IOVAs below 4 GiB, above the MSI window the kernel reserves
    dma->window.write64(0, 1);      // the process's own memory
    f->free_dma(*dma);
    EXPECT_TRUE(local.kernel->dma.empty());
    EXPECT_EQ(ioctls(local.kernel->log).back(), "IOMMU_UNMAP_DMA");
}

TEST(LocalTake, PinMapsTheProcessPagesAndUnpinUnmapsThem) {
    Local local;
    local.with_vfio();
    auto f = Function::take(local.machine(), bus);
    ASSERT_TRUE(f);
    alignas(4096) static std::byte pages[2 * 4096];
    auto runs = f->pin(pages, 2 * page);
    ASSERT_TRUE(runs) << runs.error();
    ASSERT_EQ(runs->size(), 1u);
    EXPECT_EQ(local.kernel->dma.at((*runs)[0].address.value), 2 * page);
    f->unpin(pages, 2 * page);
    EXPECT_TRUE(local.kernel->dma.empty());
}

TEST(LocalTake, ReleaseGivesEverythingBackAndClosesEveryFile) {
    Local local;
    local.with_vfio();
    auto f = Function::take(local.machine(), bus);
    ASSERT_TRUE(f);
    alignas(4096) static std::byte pages[4096];
    f->set_bus_master(true);
    ASSERT_TRUE(f->map(0, 0, 0x1000));
    ASSERT_TRUE(f->alloc_dma(page));
    ASSERT_TRUE(f->pin(pages, page));
    EXPECT_TRUE(f->release());
    EXPECT_EQ(local.kernel->config[cfg::command] & cfg::command_bus_master, 0);
    EXPECT_TRUE(local.kernel->dma.empty());
    EXPECT_EQ(local.kernel->open_fds(), 0u);
    const auto calls = ioctls(local.kernel->log);
    // The interrupts are disarmed, then the group leaves its container last.
    EXPECT_EQ(std::count(calls.begin(), calls.end(), "DEVICE_SET_IRQS 0"), 1);
    EXPECT_EQ(calls.back(), "GROUP_UNSET_CONTAINER");
}

TEST(LocalTake, InterruptWaitsOnItsVectorsEventfd) {
    Local local;
    local.with_vfio();
    auto f = Function::take(local.machine(), bus);
    ASSERT_TRUE(f);
    ASSERT_EQ(local.kernel->armed_eventfds.size(), 8u);
    EXPECT_FALSE(f->interrupt(1, std::chrono::milliseconds(0)));
    local.kernel->fire(1);
    EXPECT_FALSE(f->interrupt(0, std::chrono::milliseconds(0)));
    EXPECT_TRUE(f->interrupt(1, std::chrono::milliseconds(0)));
    EXPECT_FALSE(f->interrupt(1, std::chrono::milliseconds(0)));  // consumed
    EXPECT_FALSE(f->interrupt(8, std::chrono::milliseconds(0)));  // no such vector
}

TEST(LocalTake, ResetIsVfioDeviceReset) {
    Local local;
    local.with_vfio();
    auto f = Function::take(local.machine(), bus);
    ASSERT_TRUE(f);
    ASSERT_TRUE(f->reset());
    EXPECT_EQ(ioctls(local.kernel->log).back(), "DEVICE_RESET");
}

TEST(LocalTake, ResetWithoutAResetMethodIsAnError) {
    Local local;
    local.with_vfio();
    local.kernel->device_flags = VFIO_DEVICE_FLAGS_PCI;
    auto f = Function::take(local.machine(), bus);
    ASSERT_TRUE(f);
    auto r = f->reset();
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().rfind("0000:01:00.0: has no reset VFIO can use", 0), 0u) << r.error();
}

TEST(LocalTake, NoIommuGroupReachesPhysicalAddresses) {
    Local local;
    local.with_vfio();
    auto machine = local.machine();
    local.kernel->nodes.erase(local.dev("/dev/vfio/5"));
    local.kernel->nodes.insert(local.dev("/dev/vfio/noiommu-5"));
    std::ofstream(local.dir.path() / "sys/kernel/iommu_groups/5/name") << "vfio-noiommu\n";
    auto f = Function::take(machine, bus);
    ASSERT_TRUE(f) << f.error();
    EXPECT_EQ(f->addressing(), pci::Addressing::Physical);
    const auto calls = ioctls(local.kernel->log);
    EXPECT_NE(std::find(calls.begin(), calls.end(), "SET_IOMMU " + std::to_string(VFIO_NOIOMMU_IOMMU)), calls.end());
    auto dma = f->alloc_dma(2 * page, pci::Contiguity::Contiguous);
    ASSERT_TRUE(dma) << dma.error();
    // The fake pagemap gives page p the frame 0x1000 + p: consecutive pages, one run.
    const auto va = reinterpret_cast<std::uintptr_t>(dma->window.data());
    EXPECT_EQ(dma->runs, (std::vector<pci::Run>{{pci::DmaAddress{(0x1000 + va / page) * page}, 2 * page}}));
    EXPECT_TRUE(local.kernel->dma.empty());  // nothing to map without an IOMMU
    alignas(4096) static std::byte foreign[4096];
    EXPECT_FALSE(f->pin(foreign, page));
    auto inside = f->pin(dma->window.data() + page, page);
    ASSERT_TRUE(inside);
    EXPECT_EQ(*inside, (std::vector<pci::Run>{{dma->runs[0].address + page, page}}));
}

// --- The iommufd way ---------------------------------------------------------------------

TEST(LocalTake, IommufdCallsComeInTheKernelsOrder) {
    Local local;
    local.with_iommufd();
    auto machine = local.machine();
    local.kernel->iova_ranges = {{0, 0xfedf'ffff},
                                 {0xfef0'0000, 0x7fff'ffff'ffff},
                                 {0x8000'0000'0000, 0x8000'ffff'ffff},
                                 {0x9000'0000'0000, 0x9000'ffff'ffff},
                                 {0xa000'0000'0000, 0xa000'ffff'ffff}};
    auto f = Function::take(machine, bus);
    ASSERT_TRUE(f) << f.error();
    const auto calls = ioctls(local.kernel->log);
    const std::vector<std::string> head{"DEVICE_BIND_IOMMUFD", "IOAS_ALLOC",         "DEVICE_ATTACH_IOMMUFD_PT",
                                        "IOAS_IOVA_RANGES 4",  "IOAS_IOVA_RANGES 5", "DEVICE_GET_INFO"};
    ASSERT_GE(calls.size(), head.size());
    EXPECT_EQ(std::vector<std::string>(calls.begin(), calls.begin() + static_cast<long>(head.size())), head);
    auto dma = f->alloc_dma(page);
    ASSERT_TRUE(dma);
    EXPECT_EQ(ioctls(local.kernel->log).back(), "IOAS_MAP");
    EXPECT_GE(dma->runs[0].address.value, 0xa000'0000'0000u);  // top-down: the highest range
    EXPECT_TRUE(f->release());
    EXPECT_EQ(ioctls(local.kernel->log).back(), "IOAS_UNMAP");
    EXPECT_EQ(local.kernel->open_fds(), 0u);
}

// --- This machine --------------------------------------------------------------------------

TEST(ThisMachine, TakeOfEachFunctionIsAnErrorNamingTheReason) {
    if (fs::exists("/dev/vfio/vfio") || fs::exists("/dev/iommu")) GTEST_SKIP() << "this machine has VFIO";
    const pci::Machine local = pci::Machine::local();
    auto listed = local.functions();
    ASSERT_TRUE(listed) << listed.error();
    for (const auto& id : *listed) {
        auto f = Function::take(local, id.bus);
        ASSERT_FALSE(f) << id.bus;
        std::error_code ec;
        const fs::path driver = fs::read_symlink(fs::path("/sys/bus/pci/devices") / id.bus / "driver", ec);
        const std::string expected =
            ec ? id.bus + ": VFIO is not available" : id.bus + " is bound to the driver " + driver.filename().string();
        EXPECT_EQ(f.error().rfind(expected, 0), 0u) << f.error();
    }
}

// --- Peer BAR mappings (vfio_peer.hpp) --------------------------------------------------
// 0000:01:00.1 stands for a GPU: BAR2 1 MiB, bound to vfio-pci (its group is viable).

constexpr const char* peer_bus = "0000:01:00.1";

// The VFIO_DEVICE_FEATURE argument, pinned to bytes from the 6.19 uapi layout:
// vfio_device_feature {argsz, flags}, vfio_device_feature_dma_buf {region_index,
// open_flags, flags, nr_ranges}, vfio_region_dma_range {offset, length}.
TEST(PeerMap, DmabufRequestIsTheKernelsLayout) {
    const auto bytes = pci::vfio::dmabuf_request(2, 0x10000, 0x20000);
    ASSERT_EQ(bytes.size(), 40u);
    auto word = [&](std::size_t at) {
        std::uint32_t v;
        std::memcpy(&v, bytes.data() + at, 4);
        return v;
    };
    auto dword = [&](std::size_t at) {
        std::uint64_t v;
        std::memcpy(&v, bytes.data() + at, 8);
        return v;
    };
    EXPECT_EQ(word(0), 40u);        // argsz
    EXPECT_EQ(word(4), 0x1'000bu);  // VFIO_DEVICE_FEATURE_GET | 11
    EXPECT_EQ(word(8), 2u);         // region_index
    EXPECT_EQ(word(12), static_cast<std::uint32_t>(O_RDWR | O_CLOEXEC));
    EXPECT_EQ(word(16), 0u);  // flags
    EXPECT_EQ(word(20), 1u);  // nr_ranges
    EXPECT_EQ(dword(24), 0x10000u);
    EXPECT_EQ(dword(32), 0x20000u);
}

// A Local with the GPU beside the NIC, and its BAR's sysfs resource2 file as a plain file
// (the kernel's would map the BAR).
struct Peers : Local {
    Peers() { neighbour = "vfio-pci"; }
    void with_resource() {
        std::ofstream(dir.path() / "sys/bus/pci/devices" / peer_bus / "resource2", std::ios::binary)
            << std::string(1 << 20, '\0');
    }
};

TEST(PeerMap, Type1MapsASysfsResourceMappingWhereTheProcessDoesNotHoldTheProvider) {
    Peers local;
    const auto machine = local.machine();
    local.with_vfio();
    local.with_resource();
    auto f = Function::take(machine, bus);
    ASSERT_TRUE(f) << f.error();
    auto run = f->map_peer(peer_bus, 2, 0x10000, 64 << 10);
    ASSERT_TRUE(run) << run.error();
    EXPECT_EQ(run->bytes, 64u << 10);
    ASSERT_TRUE(local.kernel->dma.contains(run->address.value));
    EXPECT_EQ(local.kernel->dma.at(run->address.value), 64u << 10);
    EXPECT_EQ(f->pins(), 1u);
    f->unmap_peer(*run);
    EXPECT_FALSE(local.kernel->dma.contains(run->address.value));
}

TEST(PeerMap, Type1WithoutTheResourceFileSaysWhichWayAndWhy) {
    Peers local;
    local.with_vfio();
    auto f = Function::take(local.machine(), bus);
    ASSERT_TRUE(f) << f.error();
    auto run = f->map_peer(peer_bus, 2, 0, 64 << 10);
    ASSERT_FALSE(run);
    EXPECT_EQ(
        run.error().rfind("0000:01:00.0: cannot map 64 KiB of 0000:01:00.1 BAR2 into its IOMMU domain: "
                          "VFIO_IOMMU_MAP_DMA of a mapping of 0000:01:00.1's sysfs resource2 (this process does not "
                          "hold 0000:01:00.1): there is no ",
                          0),
        0u)
        << run.error();
    EXPECT_EQ(f->pins(), 0u);
}

TEST(PeerMap, Type1MapDmaRefusedSaysTheWayAndTheErrno) {
    Peers local;
    const auto machine = local.machine();
    local.with_vfio();
    local.with_resource();
    local.kernel->map_dma_error = EFAULT;
    auto f = Function::take(machine, bus);
    ASSERT_TRUE(f) << f.error();
    auto run = f->map_peer(peer_bus, 2, 0, 64 << 10);
    ASSERT_FALSE(run);
    EXPECT_NE(run.error().find("VFIO_IOMMU_MAP_DMA of a mapping of 0000:01:00.1's sysfs resource2"), std::string::npos)
        << run.error();
    EXPECT_NE(run.error().find("VFIO_IOMMU_MAP_DMA of 64 KiB at IOVA "), std::string::npos) << run.error();
    EXPECT_NE(run.error().find("(errno 14)"), std::string::npos) << run.error();
}

TEST(PeerMap, ARangeOutsideTheProvidersBarIsAnErrorNamingIt) {
    Peers local;
    local.with_vfio();
    auto f = Function::take(local.machine(), bus);
    ASSERT_TRUE(f) << f.error();
    auto run = f->map_peer(peer_bus, 2, 1 << 20, 4096);
    ASSERT_FALSE(run);
    EXPECT_NE(run.error().find("bytes [0x100000, 0x101000) lie outside 0000:01:00.1 BAR2 (1 MiB)"), std::string::npos)
        << run.error();
    auto none = f->map_peer(peer_bus, 4, 0, 4096);
    ASSERT_FALSE(none);
    EXPECT_NE(none.error().find("0000:01:00.1 has no memory BAR4"), std::string::npos) << none.error();
}

// iommufd: the provider's own VFIO device exports the range as a dma-buf, mapped with
// IOMMU_IOAS_MAP_FILE.
struct IommufdPeers : Peers {
    void with_both() {
        with_iommufd();
        kernel->nodes.insert(dev("/dev/vfio/devices/vfio1"));
        fs::create_directories(dir.path() / "sys/devices/pci0000:00/0000:00:01.0" / peer_bus / "vfio-dev/vfio1");
    }
};

TEST(PeerMap, IommufdMapsADmabufOfTheProvidersBarWhereTheProcessHoldsIt) {
    IommufdPeers local;
    const auto machine = local.machine();
    local.with_both();
    local.kernel->exports_dmabuf = true;
    auto gpu = Function::take(machine, peer_bus);
    ASSERT_TRUE(gpu) << gpu.error();
    auto nic = Function::take(machine, bus);
    ASSERT_TRUE(nic) << nic.error();
    auto run = nic->map_peer(peer_bus, 2, 0x20000, 64 << 10);
    ASSERT_TRUE(run) << run.error();
    ASSERT_EQ(local.kernel->features.size(), 1u);
    EXPECT_EQ(local.kernel->features[0], pci::vfio::dmabuf_request(2, 0x20000, 64 << 10));
    ASSERT_TRUE(local.kernel->mapped_files.contains(run->address.value));
    EXPECT_EQ(local.kernel->dma.at(run->address.value), 64u << 10);
    const auto fds = local.kernel->open_fds();
    nic->unmap_peer(*run);
    EXPECT_FALSE(local.kernel->dma.contains(run->address.value));
    EXPECT_EQ(local.kernel->open_fds(), fds - 1) << "the dma-buf is closed";
}

TEST(PeerMap, IommufdWithoutTheProviderHeldSaysToTakeItFirst) {
    IommufdPeers local;
    local.with_iommufd();
    auto nic = Function::take(local.machine(), bus);
    ASSERT_TRUE(nic) << nic.error();
    auto run = nic->map_peer(peer_bus, 2, 0, 64 << 10);
    ASSERT_FALSE(run);
    EXPECT_NE(
        run.error().find("iommufd maps a peer BAR only as a dma-buf its VFIO device exports (IOMMU_IOAS_MAP_FILE, "
                         "Linux 6.19), and this process does not hold 0000:01:00.1 through VFIO"),
        std::string::npos)
        << run.error();
}

TEST(PeerMap, IommufdOnAKernelWithoutTheDmabufExportSaysSo) {
    IommufdPeers local;
    const auto machine = local.machine();
    local.with_both();
    auto gpu = Function::take(machine, peer_bus);
    auto nic = Function::take(machine, bus);
    ASSERT_TRUE(gpu && nic);
    auto run = nic->map_peer(peer_bus, 2, 0, 64 << 10);
    ASSERT_FALSE(run);
    EXPECT_NE(run.error().find("the dma-buf way: the kernel has no VFIO dma-buf export of 0000:01:00.1 BAR2 "
                               "(VFIO_DEVICE_FEATURE_DMA_BUF, Linux 6.19)"),
              std::string::npos)
        << run.error();
}

TEST(PeerMap, IommufdRefusingTheDmabufSaysWhichKernelMapsThem) {
    IommufdPeers local;
    const auto machine = local.machine();
    local.with_both();
    local.kernel->exports_dmabuf = true;
    local.kernel->map_file_error = EINVAL;
    auto gpu = Function::take(machine, peer_bus);
    auto nic = Function::take(machine, bus);
    ASSERT_TRUE(gpu && nic);
    const auto fds = local.kernel->open_fds();
    auto run = nic->map_peer(peer_bus, 2, 0, 64 << 10);
    ASSERT_FALSE(run);
    EXPECT_NE(run.error().find("the dma-buf way: 0000:01:00.0: IOMMU_IOAS_MAP_FILE of 64 KiB at IOVA "),
              std::string::npos)
        << run.error();
    EXPECT_NE(run.error().find("refused the dma-buf (iommufd maps dma-bufs only from Linux 6.19)"), std::string::npos)
        << run.error();
    EXPECT_EQ(local.kernel->open_fds(), fds) << "the dma-buf is closed";
}

}  // namespace
}  // namespace rig::test
