// rig/sim/layouts.hpp: the machines p2p_copy and rig.sim.machines (Python) simulate, as
// topologies: the built-in ones and those read from a `rig snapshot` tree. Each names
// where the simulated GPU and the bnxt NIC sit in it (rig/sim/pair.hpp builds them).
//
// The built-in machines (each side of the copy is one of them):
//   switch            an allow-listed Intel host bridge (8086:09a2 at 00.0, Ice Lake and
//                     later), a root port, a PCI Express switch below it without ACS
//                     redirect, and on two of its downstream ports the GPU and the NIC:
//                     peer-to-peer goes through the switch (distance "switch", direct).
//   acs               the same shape on a Broadwell-EP host bridge (8086:6f00, not on
//                     Linux's allow-list), its switch's downstream ports with ACS Request
//                     and Completion Redirect on (ACSCtl 0x001d, docs/bugs.md B11): the
//                     requests go up to a root complex that does not forward them.
//   two-host-bridges  an AMD EPYC (family 0x19) with the GPU below a root port of host
//                     bridge pci0000:00 and the NIC below one of pci0000:40: no common
//                     bridge, so the root complex decides; the AMD CPU rule lets it through.
//   iommu             the switch machine with the NIC in an IOMMU group, as VFIO takes it
//                     with the IOMMU on, and ACS redirect on the switch's downstream ports
//                     (ACSCtl 0x001d, as Linux sets it then): the requests go up to the
//                     allow-listed root complex, and the NIC's IOMMU domain maps the GPU's
//                     BAR (through the host bridge, IOVAs); bounce stages in the GPU's host
//                     memory, which the NIC pins into its domain (paths.hpp, Staging).
//   iommu-direct      the NIC behind an IOMMU, the switch without ACS redirect: the switch
//                     carries the requests straight to the BAR (direct, bus addresses,
//                     nothing mapped).
//   iommu-blocked     the NIC behind an IOMMU, the acs machine's switch and Broadwell-EP
//                     host bridge: refused, naming the host bridge; bounce runs.
//   small-bar         the switch machine; the GPU's memory BAR is smaller than its memory
//                     (the ModelConfig's memory_bytes): memory past the BAR has no bus
//                     runs, so p2p is refused with the sizes and auto bounces.
//
// A snapshot (docs/p2pdma.md §1 for what the tree holds): every function the tree lists,
// at its own bus address, below its own bridges, with its configuration space's ACS
// Control and port type, its IOMMU group, driver and NUMA node, on the tree's CPU. The
// functions at `gpu` and `nic` become the simulated GPU and NIC (their identity and BARs
// the models'); bridges keep their bus numbers, so every other bus address is the
// machine's own.
#pragma once

#include <array>
#include <filesystem>
#include <string>
#include <string_view>

#include "rig/result.hpp"
#include "rig/sim/device.hpp"
#include "rig/sim/topology.hpp"

namespace rig::sim {

struct Layout {
    std::string name;  // "switch", or the snapshot's directory
    rig::sim::Topology topology;
    std::string gpu;  // the GPU's bus address, "0000:03:00.0"
    std::string nic;
};

inline constexpr std::array<std::string_view, 7> builtin_names{
    "switch", "acs", "two-host-bridges", "iommu", "iommu-direct", "iommu-blocked", "small-bar"};

// The built-in machine `name` with a GPU and a NIC of these identities. Error listing the
// names where `name` is none of them.
rig::Result<Layout> builtin(std::string_view name, const rig::sim::Identity& gpu, const rig::sim::Identity& nic);

// The machine a `rig snapshot` tree under `dir` describes, with the functions at bus
// addresses `gpu` and `nic` ("0000:41:00.0", or "41:00.0" in domain 0, any case) replaced
// by a GPU and a NIC of these identities. Error naming the directory or the bus address
// where one is not a bus address, the tree cannot be read, lacks one of the two
// functions, names a bridge or the same function for both, or holds a shape the simulator
// does not build (naming the function).
rig::Result<Layout> from_snapshot(const std::filesystem::path& dir, std::string_view gpu, std::string_view nic,
                                  const rig::sim::Identity& gpu_identity, const rig::sim::Identity& nic_identity);

}  // namespace rig::sim
