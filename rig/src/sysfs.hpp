// Reading a machine's sysfs files under a root directory (internal to rig_pci): "/" for
// Machine::local(), a snapshot or fixture for Machine::at(). Linux's layout
// (Documentation/ABI/testing/sysfs-bus-pci):
//   sys/bus/pci/devices/<bus address> -> ../../../devices/pciDDDD:BB/<bridge>/.../<bus address>
//   sys/devices/.../<bus address>/{vendor,device,class,config,numa_node,driver,iommu_group,physfn}
//   proc/cpuinfo
// A function's upstream bridges are the directories named by bus addresses above its
// own; the nearest pciDDDD:BB directory above it is its host bridge (docs/p2pdma.md §1).
//
// Every path is resolved inside the root, as if the root were "/": symbolic links are
// followed (absolute ones taken under the root), ".." never leaves it, and a chain of more
// than 40 links is an Error, so a snapshot's links never reach this machine's files and a
// link loop ends. Files are read by one reader, read_file: a regular file only (sysfs
// attributes and /proc/cpuinfo are; a symbolic link in place of one, which could name a
// file outside the root, a FIFO or a device is refused, so no read leaves the root or
// blocks), and never more than its bound.
//
// An entry of sys/bus/pci/devices is a function only where it is a symbolic link (as
// sysfs makes every one, Documentation/ABI/testing/sysfs-bus-pci): a directory or file
// there is no function, for functions(), function_dir() and so for every reader.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config_space.hpp"
#include "rig/pci/address.hpp"
#include "rig/pci/machine.hpp"
#include "rig/result.hpp"

namespace rig::pci::sysfs {

namespace fs = std::filesystem;

// sys/bus/pci/devices below a root.
inline fs::path devices_dir(const fs::path& root) { return root / "sys/bus/pci/devices"; }

// `path` (relative to root) resolved inside `root`: the physical path of what it names.
// Error naming the path where a component is missing, a link cannot be read, or links
// nest deeper than 40.
Result<fs::path> resolve(const fs::path& root, const fs::path& path);

// What read_file does with a file longer than its bound.
enum class Longer : std::uint8_t { Error, Truncate };
// At most `max` bytes of `file`, a regular file (not a link to one). Error naming the file
// where it cannot be opened, is not a regular file, cannot be read, or, with
// Longer::Error, holds more than `max` bytes.
Result<std::string> read_file(const fs::path& file, std::size_t max, Longer longer);
// The text of a small file, whole: read_file with 1 MiB, Longer::Error.
Result<std::string> read_text(const fs::path& file);
// A file holding one hexadecimal number as sysfs writes it ("0x10de\n"), at most `max`.
Result<std::uint32_t> read_hex(const fs::path& file, std::uint32_t max);
// A file holding one decimal integer ("-1\n", numa_node), or nullopt where it cannot be
// read or holds anything else.
std::optional<int> read_int(const fs::path& file);
// The name of the file a link points to ("vfio-pci" for a driver link), or nullopt
// where there is no such link.
std::optional<std::string> link_name(const fs::path& link);
// Up to 4096 bytes of `dir`/config (read_file, Longer::Truncate). Error naming the file.
Result<std::vector<std::uint8_t>> read_config(const fs::path& dir);

// The resolved directory of the function at `bus`. Error naming the bus where it is not a
// bus address, no function of the machine, or its link cannot be resolved.
Result<fs::path> function_dir(const fs::path& root, std::string_view bus);

// The functions under root, in bus order: Ok({}) without sys/bus/pci; a function whose
// link or vendor, device or class file cannot be read is left out; Error where
// sys/bus/pci/devices cannot be listed.
Result<std::vector<Id>> functions(const fs::path& root);

// A host bridge directory's name, "pci0000:40" or "pci10000:e0": its domain and root bus.
struct HostBridgeName {
    std::uint32_t domain = 0;
    std::uint8_t bus = 0;
};
std::optional<HostBridgeName> parse_host_bridge(std::string_view name);

// One function on a way up: the function itself or one of its upstream bridges.
struct Node {
    std::string bus;  // its bus address, as its directory is named
    fs::path dir;     // its resolved directory
    Header header;    // its configuration space, read now
    // Its PCI Express link, from its configuration space where that has the registers,
    // else from its sysfs link files (read_link); an SR-IOV VF's is its PF's.
    Link link;
    std::string link_owner;  // whose registers or files gave `link`: bus, or a VF's PF
    std::uint32_t id = 0;    // the node's number among the ways read together (route_rule.hpp, number())
};

// A function's link from the files of its directory: max_link_speed, max_link_width,
// current_link_speed and current_link_width (drivers/pci/pci-sysfs.c). LinkSource::Unread
// where none of them can be read.
Link read_link(const fs::path& dir);

// A function's way up to its host bridge, as Linux's pci_upstream_bridge() climbs it.
struct Way {
    // nodes[0] is the function; then its upstream bridges, nearest first, the last one on
    // a root bus. For an SR-IOV VF the bridges are its PF's (the PF is not on the way).
    std::vector<Node> nodes;
    std::string host_bridge;  // "pci0000:40": the nearest host bridge directory above it
    fs::path host_bridge_dir;
    std::uint32_t host_bridge_id = 0;  // its host bridge's number among the ways read together
};

// Reads the way up of the function at `bus`, with each node's configuration space read
// now. Error naming the bus and the file where any of it cannot be read or makes no
// tree (a directory on the way that is neither a bridge nor a host bridge).
Result<Way> read_way(const fs::path& root, std::string_view bus);

// The first device on a host bridge's root bus (lowest device and function among the
// host bridge directory's children on that bus), as Linux's pci_host_bridge_dev() finds
// it; nullopt where the root bus has none. Error where it cannot be read.
Result<std::optional<Node>> first_device(const fs::path& host_bridge_dir);

// The boot CPU as /proc/cpuinfo's first processor block gives it (resolved inside root).
struct Cpu {
    std::string vendor;              // vendor_id: "AuthenticAMD", "GenuineIntel", "HygonGenuine"; empty if absent
    std::optional<unsigned> family;  // "cpu family", decimal in the file
    std::optional<unsigned> model;   // "model", decimal
    std::string model_name;          // "model name"; empty if absent
    std::string error;               // why it could not be read, if it could not
};
Cpu read_cpu(const fs::path& root);

}  // namespace rig::pci::sysfs
