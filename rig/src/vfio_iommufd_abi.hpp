// The iommufd and vfio-cdev ABI that vfio_iommufd.cpp uses (internal to rig_pci).
//
// linux/iommufd.h arrived in Linux 6.2 and VFIO_DEVICE_BIND_IOMMUFD /
// VFIO_DEVICE_ATTACH_IOMMUFD_PT in 6.6; the headers on Debian 12 are 6.1
// (docs/toolchain.md §4). Where the system headers have them they are used; otherwise
// the few structures and ioctl numbers are defined here, as the upstream uapi lays them
// out (include/uapi/linux/iommufd.h, include/uapi/linux/vfio.h), so the iommufd way builds
// and is tested everywhere and runs where the kernel has it. The layouts are pinned below.
#pragma once

#include <linux/ioctl.h>
#include <linux/types.h>
#include <linux/vfio.h>

#include <cstddef>
#include <cstdint>

#if __has_include(<linux/iommufd.h>)
#include <linux/iommufd.h>
#define RIG_SYSTEM_IOMMUFD 1
#endif

namespace rig::pci::vfio::abi {

#ifdef RIG_SYSTEM_IOMMUFD
using ::iommu_ioas_alloc;
using ::iommu_ioas_iova_ranges;
using ::iommu_ioas_map;
using ::iommu_ioas_unmap;
using ::iommu_iova_range;
inline constexpr unsigned long ioas_alloc = IOMMU_IOAS_ALLOC;
inline constexpr unsigned long ioas_iova_ranges = IOMMU_IOAS_IOVA_RANGES;
inline constexpr unsigned long ioas_map = IOMMU_IOAS_MAP;
inline constexpr unsigned long ioas_unmap = IOMMU_IOAS_UNMAP;
inline constexpr std::uint32_t map_fixed_iova = IOMMU_IOAS_MAP_FIXED_IOVA;
inline constexpr std::uint32_t map_writeable = IOMMU_IOAS_MAP_WRITEABLE;
inline constexpr std::uint32_t map_readable = IOMMU_IOAS_MAP_READABLE;
#else
// include/uapi/linux/iommufd.h: type ';', commands from 0x80.
inline constexpr unsigned iommufd_type = ';';
struct iommu_ioas_alloc {
    __u32 size;
    __u32 flags;
    __u32 out_ioas_id;
};
struct iommu_iova_range {
    __aligned_u64 start;
    __aligned_u64 last;  // inclusive
};
struct iommu_ioas_iova_ranges {
    __u32 size;
    __u32 ioas_id;
    __u32 num_iovas;
    __u32 __reserved;
    __aligned_u64 allowed_iovas;  // user pointer to iommu_iova_range[num_iovas]
    __aligned_u64 out_iova_alignment;
};
struct iommu_ioas_map {
    __u32 size;
    __u32 flags;
    __u32 ioas_id;
    __u32 __reserved;
    __aligned_u64 user_va;
    __aligned_u64 length;
    __aligned_u64 iova;
};
struct iommu_ioas_unmap {
    __u32 size;
    __u32 ioas_id;
    __aligned_u64 iova;
    __aligned_u64 length;
};
inline constexpr unsigned long ioas_alloc = _IO(iommufd_type, 0x81);
inline constexpr unsigned long ioas_iova_ranges = _IO(iommufd_type, 0x84);
inline constexpr unsigned long ioas_map = _IO(iommufd_type, 0x85);
inline constexpr unsigned long ioas_unmap = _IO(iommufd_type, 0x86);
inline constexpr std::uint32_t map_fixed_iova = 1u << 0;
inline constexpr std::uint32_t map_writeable = 1u << 1;
inline constexpr std::uint32_t map_readable = 1u << 2;
#endif

#ifdef IOMMU_IOAS_MAP_FILE
using ::iommu_ioas_map_file;
inline constexpr unsigned long ioas_map_file = IOMMU_IOAS_MAP_FILE;
#else
// include/uapi/linux/iommufd.h (Linux 6.13): a file's range mapped at an IOVA; from 6.19
// the file may be a dma-buf vfio-pci exported of a BAR.
struct iommu_ioas_map_file {
    __u32 size;
    __u32 flags;
    __u32 ioas_id;
    __s32 fd;
    __aligned_u64 start;
    __aligned_u64 length;
    __aligned_u64 iova;
};
inline constexpr unsigned long ioas_map_file = _IO(';', 0x8f);
#endif

#ifdef VFIO_DEVICE_BIND_IOMMUFD
using ::vfio_device_attach_iommufd_pt;
using ::vfio_device_bind_iommufd;
inline constexpr unsigned long device_bind_iommufd = VFIO_DEVICE_BIND_IOMMUFD;
inline constexpr unsigned long device_attach_iommufd_pt = VFIO_DEVICE_ATTACH_IOMMUFD_PT;
#else
// include/uapi/linux/vfio.h (6.6): the vfio cdev's binding to an iommufd. Later kernels
// append fields; argsz says how much of the structure the caller gives.
struct vfio_device_bind_iommufd {
    __u32 argsz;
    __u32 flags;
    __s32 iommufd;
    __u32 out_devid;
};
struct vfio_device_attach_iommufd_pt {
    __u32 argsz;
    __u32 flags;
    __u32 pt_id;
};
inline constexpr unsigned long device_bind_iommufd = _IO(VFIO_TYPE, VFIO_BASE + 18);
inline constexpr unsigned long device_attach_iommufd_pt = _IO(VFIO_TYPE, VFIO_BASE + 19);
#endif

// The layouts as the kernel reads them (upstream uapi).
static_assert(sizeof(iommu_ioas_alloc) == 12);
static_assert(sizeof(iommu_ioas_map) == 40 && offsetof(iommu_ioas_map, user_va) == 16 &&
              offsetof(iommu_ioas_map, iova) == 32);
static_assert(sizeof(iommu_ioas_unmap) == 24 && offsetof(iommu_ioas_unmap, iova) == 8);
static_assert(sizeof(iommu_ioas_iova_ranges) >= 32 && offsetof(iommu_ioas_iova_ranges, allowed_iovas) == 16);
static_assert(sizeof(iommu_iova_range) == 16);
static_assert(offsetof(vfio_device_bind_iommufd, out_devid) == 12);
static_assert(offsetof(vfio_device_attach_iommufd_pt, pt_id) == 8);
static_assert(ioas_map == 0x3b85 && device_bind_iommufd == 0x3b76);
static_assert(sizeof(iommu_ioas_map_file) == 40 && offsetof(iommu_ioas_map_file, fd) == 12 &&
              offsetof(iommu_ioas_map_file, iova) == 32);
static_assert(ioas_map_file == 0x3b8f);

}  // namespace rig::pci::vfio::abi
