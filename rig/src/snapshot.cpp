// A machine's files for people and for replay (rig/pci/snapshot.hpp): describe() reads
// what `rig ls` shows, snapshot() copies what Machine::at needs to answer as this
// machine does. Both read through sysfs.hpp, inside the machine's root.
#include "rig/pci/snapshot.hpp"

#include <fmt/format.h>

#include <charconv>
#include <system_error>

#include "files.hpp"
#include "sysfs.hpp"

namespace rig::pci {
namespace {

namespace fs = std::filesystem;
using files::make_dirs;
using files::make_link;
using files::write_file;

Result<fs::path> sysfs_root(const Machine& machine) {
    if (!machine.root())
        return fail(machine.name().value_or("machine"), ": the transport sent no sysfs files to read");
    return *machine.root();
}

// The PF a VF's physfn link resolves to, inside the root.
std::optional<fs::path> physfn_dir(const fs::path& root, const fs::path& dir) {
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(dir / "physfn", ec))) return std::nullopt;
    auto pf = sysfs::resolve(root, dir.lexically_relative(root) / "physfn");
    if (!pf) return std::nullopt;
    return *pf;
}




// A link of `dir` (driver, iommu_group) copied as a link to an empty directory of the
// same name below `to` (sys/bus/pci/drivers, sys/kernel/iommu_groups).
Result<void> copy_named_link(const fs::path& dir, const fs::path& out, const fs::path& rel, const char* link,
                             const fs::path& to) {
    const auto name = sysfs::link_name(dir / link);
    if (!name) return {};
    if (auto r = make_dirs(out / to / *name); !r) return r;
    return make_link(out, rel / link, to / *name);
}

Result<void> copy_function(const fs::path& root, const fs::path& out, const std::string& bus) {
    auto dir = sysfs::function_dir(root, bus);
    if (!dir) return std::unexpected(std::move(dir).error());
    const fs::path rel = dir->lexically_relative(root);
    if (auto r = make_dirs(out / rel); !r) return r;
    // The files routes and describe() read; those a function lacks stay absent.
    for (const char* name : {"vendor", "device", "class", "numa_node", "secondary_bus_number", "subordinate_bus_number",
                             "current_link_speed", "current_link_width", "max_link_speed", "max_link_width"}) {
        std::error_code ec;
        if (!fs::exists(*dir / name, ec)) continue;
        auto text = sysfs::read_text(*dir / name);
        if (!text) return std::unexpected(std::move(text).error());
        if (auto r = write_file(out / rel / name, *text); !r) return r;
    }
    if (std::error_code ec; fs::exists(*dir / "config", ec)) {
        auto config = sysfs::read_config(*dir);
        if (!config) return std::unexpected(std::move(config).error());
        if (auto r = write_file(out / rel / "config", std::string_view(reinterpret_cast<const char*>(config->data()), config->size())); !r)
            return r;
    }
    if (auto r = copy_named_link(*dir, out, rel, "driver", "sys/bus/pci/drivers"); !r) return r;
    if (auto r = copy_named_link(*dir, out, rel, "iommu_group", "sys/kernel/iommu_groups"); !r) return r;
    if (const auto pf = physfn_dir(root, *dir))
        if (auto r = make_link(out, rel / "physfn", pf->lexically_relative(root)); !r) return r;
    return make_link(out, fs::path("sys/bus/pci/devices") / bus, rel);
}

}  // namespace

Result<std::vector<FunctionFiles>> describe(const Machine& machine) {
    auto root = sysfs_root(machine);
    if (!root) return std::unexpected(std::move(root).error());
    auto ids = machine.functions();
    if (!ids) return std::unexpected(std::move(ids).error());
    std::vector<FunctionFiles> out;
    out.reserve(ids->size());
    for (auto& id : *ids) {
        FunctionFiles f{std::move(id), {}, {}, {}, {}, {}, {}, {}, {}};
        auto dir = sysfs::function_dir(*root, f.id.bus);
        if (dir) {
            if (auto way = sysfs::read_way(*root, f.id.bus)) {
                f.host_bridge = way->host_bridge;
                if (way->nodes.size() > 1) f.upstream = way->nodes[1].bus;
                f.link = way->nodes[0].link;
            }
            f.driver = sysfs::link_name(*dir / "driver");
            f.iommu_group = sysfs::link_name(*dir / "iommu_group");
            if (const auto pf = physfn_dir(*root, *dir)) f.physfn = pf->filename().string();
            f.numa_node = sysfs::read_int(*dir / "numa_node");
            if (auto bytes = sysfs::read_config(*dir)) {
                if (auto header = parse_header(*bytes); header && header->is_bridge())
                    f.buses = std::pair<unsigned, unsigned>{*header->secondary_bus, *header->subordinate_bus};
            }
        }
        out.push_back(std::move(f));
    }
    return out;
}

Result<void> snapshot(const Machine& machine, const fs::path& out) {
    auto root = sysfs_root(machine);
    if (!root) return std::unexpected(std::move(root).error());
    std::error_code ec;
    if (fs::exists(out, ec)) {
        if (!fs::is_directory(out, ec)) return fail(out.string(), ": not a directory");
        const bool empty = fs::is_empty(out, ec);
        if (ec) return fail(out.string(), ": cannot list: ", ec.message());
        if (!empty) return fail(out.string(), ": not empty (a snapshot goes into a new or empty directory)");
    }
    auto ids = machine.functions();
    if (!ids) return std::unexpected(std::move(ids).error());
    for (const char* dir : {"sys/bus/pci/devices", "sys/devices", "proc"})
        if (auto r = make_dirs(out / dir); !r) return r;
    for (const auto& id : *ids)
        if (auto r = copy_function(*root, out, id.bus); !r) return r;
    const sysfs::Cpu cpu = sysfs::read_cpu(*root);
    std::string cpuinfo = "processor\t: 0\n";
    if (!cpu.vendor.empty()) cpuinfo += fmt::format("vendor_id\t: {}\n", cpu.vendor);
    if (cpu.family) cpuinfo += fmt::format("cpu family\t: {}\n", *cpu.family);
    return write_file(out / "proc/cpuinfo", cpuinfo + "\n");
}

Result<void> check_tree(const fs::path& root) {
    std::error_code ec;
    if (fs::status(root, ec).type() == fs::file_type::not_found) return fail(root.string(), ": no such directory");
    if (!fs::exists(root / "sys/bus/pci/devices", ec))
        return fail(root.string(), ": not a `rig snapshot` tree (no sys/bus/pci/devices in it)");
    return {};
}

}  // namespace rig::pci
