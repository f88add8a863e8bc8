// Another function's BAR in a VFIO-taken function's IOMMU domain (Function::map_peer on
// Machine::local(); internal to rig_pci). Which way works depends on the IOMMU interface
// the function was taken through and on the kernel:
//
//  - The VFIO container (type1): VFIO_IOMMU_MAP_DMA of a process mapping of the BAR.
//    vaddr_get_pfns() in drivers/vfio/vfio_iommu_type1.c takes a VM_PFNMAP mapping by
//    its PFNs rather than by pinned pages: with follow_pfn() on a mapping already
//    populated since the PFNMAP path exists (Linux 4.x), and since Linux 5.7
//    (follow_fault_pfn(), "vfio/type1: Support faulting PFNMAP vmas", backported to the
//    stable kernels) also on one it must fault in first, as vfio-pci's own BAR mmaps are
//    from 5.8 on. The mapping is the provider's own VFIO region where this process holds
//    the provider, else an mmap of /sys/bus/pci/devices/BDF/resourceN, which needs root
//    and a kernel not locked down (pci_mmap_resource(): LOCKDOWN_PCI_ACCESS).
//  - iommufd: IOMMU_IOAS_MAP pins the process's pages (pin_user_pages), which a BAR
//    mapping has none of, so that way fails with EFAULT. IOMMU_IOAS_MAP_FILE (Linux 6.13;
//    memfd only at first) maps a file, and from Linux 6.19 a dma-buf that vfio-pci
//    exports of a BAR range (VFIO_DEVICE_FEATURE_DMA_BUF, feature 11, on the provider's
//    device fd): the only iommufd way, and it needs the provider held by this process.
//
// Every Error names the client, the provider's BAR, the way tried and what refused it.
#pragma once

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "rig/result.hpp"
#include "vfio_kernel.hpp"

namespace rig::pci::vfio {

// include/uapi/linux/vfio.h (Linux 6.19): VFIO_DEVICE_FEATURE_DMA_BUF and its payload,
// defined here where the system headers (6.1 on Debian 12) lack them.
inline constexpr std::uint32_t feature_dma_buf = 11;
struct vfio_region_dma_range {
    std::uint64_t offset;
    std::uint64_t length;
};
struct vfio_device_feature_dma_buf {
    std::uint32_t region_index;
    std::uint32_t open_flags;
    std::uint32_t flags;
    std::uint32_t nr_ranges;
    // vfio_region_dma_range dma_ranges[nr_ranges] follow
};
static_assert(sizeof(vfio_region_dma_range) == 16);
static_assert(sizeof(vfio_device_feature_dma_buf) == 16);

// The argument of VFIO_DEVICE_FEATURE that asks for a dma-buf of bytes [offset, offset +
// bytes) of region `region` (a BAR index): struct vfio_device_feature (argsz, flags =
// VFIO_DEVICE_FEATURE_GET | 11), then vfio_device_feature_dma_buf with one range, as the
// kernel reads them.
std::vector<std::byte> dmabuf_request(unsigned region, std::uint64_t offset, std::uint64_t bytes);

// A dma-buf of the range, exported by the VFIO device `device_fd` of `provider`. Error
// naming the provider and BAR: "the kernel has no VFIO dma-buf export of BARs
// (VFIO_DEVICE_FEATURE_DMA_BUF, Linux 6.19)" where it answers ENOTTY or EINVAL for the
// feature, else the errno.
Result<Fd> export_dmabuf(Kernel& kernel, int device_fd, const std::string& provider, unsigned bar, std::uint64_t offset,
                         std::uint64_t bytes);

// A shared read-write mapping of bytes [offset, offset + bytes) of `provider`'s BAR
// `bar` through sysfs `resource<bar>` under `root`. Error naming the file: it needs root
// (EACCES, EPERM: also a kernel locked down), it does not exist (no such BAR or not a
// memory BAR), or mmap refused.
Result<Mapping> map_resource(Kernel& kernel, const std::filesystem::path& root, const std::string& provider,
                             unsigned bar, std::uint64_t offset, std::uint64_t bytes);

}  // namespace rig::pci::vfio
