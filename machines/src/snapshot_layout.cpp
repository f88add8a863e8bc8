// A machine read from a `rig snapshot` tree (rig/sim/layouts.hpp, from_snapshot):
// the tree's functions rebuilt as a rig::sim::Topology, so that the simulated machine's
// routes are the routes rig computes on the tree itself, with the simulated GPU and NIC at
// the two bus addresses the user named.
//
// What the tree gives (rig/pci/snapshot.hpp): each function's ID, its configuration space
// (4096 bytes, or 64 where the snapshot was taken without CAP_SYS_ADMIN), its host bridge
// and the bridge above it, bus numbers of bridges, driver, IOMMU group, NUMA node, an SR-IOV
// VF's PF, and the CPU. What it does not: BAR sizes (sysfs `resource` is not copied), so
// functions other than the GPU and NIC get no BARs: no route depends on them.
#include <algorithm>
#include <array>
#include <map>
#include <stdexcept>
#include <tuple>

#include "rig/pci/config.hpp"
#include "rig/pci/link.hpp"
#include "rig/pci/machine.hpp"
#include "rig/pci/snapshot.hpp"
#include "rig/sim/system.hpp"
#include "rig/sim/layouts.hpp"

namespace rig::sim {
namespace {

namespace fs = std::filesystem;
namespace cfg = rig::pci::config;
using rig::sim::FunctionRef;
using rig::sim::HostBridgeRef;
using rig::sim::Spec;
using rig::sim::Topology;

std::uint32_t le(const std::vector<std::uint8_t>& bytes, std::uint32_t offset, unsigned width) {
    std::uint32_t v = 0;
    for (unsigned i = 0; i < width && offset + i < bytes.size(); ++i) v |= std::uint32_t{bytes[offset + i]} << (8 * i);
    return v;
}

// The PCI Express capability's port type and the ACS capability's registers, read from a
// configuration space with the walks bounded as Linux bounds them (config.hpp).
void read_capabilities(const std::vector<std::uint8_t>& config, Spec& spec) {
    if (config.size() < cfg::capabilities_pointer + 1 || !(le(config, cfg::status, 2) & cfg::status_capabilities_list))
        return;
    std::uint32_t at = le(config, cfg::capabilities_pointer, 1) & ~3u;
    for (unsigned n = 0; n < cfg::capability_limit && at >= cfg::capability_first && at + 4 <= config.size(); ++n) {
        if (le(config, at + cfg::capability_id, 1) == cfg::capability_pci_express) {
            spec.port_type =
                static_cast<cfg::PortType>(cfg::express_port_type.of(le(config, at + cfg::express_flags, 2)));
            // LnkCap and LnkSta (PCIe 6.0 §7.5.3.6, §7.5.3.8): the simulated link as the snapshot's.
            const std::uint32_t cap = le(config, at + cfg::express_link_capabilities, 4);
            const std::uint32_t sta = le(config, at + cfg::express_link_status, 2);
            const auto speed = rig::pci::generation_of(cfg::link_capabilities_speed.of(cap));
            const auto width = static_cast<unsigned>(cfg::link_capabilities_width.of(cap));
            if (speed && width > 0) spec.link = {*speed, width};
            const auto trained = rig::pci::generation_of(cfg::link_status_speed.of(sta));
            const auto lanes = static_cast<unsigned>(cfg::link_status_width.of(sta));
            if (trained && lanes > 0) spec.trained = rig::pci::LinkState{*trained, lanes};
        }
        at = le(config, at + cfg::capability_next, 1) & ~3u;
    }
    if (config.size() < cfg::express_bytes) return;
    std::uint32_t ext = cfg::extended_first;
    for (unsigned n = 0; n < cfg::extended_limit && ext >= cfg::extended_first && ext + 8 <= config.size(); ++n) {
        const std::uint32_t header = le(config, ext, 4);
        if (header == 0 || header == 0xffff'ffff) break;
        if (cfg::extended_id.of(header) == cfg::extended_acs) {
            spec.acs_capability = static_cast<std::uint16_t>(le(config, ext + cfg::acs_capability, 2));
            spec.acs_control = static_cast<std::uint16_t>(le(config, ext + cfg::acs_control, 2));
            return;
        }
        ext = static_cast<std::uint32_t>(cfg::extended_next.of(header));
    }
}

// The tree's CPU as rig's reader gives it (bounded, inside the tree); a field it lacks,
// or spells as no number, keeps the simulator's default, as the route reader does.
rig::sim::Cpu read_cpu(const fs::path& dir) {
    rig::sim::Cpu cpu;
    const auto files = rig::pci::describe_cpu(rig::pci::Machine::at(dir));
    if (!files) return cpu;
    if (!files->vendor.empty()) cpu.vendor = files->vendor;
    if (files->family) cpu.family = *files->family;
    if (files->model) cpu.model = *files->model;
    if (!files->model_name.empty()) cpu.model_name = files->model_name;
    return cpu;
}

class Builder {
public:
    Builder(fs::path dir, std::vector<rig::pci::FunctionFiles> files, std::map<std::string, Spec> replaced)
        : dir_(std::move(dir)), topology_(read_cpu(dir_)), replaced_(std::move(replaced)) {
        topology_.set_groups(Topology::Groups::AsGiven);  // the kernel's, quirks included
        for (auto& f : files) files_.emplace(f.id.bus, std::move(f));
    }

    // Every function whose way up was read; the others (and so everything below them) are
    // left out, as no route of theirs can be read.
    rig::Result<Topology> build() {
        for (const auto& [bus, f] : files_) {
            if (!f.unread.empty()) continue;
            auto r = add(bus, 0);
            if (!r) return std::unexpected(std::move(r).error());
        }
        return std::move(topology_);
    }

private:
    // The function at `bus`, added after what it sits below.
    rig::Result<FunctionRef> add(const std::string& bus, int depth) {
        if (auto it = added_.find(bus); it != added_.end()) return it->second;
        auto file = files_.find(bus);
        if (file == files_.end())
            return rig::fail(dir_.string(), ": ", bus, " is named by another function but not listed");
        if (depth > 256) return rig::fail(dir_.string(), ": ", bus, ": its bridges loop");
        const rig::pci::FunctionFiles& f = file->second;
        const auto address = rig::pci::BusAddress::parse(bus);
        if (!address) return rig::fail(dir_.string(), ": ", bus, " is not a bus address");
        Spec spec = spec_of(f, *address);
        try {
            FunctionRef ref;
            if (f.physfn) {
                auto pf = add(*f.physfn, depth + 1);
                if (!pf) return pf;
                const auto pf_bus = topology_[*pf].address.bus;
                ref = topology_.add_vf(*pf, spec, address->bus == pf_bus ? std::nullopt : std::optional(address->bus));
            } else if (f.upstream) {
                auto up = add(*f.upstream, depth + 1);
                if (!up) return up;
                ref = topology_.add(*up, spec);
            } else {
                auto host = host_bridge(f, *address, depth);
                if (!host) return std::unexpected(std::move(host).error());
                ref = topology_.add(*host, spec);
            }
            if (topology_.bus(ref) != bus)
                return rig::fail(dir_.string(), ": ", bus,
                                 " sits on a bus its bridge does not give (the simulator placed it at ",
                                 topology_.bus(ref), ")");
            added_.emplace(bus, ref);
            return ref;
        } catch (const std::invalid_argument& e) {
            return rig::fail(dir_.string(), ": ", bus, ": the simulator cannot build it: ", e.what());
        }
    }

    Spec spec_of(const rig::pci::FunctionFiles& f, const rig::pci::BusAddress& address) {
        if (auto it = replaced_.find(f.id.bus); it != replaced_.end()) {
            Spec spec = it->second;
            spec.iommu_group = group_of(f);
            spec.numa_node = f.numa_node.value_or(-1);
            spec.driver = "vfio-pci";  // as it is once rig takes it
            return spec;
        }
        const std::vector<std::uint8_t>& config = f.config;
        Spec spec;
        spec.device = address.device;
        spec.function = address.function;
        spec.vendor = f.id.vendor;
        spec.device_id = f.id.device;
        spec.class_code = f.id.class_code;
        spec.subsystem_vendor = static_cast<std::uint16_t>(le(config, cfg::subsystem_vendor_id, 2));
        spec.subsystem_device = static_cast<std::uint16_t>(le(config, cfg::subsystem_id, 2));
        read_capabilities(config, spec);
        if (spec.is_bridge()) spec.subsystem_vendor = spec.subsystem_device = 0;  // type 1: no subsystem IDs there
        if (config.size() == cfg::unprivileged_bytes || config.size() == cfg::legacy_bytes ||
            config.size() == cfg::express_bytes)
            spec.config_bytes = static_cast<unsigned>(config.size());
        if (f.buses) {
            spec.secondary = static_cast<std::uint8_t>(f.buses->first);
            spec.subordinate = static_cast<std::uint8_t>(f.buses->second);
        }
        spec.numa_node = f.numa_node.value_or(-1);
        spec.driver = f.driver.value_or("");
        spec.iommu_group = group_of(f);
        return spec;
    }

    static std::optional<unsigned> group_of(const rig::pci::FunctionFiles& f) {
        if (!f.iommu_group) return std::nullopt;
        try {
            return static_cast<unsigned>(std::stoul(*f.iommu_group));
        } catch (const std::exception&) {
            return 0u;  // a group whose name is not a number: still a group
        }
    }

    // The host bridge `f` sits on, made the first time: its directory's place under
    // sys/devices says whether it is nested under a VMD endpoint or below other
    // directories (Hyper-V's VMBus).
    rig::Result<HostBridgeRef> host_bridge(const rig::pci::FunctionFiles& f, const rig::pci::BusAddress& address,
                                           int depth) {
        if (auto it = hosts_.find(f.host_bridge); it != hosts_.end()) return it->second;
        std::error_code ec;
        const fs::path real = fs::canonical(dir_ / "sys/bus/pci/devices" / f.id.bus, ec);
        const fs::path devices = fs::canonical(dir_ / "sys/devices", ec);
        if (ec) return rig::fail(dir_.string(), ": ", f.id.bus, ": its sysfs link does not resolve: ", ec.message());
        std::vector<std::string> parents;
        for (const auto& part : real.lexically_relative(devices)) {
            if (part.string() == f.host_bridge) break;
            parents.push_back(part.string());
        }
        HostBridgeRef ref;
        if (!parents.empty() && rig::pci::is_address(parents.back())) {
            auto vmd = add(parents.back(), depth + 1);
            if (!vmd) return std::unexpected(std::move(vmd).error());
            ref = topology_.vmd_host_bridge(*vmd, address.domain, address.bus);
        } else {
            std::string parent;
            for (const auto& p : parents) parent += (parent.empty() ? "" : "/") + p;
            ref = topology_.host_bridge(address.domain, address.bus, parent);
        }
        hosts_.emplace(f.host_bridge, ref);
        return ref;
    }

    fs::path dir_;
    Topology topology_;
    std::map<std::string, Spec> replaced_;
    std::map<std::string, rig::pci::FunctionFiles> files_;
    std::map<std::string, FunctionRef> added_;
    std::map<std::string, HostBridgeRef> hosts_;
};

}  // namespace

rig::Result<Layout> from_snapshot(const fs::path& dir, std::string_view gpu, std::string_view nic,
                                  const rig::sim::Identity& gpu_identity, const rig::sim::Identity& nic_identity) {
    if (auto tree = rig::pci::check_tree(dir); !tree) return std::unexpected(std::move(tree).error());
    // The command line's spellings: "0000:41:00.0", or "41:00.0" in domain 0, any case.
    std::array<std::string, 2> buses;
    for (const auto& [given, bus, what] : {std::tuple{gpu, &buses[0], "--gpu"}, std::tuple{nic, &buses[1], "--nic"}}) {
        auto address = rig::pci::normalize_address(given);
        if (!address) return rig::fail(what, " ", std::string(given), ": not a bus address (DDDD:BB:DD.F or BB:DD.F)");
        *bus = std::move(*address);
    }
    auto files = rig::pci::describe(rig::pci::Machine::at(dir));
    if (!files) return rig::fail(dir.string(), ": ", files.error());
    if (buses[0] == buses[1])
        return rig::fail("--gpu and --nic both name ", buses[0], ": the GPU and the NIC are two functions");
    std::map<std::string, Spec> replaced;
    for (const auto& [bus, identity, what] :
         {std::tuple{&buses[0], &gpu_identity, "--gpu"}, std::tuple{&buses[1], &nic_identity, "--nic"}}) {
        const auto f = std::find_if(files->begin(), files->end(), [&](const auto& x) { return x.id.bus == *bus; });
        if (f == files->end())
            return rig::fail(dir.string(), ": ", what, " ", *bus, ": no such function in the snapshot");
        if (!f->unread.empty())
            return rig::fail(dir.string(), ": ", what, " ", *bus, ": its way up cannot be read: ", f->unread);
        if ((f->id.class_code >> 16) == 0x06)  // every bridge: host, ISA, PCI-to-PCI, ...
            return rig::fail(dir.string(), ": ", what, " ", *bus, " is a bridge, not an endpoint");
        const auto address = rig::pci::BusAddress::parse(*bus);
        replaced.emplace(*bus, rig::sim::endpoint_spec(address->device, address->function, *identity));
    }
    auto topology = Builder(dir, std::move(*files), std::move(replaced)).build();
    if (!topology) return std::unexpected(std::move(topology).error());
    return Layout{dir.string(), std::move(*topology), buses[0], buses[1]};
}

}  // namespace rig::sim
