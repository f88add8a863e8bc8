// What the VFIO path reads and locks in a function's sysfs directory (internal to
// rig_pci; Documentation/ABI/testing/sysfs-bus-pci, sysfs-kernel-iommu_groups):
//   driver -> .../drivers/<name>     the kernel driver bound to it, if any
//   iommu_group -> .../iommu_groups/<N>   its IOMMU group (absent without an IOMMU or noiommu)
//   vfio-dev/vfio<N>                 its vfio cdev, where vfio-pci binds it (Linux 6.2+)
//   resource                         one line per resource: start, end, flags in hex
//   config                           locked (flock) while this process holds the function
// The route reading of the same tree is sysfs.hpp's.
#pragma once

#include <array>
#include <filesystem>
#include <optional>
#include <string>

#include "rig/pci/dma.hpp"
#include "rig/result.hpp"
#include "vfio_kernel.hpp"

namespace rig::pci::vfio {

namespace fs = std::filesystem;

// The name of the driver bound to the function at `dir`, or nullopt.
std::optional<std::string> bound_driver(const fs::path& dir);

// The function's IOMMU group number, or nullopt where it has none. Error where the link
// names no number.
Result<std::optional<unsigned>> iommu_group(const fs::path& dir, const std::string& bus);

// Whether IOMMU group `group` is a VFIO no-IOMMU group (its name file says
// "vfio-noiommu"): its functions reach physical addresses.
bool is_noiommu(const fs::path& root, unsigned group);

// The function's vfio cdev name ("vfio3"), or nullopt.
std::optional<std::string> vfio_cdev(const fs::path& dir);

// BARs 0..5 as sysfs `resource` gives them: the CPU's physical address (the bus address
// on x86-64, where the host bridge does not translate) and size. nullopt for a BAR that
// decodes nothing or is I/O space. Error naming the file where it cannot be read.
Result<std::array<std::optional<Bar>, 6>> read_bars(const fs::path& dir);

// Locks the function's `config` file (flock LOCK_EX | LOCK_NB) and keeps it open: the
// lock lasts as long as the Fd. Error "… is taken by another process" where another
// open file holds the lock.
Result<Fd> lock_config(Kernel& kernel, const fs::path& dir, const std::string& bus);

}  // namespace rig::pci::vfio
