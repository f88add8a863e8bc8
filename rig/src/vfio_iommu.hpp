// How a function taken through VFIO reaches system memory, behind one interface (internal
// to rig_pci), with one file per kernel mechanism (docs/design.md, "Layout"):
//  - vfio_container.cpp: the VFIO container and group API of linux/vfio.h: the group's
//    /dev/vfio/N (or /dev/vfio/noiommu-N), a container with the type1v2 IOMMU (or the
//    no-IOMMU mode), VFIO_GROUP_GET_DEVICE_FD.
//  - vfio_iommufd.cpp: iommufd (Linux 6.6 and later): /dev/iommu, an IOAS, the function's
//    vfio cdev /dev/vfio/devices/vfioN bound to it and attached.
// Either gives the device fd (vfio_device.hpp) and an IoSpace that maps the process's
// memory at IOVAs the process chooses (Addressing::Iommu), or maps nothing where no IOMMU
// translates and the device reaches physical addresses (Addressing::Physical).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "rig/pci/dma.hpp"
#include "rig/result.hpp"
#include "vfio_kernel.hpp"

namespace rig::pci::vfio {

// An inclusive-exclusive range of IOVAs: [start, end).
struct IovaRange {
    std::uint64_t start = 0;
    std::uint64_t end = 0;
    friend bool operator==(const IovaRange&, const IovaRange&) = default;
};

class IoSpace {
public:
    virtual ~IoSpace() = default;
    virtual Addressing addressing() const = 0;
    // The IOVAs the IOMMU accepts mappings at (the kernel's answer less reserved regions
    // such as the x86 MSI window); empty for Addressing::Physical.
    virtual const std::vector<IovaRange>& ranges() const = 0;
    // Maps `bytes` of the process's memory at `va` to `iova`, readable and writable by
    // the device. Error naming the function, the range and the errno.
    virtual Result<void> map(std::uint64_t iova, const std::byte* va, std::uint64_t bytes) = 0;
    virtual Result<void> unmap(std::uint64_t iova, std::uint64_t bytes) = 0;
    // Maps `bytes` of the file `fd` from its start at `iova` (iommufd's
    // IOMMU_IOAS_MAP_FILE): a dma-buf of a peer's BAR (vfio_peer.hpp). Error naming the
    // way and what refused it; the container has no such way.
    virtual Result<void> map_file(std::uint64_t iova, int fd, std::uint64_t bytes) = 0;
    // Whether map() takes a process mapping of another device's BAR (VM_PFNMAP): type1
    // does (vaddr_get_pfns()), iommufd's IOMMU_IOAS_MAP pins pages and does not.
    virtual bool maps_bar_mappings() const = 0;
};

// A function opened through VFIO: its device fd and its IoSpace. The device fd must close
// before the space goes (the group and container outlive their device).
struct Opened {
    std::unique_ptr<IoSpace> space;
    Fd device;
};

// Where to find the kernel's files: "/" on this machine, a fixture tree in tests.
struct Paths {
    std::string root;  // prefix of /dev paths, "" for this machine
    std::string dev(const std::string& path) const { return root + path; }
};

// The container/group way. `group` is the function's IOMMU group number, `noiommu`
// whether it is a VFIO no-IOMMU group. Errors name the bus and the cause: no
// /dev/vfio/vfio ("VFIO is not available"), the group is taken by another process
// (EBUSY), the group is not viable, the IOMMU type is unsupported. `blocked` is what
// sysfs says keeps the group from VFIO (groups.hpp not_viable(); empty: nothing), given
// with the kernel's refusal of the group so that it names the functions and drivers.
Result<Opened> open_container(Kernel& kernel, const Paths& paths, const std::string& bus, unsigned group, bool noiommu,
                              const std::string& blocked = {});

// Whether this build and machine can take the iommufd way: the ABI is known (always: the
// few structs are defined here where <linux/iommufd.h> lacks them) and /dev/iommu exists.
bool iommufd_present(Kernel& kernel, const Paths& paths);

// The iommufd way, for the function whose vfio cdev is `cdev` ("vfio3"). `blocked` as
// for open_container: VFIO_DEVICE_BIND_IOMMUFD claims the group's DMA
// (iommu_device_claim_dma_owner()), which the kernel refuses while a driver of the group
// holds it.
Result<Opened> open_iommufd(Kernel& kernel, const Paths& paths, const std::string& bus, const std::string& cdev,
                            const std::string& blocked = {});

}  // namespace rig::pci::vfio
