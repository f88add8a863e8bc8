// rig/pci/snapshot.hpp: a machine's sysfs files beyond the Id of each function, as
// `rig ls` lists them, and a copy of what routes need, as `rig snapshot` writes it.
//
// Both need a machine whose sysfs files rig reads: Machine::local(), Machine::at(root),
// or Machine::make(name, ops, sysfs). Both read the files now; neither changes anything.
// Both may be called from several threads at once.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "rig/pci/link.hpp"
#include "rig/pci/machine.hpp"
#include "rig/result.hpp"

namespace rig::pci {

// What sysfs says of one function.
struct FunctionFiles {
    Id id;
    std::string host_bridge;                 // "pci0000:40": the nearest host bridge above it; empty if unread
    std::optional<std::string> upstream;     // the bridge whose bus it sits on (a VF: its PF's); nullopt on a root bus
    std::optional<std::string> driver;       // the name its driver link points to ("vfio-pci")
    std::optional<int> numa_node;            // numa_node; -1: none given; nullopt: no readable file
    std::optional<std::string> iommu_group;  // the name its iommu_group link points to ("12")
    std::optional<std::string> physfn;       // an SR-IOV VF's PF
    // A bridge's secondary and subordinate bus numbers from its configuration space, as
    // integers 0..255 (a subordinate bus of 0xff is bus 255, not a wrap: docs/bugs.md B01).
    std::optional<std::pair<unsigned, unsigned>> buses;
    // Its configuration space as read (up to 4096 bytes; 64 where this process may read no
    // more); empty where config cannot be read.
    std::vector<std::uint8_t> config;
    // Why its way up to a host bridge cannot be read (a config too short, a directory above
    // it that is no bridge, a physfn link that does not resolve): every route of it is
    // unread; empty where it was read.
    std::string unread;
    // Its PCI Express link (link.hpp): from Link Capabilities and Link Status where its
    // configuration space gives them, else from its sysfs link files; an SR-IOV VF's is its
    // PF's. LinkSource::Unread for conventional PCI and where neither can be read.
    Link link;
};

// The boot CPU as the machine's /proc/cpuinfo gives it: its first processor block.
struct CpuFiles {
    std::string vendor;              // vendor_id; empty if absent
    std::optional<unsigned> family;  // cpu family
    std::optional<unsigned> model;   // model
    std::string model_name;          // model name; empty if absent
    std::string error;               // why the file could not be read; empty where it was
};
// Error where the machine has no sysfs files.
Result<CpuFiles> describe_cpu(const Machine& machine);

// Every function of functions(), with its files. Error where the machine has no sysfs
// files (a transport that sent none) or its functions cannot be listed.
Result<std::vector<FunctionFiles>> describe(const Machine& machine);

// Copies into `out` what routes and describe() read, so that Machine::at(out) on any
// computer gives the same functions, routes (forwards, distance, verdict, or unread),
// and files: for every entry of sys/bus/pci/devices that links to a directory (a function
// listed or not), its link (made relative) and the directories on its resolved path; for
// each directory named by a bus address there (the function and every bridge above it,
// read or not, and a VF's PF), its vendor, device, class, config (as many bytes as this
// process may read), numa_node, secondary_bus_number, subordinate_bus_number, current_link_speed,
// current_link_width, max_link_speed and max_link_width files,
// its driver and iommu_group links (to empty directories of the same names) and its
// physfn link (as it is where it does not resolve); for each host bridge directory there,
// its devices on its root bus; and proc/cpuinfo's vendor_id, cpu family, model and model
// name of the first processor. A file the reader refuses (sysfs.hpp: a link in place of
// a file, which could leave the root; a FIFO; a file too long) is left out, as no reader
// of the copy could read it either. `out` is made if it does not exist. Error, writing
// nothing, where `out` is empty, not a directory or not empty (two machines would merge
// into one tree); error naming the file that could not be written.
Result<void> snapshot(const Machine& machine, const std::filesystem::path& out);

// Whether `root` is a tree Machine::at can read (a snapshot, a test fixture): a directory
// with sys/bus/pci/devices in it. Machine::at(root) of any other path lists no functions,
// so callers that take a root from a user check it first. Error "ROOT: no such directory"
// or "ROOT: not a `rig snapshot` tree (no sys/bus/pci/devices in it)".
Result<void> check_tree(const std::filesystem::path& root);

}  // namespace rig::pci
