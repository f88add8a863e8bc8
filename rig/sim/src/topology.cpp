// Building a topology and its functions' configuration spaces (rig/sim/topology.hpp).
// Every offset and bit is a name of rig/pci/config.hpp, the same names the route reader
// parses with, so a layout mistake shows as a wrong route in the tests, not as a writer
// and reader that agree on the same wrong offset.
#include "rig/sim/topology.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace rig::sim {
namespace {

namespace cfg = pci::config;
using pci::config::PortType;

// 16 MiB, 64-bit, prefetchable: a typical first BAR of a GPU or NIC endpoint.
constexpr BarSpec default_bar{16 << 20, true, true};

void put(std::vector<std::uint8_t>& bytes, std::uint32_t offset, unsigned width, std::uint64_t value) {
    for (unsigned i = 0; i < width; ++i) bytes.at(offset + i) = static_cast<std::uint8_t>(value >> (8 * i));
}

}  // namespace

Spec Spec::root_complex(std::uint16_t vendor, std::uint16_t device_id, std::uint32_t class_code) {
    Spec s;
    s.vendor = vendor;
    s.device_id = device_id;
    s.class_code = class_code;
    return s;
}

Spec Spec::root_port(std::uint8_t device, std::uint8_t function, std::uint16_t vendor, std::uint16_t device_id,
                     std::optional<std::uint16_t> acs_control) {
    Spec s;
    s.device = device;
    s.function = function;
    s.vendor = vendor;
    s.device_id = device_id;
    s.class_code = 0x060400;
    s.port_type = PortType::RootPort;
    s.acs_control = acs_control;
    return s;
}

Spec Spec::upstream_port(std::uint16_t vendor, std::uint16_t device_id) {
    Spec s;
    s.vendor = vendor;
    s.device_id = device_id;
    s.class_code = 0x060400;
    s.port_type = PortType::UpstreamPort;
    return s;
}

Spec Spec::downstream_port(std::uint8_t device, std::uint16_t vendor, std::uint16_t device_id,
                           std::optional<std::uint16_t> acs_control) {
    Spec s = upstream_port(vendor, device_id);
    s.device = device;
    s.port_type = PortType::DownstreamPort;
    s.acs_control = acs_control;
    return s;
}

Spec Spec::endpoint(std::uint8_t device, std::uint8_t function, std::uint16_t vendor, std::uint16_t device_id,
                    std::uint32_t class_code) {
    Spec s;
    s.device = device;
    s.function = function;
    s.vendor = vendor;
    s.device_id = device_id;
    s.class_code = class_code;
    s.port_type = PortType::Endpoint;
    s.bars[0] = default_bar;
    return s;
}

Topology::Topology(Cpu cpu) : cpu_(std::move(cpu)) {}

void Topology::use_bus(std::uint32_t domain, std::uint8_t bus, std::string_view by) {
    if (std::find(buses_.begin(), buses_.end(), std::pair{domain, bus}) != buses_.end())
        throw std::invalid_argument(fmt::format("Topology: {}: bus {:04x}:{:02x} is in use already", by, domain, bus));
    buses_.emplace_back(domain, bus);
}

HostBridgeRef Topology::host_bridge(std::uint32_t domain, std::uint8_t bus, std::string sysfs_parent) {
    use_bus(domain, bus, fmt::format("host bridge pci{:04x}:{:02x}", domain, bus));
    host_bridges_.push_back({domain, bus, std::move(sysfs_parent), std::nullopt});
    return {host_bridges_.size() - 1};
}

HostBridgeRef Topology::vmd_host_bridge(FunctionRef vmd, std::uint32_t domain, std::uint8_t bus) {
    if (vmd.index >= functions_.size())
        throw std::invalid_argument("Topology: no VMD function to nest a host bridge under");
    const HostBridgeRef host = host_bridge(domain, bus);
    host_bridges_.back().vmd = vmd;
    return host;
}

FunctionRef Topology::place(Spec spec, std::uint32_t domain, std::uint8_t bus, std::optional<HostBridgeRef> root_bus,
                            std::optional<FunctionRef> upstream, std::optional<FunctionRef> physfn,
                            HostBridgeRef host) {
    const pci::BusAddress address{domain, bus, spec.device, spec.function};
    if (spec.device > 0x1f || spec.function > 7)
        throw std::invalid_argument(fmt::format("Topology: {:04x}:{:02x}:{:02x}.{:x} is not a bus address", domain, bus,
                                                spec.device, spec.function));
    const std::string name = address.to_string();
    if (find(name)) throw std::invalid_argument("Topology: " + name + " is added twice");
    if (spec.config_bytes == 0) spec.config_bytes = spec.port_type ? cfg::express_bytes : cfg::legacy_bytes;
    if (spec.config_bytes < cfg::unprivileged_bytes || spec.config_bytes > cfg::express_bytes)
        throw std::invalid_argument(
            fmt::format("Topology: {}: config_bytes {} is not 64..4096", name, spec.config_bytes));
    if (spec.acs_control && !spec.port_type)
        throw std::invalid_argument("Topology: " + name + ": an ACS capability needs a PCI Express capability");
    if (spec.is_bridge()) {
        if (!spec.secondary) {
            unsigned next = bus + 1u;
            while (next <= 0xff && std::find(buses_.begin(), buses_.end(),
                                             std::pair{domain, static_cast<std::uint8_t>(next)}) != buses_.end())
                ++next;
            if (next > 0xff) throw std::invalid_argument("Topology: " + name + ": no bus number left below it");
            spec.secondary = static_cast<std::uint8_t>(next);
        }
        use_bus(domain, *spec.secondary, name);
    }
    Function f{spec, address, root_bus, upstream, physfn, {}, host};
    for (std::size_t i = 0; i < spec.bars.size(); ++i) {
        const std::uint64_t bytes = spec.bars[i].bytes;
        if (bytes == 0) continue;
        if ((bytes & (bytes - 1)) != 0 || bytes < 16)
            throw std::invalid_argument(
                fmt::format("Topology: {}: BAR{} of {} bytes is not a power of two", name, i, bytes));
        next_bar_ = (next_bar_ + bytes - 1) & ~(bytes - 1);
        f.bar_address[i] = next_bar_;
        next_bar_ += bytes;
    }
    functions_.push_back(std::move(f));
    return {functions_.size() - 1};
}

FunctionRef Topology::add(HostBridgeRef host, Spec spec) {
    const HostBridge& h = host_bridges_.at(host.index);
    return place(std::move(spec), h.domain, h.bus, host, std::nullopt, std::nullopt, host);
}

FunctionRef Topology::add(FunctionRef below, Spec spec) {
    const Function& bridge = functions_.at(below.index);
    if (!bridge.spec.is_bridge())
        throw std::invalid_argument("Topology: " + bridge.address.to_string() +
                                    " is not a bridge: nothing sits below it");
    return place(std::move(spec), bridge.address.domain, *bridge.spec.secondary, std::nullopt, below, std::nullopt,
                 bridge.host_bridge);
}

FunctionRef Topology::add_vf(FunctionRef pf, Spec spec, std::optional<std::uint8_t> bus) {
    const Function& parent = functions_.at(pf.index);
    if (parent.physfn)
        throw std::invalid_argument("Topology: " + parent.address.to_string() + " is a VF: VFs have no VFs");
    if (bus) use_bus(parent.address.domain, *bus, "a VF of " + parent.address.to_string());
    const Function copy = parent;  // place() may reallocate functions_
    return place(std::move(spec), copy.address.domain, bus.value_or(copy.address.bus), copy.root_bus, copy.upstream, pf,
                 copy.host_bridge);
}

std::optional<FunctionRef> Topology::find(std::string_view bus) const {
    for (std::size_t i = 0; i < functions_.size(); ++i)
        if (functions_[i].address.to_string() == bus) return FunctionRef{i};
    return std::nullopt;
}

std::uint8_t Topology::subordinate(FunctionRef bridge) const {
    const Function& b = functions_.at(bridge.index);
    if (!b.spec.is_bridge()) throw std::invalid_argument("Topology: " + b.address.to_string() + " is not a bridge");
    if (b.spec.subordinate) return *b.spec.subordinate;
    std::uint8_t highest = *b.spec.secondary;
    for (std::size_t i = 0; i < functions_.size(); ++i) {
        const Function& f = functions_[i];
        if (f.upstream != bridge) continue;
        highest = std::max(highest, f.address.bus);
        if (f.spec.is_bridge()) highest = std::max(highest, subordinate({i}));
    }
    return highest;
}

bool Topology::multifunction(FunctionRef f) const {
    const Function& self = functions_.at(f.index);
    if (self.physfn) return false;
    return std::any_of(functions_.begin(), functions_.end(), [&](const Function& other) {
        return &other != &self && !other.physfn && other.address.domain == self.address.domain &&
               other.address.bus == self.address.bus && other.address.device == self.address.device;
    });
}

namespace {

// Linux's REQ_ACS_FLAGS (drivers/iommu/iommu.c): what a port must have on to isolate
// the functions below it from their peers.
constexpr std::uint16_t isolating_acs = cfg::acs_source_validation | cfg::acs_request_redirect |
                                        cfg::acs_completion_redirect | cfg::acs_upstream_forwarding;
static_assert(isolating_acs == 0x001d);

bool isolates(const Spec& s) {
    const bool port = s.port_type == cfg::PortType::RootPort || s.port_type == cfg::PortType::DownstreamPort;
    return port && s.acs_control && (*s.acs_control & isolating_acs) == isolating_acs;
}

}  // namespace

FunctionRef Topology::group_root(FunctionRef ref) const {
    FunctionRef root = ref;
    const Function& f = functions_.at(ref.index);
    // A VF climbs from its PF's bus.
    const Function& placed = f.physfn ? functions_.at(f.physfn->index) : f;
    for (auto up = placed.upstream; up; up = functions_.at(up->index).upstream) {
        if (isolates(functions_.at(up->index).spec)) break;
        root = *up;
    }
    return root;
}

std::optional<unsigned> Topology::iommu_group(FunctionRef ref) const {
    const auto& given = functions_.at(ref.index).spec.iommu_group;
    if (!given || groups_ == Groups::AsGiven) return given;
    const FunctionRef root = group_root(ref);
    unsigned lowest = *given;
    for (std::size_t i = 0; i < functions_.size(); ++i) {
        const auto& other = functions_[i].spec.iommu_group;
        if (other && *other < lowest && group_root({i}) == root) lowest = *other;
    }
    return lowest;
}

std::vector<FunctionRef> Topology::vfs(FunctionRef pf) const {
    std::vector<FunctionRef> out;
    for (std::size_t i = 0; i < functions_.size(); ++i)
        if (functions_[i].physfn == pf) out.push_back({i});
    return out;
}

pci::Link Topology::link(FunctionRef ref) const {
    using pci::config::PortType;
    const Function& f = functions_.at(ref.index);
    pci::Link out;
    if (!f.spec.port_type || f.physfn) return out;
    out.source = pci::LinkSource::Config;
    out.capability = f.spec.link;
    const auto is_port = [](const Spec& s) {
        return s.port_type == PortType::RootPort || s.port_type == PortType::DownstreamPort;
    };
    const auto lower = [](pci::LinkState a, pci::LinkState b) {
        return pci::LinkState{std::min(a.speed, b.speed), std::min(a.width, b.width)};
    };
    if (is_port(f.spec)) {
        // The link below it: that of the first function on its secondary bus.
        std::optional<FunctionRef> first;
        for (std::size_t i = 0; i < functions_.size(); ++i) {
            const Function& child = functions_[i];
            if (child.upstream != ref || child.physfn || !child.spec.port_type) continue;
            if (!first || child.address < functions_[first->index].address) first = FunctionRef{i};
        }
        if (first) out.status = link(*first).status;
        return out;
    }
    if (f.spec.trained) {
        out.status = f.spec.trained;
    } else if (f.upstream && is_port(functions_[f.upstream->index].spec)) {
        out.status = lower(f.spec.link, functions_[f.upstream->index].spec.link);
    } else {
        out.status = f.spec.link;
    }
    return out;
}

std::vector<std::uint8_t> Topology::config_space(FunctionRef ref) const {
    const Function& f = functions_.at(ref.index);
    const Spec& s = f.spec;
    std::vector<std::uint8_t> c(cfg::express_bytes, 0);
    // PCI 3.0 §6.1, PCIe 6.0 §7.5.1: the common header.
    put(c, cfg::vendor_id, 2, s.vendor);
    put(c, cfg::device_id, 2, s.device_id);
    put(c, cfg::command, 2, cfg::command_memory_space | cfg::command_bus_master);
    put(c, cfg::status, 2, s.port_type ? cfg::status_capabilities_list : 0);
    put(c, cfg::class_code, 3, s.class_code);
    const std::uint8_t layout = s.is_bridge() ? cfg::header_type1 : cfg::header_type0;
    put(c, cfg::header_type, 1, cfg::header_layout(layout) | cfg::header_multifunction(multifunction(ref) ? 1 : 0));
    if (s.is_bridge()) {
        // §7.5.1.3: bus numbers of a type 1 header; its BARs stay unimplemented.
        put(c, cfg::primary_bus, 1, f.address.bus);
        put(c, cfg::secondary_bus, 1, *s.secondary);
        put(c, cfg::subordinate_bus, 1, subordinate(ref));
    } else {
        // §7.5.1.2.1: memory BARs; a 64-bit one takes the next dword for its high half.
        for (std::size_t i = 0; i < s.bars.size(); ++i) {
            const BarSpec& bar = s.bars[i];
            if (bar.bytes == 0) continue;
            const std::uint32_t offset = cfg::bar0 + static_cast<std::uint32_t>(4 * i);
            put(c, offset, 4,
                (f.bar_address[i] & 0xfffffff0u) | (bar.is64 ? cfg::bar_memory_64 : 0) |
                    (bar.prefetchable ? cfg::bar_prefetchable : 0));
            if (bar.is64 && i + 1 < s.bars.size()) put(c, offset + 4, 4, f.bar_address[i] >> 32);
        }
        put(c, cfg::subsystem_vendor_id, 2, s.subsystem_vendor);
        put(c, cfg::subsystem_id, 2, s.subsystem_device);
    }
    if (s.port_type) {
        // §7.5.3: the PCI Express capability, the only entry of the list.
        put(c, cfg::capabilities_pointer, 1, cfg::capability_first);
        put(c, cfg::capability_first + cfg::capability_id, 1, cfg::capability_pci_express);
        put(c, cfg::capability_first + cfg::capability_next, 1, 0);
        put(c, cfg::capability_first + cfg::express_flags, 2,
            cfg::express_version(2) | cfg::express_port_type(static_cast<std::uint8_t>(*s.port_type)));
        // §7.5.3.6, §7.5.3.8: LnkCap and LnkSta; zero (reserved) for a VF.
        const pci::Link l = link(ref);
        const auto speed = [](const std::optional<pci::LinkState>& x) {
            return x ? static_cast<unsigned>(x->speed) : 0u;
        };
        const auto width = [](const std::optional<pci::LinkState>& x) { return x ? x->width : 0u; };
        put(c, cfg::capability_first + cfg::express_link_capabilities, 4,
            cfg::link_capabilities_speed(speed(l.capability)) | cfg::link_capabilities_width(width(l.capability)));
        put(c, cfg::capability_first + cfg::express_link_status, 2,
            cfg::link_status_speed(speed(l.status)) | cfg::link_status_width(width(l.status)));
    }
    if (s.acs_control) {
        // §7.7.8: the ACS extended capability, the only one.
        put(c, cfg::extended_first, 4,
            cfg::extended_id(cfg::extended_acs) | cfg::extended_version(1) | cfg::extended_next(0));
        put(c, cfg::extended_first + cfg::acs_capability, 2, s.acs_capability);
        put(c, cfg::extended_first + cfg::acs_control, 2, *s.acs_control);
    }
    return c;
}

}  // namespace rig::sim
