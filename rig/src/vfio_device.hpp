// A VFIO device file descriptor of one PCI function (internal to rig_pci): its regions
// (BARs and configuration space), BAR mappings, MSI-X eventfds and reset, whichever way
// it was opened (a group of the VFIO container API, or a vfio cdev bound to iommufd).
// linux/vfio.h "IOCTLs for DEVICE file descriptors"; vfio-pci's region layout.
//
// The facts that bite (DPDK drivers/bus/pci/linux/pci_vfio.c writes them down too):
//  - Region info comes with capabilities after an argsz retry (vfio_info.hpp).
//  - The MSI-X table: a kernel without VFIO_REGION_INFO_CAP_MSIX_MAPPABLE refuses to mmap
//    the pages that hold it. Where the region gives sparse-mmap areas they already leave
//    it out; otherwise the hole is the table's range widened to whole pages. Registers
//    in the hole are reached by pread/pwrite on the device fd.
//  - BARs are mapped reserve-then-map: one inaccessible anonymous mapping the size of the
//    BAR first, then each mappable area over it with MAP_FIXED, so the hole stays an
//    inaccessible gap and no other mapping lands inside the BAR's range.
//
// Thread safety: config, set_config, map and wait may be called from several threads at
// once; close is called once, by the give-back.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "rig/pci/dma.hpp"
#include "rig/pci/window.hpp"
#include "rig/result.hpp"
#include "vfio_kernel.hpp"

namespace rig::pci::vfio {

// A byte range of a region.
struct Area {
    std::uint64_t offset = 0;
    std::uint64_t bytes = 0;
    friend bool operator==(const Area&, const Area&) = default;
};

// What VFIO_DEVICE_GET_REGION_INFO says of a region.
struct RegionInfo {
    unsigned index = 0;
    std::uint32_t flags = 0;                  // VFIO_REGION_INFO_FLAG_*
    std::uint64_t bytes = 0;                  // 0: the function does not implement it
    std::uint64_t offset = 0;                 // where the region lies in the device fd
    std::optional<std::vector<Area>> sparse;  // VFIO_REGION_INFO_CAP_SPARSE_MMAP's areas
    bool msix_mappable = false;               // VFIO_REGION_INFO_CAP_MSIX_MAPPABLE
};

// Region `index` of the device, with the argsz retry. Error naming `bus`, the region and
// the errno.
Result<RegionInfo> region_info(Kernel& kernel, int device, unsigned index, const std::string& bus);

// Where a function's MSI-X table lies: BAR `bar`, `bytes` from `offset` (16 per vector).
struct MsixTable {
    unsigned bar = 0;
    std::uint64_t offset = 0;
    std::uint64_t bytes = 0;
};

// The parts of BAR `region` the process may mmap, in order, each a whole number of pages:
// none where the region cannot be mmap'd; the sparse areas where the kernel gave them;
// else the whole region less the pages that hold `table` where it lies in this BAR and
// the kernel did not say MSI-X is mappable.
std::vector<Area> mappable_areas(const RegionInfo& region, const std::optional<MsixTable>& table, std::uint64_t page);

struct DeviceFd;  // the fd and whether it is closed, shared with remote windows

class Device {
public:
    // Reads the device's info, its BAR and configuration regions, where its MSI-X table
    // lies, and how many MSI-X vectors it has. Error naming `bus` where it is not a
    // vfio-pci device or a region cannot be read.
    static Result<std::unique_ptr<Device>> open(std::shared_ptr<Kernel> kernel, Fd device, std::string bus,
                                                std::uint64_t page);
    ~Device();

    // Configuration space through the config region: all ones where the read fails, as
    // a function that does not answer reads.
    std::uint32_t config(std::uint32_t offset, unsigned bytes);
    // Error where the kernel refused the write.
    Result<void> set_config(std::uint32_t offset, unsigned bytes, std::uint32_t value);

    // What VFIO says of BAR `bar` (0..5): its size and whether it can be mapped.
    const RegionInfo& region(unsigned bar) const { return bars_.at(bar); }

    // A window on `bytes` from `offset` of BAR `bar`: mapped where the range lies inside
    // one mappable area (the BAR is mapped at the first such request), else through
    // pread/pwrite on the device fd. Error naming the BAR where the kernel refuses.
    Result<Window> map(unsigned bar, std::uint64_t offset, std::uint64_t bytes);

    // Arms an eventfd for every MSI-X vector (VFIO_DEVICE_SET_IRQS, DATA_EVENTFD |
    // ACTION_TRIGGER). Nothing where the function has no MSI-X.
    Result<void> arm_interrupts();
    unsigned vectors() const { return vectors_; }
    // Waits up to `timeout` for vector `vector`: true if it fired (and is consumed).
    bool wait(unsigned vector, std::chrono::nanoseconds timeout);

    // The device fd, for the feature ioctls of another function's peer mapping
    // (vfio_peer.hpp); -1 once closed.
    int fd() const;

    // VFIO_DEVICE_RESET. Error where the device has no reset method.
    Result<void> reset();

    // Disarms the interrupts, unmaps the BARs and closes the device fd. Called again, does
    // nothing. Windows on the BARs read all ones afterwards.
    void close();

private:
    struct Mapped {
        Mapping reservation;      // the BAR's range, with its areas mapped over it
        std::vector<Area> areas;  // the areas mapped
    };
    Device() = default;

    std::shared_ptr<Kernel> kernel_;
    std::shared_ptr<DeviceFd> shared_;
    std::string bus_;
    std::uint64_t page_ = page_bytes;
    std::uint32_t flags_ = 0;  // VFIO_DEVICE_FLAGS_*
    RegionInfo config_;
    std::array<RegionInfo, 6> bars_{};
    std::optional<MsixTable> msix_;
    unsigned vectors_ = 0;
    std::mutex mutex_;  // guards mapped_ and eventfds_
    std::array<std::optional<Mapped>, 6> mapped_{};
    std::vector<Fd> eventfds_;
};

}  // namespace rig::pci::vfio
