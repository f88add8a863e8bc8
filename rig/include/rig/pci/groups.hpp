// rig/pci/groups.hpp: IOMMU groups as VFIO sees them (Linux's
// Documentation/driver-api/vfio.rst, "Groups, Devices, and IOMMUs").
//
// An IOMMU cannot tell apart the functions of one group (they reach each other below a
// bridge without ACS isolation, drivers/iommu/iommu.c pci_device_group()), so the kernel
// gives a group's DMA to the kernel or to one process, never to both (DMA ownership,
// iommu_device_claim_dma_owner(), Linux 5.19; before it, VFIO's "viable" test): VFIO takes
// a function only where every function of its group is bound to vfio-pci, to no driver,
// or is a bridge (pcieport claims no DMA; pci-stub neither). So where a NIC and a GPU
// share a group, the NIC is taken only with the GPU's function free of its vendor driver.
//
// Read from the machine's sysfs files: each function's iommu_group and driver links.
// Thread safety: pure reads of files.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rig/pci/machine.hpp"
#include "rig/result.hpp"

namespace rig::pci {

struct GroupMember {
    std::string bus;
    std::optional<std::string> driver;  // the bound driver's name, if any
    bool bridge = false;                // a PCI-to-PCI bridge (class 0x0604)
    // Whether VFIO lets the group be a process's with this member as it is.
    bool lets_vfio() const;
};

struct IommuGroup {
    std::string number;                // the iommu_group link's name ("12")
    std::vector<GroupMember> members;  // in bus order, the function asked about included
    // The members but `bus` that keep VFIO from taking `bus` (lets_vfio() false).
    std::vector<GroupMember> blockers(std::string_view bus) const;
};

// The IOMMU group of the function at `bus`, with every function whose iommu_group link
// names the same group; nullopt where it has none (no IOMMU) or the machine has no sysfs
// files. Error naming the directory where the functions cannot be listed.
Result<std::optional<IommuGroup>> iommu_group(const Machine& machine, std::string_view bus);

// Why VFIO would not take `bus` of `group`, in words, naming each blocker and its
// driver and the remedy: "IOMMU group 3 is not viable: 0000:03:00.0 in it is bound to
// the driver nvidia; VFIO takes a function only where every function of its group is
// bound to vfio-pci, to no driver, or is a bridge: unbind 0000:03:00.0 from nvidia (or
// bind it to vfio-pci)". Empty where nothing blocks.
std::string not_viable(const IommuGroup& group, std::string_view bus);

// What a direct route (Verdict::Direct) behind an IOMMU asks of the provider, in
// words, for `rig topo --why` and p2p_copy: no ACS redirects between the two, so Linux puts
// them in one IOMMU group, and VFIO takes the client only with the provider's function
// free of its vendor driver (bound to vfio-pci or to none): "behind an IOMMU this direct
// route means no ACS isolates 0000:04:00.0 from 0000:03:00.0, so they share an IOMMU group
// (3), and VFIO takes 0000:04:00.0 only with 0000:03:00.0 free of its vendor driver (bound
// to vfio-pci or to none; it is bound to nvidia)". Names the group and the provider's
// driver where the machine's files show them. Empty where it does not apply: another
// verdict, or a client not behind an IOMMU (`client_behind_iommu`).
std::string direct_behind_iommu(const Machine& machine, const Route& route, bool client_behind_iommu);

}  // namespace rig::pci
