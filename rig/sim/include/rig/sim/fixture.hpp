// rig/sim/fixture.hpp: a topology written out as the sysfs files Linux would show for it,
// so Machine::at(root) (and Machine::make(name, ops, root)) read it as a real machine's.
//
// Under `root` (Documentation/ABI/testing/sysfs-bus-pci, sysfs-devices):
//   sys/devices/pciDDDD:BB/                      a host bridge (VMD: below its endpoint's
//                                                directory; Hyper-V: below sysfs_parent)
//   sys/devices/.../<bus address>/               a function, below its upstream bridge's
//                                                directory (a VF: beside its PF)
//       vendor device class subsystem_vendor subsystem_device   "0x10de\n", "0x030200\n"
//       config            its configuration space, truncated to the spec's config_bytes
//       numa_node         "-1\n"
//       resource          the BARs' start, end and flags (one line per resource)
//       secondary_bus_number subordinate_bus_number   bridges only, decimal
//       driver -> sys/bus/pci/drivers/<name>          where a driver is bound
//       iommu_group -> sys/kernel/iommu_groups/<n>    where it has a group (which links back)
//       physfn -> ../<PF>, and the PF's virtfn<i> -> ../<VF>  SR-IOV
//   sys/bus/pci/devices/<bus address> -> ../../../devices/.../<bus address>
//   proc/cpuinfo                                  two processors of the topology's CPU
// Links are relative, so the tree can be moved or copied.
#pragma once

#include <filesystem>
#include <optional>

#include "rig/result.hpp"
#include "rig/sim/topology.hpp"

namespace rig::sim {

// Writes `topology`'s sysfs tree under `root`, creating what is missing and replacing
// files of the same names. With `config_bytes`, every config file holds at most that many
// bytes: 64 is the tree as a process without CAP_SYS_ADMIN reads it. Error naming the
// path that could not be written.
Result<void> write_sysfs(const Topology& topology, const std::filesystem::path& root,
                         std::optional<unsigned> config_bytes = std::nullopt);

// The directory of a function below root ("sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0").
std::filesystem::path sysfs_dir(const Topology& topology, FunctionRef f);

}  // namespace rig::sim
