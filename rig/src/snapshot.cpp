// A machine's files for people and for replay (rig/pci/snapshot.hpp): describe() reads
// what `rig ls` shows, snapshot() copies what Machine::at needs to answer as this
// machine does. Both read through sysfs.hpp, inside the machine's root.
#include "rig/pci/snapshot.hpp"

#include <fmt/format.h>

#include <charconv>
#include <set>
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
    if (!machine.root()) return fail(machine.name().value_or("machine"), ": the transport sent no sysfs files to read");
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

// The files of one function's directory `dir` (resolved, below root) that routes and
// describe() read, copied to the same place below `out`. A file the reader refuses (a
// link in place of a file, a FIFO, one too long) is left out, so that the copy cannot
// read it either; a physfn link that does not resolve is copied as it is, so that it
// does not resolve in the copy.
Result<void> copy_node(const fs::path& root, const fs::path& out, const fs::path& dir) {
    const fs::path rel = dir.lexically_relative(root);
    if (auto r = make_dirs(out / rel); !r) return r;
    for (const char* name : {"vendor", "device", "class", "numa_node", "secondary_bus_number", "subordinate_bus_number",
                             "current_link_speed", "current_link_width", "max_link_speed", "max_link_width"}) {
        auto text = sysfs::read_text(dir / name);
        if (!text) continue;
        if (auto r = write_file(out / rel / name, *text); !r) return r;
    }
    if (auto config = sysfs::read_config(dir))
        if (auto r = write_file(out / rel / "config",
                                std::string_view(reinterpret_cast<const char*>(config->data()), config->size()));
            !r)
            return r;
    if (auto r = copy_named_link(dir, out, rel, "driver", "sys/bus/pci/drivers"); !r) return r;
    if (auto r = copy_named_link(dir, out, rel, "iommu_group", "sys/kernel/iommu_groups"); !r) return r;
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(dir / "physfn", ec))) return {};
    if (const auto pf = physfn_dir(root, dir)) return make_link(out, rel / "physfn", pf->lexically_relative(root));
    const fs::path target = fs::read_symlink(dir / "physfn", ec);
    if (ec) return {};
    fs::create_symlink(target, out / rel / "physfn", ec);
    if (ec) return fail((out / rel / "physfn").string(), ": cannot create the link: ", ec.message());
    return {};
}

// Every directory a route may read for the function at `dir`: the function, each
// directory above it below root named by a bus address (its bridges, read or not), a
// VF's PF and the directories above that, and for each host bridge directory on the way
// its devices on its root bus (Linux's pci_host_bridge_dev() reads the first of them).
// `copied` holds the directories copied so far (bridges are shared by every function below).
Result<void> copy_way(const fs::path& root, const fs::path& out, const fs::path& dir, std::set<fs::path>& copied,
                      int depth = 0) {
    const auto once = [&](const fs::path& node) -> Result<void> {
        if (!copied.insert(node).second) return {};
        return copy_node(root, out, node);
    };
    if (auto r = once(dir); !r) return r;
    fs::path at = dir;
    for (int up = 0; up <= 256; ++up) {
        at = at.parent_path();
        const fs::path rel = at.lexically_relative(root);
        if (rel.empty() || rel == "." || *rel.begin() == "..") break;
        const std::string name = at.filename().string();
        if (is_address(name)) {
            if (auto r = once(at); !r) return r;
        } else if (const auto host = sysfs::parse_host_bridge(name)) {
            if (!copied.insert(at).second) continue;
            std::error_code ec;
            for (fs::directory_iterator it(at, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
                std::error_code kind;
                if (!fs::is_directory(it->symlink_status(kind)) || kind) continue;
                const auto address = BusAddress::parse(it->path().filename().string());
                if (address && address->domain == host->domain && address->bus == host->bus)
                    if (auto r = once(it->path()); !r) return r;
            }
        }
    }
    if (depth == 0)
        if (const auto pf = physfn_dir(root, dir)) return copy_way(root, out, *pf, copied, 1);
    return {};
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
        FunctionFiles f{std::move(id), {}, {}, {}, {}, {}, {}, {}, {}, {}, {}};
        auto dir = sysfs::function_dir(*root, f.id.bus);
        if (dir) {
            if (auto way = sysfs::read_way(*root, f.id.bus)) {
                f.host_bridge = way->host_bridge;
                if (way->nodes.size() > 1) f.upstream = way->nodes[1].bus;
                f.link = way->nodes[0].link;
            } else {
                f.unread = way.error();
            }
            f.driver = sysfs::link_name(*dir / "driver");
            f.iommu_group = sysfs::link_name(*dir / "iommu_group");
            if (const auto pf = physfn_dir(*root, *dir)) f.physfn = pf->filename().string();
            f.numa_node = sysfs::read_int(*dir / "numa_node");
            if (auto bytes = sysfs::read_config(*dir)) {
                if (auto header = parse_header(*bytes); header && header->is_bridge())
                    f.buses = std::pair<unsigned, unsigned>{*header->secondary_bus, *header->subordinate_bus};
                f.config = std::move(*bytes);
            }
        } else {
            f.unread = dir.error();
        }
        out.push_back(std::move(f));
    }
    return out;
}

Result<CpuFiles> describe_cpu(const Machine& machine) {
    auto root = sysfs_root(machine);
    if (!root) return std::unexpected(std::move(root).error());
    sysfs::Cpu cpu = sysfs::read_cpu(*root);
    return CpuFiles{std::move(cpu.vendor), cpu.family, cpu.model, std::move(cpu.model_name), std::move(cpu.error)};
}

Result<void> snapshot(const Machine& machine, const fs::path& out) {
    auto root = sysfs_root(machine);
    if (!root) return std::unexpected(std::move(root).error());
    if (out.empty()) return fail("snapshot: an empty path names no directory to write into");
    std::error_code ec;
    if (fs::exists(out, ec)) {
        if (!fs::is_directory(out, ec)) return fail(out.string(), ": not a directory");
        const bool empty = fs::is_empty(out, ec);
        if (ec) return fail(out.string(), ": cannot list: ", ec.message());
        if (!empty) return fail(out.string(), ": not empty (a snapshot goes into a new or empty directory)");
    }
    // Every entry of sys/bus/pci/devices that names a function directory, listed or not
    // (one whose ID files are unreadable is left out of functions() in the copy too).
    const fs::path devices = sysfs::devices_dir(*root);
    std::vector<std::string> entries;
    if (fs::exists(fs::symlink_status(*root / "sys/bus/pci", ec))) {
        fs::directory_iterator it(devices, ec);
        if (ec) return fail(devices.string(), ": cannot list: ", ec.message());
        for (; it != fs::directory_iterator(); it.increment(ec)) {
            const std::string name = it->path().filename().string();
            if (is_address(name)) entries.push_back(name);
        }
        if (ec) return fail(devices.string(), ": cannot list: ", ec.message());
    }
    for (const char* dir : {"sys/bus/pci/devices", "sys/devices", "proc"})
        if (auto r = make_dirs(out / dir); !r) return r;
    std::set<fs::path> copied;
    for (const auto& bus : entries) {
        auto dir = sysfs::function_dir(*root, bus);
        if (!dir) continue;  // no function: none in the copy either
        if (auto r = copy_way(*root, out, *dir, copied); !r) return r;
        if (auto r = make_link(out, fs::path("sys/bus/pci/devices") / bus, dir->lexically_relative(*root)); !r)
            return r;
    }
    const sysfs::Cpu cpu = sysfs::read_cpu(*root);
    std::string cpuinfo = "processor\t: 0\n";
    if (!cpu.vendor.empty()) cpuinfo += fmt::format("vendor_id\t: {}\n", cpu.vendor);
    if (cpu.family) cpuinfo += fmt::format("cpu family\t: {}\n", *cpu.family);
    if (cpu.model) cpuinfo += fmt::format("model\t\t: {}\n", *cpu.model);
    if (!cpu.model_name.empty()) cpuinfo += fmt::format("model name\t: {}\n", cpu.model_name);
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
