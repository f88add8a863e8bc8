// Writing a topology as a sysfs tree (rig/sim/fixture.hpp). The files carry what Linux's
// carry, in its formats (drivers/pci/pci-sysfs.c): "0x%04x\n" ids, "0x%06x\n" class, the
// raw configuration space, decimal numa_node and bus numbers, and relative links.
#include "rig/sim/fixture.hpp"

#include "files.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <system_error>

namespace rig::sim {
namespace {

namespace fs = std::filesystem;
using pci::files::make_dirs;
using pci::files::make_link;
using pci::files::write_file;

// include/linux/ioport.h resource flags, as the `resource` file shows them.
constexpr std::uint64_t resource_mem = 0x00000200;
constexpr std::uint64_t resource_prefetch = 0x00002000;
constexpr std::uint64_t resource_mem_64 = 0x00100000;
// Lines of `resource`: 6 BARs, the ROM, 6 SR-IOV BARs; bridges add 4 windows
// (PCI_BRIDGE_RESOURCES, DEVICE_COUNT_RESOURCE in include/linux/pci.h).
constexpr int resource_lines = 13;
constexpr int bridge_resource_lines = 17;

fs::path host_bridge_dir(const Topology& t, HostBridgeRef h) {
    const auto& host = t[h];
    const std::string name = fmt::format("pci{:04x}:{:02x}", host.domain, host.bus);
    if (host.vmd) return sysfs_dir(t, *host.vmd) / name;
    fs::path dir = "sys/devices";
    if (!host.sysfs_parent.empty()) dir /= host.sysfs_parent;
    return dir / name;
}

std::string resource_text(const Topology::Function& f) {
    std::string text;
    const int lines = f.spec.is_bridge() ? bridge_resource_lines : resource_lines;
    for (int i = 0; i < lines; ++i) {
        std::uint64_t start = 0, end = 0, flags = 0;
        if (i < 6 && !f.spec.is_bridge() && f.spec.bars[static_cast<std::size_t>(i)].bytes != 0) {
            const BarSpec& bar = f.spec.bars[static_cast<std::size_t>(i)];
            start = f.bar_address[static_cast<std::size_t>(i)];
            end = start + bar.bytes - 1;
            flags = resource_mem | (bar.prefetchable ? resource_prefetch : 0) | (bar.is64 ? resource_mem_64 : 0);
        }
        text += fmt::format("0x{:016x} 0x{:016x} 0x{:016x}\n", start, end, flags);
    }
    return text;
}

Result<void> write_function(const Topology& t, FunctionRef ref, const fs::path& root, std::optional<unsigned> limit) {
    const auto& f = t[ref];
    const Spec& s = f.spec;
    const fs::path dir = sysfs_dir(t, ref);
    if (auto r = make_dirs(root / dir); !r) return r;
    auto config = t.config_space(ref);
    config.resize(std::min(s.config_bytes, limit.value_or(s.config_bytes)));
    const std::string config_bytes(config.begin(), config.end());
    const std::pair<const char*, std::string> files[] = {
        {"vendor", fmt::format("0x{:04x}\n", s.vendor)},
        {"device", fmt::format("0x{:04x}\n", s.device_id)},
        {"class", fmt::format("0x{:06x}\n", s.class_code)},
        {"subsystem_vendor", fmt::format("0x{:04x}\n", s.subsystem_vendor)},
        {"subsystem_device", fmt::format("0x{:04x}\n", s.subsystem_device)},
        {"numa_node", fmt::format("{}\n", s.numa_node)},
        {"resource", resource_text(f)},
        {"config", config_bytes},
    };
    for (const auto& [name, text] : files)
        if (auto r = write_file(root / dir / name, text); !r) return r;
    if (s.port_type) {
        // drivers/pci/pci-sysfs.c: pci_speed_string() of the speed fields, the widths in
        // decimal, for every PCI Express function.
        const pci::Link l = t.link(ref);
        const auto speed = [](const std::optional<pci::LinkState>& x) {
            return x ? fmt::format("{:.1f} GT/s PCIe\n", pci::gigatransfers(x->speed)) : std::string("Unknown\n");
        };
        const auto width = [](const std::optional<pci::LinkState>& x) {
            return fmt::format("{}\n", x ? x->width : 0u);
        };
        const std::pair<const char*, std::string> link_files[] = {
            {"current_link_speed", speed(l.status)},
            {"current_link_width", width(l.status)},
            {"max_link_speed", speed(l.capability)},
            {"max_link_width", width(l.capability)},
        };
        for (const auto& [name, text] : link_files)
            if (auto r = write_file(root / dir / name, text); !r) return r;
    }
    if (s.is_bridge()) {
        if (auto r = write_file(root / dir / "secondary_bus_number", fmt::format("{}\n", *s.secondary)); !r) return r;
        if (auto r = write_file(root / dir / "subordinate_bus_number", fmt::format("{}\n", t.subordinate(ref))); !r)
            return r;
    }
    if (!s.driver.empty()) {
        const fs::path driver = fs::path("sys/bus/pci/drivers") / s.driver;
        if (auto r = make_dirs(root / driver); !r) return r;
        if (auto r = make_link(root, dir / "driver", driver); !r) return r;
    }
    if (const auto number = t.iommu_group(ref)) {
        const fs::path group = fs::path("sys/kernel/iommu_groups") / std::to_string(*number);
        if (auto r = make_dirs(root / group / "devices"); !r) return r;
        if (auto r = make_link(root, dir / "iommu_group", group); !r) return r;
        if (auto r = make_link(root, group / "devices" / t.bus(ref), dir); !r) return r;
    }
    if (f.physfn) {
        if (auto r = make_link(root, dir / "physfn", sysfs_dir(t, *f.physfn)); !r) return r;
    }
    const auto vfs = t.vfs(ref);
    for (std::size_t i = 0; i < vfs.size(); ++i)
        if (auto r = make_link(root, dir / fmt::format("virtfn{}", i), sysfs_dir(t, vfs[i])); !r) return r;
    return make_link(root, fs::path("sys/bus/pci/devices") / t.bus(ref), dir);
}

std::string cpuinfo(const Cpu& cpu) {
    std::string text;
    for (int processor = 0; processor < 2; ++processor)
        text += fmt::format("processor\t: {}\nvendor_id\t: {}\ncpu family\t: {}\nmodel\t\t: {}\nmodel name\t: {}\n\n",
                            processor, cpu.vendor, cpu.family, cpu.model, cpu.model_name);
    return text;
}

}  // namespace

fs::path sysfs_dir(const Topology& t, FunctionRef ref) {
    const auto& f = t[ref];
    // A VF sits beside its PF: the PF's parent directory.
    const auto& placed = f.physfn ? t[*f.physfn] : f;
    fs::path parent = placed.upstream ? sysfs_dir(t, *placed.upstream) : host_bridge_dir(t, *placed.root_bus);
    return parent / t.bus(ref);
}

Result<void> write_sysfs(const Topology& topology, const fs::path& root, std::optional<unsigned> config_bytes) {
    for (const auto& dir : {"sys/bus/pci/devices", "sys/bus/pci/drivers", "sys/devices", "proc"})
        if (auto r = make_dirs(root / dir); !r) return r;
    for (std::size_t h = 0; h < topology.host_bridges().size(); ++h) {
        if (topology[HostBridgeRef{h}].vmd) continue;  // made with its VMD endpoint's directory
        if (auto r = make_dirs(root / host_bridge_dir(topology, {h})); !r) return r;
    }
    for (std::size_t i = 0; i < topology.functions().size(); ++i)
        if (auto r = write_function(topology, {i}, root, config_bytes); !r) return r;
    for (std::size_t h = 0; h < topology.host_bridges().size(); ++h)
        if (auto r = make_dirs(root / host_bridge_dir(topology, {h})); !r) return r;
    return write_file(root / "proc/cpuinfo", cpuinfo(topology.cpu()));
}

}  // namespace rig::sim
